"""The benchmark's own checks, which run before any build."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from bench import build


def test_bench_refuses_to_start_without_the_disk_it_needs(tmp_path) -> None:
    """A 100k-entry run needs about 10 GB; one that cannot have it stops at once, saying
    so, rather than an hour later on "No space left on device"."""
    with pytest.raises(SystemExit, match=r"GB free; 10,000,000,000 entries need about"):
        build.main(["--sizes", "10000000000", "--work", str(tmp_path)])
    assert list(tmp_path.iterdir()) == []  # no corpus was generated


def test_bench_runs_every_variant_in_rounds_and_adds_one_digest(tmp_path, capsys) -> None:
    """A small run end to end: each variant's row, the incremental runs adding exactly the
    new digest to the -j 2 build made just before them in the same round (one from a new
    folder), linking only what it reaches, both sides' triple counts, and the ratios."""
    build.main(["--sizes", "100", "--repeat", "2", "--work", str(tmp_path)])
    printed = capsys.readouterr().out
    table, ratios_table = printed.split("ratios (this run")
    lines = table.splitlines()
    rows = {line[10:26].strip(): line for line in lines if line.startswith("     100")}
    assert list(rows) == [
        "floor",
        "kgraph",
        "kgraph ttl",
        "kgraph -j 2",
        "+1 digest",
        "+1 moved",
        "kgraph+html",
        "+1 +html",
        "baseline",
    ]
    assert "100 entries" in rows["kgraph"] and "100 entries" in rows["kgraph -j 2"]
    for added in ("+1 digest", "+1 moved", "+1 +html"):  # to the build just before them
        assert "1 digests extracted" in rows[added], rows[added]
        assert "PRs linked again" in rows[added] and "of the output copied" in rows[added]
    assert "2 digests" not in rows["+1 moved"] and ", 0 removed" in rows["+1 moved"]
    assert re.search(r"; \d+ triples$", rows["kgraph"])
    assert re.search(r"100 entries, \d+ triples$", rows["baseline"])  # the same entries
    ratios = ratios_table.splitlines()
    assert ratios[2].split()[0] == "100" and len(ratios[2].split()) == 8


def test_tree_memory_counts_what_forked_children_hold_apart(tmp_path) -> None:
    """A parent and a forked child that each fill 60 MB of their own: the tree holds both,
    while the parent alone (or the largest process, what wait4 reports) holds one."""
    script = tmp_path / "tree.py"
    script.write_text(
        "import os, sys, time\n"
        "os.fork()\n"  # parent and child alike go on
        "block = bytearray(os.urandom(1 << 20)) * 60\n"
        "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "time.sleep(30)\n"
    )
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n"
        assert process.stdout.readline() == b"ready\n"
        tree_mb = build.tree_memory_kb(process.pid) / 1024
        parent_mb = build._pss_kb(process.pid) / 1024
        assert parent_mb >= 60
        assert tree_mb >= 120 > parent_mb + 30
    finally:
        process.kill()
        process.wait()


BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_instruction_bench_runs_the_program_it_counts(tmp_path) -> None:
    """bench/instructions.py counts a run of itself in `--run` mode under callgrind (too
    slow for the suite); that mode must run the extraction it claims to, on a corpus."""
    from bench.generate import generate

    generate(tmp_path / "corpus", 20, seed=1)
    for what in ("patterns", "extraction"):
        done = subprocess.run(
            [sys.executable, str(BENCH / "instructions.py"), "--run", str(tmp_path / "corpus"),
             "--what", what, "--passes", "2"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
