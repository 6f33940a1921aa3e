"""Commits in the graph: the commit each reviewed PR was merged as, and what it changed.

For the PRs of a repository whose history `--source` reads, matching (`kgraph.merges`)
finds the merge commits; this module writes what it found:

- `kg:mergedAs` the `kg:Commit` (sha, date, subject, link) and `kg:mergeBasis`;
- `kg:changesFile` every file of the commit, under its name at the source's REV when a
  later commit renamed it, each also a `kg:FileChange` of the commit with its lines added
  and removed;
- `kg:changesSymbol` every class, function and method whose lines the diff touches,
  named as the source index names it at REV when it still exists there;
- `kg:ChangeEvidence` for each design signal of its diff (`kgraph.history.signals`): the
  added line that shows it, the pattern it is evidence of and how sure that evidence is;
  the PR `kg:appliesPattern` that pattern when the evidence reaches `--pattern-threshold`,
  as a review's own evidence does;
- for a PR left unlinked, its `kg:candidateCommit`s instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kgraph.catalog import Knowledge
from kgraph.design import add_pattern
from kgraph.extract.patterns import unread_by_model
from kgraph.graph import Date, KnowledgeGraph, Node, Value, node_id
from kgraph.history import CommitChange, History, SymbolChanged, shown_path
from kgraph.merges import CommitLink, Review, match_commits
from kgraph.model import Mention
from kgraph.resolve import Resolution, Resolver, Scope, definition_node, history_file_node

# What each design signal of a diff is evidence of, and how sure: the share of the tune
# corpora's linked PRs with the signal whose gold has the pattern (`bench/change_signals.py`;
# base rates 0.07-0.16). Only a guard's `raise` reaches the rules' own threshold (0.55)
# and applies its pattern alone; the model does not read diffs, so the evidence gets its
# prior (`unread_by_model`: 0.64 becomes 0.76, of the default 0.70). The others are shown
# as evidence beside the review's.
SIGNAL_PATTERNS: Mapping[str, tuple[str, float]] = {
    "guard-raise": ("fail-fast-validation", 0.64),
    "parametrize-added": ("parametrized-test-matrix", 0.47),
    "default-parameter-added": ("backward-compatible-evolution", 0.5),
    "assert-added": ("invariant-as-assertion", 0.3),
}

CHANGE_TYPES = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type-changed",
}


def add_commits(
    graph: KnowledgeGraph,
    reviews: Sequence[Review],
    repos: Mapping[str, str],
    histories: Mapping[str, History],
    resolvers: Mapping[str, Resolver],
    resolutions: Mapping[str, Mapping[Mention, Resolution]],
    knowledge: Knowledge | None = None,
) -> set[str]:
    """Link each review (of a repository in `histories`; `repos` gives each PR's) to its
    commit and add what the commit changed; returns the ids of the PRs linked."""
    linked: set[str] = set()
    for repo, history in sorted(histories.items()):
        mine = [r for r in reviews if repos.get(r.id) == repo]
        if not mine:
            continue
        resolver = resolvers[repo]
        scope = Scope(tuple(repo.split("/")), node_id("repo", *repo.split("/")), resolver)
        graph.add(Node(scope.repo_id, "Repository", repo))
        for link in match_commits(mine, history, resolutions):
            _add_link(graph, link, history, scope, knowledge)
            if link.sha is not None:
                linked.add(link.pr)
    return linked


def _add_link(
    graph: KnowledgeGraph,
    link: CommitLink,
    history: History,
    scope: Scope,
    knowledge: Knowledge | None = None,
) -> None:
    if link.sha is None:
        for candidate in link.candidates:
            graph.link(
                link.pr, "candidateCommit", _commit_node(graph, history, scope, candidate.sha)
            )
        return
    commit = _commit_node(graph, history, scope, link.sha)
    pr = graph.nodes[link.pr]
    graph.add(Node(pr.id, pr.kind, pr.label, (("mergeBasis", link.basis),)))
    graph.link(link.pr, "mergedAs", commit)
    change = history.change(link.sha)
    if change is None:
        return
    for f in change.files:
        at_head, path = shown_path(f.head), shown_path(f.path)
        file_id = history_file_node(
            graph, scope, at_head if at_head in scope.resolver.index.file_set else path
        )
        graph.link(link.pr, "changesFile", file_id)
        attrs: list[tuple[str, Value]] = [
            ("path", path),
            ("changeType", CHANGE_TYPES.get(f.status, "modified")),
        ]
        if f.old_path:
            attrs.append(("previousPath", shown_path(f.old_path)))
        if f.added is not None and f.removed is not None:
            attrs += [("linesAdded", f.added), ("linesRemoved", f.removed)]
        change_id = graph.add(
            Node(
                node_id("change", *scope.segments, link.sha, *path.split("/")),
                "FileChange",
                path,
                tuple(attrs),
            )
        )
        graph.link(commit, "hasChange", change_id)
        graph.link(change_id, "changedFile", file_id)
    for symbol in change.symbols:
        graph.link(link.pr, "changesSymbol", _symbol(graph, scope, symbol))
    if knowledge is not None:
        _add_signals(graph, link.pr, commit, link.sha, change, scope, knowledge)


def _add_signals(
    graph: KnowledgeGraph,
    pr: str,
    commit: str,
    sha: str,
    change: CommitChange,
    scope: Scope,
    knowledge: Knowledge,
) -> None:
    """The change's design signals as evidence of their patterns (`SIGNAL_PATTERNS`)."""
    for signal in change.signals:
        pattern_id, weight = SIGNAL_PATTERNS.get(signal.kind, ("", 0.0))
        if not pattern_id or knowledge.pattern(pattern_id) is None:
            continue  # a catalog without the pattern: no evidence of it
        confidence = unread_by_model(weight, knowledge)
        pattern = add_pattern(graph, pattern_id, knowledge)
        path = shown_path(signal.path)
        evidence = graph.add(
            Node(
                node_id("evidence", *scope.segments, sha, *path.split("/"), str(signal.line)),
                "ChangeEvidence",
                signal.text,
                (
                    ("evidenceKind", "change"),
                    ("signal", signal.kind),
                    ("line", signal.line),
                    ("addedLine", signal.text),
                    ("confidence", confidence),
                ),
            )
        )
        graph.link(evidence, "inCommit", commit)
        graph.link(evidence, "inFile", history_file_node(graph, scope, path))
        graph.link(evidence, "evidenceOf", pattern)
        if confidence >= knowledge.pattern_threshold:
            graph.link(pr, "appliesPattern", pattern)


def _commit_node(graph: KnowledgeGraph, history: History, scope: Scope, sha: str) -> str:
    date, subject = history.describe(sha)
    return _add_commit(graph, scope, sha, date[:10], subject, "/".join(scope.segments))


def _add_commit(
    graph: KnowledgeGraph, scope: Scope, sha: str, day: str, subject: str, repo: str
) -> str:
    attrs: list[tuple[str, Value]] = [
        ("sha", sha),
        ("title", subject),
        ("sourceUrl", f"https://github.com/{repo}/commit/{sha}"),
    ]
    if len(day) == 10:
        attrs.append(("date", Date(day)))
    cid = graph.add(
        Node(
            node_id("commit", *scope.segments, sha), "Commit", f"{sha[:10]} {subject}", tuple(attrs)
        )
    )
    graph.link(cid, "inRepository", scope.repo_id)
    return cid


def _symbol(graph: KnowledgeGraph, scope: Scope, symbol: SymbolChanged) -> str:
    """The node of a changed definition: the source index's at REV when it is still there
    (in the file the commit's one became), else one named by the commit's file and name."""
    at_head = shown_path(symbol.head)
    name = symbol.qualname.rsplit(".", 1)[-1]
    for definition in scope.resolver.index.definitions(name):
        if definition.path == at_head and definition.qualname == symbol.qualname:
            return definition_node(graph, scope, definition)
    path = at_head if at_head in scope.resolver.index.file_set else shown_path(symbol.path)
    sid = graph.add(
        Node(
            node_id("symbol", *scope.segments, *path.split("/"), symbol.qualname),
            "CodeSymbol",
            symbol.qualname,
            (("name", name), ("qualifiedName", symbol.qualname), ("isExternal", False)),
        )
    )
    graph.link(sid, "inRepository", scope.repo_id)
    graph.link(sid, "definedIn", history_file_node(graph, scope, path))
    return sid
