"""Which part of the graph the HTML page draws when the whole would be unreadable.

Two ways to cut: keep the `max_nodes` most relevant nodes (shared code and the PRs that
share it first, because that is the question the page exists to answer), or keep what lies
within `depth` steps of named nodes (`kgraph html OUT --focus _sliding_window_lookup`).
Either way the page says what it left out, so a reader never mistakes a cut for the whole.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from kgraph.errors import UsageError
from kgraph.graph import KnowledgeGraph, Node

CODE_KINDS = frozenset({"SourceFile", "CodeSymbol"})
# The context of a PR, most telling first; code touched by one PR comes after all of these.
KEEP_ORDER = ("DesignPattern", "Topic", "DesignDecision", "Issue", "Person")


@dataclass(frozen=True, slots=True)
class Selection:
    nodes: frozenset[str]
    note: str = ""  # what was left out and how to see it; empty when nothing was


class FocusError(UsageError, ValueError):
    """A --focus name that matches no node."""

    option = "--focus"


def is_shared_code(node: Node) -> bool:
    if node.kind not in CODE_KINDS:
        return False  # most nodes, asked of first: mentions, entries
    count = node.get("prCount")
    return node.get("isExternal") is not True and isinstance(count, int) and count >= 2


def neighbours(candidates: Sequence[str], edges: Sequence[tuple[str, str]]) -> dict[str, set[str]]:
    near: dict[str, set[str]] = {n: set() for n in candidates}
    for a, b in edges:
        if a in near and b in near and a != b:
            near[a].add(b)
            near[b].add(a)
    return near


def most_relevant(graph: KnowledgeGraph, near: Mapping[str, set[str]], max_nodes: int) -> Selection:
    """The first `max_nodes` of: shared code (most PRs first), each with its PRs; the
    patterns, topics, decisions, issues and people of those PRs; the other PRs; the rest."""
    if max_nodes <= 0 or len(near) <= max_nodes:
        return Selection(frozenset(near))
    nodes = graph.nodes

    def is_pr(node_id: str) -> bool:
        return nodes[node_id].kind == "PullRequest"

    order: dict[str, None] = {}

    def full() -> bool:
        """Only the first `max_nodes` are kept, and a step only adds after them: once
        there are that many, the steps left need not sort the rest of a large graph (4 s
        of the page's 16 s at 100k entries)."""
        return len(order) >= max_nodes

    shared = sorted(
        (n for n in near if is_shared_code(nodes[n])), key=lambda n: (-_pr_count(nodes[n]), n)
    )
    for code in shared:
        if full():
            break
        order[code] = None
        order.update(dict.fromkeys(sorted(n for n in near[code] if is_pr(n))))
    if not full():
        context = {n for pr in order if is_pr(pr) for n in near[pr] if nodes[n].kind in KEEP_ORDER}
        order.update(dict.fromkeys(sorted(context, key=lambda n: _rank(nodes[n], near[n], True))))
    if not full():
        prs = sorted((n for n in near if is_pr(n)), key=lambda n: (-len(near[n]), n))
        order.update(dict.fromkeys(prs))
    if not full():
        rest = (n for n in near if n not in order)
        order.update(
            dict.fromkeys(
                sorted(rest, key=lambda n: _rank(nodes[n], near[n], any(map(is_pr, near[n]))))
            )
        )
    kept = list(order)[:max_nodes]
    kept_set = set(kept)
    left_out = [n for n in near if n not in kept_set]
    note = (
        f"Showing the {len(kept):,} most relevant of {len(near):,} nodes (shared code and "
        f"its PRs first). Left out: {_describe(graph, left_out)}. "
        "Draw everything with `--html-max-nodes 0` (kgraph build) or `--max-nodes 0` "
        "(kgraph html), or run `kgraph html OUTPUT_DIR --focus NAME` for the neighbourhood "
        "of one name."
    )
    return Selection(frozenset(kept), note)


def around(
    graph: KnowledgeGraph,
    near: Mapping[str, set[str]],
    names: Sequence[str],
    depth: int,
    max_nodes: int = 0,
) -> Selection:
    """The named nodes and everything within `depth` steps of them, nearest first."""
    starts = []
    for name in names:
        found = matching(graph, near, name)
        if not found:
            raise FocusError(_no_match(graph, near, name))
        starts.extend(found)
    distance = {n: 0 for n in sorted(set(starts))}
    frontier = list(distance)
    for step in range(1, depth + 1):
        nxt = []
        for node in frontier:
            for other in sorted(near[node]):
                if other not in distance:
                    distance[other] = step
                    nxt.append(other)
        frontier = nxt
    kept = list(distance)
    if max_nodes > 0:
        kept = kept[:max_nodes]
    left_out = len(near) - len(kept)
    shown = ", ".join(f"`{n}`" for n in names)
    note = f"Showing the {len(kept):,} nodes within {depth} step(s) of {shown}"
    note += f"; {left_out:,} other nodes left out." if left_out else "."
    return Selection(frozenset(kept), note)


def matching(graph: KnowledgeGraph, near: Mapping[str, set[str]], name: str) -> list[str]:
    """Nodes a user means by `name`: a label, symbol name, qualified name, path or #number."""
    wanted = name.strip()
    found = []
    for node_id in sorted(near):
        node = graph.nodes[node_id]
        keys = {node.label, node_id}
        for attr in ("name", "qualifiedName", "path", "notation", "prefLabel"):
            keys.update(str(v) for v in node.values(attr))
        if node.kind == "PullRequest" and (number := node.get("number")) is not None:
            keys.update({f"#{number}", str(number)})
        if wanted in keys:
            found.append(node_id)
    return found


def _no_match(graph: KnowledgeGraph, near: Mapping[str, set[str]], name: str) -> str:
    folded = name.casefold()
    close = sorted(
        {graph.nodes[n].label for n in near if folded in graph.nodes[n].label.casefold()}
    )[:5]
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"no node is named {name!r}{hint}"


def _rank(node: Node, near: set[str], has_pr: bool) -> tuple[int, int, str]:
    """Design knowledge and issues before code touched once, external symbols last."""
    if node.kind in KEEP_ORDER:
        tier = KEEP_ORDER.index(node.kind)
    elif node.get("isExternal") is True:
        tier = len(KEEP_ORDER) + 1
    else:
        tier = len(KEEP_ORDER)
    return (tier if has_pr else tier + 10, -len(near), node.id)


def _pr_count(node: Node) -> int:
    count = node.get("prCount")
    return count if isinstance(count, int) else 0


def _describe(graph: KnowledgeGraph, node_ids: Sequence[str]) -> str:
    by_kind: dict[str, int] = defaultdict(int)
    for n in node_ids:
        node = graph.nodes[n]
        kind = "external symbol" if node.get("isExternal") is True else _words(node.kind)
        by_kind[kind] += 1
    return ", ".join(
        f"{count:,} {kind}{'s' if count > 1 else ''}"
        for kind, count in sorted(by_kind.items(), key=lambda kc: (-kc[1], kc[0]))
    )


@cache
def _words(kind: str) -> str:
    """`SourceFile` → `source file`; asked once per node left out of the page."""
    out = "".join(" " + c.lower() if c.isupper() else c for c in kind).strip()
    return out.replace("pull request", "PR")
