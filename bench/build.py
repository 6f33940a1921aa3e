"""Benchmark: kgraph build at 1k, 10k and 100k entries beside a naive baseline and the floor.

One invocation generates (once, cached) the synthetic corpora of `bench/generate.py` and
runs, for each size:

- floor       reading every digest and running one regex over it;
- kgraph      a clean `kgraph build` in one process writing the data outputs (Turtle,
              N-Triples, JSON-LD, JSON), without the extraction cache; its triple count
              (the lines of its graph.nt) is printed;
- kgraph ttl  the same writing Turtle alone: the baseline's one output, for the fair
              comparison (the same entries in, one Turtle file out);
- kgraph -j 2 the same as kgraph with two processes (and the caches written, for the
              next run);
- +1 digest   adding one new digest (a day's worth) to that build: an incremental rebuild
              in one process that extracts only the new digest, links only the PRs and
              entities it reaches (`kgraph.delta`), and writes only the subjects that
              changed, copying the others' blocks from the last outputs;
- +1 moved    the digests of that build copied to a new folder (outside the timing), and
              one more new digest: a pipeline that checks the digests out afresh each run;
- kgraph+html the default build with every output, including the HTML page (only up to
              --html-max entries), which writes the cache like any default build;
- +1 +html    adding the same digest to that default build: the daily build of a team
              that publishes the page too;
- baseline    bench/naive.py, the afternoon rdflib script (Graph.add per triple, then
              serialize), measured up to --baseline-max entries and extrapolated linearly
              beyond, marked "~". It reads the same entries (the row says how many) and
              prints its triple count.

Each is a separate process: wall time (median of --repeat runs; --repeat-large runs from
100k entries up), entries/s, peak RSS of the largest process of its tree, the peak memory of
the whole tree (its processes' PSS, summed: what `-j` workers add, which the largest
process alone does not show), and CPU seconds;
then the ratios from this same run: baseline÷kgraph ttl and baseline÷kgraph (the
baseline's time over kgraph's), kgraph/floor, +1 digest/kgraph, +1 moved/kgraph and
+1 +html/kgraph+html.
The runs go in rounds, one of each variant a round, so that a slow spell of a shared
machine slows all of them rather than every run of one: compare the ratios.

    python bench/build.py                      # 1k, 10k, 100k
    python bench/build.py --sizes 1000,10000 --repeat 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.generate import generate  # noqa: E402

DATA_OUTPUTS = ["--only", "turtle", "--only", "ntriples", "--only", "jsonld", "--only", "json"]
DISK_PER_ENTRY = 100_000  # bytes free in --work: 45 kB an entry of outputs, held twice at once
FLOOR = (
    "import re, sys, pathlib\n"
    "files = sorted(pathlib.Path(sys.argv[1]).rglob('*.txt'))\n"
    "text = ''.join(p.read_text('utf-8') for p in files)\n"
    "print(sum(1 for _ in re.finditer(r'`[^`\\n]+`', text)), 'spans')\n"
)


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float
    output: str
    tree_mb: float = 0.0  # peak of the summed PSS of the process and its children


SAMPLE_EVERY = 0.2  # seconds between memory samples: a few percent of one CPU at 100k


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as listed:
                found += [int(child) for child in listed.read().split()]
        except OSError:
            continue
    return found


def _pss_kb(pid: int) -> int:
    """Proportional set size: a page shared by n processes counts 1/n in each, so the sum
    over a tree of forked processes is the memory the tree really holds."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_memory_kb(pid: int) -> int:
    """The summed PSS of a process and all its descendants now (0 where /proc lacks it)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        total += _pss_kb(current)
        pending += _children(current)
    return total


class TreeMemory:
    """Samples a running process tree's memory in a thread until stopped; keeps the peak."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak_kb = pid, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, tree_memory_kb(self.pid))
            self._stop.wait(SAMPLE_EVERY)

    def stop(self) -> float:
        """Stop sampling; the peak in MB."""
        self._stop.set()
        self._thread.join()
        return self.peak_kb / 1024


def measure(command: list[str]) -> Run:
    """Run a command to the end; its wall time, CPU time and peak RSS (from wait4), and
    its tree's peak memory (sampled)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    memory = TreeMemory(process.pid)
    assert process.stdout is not None and process.stderr is not None
    out = process.stdout.read().decode()
    err = process.stderr.read().decode()
    tree_mb = memory.stop()  # before wait4 reaps the process and its /proc entry goes
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{err}")
    rss_mb = usage.ru_maxrss / 1024
    # A run shorter than a sample, or without /proc, has no sample: it is one process
    # as far as anyone could tell, and its largest process is its peak.
    return Run(wall, usage.ru_utime + usage.ru_stime, rss_mb, out.strip(), max(tree_mb, rss_mb))


def median(runs: list[Run]) -> Run:
    ordered = sorted(runs, key=lambda r: r.wall)
    middle = ordered[len(ordered) // 2]
    return Run(
        statistics.median(r.wall for r in runs),
        statistics.median(r.cpu for r in runs),
        max(r.rss_mb for r in runs),
        middle.output,
        max(r.tree_mb for r in runs),
    )


def corpus(work: Path, entries: int, seed: int) -> Path:
    folder = work / f"corpus-{entries}-{seed}"
    done = folder / ".complete"
    if not done.exists():
        made = generate(folder, entries, seed)
        done.write_text(f"{made.entries} entries, {made.bytes} bytes\n")
    return folder


def new_digests(work: Path, seed: int) -> tuple[Path, Path]:
    """Two more days' digests, for the incremental runs: generated with another seed, so
    their reviews are new (some of them of PRs the corpus already has)."""
    folder = work / f"extra-{seed}"
    if not (folder / ".complete").exists():
        generate(folder, 40, seed + 1000)
        (folder / ".complete").write_text("done\n")
    first, second, *_ = sorted(folder.rglob("*.txt"))
    return first, second


def moved(folder: Path, checkout: Path, *extras: Path) -> None:
    """The corpus and `extras` copied to a new folder, as a pipeline checks them out: the
    corpus into `digests/`, the extra digests, under their names, into `extra/`, so that
    they are read in the order they were before (the corpus first)."""
    shutil.rmtree(checkout, ignore_errors=True)
    shutil.copytree(folder, checkout / "digests", ignore=shutil.ignore_patterns(".complete"))
    (checkout / "extra").mkdir()
    for extra in extras:
        shutil.copy(extra, checkout / "extra" / extra.name)


def triples(out: Path) -> int:
    """The triples of a build: the lines of its N-Triples file."""
    with open(out / "graph.nt", "rb") as nt:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: nt.read(1 << 20), b""))


def kgraph(*args: str) -> list[str]:
    return [sys.executable, "-m", "kgraph", "build", *args]


def row(label: str, size: int, run: Run, estimated: bool = False) -> str:
    mark = "~" if estimated else " "
    rate = size / run.wall if run.wall else 0.0
    return (
        f"{size:>8,}  {label:<16} {mark}{run.wall:>8.2f} {mark}{rate:>10,.0f}"
        f" {mark}{run.rss_mb:>8.0f} {mark}{run.tree_mb:>8.0f} {mark}{run.cpu:>8.2f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--repeat-large", type=int, default=1, help="runs from 100k entries up")
    parser.add_argument("--baseline-max", type=int, default=100_000)
    parser.add_argument("--html-max", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kgraph-bench"))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    needed, free = max(sizes) * DISK_PER_ENTRY, shutil.disk_usage(work).free
    if free < needed:  # or a build fails hours in, on "No space left on device"
        raise SystemExit(
            f"bench: {work} has {free / 1e9:.1f} GB free; {max(sizes):,} entries need about "
            f"{needed / 1e9:.0f} GB (a build's outputs and the temporary files of the next, "
            "the caches, the baseline's Turtle). Free some space or choose --work."
        )

    print(f"kgraph benchmark: sizes {sizes}, {args.repeat} runs each, work folder {work}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    print(
        f"{'entries':>8}  {'run':<16} {'wall s':>9} {'entries/s':>11} {'RSS MB':>9}"
        f" {'tree MB':>9} {'CPU s':>9}"
    )
    results: dict[tuple[str, int], Run] = {}
    baseline_measured: tuple[int, Run] | None = None
    for size in sizes:
        folder = corpus(work, size, args.seed)
        out = work / "out"
        extra, another = new_digests(work, args.seed)
        checkout = work / "checkout"
        to = ("-o", str(out))
        # (label, command, from an empty output folder, what to do first)
        variants: list[tuple[str, list[str], bool, Callable[[], object] | None]] = [
            ("floor", [sys.executable, "-c", FLOOR, str(folder)], True, None),
            ("kgraph", kgraph(str(folder), *to, "--no-cache", *DATA_OUTPUTS), True, None),
            ("kgraph ttl", kgraph(str(folder), *to, "--no-cache", "--only", "turtle"), True, None),
            ("kgraph -j 2", kgraph(str(folder), *to, "-j", "2", *DATA_OUTPUTS), True, None),
            # Adds a digest to the -j 2 build just made: yesterday's outputs, its
            # extraction cache, link store and output index.
            ("+1 digest", kgraph(str(folder), str(extra), *to, *DATA_OUTPUTS), False, None),
            # The same digests and one more, checked out afresh into a new folder.
            (
                "+1 moved",
                kgraph(str(checkout), *to, *DATA_OUTPUTS),
                False,
                partial(moved, folder, checkout, extra, another),
            ),
        ]
        if size <= args.html_max:
            variants.append(("kgraph+html", kgraph(str(folder), "-o", str(out)), True, None))
            added = kgraph(str(folder), str(extra), "-o", str(out))
            variants.append(("+1 +html", added, False, None))
        if size <= args.baseline_max:
            naive = [sys.executable, str(ROOT / "bench" / "naive.py"), str(folder)]
            variants.append(("baseline", [*naive, str(work / "b.ttl")], True, None))
        runs: dict[str, list[Run]] = {label: [] for label, *_ in variants}
        counted: dict[str, int] = {}
        # In rounds of one run of each: a slow spell of a shared machine then falls on
        # every variant alike, not on all the runs of one, and the ratios stay fair.
        for _ in range(args.repeat if size < 100_000 else args.repeat_large):
            for label, command, fresh, first in variants:
                if fresh:
                    shutil.rmtree(out, ignore_errors=True)
                if first is not None:
                    first()
                runs[label].append(measure(command))
                if label == "kgraph":
                    counted[label] = triples(out)
        for label, *_ in variants:
            results[label, size] = run = median(runs[label])
            shown = "" if label == "floor" else f"   {run.output}"
            if label in counted:
                shown += f"; {counted[label]} triples"
            print(row(label, size, run) + shown, flush=True)
        if size <= args.baseline_max:
            baseline_measured = (size, results["baseline", size])
        elif baseline_measured is not None:
            base_size, base = baseline_measured
            scale = size / base_size
            results["baseline", size] = run = Run(
                base.wall * scale,
                base.cpu * scale,
                base.rss_mb * scale,
                "extrapolated",
                base.tree_mb * scale,
            )
            print(row("baseline", size, run, estimated=True) + "   (linear from "
                  f"{base_size:,} entries)", flush=True)  # fmt: skip

    print("\nratios (this run; baseline÷kgraph is the baseline's time over kgraph's):")
    print(
        f"{'entries':>8}  {'baseline÷ttl':>13} {'baseline÷kgraph':>16} {'baseline÷-j 2':>14}"
        f" {'kgraph/floor':>13} {'+1/kgraph':>10} {'+1 moved/kgraph':>16}"
        f" {'+1 +html/+html':>15}"
    )
    for size in sizes:
        k, k2, ttl = (results[label, size] for label in ("kgraph", "kgraph -j 2", "kgraph ttl"))
        base = results.get(("baseline", size))
        mark = "~" if base and base.output == "extrapolated" else ""
        ratios = [f"{base.wall / r.wall:.2f}{mark}" if base else "-" for r in (ttl, k, k2)]
        vs_floor = k.wall / results["floor", size].wall
        incremental = results["+1 digest", size].wall / k.wall
        moved_ratio = results["+1 moved", size].wall / k.wall
        with_page = results.get(("+1 +html", size))
        daily = f"{with_page.wall / results['kgraph+html', size].wall:.2f}" if with_page else "-"
        print(
            f"{size:>8,}  {ratios[0]:>13} {ratios[1]:>16} {ratios[2]:>14} {vs_floor:>13.1f}"
            f" {incremental:>10.2f} {moved_ratio:>16.2f} {daily:>15}"
        )
    if len(sizes) > 1:
        for label in ("kgraph", "kgraph -j 2"):
            for first, last in pairwise(sizes):
                growth = results[label, last].wall / results[label, first].wall
                print(
                    f"{label}: time grows {growth:.1f}x from {first:,} to {last:,} entries "
                    f"({last / first:.0f}x)."
                )


if __name__ == "__main__":
    main()
