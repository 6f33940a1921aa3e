"""Change coupling in the graph: one `kg:Coupling` node per kept pair of files, and, when
asked for, per kept pair of functions.

The history (`kgraph.history.coupling`) knows files by path; here they become the same
`kg:SourceFile` nodes the reviews' mentions resolve to (`file/OWNER/REPO/PATH`), so a
query can walk from a PR to the files it touched and on to their partners. A file that
exists at the source's commit is linked to it as a resolved mention would be; one that the
history only remembers (deleted since) is a plain path. A function
(`kgraph.history.functions`) is the `kg:CodeSymbol` of its definition at the source's
commit when its file defines exactly one of that name, and otherwise a symbol named by its
file and name.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from kgraph.graph import KnowledgeGraph, Node, Value, node_id
from kgraph.history import shown_path
from kgraph.history.coupling import Coupling, CouplingResult
from kgraph.history.functions import split_unit
from kgraph.resolve import Resolver, Scope, definition_node, history_file_node
from kgraph.source.definitions import DefKind
from kgraph.source.index import SourceIndex


def add_coupling(graph: KnowledgeGraph, index: SourceIndex, result: CouplingResult) -> None:
    """A `kg:Coupling` per pair, with `kg:couplesFile` to both files, and `kg:revisions`
    on each file: its changes in the window (those code-maat counts)."""
    scope = _scope(graph, index)
    files: dict[str, str] = {}

    def file(name: str) -> str:
        if (found := files.get(name)) is not None:
            return found
        path = shown_path(name)
        fid = history_file_node(graph, scope, path)
        revisions = result.revisions.get(name, 0)
        graph.add(Node(fid, "SourceFile", path, (("path", path), ("revisions", revisions))))
        files[name] = fid
        return fid

    for pair in result.pairs:
        cid = _pair_node(graph, scope, pair, pair.entity, pair.coupled)
        graph.link(cid, "couplesFile", file(pair.entity))
        graph.link(cid, "couplesFile", file(pair.coupled))


CALLABLE_KINDS = frozenset({DefKind.CLASS, DefKind.FUNCTION, DefKind.METHOD})


def add_function_coupling(
    graph: KnowledgeGraph, index: SourceIndex, result: CouplingResult
) -> None:
    """A `kg:Coupling` per pair of functions, with `kg:couplesSymbol` to both, and
    `kg:revisions` on each function: the changes in the window that touched it."""
    scope = _scope(graph, index)
    symbols: dict[str, str] = {}

    def symbol(unit: str) -> str:
        if (found := symbols.get(unit)) is not None:
            return found
        name, qualname = split_unit(unit)
        path = shown_path(name)
        last = qualname.rsplit("::", 1)[-1].rsplit(".", 1)[-1]
        defined = [
            d for d in index.definitions(last) if d.path == path and d.kind in CALLABLE_KINDS
        ]
        if len(defined) == 1:
            sid = definition_node(graph, scope, defined[0])
        else:  # gone since, or one name of several definitions in the file
            sid = graph.add(
                Node(
                    node_id("symbol", *scope.segments, *path.split("/"), qualname),
                    "CodeSymbol",
                    qualname,
                    (("name", last), ("qualifiedName", qualname), ("isExternal", False)),
                )
            )
            graph.link(sid, "inRepository", scope.repo_id)
            graph.link(sid, "definedIn", history_file_node(graph, scope, path))
        node = graph.nodes[sid]
        graph.add(Node(sid, node.kind, node.label, (("revisions", result.revisions[unit]),)))
        symbols[unit] = sid
        return sid

    for pair in result.pairs:
        (path_a, name_a), (path_b, name_b) = split_unit(pair.entity), split_unit(pair.coupled)
        cid = _pair_node(graph, scope, pair, f"{path_a}#{name_a}", f"{path_b}#{name_b}")
        graph.link(cid, "couplesSymbol", symbol(pair.entity))
        graph.link(cid, "couplesSymbol", symbol(pair.coupled))


def _scope(graph: KnowledgeGraph, index: SourceIndex) -> Scope:
    """The source's repository node and resolver, as the pairs' files and symbols need."""
    segments = tuple(index.repo.split("/"))
    repo_id = graph.add(Node(node_id("repo", *segments), "Repository", index.repo))
    return Scope(segments, repo_id, Resolver(index))


def _pair_node(
    graph: KnowledgeGraph,
    scope: Scope,
    pair: Coupling,
    entity: str,
    coupled: str,
) -> str:
    """The `kg:Coupling` node of `pair`, named by its two sides' names as shown."""
    key = f"{entity}\0{coupled}".encode("utf-8", "surrogatepass")
    attrs: list[tuple[str, Value]] = [
        ("degree", pair.degree),
        ("sharedRevisions", pair.shared_revisions),
        ("averageRevisions", pair.average_revisions),
    ]
    if pair.trend is not None:
        attrs.append(("trend", pair.trend))
    label = f"{entity.rsplit('/', 1)[-1]} ~ {coupled.rsplit('/', 1)[-1]}"
    cid = graph.add(
        Node(
            node_id("coupling", *scope.segments, hashlib.sha256(key).hexdigest()[:16]),
            "Coupling",
            label,
            tuple(attrs),
        )
    )
    graph.link(cid, "inRepository", scope.repo_id)
    return cid


RISK_DEGREE = 50  # a partner coupled this strongly to a changed file is worth a look


@dataclass(frozen=True, slots=True, order=True)
class Risk:
    """A file that usually changes with one a PR changed, which the PR left untouched and
    its review does not name."""

    pr: str  # node ids
    partner: str
    changed: str  # the changed file it is most strongly coupled to
    degree: int


def review_risks(graph: KnowledgeGraph, min_degree: int = RISK_DEGREE) -> dict[str, list[Risk]]:
    """Per PR that has `kg:changesFile` (linked to its commit), its risks, strongest first.

    A file counts as named when the review names it (`kg:touchesFile`) or names a symbol
    it defines (`kg:mentionsSymbol` then `kg:definedIn`)."""
    out = graph.out_edges()
    partners: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for node in graph.nodes.values():
        if node.kind != "Coupling" or not isinstance(degree := node.get("degree"), int):
            continue
        if degree < min_degree:
            continue
        files = [e.target for e in out.get(node.id, ()) if e.relation == "couplesFile"]
        if len(files) == 2:
            partners[files[0]].append((files[1], degree))
            partners[files[1]].append((files[0], degree))
    if not partners:
        return {}
    found: dict[str, list[Risk]] = {}
    for source, edges in out.items():
        changed = {e.target for e in edges if e.relation == "changesFile"}
        if not changed:
            continue
        named = {e.target for e in edges if e.relation == "touchesFile"}
        for e in edges:
            if e.relation == "mentionsSymbol":
                named.update(graph.out(e.target, "definedIn"))
        best: dict[str, Risk] = {}
        for file in sorted(changed):
            for partner, degree in partners.get(file, ()):
                if partner in changed or partner in named:
                    continue
                if partner not in best or degree > best[partner].degree:
                    best[partner] = Risk(source, partner, file, degree)
        if best:
            found[source] = sorted(best.values(), key=lambda r: (-r.degree, r.partner, r.changed))
    return found
