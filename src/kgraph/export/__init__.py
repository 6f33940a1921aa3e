"""Exporters: one per output file, one registry, and atomic writes.

Every exporter streams its file into an open binary handle, subject by subject, so a large
graph is never held as text. The RDF ones share one walk order, and Turtle is converted
from the N-Triples file, written once. Files are written to temporary names and renamed
together, so a build killed at any moment leaves the previous outputs intact.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

from kgraph.atomic import Filler, Writer, fill, write_all_atomic
from kgraph.export import html, json_graph, rdf
from kgraph.graph import Edge, KnowledgeGraph
from kgraph.interrupt import leave_stops_to_parent, signals_held
from kgraph.progress import Progress


@dataclass
class ExportInput:
    graph: KnowledgeGraph
    base: str
    options: dict[str, object] = field(default_factory=dict)
    scratch: Path | None = None  # a folder for files shared between exporters
    _ntriples: tuple[Path, int] | None = None
    _scratch: Path | None = None

    @cached_property
    def out_edges(self) -> dict[str, list[Edge]]:
        """Each source's edges, sorted: the graph's adjacency, built once for every writer."""
        return self.graph.out_edges()

    def blocks(self) -> Iterator[rdf.Block]:
        return rdf.subject_blocks(self.graph, self.base, self.out_edges)

    def ntriples(self) -> tuple[Path, int]:
        """The N-Triples file and its longest literal: the N-Triples output being written,
        or a scratch file when that output was not asked for."""
        if self._ntriples is None:
            with signals_held():
                fd, name = tempfile.mkstemp(dir=self.scratch, prefix=".graph.nt.", suffix=".tmp")
                self._scratch = Path(name)
            with os.fdopen(fd, "wb") as handle:
                self._ntriples = self._scratch, rdf.write_ntriples(self.blocks(), handle)
        return self._ntriples

    def use_ntriples(self, path: Path, longest_literal: int) -> None:
        """The N-Triples output was just written to `path`: Turtle is converted from it."""
        self._ntriples = path, longest_literal

    def discard_scratch(self) -> None:
        if self._scratch is not None:
            self._scratch.unlink(missing_ok=True)
        self._scratch = self._ntriples = None


def _ntriples(x: ExportInput, out: BinaryIO) -> None:
    longest = rdf.write_ntriples(x.blocks(), out)
    out.flush()
    x.use_ntriples(Path(out.name), longest)


def _turtle(x: ExportInput, out: BinaryIO) -> None:
    path, longest = x.ntriples()
    rdf.write_turtle(path, longest, x.blocks, out)


def _html(x: ExportInput, out: BinaryIO) -> None:
    out.write(html.to_html(x.graph, html.options_from(x.options)).encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Exporter:
    name: str
    filename: str
    description: str
    write: Callable[[ExportInput, BinaryIO], None]


EXPORTERS: tuple[Exporter, ...] = (
    Exporter("turtle", "graph.ttl", "RDF Turtle", _turtle),
    Exporter("ntriples", "graph.nt", "RDF N-Triples", _ntriples),
    Exporter(
        "jsonld",
        "graph.jsonld",
        "JSON-LD with a @context, one subject a line",
        lambda x, out: rdf.write_jsonld(x.blocks(), x.base, out),
    ),
    Exporter(
        "json",
        "graph.json",
        "node-link JSON for pipelines (networkx)",
        lambda x, out: json_graph.write_json(x.graph, x.base, x.out_edges, out),
    ),
    Exporter("html", "graph.html", "interactive, offline HTML graph", _html),
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
) -> list[Path]:
    """Write every output together: a failure leaves all the old ones.

    With `jobs` > 1 the files are written in that many forked processes, which share the
    graph with this one; N-Triples and Turtle stay together, as Turtle is read from the
    N-Triples file.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    inputs.scratch = out_dir
    ordered = sorted(exporters, key=lambda e: e.write is not _ntriples)  # Turtle reads it
    progress = progress or Progress()
    fill_all = None
    if jobs > 1 and len(ordered) > 1:
        names = ", ".join(e.filename for e in ordered)
        progress.stage(f"writing {names} in {min(jobs, len(ordered))} processes")
        progress = Progress()  # the workers draw nothing
        _ = inputs.out_edges  # built once here, and shared with the workers by fork
        fill_all = _in_processes(inputs, _groups(ordered), jobs)
    try:
        write_all_atomic(
            [(out_dir / e.filename, _bound(e, inputs, progress)) for e in ordered], fill_all
        )
    finally:
        inputs.discard_scratch()
    return [out_dir / e.filename for e in exporters]


def _bound(exporter: Exporter, inputs: ExportInput, progress: Progress) -> Writer:
    def write(out: BinaryIO) -> None:
        progress.stage(f"writing {exporter.filename}")
        exporter.write(inputs, out)

    return write


def _groups(ordered: Sequence[Exporter]) -> list[list[int]]:
    """Indexes of the files one process writes: N-Triples with Turtle, the rest alone."""
    rdf_pair = [i for i, e in enumerate(ordered) if e.write in (_ntriples, _turtle)]
    rest = [[i] for i, e in enumerate(ordered) if i not in rdf_pair]
    return ([rdf_pair] if rdf_pair else []) + rest  # the largest first


# What the forked writers inherit: (inputs, temporary files, groups). A module global, as
# writers are closures, which cannot be pickled; `fork` hands them over as they are.
_pending: tuple[ExportInput, Sequence[tuple[str, Writer]], list[list[int]]] | None = None


def _in_processes(inputs: ExportInput, groups: list[list[int]], jobs: int) -> Filler:
    def fill_all(files: Sequence[tuple[str, Writer]]) -> None:
        global _pending
        _pending = (inputs, files, groups)
        context = multiprocessing.get_context("fork")
        pool = context.Pool(min(jobs, len(groups)), initializer=leave_stops_to_parent)
        try:
            pool.map(_fill_group, range(len(groups)), chunksize=1)
            pool.close()
        finally:
            pool.terminate()
            pool.join()
            _pending = None

    return fill_all


def _fill_group(index: int) -> None:
    assert _pending is not None
    inputs, files, groups = _pending
    try:
        for i in groups[index]:
            fill(*files[i])
    finally:
        inputs.discard_scratch()  # this process's own scratch N-Triples, if it made one
