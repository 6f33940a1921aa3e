"""Instructions an extractor spends per entry, counted by callgrind: a figure the machine's
load does not move.

Wall-clock medians on shared CPUs move by 10-30 % with what else runs (steal time reached
100 % here), more than most changes they are meant to judge. `valgrind --tool=callgrind`
counts instructions instead, the same for the same code and input whatever the load. This
runs the chosen extraction over a generated corpus twice under callgrind, once with one pass
and once with two, and prints the second pass alone (the difference: the first pass also
compiles the cues it meets). Slow (about 1.5 minutes a run for 300 entries); valgrind must
be installed.

    python bench/instructions.py --entries 300 --what patterns
    PYTHONPATH=/other/checkout/src python bench/instructions.py --what extraction
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `python bench/instructions.py`

from bench.generate import generate

COLLECTED = re.compile(r"Collected : (\d+)")


def run(corpus: Path, what: str, passes: int) -> None:
    """The measured program: read the corpus, then extract it `passes` times."""
    from kgraph.catalog import builtin_knowledge
    from kgraph.extract import extract_digest
    from kgraph.extract.patterns import extract_patterns
    from kgraph.ingest import read_inputs

    results = list(read_inputs(sorted(str(p) for p in corpus.rglob("*.txt"))))
    knowledge = builtin_knowledge()
    for _ in range(passes):
        for result in results:
            if what == "patterns":
                for entry in result.entries:
                    extract_patterns(entry, knowledge)
            else:
                extract_digest(result.entries)


def counted(corpus: Path, what: str, passes: int) -> int:
    """Instructions of a whole run of this script in `--run` mode, under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
            sys.executable, __file__, "--run", str(corpus), "--what", what,
            "--passes", str(passes),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, env=os.environ, check=True)
    found = COLLECTED.search(done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=300)
    parser.add_argument("--what", choices=["patterns", "extraction"], default="patterns")
    parser.add_argument("--run", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--passes", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run is not None:
        run(args.run, args.what, args.passes)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        generate(corpus, args.entries, seed=1)
        one, two = (counted(corpus, args.what, passes) for passes in (1, 2))
    per_pass = two - one
    print(f"{args.what}: {per_pass:,} instructions a pass over {args.entries} entries")
    print(f"{per_pass / args.entries / 1e6:.2f} million instructions an entry")


if __name__ == "__main__":
    main()
