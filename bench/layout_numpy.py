"""What numpy buys the page's layout: one force step of `kgraph.export.layout`, vectorised
with numpy as the layout runs it, against the same arithmetic in plain Python.

The layout's cost is its all-pairs repulsion, capped at WORK_BUDGET pair evaluations per
island (1.5e8): this times one step on an island of --nodes nodes both ways (median of
--repeat) and scales the plain-Python figure to the budget.

    python bench/layout_numpy.py --nodes 1500
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from kgraph.export import layout


def plain_repulsion(x: list[float], y: list[float], half: list[float]) -> tuple[list, list]:
    n = len(x)
    sx, sy = [0.0] * n, [0.0] * n
    for i in range(n):
        xi, yi, hi = x[i], y[i], half[i]
        fx = fy = 0.0
        for j in range(n):
            dx, dy = xi - x[j], yi - y[j]
            dist2 = max(dx * dx + dy * dy, 1.0)
            force = (hi + half[j]) ** 2 / dist2
            fx += dx * force
            fy += dy * force
        sx[i], sy[i] = fx, fy
    return sx, sy


def timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-3000, 3000, size=(2, args.nodes)).astype(np.float32)
    half = np.full(args.nodes, 100.0, dtype=np.float32)
    vector = statistics.median(
        timed(lambda: layout._repulsion(x, y, half)) for _ in range(args.repeat)
    )
    lists = x.tolist(), y.tolist(), half.tolist()
    plain = statistics.median(timed(lambda: plain_repulsion(*lists)) for _ in range(args.repeat))
    pairs = args.nodes**2
    print(
        f"one repulsion step, {args.nodes} nodes ({pairs / 1e6:.2f} M pairs), median of "
        f"{args.repeat}: numpy {vector * 1e3:.1f} ms, plain Python {plain * 1e3:.0f} ms "
        f"({plain / vector:.0f}x)"
    )
    budget = layout.WORK_BUDGET / pairs
    print(
        f"at the work budget ({layout.WORK_BUDGET:.1e} pairs an island): numpy "
        f"{vector * budget:.1f} s, plain Python {plain * budget:.0f} s"
    )


if __name__ == "__main__":
    main()
