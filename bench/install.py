"""Benchmark: a fresh install, `pip install SRC` into a new virtual environment.

For each source tree (this checkout's HEAD, from `git archive`, and --compare trees), one
install a round, the rounds interleaved: the wall time of `pip install --no-cache-dir`
(so every package is fetched and unpacked as on a new machine), the size of the
environment's site-packages, and whether `pip check` and `python -W error -c "import
kgraph"` pass. Medians of --repeat rounds.

    python bench/install.py --compare /tmp/main-src --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def install(src: Path) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        venv = Path(folder) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = venv / "bin" / "python"
        base = size_of(venv)
        started = time.perf_counter()
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--no-cache-dir", str(src)],
            check=True,
            capture_output=True,
        )
        seconds = time.perf_counter() - started
        check = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True)
        imports = subprocess.run(
            [str(python), "-W", "error", "-c", "import kgraph, kgraph.cli"], capture_output=True
        )
        listed = subprocess.run(
            [str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
        ).stdout.split()
        return {
            "seconds": seconds,
            "mb": (size_of(venv) - base) / 1e6,
            "packages": len(listed),
            "pip check": check.returncode == 0,
            "import -W error": imports.returncode == 0,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", type=Path, action="append", default=[])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        head = Path(folder) / "head"
        head.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "HEAD"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(head)], input=archive, check=True)
        trees = [*args.compare, head]
        runs: dict[Path, list[dict]] = {tree: [] for tree in trees}
        for _ in range(args.repeat):
            for tree in trees:
                runs[tree].append(install(tree))
    print(f"pip install --no-cache-dir SRC into a new venv, medians of {args.repeat}")
    print(f"{'source':28} {'seconds':>8} {'MB':>7} {'packages':>8}  pip check, import -W error")
    for tree, done in runs.items():
        label = "this checkout (HEAD)" if tree not in args.compare else str(tree)
        seconds = statistics.median(r["seconds"] for r in done)
        mb = statistics.median(r["mb"] for r in done)
        ok = all(r["pip check"] for r in done), all(r["import -W error"] for r in done)
        print(
            f"{label[-28:]:28} {seconds:8.1f} {mb:7.1f} {done[0]['packages']:8}  {ok[0]}, {ok[1]}"
            f"   runs: " + ", ".join(f"{r['seconds']:.1f}" for r in done)
        )


if __name__ == "__main__":
    main()
