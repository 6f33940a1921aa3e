"""The history of one repository up to one commit: its commits and the files each changed.

Built once per (repository, commit) from `git log --raw` and kept as JSON in the output
folder. Loading is reading a list of short strings; each commit is decoded when it is
first looked at, and the lookups by number and by path are made on first use, so a build
that finds every answer in its match cache (`kgraph.history.cache`) never pays for them.

A PR merged with a merge commit brings in its branch's commits as well; those are the
merge's, not PRs of their own, so they are never candidates: a review is linked to the
commit that merged its PR.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

from kgraph.history.log import MERGE_NUMBER, SQUASH_NUMBER, Change, LogCommit

HISTORY_VERSION = 1  # bump when commits are read or stored differently: caches rebuild
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit of the history, at its position in the log (0 is the newest)."""

    position: int
    sha: str
    parents: tuple[str, ...]
    date: str  # ISO 8601 with offset
    subject: str
    changes: tuple[Change, ...]
    number: int | None  # the PR it merged, by its subject

    @property
    def day(self) -> str:
        return self.date[:10]

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    @property
    def first_parent(self) -> str | None:
        return self.parents[0] if self.parents else None


@dataclass(frozen=True)
class HistoryIndex:
    repo: str  # "owner/name"
    commit: str  # the full SHA the history was read up to
    headers: Sequence[str]  # per commit: "SHA PARENTS\0DATE\0SUBJECT"
    changes: Sequence[Sequence[str]]  # per commit: "STATUS\0PATH\0OLD_PATH" per file
    shallow: bool = False
    _decoded: dict[int, Commit] = field(default_factory=dict, init=False, repr=False, compare=False)
    _lookups: dict[str, object] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.headers)

    def at(self, position: int) -> Commit:
        found = self._decoded.get(position)
        if found is None:
            head, date, subject = self.headers[position].split("\0", 2)
            sha, *parents = head.split(" ")
            files = tuple(
                Change(p, s, o) for s, p, o in (c.split("\0") for c in self.changes[position])
            )
            log = LogCommit(sha, tuple(parents), date, subject, files)
            found = Commit(position, sha, tuple(parents), date, subject, files, log.number)
            self._decoded[position] = found
        return found

    def commits(self, positions: Iterable[int]) -> list[Commit]:
        return [self.at(p) for p in positions]

    # --- lookups -----------------------------------------------------------------------------

    @property
    def position_of(self) -> dict[str, int]:
        return self._lookup(
            "positions",
            lambda: {h.split("\0", 1)[0].split(" ", 1)[0]: i for i, h in enumerate(self.headers)},
        )

    def by_number(self, number: int) -> list[int]:
        """Positions of the candidate commits that say they merged PR #`number`."""
        numbers: dict[int, list[int]] = self._lookup("numbers", self._numbers)
        return numbers.get(number, [])

    def _numbers(self) -> dict[int, list[int]]:
        """Read from the headers, without decoding 20,000 commits: a subject ends in
        `(#N)` for a squash merge, starts `Merge pull request #N` for a merge."""
        found: dict[int, list[int]] = defaultdict(list)
        absorbed = self.absorbed
        for position, header in enumerate(self.headers):
            head, _, subject = header.partition("\0")[0], "", header.rsplit("\0", 1)[-1]
            merge = head.count(" ") > 1
            match = (MERGE_NUMBER.match if merge else SQUASH_NUMBER.search)(subject)
            if match and position not in absorbed:
                found[int(match.group(1))].append(position)
        return dict(found)

    @property
    def numbered_share(self) -> float:
        """The share of the candidate commits whose subject names the PR they merged."""

        def build() -> float:
            numbered = sum(len(found) for found in self._lookup("numbers", self._numbers).values())
            return numbered / max(1, len(self) - len(self.absorbed))

        return self._lookup("numbered share", build)

    def touching(self, path: str) -> list[int]:
        """Positions of the candidate commits that changed `path` (under any of the names a
        rename gave it), newest first."""
        by_path: dict[str, list[int]] = self._lookup("paths", self._paths)
        names = self.names_of(path)
        if len(names) == 1:
            return by_path.get(path, [])
        return sorted({p for name in names for p in by_path.get(name, ())})

    def touching_basename(self, basename: str) -> list[str]:
        """Every path the history knows whose last segment is `basename`."""
        by_base: dict[str, list[str]] = self._lookup("basenames", self._basenames)
        return by_base.get(basename, [])

    def _paths(self) -> dict[str, list[int]]:
        found: dict[str, list[int]] = defaultdict(list)
        absorbed = self.absorbed
        for position, files in enumerate(self.changes):
            if position in absorbed:
                continue
            for change in files:
                _, path, old = change.split("\0")
                found[path].append(position)
                if old:
                    found[old].append(position)
        return dict(found)

    def _basenames(self) -> dict[str, list[str]]:
        found: dict[str, set[str]] = defaultdict(set)
        for path in self._lookup("paths", self._paths):
            found[path.rsplit("/", 1)[-1]].add(path)
        return {base: sorted(paths) for base, paths in found.items()}

    @property
    def renames(self) -> list[tuple[int, str, str]]:
        """(position, old path, new path) of every rename, oldest first."""

        def build() -> list[tuple[int, str, str]]:
            found = []
            for position in range(len(self) - 1, -1, -1):
                for change in self.changes[position]:
                    status, path, old = change.split("\0")
                    if status == "R" and old:
                        found.append((position, old, path))
            return found

        return self._lookup("renames", build)

    def names_of(self, path: str) -> set[str]:
        """`path` and every earlier name it had, following renames backwards."""
        backwards: dict[str, set[str]] = self._lookup("backwards", self._backwards)
        names, todo = {path}, [path]
        while todo:
            for old in backwards.get(todo.pop(), ()):
                if old not in names:
                    names.add(old)
                    todo.append(old)
        return names

    def _backwards(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = defaultdict(set)
        for _, old, new in self.renames:
            found[new].add(old)
        return dict(found)

    def path_at_head(self, path: str, position: int) -> str:
        """The name that `path`, as the commit at `position` left it, has at the indexed
        commit, following the renames of every later commit (it may since be deleted)."""
        current = path
        for at, old, new in self.renames:
            if at < position and old == current:
                current = new
        return current

    @property
    def absorbed(self) -> frozenset[int]:
        """Commits of PR branches that a merge commit brought in: the merge is the PR's."""
        return self._lookup("absorbed", self._absorbed)

    def _absorbed(self) -> frozenset[int]:
        positions = self.position_of
        merges = [
            p
            for p in range(len(self) - 1, -1, -1)
            if self.headers[p].partition("\0")[0].count(" ") > 1  # two parents or more
            and MERGE_NUMBER.match(self.headers[p].rsplit("\0", 1)[-1])
        ]
        if not merges:
            return frozenset()
        mainline: set[int] = set()
        at: int | None = 0
        while at is not None and at not in mainline:
            mainline.add(at)
            first = self.at(at).first_parent
            at = positions.get(first) if first else None
        claimed = set(merges) | mainline
        absorbed: set[int] = set()
        for merge in merges:  # oldest first: a branch is claimed by the first merge of it
            todo = [positions[p] for p in self.at(merge).parents[1:] if p in positions]
            while todo:
                position = todo.pop()
                if position in claimed:
                    continue
                claimed.add(position)
                absorbed.add(position)
                todo.extend(positions[p] for p in self.at(position).parents if p in positions)
        return frozenset(absorbed)

    def is_candidate(self, position: int) -> bool:
        """A commit a PR may have been merged as: not part of another merge's branch, and
        not a merge that brings in others' commits (a sync with upstream)."""
        commit = self.at(position)
        return position not in self.absorbed and (not commit.is_merge or commit.number is not None)

    def paths_of(self, position: int) -> frozenset[str]:
        """The paths a commit changed, before and after each rename."""
        cache: dict[int, frozenset[str]] = self._lookup("paths of", dict)
        found = cache.get(position)
        if found is None:
            found = cache[position] = frozenset(
                name for change in self.changes[position] for name in change.split("\0")[1:] if name
            )
        return found

    def positions_touching(self, paths: Iterable[str]) -> dict[int, set[str]]:
        """Each candidate commit that changed one of `paths` (as written, no renames
        followed), with those of them it changed."""
        by_path: dict[str, list[int]] = self._lookup("paths", self._paths)
        found: dict[int, set[str]] = defaultdict(set)
        for path in paths:
            for position in by_path.get(path, ()):
                found[position].add(path)
        return found

    def _lookup(self, name: str, build: Callable[[], T]) -> T:
        if name not in self._lookups:
            self._lookups[name] = build()
        return cast(T, self._lookups[name])

    # --- JSON ----------------------------------------------------------------------------------

    def to_json(self) -> str:
        document = {
            "kgraphHistory": HISTORY_VERSION,
            "repo": self.repo,
            "commit": self.commit,
            "shallow": self.shallow,
            "commits": list(self.headers),
            "changes": [list(c) for c in self.changes],
        }
        return json.dumps(document, separators=(",", ":")) + "\n"

    @staticmethod
    def from_json(text: str) -> HistoryIndex | None:
        """The index a cache file holds, or None when it is damaged or from another version."""
        try:
            document = json.loads(text)
            if document.get("kgraphHistory") != HISTORY_VERSION:
                return None
            headers, changes = document["commits"], document["changes"]
            if len(headers) != len(changes) or not all(isinstance(h, str) for h in headers):
                return None
            return HistoryIndex(
                document["repo"], document["commit"], headers, changes, bool(document["shallow"])
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def build_history(repo: str, commit: str, log: Sequence[LogCommit], shallow: bool) -> HistoryIndex:
    headers = [f"{c.sha} {' '.join(c.parents)}".rstrip() + f"\0{c.date}\0{c.subject}" for c in log]
    changes = [[f"{f.status}\0{f.path}\0{f.old_path}" for f in c.changes] for c in log]
    return HistoryIndex(repo, commit, headers, changes, shallow)
