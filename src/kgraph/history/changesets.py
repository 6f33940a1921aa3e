"""What coupling reads of a history: per change, when it landed and the names of the files
it changed, renames paired. Nothing else (no line counts, no blob contents).

One `git log --raw -M --first-parent --diff-merges=first-parent` gives it: `--raw` lists
files from the trees alone, so a mirror that lacks its largest blobs is read whole, and
20,000 commits take about two seconds. `--first-parent` makes a PR one change: a squash
commit is one commit, and a merge commit is listed with its diff against its first parent
(the PR's whole change) while the branch commits it merged are not listed at all.

This is the coupling's own reader until `kgraph.history`'s log index, which lists the same
files per commit, is the one both read (see `docs/coupling.md`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CHANGESETS_VERSION = 1  # bump when changesets are read or stored differently
LOG_FORMAT = "%x01%H%x00%cI"


class ChangesetError(Exception):
    """The log cannot be read (git failed)."""


@dataclass(frozen=True, slots=True, order=True)
class FileChange:
    """One file a change touched, as `git log --raw -M` names it."""

    path: str  # after the change; for a deletion, the deleted path
    status: str = "M"  # A added, M modified, D deleted, R renamed, C copied, T type changed
    old_path: str = ""  # before a rename; "" otherwise

    @property
    def created(self) -> bool:
        """The path did not hold this file before the change (added, renamed or copied to)."""
        return self.status in ("A", "R", "C")


@dataclass(frozen=True, slots=True)
class Changeset:
    """One change of the first-parent history: a commit, or a merge's whole diff."""

    sha: str
    date: str  # the committer's date, ISO 8601 with its offset: when it landed
    files: tuple[FileChange, ...]

    def to_json(self) -> list[object]:
        return [self.sha, self.date, [[f.path, f.status, f.old_path] for f in self.files]]

    @staticmethod
    def from_json(value: list) -> Changeset:
        sha, date, files = value
        return Changeset(str(sha), str(date), tuple(FileChange(p, s, o) for p, s, o in files))


def read_changesets(git_dir: Path, commit: str) -> list[Changeset]:
    """Every change of the first-parent history up to `commit`, newest first."""
    result = subprocess.run(
        [
            "git", "--git-dir", str(git_dir), "-c", "core.quotePath=false",
            "log", "-z", "--raw", "-M", "--no-abbrev", "--first-parent",
            "--diff-merges=first-parent", "--no-color", f"--format={LOG_FORMAT}", commit, "--",
        ],
        capture_output=True,
        check=False,
    )  # fmt: skip
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip()
        raise ChangesetError(f"git log failed: {message}")
    return list(parse_changesets(result.stdout))


def parse_changesets(data: bytes) -> Iterator[Changeset]:
    """Changesets from `git log -z --raw --format=%x01%H%x00%cI` output.

    With `-z`, a commit is `\\x01SHA\\0DATE\\0`, then per file a `:modes shas status`
    record and its path (two paths for a rename or copy), each ended by `\\0`.
    """
    tokens = data.split(b"\0")
    i, n = 0, len(tokens)
    while i < n:
        token = tokens[i].lstrip(b"\n")
        i += 1
        if not token.startswith(b"\x01"):
            continue
        sha = token[1:].decode("ascii")
        date = tokens[i].decode("ascii", "replace") if i < n else ""
        i += 1
        files: list[FileChange] = []
        while i < n and tokens[i].lstrip(b"\n").startswith(b":"):
            status = tokens[i].rsplit(b" ", 1)[-1][:1].decode("ascii", "replace")
            if status in ("R", "C") and i + 2 < n:
                old, new = _path(tokens[i + 1]), _path(tokens[i + 2])
                files.append(FileChange(new, status, old))
                i += 3
            else:
                files.append(FileChange(_path(tokens[i + 1]) if i + 1 < n else "", status))
                i += 2
        yield Changeset(sha, date, tuple(sorted(files)))


def _path(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")
