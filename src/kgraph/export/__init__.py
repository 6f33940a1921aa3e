"""Exporters: one per output file, one registry, and atomic writes.

Every exporter streams its file into an open binary handle, subject by subject, so a large
graph is never held as text; all of them walk the subjects in one order. Files are written
to temporary names and renamed together, so a build killed at any moment leaves the
previous outputs intact.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import BinaryIO, cast

from kgraph.atomic import Filler, Writer, fill, write_all_atomic
from kgraph.export import html, json_graph, rdf, reuse
from kgraph.graph import Edge, KnowledgeGraph
from kgraph.interrupt import leave_stops_to_parent
from kgraph.progress import Progress


@dataclass
class ExportInput:
    graph: KnowledgeGraph
    base: str
    options: dict[str, object] = field(default_factory=dict)
    previous: reuse.Previous | None = None  # the last build's outputs, to copy blocks from
    keep_index: bool = False  # fingerprint the subjects, to index the outputs for next time

    @cached_property
    def out_edges(self) -> Mapping[str, list[Edge]]:
        """Each source's edges, sorted: the graph's adjacency, built once for every writer."""
        return self.graph.out_edges()

    @cached_property
    def subjects(self) -> rdf.Subjects:
        return rdf.Subjects(self.graph, self.base, self.out_edges)

    @cached_property
    def fingerprints(self) -> bytes:
        if self.previous is None and not self.keep_index:
            return b""
        return reuse.fingerprints(self.graph, self.subjects.ids, self.out_edges)

    @cached_property
    def matches(self) -> tuple[Sequence[int], Sequence[int]]:
        """Each subject's old index (-1 for none), and where its run of copyable subjects
        ends."""
        if self.previous is None:
            return (), ()
        matches = self.previous.matches(self.subjects.ids, self.fingerprints)
        return matches, reuse.run_ends(matches)

    def block_file(self, out: BinaryIO, filename: str, separated: bool) -> reuse.BlockFile:
        old = self.previous.file(filename) if self.previous is not None else None
        matches, run_ends = self.matches if old else ((), ())
        return reuse.BlockFile(out, old, matches, run_ends, separated)


def _ntriples(x: ExportInput, out: reuse.BlockFile) -> None:
    rdf.write_ntriples(x.subjects, out)


def _turtle(x: ExportInput, out: reuse.BlockFile) -> None:
    rdf.write_turtle(x.subjects, out)


def _jsonld(x: ExportInput, out: reuse.BlockFile) -> None:
    rdf.write_jsonld(x.subjects, out)


def _json(x: ExportInput, out: reuse.BlockFile) -> None:
    json_graph.write_json(x.graph, x.subjects, out)


def _html(x: ExportInput, out: reuse.BlockFile) -> None:
    out.write(html.to_html(x.graph, html.options_from(x.options)))


@dataclass(frozen=True, slots=True)
class Exporter:
    name: str
    filename: str
    description: str
    write: Callable[[ExportInput, reuse.BlockFile], None]
    separated: bool = False  # its blocks start with a separator that depends on their place
    blocks: bool = True  # written a block per subject, which the next build may copy


EXPORTERS: tuple[Exporter, ...] = (
    Exporter("turtle", "graph.ttl", "RDF Turtle", _turtle),
    Exporter("ntriples", "graph.nt", "RDF N-Triples", _ntriples),
    Exporter(
        "jsonld",
        "graph.jsonld",
        "JSON-LD with a @context, one subject a line",
        _jsonld,
        separated=True,
    ),
    Exporter(
        "json", "graph.json", "node-link JSON for pipelines (networkx)", _json, separated=True
    ),
    Exporter("html", "graph.html", "interactive, offline HTML graph", _html, blocks=False),
)


def exporter_named(name: str) -> Exporter:
    for exporter in EXPORTERS:
        if exporter.name == name:
            return exporter
    raise KeyError(name)


def export_all(
    inputs: ExportInput,
    out_dir: Path,
    exporters: Sequence[Exporter] = EXPORTERS,
    progress: Progress | None = None,
    jobs: int = 1,
) -> Exported:
    """Write every output together: a failure leaves all the old ones.

    With `jobs` > 1 the files are written in that many forked processes, which share the
    graph with this one; the subjects are fingerprinted in as many parts, beside them.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    if not any(e.blocks for e in exporters):  # the page alone: no block to copy or index
        inputs.previous, inputs.keep_index = None, False
    if inputs.keep_index:
        reuse.discard(out_dir)  # the outputs are about to change under it
    ordered = list(exporters)
    progress = progress or Progress()
    fill_all = None
    if jobs > 1 and len(ordered) > 1:
        names = ", ".join(e.filename for e in ordered)
        progress.stage(f"writing {names} in {min(jobs, len(ordered))} processes")
        progress = Progress()  # the workers draw nothing
        if inputs.previous is not None and "fingerprints" not in vars(inputs):
            # Needed before any block is written: what to copy depends on them.
            parts = _in_pool(inputs, (), _parts(len(inputs.subjects.ids), jobs), jobs)
            vars(inputs)["fingerprints"] = _joined(parts)  # as the cached property would
        _ = inputs.matches  # made once here, and shared with the workers by fork
        fill_all = _in_processes(inputs, jobs)
    try:
        written = write_all_atomic(
            [(out_dir / e.filename, _bound(e, inputs, progress)) for e in ordered], fill_all
        )
    finally:
        if inputs.previous is not None:
            inputs.previous.close()
    results = [(e.filename, w) for e, w in zip(ordered, written, strict=True)]
    if inputs.keep_index:
        indexed = [(name, w) for name, w in results if isinstance(w, reuse.Written) and w.offsets]
        reuse.save(out_dir, inputs.base, inputs.subjects.ids, inputs.fingerprints, indexed)
    return Exported(
        [out_dir / e.filename for e in exporters],
        {name: w for name, w in results if isinstance(w, reuse.Written)},
    )


@dataclass(frozen=True, slots=True)
class Exported:
    paths: list[Path]
    files: dict[str, reuse.Written]  # by file name: its size and how much was copied

    @property
    def copied(self) -> float:
        """The share of the bytes written that were copied from the last build's files."""
        size = sum(w.size for w in self.files.values())
        return sum(w.copied for w in self.files.values()) / size if size else 0.0


def _bound(exporter: Exporter, inputs: ExportInput, progress: Progress) -> Writer:
    def write(out: BinaryIO) -> reuse.Written:
        progress.stage(f"writing {exporter.filename}")
        blocks = inputs.block_file(out, exporter.filename, exporter.separated)
        exporter.write(inputs, blocks)
        return blocks.close()

    return write


# What the forked workers inherit: (inputs, temporary files). A module global, as writers
# are closures, which cannot be pickled; `fork` hands them over as they are.
_pending: tuple[ExportInput, Sequence[tuple[str, Writer]]] | None = None

# A task of the pool: the index of a file to write, or a slice of the subjects to fingerprint.
Task = int | slice


def _in_processes(inputs: ExportInput, jobs: int) -> Filler:
    def fill_all(files: Sequence[tuple[str, Writer]]) -> list[object]:
        tasks: list[Task] = list(range(len(files)))
        if inputs.keep_index and "fingerprints" not in vars(inputs):
            # In parts after the files, so that they even out the workers' loads.
            tasks += _parts(len(inputs.subjects.ids), jobs)
        done = _in_pool(inputs, files, tasks, jobs)
        if parts := [d for t, d in zip(tasks, done, strict=True) if isinstance(t, slice)]:
            vars(inputs)["fingerprints"] = _joined(parts)
        return [d for t, d in zip(tasks, done, strict=True) if isinstance(t, int)]

    return fill_all


def _parts(count: int, parts: int) -> list[slice]:
    return [slice(count * i // parts, count * (i + 1) // parts) for i in range(parts)]


def _joined(parts: Sequence[object]) -> bytes:
    """The subjects' fingerprints from those of their parts, in order."""
    return b"".join(cast("list[bytes]", parts))


def _in_pool(
    inputs: ExportInput, files: Sequence[tuple[str, Writer]], tasks: Sequence[Task], jobs: int
) -> list[object]:
    """Each task's result, in order, from `jobs` forked processes."""
    global _pending
    _pending = (inputs, files)
    context = multiprocessing.get_context("fork")
    pool = context.Pool(min(jobs, len(tasks)), initializer=leave_stops_to_parent)
    try:
        done = pool.map(_run_task, tasks, chunksize=1)
        pool.close()
        return done
    finally:
        pool.terminate()
        pool.join()
        _pending = None


def _run_task(task: Task) -> object:
    assert _pending is not None
    inputs, files = _pending
    if isinstance(task, slice):
        ids = inputs.subjects.ids[task]
        return reuse.fingerprints(inputs.graph, ids, inputs.out_edges)
    return fill(*files[task])
