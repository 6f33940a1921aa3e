"""The knowledge graph as plain values: typed nodes with attributes, and labelled edges.

Node kinds and edge relations are the local names of the `kg:` vocabulary's classes and
properties (`PullRequest`, `touchesFile`), so every exporter maps them the same way and a
new kind needs no exporter change. Node ids are readable paths ("pr/vllm-project/vllm/50620")
that exporters turn into IRIs under a configurable base.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol
from urllib.parse import quote

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True, slots=True, order=True)
class Text:
    """A string in a natural language (`skos:prefLabel "懒失效"@zh`)."""

    text: str
    lang: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True, order=True)
class Date:
    """An ISO `YYYY-MM-DD` date, exported as `xsd:date`."""

    iso: str

    def __str__(self) -> str:
        return self.iso


Value = str | int | bool | float | Text | Date  # a float is a score in [0, 1]: kg:confidence


class Node(NamedTuple):
    """A node; a named tuple rather than a dataclass, like `Edge`, because a large graph has
    millions of them and tuples hash, compare and sort in C (three to five times faster)."""

    id: str
    kind: str  # a kg: class local name
    label: str
    attrs: tuple[tuple[str, Value], ...] = ()  # repeated keys are multi-valued properties

    def get(self, name: str) -> Value | None:
        for key, value in self.attrs:  # a loop, not `next` over a generator: half the time
            if key == name:
                return value
        return None

    def values(self, name: str) -> list[Value]:
        return [v for k, v in self.attrs if k == name]


class Edge(NamedTuple):
    source: str
    relation: str  # a kg: property local name
    target: str


class GraphView(Protocol):
    """What the exporters read of a graph: a `KnowledgeGraph`, or a build's graph read a
    subject at a time from the last build's store (`kgraph.linkstore.StoredGraph`)."""

    @property
    def nodes(self) -> Mapping[str, Node]: ...

    def out_edges(self) -> Mapping[str, Sequence[Edge]]: ...

    def edge_groups(self) -> Iterable[Sequence[Edge]]: ...

    def counts(self) -> dict[str, int]: ...

    def edge_count(self) -> int: ...

    def whole(self) -> KnowledgeGraph:
        """The graph with every node and edge in memory."""
        ...


@dataclass(slots=True, eq=False)
class KnowledgeGraph:
    """Nodes by id, and edges by source; iteration is always in sorted order.

    Each source's edges are kept flat, in the order they were linked: relation, target,
    relation, target… (the source is the group's), a repeat included until the edges are
    next read, when each group is made unique and sorted. An `Edge` tuple per edge took 72
    bytes (the tuple and its slot), a flat pair takes 16: at 100k entries, 2.9 million
    edges, 160 MB of a 1.6 GB peak. Readers get `Edge` tuples, made as each source's edges
    are read (`out_edges`) and dropped with them. A set of every edge took 134 MB for its
    table alone at 100k entries, and grouping it by source for the writers visited 4
    million edges in hash order, a cache miss each (7 s).
    """

    nodes: dict[str, Node] = field(default_factory=dict)
    _out: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)
    _settled: bool = field(default=True, init=False, repr=False)  # no repeat, groups sorted

    def add(self, node: Node) -> str:
        """Add a node, merging attributes with an existing node of the same id.

        The merge does not depend on the order nodes come in (`merged`): a build that
        links only what changed (`kgraph.delta`) meets them in another order."""
        old = self.nodes.get(node.id)
        if old is not None and old != node:
            node = merged(old, node)
        self.nodes[node.id] = node
        return node.id

    def link(self, source: str, relation: str, target: str) -> None:
        """Ids are not interned: the linker passes each entity's id string as made once
        (`link._add_pull_request`), and interning a million mention ids cost time (1 s of
        20 at 100k entries) and saved no memory."""
        if (out := self._out.get(source)) is None:
            self._out[source] = [relation, target]
        else:
            out.append(relation)
            out.append(target)
            self._settled = False

    def __eq__(self, other: object) -> bool:
        """The same nodes and edges, whatever the order they were added in."""
        if not isinstance(other, KnowledgeGraph):
            return NotImplemented
        return self.nodes == other.nodes and self._settle() == other._settle()

    @property
    def edges(self) -> frozenset[Edge]:
        """Every edge, as a set made when asked: `edge_groups` or `out_edges` read a large
        graph's without making one."""
        return frozenset(edge for edges in self.out_edges().values() for edge in edges)

    def edge_count(self) -> int:
        return sum(map(len, self._settle().values())) // 2

    def sorted_nodes(self) -> list[Node]:
        return [self.nodes[k] for k in sorted(self.nodes)]

    def sorted_edges(self) -> list[Edge]:
        out = self._settle()
        return [edge for source in sorted(out) for edge in _edges(source, out[source])]

    def edge_groups(self) -> Iterable[Sequence[Edge]]:
        """Every edge, grouped by source, in no particular order, an edge linked twice maybe
        twice: the cheapest way through all of them, for a pass that collects sets."""
        return (_edges(source, flat) for source, flat in self._out.items())

    def out_edges(self) -> Mapping[str, list[Edge]]:
        """Each source's edges, without repeats, sorted by relation and target; read-only,
        and made anew at each look-up (keep what you read more than once)."""
        return EdgeLists(self._settle())

    def _settle(self) -> dict[str, list[str]]:
        if not self._settled:
            for flat in self._out.values():
                if len(flat) > 2:
                    pairs = set(zip(flat[0::2], flat[1::2], strict=True))
                    flat[:] = [part for pair in sorted(pairs) for part in pair]
            self._settled = True
        return self._out

    def whole(self) -> KnowledgeGraph:
        return self

    def of_kind(self, kind: str) -> Iterator[Node]:
        return (n for n in self.sorted_nodes() if n.kind == kind)

    def out(self, source: str, relation: str) -> list[str]:
        flat = self._settle().get(source, ())
        return [flat[i + 1] for i in range(0, len(flat), 2) if flat[i] == relation]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node in self.nodes.values():
            counts[node.kind] = counts.get(node.kind, 0) + 1
        return counts

    def to_networkx(self) -> nx.MultiDiGraph:
        """A networkx view for layout and analysis; attributes are flattened to lists.

        networkx is imported here: a build never needs it, and it costs 0.1 s to load."""
        import networkx as nx

        graph = nx.MultiDiGraph()
        for node in self.sorted_nodes():
            graph.add_node(node.id, kind=node.kind, label=node.label, **_grouped(node.attrs))
        for edge in self.sorted_edges():
            graph.add_edge(edge.source, edge.target, key=edge.relation, relation=edge.relation)
        return graph


_new_tuple = tuple.__new__


def _edges(source: str, flat: Sequence[str]) -> list[Edge]:
    """A source's flat relation, target… list as `Edge` tuples. The tuple is made directly,
    as `Edge(...)` goes through a Python-level `__new__`."""
    return [_new_tuple(Edge, (source, flat[i], flat[i + 1])) for i in range(0, len(flat), 2)]


class EdgeLists(Mapping[str, list[Edge]]):
    """Each source's edges as `Edge` tuples, made from the graph's flat lists when read."""

    __slots__ = ("_flat",)

    def __init__(self, flat: dict[str, list[str]]) -> None:
        self._flat = flat

    def __getitem__(self, source: str) -> list[Edge]:
        return _edges(source, self._flat[source])

    def get(self, source: str, default: Any = None) -> Any:
        flat = self._flat.get(source)
        return default if flat is None else _edges(source, flat)

    def __contains__(self, source: object) -> bool:
        return source in self._flat

    def __iter__(self) -> Iterator[str]:
        return iter(self._flat)

    def __len__(self) -> int:
        return len(self._flat)

    def items(self) -> Iterator[tuple[str, list[Edge]]]:  # type: ignore[override]
        return ((source, _edges(source, flat)) for source, flat in self._flat.items())

    def values(self) -> Iterator[list[Edge]]:  # type: ignore[override]
        return (_edges(source, flat) for source, flat in self._flat.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EdgeLists):
            return self._flat == other._flat
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]


class RememberedEdges(Mapping[str, Sequence[Edge]]):
    """A view of edges that keeps each source's list once read: for a reader that looks at
    the same few thousand sources several times (the page), where `EdgeLists` would make
    their tuples anew at each look."""

    __slots__ = ("_edges", "_seen")

    def __init__(self, edges: Mapping[str, Sequence[Edge]]) -> None:
        self._edges = edges
        self._seen: dict[str, Sequence[Edge]] = {}

    def __getitem__(self, source: str) -> Sequence[Edge]:
        found = self._seen.get(source)
        if found is None:
            found = self._seen[source] = self._edges[source]
        return found

    def get(self, source: str, default: Any = None) -> Any:
        found = self._seen.get(source)
        if found is None:
            if source not in self._edges:
                return default
            found = self._seen[source] = self._edges[source]
        return found

    def __contains__(self, source: object) -> bool:
        return source in self._edges

    def __iter__(self) -> Iterator[str]:
        return iter(self._edges)

    def __len__(self) -> int:
        return len(self._edges)


def merged(a: Node, b: Node) -> Node:
    """Two different nodes of one id as one: the smaller kind and label, and every
    attribute of both, sorted. Commutative and associative, so that a node made from many
    parts is the same whatever order they come in: the only part when all are equal, else
    the smallest label and the sorted union of every part's attributes."""
    attrs = tuple(sorted(set(a.attrs) | set(b.attrs), key=_attr_key))
    return Node(a.id, min(a.kind, b.kind), min(a.label, b.label), attrs)


def _attr_key(item: tuple[str, Value]) -> tuple[str, str, str, str]:
    """A total order: two texts of one string in two languages differ by the language (a
    tie would leave them in the order of a set, which changes from run to run)."""
    value = item[1]
    return item[0], type(value).__name__, str(value), value.lang if isinstance(value, Text) else ""


def _grouped(attrs: Iterable[tuple[str, Value]]) -> dict[str, list[Value]]:
    grouped: dict[str, list[Value]] = {}
    for key, value in attrs:
        grouped.setdefault(key, []).append(value)
    return grouped


def encode_subject(node_id: str, node: Node | None, edges: Sequence[Edge] | None) -> bytes:
    """A subject, its node and its edges, as bytes that `decode_subject` reads back: marshal,
    format 2, which keeps strings apart and types distinct and, unlike its later formats
    and pickle, depends on values only, not on which strings are the same object (which
    differs between a clean build and one that linked only what changed). Equal subjects
    give equal bytes, so they also serve as what a subject's fingerprint hashes."""
    flat = None if edges is None else [part for edge in edges for part in edge[1:]]
    subject: Any = (node_id, None if node is None else tuple(node), flat)
    try:
        return marshal.dumps(subject, 2)
    except ValueError:  # a Text or a Date (a few nodes in a hundred): tagged tuples
        assert node is not None
        attrs = tuple((name, tagged(value)) for name, value in node.attrs)
        subject = (node_id, (node.id, node.kind, node.label, attrs), flat)
        return marshal.dumps(subject, 2)


def decode_subject(data: bytes) -> tuple[str, Node | None, list[Edge] | None]:
    node_id, raw, flat = marshal.loads(data)
    node = None
    if raw is not None:
        node_attrs = raw[3]
        if any(type(value) is tuple for _, value in node_attrs):
            node_attrs = tuple((name, untagged(value)) for name, value in node_attrs)
        node = Node(raw[0], raw[1], raw[2], node_attrs)
    edges = None
    if flat is not None:
        edges = [_new_tuple(Edge, (node_id, flat[i], flat[i + 1])) for i in range(0, len(flat), 2)]
    return node_id, node, edges


def tagged(value: Value) -> object:
    """A value as marshal writes it: a text or a date as a tagged tuple."""
    if isinstance(value, Text):
        return ("t", value.lang, value.text)
    if isinstance(value, Date):
        return ("d", value.iso)
    return value


def untagged(value: object) -> Value:
    if type(value) is tuple:
        return Text(value[2], value[1]) if value[0] == "t" else Date(value[1])
    return value  # type: ignore[return-value]


_PLAIN = re.compile(r"[A-Za-z0-9_.~/-]+")
_EMPTY_OR_DOTS = re.compile(r"(?:^|/)\.{0,2}(?:/|$)")  # a segment "", "." or ".."


def node_id(*segments: str) -> str:
    """A node id from raw segments, each percent-encoded so the id is always a valid IRI path.

    Slashes inside a segment are kept only where the caller passes them as separate
    segments; "." and ".." are encoded so that no IRI resolver collapses them, and a lone
    surrogate (from a file name or JSON escape) is encoded byte for byte instead of raising.
    """
    joined = "/".join(segments)
    if (
        _PLAIN.fullmatch(joined)
        and joined.count("/") == len(segments) - 1
        and not _EMPTY_OR_DOTS.search(joined)
    ):
        return joined  # nothing to encode: most ids, at a tenth of the cost
    encoded = []
    for segment in segments:
        piece = quote(segment, safe="-_~.", errors="surrogatepass")
        if piece in {"", ".", ".."}:
            piece = piece.replace(".", "%2E") or "%20"
        encoded.append(piece)
    return "/".join(encoded)
