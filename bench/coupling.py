"""Change coupling on a real history: equality with code-maat's definition, what renames
change, and what coupling costs a build.

    python bench/coupling.py GIT_DIR REV DIGESTS [--repo OWNER/NAME] [--repeat N]

1. **Equality.** `kgraph build --source … --no-renames` then `kgraph query -n coupling
   -f csv`, against `bench/codemaat_coupling.py` (code-maat's algorithm rewritten over
   `git log --raw`, independent of kgraph): byte for byte.
2. **Renames.** The pairs with renames followed against those without: how many appear,
   how many old-name pairs are merged into a pair of today's names, how many change.
3. **Speed**, medians of N runs: reading the log, counting the pairs, and a whole build
   with history and coupling against the same build with `--no-coupling` (the source
   index cached): the first time (the log read), with the log index cached (the pairs
   counted), and with the pairs cached. And the count's peak memory.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from kgraph.history.changesets import read_changesets
from kgraph.history.coupling import CouplingOptions, couple

HERE = Path(__file__).resolve().parent
KGRAPH = [sys.executable, "-m", "kgraph"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, check=False)


def timed(*args: str) -> float:
    started = time.perf_counter()
    result = run(*args)
    if result.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} failed: {result.stderr}")
    return time.perf_counter() - started


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("git_dir")
    parser.add_argument("rev")
    parser.add_argument("digests")
    parser.add_argument("--repo", default="vllm-project/vllm")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    spec = f"{args.repo}={args.git_dir}@{args.rev}"
    work = Path(tempfile.mkdtemp(prefix="kgraph-coupling-"))
    try:
        out = work / "out"
        build = [*KGRAPH, "build", args.digests, "-o", str(out), "--source", spec, "-q"]
        build += ["--only", "turtle"]

        # 1. equality
        print("== equality with code-maat's definition (--no-renames, code-maat's defaults)")
        started = time.perf_counter()
        reference = run(sys.executable, str(HERE / "codemaat_coupling.py"), args.git_dir, args.rev)
        reference_s = time.perf_counter() - started
        timed(*build, "--no-renames")  # also indexes the checkout once, for the builds below
        ours = run(*KGRAPH, "query", str(out), "-n", "coupling", "-f", "csv").stdout
        rows = len(reference.stdout.splitlines()) - 1
        same = ours == reference.stdout
        print(f"reference {rows} rows in {reference_s:.1f}s; kgraph {len(ours.splitlines()) - 1}")
        print(f"identical: {same}")
        if not same:
            left, right = set(ours.splitlines()), set(reference.stdout.splitlines())
            print(f"only kgraph: {sorted(left - right)[:10]}")
            print(f"only reference: {sorted(right - left)[:10]}")

        # 2. renames
        print("\n== renames followed against code-maat's (no renames)")
        changesets = read_changesets(Path(args.git_dir), args.rev)
        plain = couple(changesets, CouplingOptions(follow_renames=False))
        followed = couple(changesets)
        report_renames(plain, followed)

        # 3. speed
        print(f"\n== speed (medians of {args.repeat})")
        logs, counts = [], []
        for _ in range(args.repeat):
            started = time.perf_counter()
            changesets = read_changesets(Path(args.git_dir), args.rev)
            logs.append(time.perf_counter() - started)
            started = time.perf_counter()
            couple(changesets)
            counts.append(time.perf_counter() - started)
        print(
            f"git log --raw, parsed: {statistics.median(logs):.2f}s for {len(changesets):,} changes"
        )
        print(f"counting the pairs (renames followed): {statistics.median(counts):.2f}s")
        tracemalloc.start()
        couple(changesets)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"peak memory of the count: {peak / 2**20:.0f} MB")
        rounds: dict[str, list[float]] = {
            k: [] for k in ("cold-", "cold+", "warm-", "counted", "cached")
        }
        for _ in range(args.repeat):
            for cold in ("cold-", "cold+"):  # the log read, matching done, pairs counted
                for cached in out.glob(".kgraph/history-*.json"):
                    cached.unlink()
                for cached in out.glob(".kgraph/coupling-*.json"):
                    cached.unlink()
                rounds[cold].append(timed(*build, *(["--no-coupling"] if cold == "cold-" else [])))
            rounds["warm-"].append(timed(*build, "--no-coupling"))  # the history's caches
            for cached in out.glob(".kgraph/coupling-*.json"):
                cached.unlink()
            rounds["counted"].append(timed(*build))  # the log index cached, the pairs not
            rounds["cached"].append(timed(*build))
        m = {k: statistics.median(v) for k, v in rounds.items()}
        for name, runs in rounds.items():  # the machine is noisy: the runs behind each median
            print(f"runs {name}: {', '.join(f'{r:.2f}' for r in runs)}")
        print(f"first build with history, --no-coupling: {m['cold-']:.2f}s")
        print(
            f"first build with history and coupling: {m['cold+']:.2f}s "
            f"(+{m['cold+'] - m['cold-']:.2f}s)"
        )
        print(f"later build, --no-coupling: {m['warm-']:.2f}s")
        print(
            f"later build, pairs counted: {m['counted']:.2f}s (+{m['counted'] - m['warm-']:.2f}s)"
        )
        print(f"later build, pairs cached: {m['cached']:.2f}s (+{m['cached'] - m['warm-']:.2f}s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report_renames(plain, followed) -> None:  # type: ignore[no-untyped-def]
    before = {(p.entity, p.coupled): p for p in plain.pairs}
    after = {(p.entity, p.coupled): p for p in followed.pairs}
    kept = before.keys() & after.keys()
    changed = sum(
        1
        for k in kept
        if (before[k].degree, before[k].average_revisions)
        != (after[k].degree, after[k].average_revisions)
    )
    renamed_away = set(plain.revisions) - set(followed.revisions)  # names no longer used
    merged = [k for k in before.keys() - after.keys() if renamed_away & set(k)]
    print(f"pairs: {len(before)} without renames, {len(after)} with")
    print(f"only with renames (added): {len(after.keys() - before.keys())}")
    print(
        f"only without (gone): {len(before.keys() - after.keys())}, of which {len(merged)} "
        "name a file by an old name (merged into today's name)"
    )
    print(f"in both: {len(kept)}, of which {changed} with another degree or average-revs")
    print(f"earlier names followed: {followed.renamed}")


if __name__ == "__main__":
    main(sys.argv[1:])
