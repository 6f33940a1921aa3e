"""What one commit changed: its files with lines added and removed, the definitions
(classes, functions, methods) whose lines its diff touches, and the design signals of its
changed lines (`kgraph.history.signals`).

A removed line belongs to a definition of the file as it was before the commit, an added
line to one of the file as the commit left it: both versions are read from git and parsed
with the source index's own definitions code (`kgraph.source.definitions`), so a changed
symbol is named exactly as a resolved mention of it is.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from kgraph.history.index import Commit, HistoryIndex
from kgraph.history.log import FileDiff, MissingObject, read_numstat
from kgraph.history.signals import Signal, signals_of
from kgraph.source.definitions import (
    PARSED_SUFFIXES,
    DefKind,
    definition_spans,
    innermost,
)

MAX_FILES_PARSED = 200  # files per commit whose definitions are read (a refactor may touch 5,000)


@dataclass(frozen=True, slots=True, order=True)
class FileChanged:
    path: str  # as the commit left it (the deleted path for a deletion)
    status: str  # A, M, D, R, C, T
    old_path: str = ""  # before a rename or copy
    added: int | None = None  # lines; None for a binary file or one git could not read
    removed: int | None = None
    head: str = ""  # its name at the commit the history was read up to (renames followed)


@dataclass(frozen=True, slots=True, order=True)
class SymbolChanged:
    path: str  # the file the definition is in, on its side of the diff
    qualname: str
    kind: DefKind
    line: int  # its first line on that side
    side: str  # "old" (removed lines in it) or "new" (added lines in it)
    head: str = ""  # the file's name at the commit the history was read up to


@dataclass(frozen=True, slots=True)
class CommitChange:
    files: tuple[FileChanged, ...]
    symbols: tuple[SymbolChanged, ...]
    signals: tuple[Signal, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "signals": [s.to_json() for s in self.signals],
            "files": [
                [f.path, f.status, f.old_path, f.added, f.removed, f.head] for f in self.files
            ],
            "symbols": [
                [s.path, s.qualname, s.kind.value, s.line, s.side, s.head] for s in self.symbols
            ],
        }

    @staticmethod
    def from_json(value: object) -> CommitChange | None:
        try:
            assert isinstance(value, dict)
            files = tuple(FileChanged(*f) for f in value["files"])
            symbols = tuple(
                SymbolChanged(p, q, DefKind(k), int(line), side, head)
                for p, q, k, line, side, head in value["symbols"]
            )
            signals = tuple(Signal.from_json(s) for s in value["signals"])
            return CommitChange(files, symbols, signals)
        except (AssertionError, KeyError, TypeError, ValueError):
            return None


def read_change(
    git_dir: Path,
    index: HistoryIndex,
    commit: Commit,
    diffs: Sequence[FileDiff],
    missing: list[MissingObject],
) -> CommitChange:
    """The change of `commit`, from the log's file list, `git diff-tree --numstat` and the
    commit's diff (`diffs`, as `kgraph.history.log.read_diffs` gives it); every path is
    also followed to its name at the index's commit."""
    counts = read_numstat(git_dir, commit.sha, commit.first_parent, missing)
    at = commit.position
    files = []
    for c in commit.changes:
        added, removed = counts.get(c.path) or (None, None)
        head = index.path_at_head(c.path, at)
        files.append(FileChanged(c.path, c.status, c.old_path, added, removed, head))
    symbols = [
        # A removed line's file is the one before the commit: its own renames apply too.
        replace(s, head=index.path_at_head(s.path, at + (s.side == "old")))
        for s in _symbols(git_dir, commit, diffs)
    ]
    return CommitChange(tuple(sorted(files)), tuple(sorted(symbols)), signals_of(diffs))


def _symbols(git_dir: Path, commit: Commit, diffs: Sequence[FileDiff]) -> Iterator[SymbolChanged]:
    parsed = [
        d for d in diffs if not (d.unread or d.binary) and d.path.lower().endswith(PARSED_SUFFIXES)
    ][:MAX_FILES_PARSED]
    wanted: list[str] = []
    for d in parsed:
        if d.removed and d.old_path and commit.first_parent:
            wanted.append(f"{commit.first_parent}:{d.old_path}")
        if d.added:
            wanted.append(f"{commit.sha}:{d.path}")
    blobs = dict(_cat(git_dir, wanted))
    seen: set[tuple[str, str, str]] = set()
    for d in parsed:
        for side, path, spec, lines in (
            ("old", d.old_path, f"{commit.first_parent}:{d.old_path}", d.removed),
            ("new", d.path, f"{commit.sha}:{d.path}", d.added),
        ):
            data = blobs.get(spec)
            if data is None or not lines:
                continue
            spans = definition_spans(path, data)
            for number, text in lines:
                if not text.strip():
                    continue  # a blank line between definitions changes neither
                found = innermost(spans, number)
                if found is not None and (side, path, found.qualname) not in seen:
                    seen.add((side, path, found.qualname))
                    yield SymbolChanged(path, found.qualname, found.kind, found.line, side)


def _cat(git_dir: Path, specs: list[str]) -> Iterator[tuple[str, bytes]]:
    """`git cat-file --batch` of `REV:PATH` specs; what git lacks is left out."""
    specs = [s for s in specs if "\n" not in s]
    if not specs:
        return
    result = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input="".join(s + "\n" for s in specs).encode("utf-8", "surrogateescape"),
        capture_output=True,
        check=False,
    )
    data, at = result.stdout, 0
    for spec in specs:
        end = data.find(b"\n", at)
        if end < 0:
            return
        header = data[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue  # "missing", "ambiguous", or a submodule
        size = int(header[2])
        yield spec, data[at : at + size]
        at += size + 1
