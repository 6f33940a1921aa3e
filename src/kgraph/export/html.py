"""The interactive HTML graph: one self-contained file, no network, text never parsed as HTML.

pyvis gives us vis-network and its node/edge model; we use our own small template instead
of pyvis's (which loads Bootstrap from a CDN) and lay the graph out in Python, so that the
page draws at once with physics off instead of simulating for minutes on large graphs.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path

import networkx as nx
import pyvis
from pyvis.network import Network

from kgraph.graph import KnowledgeGraph, Node

STYLE = {  # kind: (colour, shape)
    "PullRequest": ("#2563eb", "dot"),
    "SourceFile": ("#16a34a", "square"),
    "CodeSymbol": ("#ea580c", "diamond"),
    "Issue": ("#9333ea", "triangle"),
    "Repository": ("#0f172a", "star"),
    "DesignPattern": ("#db2777", "hexagon"),
    "DesignDecision": ("#ca8a04", "triangleDown"),
    "Topic": ("#0891b2", "ellipse"),
    "Person": ("#64748b", "box"),
}
SHOWN_RELATIONS = frozenset(
    {
        "touchesFile",
        "mentionsSymbol",
        "references",
        "inRepository",
        "appliesPattern",
        "hasTopic",
        "madeDecision",
        "involves",
        "definedIn",
        "memberOf",
    }
)


def _vis_library() -> tuple[str, str]:
    lib = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"
    return (
        (lib / "vis-network.min.js").read_text("utf-8"),
        (lib / "vis-network.css").read_text("utf-8"),
    )


def _layout(graph: nx.Graph) -> dict[str, tuple[float, float]]:
    """Deterministic positions: a seeded spring layout, bounded in iterations."""
    if graph.number_of_nodes() == 0:
        return {}
    iterations = 50 if graph.number_of_nodes() <= 2000 else 15
    scale = 120 * math.sqrt(graph.number_of_nodes())
    positions = nx.spring_layout(graph, seed=7, iterations=iterations, scale=scale)
    return {n: (round(float(x), 1), round(float(y), 1)) for n, (x, y) in positions.items()}


def _details(
    node: Node, graph: KnowledgeGraph, neighbours: dict[str, list[tuple[str, str]]]
) -> dict[str, object]:
    attrs: dict[str, list[str]] = {}
    for name, value in node.attrs:
        attrs.setdefault(name, []).append(str(value))
    links = [
        [relation, graph.nodes[other].kind, graph.nodes[other].label]
        for relation, other in neighbours.get(node.id, [])
    ]
    return {"kind": node.kind, "label": node.label, "attrs": attrs, "links": links}


def to_html(graph: KnowledgeGraph, title: str = "kgraph") -> str:
    shown = {n.id: n for n in graph.sorted_nodes() if n.kind in STYLE}
    edges = [
        e
        for e in graph.sorted_edges()
        if e.relation in SHOWN_RELATIONS and e.source in shown and e.target in shown
    ]
    neighbours: dict[str, list[tuple[str, str]]] = {}
    for e in graph.sorted_edges():
        if e.source in shown and e.target in shown:
            neighbours.setdefault(e.source, []).append((e.relation, e.target))
            neighbours.setdefault(e.target, []).append((e.relation + " (from)", e.source))
    layout_graph = nx.Graph()
    layout_graph.add_nodes_from(shown)
    layout_graph.add_edges_from((e.source, e.target) for e in edges)
    positions = _layout(layout_graph)

    net = Network(directed=True)
    for node in shown.values():
        colour, shape = STYLE[node.kind]
        x, y = positions[node.id]
        count = node.get("prCount")
        size = 10 + 4 * math.sqrt(count if isinstance(count, int) else 0)
        net.add_node(
            node.id,
            label=node.label[:40],
            color=colour,
            shape=shape,
            x=x,
            y=y,
            size=size,
            kind=node.kind,
        )
    for e in edges:
        net.add_edge(e.source, e.target, title=e.relation, arrows="to")
    data = {
        "nodes": net.nodes,
        "edges": net.edges,
        "details": {nid: _details(n, graph, neighbours) for nid, n in shown.items()},
        "legend": [[kind, colour, shape] for kind, (colour, shape) in STYLE.items()],
    }
    script, css = _vis_library()
    template = resources.files("kgraph.export").joinpath("templates/graph.html").read_text("utf-8")
    payload = json.dumps(data, ensure_ascii=False, sort_keys=True)
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (
        template.replace("/*VIS_CSS*/", css)
        .replace("/*VIS_JS*/", script.replace("</script", "<\\/script"))
        .replace("/*KG_DATA*/", payload)
        .replace("<!--TITLE-->", _escape_html(title))
    )


def _escape_html(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )
