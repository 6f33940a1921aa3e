"""Exporters: one per output file, one registry, and atomic writes.

Every exporter streams its file into an open binary handle, subject by subject, so a large
graph is never held as text. The RDF ones share one walk order, and Turtle is converted
from the N-Triples file, written once. Files are written to temporary names and renamed
together, so a build killed at any moment leaves the previous outputs intact.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

from kgraph.export import html, json_graph, rdf
from kgraph.graph import Edge, KnowledgeGraph
from kgraph.interrupt import checkpoint, signals_held


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

    def discard_scratch(self) -> None:
        if self._scratch is not None:
            self._scratch.unlink(missing_ok=True)
        self._scratch = self._ntriples = None


def _ntriples(x: ExportInput, out: BinaryIO) -> None:
    longest = rdf.write_ntriples(x.blocks(), out)
    out.flush()
    x._ntriples = Path(out.name), longest  # Turtle, written next, parses this file


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


def write_atomic(path: Path, data: bytes) -> None:
    write_all_atomic([(path, lambda out: out.write(data))])


Writer = Callable[[BinaryIO], object]


def write_all_atomic(files: Sequence[tuple[Path, Writer]]) -> None:
    """Stream every file to a temporary name beside it, then rename them all into place.

    Until the renames, an error, Ctrl-C, SIGTERM or SIGKILL leaves every old file as it was
    (the temporary files are removed, except after SIGKILL: hidden `.NAME.*.tmp` files that
    nothing reads). SIGINT and SIGTERM are held while a temporary file is created and noted,
    and during the renames, so they never leave a stray file or a mix of old and new files;
    SIGKILL may leave a mix, but each file is whole.
    """
    temps: list[tuple[str, Path]] = []
    try:
        for path, write in files:
            checkpoint()
            path.parent.mkdir(parents=True, exist_ok=True)
            with signals_held():
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                temps.append((tmp, path))
            os.close(fd)
            _fill(tmp, write)
        checkpoint()
        with signals_held():
            for tmp, path in temps:
                os.replace(tmp, path)
    except BaseException:
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)
        raise


def _fill(tmp: str, write: Writer) -> None:
    """Write and flush to disk, with the permissions a plain `open` would give. The handle
    is opened by name, so a writer can tell a later one where its file is."""
    umask = os.umask(0)
    os.umask(umask)
    with open(tmp, "wb") as handle:
        os.fchmod(handle.fileno(), 0o666 & ~umask)
        write(handle)
        handle.flush()
        os.fsync(handle.fileno())


def export_all(
    inputs: ExportInput, out_dir: Path, exporters: Sequence[Exporter] = EXPORTERS
) -> list[Path]:
    """Write every output together: a failure leaves all the old ones."""
    out_dir.mkdir(parents=True, exist_ok=True)
    inputs.scratch = out_dir
    first = sorted(exporters, key=lambda e: e.write is not _ntriples)  # Turtle reads it
    try:
        write_all_atomic([(out_dir / e.filename, _bound(e, inputs)) for e in first])
    finally:
        inputs.discard_scratch()
    return [out_dir / e.filename for e in exporters]


def _bound(exporter: Exporter, inputs: ExportInput) -> Writer:
    return lambda out: exporter.write(inputs, out)
