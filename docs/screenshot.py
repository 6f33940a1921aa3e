"""Take docs/graph.png: the bundled examples' graph page in headless Debian Chromium.

    .venv/bin/python docs/screenshot.py [--page GRAPH_HTML] [--out PNG] [--search TEXT]

By default it builds the bundled examples (examples/) into a temporary folder, searches
`_sliding_window_lookup`, opens the first PR that mentions it and writes docs/graph.png,
the picture the README shows.
Chinese titles need a CJK font (`apt-get install fonts-wqy-microhei`); the page itself
uses whatever fonts the reader has.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--page", type=Path, help="a built graph.html (default: build the examples)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "graph.png")
    parser.add_argument("--search", default="_sliding_window_lookup", help="'' for none")
    parser.add_argument(
        "--open-pr",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="then open the first PR the search found, to show its details",
    )
    parser.add_argument(
        "--overview",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="zoom out to the whole graph at the end, keeping the highlight",
    )
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=860)
    args = parser.parse_args()
    page_path, out, query = args.page, args.out, args.search
    with tempfile.TemporaryDirectory() as tmp:
        if page_path is None:
            kgraph = Path(sys.executable).with_name("kgraph")
            examples = ROOT / "examples"
            subprocess.run([str(kgraph), "build", str(examples), "-o", tmp, "-q"], check=True)
            page_path = Path(tmp) / "graph.html"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": args.width, "height": args.height})
            page.goto(page_path.resolve().as_uri())
            page.wait_for_selector("body[data-ready=true]")
            if query:
                page.fill("#search", query)
                page.press("#search", "Enter")
                page.wait_for_timeout(800)
                if args.open_pr and page.locator("#details li button").count():
                    page.locator("#details li button").first.click()
                    page.wait_for_timeout(800)
            if args.overview:
                # Let the page's zoom animation end first (vis-network counts it in frames).
                page.wait_for_timeout(1500)
                page.evaluate("() => kgraph.network.fit({ animation: false })")
                page.wait_for_timeout(300)
            page.screenshot(path=str(out))
            browser.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
