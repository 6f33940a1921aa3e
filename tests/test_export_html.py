"""The HTML export without a browser: its data block, layout, subgraphs and CLI options."""

from __future__ import annotations

import io
import itertools
import json
import random
import re
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from adversarial import HOSTILE_JSON
from conftest import EXAMPLES, SEEDS, build
from kgraph.atomic import read_sealed, write_sealed
from kgraph.cli import cli
from kgraph.export import json_graph, layout, subgraph
from kgraph.export.html import DEFAULT_MAX_NODES, RELATIONS
from kgraph.export.rdf import Subjects
from kgraph.export.reuse import BlockFile

DRAWN = {
    "PullRequest",
    "SourceFile",
    "CodeSymbol",
    "Issue",
    "DesignDecision",
    "DesignPattern",
    "Topic",
    "Person",
}


def _page_data(page: Path) -> dict:
    html = page.read_text("utf-8")
    blocks = re.findall(r'<script type="application/json" id="kg-data">(.*?)</script>', html, re.S)
    assert len(blocks) == 1
    return json.loads(blocks[0])


def _graph(out: Path) -> dict:
    return json.loads((out / "graph.json").read_text("utf-8"))


def test_export_html_is_self_contained_with_a_strict_policy(examples_out) -> None:
    html = (examples_out / "graph.html").read_text("utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy and "default-src 'none'" in policy.group(1)
    assert "unsafe-inline" not in policy.group(1).split("style-src")[0]  # scripts by hash only


def test_export_html_data_cannot_close_its_script_element(tmp_path) -> None:
    digest = tmp_path / "x.jsonl"
    title = "Fix </script><script>alert(1)</script> & <!-- in `a.py`"
    digest.write_text(json.dumps({"title": title, "summary": "s", "repo": "o/r"}) + "\n", "utf-8")
    assert build([str(digest)], tmp_path / "out")[0] == 0
    html = (tmp_path / "out" / "graph.html").read_text("utf-8")
    assert html.count("</script>") == 3
    assert "<!--" not in html.split('id="kg-data">', 1)[1]
    data = _page_data(tmp_path / "out" / "graph.html")
    assert [n["l"] for n in data["nodes"] if n["k"] == "PullRequest"] == [title]


def test_export_html_page_data_matches_the_graph(examples_out) -> None:
    graph = _graph(examples_out)
    data = _page_data(examples_out / "graph.html")
    drawn = {n["id"]: n for n in graph["nodes"] if n["kind"] in DRAWN}
    assert {n["id"] for n in data["nodes"]} == set(drawn)
    assert data["total"] == len(drawn) and data["note"] == ""
    by_id = {n["id"]: n for n in data["nodes"]}
    # Code nodes grow with the PRs touching them; PRs with the shared code they touch.
    sliding = by_id["symbol/vllm-project/vllm/_sliding_window_lookup"]
    lonely = next(n for n in data["nodes"] if n["a"].get("prCount") == [1])
    assert sliding["s"] > lonely["s"]
    prs = [n for n in data["nodes"] if n["k"] == "PullRequest"]
    assert max(p["s"] for p in prs) > min(p["s"] for p in prs)
    assert all((p["sc"] > 0) == ("v" in p) for p in prs)  # the shared view: PRs sharing code


def test_export_html_layout_is_deterministic_and_bounded_on_5000_nodes() -> None:
    """Worst case for the force pass: one big core in which every PR shares code."""
    rng = random.Random(5)
    prs = [f"pr/{i}" for i in range(1500)]
    code = [f"code/{i}" for i in range(3500)]
    edges = [(p, rng.choice(code)) for p in prs for _ in range(5)]
    started = time.perf_counter()
    first = layout.layout(prs + code, edges)
    seconds = time.perf_counter() - started
    assert len(first) == 5000 and seconds < 30, seconds
    assert len(set(first.values())) > 4900  # nodes do not pile up
    assert layout.layout(prs + code, edges) == first


def test_export_html_remembered_layout_is_reused_only_for_the_same_inputs(
    tmp_path, monkeypatch
) -> None:
    """A build keeps the page's layouts; the next build takes one only when its nodes,
    edges, warm start and anchors are the same, and computes every other."""
    path = tmp_path / "layouts.json"
    nodes, edges = ["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
    first = layout.Remembered.load(path)
    positions = first.layout(nodes, edges, None, ["a"])
    first.save()
    computed = []
    real = layout.layout
    monkeypatch.setattr(layout, "layout", lambda *a: computed.append(a) or real(*a))
    again = layout.Remembered.load(path)
    assert again.layout(nodes, edges, None, ["a"]) == positions and computed == []
    for other in (
        (nodes, edges[:-1], None, ["a"]),  # an edge less
        (nodes, edges, None, ["b"]),  # other anchors
        (nodes, edges, {"a": (0.0, 1.0)}, ["a"]),  # a warm start
        ([*nodes, "e"], edges, None, ["a"]),  # a node more
    ):
        assert again.layout(*other) == real(*other)
    assert len(computed) == 4
    again.save()  # keeps the layouts of this build only
    assert len(json.loads(read_sealed(path) or b"")) == 5


def test_export_html_damaged_remembered_layouts_are_computed_again(tmp_path) -> None:
    nodes, edges = ["a", "b"], [("a", "b")]
    path = tmp_path / "layouts.json"
    for damage in (b"{", b"[1, 2]", b'{"k": {"a": [1]}}', b'{"k": 3}', b"\xff"):
        for write in (path.write_bytes, lambda data: write_sealed(path, data)):
            write(damage)
            assert layout.Remembered.load(path).layout(nodes, edges, None, ()) == layout.layout(
                nodes, edges
            )
    remembered = layout.Remembered(path)
    remembered.layout(nodes, edges, None, ())
    remembered.save()
    seal, text = path.read_bytes().split(b"\n", 1)
    kept = json.loads(text)
    for positions in kept.values():
        positions["a"][0] += 1  # a coordinate edited: the file is no longer what was written
    path.write_bytes(seal + b"\n" + json.dumps(kept).encode())
    assert layout.Remembered.load(path).old == {}
    for positions in kept.values():
        del positions["b"]  # a layout without one of its nodes is no layout of them
    write_sealed(path, json.dumps(kept).encode())
    assert layout.Remembered.load(path).layout(nodes, edges, None, ()) == layout.layout(
        nodes, edges
    )


def test_export_html_page_of_a_rebuild_is_the_clean_page(tmp_path, monkeypatch) -> None:
    """The examples' page, then the seeds' built into the same folder, which remembers
    the examples' layouts: the seeds' page is the one a clean build draws, and a third
    build takes both of its layouts from the second. `--no-cache` keeps none."""
    out = tmp_path / "out"
    assert build([str(EXAMPLES)], out)[0] in (0, 1)
    remembered = out / ".kgraph" / "output" / "layouts.json"
    examples = json.loads(read_sealed(remembered) or b"")
    assert len(examples) == 2
    assert build([str(SEEDS)], out)[0] == 0
    assert build([str(SEEDS)], tmp_path / "clean", "--no-cache")[0] == 0
    assert (out / "graph.html").read_bytes() == (tmp_path / "clean" / "graph.html").read_bytes()
    seeds = json.loads(read_sealed(remembered) or b"")
    assert len(seeds) == 2 and not seeds.keys() & examples.keys()
    monkeypatch.setattr(layout, "layout", lambda *a: pytest.fail("not remembered"))
    assert build([str(SEEDS)], out)[0] == 0
    assert json.loads(read_sealed(remembered) or b"") == seeds
    assert (out / "graph.html").read_bytes() == (tmp_path / "clean" / "graph.html").read_bytes()
    assert not (tmp_path / "clean" / ".kgraph").exists()


def test_export_html_most_relevant_nodes_are_one_ranking_cut_anywhere(examples_out) -> None:
    """The page keeps the first `max_nodes` of one ranking, whatever `max_nodes` is: the
    choice stops ranking once it has enough, and each cut must still be a prefix of the
    next one's."""
    graph = json_graph.from_json((examples_out / "graph.json").read_text("utf-8"))
    candidates = sorted(n.id for n in graph.nodes.values() if n.kind in DRAWN)
    drawn = [(e.source, e.target) for e in graph.sorted_edges() if e.relation in RELATIONS]
    near = subgraph.neighbours(candidates, drawn)
    assert len(near) > 80
    kept = [subgraph.most_relevant(graph, near, size).nodes for size in range(1, len(near))]
    for size, (smaller, larger) in enumerate(itertools.pairwise(kept), start=1):
        assert len(smaller) == size and smaller < larger, size


def test_export_html_max_nodes_keeps_shared_code_and_its_prs_first(tmp_path) -> None:
    code, _, stderr = build([str(EXAMPLES)], tmp_path, "--html-max-nodes", "10")
    assert code == 0, stderr
    graph = _graph(tmp_path)
    nodes = {n["id"]: n for n in graph["nodes"]}
    shared = {
        n["id"]
        for n in graph["nodes"]
        if n["kind"] in ("SourceFile", "CodeSymbol")
        and not n.get("isExternal")
        and n.get("prCount", 0) >= 2
    }
    their_prs = {
        e["source"]
        for e in graph["edges"]
        if e["target"] in shared and nodes[e["source"]]["kind"] == "PullRequest"
    }
    context = {  # what those PRs decide, apply, are about, reference and involve
        e["target"]
        for e in graph["edges"]
        if e["source"] in their_prs
        and e["relation"]
        in ("makesDecision", "appliesPattern", "hasTopic", "references", "involves")
    }
    data = _page_data(tmp_path / "graph.html")
    kept = {n["id"] for n in data["nodes"]}
    assert len(kept) == 10
    assert len(shared | their_prs) < 10 < len(shared | their_prs | context)
    assert shared | their_prs <= kept  # shared code and its PRs first
    assert kept - (shared | their_prs) <= context  # then their context, before other PRs
    assert data["note"].startswith("Showing the 10 most relevant of ")
    assert "Left out:" in data["note"] and "code symbols" in data["note"]


def test_export_html_focus_draws_the_neighbourhood_of_a_symbol(examples_out, tmp_path) -> None:
    shutil.copy(examples_out / "graph.json", tmp_path / "graph.json")
    result = CliRunner().invoke(
        cli,
        ["html", str(tmp_path), "--focus", "_sliding_window_lookup", "--depth", "1"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    page = tmp_path / "focus-_sliding_window_lookup.html"
    assert result.output.strip() == f"wrote {page}"
    graph = _graph(examples_out)
    symbol = "symbol/vllm-project/vllm/_sliding_window_lookup"
    around = {e["source"] for e in graph["edges"] if e["target"] == symbol} | {
        e["target"] for e in graph["edges"] if e["source"] == symbol
    }
    drawn = {n["id"] for n in graph["nodes"] if n["kind"] in DRAWN}
    data = _page_data(page)
    assert {n["id"] for n in data["nodes"]} == {symbol} | (around & drawn)
    assert data["focus"] == ["_sliding_window_lookup"]
    assert "within 1 step(s) of `_sliding_window_lookup`" in data["note"]
    # Depth 2 reaches the other code of those PRs.
    out = tmp_path / "two.html"
    CliRunner().invoke(
        cli,
        ["html", str(examples_out), "--focus", "_sliding_window_lookup", "-o", str(out)],
        catch_exceptions=False,
    )
    assert len(_page_data(out)["nodes"]) > len(data["nodes"])


def test_export_html_unknown_focus_is_a_usage_error_with_suggestions(examples_out) -> None:
    result = CliRunner().invoke(cli, ["html", str(examples_out), "--focus", "sliding_window"])
    assert result.exit_code == 2
    assert "no node is named 'sliding_window'" in result.stderr
    assert "_sliding_window_lookup" in result.stderr


@pytest.mark.parametrize("name", ["graph.json", "graph.ttl", ".kgraph/manifest.json"])
def test_export_html_command_never_writes_over_the_builds_own_files(
    examples_out, tmp_path, name
) -> None:
    out = tmp_path / "out"
    shutil.copytree(examples_out, out)
    before = (out / name).read_bytes()
    result = CliRunner().invoke(cli, ["html", str(out), "-o", str(out / name)])
    assert result.exit_code == 2 and "is a file kgraph build wrote in" in result.stderr
    assert (out / name).read_bytes() == before
    again = CliRunner().invoke(cli, ["html", str(out), "-o", str(out / "graph.html")])
    assert again.exit_code == 0  # the page is the command's to write


def test_export_html_command_needs_a_built_graph(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["html", str(tmp_path)])
    assert result.exit_code == 2
    assert "no graph.json here" in result.stderr
    for broken in ("{oops", '{"edges": []}', '{"nodes": [{"id": 1}], "edges": []}'):
        (tmp_path / "graph.json").write_text(broken, "utf-8")
        result = CliRunner().invoke(cli, ["html", str(tmp_path)])
        # A graph that cannot be read is a problem (1), as in `diff` and `eval`; not usage.
        assert result.exit_code == 1, broken
        assert "graph.json: not a kgraph graph.json" in result.stderr


def test_export_html_json_round_trip_keeps_the_graph(examples_out) -> None:
    text = (examples_out / "graph.json").read_text("utf-8")
    graph = json_graph.from_json(text)
    out = io.BytesIO()
    subjects = Subjects(graph, _graph(examples_out)["graph"]["base"], graph.out_edges())
    json_graph.write_json(graph, subjects, blocks := BlockFile(out))
    blocks.close()
    assert out.getvalue().decode("utf-8") == text


def test_export_html_default_cap_is_documented_in_help() -> None:
    result = CliRunner().invoke(cli, ["build", "--help"])
    assert "--html-max-nodes" in result.output and str(DEFAULT_MAX_NODES) in result.output


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
def test_export_html_hostile_graph_json_is_one_line_naming_it(tmp_path, name) -> None:
    """200,000 nested `[` raised RecursionError, a node that is a number AttributeError."""
    (tmp_path / "graph.json").write_bytes(HOSTILE_JSON[name])
    result = CliRunner().invoke(cli, ["html", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 1  # a graph that cannot be read, as in diff and eval
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"kgraph: {tmp_path / 'graph.json'}: not a kgraph graph.json (")
    assert not (tmp_path / "graph.html").exists()
