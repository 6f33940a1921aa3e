"""How fast the HTML page becomes usable as graphs grow: 500, 2,000 and 5,000 drawn nodes.

    .venv/bin/python bench/html.py [--sizes 500 2000 5000] [--runs 5]

For each size it writes a synthetic corpus of review digests (JSON Lines, two repositories,
several dates; a few hot functions shared by many PRs, most code named by one PR), runs
`kgraph build` on it, and opens graph.html in headless Debian Chromium several times. It
prints, per size, the medians of:

- render: seconds for Python to lay out and write graph.html (`html.to_html`);
- drawn: ms from navigation start until vis-network has drawn the graph (the page's clock);
- usable: ms from navigation start until the page answered a search (`_ready + search`),
  measured from Python around `page.goto`, with the network idle (the page makes no
  request at all, which the run checks);
- search: ms from typing a name until the page highlighted the matches;
- the page's size in bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named html.py, as the issue asks: keep its folder off the import path so that
# `import html` (the standard library's, used by networkx) does not find it.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from playwright.sync_api import sync_playwright  # noqa: E402

from kgraph.export import json_graph  # noqa: E402
from kgraph.export.html import DRAWN_KINDS, DRAWN_RELATIONS, HtmlOptions, to_html  # noqa: E402
from kgraph.pipeline import BuildOptions, run  # noqa: E402

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
NODES_PER_PR = 6.0  # first guess; corrected after one build


def write_corpus(folder: Path, prs: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    repos = ["vllm-project/vllm", "sgl-project/sglang"]
    dates = [f"2026-10-{d:02d}" for d in range(1, 29)]
    with (folder / "reviews.jsonl").open("w", encoding="utf-8") as out:
        for i in range(prs):
            repo = repos[i % 2]
            names = {f"mod{rng.randrange(prs)}.py"}
            names |= {f"Class{i}.method_{k}" for k in range(rng.randint(2, 5))}
            for _ in range(rng.randint(0, 2)):
                names.add(f"hot_{int(rng.paretovariate(1.1)) % max(8, prs // 12)}")
            spans = "、".join(f"`{n}`" for n in sorted(names))
            issue = f" 关联 #{50000 + rng.randrange(prs)}。" if rng.random() < 0.3 else ""
            record = {
                "title": f"修复调度器第 {i} 号问题 / fix scheduler case {i}",
                "summary": f"改动 {spans}，保持接口兼容。{issue}值得精读。",
                "repo": repo,
                "date": rng.choice(dates),
                "number": 40000 + i,
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def build_size(target: int, folder: Path) -> tuple[Path, int]:
    prs = max(10, round(target / NODES_PER_PR))
    for _ in range(3):
        write_corpus(folder, prs)
        # A clean build each time: after a build that relinked from the last one's link
        # store, `result.graph` reads that store, which `run` has closed.
        options = BuildOptions(cache=False)
        result = run([str(folder / "reviews.jsonl")], folder / "out", options)
        drawn = sum(1 for n in result.graph.nodes.values() if n.kind in DRAWN_KINDS)
        if abs(drawn - target) <= target * 0.03:
            break
        prs = max(10, round(prs * target / drawn))
    return folder / "out", drawn


def measure(page_file: Path, runs: int) -> dict[str, float]:
    drawn, usable, search = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for _ in range(runs):
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            requests: list[str] = []
            page.on("request", lambda r, seen=requests: seen.append(r.url))
            started = time.perf_counter()
            page.goto(page_file.as_uri(), wait_until="load")
            page.wait_for_selector("body[data-ready=true]", timeout=120_000)
            typed = time.perf_counter()
            page.fill("#search", "hot_1")
            page.press("#search", "Enter")
            page.wait_for_function(
                "() => document.getElementById('status').textContent !== ''", timeout=60_000
            )
            page.evaluate("() => new Promise((r) => requestAnimationFrame(() => r()))")
            done = time.perf_counter()
            drawn.append(page.evaluate("() => window.kgraphReadyAt"))
            usable.append((done - started) * 1000)
            search.append((done - typed) * 1000)
            assert requests == [page_file.as_uri()], requests
            context.close()
        browser.close()
    return {
        "drawn": statistics.median(drawn),
        "usable": statistics.median(usable),
        "search": statistics.median(search),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000, 5000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{'nodes':>6} {'edges':>6} {'render s':>9} {'drawn ms':>9} {'usable ms':>10}"
        f" {'search ms':>10} {'html bytes':>11}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.sizes:
            folder = Path(tmp) / str(target)
            folder.mkdir()
            out, drawn = build_size(target, folder)
            graph = json_graph.from_json((out / "graph.json").read_text("utf-8"))
            renders = []
            for _ in range(3):
                started = time.perf_counter()
                page = to_html(graph, HtmlOptions(max_nodes=0))
                renders.append(time.perf_counter() - started)
            page_file = out / "bench.html"
            page_file.write_text(page, "utf-8")
            drawn_ids = {n.id for n in graph.nodes.values() if n.kind in DRAWN_KINDS}
            edges = sum(
                1
                for e in graph.edges
                if e.relation in DRAWN_RELATIONS and {e.source, e.target} <= drawn_ids
            )
            times = measure(page_file, args.runs)
            print(
                f"{drawn:>6} {edges:>6} {statistics.median(renders):>9.2f}"
                f" {times['drawn']:>9.0f} {times['usable']:>10.0f} {times['search']:>10.0f}"
                f" {len(page.encode('utf-8')):>11,}",
                flush=True,
            )


if __name__ == "__main__":
    main()
