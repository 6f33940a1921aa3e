"""Benchmark: extraction alone, milliseconds per entry on the generated corpus.

Reads every digest of a `bench/generate.py` corpus once, then extracts all its entries
`--repeat` times (`kgraph.extract.extract_digest`, as a build does) and prints the median
milliseconds per entry. Run it with two checkouts' `src/` on PYTHONPATH to compare code:

    python bench/extraction.py --entries 10000
    PYTHONPATH=/other/checkout/src python bench/extraction.py --entries 10000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `python bench/extraction.py`

from bench.generate import generate
from kgraph.ingest import read_inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import kgraph.extract as extraction

    with tempfile.TemporaryDirectory() as folder:
        generate(Path(folder), args.entries)
        digests = [r.entries for r in read_inputs([folder])]
    count = sum(len(d) for d in digests)
    runs = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        for entries in digests:
            if hasattr(extraction, "extract_digest"):
                extraction.extract_digest(entries)
            else:  # before extraction saw whole digests
                for entry in entries:
                    extraction.extract(entry)
        runs.append((time.perf_counter() - start) * 1000 / count)
    print(
        f"{count} entries: {statistics.median(runs):.3f} ms an entry (median of {len(runs)}: "
        + ", ".join(f"{r:.3f}" for r in runs)
        + f") [{extraction.__file__}]"
    )


if __name__ == "__main__":
    main()
