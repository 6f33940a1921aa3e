"""The HTML page opened in headless Debian Chromium, driven by Playwright, as a reader uses it.

Expected values come from graph.json (an independent export of the same graph), never from
the page's own data block.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from conftest import build
from history_repo import REPO, make_repo
from history_repo import Graph as HistoryGraph
from kgraph.export.html import to_html
from kgraph.graph import KnowledgeGraph, Node

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
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
DRAWN_RELATIONS = {
    "touchesFile",
    "mentionsSymbol",
    "references",
    "makesDecision",
    "appliesPattern",
    "hasTopic",
    "involves",
    "definedIn",
    "memberOf",
}
DIM = "#e5e7eb"
# Where a node is drawn, in page coordinates.
POSITION = """(id) => {
  const i = kgraph.data.nodes.findIndex((n) => n.id === id);
  const p = kgraph.network.canvasToDOM(kgraph.network.getPositions([i])[i]);
  const box = document.getElementById("graph").getBoundingClientRect();
  return [box.left + p.x, box.top + p.y];
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@dataclass
class Opened:
    page: Page
    url: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def js(self, expression: str, arg: object = None) -> object:
        return self.page.evaluate(expression, arg)

    def node(self, node_id: str) -> dict:
        return self.js(
            "(id) => kgraph.nodes.get(kgraph.data.nodes.findIndex((n) => n.id === id))", node_id
        )

    def visible_ids(self) -> set[str]:
        return set(
            self.js(
                "() => kgraph.nodes.get({filter: (n) => !n.hidden})"
                ".map((n) => kgraph.data.nodes[n.id].id)"
            )
        )

    def click_node(self, node_id: str) -> None:
        """A real mouse click where the node is drawn on the canvas."""
        x, y = self.js(POSITION, node_id)
        self.page.mouse.click(x, y)

    def search(self, text: str) -> None:
        self.page.fill("#search", text)
        self.page.press("#search", "Enter")


@pytest.fixture
def open_page(browser: Browser) -> Iterator:
    contexts = []

    def _open(path: Path, width: int = 1300, height: int = 850) -> Opened:
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        opened = Opened(page, path.resolve().as_uri())
        page.on("request", lambda r: opened.requests.append(r.url))
        page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: opened.errors.append(str(e)))

        def on_dialog(dialog) -> None:
            opened.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.goto(opened.url)
        page.wait_for_selector("body[data-ready=true]", timeout=60_000)
        return opened

    yield _open
    for context in contexts:
        context.close()


def _graph(out: Path) -> dict:
    return json.loads((out / "graph.json").read_text("utf-8"))


def _prs_mentioning(graph: dict, name: str) -> set[str]:
    symbols = {n["id"] for n in graph["nodes"] if n.get("name") == name}
    assert symbols, name
    return {
        e["source"]
        for e in graph["edges"]
        if e["relation"] == "mentionsSymbol" and e["target"] in symbols
    }


def _shared_view(graph: dict) -> set[str]:
    nodes = {n["id"]: n for n in graph["nodes"]}
    code = {
        n["id"]
        for n in graph["nodes"]
        if n["kind"] in ("SourceFile", "CodeSymbol")
        and not n.get("isExternal")
        and n.get("prCount", 0) >= 2
    }
    prs = {
        e["source"]
        for e in graph["edges"]
        if e["target"] in code and nodes[e["source"]]["kind"] == "PullRequest"
    }
    return code | prs


# --- the seeds -------------------------------------------------------------------------------


def test_html_browser_seeds_page_makes_no_request_and_logs_no_error(open_page, seeds_out) -> None:
    opened = open_page(seeds_out / "graph.html")
    # Use the page: search, click a result, toggle filters and views.
    opened.search("_sliding_window_lookup")
    opened.page.click("#results button")
    opened.page.click("input[name=view][value=shared]")
    opened.page.click("input[name=view][value=all]")
    opened.page.click("#kinds input[data-kind=CodeSymbol]")
    opened.page.click("#reset")
    opened.page.mouse.move(300, 300)
    opened.page.mouse.wheel(0, -300)
    opened.page.wait_for_timeout(300)
    assert opened.requests == [opened.url]
    assert opened.errors == []
    assert opened.dialogs == []


def test_html_browser_node_and_edge_counts_equal_the_graphs(open_page, seeds_out) -> None:
    graph = _graph(seeds_out)
    drawn = {n["id"] for n in graph["nodes"] if n["kind"] in DRAWN}
    edges = {
        (e["source"], e["target"])
        for e in graph["edges"]
        if e["relation"] in DRAWN_RELATIONS and e["source"] in drawn and e["target"] in drawn
    }
    opened = open_page(seeds_out / "graph.html")
    assert opened.js("() => kgraph.nodes.length") == len(drawn) > 13
    assert opened.js("() => Object.keys(kgraph.network.getPositions()).length") == len(drawn)
    assert opened.js("() => kgraph.edges.length") == len(edges)
    # No code is shared in the seeds: the page opens on everything, and says so.
    assert opened.visible_ids() == drawn
    assert "No file or symbol is touched by two or more PRs" in opened.page.text_content("#details")
    assert "13 pull requests" in opened.page.inner_text("#summary")


def test_html_browser_search_highlights_and_focuses_the_prs_of_a_symbol(
    open_page, seeds_out
) -> None:
    graph = _graph(seeds_out)
    prs = _prs_mentioning(graph, "_sliding_window_lookup")
    others = {n["id"] for n in graph["nodes"] if n["kind"] == "PullRequest"} - prs
    assert len(prs) == 1 and others
    opened = open_page(seeds_out / "graph.html")
    opened.page.fill("#search", "_sliding_window_lookup")
    opened.page.wait_for_function("() => document.getElementById('status').textContent !== ''")
    assert opened.page.inner_text("#status").startswith("1 match")
    symbol = opened.node("symbol/vllm-project/vllm/_sliding_window_lookup")
    assert symbol["borderWidth"] == 4 and not symbol["hidden"]
    for pr in prs:
        look = opened.node(pr)
        assert not look["hidden"] and look["color"]["background"] != DIM
        # Focused: the PR is drawn inside the visible canvas.
        opened.page.wait_for_timeout(600)  # the zoom glides for 300 ms
        assert opened.js("() => kgraph.network.getScale()") > 0.9  # zoomed in on the two
        x, y = opened.js(POSITION, pr)
        box = opened.page.locator("#graph").bounding_box()
        assert box["x"] + 0.2 * box["width"] <= x <= box["x"] + 0.8 * box["width"]
        assert box["y"] + 0.2 * box["height"] <= y <= box["y"] + 0.8 * box["height"]
    for pr in others:
        assert opened.node(pr)["color"]["background"] == DIM
    # The one match opened its details, which list the PR.
    titles = {n["id"]: n["title"] for n in graph["nodes"] if n["kind"] == "PullRequest"}
    details = opened.page.text_content("#details")
    assert all(titles[pr] in details for pr in prs)
    # Clearing the search restores every node.
    opened.page.fill("#search", "")
    opened.page.press("#search", "Escape")
    opened.page.wait_for_timeout(200)
    assert opened.node(next(iter(others)))["color"]["background"] != DIM


def test_html_browser_click_on_a_pr_fills_the_panel(open_page, seeds_out) -> None:
    graph = _graph(seeds_out)
    nodes = {n["id"]: n for n in graph["nodes"]}
    # The PR that both seed digests describe.
    described = {}
    for e in graph["edges"]:
        if e["relation"] == "describedBy":
            described.setdefault(e["source"], []).append(nodes[e["target"]])
    pr_id, entries = next((p, es) for p, es in sorted(described.items()) if len(es) == 2)
    pr = nodes[pr_id]
    touched = [
        nodes[e["target"]]["label"]
        for e in graph["edges"]
        if e["source"] == pr_id and e["relation"] in ("touchesFile", "mentionsSymbol")
    ]
    opened = open_page(seeds_out / "graph.html")
    opened.click_node(pr_id)
    opened.page.wait_for_function(
        "(id) => document.getElementById('details').dataset.node === id", arg=pr_id
    )
    details = opened.page.text_content("#details")
    assert opened.page.inner_text("#details h2") == pr["title"]
    assert "Pull request · vllm-project/vllm" in details
    assert {"close-read": "Worth a close read", "skim": "Skim"}[pr["readingAdvice"]] in details
    assert "Summary (2 digests)" in details
    for entry in entries:
        assert entry["label"] in details  # digest file name and line
        assert entry["text"].splitlines()[0] in details
    assert touched and all(label in details for label in touched)
    # The panel's links lead on: clicking touched code shows that code.
    opened.page.click(f"#details button:has-text('{touched[0]}')")
    assert opened.page.inner_text("#details h2") == touched[0]
    assert pr["title"] in opened.page.text_content("#details")


# --- the examples: shared code, views, filters -----------------------------------------------


def test_html_browser_opens_on_shared_code_and_symbols_list_every_pr(
    open_page, examples_out
) -> None:
    graph = _graph(examples_out)
    shared = _shared_view(graph)
    opened = open_page(examples_out / "graph.html")
    assert opened.js("() => kgraph.state.view") == "shared"
    assert opened.visible_ids() == shared
    assert "_sliding_window_lookup" in opened.page.text_content("#details")  # hot spots
    prs = _prs_mentioning(graph, "_sliding_window_lookup")
    assert len(prs) == 2
    opened.click_node("symbol/vllm-project/vllm/_sliding_window_lookup")
    opened.page.wait_for_selector("#details h2:text-is('_sliding_window_lookup')")
    details = opened.page.text_content("#details")
    titles = {n["id"]: n["title"] for n in graph["nodes"] if n["kind"] == "PullRequest"}
    assert "Mentioned by PRs (2)" in details
    assert all(titles[pr] in details for pr in prs)
    # Under each PR, the digest lines whose text names the symbol.
    nodes = {n["id"]: n for n in graph["nodes"]}
    lines = {
        nodes[e["target"]]["label"]
        for e in graph["edges"]
        if e["relation"] == "describedBy"
        and e["source"] in prs
        and "_sliding_window_lookup" in nodes[e["target"]]["text"]
    }
    assert len(lines) >= 2
    items = opened.page.locator("#details li").all_text_contents()
    for pr in prs:
        item = next(t for t in items if titles[pr] in t)
        assert any(line in item for line in lines), item
    opened.page.click("input[name=view][value=all]")
    drawn = {n["id"] for n in graph["nodes"] if n["kind"] in DRAWN}
    assert opened.visible_ids() == drawn


def test_html_browser_hover_names_edges_by_relation_and_nodes_by_kind(
    open_page, examples_out
) -> None:
    graph = _graph(examples_out)
    symbol = "symbol/vllm-project/vllm/_sliding_window_lookup"
    pr = sorted(_prs_mentioning(graph, "_sliding_window_lookup"))[0]
    opened = open_page(examples_out / "graph.html")
    (ax, ay), (bx, by) = (opened.js(POSITION, node) for node in (symbol, pr))
    opened.page.mouse.move((ax + bx) / 2, (ay + by) / 2)
    tooltip = opened.page.locator(".vis-tooltip")
    tooltip.wait_for(state="visible")
    assert tooltip.inner_text() == "mentions symbol"
    opened.page.mouse.move(ax, ay)
    opened.page.wait_for_function(
        "() => document.querySelector('.vis-tooltip').innerText.startsWith('Code symbol')"
    )
    assert "Touched by 2 PRs" in tooltip.inner_text()


def test_html_browser_filters_by_kind_repository_and_date(open_page, examples_out) -> None:
    graph = _graph(examples_out)
    nodes = {n["id"]: n for n in graph["nodes"]}
    repo_of = {
        e["source"]: nodes[e["target"]]["label"]
        for e in graph["edges"]
        if e["relation"] == "inRepository"
    }
    opened = open_page(examples_out / "graph.html")
    opened.page.click("input[name=view][value=all]")

    opened.page.click("#kinds input[data-kind=CodeSymbol]")
    visible = opened.visible_ids()
    # External symbols have their own legend entry and stay.
    assert visible and all(
        nodes[n]["kind"] != "CodeSymbol" or nodes[n]["isExternal"] for n in visible
    )
    assert any(nodes[n]["kind"] == "SourceFile" for n in visible)
    opened.page.click("#reset")

    opened.page.select_option("#f-repo", "sgl-project/sglang")
    visible = opened.visible_ids()
    prs = {n for n in visible if nodes[n]["kind"] == "PullRequest"}
    expected = {
        n
        for n, v in nodes.items()
        if v["kind"] == "PullRequest" and repo_of.get(n) == "sgl-project/sglang"
    }
    assert prs == expected and prs
    assert {
        n for n in visible if repo_of.get(n, "sgl-project/sglang") != "sgl-project/sglang"
    } == set()
    opened.page.click("#reset")

    dates = {}
    for e in graph["edges"]:
        if e["relation"] == "describedBy" and "date" in nodes[e["target"]]:
            dates.setdefault(e["source"], set()).add(nodes[e["target"]]["date"])
    first = min(d for ds in dates.values() for d in ds)
    opened.page.select_option("#f-to", first)
    prs = {n for n in opened.visible_ids() if nodes[n]["kind"] == "PullRequest"}
    assert prs == {p for p, ds in dates.items() if first in ds}
    assert prs and len(prs) < len(dates)


# --- hostile text ------------------------------------------------------------------------------

XSS_TITLE = "<img src=x onerror=alert(1)>"


def test_html_browser_hostile_title_renders_literally_and_runs_nothing(open_page, tmp_path) -> None:
    digest = tmp_path / "xss.jsonl"
    records = [
        {
            "title": XSS_TITLE,
            "summary": "Touches `evil.py` and <script>alert(2)</script>; "
            '"><svg onload=alert(3)> 建议精读',
            "repo": "o/r",
            "url": "javascript:alert(4)",
        },
        {
            "title": "Fix </script><script>alert(5)</script>",
            "summary": "Also `evil.py`.",
            "repo": "o/r",
        },
    ]
    digest.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    assert build([str(digest)], tmp_path / "out")[0] == 0
    opened = open_page(tmp_path / "out" / "graph.html")
    opened.search("<img")
    opened.page.click("#results button")
    assert opened.page.inner_text("#details h2") == XSS_TITLE
    assert "<script>alert(2)</script>" in opened.page.text_content("#details")
    # The javascript: URL is shown as text, never as a link.
    assert opened.page.locator("#details a").count() == 0
    opened.click_node(
        next(n["id"] for n in _graph(tmp_path / "out")["nodes"] if "alert(5)" in n["label"])
    )
    assert opened.page.inner_text("#details h2") == records[1]["title"]
    opened.page.mouse.move(10, 10)
    opened.page.wait_for_timeout(300)
    assert opened.dialogs == []
    assert opened.page.locator("img, [onload], [onerror]").count() == 0
    assert opened.page.locator("script").count() == 3  # data, vis-network, the page's own
    assert opened.requests == [opened.url]
    assert opened.errors == []


def test_html_browser_labels_are_cut_between_characters_not_inside_one(open_page, tmp_path) -> None:
    """A long title is cut to a label; an emoji (two UTF-16 units) is kept whole or left out."""
    digest = tmp_path / "emoji.jsonl"
    titles = ["a" * n + "😀" * 30 for n in range(20, 28)]
    digest.write_text(
        "".join(json.dumps({"title": t, "summary": "s", "repo": "o/r"}) + "\n" for t in titles),
        "utf-8",
    )
    assert build([str(digest)], tmp_path / "out")[0] == 0
    opened = open_page(tmp_path / "out" / "graph.html")
    labels = opened.js(
        "() => kgraph.nodes.get().map((n) => n.label).concat("
        "[...document.querySelectorAll('option')].map((o) => o.textContent))"
    )
    cut = [label for label in labels if label and label.endswith("…") and label.startswith("a")]
    assert len(cut) >= len(titles)
    for label in cut:
        label.encode("utf-8")  # a lone surrogate cannot be encoded
        assert label.rstrip("…").strip("a") == "😀" * label.count("😀")
    assert opened.errors == []


# --- design knowledge and source links (hand-built: their extractors live elsewhere) -----------


def _design_graph() -> KnowledgeGraph:
    graph = KnowledgeGraph()
    pr = "pr/o/r/7"
    graph.add(
        Node(
            pr,
            "PullRequest",
            "Evict lazily",
            (
                ("title", "Evict lazily"),
                ("number", 7),
                ("url", "https://github.com/o/r/pull/7"),
                ("readingAdvice", "close-read"),
                ("recommendedFor", "KV offload contributors"),
                ("followUp", "benchmark the ARC policy"),
            ),
        )
    )
    graph.add(Node("repo/o/r", "Repository", "o/r"))
    graph.link(pr, "inRepository", "repo/o/r")
    for node_id, kind, label, relation in (
        ("decision/o/r/7/1", "DesignDecision", "logical rank", "makesDecision"),
        ("pattern/lazy-invalidation", "DesignPattern", "Lazy invalidation", "appliesPattern"),
        ("topic/kv-offload", "Topic", "KV Offload", "hasTopic"),
        ("person/alice", "Person", "@alice", "involves"),
    ):
        graph.add(Node(node_id, kind, label))
        graph.link(pr, relation, node_id)
    graph.add(
        Node(
            "decision/o/r/7/1",
            "DesignDecision",
            "logical rank",
            (("rejectedAlternative", "physical position"),),
        )
    )
    graph.add(Node("pr/o/r/8", "PullRequest", "Unrelated", (("title", "Unrelated"),)))
    graph.link("pr/o/r/8", "inRepository", "repo/o/r")
    graph.add(
        Node(
            "symbol/o/r/evict",
            "CodeSymbol",
            "evict",
            (
                ("name", "evict"),
                ("qualifiedName", "evict"),
                ("isExternal", False),
                ("prCount", 1),
                ("resolution", "resolved"),
                ("line", 56),
                ("sourceUrl", "https://github.com/o/r/blob/abc/policies/lru.py#L56"),
            ),
        )
    )
    graph.add(
        Node(
            "file/o/r/policies/lru.py",
            "SourceFile",
            "policies/lru.py",
            (("path", "policies/lru.py"), ("prCount", 1)),
        )
    )
    graph.link("symbol/o/r/evict", "definedIn", "file/o/r/policies/lru.py")
    graph.link(pr, "mentionsSymbol", "symbol/o/r/evict")
    graph.link(pr, "touchesFile", "file/o/r/policies/lru.py")
    graph.add(
        Node(
            "symbol/o/r/bad",
            "CodeSymbol",
            "bad",
            (("name", "bad"), ("prCount", 1), ("sourceUrl", "javascript:alert(1)")),
        )
    )
    graph.link("pr/o/r/8", "mentionsSymbol", "symbol/o/r/bad")
    return graph


def test_html_browser_panel_shows_design_knowledge_and_source_links(open_page, tmp_path) -> None:
    page_file = tmp_path / "design.html"
    page_file.write_text(to_html(_design_graph()), "utf-8")
    opened = open_page(page_file)
    opened.click_node("pr/o/r/7")
    details = opened.page.text_content("#details")
    for text in (
        "Worth a close read",
        "Recommended for: KV offload contributors",
        "Follow-up: benchmark the ARC policy",
        "logical rankrather than physical position",
        "Lazy invalidation",
        "KV Offload",
        "@alice",
        "evict",
    ):
        assert text in details, text
    assert opened.page.get_attribute("#details a", "href") == "https://github.com/o/r/pull/7"

    opened.page.click("#details button:has-text('evict')")
    assert "Source: policies/lru.py:56 (resolved)" in opened.page.text_content("#details")
    link = opened.page.locator("#details a")
    assert link.get_attribute("href") == "https://github.com/o/r/blob/abc/policies/lru.py#L56"

    opened.search("bad")
    assert opened.page.inner_text("#details h2") == "bad"
    assert opened.page.locator("#details a").count() == 0
    assert "javascript:alert(1)" in opened.page.text_content("#details")

    # Topic and pattern filters keep the PR that has them and drop the one that does not.
    opened.page.press("#search", "Escape")
    opened.page.select_option("#f-topic", label="KV Offload")
    assert "pr/o/r/7" in opened.visible_ids() and "pr/o/r/8" not in opened.visible_ids()
    opened.page.click("#reset")
    opened.page.select_option("#f-pattern", label="Lazy invalidation")
    assert "pr/o/r/8" not in opened.visible_ids()
    assert opened.errors == [] and opened.requests == [opened.url]


# --- change coupling -------------------------------------------------------------------------


def _coupled_graph() -> KnowledgeGraph:
    """Two PRs sharing a.py; the history couples a.py with b.py (76 %, weakening), c.py
    (60 %) and z.py (55 %, a file no review names: not drawn). PR 1 is linked to its
    commit, which changed a.py alone."""
    graph = KnowledgeGraph()
    for number, title in ((1, "Cache the table"), (2, "Rename the table")):
        pr = f"pr/o/r/{number}"
        graph.add(Node(pr, "PullRequest", title, (("title", title), ("number", number))))
        graph.link(pr, "touchesFile", "file/o/r/a.py")
    graph.link("pr/o/r/2", "touchesFile", "file/o/r/b.py")
    graph.link("pr/o/r/2", "touchesFile", "file/o/r/c.py")
    graph.link("pr/o/r/1", "changesFile", "file/o/r/a.py")
    for name, prs in (("a", 2), ("b", 1), ("c", 1), ("z", 0)):
        attrs = (("path", f"{name}.py"), ("revisions", 9)) + ((("prCount", prs),) if prs else ())
        graph.add(Node(f"file/o/r/{name}.py", "SourceFile", f"{name}.py", attrs))
    for partner, degree, trend in (("b", 76, -83), ("c", 60, 0), ("z", 55, None)):
        attrs = (("degree", degree), ("sharedRevisions", 6), ("averageRevisions", 9))
        cid = f"coupling/o/r/{partner}"
        graph.add(Node(cid, "Coupling", f"a.py ~ {partner}.py", attrs + (
            (("trend", trend),) if trend is not None else ())))  # fmt: skip
        graph.link(cid, "couplesFile", "file/o/r/a.py")
        graph.link(cid, "couplesFile", f"file/o/r/{partner}.py")
    return graph


def test_html_browser_draws_coupling_and_lists_a_prs_risks(open_page, tmp_path) -> None:
    page_file = tmp_path / "coupled.html"
    page_file.write_text(to_html(_coupled_graph()), "utf-8")
    opened = open_page(page_file)
    ids = opened.js("() => kgraph.data.nodes.map((n) => n.id)")
    assert "file/o/r/z.py" not in ids  # only the history knows it
    edges = opened.js(
        "() => kgraph.edges.get({filter: (e) => String(e.id).startsWith('coupling-')})"
        ".map((e) => [kgraph.data.nodes[e.from].l, kgraph.data.nodes[e.to].l, e.width, e.dashes])"
    )
    widths = {tuple(sorted(e[:2])): (e[2], e[3]) for e in edges}
    assert widths == {
        ("a.py", "b.py"): (1 + 76 / 25, [3, 5]),
        ("a.py", "c.py"): (1 + 60 / 25, False),
    }
    # The page opens on shared code (a.py and its PRs) and the files coupled to it.
    assert {"file/o/r/a.py", "file/o/r/b.py", "file/o/r/c.py"} <= opened.visible_ids()

    opened.click_node("pr/o/r/1")
    opened.page.wait_for_function(
        "() => document.getElementById('details').dataset.node === 'pr/o/r/1'"
    )
    risks = opened.page.locator("#details h3:has-text('Risks') + ol li").all_inner_texts()
    assert risks == ["b.py\n76 % with a.py", "c.py\n60 % with a.py", "z.py\n55 % with a.py"]
    # PR 2 is not linked to a commit: no risks.
    opened.click_node("pr/o/r/2")
    opened.page.wait_for_function(
        "() => document.getElementById('details').dataset.node === 'pr/o/r/2'"
    )
    assert "Risks" not in opened.page.text_content("#details")
    opened.click_node("file/o/r/a.py")
    opened.page.wait_for_function(
        "() => document.getElementById('details').dataset.node === 'file/o/r/a.py'"
    )
    details = opened.page.text_content("#details")
    assert "Changes together with (2)" in details
    assert "76 %, -83 lately (weakening)" in details and "60 %, 0 lately" in details
    assert opened.errors == [] and opened.requests == [opened.url]


# --- large graphs ---------------------------------------------------------------------------------


def _synthetic_digest(path: Path, prs: int, seed: int = 3) -> None:
    """JSON Lines reviews naming code from a pool where a few names are hot, most are not."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(prs):
            names = {f"module_{rng.randrange(prs * 3)}.helper_{i}_{k}" for k in range(4)}
            names.add(f"hot_function_{int(rng.paretovariate(1.2)) % 40}")
            spans = ", ".join(f"`{n}`" for n in sorted(names))
            record = {"title": f"Change {i}", "summary": f"Touches {spans}.", "repo": "o/r"}
            out.write(json.dumps(record) + "\n")


def test_html_browser_large_graph_is_interactive_within_seconds(open_page, tmp_path) -> None:
    _synthetic_digest(tmp_path / "big.jsonl", 400)
    started = time.perf_counter()
    assert build([str(tmp_path / "big.jsonl")], tmp_path / "out")[0] == 0
    assert time.perf_counter() - started < 60
    drawn = [n for n in _graph(tmp_path / "out")["nodes"] if n["kind"] in DRAWN]
    assert len(drawn) > 2000
    opened_at = time.perf_counter()
    opened = open_page(tmp_path / "out" / "graph.html")
    assert opened.js("() => kgraph.nodes.length") == len(drawn)
    opened.search("hot_function_1")
    opened.page.wait_for_function("() => document.getElementById('status').textContent !== ''")
    assert opened.page.inner_text("#status").endswith("highlighted with their neighbours")
    assert time.perf_counter() - opened_at < 30
    assert opened.errors == [] and opened.requests == [opened.url]


# --- with a repository's history -----------------------------------------------------------------


@pytest.fixture(scope="module")
def history_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory)
    out = tmp_path_factory.mktemp("history-page")
    code, _, stderr = build([str(repo["digests"])], out, "--source", f"{REPO}={repo['root']}")
    assert code == 0, stderr
    return out


def test_html_browser_changed_code_is_solid_named_only_dashed_and_the_panel_shows_the_commit(
    open_page, history_out
) -> None:
    out = history_out
    graph_view = HistoryGraph(out)
    graph = _graph(out)
    changed = {
        (e["source"], e["target"])
        for e in graph["edges"]
        if e["relation"] in ("changesFile", "changesSymbol")
    }
    opened = open_page(out / "graph.html")
    assert opened.errors == [] and opened.requests == [opened.url]
    drawn = opened.js(
        "() => kgraph.edges.get().map((e) => [kgraph.data.nodes[e.from].id, e.title,"
        " kgraph.data.nodes[e.to].id, e.dashes])"
    )
    named_only = [
        (s, t) for s, title, t, dashes in drawn if title.startswith(("touches", "mentions"))
    ]
    assert named_only and all((s, t) not in changed for s, t in named_only)  # one line a pair
    for source, title, target, dashes in drawn:
        if title.startswith("changes"):
            assert not dashes and (source, target) in changed
        elif title.startswith(("touches", "mentions")):
            assert dashes, (source, title, target)
    assert sum(1 for *_, dashes in drawn if not dashes) > len(named_only) // 2
    legend = opened.page.inner_text("#edge-legend")
    assert "changed by the PR's commit" in legend and "named in the review only" in legend
    # A linked PR's panel: its commit and every file the commit changed, with its lines.
    title = "Add an eviction window to the LRU cache (#11)"
    pr = graph_view.prs[title]
    commit = graph_view.merged(title)
    assert commit is not None
    opened.search(title)
    opened.page.wait_for_function(
        "(id) => document.getElementById('details').dataset.node === id", arg=pr["id"]
    )
    details = opened.page.text_content("#details")
    assert "Merged as (found by number)" in details
    assert (
        commit["sha"][:10] in details and commit["date"] in details and commit["title"] in details
    )
    link = opened.page.locator("#details .commit a")
    assert link.get_attribute("href") == commit["sourceUrl"]
    files = graph_view.targets(commit, "hasChange")
    assert f"Changed files ({len(files)})" in details
    for change in files:
        target = graph_view.targets(change, "changedFile")[0]
        assert target["path"] in details
        assert f"+{change['linesAdded']} −{change['linesRemoved']}" in details
    assert "Candidate commits" not in details
    # An unlinked PR shows its candidates instead.
    title = "LRU 缓存新增淘汰窗口"
    opened.search(title)
    opened.page.wait_for_function(
        "(id) => document.getElementById('details').dataset.node === id",
        arg=graph_view.prs[title]["id"],
    )
    details = opened.page.text_content("#details")
    candidates = graph_view.targets(graph_view.prs[title], "candidateCommit")
    assert f"Candidate commits ({len(candidates)})" in details and "Merged as" not in details
    assert all(c["sha"][:10] in details for c in candidates)
