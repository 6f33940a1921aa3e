"""The on-disk store beside a build: built once, reused, rebuilt exactly when the graph changes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgraph import store
from kgraph.cli import cli
from kgraph.query import run_local
from kgraph.results import Solutions
from kgraph.store import STAMP, STORE_DIR

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def count(out: Path, cache: bool = True) -> tuple[int, str]:
    local = run_local(out, COUNT, "count", cache=cache)
    assert isinstance(local.answer, Solutions)
    term = local.answer.rows[0][0]
    assert term is not None
    return int(term.value), local.how


@pytest.fixture
def out(seeds_out, tmp_path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    for name in ("graph.nt", "graph.ttl"):
        shutil.copy(seeds_out / name, folder / name)
    return folder


def lines(path: Path) -> int:
    return len(path.read_text("utf-8").splitlines())


def test_store_is_built_once_then_reused(out) -> None:
    triples = lines(out / "graph.nt")
    assert count(out) == (triples, "built")
    stamp = json.loads((out / STORE_DIR / STAMP).read_text("utf-8"))
    assert stamp["source"] == "graph.nt" and len(stamp["sha256"]) == 64
    before = sorted(p.name for p in (out / STORE_DIR).iterdir())
    assert count(out) == (triples, "cached")
    assert count(out) == (triples, "cached")
    assert sorted(p.name for p in (out / STORE_DIR).iterdir()) == before
    assert not [p for p in out.iterdir() if p.name.startswith(f"{STORE_DIR}.")]  # no leftovers


def test_store_is_rebuilt_when_the_graph_changes(out) -> None:
    triples = lines(out / "graph.nt")
    count(out)
    with (out / "graph.nt").open("a", encoding="utf-8") as handle:
        handle.write('<http://example.org/new> <http://example.org/p> "added" .\n')
    assert count(out) == (triples + 1, "built")
    assert count(out) == (triples + 1, "cached")


def test_store_loaded_while_a_build_replaced_the_graph_is_loaded_again(out, monkeypatch) -> None:
    """A query loads graph.nt while a build renames a new one in place: the store it made
    holds the old graph, so the next query must not take it for the new one."""
    triples = lines(out / "graph.nt")
    new = out / "new.nt"
    new.write_text(
        (out / "graph.nt").read_text("utf-8") + '<http://e.org/x> <http://e.org/p> "new" .\n'
    )
    real_load = store._load

    def load_then_replace(*args) -> None:
        real_load(*args)
        os.replace(new, out / "graph.nt")  # the build's atomic rename, mid-query

    monkeypatch.setattr(store, "_load", load_then_replace)
    assert count(out) == (triples, "built")  # the graph as it was when the query began
    monkeypatch.setattr(store, "_load", real_load)
    assert count(out) == (triples + 1, "built")
    assert count(out) == (triples + 1, "cached")


def test_store_survives_a_rebuild_that_changed_nothing(out, seeds_out) -> None:
    count(out)
    shutil.copy(seeds_out / "graph.nt", out / "graph.nt")  # same bytes, new time
    stat = (out / "graph.nt").stat()
    os.utime(out / "graph.nt", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert count(out)[1] == "cached"
    stamp = json.loads((out / STORE_DIR / STAMP).read_text("utf-8"))
    assert stamp["mtime_ns"] == stat.st_mtime_ns + 10**9  # the next check is cheap again


def test_store_follows_the_source_file_and_the_engine_version(out) -> None:
    triples = lines(out / "graph.nt")
    count(out)
    (out / "graph.nt").unlink()
    assert count(out) == (triples, "built")  # now from graph.ttl
    stamp_path = out / STORE_DIR / STAMP
    stamp = json.loads(stamp_path.read_text("utf-8"))
    assert stamp["source"] == "graph.ttl"
    stamp_path.write_text(json.dumps({**stamp, "engine": "0.0.1"}), "utf-8")
    assert count(out)[1] == "built"


def test_store_that_does_not_open_is_rebuilt(out) -> None:
    triples = lines(out / "graph.nt")
    count(out)
    (out / STORE_DIR / "CURRENT").write_text("garbage\n")
    assert count(out) == (triples, "built")


def test_store_no_cache_keeps_nothing(out) -> None:
    assert count(out, cache=False) == (lines(out / "graph.nt"), "memory")
    result = CliRunner().invoke(
        cli, ["query", str(out), "-n", "hotspots", "--no-cache"], catch_exceptions=False
    )
    assert result.exit_code == 0 and result.stderr == ""
    assert not (out / STORE_DIR).exists()


def _read_only(folder: Path) -> None:
    """Make `folder` unwritable even for root (ext4's immutable flag), else by its mode."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    else:
        folder.chmod(0o555)


def _writable(folder: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    folder.chmod(0o755)


def test_store_unwritable_folder_still_answers(out) -> None:
    triples = lines(out / "graph.nt")
    _read_only(out)
    try:
        assert count(out) == (triples, "memory")
        result = CliRunner().invoke(
            cli, ["query", str(out), "-n", "hotspots", "-f", "csv"], catch_exceptions=False
        )
        assert result.exit_code == 0
        assert "loaded into memory for this query only" in result.stderr
        assert result.stdout.startswith("prs,kind,code,repository")
        assert sorted(p.name for p in out.iterdir()) == ["graph.nt", "graph.ttl"]
    finally:
        _writable(out)
