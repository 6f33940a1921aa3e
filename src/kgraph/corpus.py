"""Read and extract every input: the per-digest half of a build, cached and parallel.

Each digest is read and extracted on its own (the linker is the first step that sees two
digests together), so this stage runs in `--jobs` worker processes, one digest at a time,
and reuses what an earlier build into the same folder extracted from unchanged digests
(`kgraph.cache`). Results come back in input order, whatever the number of workers, so
the graph does not depend on it.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import sys
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import BinaryIO

from kgraph.cache import ExtractedDigest, ExtractionCache, cache_key
from kgraph.catalog import Knowledge
from kgraph.extract import EXTRACTORS, Remembered, extract_digest
from kgraph.ingest import Passed, display_name, expand_inputs, read_digest
from kgraph.interrupt import checkpoint, leave_stops_to_parent, signals_held
from kgraph.limits import MAX_DIGEST_BYTES
from kgraph.model import Problem, ReadResult, Severity
from kgraph.progress import Progress


@dataclass(frozen=True, slots=True)
class DigestReader:
    """Everything reading one digest depends on besides its bytes."""

    forced: str | None
    knowledge: Knowledge
    cache: ExtractionCache | None = None
    # (file name, sha256) of the digests the last build's link state holds: they are
    # neither read back nor extracted, unless the linker asks (`kgraph.delta`).
    known: frozenset[tuple[str, str]] = frozenset()
    # What each entry gave, for the build (`extract.extract_digest`); emptied once read.
    remembered: Remembered = field(default_factory=dict, compare=False, repr=False)

    def read_path(self, path: str) -> tuple[ExtractedDigest, str]:
        """The digest's extraction and its cache key ("" for a file that cannot be read)."""
        try:
            with open(path, "rb") as file:
                data = _read_at_most(file, os.fstat(file.fileno()).st_size)
        except OSError as err:
            return _unreadable(path, f"cannot read: {err.strerror}"), ""
        if data is None:
            return _unreadable(path, _TOO_LARGE), ""
        return self.read_bytes(data, display_name(path))

    def read_bytes(self, data: bytes, source: str) -> tuple[ExtractedDigest, str]:
        sha = hashlib.sha256(data).hexdigest()
        key = cache_key(sha, source, self.forced, self.knowledge.fingerprint)
        if (PurePath(source).name, sha) in self.known:
            return ExtractedDigest(ReadResult(None), sha256=sha, cached=True, known=True), key
        if self.cache is not None and (hit := self.cache.load(key, source)) is not None:
            return hit, key
        result = read_digest(data, source, self.forced)
        checkpoint()  # a stop whose exception a library swallowed (kgraph.interrupt)
        stopped: list[Problem] = []
        mentions = extract_digest(
            result.entries, EXTRACTORS, self.knowledge, stopped, self.remembered
        )
        sha = result.digest.sha256 if result.digest else ""
        value = ExtractedDigest(result, tuple(mentions), tuple(stopped), sha)
        # A cue stopped by its timeout depends on the machine's speed: not kept, so that
        # the next build tries it again (and says so again).
        if self.cache is not None and result.digest is not None and not stopped:
            self.cache.store(key, value)
        return value, key


@dataclass(slots=True)
class Corpus:
    extracted: list[tuple[ExtractedDigest, str, str]]  # (value, cache key, path), in input order
    problems: list[Problem]  # of expanding the inputs
    manifest: list[tuple[str, str, str]]  # (source, sha256, cache key) of every digest read
    passed: list[Passed] = field(default_factory=list)  # what the walks did not read

    def finish(self, cache: ExtractionCache | None) -> int:
        """Note the inputs in the cache's manifest and drop the results no input uses (once
        the linker needs none of the last build's); returns how many of the last build's
        inputs are gone."""
        return cache.finish(self.manifest) if cache is not None else 0


def read_corpus(
    inputs: Sequence[str],
    reader: DigestReader,
    jobs: int = 1,
    progress: Progress | None = None,
    written: Sequence[Path] = (),
) -> Corpus:
    """Every input's extraction, and the manifest `Corpus.finish` writes. No folder walk
    reads the files and folders `written`."""
    progress = progress or Progress()
    expanded = expand_inputs(inputs, written)
    paths = expanded.paths
    problems = [replace(p, source=display_name(p.source)) for p in expanded.problems]
    progress.stage("reading and extracting", len(paths), "digests")
    extracted: list[tuple[ExtractedDigest, str, str]] = []
    manifest: list[tuple[str, str, str]] = []
    # Closed on the way out whatever happens here, so that its workers stop with the build.
    with closing(_read_all(paths, reader, jobs, problems)) as reading:
        for path, (value, key) in zip(paths, reading, strict=True):
            extracted.append((value, key, path))
            if key and (value.known or value.result.digest is not None):
                manifest.append((display_name(path), value.sha256, key))
            progress.advance()
    passed = [replace(p, path=display_name(p.path)) for p in expanded.passed]
    return Corpus(extracted, problems, manifest, passed)


def _read_all(
    paths: list[str], reader: DigestReader, jobs: int, problems: list[Problem]
) -> Generator[tuple[ExtractedDigest, str], None, None]:
    """Each path's extraction, in order. A worker that dies (the out-of-memory killer,
    a stray SIGKILL) is reported and the digests it left are read in this process: with
    `multiprocessing.Pool` its digest was lost and the build waited forever."""
    files = [p for p in paths if p != "-"]
    if jobs <= 1 or len(files) <= 1:
        for path in paths:
            yield _read_stdin(reader) if path == "-" else reader.read_path(path)
        return
    pool, finished, readers = None, False, []
    try:
        # Signals wait while the workers are forked: one forked but not yet noted would
        # outlive a stop, holding the build's stderr open.
        with signals_held():
            others = set(multiprocessing.active_children())
            # fork: the workers inherit the loaded catalog and its cue index.
            pool = ProcessPoolExecutor(
                min(jobs, len(files)),
                mp_context=multiprocessing.get_context("fork"),
                initializer=_start_worker,
                initargs=(reader,),
            )
            results: Iterator[tuple[ExtractedDigest, str]] | None = pool.map(_read_in_worker, files)
            # With fork, the executor starts all its workers at the first task.
            readers = [p for p in multiprocessing.active_children() if p not in others]
        for at, path in enumerate(paths):
            if path == "-":
                yield _read_stdin(reader)
                continue
            if results is not None:
                try:
                    done = next(results)
                except BrokenProcessPool:
                    results = None
                    problems.append(_reader_died(paths, at))
                    # The executor reaps the pool's workers by waiting for them; one still
                    # alive may be blocked writing a result nobody reads any more, and it
                    # leaves SIGTERM to this process: the build hung there forever.
                    for worker in readers:
                        worker.kill()
                else:
                    yield done
                    continue
            yield reader.read_path(path)
        finished = True
    finally:
        if not finished:  # Ctrl-C, SIGTERM or an error: the workers stop with the build
            for worker in readers:
                worker.kill()
        if pool is not None:  # its thread sees them gone, and ends before the build does
            pool.shutdown(wait=True, cancel_futures=True)


def _reader_died(paths: list[str], at: int) -> Problem:
    """The warning for a reader that died with `paths[at]` and the files after it unread."""
    after = sum(1 for p in paths[at + 1 :] if p != "-")
    rest = f"this digest and the {after} after it were" if after else "it was"
    return Problem(
        display_name(paths[at]),
        0,
        f"a reader process died, perhaps killed for want of memory; {rest} read in the "
        "build's own process",
    )


def _read_stdin(reader: DigestReader) -> tuple[ExtractedDigest, str]:
    if (data := _read_at_most(sys.stdin.buffer, 0)) is None:
        return _unreadable("-", _TOO_LARGE), ""
    return reader.read_bytes(data, "-")


_TOO_LARGE = f"larger than {MAX_DIGEST_BYTES >> 20:,} MB, which a digest is read whole in; split it"


READ_CHUNK = 1 << 20  # bytes read at a time once a file outgrows the size it said it had


def _read_at_most(file: BinaryIO, size: int) -> bytes | None:
    """The file's bytes, or None past `MAX_DIGEST_BYTES`: known from `size` for a regular
    file (a sparse one of 100 GB is not read), found by reading for a pipe or a file that
    grows while it is read. It asks for the size it expects, then a chunk at a time: a
    `read(MAX_DIGEST_BYTES + 1)` would allocate (and map) a 1 GB buffer for every digest."""
    if size > MAX_DIGEST_BYTES:
        return None
    data = file.read(size + 1) if size else b""
    if size and len(data) <= size:
        return data  # the whole file, as its size said
    parts, total = [data], len(data)
    while total <= MAX_DIGEST_BYTES:
        chunk = file.read(min(READ_CHUNK, MAX_DIGEST_BYTES + 1 - total))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)
    return None


def _unreadable(path: str, why: str) -> ExtractedDigest:
    problem = Problem(display_name(path), 0, why, Severity.ERROR)
    return ExtractedDigest(ReadResult(None, (), (problem,)))


_worker_reader: DigestReader | None = None


def _start_worker(reader: DigestReader) -> None:
    global _worker_reader
    leave_stops_to_parent()
    _worker_reader = reader


def _read_in_worker(path: str) -> tuple[ExtractedDigest, str]:
    assert _worker_reader is not None
    return _worker_reader.read_path(path)
