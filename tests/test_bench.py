"""The benchmark's own checks, which run before any build."""

from __future__ import annotations

import pytest
from bench import build


def test_bench_refuses_to_start_without_the_disk_it_needs(tmp_path) -> None:
    """A 100k-entry run needs about 10 GB; one that cannot have it stops at once, saying
    so, rather than an hour later on "No space left on device"."""
    with pytest.raises(SystemExit, match=r"GB free; 10,000,000,000 entries need about"):
        build.main(["--sizes", "10000000000", "--work", str(tmp_path)])
    assert list(tmp_path.iterdir()) == []  # no corpus was generated


def test_bench_runs_every_variant_in_rounds_and_adds_one_digest(tmp_path, capsys) -> None:
    """A small run end to end: each variant's row, the incremental run adding exactly the
    new digest to the -j 2 build made just before it in the same round, and the ratios."""
    build.main(["--sizes", "100", "--repeat", "2", "--work", str(tmp_path)])
    printed = capsys.readouterr().out
    table, ratios_table = printed.split("ratios (this run):")
    lines = table.splitlines()
    rows = {line[10:26].strip(): line for line in lines if line.startswith("     100")}
    assert list(rows) == [
        "floor",
        "kgraph",
        "kgraph -j 2",
        "+1 digest",
        "kgraph+html",
        "+1 +html",
        "baseline",
    ]
    assert "100 entries" in rows["kgraph"] and "100 entries" in rows["kgraph -j 2"]
    for added in ("+1 digest", "+1 +html"):  # to the build made just before, in its round
        assert "1 digests extracted" in rows[added]
        assert "of the output copied" in rows[added]
    assert "triples" in rows["baseline"]
    ratios = ratios_table.splitlines()
    assert ratios[2].split()[0] == "100" and len(ratios[2].split()) == 6
