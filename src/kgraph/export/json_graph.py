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
    nodes = []
    for node in graph.sorted_nodes():
        record: dict[str, object] = {
            "id": node.id,
            "iri": base + node.id,
            "kind": node.kind,
            "label": node.label,
        }
        for name, _ in node.attrs:
            if name in record:
                continue
            values = [_plain(v) for v in node.values(name)]
            record[name] = values[0] if len(values) == 1 else values
        nodes.append(record)
    edges = [
        {"source": e.source, "target": e.target, "key": e.relation, "relation": e.relation}
        for e in graph.sorted_edges()
    ]
    counts = dict(sorted(graph.counts().items()))
    document = {
        "directed": True,
        "multigraph": True,
        "graph": {"base": base, "counts": counts, "edgeCount": len(edges)},
        "nodes": nodes,
        "edges": edges,
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


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
