"""What coupling reads of a history: per change, when it landed and the names of the files
it changed, renames paired. Nothing else (no line counts, no blob contents).

The changes are the history index's (`kgraph.history.index`, one `git log --raw -M`):
every commit up to REV but those a PR's merge commit brought in, so a PR is one change. A
squash commit is one commit; a merge commit of a PR lists its whole diff against its first
parent, and the branch commits it merged are left out (`HistoryIndex.absorbed`). A merge
that is not a PR's (a sync with upstream) lists nothing: the commits it brings in are
changes of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgraph.history.index import HistoryIndex, build_history
from kgraph.history.log import read_log


@dataclass(frozen=True, slots=True, order=True)
class FileChange:
    """One file a change touched, as `git log --raw -M` names it (`log.Change`'s fields)."""

    path: str  # after the change; for a deletion, the deleted path
    status: str = "M"  # A added, M modified, D deleted, R renamed, C copied, T type changed
    old_path: str = ""  # before a rename; "" otherwise

    @property
    def created(self) -> bool:
        """The path did not hold this file before the change (added, renamed or copied to)."""
        return self.status in ("A", "R", "C")


@dataclass(frozen=True, slots=True)
class Changeset:
    """One change: a commit, or a PR's merge commit with its whole diff."""

    sha: str
    date: str  # the committer's date, ISO 8601 with its offset: when it landed
    files: tuple[FileChange, ...]


def changesets_of(index: HistoryIndex) -> list[Changeset]:
    """The changes of a history index, newest first (its log's order)."""
    absorbed = index.absorbed
    found = []
    for position, (header, changes) in enumerate(zip(index.headers, index.changes, strict=True)):
        if position in absorbed:
            continue
        date = header.split("\0", 2)[1]
        files = []
        for change in changes:
            status, path, old_path = change.split("\0")
            files.append(FileChange(path, status, old_path))
        found.append(Changeset(header.split(" ", 1)[0].split("\0", 1)[0], date, tuple(files)))
    return found


def read_changesets(git_dir: Path, commit: str) -> list[Changeset]:
    """The changes of the history up to `commit`, read now (no cache): for benchmarks and
    tests; a build reads them from its `History`."""
    return changesets_of(build_history("", commit, read_log(git_dir, commit), False))
