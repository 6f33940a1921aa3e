"""Function coupling on a real history: what it costs, and how close git's hunk headers
come to the definitions a parser finds.

    python bench/function_coupling.py GIT_DIR REV [--repo OWNER/NAME] [--min-revs 50 20]
        [--repeat 3] [--sample 300]

1. **Cost**, per `--min-revs` (the files whose functions are counted: those with at least
   that many revisions), medians of `--repeat` runs: the seconds `couple_functions` takes
   after the file coupling (the diffs read and the units counted), the changes and units
   it reads, the pairs it keeps and how many of them join two files.
2. **Agreement with a parser.** For `--sample` changes (every k-th of those counted), the
   functions each changed file's hunks name (`units_of`) against the definitions whose
   lines the diff touches, found by parsing both versions of the file with the source
   index's definitions code (`kgraph.history.changes`, what a linked commit's
   `kg:changesSymbol` is), both by bare name: precision and recall of the cheap reading.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from kgraph.history import open_history
from kgraph.history.changes import _symbols
from kgraph.history.changesets import changesets_of
from kgraph.history.coupling import CouplingOptions, couple
from kgraph.history.functions import couple_functions, language_of, split_unit, units_of
from kgraph.history.log import read_diffs


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("git_dir", type=Path)
    parser.add_argument("rev")
    parser.add_argument("--repo", default="vllm-project/vllm")
    parser.add_argument("--min-revs", type=int, nargs="+", default=[50, 20])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sample", type=int, default=300)
    args = parser.parse_args(argv)
    history = open_history(args.repo, args.git_dir, args.git_dir, args.rev, None)
    changesets = changesets_of(history.index)
    print(f"{len(changesets):,} changes")

    print("\n== cost (after the file coupling), medians of", args.repeat, "runs")
    print("min revs | files | changes read | units | pairs | across files | seconds (runs)")
    last = None
    for min_revs in args.min_revs:
        options = CouplingOptions(functions=True, function_min_revs=min_revs)
        files = couple(changesets, options)
        chosen = sum(
            1 for n, r in files.revisions.items() if r >= min_revs and language_of(n) is not None
        )
        seconds = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            result = couple_functions(history, files, changesets)
            seconds.append(time.perf_counter() - started)
        across = sum(split_unit(p.entity)[0] != split_unit(p.coupled)[0] for p in result.pairs)
        runs = ", ".join(f"{s:.1f}" for s in seconds)
        print(
            f"{min_revs:>8} | {chosen:>5} | {result.changesets:>12,} | {len(result.revisions):>5,}"
            f" | {len(result.pairs):>5,} | {across:>12,}"
            f" | {statistics.median(seconds):.1f} ({runs})"
        )
        last = (files, result)
    assert last is not None
    files, result = last
    print("\nstrongest pairs across two files:")
    shown = [p for p in result.pairs if split_unit(p.entity)[0] != split_unit(p.coupled)[0]]
    for p in shown[:8]:
        a, b = split_unit(p.entity), split_unit(p.coupled)
        print(f"  {a[0]}#{a[1]} ~ {b[0]}#{b[1]}: {p.degree} % of {p.average_revisions} revs")

    print(f"\n== hunk headers against parsed definitions, {args.sample} changes")
    index = history.index
    positions = index.position_of
    counted = [c for c in changesets if 0 < len(c.files) <= 30]
    step = max(1, len(counted) // args.sample)
    sample = [index.at(positions[c.sha]) for c in counted[::step][: args.sample]]
    found = agreed = expected = 0
    missing: list = []
    pairs = [(c.sha, c.first_parent) for c in sample]
    for commit, (_, diffs) in zip(sample, read_diffs(args.git_dir, pairs, missing), strict=True):
        parsed: dict[str, set[str]] = {}
        for symbol in _symbols(args.git_dir, commit, diffs):
            if language_of(symbol.path) == "python":
                path = symbol.path
                parsed.setdefault(path, set()).add(symbol.qualname.rsplit(".", 1)[-1])
        for diff in diffs:
            if language_of(diff.path) != "python" or diff.unread or diff.binary:
                continue
            cheap = units_of("python", diff)
            exact = parsed.get(diff.path, set()) | parsed.get(diff.old_path, set())
            found += len(cheap)
            expected += len(exact)
            agreed += len(cheap & exact)
    print(
        f"Python files' functions: hunk headers name {found:,}, the parser {expected:,}, both "
        f"{agreed:,}: precision {agreed / max(found, 1):.3f}, "
        f"recall {agreed / max(expected, 1):.3f}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
