"""Source code as an input: `--source OWNER/REPO=PATH[@REV]` read into a `SourceIndex`.

Reading a checkout is input, like reading digests: this package is the only place that
touches the checkout, and it caches what it read by commit in the output folder
(`OUT/.kgraph/source-OWNER-REPO-COMMIT.json`), so a repository of 20,000 files is indexed
once and every later build at the same commit only loads the index.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import regex

from kgraph.atomic import write_atomic
from kgraph.model import Problem
from kgraph.source.checkout import SourceError, open_checkout
from kgraph.source.index import SourceIndex, build_index

__all__ = ["LoadedSource", "SourceError", "SourceIndex", "SourceSpec", "load_source"]

CACHE_FOLDER = ".kgraph"
REPO_NAME = regex.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9_.][\w.-]*$")


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One `--source`: which repository, where its checkout is, and which commit to read."""

    repo: str
    path: Path
    rev: str | None = None

    @staticmethod
    def parse(text: str) -> SourceSpec:
        """`OWNER/REPO=PATH` or `OWNER/REPO=PATH@REV`.

        An `@` splits off a revision unless the whole PATH is an existing folder (so
        `/src/a@b` still works as a folder name).
        """
        repo, equals, location = text.partition("=")
        repo = repo.strip()
        if not equals or not location:
            raise ValueError(f"{text!r}: expected OWNER/REPO=PATH or OWNER/REPO=PATH@REV")
        if not REPO_NAME.match(repo):
            raise ValueError(f"{repo!r}: a repository is written OWNER/NAME")
        rev = None
        if "@" in location and not Path(location).is_dir():
            location, _, rev = location.rpartition("@")
            if not location or not rev:
                raise ValueError(f"{text!r}: expected OWNER/REPO=PATH@REV")
        return SourceSpec(repo, Path(location), rev)


@dataclass(frozen=True, slots=True)
class LoadedSource:
    """An index and how it was obtained, for the build's summary."""

    spec: SourceSpec
    index: SourceIndex
    cached: bool
    seconds: float
    git_dir: Path | None = None  # the repository, for its history; None for a plain folder

    def problems(self) -> list[Problem]:
        """A warning for the files the index left out (their names are not UTF-8)."""
        unnamed = self.index.unnamed
        if not unnamed:
            return []
        names = ", ".join(repr(n) for n in unnamed[:3]) + (" …" if len(unnamed) > 3 else "")
        message = (
            f"{len(unnamed)} file(s) whose name is not UTF-8 left out of {self.spec.repo}'s "
            f"index ({names}); no review can name them"
        )
        return [Problem(str(self.spec.path), 0, message)]

    def summary(self) -> str:
        at = f"@{self.index.commit[:12]}" if self.index.commit else " (folder)"
        how = "index cached" if self.cached else f"indexed in {self.seconds:.1f}s"
        return (
            f"{self.index.repo}{at}: {len(self.index.files)} files, "
            f"{self.index.definition_count} definitions, {how}"
        )


def load_source(spec: SourceSpec, cache_dir: Path | None) -> LoadedSource:
    """The index of `spec`: from `cache_dir` when it holds one for the same commit (or,
    for a plain folder, the same file names, sizes and times), else built and cached."""
    started = time.perf_counter()
    checkout = open_checkout(spec.path, spec.rev)
    cache = None
    if cache_dir is not None:
        safe = spec.repo.replace("/", "-")
        cache = cache_dir / CACHE_FOLDER / f"source-{safe}-{checkout.fingerprint}.json"
        if cache.is_file():
            index = SourceIndex.from_json(cache.read_text("utf-8"))
            if index is not None and index.repo == spec.repo:
                seconds = time.perf_counter() - started
                return LoadedSource(spec, index, True, seconds, checkout.git_dir)
    index = build_index(spec.repo, checkout)
    if cache is not None:
        write_atomic(cache, index.to_json().encode("utf-8"))
    return LoadedSource(spec, index, False, time.perf_counter() - started, checkout.git_dir)
