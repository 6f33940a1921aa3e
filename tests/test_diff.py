"""`kgraph diff`: what a day's build added, read from two real output folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from adversarial import HOSTILE_JSON
from conftest import DEV, SEEDS, build
from kgraph.cli import cli
from kgraph.export import ExportInput, export_all, exporter_named
from kgraph.graph import Node
from kgraph.pipeline import BuildOptions, build_graph


def diff(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["diff", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Yesterday: the seeds. Today: the seeds and the dev digests."""
    root = tmp_path_factory.mktemp("diff")
    assert build([str(SEEDS)], root / "old", "--only", "json")[0] == 0
    assert build([str(SEEDS), str(DEV)], root / "new", "--only", "json")[0] == 0
    return root / "old", root / "new"


def _prs(folder: Path) -> dict[str, str]:
    nodes = json.loads((folder / "graph.json").read_text("utf-8"))["nodes"]
    return {n["id"]: n["label"] for n in nodes if n["kind"] == "PullRequest"}


def test_diff_headline_counts_the_new_prs_and_links(builds) -> None:
    old, new = builds
    code, stdout, _ = diff(str(old), str(new))
    assert code == 0
    added = set(_prs(new)) - set(_prs(old))
    headline, *details = stdout.splitlines()
    assert headline.startswith(f"kgraph: +{len(added)} PRs, +")
    assert "shared-code links" in headline and "patterns" in headline
    assert f"New PRs ({len(added)}):" in details
    for pr_id in added:
        assert any(line.strip().startswith(pr_id + "  ") for line in details)


def test_diff_names_the_code_a_new_link_shares(builds) -> None:
    old, new = builds
    _, stdout, _ = diff(str(old), str(new), "--format", "json")
    data = json.loads(stdout)
    links = data["newSharedCode"]
    assert links and all(link["via"] for link in links)
    graph = json.loads((new / "graph.json").read_text("utf-8"))
    shares = {
        (e["source"], e["target"]) for e in graph["edges"] if e["relation"] == "sharesCodeWith"
    }
    old_graph = json.loads((old / "graph.json").read_text("utf-8"))
    old_shares = {
        (e["source"], e["target"]) for e in old_graph["edges"] if e["relation"] == "sharesCodeWith"
    }
    assert len(links) == len({tuple(sorted(p)) for p in shares - old_shares})
    assert any("KVBlockZeroer" in link["via"] for link in links)


def test_diff_of_a_build_with_itself_is_nothing_new(builds) -> None:
    _, new = builds
    assert diff(str(new), str(new))[1] == "kgraph: nothing new\n"


def test_diff_reports_prs_that_left_the_graph(builds) -> None:
    old, new = builds
    _, stdout, _ = diff(str(new), str(old))
    removed = len(set(_prs(new)) - set(_prs(old)))
    assert stdout.startswith(f"kgraph: +0 PRs, -{removed} PRs, +0 shared-code links")


def test_diff_counts_pattern_applications_by_pattern(tmp_path) -> None:
    """Patterns come from another extractor: any appliesPattern edge counts, labelled by
    its target node."""
    assert build([str(SEEDS)], tmp_path / "old", "--only", "json")[0] == 0
    graph, *_ = build_graph([str(SEEDS)], BuildOptions())
    prs = [n.id for n in graph.of_kind("PullRequest")][:3]
    for pattern, label, users in (("lazy", "Lazy invalidation", prs[:2]), ("sst", "SSOT", prs[2:])):
        graph.add(Node(f"pattern/{pattern}", "DesignPattern", label))
        for pr in users:
            graph.link(pr, "appliesPattern", f"pattern/{pattern}")
    export_all(
        ExportInput(graph, "https://example.org/"), tmp_path / "new", [exporter_named("json")]
    )
    code, stdout, _ = diff(str(tmp_path / "old"), str(tmp_path / "new"))
    assert code == 0
    assert stdout.splitlines()[0] == (
        "kgraph: +0 PRs, +0 shared-code links, +3 patterns (Lazy invalidation ×2, SSOT ×1)"
    )
    assert "New pattern applications (3):" in stdout


def test_diff_reads_plain_node_link_json_too(builds, tmp_path) -> None:
    """A graph.json that is not one record a line (networkx, an older kgraph) is read whole."""
    old, new = builds
    (tmp_path / "old").mkdir()
    data = json.loads((old / "graph.json").read_text("utf-8"))
    (tmp_path / "old" / "graph.json").write_text(json.dumps(data, indent=2), "utf-8")
    assert diff(str(tmp_path / "old"), str(new))[1] == diff(str(old), str(new))[1]


def test_diff_missing_or_broken_graph_exits_1_naming_the_file(builds, tmp_path) -> None:
    _, new = builds
    code, _, stderr = diff(str(tmp_path / "nowhere"), str(new))
    assert code == 1 and f"{tmp_path / 'nowhere' / 'graph.json'}:0: error: cannot read" in stderr
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "graph.json").write_text('{"nodes": 3}', "utf-8")
    code, _, stderr = diff(str(tmp_path / "bad"), str(new))
    assert code == 1 and "graph.json:1: error: not node-link JSON" in stderr


def test_diff_and_query_show_control_characters_in_titles_as_escapes(tmp_path: Path) -> None:
    """A title that would set the terminal's title (ESC ] 0 ; … BEL), break a row in two or
    reverse its text is printed with escapes, in `diff` and in `query`'s table alike."""
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"title": "Plain title", "summary": "s", "repo": "o/r"}\n', "utf-8")
    hostile = tmp_path / "hostile.jsonl"
    title = "Esc \u001b]0;pwned\u0007 title\nsecond line \u202eevil"
    hostile.write_text(json.dumps({"title": title, "summary": "s", "repo": "o/r"}) + "\n")
    assert build([str(plain)], tmp_path / "old")[0] == 0
    assert build([str(plain), str(hostile)], tmp_path / "new")[0] == 0
    code, out, _ = diff(str(tmp_path / "old"), str(tmp_path / "new"))
    query = tmp_path / "titles.rq"
    query.write_text("SELECT ?t WHERE { ?p <http://purl.org/dc/terms/title> ?t }", "utf-8")
    answer = CliRunner().invoke(cli, ["query", str(tmp_path / "new"), str(query), "--no-cache"])
    assert code == 0 and answer.exit_code == 0
    for printed in (out, answer.stdout):
        assert not any(c in printed for c in "\u001b\u0007\u202e")
        assert "Esc \\x1b]0;pwned\\x07 title" in printed
    assert "title\\nsecond line \\u202eevil" in out  # one line per PR
    assert "title second line \\u202eevil" in answer.stdout  # a cell's blanks are one space


def test_diff_pr_that_gained_a_repository_is_neither_new_nor_removed(tmp_path: Path) -> None:
    """Today's tag view names the repository of yesterday's PR: its id changes, but it is
    the PR of the same entries, and its shared code and pattern are not news."""
    daily = tmp_path / "2026-03-01.txt"
    daily.write_text(
        "2026-03-01\nFix the eviction order in the LRU\n"
        "Skim. The design makes `LRUPolicy` the single source of truth; touches "
        "`policies/lru.py` and `evict()`.\n"
        "Add retry to the eviction fetcher\nSkim. Touches `evict()` and `policies/lru.py` too.\n",
        "utf-8",
    )
    tag_view = tmp_path / "vllm.txt"
    tag_view.write_text(
        "vllm-project/vllm · tag view\n\nFix the eviction order in the LRU\n\n"
        "Skim. Touches `policies/lru.py` again.\n",
        "utf-8",
    )
    assert build([str(daily)], tmp_path / "old", "--only", "json")[0] == 0
    assert build([str(daily), str(tag_view)], tmp_path / "new", "--only", "json")[0] == 0
    assert any(p.startswith("pr/vllm-project/vllm/") for p in _prs(tmp_path / "new"))
    assert not set(_prs(tmp_path / "new")) >= set(_prs(tmp_path / "old"))  # an id changed
    code, out, _ = diff(str(tmp_path / "old"), str(tmp_path / "new"))
    assert code == 0
    assert out.splitlines()[0] == "kgraph: nothing new"
    code, out, _ = diff("--format", "json", str(tmp_path / "old"), str(tmp_path / "new"))
    document = json.loads(out)
    assert document["newPullRequests"] == document["removedPullRequests"] == []


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The dev corpus's entries as one digest, and that digest edited the next day: the
    first eight summaries rewritten without their design content, the last entry gone
    (its PR too, unless another entry describes it)."""
    root = tmp_path_factory.mktemp("edited")
    assert build([str(DEV)], root / "dev", "--only", "json")[0] == 0
    graph = json.loads((root / "dev" / "graph.json").read_text("utf-8"))
    described = {e["target"]: e["source"] for e in graph["edges"] if e["relation"] == "describedBy"}
    before = []
    for node in graph["nodes"]:
        if node["kind"] == "Entry":
            # Its repository as the build found it, given: an edit does not move the PR.
            owner, name = described[node["id"]].split("/")[1:3]
            repo = {"repo": f"{owner}/{name}"} if owner != "_" else {}
            before.append({"title": node["title"], "summary": node["text"], **repo})
    assert len(before) > 20
    after = [{**r, "summary": "可快速浏览。"} for r in before[:8]] + before[8:-1]
    for name, records in (("old", before), ("new", after)):
        digest = root / f"{name}.jsonl"
        digest.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        assert build([str(digest)], root / name, "--only", "json")[0] == 0
    return root / "old", root / "new"


def _facts(folder: Path) -> dict[str, set[tuple[str, str]]]:
    """Each reported relation's (PR, label) pairs and the shared-code pairs, read here."""
    graph = json.loads((folder / "graph.json").read_text("utf-8"))
    labels = {n["id"]: n["label"] for n in graph["nodes"]}
    facts: dict[str, set[tuple[str, str]]] = {"appliesPattern": set(), "makesDecision": set()}
    facts["sharesCodeWith"] = set()
    for e in graph["edges"]:
        if e["relation"] == "sharesCodeWith":
            facts["sharesCodeWith"].add(tuple(sorted((e["source"], e["target"]))))
        elif e["relation"] in facts:
            facts[e["relation"]].add((e["source"], labels[e["target"]]))
    return facts


def test_diff_lists_what_a_changed_digest_took_away(edited) -> None:
    """Links, patterns and decisions that went with a rewritten summary are removed facts,
    of PRs that are still there; each list is what the two graph.json files differ by."""
    old, new = edited
    code, out, _ = diff("--format", "json", str(old), str(new))
    assert code == 0
    document = json.loads(out)
    before, after = _facts(old), _facts(new)
    gone = {kind: before[kind] - after[kind] for kind in before}
    assert all(gone.values()), gone  # the edit took some of each
    assert {(p["pr"], p["pattern"]) for p in document["removedPatterns"]} == gone["appliesPattern"]
    assert {(d["pr"], d["decision"]) for d in document["removedDecisions"]} == gone["makesDecision"]
    assert {(s["a"], s["b"]) for s in document["removedSharedCode"]} == gone["sharesCodeWith"]
    assert all(link["via"] for link in document["removedSharedCode"])  # from the old graph
    assert {p["id"] for p in document["removedPullRequests"]} == set(_prs(old)) - set(_prs(new))
    assert not document["newPullRequests"]
    assert document["removedNodes"]["DesignDecision"] > 0
    headline = document["headline"]
    assert f"-{len(gone['sharesCodeWith'])} shared-code links" in headline
    assert f"-{len(gone['appliesPattern'])} patterns" in headline
    assert f"-{len(gone['makesDecision'])} decisions" in headline
    _, text, _ = diff(str(old), str(new))
    assert f"Pattern applications no longer in the graph ({len(gone['appliesPattern'])}):" in text
    assert f"Decisions no longer in the graph ({len(gone['makesDecision'])}):" in text
    assert f"Shared-code links no longer in the graph ({len(gone['sharesCodeWith'])}):" in text


def test_diff_both_ways_mirror_each_other(builds, edited) -> None:
    """What the old build lacks is what the new one lost, read the other way round."""
    for old, new in (builds, edited):
        forth = json.loads(diff("--format", "json", str(old), str(new))[1])
        back = json.loads(diff("--format", "json", str(new), str(old))[1])
        for name in ("PullRequests", "SharedCode", "Patterns", "Decisions", "Commits"):
            assert forth["new" + name] == back["removed" + name], name
            assert forth["removed" + name] == back["new" + name], name
        assert forth["newNodes"] == back["removedNodes"]
    assert json.loads(diff("--format", "json", *map(str, builds))[1])["newDecisions"]


def test_diff_reports_commit_links_both_ways(tmp_path) -> None:
    """kg:mergedAs, a PR's merge commit from a --source repository's history, is one of the
    facts the diff lists, in text and JSON, added and removed."""
    assert build([str(SEEDS)], tmp_path / "old", "--only", "json")[0] == 0
    graph, *_ = build_graph([str(SEEDS)], BuildOptions())
    prs = [n.id for n in graph.of_kind("PullRequest")][:2]
    for pr, sha in zip(prs, ("1f3a9c2", "77be0d4"), strict=True):
        graph.add(Node(f"commit/o/r/{sha}", "Commit", sha))
        graph.link(pr, "mergedAs", f"commit/o/r/{sha}")
    export_all(
        ExportInput(graph, "https://example.org/"), tmp_path / "new", [exporter_named("json")]
    )
    code, out, _ = diff(str(tmp_path / "old"), str(tmp_path / "new"))
    assert code == 0
    assert (
        out.splitlines()[0] == "kgraph: +0 PRs, +0 shared-code links, +0 patterns, +2 commit links"
    )
    assert "New commit links (2):" in out and "  1f3a9c2: " in out
    _, back, _ = diff("--format", "json", str(tmp_path / "new"), str(tmp_path / "old"))
    assert sorted(c["commit"] for c in json.loads(back)["removedCommits"]) == ["1f3a9c2", "77be0d4"]


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
@pytest.mark.parametrize("side", ["old", "new"])
def test_diff_hostile_graph_json_is_one_line_naming_it_and_exit_1(builds, tmp_path, name, side):
    """200,000 nested `[` raised RecursionError, a node that is a number AttributeError,
    a line record without an id KeyError: each a traceback."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "graph.json").write_bytes(HOSTILE_JSON[name])
    old, new = (other, builds[1]) if side == "old" else (builds[0], other)
    code, stdout, stderr = diff(str(old), str(new))
    assert code == 1 and stdout == ""
    (line,) = stderr.splitlines()
    assert line.startswith(f"{other / 'graph.json'}:") and ": error: " in line
