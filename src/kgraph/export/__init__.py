"""Exporters: one per output file, one registry, and atomic writes.

Every exporter is a function from an `ExportInput` to bytes; the RDF ones share the sorted
triple list, computed once. Files are written to a temporary name and renamed, so a build
killed at any moment leaves the previous output intact.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from kgraph.export import html, json_graph, rdf
from kgraph.graph import KnowledgeGraph
from kgraph.interrupt import checkpoint, signals_held


@dataclass
class ExportInput:
    graph: KnowledgeGraph
    base: str
    options: dict[str, object] = field(default_factory=dict)

    @cached_property
    def triples(self) -> list[rdf.Triple]:
        return rdf.triples(self.graph, self.base)

    @cached_property
    def ntriples(self) -> str:
        return rdf.to_ntriples(self.triples)


@dataclass(frozen=True, slots=True)
class Exporter:
    name: str
    filename: str
    description: str
    render: Callable[[ExportInput], bytes]


EXPORTERS: tuple[Exporter, ...] = (
    Exporter("turtle", "graph.ttl", "RDF Turtle", lambda x: rdf.to_turtle(x.ntriples, x.triples)),
    Exporter("ntriples", "graph.nt", "RDF N-Triples", lambda x: x.ntriples.encode("utf-8")),
    Exporter(
        "jsonld",
        "graph.jsonld",
        "JSON-LD with a @context",
        lambda x: rdf.to_jsonld(x.triples, x.base).encode("utf-8"),
    ),
    Exporter(
        "json",
        "graph.json",
        "node-link JSON for pipelines (networkx)",
        lambda x: json_graph.to_json(x.graph, x.base).encode("utf-8"),
    ),
    Exporter(
        "html",
        "graph.html",
        "interactive, offline HTML graph",
        lambda x: html.to_html(x.graph, html.options_from(x.options)).encode("utf-8"),
    ),
)


def exporter_named(name: str) -> Exporter:
    for exporter in EXPORTERS:
        if exporter.name == name:
            return exporter
    raise KeyError(name)


def write_atomic(path: Path, data: bytes) -> None:
    write_all_atomic([(path, data)])


def write_all_atomic(files: Sequence[tuple[Path, bytes]]) -> None:
    """Write every file to a temporary name beside it, then rename them all into place.

    Until the renames, an error, Ctrl-C, SIGTERM or SIGKILL leaves every old file as it was
    (the temporary files are removed, except after SIGKILL: hidden `.NAME.*.tmp` files that
    nothing reads). SIGINT and SIGTERM are held while a temporary file is created and noted,
    and during the renames, so they never leave a stray file or a mix of old and new files;
    SIGKILL may leave a mix, but each file is whole.
    """
    temps: list[tuple[str, Path]] = []
    try:
        for path, data in files:
            checkpoint()
            path.parent.mkdir(parents=True, exist_ok=True)
            with signals_held():
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                temps.append((tmp, path))
            _fill(fd, data)
        checkpoint()
        with signals_held():
            for tmp, path in temps:
                os.replace(tmp, path)
    except BaseException:
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)
        raise


def _fill(fd: int, data: bytes) -> None:
    """Write and flush to disk, with the permissions a plain `open` would give."""
    umask = os.umask(0)
    os.umask(umask)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), 0o666 & ~umask)
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def export_all(
    inputs: ExportInput, out_dir: Path, exporters: Sequence[Exporter] = EXPORTERS
) -> list[Path]:
    """Render every output first, then write them together: a failure leaves the old ones."""
    rendered = [(out_dir / e.filename, e.render(inputs)) for e in exporters]
    write_all_atomic(rendered)
    return [path for path, _ in rendered]
