"""The pattern threshold that maximises F1 on the tune corpus, and the figures around it.

Builds each tune corpus (tests/data/patterns/tune, tests/data/prose/tune, the shared seeds
and dev) with `--pattern-threshold 0`, so that every pattern mention keeps its confidence,
then counts patterns over all four at each threshold from 0.05 to 0.95 and prints the table
and the best threshold. `kgraph.catalog.DEFAULT_PATTERN_THRESHOLD` is set from it. Never
run it on a check split: the check split measures, it does not tune.

    python bench/pattern_threshold.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from kgraph import evaluate

ROOT = Path(__file__).resolve().parent.parent
TUNE = (
    ROOT / "tests/data/patterns/tune",
    ROOT / "tests/data/prose/tune",
    ROOT.parent / "shared/seeds",
    ROOT.parent / "shared/dev",
)
GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))


def pattern_sets(folder: Path, out: Path) -> list[tuple[set[str], set[str]]]:
    """(found, gold) pattern ids of each PR of one corpus, found with their confidence."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kgraph",
            "build",
            str(folder),
            "-o",
            str(out),
            "-q",
            "--only",
            "json",
            "--no-cache",
            "--pattern-threshold",
            "0",
        ],
        check=True,
    )
    gold = evaluate.read_gold(folder / "gold.json")
    view = evaluate.read_graph(out)
    result: list[tuple[set[str], set[str]]] = []
    by_title = {t: pr for pr in view.prs for t in sorted(pr.titles)}
    for g in gold:
        pr = by_title.pop(evaluate.normalize_title(g["title"]), None)
        found = {p: pr.pattern_confidence.get(p, 1.0) for p in pr.values["patterns"]} if pr else {}
        result.append((found, set(g.get("patterns", []))))  # type: ignore[arg-type]
    return result


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, folder in enumerate(TUNE):
            rows += pattern_sets(folder, Path(tmp) / str(i))
    best = (0.0, 0.0)
    print(
        f"{'threshold':<10} {'found':>6} {'matched':>8} {'precision':>10} {'recall':>7} {'f1':>6}"
    )
    for t in GRID:
        found = sum(1 for f, _ in rows for c in f.values() if c >= t)  # type: ignore[attr-defined]
        hit = sum(1 for f, w in rows for p, c in f.items() if c >= t and p in w)  # type: ignore[attr-defined]
        gold = sum(len(w) for _, w in rows)
        p, r = (hit / found if found else 1.0), (hit / gold if gold else 1.0)
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        best = max(best, (f1, -t))
        print(f"{t:<10.2f} {found:>6} {hit:>8} {p:>10.3f} {r:>7.3f} {f1:>6.3f}")
    print(f"best threshold: {-best[1]:.2f} (F1 {best[0]:.3f})")


if __name__ == "__main__":
    main()
