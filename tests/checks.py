"""Checks every hostile-input test makes of a build: parse every export independently,
read the `--report`, and prove that no entry disappeared."""

from __future__ import annotations

import html.parser
import json
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import rdflib
from pyshacl import validate

from conftest import SCHEMAS, build
from kgraph.catalog import builtin_knowledge
from kgraph.extract.patterns import confidence_of, extract_patterns
from kgraph.model import Entry

RDF_EXPORTS = {
    "graph.ttl": ox.RdfFormat.TURTLE,
    "graph.nt": ox.RdfFormat.N_TRIPLES,
    "graph.jsonld": ox.RdfFormat.JSON_LD,
}


def build_reported(inputs: list[str], out: Path, *extra: str) -> tuple[int, str, dict, dict]:
    """`kgraph build … --report`; returns (exit code, stderr, report, graph.json)."""
    report_path = out.parent / f"{out.name}-report.json"
    code, _, stderr = build(inputs, out, "--report", str(report_path), *extra)
    report = json.loads(report_path.read_text("utf-8"))
    graph_path = out / "graph.json"
    graph = json.loads(graph_path.read_text("utf-8")) if graph_path.exists() else {}
    return code, stderr, report, graph


def assert_nothing_lost(report: dict, graph: dict) -> None:
    """entries read == entries in the graph + entries reported as skipped."""
    summary = report["summary"]
    entries = [n for n in graph.get("nodes", []) if n["kind"] == "Entry"]
    assert summary["entriesInGraph"] == len(entries)
    assert summary["entriesRead"] == summary["entriesInGraph"] + summary["entriesSkipped"]
    assert summary["entriesSkipped"] == sum(p["skippedEntries"] for p in report["problems"])


def parse_exports(out: Path) -> int:
    """Parse the Turtle, N-Triples and JSON-LD with pyoxigraph (Rust, independent of the
    writer's code); they must hold the same number of triples, which is returned. Every IRI
    is re-parsed on its own, so an unescaped character anywhere fails here."""
    counts = {}
    for name, fmt in RDF_EXPORTS.items():
        triples = list(ox.parse(path=str(out / name), format=fmt))
        for triple in triples:
            for term in (triple.subject, triple.predicate, triple.object):
                if isinstance(term, ox.NamedNode):
                    ox.NamedNode(term.value)
        counts[name] = len(triples)
    assert len(set(counts.values())) == 1, counts
    json.loads((out / "graph.json").read_text("utf-8"))
    return counts["graph.ttl"]


class _JsonScripts(html.parser.HTMLParser):
    """The `<script type="application/json">` blocks of a page, as an HTML parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[str] = []
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._inside = tag == "script" and ("type", "application/json") in attrs
        if self._inside:
            self.blocks.append("")

    def handle_endtag(self, tag: str) -> None:
        self._inside = False

    def handle_data(self, data: str) -> None:
        if self._inside:
            self.blocks[-1] += data


def html_data(page: str) -> list[object]:
    """The page's embedded JSON data, parsed: what the page shows must come from here."""
    parser = _JsonScripts()
    parser.feed(page)
    assert parser.blocks, "the page embeds no JSON data"
    return [json.loads(block) for block in parser.blocks]


def strings_in(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def assert_conforms(out: Path) -> None:
    """The build's Turtle conforms to the project's SHACL shapes (pyshacl)."""
    data = rdflib.Graph().parse(out / "graph.ttl")
    shapes = rdflib.Graph().parse(SCHEMAS / "shapes.ttl")
    ok, _, text = validate(data, shacl_graph=shapes, inference="none")
    assert ok, text


def patterns_in(summary: str) -> dict[str, float]:
    """The patterns the built-in catalog finds in one summary, with their confidence."""
    mentions = extract_patterns(Entry("d", 1, "", summary), builtin_knowledge())
    return {m.key: confidence_of(m) for m in mentions}
