"""Node-link JSON for pipelines: what `networkx.node_link_graph(data, edges="edges")` reads."""

from __future__ import annotations

import json

from kgraph.graph import Date, KnowledgeGraph, Node, Text, Value


def _plain(value: Value) -> object:
    if isinstance(value, Text):
        return {"text": value.text, "lang": value.lang}
    if isinstance(value, Date):
        return value.iso
    return value


def to_json(graph: KnowledgeGraph, base: str) -> str:
    """One node or edge a line: diffable, and written by json's C encoder (an indented dump
    falls back to the pure-Python encoder, several times slower on large graphs)."""
    nodes = []
    for node in graph.sorted_nodes():
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
        nodes.append(_dump(record))
    edges = [
        _dump({"source": e.source, "target": e.target, "key": e.relation, "relation": e.relation})
        for e in graph.sorted_edges()
    ]
    header = {"base": base, "counts": dict(sorted(graph.counts().items())), "edgeCount": len(edges)}
    return (
        '{"directed": true, "multigraph": true, "graph": '
        + _dump(header)
        + ',\n"nodes": [\n'
        + ",\n".join(nodes)
        + '\n],\n"edges": [\n'
        + ",\n".join(edges)
        + "\n]}\n"
    )


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def from_json(text: str) -> KnowledgeGraph:
    """The graph back from `to_json`'s output, for commands that re-render a built graph.

    `date` attributes come back as `Date` and language-tagged strings as `Text`.
    """
    document = json.loads(text)
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
        return Text(item["text"], item["lang"])
    if name == "date" and isinstance(item, str):
        return Date(item)
    if not isinstance(item, str | int | bool):
        raise ValueError(f"attribute {name!r} has a value of unexpected type: {item!r}")
    return item
