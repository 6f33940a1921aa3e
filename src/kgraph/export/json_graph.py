"""Node-link JSON for pipelines: what `networkx.node_link_graph(data, edges="edges")` reads."""

from __future__ import annotations

import json
import json.encoder
from pathlib import Path
from typing import NoReturn

from kgraph import jsonfile
from kgraph.export.jsonenc import encoder
from kgraph.export.rdf import Subjects
from kgraph.export.reuse import BlockFile
from kgraph.graph import Date, GraphView, KnowledgeGraph, Node, Text, Value


def _plain(value: Value) -> object:
    if isinstance(value, Text):
        return {"text": value.text, "lang": value.lang}
    if isinstance(value, Date):
        return value.iso
    return value


def write_json(graph: GraphView, subjects: Subjects, out: BlockFile) -> None:
    """One node or edge a line: diffable, streamed, and written by json's C encoder (an
    indented dump falls back to the pure-Python encoder, several times slower).

    Nodes, then edges, each in the subjects' shared order, so each subject has a block in
    both sections (empty where it has no node or no edge), which the next build may copy."""
    out_edges = subjects.out_edges
    edge_count = graph.edge_count()
    header = {
        "base": subjects.base,
        "counts": dict(sorted(graph.counts().items())),
        "edgeCount": edge_count,
    }
    out.write('{"directed": true, "multigraph": true, "graph": ' + _dump(header) + ',\n"nodes": [')
    out.section("nodes")
    ids = subjects.ids
    for index in out.fresh(len(ids)):
        if (node := graph.nodes.get(ids[index])) is None:
            continue
        out.write(("\n" if out.at_start else ",\n") + _dump(_record(node, subjects.base)))
    out.end_section()
    out.write('\n],\n"edges": [')
    out.section("edges")
    # Edges are four strings each and there are millions: formatted from strings encoded
    # once per id, the same bytes `json.dumps` gives, in a fraction of its time.
    quoted: dict[str, str] = {}
    for index in out.fresh(len(ids)):
        source = ids[index]
        if not (edges := out_edges.get(source)):
            continue
        s = _quote(source)
        lines = []
        separator = "\n" if out.at_start else ",\n"
        for e in edges:
            t = quoted.get(e.target) or quoted.setdefault(e.target, _quote(e.target))
            r = quoted.get(e.relation) or quoted.setdefault(e.relation, _quote(e.relation))
            lines.append(
                f'{separator}{{"source": {s}, "target": {t}, "key": {r}, "relation": {r}}}'
            )
            separator = ",\n"
        out.write("".join(lines))
    out.end_section()
    out.write("\n]}\n")


def _record(node: Node, base: str) -> dict[str, object]:
    record: dict[str, object] = {
        "id": node.id,
        "iri": base + node.id,
        "kind": node.kind,
        "label": node.label,
    }
    grouped: dict[str, list[object]] = {}
    for name, value in node.attrs:
        grouped.setdefault(name, []).append(_plain(value))
    for name, values in grouped.items():
        record.setdefault(name, values[0] if len(values) == 1 else values)
    return record


_dump = encoder()
_quote = json.encoder.encode_basestring  # a str's JSON, as `_dump` writes it


def read_document(path: Path) -> dict:
    """A graph.json's document, checked for the shape every reader relies on (`nodes` with
    a string `id`, `kind` and `label`, `edges` with a string `source`, `relation` and
    `target`): a node that is a number, or an `id` that is a list, fails here with one line,
    not later with a traceback. Raises `JsonFileError`."""
    document, _ = jsonfile.load(path)
    return checked(document, str(path))


def checked(document: object, source: str) -> dict:
    """`document` when it has graph.json's shape, else a `JsonFileError` saying what lacks."""

    def fail(reason: str) -> NoReturn:
        raise jsonfile.JsonFileError(source, 1, f"not a kgraph graph.json: {reason}")

    if not isinstance(document, dict):
        fail("not a JSON object")
    nodes, edges = document.get("nodes"), document.get("edges")
    if not isinstance(nodes, list) or not isinstance(edges, list):
        fail('no "nodes" and "edges" lists')
    for what, records, keys in (
        ("node", nodes, ("id", "kind", "label")),
        ("edge", edges, ("source", "relation", "target")),
    ):
        for number, record in enumerate(records, 1):
            if not isinstance(record, dict) or not all(
                isinstance(record.get(k), str) for k in keys
            ):
                fail(f"{what} {number} lacks a string " + ", ".join(f'"{k}"' for k in keys))
    return document


def from_json(text: str) -> KnowledgeGraph:
    """The graph back from `write_json`'s output, for commands that re-render a built graph.

    `date` attributes come back as `Date` and language-tagged strings as `Text`.
    """
    return from_document(checked(jsonfile.parse(text, "graph.json"), "graph.json"))


def from_document(document: dict) -> KnowledgeGraph:
    """The graph of a `checked` graph.json document."""
    graph = KnowledgeGraph()
    for record in document["nodes"]:
        attrs: list[tuple[str, Value]] = []
        for name, value in record.items():
            if name in ("id", "iri", "kind", "label"):
                continue
            for item in value if isinstance(value, list) else [value]:
                attrs.append((name, _value(name, item)))
        graph.add(Node(record["id"], record["kind"], record["label"], tuple(attrs)))
    for edge in document["edges"]:
        graph.link(edge["source"], edge["relation"], edge["target"])
    return graph


def _value(name: str, item: object) -> Value:
    if isinstance(item, dict):
        text, lang = item.get("text"), item.get("lang")
        if not isinstance(text, str) or not isinstance(lang, str):
            raise ValueError(f"attribute {name!r} has a value of unexpected type: {item!r}")
        return Text(text, lang)
    if name == "date" and isinstance(item, str):
        return Date(item)
    if not isinstance(item, str | int | bool | float):  # a float: a kg:confidence
        raise ValueError(f"attribute {name!r} has a value of unexpected type: {item!r}")
    return item
