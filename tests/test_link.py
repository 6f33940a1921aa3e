"""Entity resolution: one PR across digests, merged files and symbols, derived sharing."""

from __future__ import annotations

import json
import re
from collections import defaultdict

from conftest import build
from kgraph.extract import extract
from kgraph.graph import Edge, KnowledgeGraph
from kgraph.link import ExtractedEntry, link
from kgraph.model import Digest, Entry


def corpus(*entries: tuple[str, str, str | None]):
    items, digests = [], []
    for i, (title, text, repo) in enumerate(entries):
        digest = Digest(f"d{i}.txt", "daily", None, repo, f"{i:064d}")
        number = re.search(r"\(#(\d+)\)$", title)
        entry = Entry(
            f"d{i}.txt", 2, title, text, repo, number=int(number.group(1)) if number else None
        )
        digests.append(digest)
        items.append(ExtractedEntry(entry, digest, extract(entry)))
    return link(items, digests)


def prs(graph):
    return [n for n in graph.sorted_nodes() if n.kind == "PullRequest"]


def test_link_same_title_in_two_digests_is_one_pr_with_both_entries() -> None:
    graph = corpus(
        ("Fix eviction order", "Skim. `evict()`.", None),
        ("Fix eviction order", "Skim. `evict()`.", "o/r"),
    )
    (pr,) = prs(graph)
    assert pr.id.startswith("pr/o/r/title-")
    assert len(graph.out(pr.id, "describedBy")) == 2
    assert pr.get("repositoryBasis") == "digest"


def test_link_number_gives_identity_and_differing_numbers_stay_apart() -> None:
    graph = corpus(("Same title (#1)", "s", "o/r"), ("Same title (#2)", "s", "o/r"))
    assert [p.id for p in prs(graph)] == ["pr/o/r/1", "pr/o/r/2"]


def test_link_basename_merges_with_the_one_full_path_of_its_repository() -> None:
    graph = corpus(
        ("A", "`vllm/v1/core/sched/scheduler.py` changed", "vllm-project/vllm"),
        ("B", "`scheduler.py` again", "vllm-project/vllm"),
        ("C", "`scheduler.py` elsewhere", "other/repo"),
    )
    files = sorted(n.id for n in graph.sorted_nodes() if n.kind == "SourceFile")
    assert files == [
        "file/other/repo/scheduler.py",
        "file/vllm-project/vllm/vllm/v1/core/sched/scheduler.py",
    ]


def test_link_ambiguous_basename_is_never_merged() -> None:
    graph = corpus(
        ("A", "`a/scheduler.py`", "o/r"),
        ("B", "`b/scheduler.py`", "o/r"),
        ("C", "`scheduler.py`", "o/r"),
    )
    paths = sorted(n.get("path") for n in graph.sorted_nodes() if n.kind == "SourceFile")
    assert paths == ["a/scheduler.py", "b/scheduler.py", "scheduler.py"]


def test_link_call_form_and_class_qualified_form_are_one_symbol() -> None:
    graph = corpus(
        ("A", "`_is_current()` and `CachePolicy.touch`", "o/r"),
        ("B", "`_is_current` and `touch()`", "o/r"),
    )
    symbols = sorted(n.id for n in graph.sorted_nodes() if n.kind == "CodeSymbol")
    assert symbols == [
        "symbol/o/r/CachePolicy",
        "symbol/o/r/CachePolicy.touch",
        "symbol/o/r/_is_current",
    ]
    assert graph.out("symbol/o/r/CachePolicy.touch", "memberOf") == ["symbol/o/r/CachePolicy"]


def test_link_shares_code_both_ways_but_not_through_external_symbols() -> None:
    graph = corpus(
        ("A", "`_sliding_window_lookup` and `min()`", "o/r"),
        ("B", "`_sliding_window_lookup`", "o/r"),
        ("C", "only `min()`", "o/r"),
    )
    a, b, c = (p.id for p in sorted(prs(graph), key=lambda p: p.label))
    assert graph.out(a, "sharesCodeWith") == [b]
    assert graph.out(b, "sharesCodeWith") == [a]
    assert graph.out(c, "sharesCodeWith") == []


def test_link_repository_inferred_from_a_package_path() -> None:
    graph = corpus(("A", "`vllm/v1/worker/utils.py`", None))
    (pr,) = prs(graph)
    assert graph.out(pr.id, "inRepository") == ["repo/vllm-project/vllm"]
    assert pr.get("repositoryBasis") == "path"


def test_link_repository_never_crosses_for_the_same_title_in_two_repositories() -> None:
    graph = corpus(("Bump deps", "s", "a/x"), ("Bump deps", "s", "b/y"), ("Bump deps", "s", None))
    assert sorted(p.id.rsplit("/", 1)[0] for p in prs(graph)) == ["pr/_", "pr/a/x", "pr/b/y"]


def test_link_one_number_in_one_repository_is_one_pr_whatever_its_titles() -> None:
    """A title edited between two days, or a PR number without a repository in two
    digests: one node, with one title (its first entry's) and one repository basis."""
    for repo in ("o/r", None):
        graph = corpus(("Fix alpha handling (#123)", "s", repo), ("Rewrite beta (#123)", "t", repo))
        (pr,) = prs(graph)
        assert pr.id == f"pr/{repo or '_'}/123"
        assert pr.values("title") == ["Fix alpha handling (#123)"]
        assert len(pr.values("repositoryBasis")) == 1
        assert len(graph.out(pr.id, "describedBy")) == 2


def test_link_same_title_lends_no_repository_across_a_different_number() -> None:
    graph = corpus(
        ("Fix scheduler race (#500)", "s", None), ("Fix scheduler race (#501)", "s", "a/b")
    )
    assert [p.id for p in prs(graph)] == ["pr/_/500", "pr/a/b/501"]
    graph = corpus(
        ("Fix scheduler race (#500)", "s", None), ("Fix scheduler race (#500)", "s", "a/b")
    )
    ((pr,),) = [prs(graph)]
    assert pr.id == "pr/a/b/500" and pr.get("repositoryBasis") == "digest"


def test_link_a_pr_naming_a_symbol_touches_its_file_in_every_count() -> None:
    """Two PRs share `lru.py` because both name `evict`, which one says is defined there:
    each touches the file, so its PR count, its edges and the pair all say two PRs."""
    graph = corpus(
        ("Fix eviction (#1)", "`policies/lru.py` 的 `evict()` 改为按 rank 淘汰。", "o/r"),
        ("Speed up eviction (#2)", "`evict()` 不再排序。", "o/r"),
    )
    lru = "file/o/r/policies/lru.py"
    touching = sorted(e.source for e in graph.sorted_edges() if e == (e.source, "touchesFile", lru))
    assert touching == ["pr/o/r/1", "pr/o/r/2"]
    assert graph.nodes[lru].get("prCount") == 2
    assert graph.out("pr/o/r/2", "sharesCodeWith") == ["pr/o/r/1"]


def test_link_cpp_member_is_named_by_its_last_part_and_joins_its_bare_name() -> None:
    graph = corpus(
        ("Fix retry (#1)", "`TaskManager::RetryTaskIfPossible` 不再重试。", "ray-project/ray"),
        ("Log retry (#2)", "`RetryTaskIfPossible()` 记录原因。", "ray-project/ray"),
    )
    (node,) = [
        n
        for n in graph.nodes.values()
        if n.get("qualifiedName") == "TaskManager::RetryTaskIfPossible"
    ]
    sid = node.id
    assert sid == "symbol/ray-project/ray/TaskManager%3A%3ARetryTaskIfPossible"  # an IRI segment
    assert node.get("name") == "RetryTaskIfPossible"
    assert graph.out(sid, "memberOf") == ["symbol/ray-project/ray/TaskManager"]
    assert graph.out("pr/ray-project/ray/2", "mentionsSymbol") == [sid]


def test_graph_edges_are_kept_by_source_and_read_without_repeats() -> None:
    """Edges are grouped by source as they are linked, a repeat kept until they are read:
    every reader sees each edge once, in order, and equal graphs compare equal whatever
    order their edges came in."""
    links = [("pr/2", "touchesFile", "f/b"), ("pr/1", "touchesFile", "f/b")]
    links += [("pr/1", "mentionsSymbol", "s/x"), ("pr/1", "touchesFile", "f/a")]
    graph, reverse = KnowledgeGraph(), KnowledgeGraph()
    for edge in links + links[:2]:  # two repeats
        graph.link(*edge)
    for edge in reversed(links):
        reverse.link(*edge)
    expected = sorted(Edge(*e) for e in links)
    assert graph.sorted_edges() == expected
    assert graph.edge_count() == 4 and graph.edges == frozenset(expected)
    assert graph.out("pr/1", "touchesFile") == ["f/a", "f/b"]
    assert [e.target for e in graph.out_edges()["pr/1"]] == ["s/x", "f/a", "f/b"]
    assert graph == reverse
    reverse.link("pr/3", "touchesFile", "f/a")
    assert graph != reverse


def test_link_every_pr_count_is_the_prs_linked_to_the_code(generated_corpus, tmp_path) -> None:
    """On a generated corpus, where PRs name symbols of shared files: `kg:prCount` is what
    the queries and the page count, the PRs with a touchesFile or mentionsSymbol edge."""
    assert build([str(generated_corpus)], tmp_path, "--only", "json")[0] == 0
    graph = json.loads((tmp_path / "graph.json").read_text("utf-8"))
    linked: dict[str, set[str]] = defaultdict(set)
    for edge in graph["edges"]:
        if edge["relation"] in ("touchesFile", "mentionsSymbol"):
            linked[edge["target"]].add(edge["source"])
    nodes = {n["id"]: n for n in graph["nodes"]}
    counted = {code: n["prCount"] for code, n in nodes.items() if "prCount" in n}
    assert len(counted) > 100
    assert counted == {code: len(prs) for code, prs in linked.items() if code in counted}
    assert all(nodes[code].get("isExternal") for code in linked.keys() - counted.keys())
