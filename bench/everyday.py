"""Benchmark: the everyday commands besides a build: a named query, and `--source` resolution.

    python bench/everyday.py [--entries 10000] [--source-entries 1000] [--runs 5]

On the generated corpus of `bench/generate.py` (cached in --work, as `bench/build.py` does) it
times, as separate processes, median of --runs:

- query      `kgraph query OUT --name shared-code` and `--name who-touches --param symbol=…`
             on a default build of --entries entries (the build is made once, untimed);
- source     a clean build of --source-entries entries with `--source` naming a plain
             folder that defines vLLM's files, classes and functions of the corpus (written
             from the generator's vocabulary), against the same build without `--source`,
             interleaved; the difference is what resolution costs.

Run it with another checkout's `src/` first on PYTHONPATH to compare code.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.build import corpus  # noqa: E402
from bench.generate import REPOS, _code_base  # noqa: E402


def kgraph(*args: str) -> list[str]:
    return [sys.executable, "-m", "kgraph", *args]


def timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return wall, done.stdout + done.stderr


def write_checkout(folder: Path, seed: int) -> int:
    """vLLM's code base as the generator names it: each file defines some of its classes
    (with their methods) and functions. The number of definitions written."""
    spec = REPOS[0]
    code = _code_base(spec, random.Random(f"{seed}:{spec.name}"))
    shutil.rmtree(folder, ignore_errors=True)
    rng = random.Random(seed)
    files = code.files.items
    bodies: dict[str, list[str]] = {f: [] for f in files}
    methods: dict[str, list[str]] = {}
    for method in code.methods.items:
        owner, _, name = method.partition(".")
        methods.setdefault(owner, []).append(name)
    for cls in code.classes.items:
        lines = [f"class {cls}:"]
        lines += [f"    def {m}(self):\n        pass" for m in sorted(set(methods.get(cls, [])))]
        if len(lines) == 1:
            lines.append("    pass")
        bodies[rng.choice(files)].append("\n".join(lines))
    for function in code.functions.items:
        bodies[rng.choice(files)].append(f"def {function}():\n    pass")
    for name, body in bodies.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n\n\n".join(body) + "\n", encoding="utf-8")
    return len(code.classes.items) + len(code.functions.items) + len(code.methods.items)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--source-entries", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kgraph-bench"))
    args = parser.parse_args(argv)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    import kgraph as package

    print(f"kgraph {Path(package.__file__).parent}; {args.runs} runs, medians")

    built = work / "everyday-out"
    shutil.rmtree(built, ignore_errors=True)
    timed(kgraph("build", str(corpus(work, args.entries, args.seed)), "-o", str(built), "-q"))
    queries = {
        "shared-code": ["--name", "shared-code"],
        "who-touches": ["--name", "who-touches", "--param", "symbol=Scheduler.schedule"],
    }
    times: dict[str, list[float]] = {name: [] for name in queries}
    for _ in range(args.runs):
        for name, options in queries.items():
            wall, _ = timed(kgraph("query", str(built), *options, "--format", "csv"))
            times[name].append(wall)
    for name, walls in times.items():
        print(f"query {name:<12} {args.entries:>7,} entries  {statistics.median(walls):6.2f} s")

    small = corpus(work, args.source_entries, args.seed)
    checkout = work / f"everyday-checkout-{args.seed}"
    defined = write_checkout(checkout, args.seed)
    out = work / "everyday-source"
    plain = kgraph("build", str(small), "-o", str(out), "--no-cache", "--only", "json")
    with_source = [*plain, "--source", f"{REPOS[0].name}={checkout}"]
    walls: dict[str, list[float]] = {"without": [], "with": []}
    said = ""
    for _ in range(args.runs):
        for label, command in (("without", plain), ("with", with_source)):
            shutil.rmtree(out, ignore_errors=True)
            wall, said = timed(command) if label == "with" else (timed(command)[0], said)
            walls[label].append(wall)
    without, with_ = (statistics.median(walls[k]) for k in ("without", "with"))
    print(
        f"build without --source {args.source_entries:>7,} entries  {without:6.2f} s\n"
        f"build with --source    {args.source_entries:>7,} entries  {with_:6.2f} s"
        f"  (+{with_ - without:.2f} s; checkout of {defined:,} definitions)\n  {said.strip()}"
    )


if __name__ == "__main__":
    main()
