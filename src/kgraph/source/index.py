"""The index of one checkout: its files, what they define, what they import.

Built once per commit and kept as JSON in the output folder, so every later build at the
same commit only loads it. A large repository defines a million names (every parameter
and local counts) but a build looks up a few hundred, so definitions are stored packed,
one string per name, and decoded only when that name is looked up: loading the index of
20,000 files is reading one JSON document of long strings, not building a million objects.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar, cast

from kgraph.source.checkout import Checkout, list_files, read_files
from kgraph.source.definitions import (
    PARSED_SUFFIXES,
    WEAK_TIER,
    Definition,
    DefKind,
    FileFacts,
    facts_of,
    language,
)

INDEX_VERSION = 3  # bump when definitions are found or stored differently: caches rebuild

# A packed definition is "FILE,LINE,KIND,QUALNAME" (FILE an index into `files`); a name's
# definitions are joined by ";". Neither separator occurs in a qualified name.
FIELD, ROW = ",", ";"
T = TypeVar("T")


@dataclass(frozen=True)
class SourceIndex:
    repo: str  # "owner/name"
    commit: str | None  # full SHA, None for a plain folder
    files: tuple[str, ...]
    packed: Mapping[str, str]  # name → its packed definitions
    bases: Mapping[str, tuple[str, ...]]  # class name → base class names (simple names)
    imports: Mapping[str, str]  # file → the modules it imports, joined by ","
    definition_count: int = 0
    seconds: float = 0.0  # how long building took (0 when loaded from the cache)
    # Files left out because their names are not UTF-8, shown with U+FFFD (see build_index).
    unnamed: tuple[str, ...] = ()
    _decoded: dict[str, list[Definition]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _lookups: dict[str, object] = field(default_factory=dict, init=False, repr=False, compare=False)

    # --- lookups -----------------------------------------------------------------------------

    def definitions(self, name: str) -> list[Definition]:
        """Every definition of `name` (the last dotted segment), decoded on first use."""
        found = self._decoded.get(name)
        if found is None:
            found = []
            for row in filter(None, self.packed.get(name, "").split(ROW)):
                number, line, kind, qualname = row.split(FIELD, 3)
                path = self.files[int(number)]
                bases = self.bases.get(name, ()) if kind == DefKind.CLASS.value else ()
                found.append(Definition(path, qualname, int(line), DefKind(kind), bases))
            self._decoded[name] = found
        return found

    def defines(self, path: str, names: Iterable[str]) -> bool:
        """`path` defines one of `names` (as a def, class, field, constant or attribute)."""
        return any(
            d.path == path and d.tier < WEAK_TIER for name in names for d in self.definitions(name)
        )

    def imports_of(self, path: str) -> tuple[str, ...]:
        packed = self.imports.get(path, "")
        return tuple(packed.split(FIELD)) if packed else ()

    def ancestors(self, class_name: str) -> frozenset[str]:
        """Every base class name reachable from `class_name` (simple names, cycles cut)."""
        cache: dict[str, frozenset[str]] = self._lookup("ancestors", dict)
        if class_name not in cache:
            seen: set[str] = set()
            todo = list(self.bases.get(class_name, ()))
            while todo:
                base = todo.pop()
                if base not in seen and base != class_name:
                    seen.add(base)
                    todo.extend(self.bases.get(base, ()))
            cache[class_name] = frozenset(seen)
        return cache[class_name]

    @property
    def file_set(self) -> frozenset[str]:
        return self._lookup("file_set", lambda: frozenset(self.files))

    @property
    def by_basename(self) -> dict[str, list[str]]:
        def build() -> dict[str, list[str]]:
            found: dict[str, list[str]] = defaultdict(list)
            for path in self.files:
                found[path.rsplit("/", 1)[-1]].append(path)
            return dict(found)

        return self._lookup("by_basename", build)

    @property
    def main_language(self) -> str:
        """The language most of the checkout's parsed files are in."""

        def build() -> str:
            counts: dict[str, int] = defaultdict(int)
            for path in self.files:
                if kind := language(path):
                    counts[kind] += 1
            return max(sorted(counts), key=lambda k: counts[k]) if counts else ""

        return self._lookup("main_language", build)

    def _lookup(self, name: str, build: Callable[[], T]) -> T:
        """A lookup derived from the index on first use (the index itself is frozen)."""
        if name not in self._lookups:
            self._lookups[name] = build()
        return cast(T, self._lookups[name])

    # --- JSON ----------------------------------------------------------------------------------

    def to_json(self) -> str:
        document = {
            "kgraphSourceIndex": INDEX_VERSION,
            "repo": self.repo,
            "commit": self.commit,
            "definitionCount": self.definition_count,
            "files": list(self.files),
            "names": dict(sorted(self.packed.items())),
            "bases": {name: list(b) for name, b in sorted(self.bases.items())},
            "imports": dict(sorted(self.imports.items())),
            "unnamed": list(self.unnamed),
        }
        return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"

    @staticmethod
    def from_json(text: str) -> SourceIndex | None:
        """The index a cache file holds, or None when it is damaged or from another version."""
        try:
            document = json.loads(text)
            if document.get("kgraphSourceIndex") != INDEX_VERSION:
                return None
            return SourceIndex(
                document["repo"],
                document["commit"],
                tuple(document["files"]),
                document["names"],
                {name: tuple(b) for name, b in document["bases"].items()},
                document["imports"],
                document["definitionCount"],
                unnamed=tuple(document.get("unnamed", ())),
            )
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None  # a damaged cache is rebuilt, never trusted


def build_index(repo: str, checkout: Checkout, workers: int | None = None) -> SourceIndex:
    """Read every file of the checkout once and record what each defines and imports.

    Parsing is most of the time (`ast.parse` alone is ~80 %), so a large checkout is parsed
    by `workers` processes (default: one per available CPU); the index is the same
    whatever their number.

    A file whose name is not UTF-8 (`bad\\xffname.py`, bytes any POSIX name may hold) is
    left out, and listed in `unnamed`: no review, which is UTF-8 text, can name it, no
    export can hold its name, and writing the cached index failed on it, losing the build.
    """
    started = time.perf_counter()
    files, unnamed = [], []
    for path in list_files(checkout):
        try:
            path.encode("utf-8")
            files.append(path)
        except UnicodeEncodeError:
            unnamed.append(os.fsencode(path).decode("utf-8", "replace"))
    number = {path: i for i, path in enumerate(files)}
    parsed = [p for p in files if p.lower().endswith(PARSED_SUFFIXES)]
    rows: dict[str, list[tuple[int, int, str, str]]] = defaultdict(list)
    bases: dict[str, set[str]] = defaultdict(set)
    imports: dict[str, str] = {}
    count = 0
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    for path, facts in _all_facts(read_files(checkout, parsed), len(parsed), workers):
        for d in facts.definitions:
            rows[d.name].append((number[path], d.line, d.kind.value, d.qualname))
            if d.bases:
                bases[d.name].update(d.bases)
        count += len(facts.definitions)
        if facts.imports:
            imports[path] = FIELD.join(facts.imports)
    packed = {
        name: ROW.join(FIELD.join(map(str, row)) for row in sorted(found))
        for name, found in rows.items()
    }
    return SourceIndex(
        repo,
        checkout.commit,
        tuple(files),
        packed,
        {name: tuple(sorted(b)) for name, b in bases.items()},
        imports,
        count,
        time.perf_counter() - started,
        tuple(unnamed),
    )


PARALLEL_MIN = 200  # fewer files than this are parsed in-process: starting workers costs more
CHUNK = 64


def _all_facts(
    contents: Iterable[tuple[str, bytes]], total: int, workers: int
) -> Iterator[tuple[str, FileFacts]]:
    """`facts_of` every file, in order, in `workers` processes when that pays."""
    if workers <= 1 or total < PARALLEL_MIN:
        for path, data in contents:
            yield path, facts_of(path, data)
        return
    # Read everything before starting workers: a forked worker would inherit the pipe to
    # `git cat-file` and keep it from ever seeing the end of its input.
    chunks = list(_chunked(contents, CHUNK))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for done in pool.map(_facts_of_chunk, chunks):
            yield from done


def _facts_of_chunk(chunk: list[tuple[str, bytes]]) -> list[tuple[str, FileFacts]]:
    return [(path, facts_of(path, data)) for path, data in chunk]


def _chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
