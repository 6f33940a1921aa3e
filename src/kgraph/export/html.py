"""The interactive HTML graph: one self-contained file, no network, text never parsed as HTML.

pyvis ships vis-network; we inline that library with our own small template and script
instead of pyvis's page (which loads Bootstrap from a CDN) and its `Network` builder (whose
duplicate checks are quadratic). Positions come from `layout` in bounded time, so the page
draws at once with physics off. Everything the reviews wrote travels as JSON in a
`<script type="application/json">` block and reaches the page only through `textContent`;
a Content-Security-Policy with script hashes blocks any script we did not put there.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kgraph.coupled import review_risks
from kgraph.export import json_graph, layout, subgraph
from kgraph.graph import Date, Edge, KnowledgeGraph, Node, RememberedEdges, Text, Value
from kgraph.history.coupling import WEAKENING

DEFAULT_MAX_NODES = 5000  # bench/html.py: 5,000 nodes draw in ~2 s and answer a search in ~1 s

# Legend order: key, legend label, colour, vis-network shape.
STYLE: tuple[tuple[str, str, str, str], ...] = (
    ("PullRequest", "Pull request", "#2563eb", "dot"),
    ("SourceFile", "Source file", "#15803d", "square"),
    ("CodeSymbol", "Code symbol", "#ea580c", "diamond"),
    ("ExternalSymbol", "External symbol", "#a8a29e", "diamond"),
    ("Issue", "Issue", "#7c3aed", "triangle"),
    ("DesignDecision", "Design decision", "#ca8a04", "triangleDown"),
    ("DesignPattern", "Design pattern", "#db2777", "hexagon"),
    ("Topic", "Topic", "#0891b2", "star"),
    ("Person", "Person", "#475569", "ellipse"),
)
DRAWN_KINDS = frozenset(k for k, *_ in STYLE) - {"ExternalSymbol"}

# Relations drawn as lines; the details panel lists every relation between drawn nodes, in
# this order. relation: (heading in the panel of its source, heading in that of its target)
RELATIONS: dict[str, tuple[str, str]] = {
    "makesDecision": ("Decisions", "Made by PRs"),
    "appliesPattern": ("Patterns", "Applied by PRs"),
    "hasTopic": ("Topics", "PRs on this topic"),
    "changesFile": ("Changed code", "Changed by PRs"),
    "changesSymbol": ("Changed code", "Changed by PRs"),
    "touchesFile": ("Touched code", "Touched by PRs"),
    "mentionsSymbol": ("Touched code", "Mentioned by PRs"),
    "references": ("Issues", "Referenced by PRs"),
    "involves": ("People", "PRs involving"),
    "definedIn": ("Defined in", "Defines"),
    "memberOf": ("Member of", "Members"),
}
DRAWN_RELATIONS = frozenset(RELATIONS)
CHANGED = frozenset({"changesFile", "changesSymbol"})
NAMED = frozenset({"touchesFile", "mentionsSymbol"})
LISTED_RELATIONS: dict[str, tuple[str, str]] = {
    **RELATIONS,
    "sharesCodeWith": ("Shares code with", "Shares code with"),
    "candidate": ("Candidates", "Candidate for"),
}

_PLACEHOLDER = re.compile(r"/\*KG_(CSS|VIS_JS|JS|DATA|CSP|TITLE)\*/")


@dataclass(frozen=True, slots=True)
class HtmlOptions:
    title: str = "kgraph"
    max_nodes: int = DEFAULT_MAX_NODES  # 0 draws every node
    focus: tuple[str, ...] = ()  # names to centre on; empty for the whole graph
    depth: int = 2


def to_html(
    graph: KnowledgeGraph, options: HtmlOptions | None = None, place: layout.Layout = layout.layout
) -> str:
    """`place` computes the positions: `layout.layout`, or a build's `Remembered.layout`."""
    options = options or HtmlOptions()
    data = page_data(graph, options, place)
    payload = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    vis_js = _vis_library().replace("</script", "<\\/script")
    app_js = _template("graph.js")
    csp = (
        "default-src 'none'; "
        f"script-src {_script_hash(vis_js)} {_script_hash(app_js)}; "
        "style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
    )
    parts = {
        "CSS": _template("graph.css"),
        "VIS_JS": vis_js,
        "JS": app_js,
        "DATA": payload,
        "CSP": csp,
        "TITLE": _escape_html(options.title),
    }
    return _PLACEHOLDER.sub(lambda m: parts[m.group(1)], _template("graph.html"))


def page_data(
    graph: KnowledgeGraph, options: HtmlOptions, place: layout.Layout = layout.layout
) -> dict[str, object]:
    """Everything the page shows, as plain JSON values with node indices for links.

    Edges are read from each node's own group, never from a sorted list of all of them:
    the drawn relations leave drawn nodes, so the candidates' groups, in their order, are
    the sorted list's drawn edges. At 100k entries, sorting the 4 million edges took 2 s,
    and each of three passes over them 1.5 to 2.7 s.
    """
    out = RememberedEdges(graph.out_edges())  # the same sources are read in several passes
    candidates, couplings = [], []
    for n in graph.nodes.values():  # one pass: a large graph has millions of nodes
        if n.kind in DRAWN_KINDS:
            candidates.append(n.id)
        elif n.kind == "Coupling":
            couplings.append(n)
    candidates.sort()
    changed = {
        (e.source, e.target) for n in candidates for e in out.get(n, ()) if e.relation in CHANGED
    }

    def drawn(e: Edge) -> bool:
        """A review naming what the PR's commit changed is one line: the change."""
        return e.relation in DRAWN_RELATIONS and not (
            e.relation in NAMED and (e.source, e.target) in changed
        )

    drawn_edges = [(e.source, e.target) for n in candidates for e in out.get(n, ()) if drawn(e)]
    near = subgraph.neighbours(candidates, drawn_edges)
    coupled = _coupled_files(couplings, out)
    if coupled:  # a file only the history knows, that no review or definition links: not drawn
        alone = {f for pair in coupled.values() for f in pair[:2] if f in near and not near[f]}
        candidates = [n for n in candidates if n not in alone]
        near = {n: linked for n, linked in near.items() if n not in alone}
    if options.focus:
        selection = subgraph.around(graph, near, options.focus, options.depth, options.max_nodes)
    else:
        selection = subgraph.most_relevant(graph, near, options.max_nodes)
    kept = [n for n in candidates if n in selection.nodes]
    index = {n: i for i, n in enumerate(kept)}
    kept_edges = [(a, b) for a, b in drawn_edges if a in index and b in index]
    # The shared-code view gets its own layout: in the whole graph's, its few nodes are lost
    # among the room left for everything else. The whole graph's then starts from it.
    shared_view = _shared_view(graph, kept, near, coupled)
    shared_positions = place(
        sorted(shared_view),
        [(a, b) for a, b in kept_edges if a in shared_view and b in shared_view],
        None,
        (),
    )
    prs = [n for n in kept if graph.nodes[n].kind == "PullRequest"]
    positions = place(kept, kept_edges, shared_positions, prs)

    edges = [
        [index[e.source], e.relation, index[e.target]]
        for n in kept
        for e in out.get(n, ())
        if e.relation in LISTED_RELATIONS
        and e.target in index
        and (drawn(e) or e.relation not in NAMED)
    ]
    repository, entries_of, entries = _provenance(graph, out, index)
    pattern_evidence = _pattern_evidence(graph, out, index)
    shared_touched = _shared_code_per_pr(graph, out, prs)
    risks = review_risks(graph) if coupled else {}
    nodes = []
    for node_id in kept:
        node = graph.nodes[node_id]
        x, y = positions[node_id]
        record: dict[str, object] = {
            "id": node_id,
            "k": _style_key(node),
            "l": node.label,
            "x": x,
            "y": y,
            "s": _size(graph, node, near, shared_touched),
            "a": _attributes(node),
        }
        if node_id in repository:
            record["r"] = repository[node_id]
        if found := entries_of.get(node_id):
            record["e"] = found
        if node.kind == "PullRequest":
            record["sc"] = shared_touched.get(node_id, 0)
            if evidence := pattern_evidence.get(node_id):
                record["pe"] = evidence
            if found_risks := risks.get(node_id):
                record["rk"] = [
                    [_path(graph, r.partner), _path(graph, r.changed), r.degree]
                    for r in found_risks
                ]
            record.update(_commits_of(graph, out, node_id, index))
        if node_id in shared_positions:
            record["v"] = list(shared_positions[node_id])
        nodes.append(record)
    total = sum(1 for n in graph.nodes.values() if n.kind in DRAWN_KINDS)
    return {
        "title": options.title,
        "note": selection.note,
        "total": total,
        "kinds": [list(style) for style in STYLE],
        "relations": [[r, *h] for r, h in LISTED_RELATIONS.items()],  # in panel order
        "drawn": sorted(DRAWN_RELATIONS),
        # With a history read, what a review only names is drawn dashed, what a commit
        # changed solid.
        "dashNamed": bool(changed),
        "nodes": nodes,
        "edges": edges,
        "coupling": sorted(
            [index[a], index[b], degree, trend, trend is not None and trend <= WEAKENING]
            for a, b, degree, trend in coupled.values()
            if a in index and b in index
        ),
        "entries": entries,
        "focus": list(options.focus),
    }


def _provenance(
    graph: KnowledgeGraph, out: Mapping[str, Sequence[Edge]], index: Mapping[str, int]
) -> tuple[dict[str, str], dict[str, list[int]], list[dict[str, object]]]:
    """Each drawn node's repository, and the digest entries that describe or name it.

    Returns the repository label per node id, entry indices per node id, and the entry
    records (digest file, line, date, title, summary and the index of the PR they describe).
    Where a node has two edges of one relation, the last in sorted order counts.

    The entries naming a file, a symbol or an issue are those of its PRs whose title or
    text holds its name (`_named`): a graph built with `--provenance evidence` has no
    Mention node for them, and the page reads the same from either. Decisions, patterns,
    topics and people are named where their Mention nodes say.
    """
    repository: dict[str, str] = {}
    described: dict[str, set[str]] = defaultdict(set)  # PR -> its entries
    for node_id in index:
        for e in out.get(node_id, ()):
            if e.relation == "inRepository":
                repository[node_id] = graph.nodes[e.target].label
            elif e.relation == "describedBy":
                described[node_id].add(e.target)
    mentioned: dict[str, set[str]] = defaultdict(set)  # code, issue… -> entries naming it
    names: dict[str, str | None] = {}  # per drawn code node: the name its entries hold
    for edges in out.values():
        target = entry = None
        entries: list[str] | None = None  # a PR's, once it names drawn code
        for e in edges:
            if e.relation == "denotes":  # a mention's edges: what it denotes, and where it is
                target = e.target
            elif e.relation == "inEntry":
                entry = e.target
            elif e.relation in _NAMED_RELATIONS and e.target in index:
                if (name := names.get(e.target, _UNNAMED)) is _UNNAMED:
                    name = names[e.target] = _named(graph.nodes[e.target])
                if name is not None:
                    if entries is None:
                        entries = [d.target for d in edges if d.relation == "describedBy"]
                    mentioned[e.target].update(
                        found for found in entries if _holds(graph.nodes.get(found), name)
                    )
        if (
            entry is not None
            and target is not None
            and target in index
            and graph.nodes[target].kind not in _NAMED_KINDS
        ):
            mentioned[target].add(entry)
    pr_of = {entry: index[pr] for pr, found in described.items() for entry in found}
    ordered = sorted(set(pr_of) | {e for found in mentioned.values() for e in found})
    position = {entry: i for i, entry in enumerate(ordered)}
    entries_of = {
        node: sorted(position[e] for e in found)
        for node, found in (*described.items(), *mentioned.items())
    }
    records = [_entry_record(graph, e, _last(out, e, "partOf"), pr_of.get(e)) for e in ordered]
    return repository, entries_of, records


def _pattern_evidence(
    graph: KnowledgeGraph, out: Mapping[str, Sequence[Edge]], index: Mapping[str, int]
) -> dict[str, list[list[object]]]:
    """For each drawn PR, each drawn pattern it applies, in index order: [the pattern's
    index, the best kg:confidence of the PR's mentions of it, their kg:evidenceKind values
    ("text", "change"), sorted]."""
    pr_of = {
        e.target: node_id
        for node_id in index
        if graph.nodes[node_id].kind == "PullRequest"
        for e in out.get(node_id, ())
        if e.relation == "describedBy"
    }
    found: dict[str, dict[int, tuple[float, set[str]]]] = defaultdict(dict)
    for node_id, edges in out.items():
        node = graph.nodes.get(node_id)
        if node is None or node.kind != "Mention" or node.get("confidence") is None:
            continue
        target = entry = ""
        for e in edges:
            if e.relation == "denotes":
                target = e.target
            elif e.relation == "inEntry":
                entry = e.target
        pr = pr_of.get(entry)
        if pr is None or target not in index or graph.nodes[target].kind != "DesignPattern":
            continue
        confidence = float(str(node.get("confidence")))
        best, kinds = found[pr].get(index[target], (0.0, set()))
        kinds.add(str(node.get("evidenceKind") or "text"))
        found[pr][index[target]] = (max(best, confidence), kinds)
    return {
        pr: [[i, c, sorted(k)] for i, (c, k) in sorted(patterns.items())]
        for pr, patterns in found.items()
    }


_NAMED_RELATIONS = frozenset({"touchesFile", "mentionsSymbol", "references"})
_NAMED_KINDS = frozenset({"SourceFile", "CodeSymbol", "Issue"})
_UNNAMED = "\0"


def _named(node: Node) -> str | None:
    """What an entry's text holds where it names this code: a file's last segment, a
    symbol's name, an issue's number."""
    if node.kind == "SourceFile" and isinstance(path := node.get("path"), str):
        return path.rsplit("/", 1)[-1]
    if node.kind == "CodeSymbol" and isinstance(name := node.get("name"), str):
        return name
    if node.kind == "Issue" and isinstance(number := node.get("number"), int):
        return str(number)
    return None


def _holds(entry: Node | None, name: str) -> bool:
    """Does the entry's title or text hold `name` (as written, or once NFKC-normalised:
    `#７` is issue 7)?"""
    if entry is None:
        return False
    for said in (entry.get("text"), entry.get("title")):
        if isinstance(said, str) and (
            name in said or (not said.isascii() and name in unicodedata.normalize("NFKC", said))
        ):
            return True
    return False


def _last(out: Mapping[str, Sequence[Edge]], source: str, relation: str) -> str | None:
    """The target of the last of `source`'s edges of `relation`, in sorted order."""
    found = None
    for e in out.get(source, ()):
        if e.relation == relation:
            found = e.target
    return found


def options_from(export_options: Mapping[str, object]) -> HtmlOptions:
    """`kgraph build`'s HTML options, from `ExportInput.options` (`html_max_nodes`)."""
    max_nodes = export_options.get("html_max_nodes", DEFAULT_MAX_NODES)
    return HtmlOptions(max_nodes=max_nodes if isinstance(max_nodes, int) else DEFAULT_MAX_NODES)


def render_json_file(source: Path, options: HtmlOptions) -> str:
    """The page for a graph.json written by an earlier `kgraph build` (for `kgraph html`)."""
    return to_html(json_graph.from_document(json_graph.read_document(source)), options)


def _commits_of(
    graph: KnowledgeGraph, out: Mapping[str, Sequence[Edge]], pr: str, index: Mapping[str, int]
) -> dict[str, object]:
    """A PR's commit (`m`: sha, date, subject, link) and its changed files (`cf`: path,
    change, lines added and removed, previous path, the file's node index if drawn), or the
    candidate commits of a PR left unlinked (`cc`)."""
    found: dict[str, object] = {}
    candidates: list[dict[str, object]] = []
    for e in out.get(pr, ()):
        if e.relation == "mergedAs" and (commit := graph.nodes.get(e.target)):
            found["m"] = _commit_record(commit)
            files = []
            for change in out.get(commit.id, ()):
                if change.relation != "hasChange" or change.target not in graph.nodes:
                    continue
                node = graph.nodes[change.target]
                file = next(
                    (c.target for c in out.get(node.id, ()) if c.relation == "changedFile"), None
                )
                files.append(
                    [
                        node.get("path"),
                        node.get("changeType"),
                        node.get("linesAdded"),
                        node.get("linesRemoved"),
                        node.get("previousPath"),
                        index.get(file) if file else None,
                    ]
                )
            found["cf"] = sorted(files, key=lambda f: str(f[0]))
        elif e.relation == "candidateCommit" and (commit := graph.nodes.get(e.target)):
            candidates.append(_commit_record(commit))
    if candidates:
        found["cc"] = candidates
    return found


def _commit_record(commit: Node) -> dict[str, object]:
    return {
        "sha": str(commit.get("sha") or ""),
        "date": str(commit.get("date") or ""),
        "subject": str(commit.get("title") or ""),
        "url": str(commit.get("sourceUrl") or ""),
    }


def _style_key(node: Node) -> str:
    if node.kind == "CodeSymbol" and node.get("isExternal") is True:
        return "ExternalSymbol"
    return node.kind


def _shared_view(
    graph: KnowledgeGraph,
    kept: list[str],
    near: Mapping[str, set[str]],
    coupled: Mapping[str, tuple[str, str, int, int | None]] | None = None,
) -> set[str]:
    """Shared code and the PRs that touch it: the page's first view; with the files the
    history changes together with shared code, when they are drawn."""
    kept_set = set(kept)
    code = {n for n in kept if subgraph.is_shared_code(graph.nodes[n])}
    prs = {
        p for c in code for p in near[c] if p in kept_set and graph.nodes[p].kind == "PullRequest"
    }
    partners = set()
    for a, b, _, _ in (coupled or {}).values():
        if a in code and b in kept_set:
            partners.add(b)
        if b in code and a in kept_set:
            partners.add(a)
    return code | prs | partners


def _path(graph: KnowledgeGraph, file: str) -> str:
    node = graph.nodes.get(file)
    path = node.get("path") if node else None
    return path if isinstance(path, str) else file


def _coupled_files(
    couplings: Sequence[Node], out: Mapping[str, Sequence[Edge]]
) -> dict[str, tuple[str, str, int, int | None]]:
    """Each kg:Coupling's two files, degree and trend (None: no trend)."""
    found = {}
    for node in couplings:
        files = [e.target for e in out.get(node.id, ()) if e.relation == "couplesFile"]
        degree, trend = node.get("degree"), node.get("trend")
        if len(files) == 2 and isinstance(degree, int):
            found[node.id] = (files[0], files[1], degree, trend if isinstance(trend, int) else None)
    return found


def _shared_code_per_pr(
    graph: KnowledgeGraph, out: Mapping[str, Sequence[Edge]], prs: Sequence[str]
) -> dict[str, int]:
    """How many shared files and symbols (touched by 2+ PRs) each of `prs` touches."""
    shared: dict[str, bool] = {}  # per code node met: is it shared code
    counts = {}
    for pr in prs:
        count = 0
        relations = CHANGED if any(e.relation == "mergedAs" for e in out.get(pr, ())) else NAMED
        for e in out.get(pr, ()):
            if e.relation in relations:
                if (is_shared := shared.get(e.target)) is None:
                    node = graph.nodes.get(e.target)
                    is_shared = shared[e.target] = node is not None and subgraph.is_shared_code(
                        node
                    )
                count += is_shared
        counts[pr] = count
    return counts


def _size(
    graph: KnowledgeGraph,
    node: Node,
    near: Mapping[str, set[str]],
    shared_touched: Mapping[str, int],
) -> int:
    """PRs grow with the shared code they touch; everything else with the PRs touching it."""
    if node.kind == "PullRequest":
        return round(12 + 6 * math.sqrt(shared_touched.get(node.id, 0)))
    count = node.get("prCount")
    if not isinstance(count, int):
        count = sum(1 for n in near.get(node.id, ()) if graph.nodes[n].kind == "PullRequest")
    return round(min(70.0, 9 + 6 * math.sqrt(max(count - 1, 0))))


def _attributes(node: Node) -> dict[str, list[object]]:
    attrs: dict[str, list[object]] = {}
    for name, value in node.attrs:
        attrs.setdefault(name, []).append(_plain(value))
    return attrs


def _plain(value: Value) -> object:
    if isinstance(value, Text | Date):
        return str(value)
    return value


def _entry_record(
    graph: KnowledgeGraph, entry_id: str, digest_id: str | None, pr: int | None
) -> dict[str, object]:
    entry = graph.nodes[entry_id]
    digest = graph.nodes.get(digest_id) if digest_id else None
    source = digest.label if digest else entry.label.rsplit(":", 1)[0]
    record: dict[str, object] = {
        "source": source,
        "line": entry.get("line"),
        "title": str(entry.get("title") or ""),
        "text": str(entry.get("text") or ""),
    }
    if (date := entry.get("date")) is not None:
        record["date"] = str(date)
    if pr is not None:
        record["pr"] = pr
    return record


def _vis_library() -> str:
    """vis-network from pyvis's package files, found without importing pyvis: that would
    load IPython and Jinja (0.1 s, and `resources.files("pyvis")` imports the package)."""
    spec = importlib.util.find_spec("pyvis")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pyvis is not installed: its vis-network build draws the page")
    lib = Path(spec.submodule_search_locations[0], "templates", "lib", "vis-9.1.2")
    return (lib / "vis-network.min.js").read_text("utf-8")


def _template(name: str) -> str:
    return resources.files("kgraph.export").joinpath("templates", name).read_text("utf-8")


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def _escape_html(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )
