"""code-maat's `coupling` analysis, written again from its source, over `git log --raw`.

An independent reference for kgraph's `coupling` query: it imports nothing of kgraph and
follows code-maat's `coupling_algos.clj` and `logical_coupling.clj` step by step (exact
ratios as Clojure's, `(int coupling)`, `(math/ceil average-revs)`), not kgraph's code.

    python bench/codemaat_coupling.py GIT_DIR REV > reference.csv

The log is the first-parent one, each merge with its diff against its first parent, and
no rename detection, as code-maat reads `git log --no-renames`:

    git log --first-parent --diff-merges=first-parent --raw --no-renames REV

Rows: `entity,coupled,degree,average-revs` (code-maat's CSV), sorted by degree and
average-revs descending as code-maat sorts them, then by entity and coupled (code-maat
leaves equal rows in hash order).
"""

from __future__ import annotations

import csv
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from math import ceil

MIN_REVS, MIN_SHARED_REVS, MIN_COUPLING, MAX_COUPLING, MAX_CHANGESET_SIZE = 5, 5, 30, 100, 30


def revisions(git_dir: str, rev: str) -> list[list[str]]:
    """The entities (file paths) of each revision that lists any, as code-maat's dataset
    grouped by :rev."""
    log = subprocess.run(
        ["git", "--git-dir", git_dir, "-c", "core.quotePath=false", "log", "--first-parent",
         "--diff-merges=first-parent", "--raw", "--no-renames", "-z", "--format=%x02%H", rev],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    found = []
    for commit in log.split(b"\x02")[1:]:
        # "SHA", then per file a ":modes blobs status" record and its path ("\n" before
        # the first record); with --no-renames, one path per record.
        tokens = commit.split(b"\0")
        entities = [
            tokens[i + 1].decode("utf-8", "surrogateescape")
            for i in range(1, len(tokens) - 1)
            if tokens[i].lstrip(b"\n").startswith(b":")
        ]
        if entities:
            found.append(entities)
    return found


def coupling(revs: list[list[str]]) -> list[tuple[str, str, int, int]]:
    # co-changing-by-revision: drop revisions over the size limit; each kept revision's
    # pairs are (selections entities 2), each sorted, distinct: [A A] included.
    co_changing = []
    for entities in revs:
        if len(entities) > MAX_CHANGESET_SIZE:
            continue
        co_changing.append({tuple(sorted((a, b))) for a in entities for b in entities})
    # module-by-revs: the distinct modules of each revision's pairs, counted.
    module_revs: Counter[str] = Counter()
    for pairs in co_changing:
        module_revs.update({m for pair in pairs for m in pair})
    # coupling-frequencies: every pair but [A A], counted over revisions.
    frequencies: Counter[tuple[str, str]] = Counter(
        pair for pairs in co_changing for pair in pairs if pair[0] != pair[1]
    )
    rows = []
    for (first, second), shared in frequencies.items():
        average = Fraction(module_revs[first] + module_revs[second], 2)
        degree = Fraction(shared) / average * 100
        if (
            average >= MIN_REVS
            and shared >= MIN_SHARED_REVS
            and degree >= MIN_COUPLING
            and int(degree) <= MAX_COUPLING
        ):
            rows.append((first, second, int(degree), ceil(average)))
    rows.sort(key=lambda r: (-r[2], -r[3], r[0], r[1]))
    return rows


def main(argv: list[str]) -> None:
    git_dir, rev = argv
    writer = csv.writer(sys.stdout, lineterminator="\r\n")
    writer.writerow(["entity", "coupled", "degree", "average-revs"])
    writer.writerows(coupling(revisions(git_dir, rev)))


if __name__ == "__main__":
    main(sys.argv[1:])
