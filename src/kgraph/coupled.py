"""Change coupling in the graph: one `kg:Coupling` node per kept pair of files.

The history (`kgraph.history.coupling`) knows files by path; here they become the same
`kg:SourceFile` nodes the reviews' mentions resolve to (`file/OWNER/REPO/PATH`), so a
query can walk from a PR to the files it touched and on to their partners. A file that
exists at the source's commit is linked to it as a resolved mention would be; one that the
history only remembers (deleted since) is a plain path.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from kgraph.graph import KnowledgeGraph, Node, Value, node_id
from kgraph.history import shown_path
from kgraph.history.coupling import CouplingResult
from kgraph.resolve import Resolver, Scope, file_node
from kgraph.source.index import SourceIndex


def add_coupling(graph: KnowledgeGraph, index: SourceIndex, result: CouplingResult) -> None:
    """A `kg:Coupling` per pair, with `kg:couplesFile` to both files, and `kg:revisions`
    on each file: its changes in the window (those code-maat counts)."""
    segments = tuple(index.repo.split("/"))
    repo_id = graph.add(Node(node_id("repo", *segments), "Repository", index.repo))
    scope = Scope(segments, repo_id, Resolver(index))
    files: dict[str, str] = {}

    def file(name: str) -> str:
        if (found := files.get(name)) is not None:
            return found
        path = shown_path(name)
        if path in index.file_set:
            fid = file_node(graph, scope, path)
        else:
            fid = graph.add(
                Node(
                    node_id("file", *segments, *path.split("/")),
                    "SourceFile",
                    path,
                    (("path", path),),
                )
            )
            graph.link(fid, "inRepository", repo_id)
        revisions = result.revisions.get(name, 0)
        graph.add(Node(fid, "SourceFile", path, (("path", path), ("revisions", revisions))))
        files[name] = fid
        return fid

    for pair in result.pairs:
        digest = hashlib.sha256(f"{pair.entity}\0{pair.coupled}".encode("utf-8", "surrogatepass"))
        attrs: list[tuple[str, Value]] = [
            ("degree", pair.degree),
            ("sharedRevisions", pair.shared_revisions),
            ("averageRevisions", pair.average_revisions),
        ]
        if pair.trend is not None:
            attrs.append(("trend", pair.trend))
        label = f"{pair.entity.rsplit('/', 1)[-1]} ~ {pair.coupled.rsplit('/', 1)[-1]}"
        cid = graph.add(
            Node(
                node_id("coupling", *segments, digest.hexdigest()[:16]),
                "Coupling",
                label,
                tuple(attrs),
            )
        )
        graph.link(cid, "couplesFile", file(pair.entity))
        graph.link(cid, "couplesFile", file(pair.coupled))
        graph.link(cid, "inRepository", repo_id)


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
