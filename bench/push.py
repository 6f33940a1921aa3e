"""Benchmark: `kgraph push` of the 10k-entry graph to Virtuoso, whose write endpoints ask for
Digest authentication, with every byte on the wire counted.

Generates (once, cached in --work) the 10k-entry corpus of `bench/generate.py`, builds its
N-Triples, starts Virtuoso on 127.0.0.1 with a fresh database (tests/servers.py), and puts a
counting proxy (`servers.Wire`) between kgraph and Virtuoso. Each run is a separate
`kgraph push` process over the Graph Store protocol, in two modes:

- add      into a graph that does not exist yet (dropped again after the run);
- replace  `--replace` of the graph the previous replace run left (1.2 M triples).

It reports the wall time, the requests and connections the server received, and the bytes
kgraph sent over the graph's own size: 1.00 means every byte of the graph went once. With
--compare SRC, the same runs also go from another source tree (`git archive main | tar -x
-C SRC`), one of each variant a round, so that a slow spell of the shared machine slows all
of them rather than every run of one. Medians of --repeat rounds.

    python bench/push.py                                   # this checkout
    python bench/push.py --compare /tmp/main-src --repeat 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import servers  # noqa: E402
from bench.generate import generate  # noqa: E402
from kgraph import remote  # noqa: E402


def graph_of(work: Path, entries: int) -> Path:
    corpus, out = work / f"corpus-{entries}", work / f"out-{entries}"
    if not (out / "graph.nt").is_file():
        if not corpus.is_dir():
            generate(corpus, entries)
        kgraph = [sys.executable, "-m", "kgraph"]
        subprocess.run(
            [*kgraph, "build", str(corpus), "-o", str(out), "--only", "ntriples"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return out


def one_push(
    running: servers.Running, out: Path, graph: str, replace: bool, src: Path | None
) -> dict:
    env = {**os.environ, "KGRAPH_PASSWORD": running.password or ""}
    if src is not None:
        env["PYTHONPATH"] = str(src / "src")
    with servers.Wire(running.base) as wire:
        args = ["push", str(out), "--endpoint", wire.url(running.query)]
        args += ["--update", wire.url(running.update), "--user", running.user or ""]
        args += ["--store", wire.url(running.store), "--graph", graph]
        args += ["--replace"] if replace else []
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "kgraph", *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            return {"failed": done.stderr.strip().splitlines()[-1][:300]}
        uploads = [r for r in wire.received if r.size > 1 << 16]
        return {
            "seconds": seconds,
            "requests": len(wire.received),
            "connections": wire.connections,
            "sent": wire.bytes_in,
            "uploads": len(uploads),
            "challenged": sum(1 for r in uploads if "authorization" not in r.headers),
        }


def drop(running: servers.Running, graph: str) -> None:
    with remote.Server(running.user, running.password, 600).session() as session:
        form = urllib.parse.urlencode({"update": f"DROP SILENT GRAPH <{graph}>"}).encode()
        session.request(
            "POST", running.update, form, {"Content-Type": "application/x-www-form-urlencoded"}
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare", type=Path, help="also run kgraph from this tree's src/")
    parser.add_argument(
        "--after-image",
        type=int,
        default=0,
        help="Virtuoso's TransactionAfterImageLimit in bytes (default: Virtuoso's own)",
    )
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "kgraph-bench")
    args = parser.parse_args(argv)
    out = graph_of(args.work, args.entries)
    size = (out / "graph.nt").stat().st_size
    variants: list[tuple[str, Path | None]] = [("this checkout", None)]
    if args.compare:
        variants.insert(0, (f"{args.compare}", args.compare))
    runs: dict[tuple[str, str], list[dict]] = {}
    limit = f"TransactionAfterImageLimit = {args.after_image}\n" if args.after_image else ""
    with (
        tempfile.TemporaryDirectory() as folder,
        servers.virtuoso(Path(folder), limit) as running,
    ):
        for _ in range(args.repeat):
            for mode in ("add", "replace"):
                for label, src in variants:
                    graph = f"urn:kgraph:bench:{mode}"
                    runs.setdefault((mode, label), []).append(
                        one_push(running, out, graph, mode == "replace", src)
                    )
                    if mode == "add":
                        drop(running, graph)
    print(
        f"kgraph push of {args.entries} entries ({size / 1e6:.1f} MB of N-Triples) to "
        f"Virtuoso (Digest auth) over the Graph Store protocol; medians of {args.repeat}"
    )
    print(
        f"{'mode':8} {'kgraph':28} {'wall s':>7} {'sent MB':>8} {'x graph':>7} "
        f"{'requests':>8} {'conns':>5} {'sent twice':>10}  runs (s)"
    )
    for (mode, label), all_runs in runs.items():
        for failed in [r["failed"] for r in all_runs if "failed" in r]:
            print(f"{mode:8} {label[-28:]:28} failed: {failed}")
        done = [r for r in all_runs if "failed" not in r]
        if not done:
            continue
        m = {key: statistics.median(r[key] for r in done) for key in done[0]}
        print(
            f"{mode:8} {label[-28:]:28} {m['seconds']:7.1f} {m['sent'] / 1e6:8.1f} "
            f"{m['sent'] / size:7.2f} {m['requests']:8.0f} {m['connections']:5.0f} "
            f"{m['challenged']:10.0f}  " + ", ".join(f"{r['seconds']:.1f}" for r in done)
        )


if __name__ == "__main__":
    main()
