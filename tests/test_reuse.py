"""Output reuse: a rebuild copies the blocks of unchanged subjects from the last build's
files, and every output stays the bytes a clean build writes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DATA_OUTPUTS, SEED_DIGEST, SEEDS
from conftest import ONLY_DATA as ONLY
from conftest import build as _build
from kgraph.export import EXPORTERS, ExportInput, export_all, reuse
from kgraph.graph import Date, KnowledgeGraph, Node, Text

DATA = [e for e in EXPORTERS if e.name != "html"]
OUTPUTS = [e.filename for e in DATA]
assert tuple(OUTPUTS) == DATA_OUTPUTS


@pytest.fixture
def corpus(generated_corpus: Path) -> Path:
    return generated_corpus


def build(inputs: list[Path], out: Path, *extra: str) -> str:
    code, stdout, stderr = _build([str(i) for i in inputs], out, *ONLY, *extra)
    assert code == 0, stderr
    return stdout


def copied(stdout: str) -> float:
    """The share of the output copied, from the summary line (0 when it says nothing)."""
    found = re.search(r"; ([\d.]+)% of the output copied", stdout)
    return float(found.group(1)) / 100 if found else 0.0


def same_as_clean(inputs: list[Path], out: Path, tmp_path: Path, *extra: str) -> None:
    clean = tmp_path / "clean"
    shutil.rmtree(clean, ignore_errors=True)
    build(inputs, clean, "--no-cache", *extra)
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (clean / name).read_bytes(), name


def test_reuse_unchanged_rebuild_copies_almost_everything(corpus, tmp_path) -> None:
    out = tmp_path / "out"
    assert copied(build([corpus], out)) == 0  # nothing to copy from yet
    again = build([corpus], out)
    assert copied(again) >= 0.97  # all but each section's first block
    same_as_clean([corpus], out, tmp_path)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_reuse_added_digest_copies_the_rest(corpus, tmp_path, jobs) -> None:
    out = tmp_path / "out"
    build([corpus], out, "-j", jobs)
    added = [corpus, SEEDS / SEED_DIGEST]
    stdout = build(added, out, "-j", jobs)
    assert 0.5 < copied(stdout) < 1  # most subjects unchanged; the new ones written
    same_as_clean(added, out, tmp_path)


def test_reuse_index_of_parallel_build_is_the_serial_ones(corpus, tmp_path) -> None:
    """With -j the subjects are fingerprinted in parts by several workers; joined in the
    wrong order, the next build would copy blocks of the wrong subjects."""
    for jobs in ("1", "3"):
        build([corpus], tmp_path / jobs, "-j", jobs)
    index = Path(reuse.FOLDER)
    fingerprints = (tmp_path / "1" / index / "fingerprints.bin").read_bytes()
    assert len(fingerprints) > 100 * reuse.SIZE
    assert (tmp_path / "3" / index / "fingerprints.bin").read_bytes() == fingerprints


def test_reuse_removed_digest_and_changed_links(corpus, tmp_path) -> None:
    inputs = tmp_path / "digests"
    shutil.copytree(corpus, inputs)
    out = tmp_path / "out"
    build([inputs], out)
    for digest in sorted(inputs.rglob("*.txt"))[:3]:
        digest.unlink()
    assert copied(build([inputs], out)) > 0.5
    same_as_clean([inputs], out, tmp_path)


def test_reuse_ignores_an_output_edited_since(corpus, tmp_path) -> None:
    out = tmp_path / "out"
    build([corpus], out)
    nt = out / "graph.nt"
    text = nt.read_bytes()
    nt.write_bytes(text.replace(b"<https://", b"<http://", 1) + b"\n")  # same blocks, moved
    build([corpus], out)
    same_as_clean([corpus], out, tmp_path)
    os.utime(out / "graph.json", ns=(0, 0))  # touched: its size is right but its time not
    build([corpus], out)
    same_as_clean([corpus], out, tmp_path)


@pytest.mark.parametrize(
    "damage",
    [
        "index.json",
        "fingerprints.bin",
        "subjects.txt",
        "graph.nt.subjects.offsets",
        "graph.json.nodes.offsets",
        "graph.ttl.subjects.offsets",
    ],
)
def test_reuse_damaged_index_is_ignored(corpus, tmp_path, damage) -> None:
    out = tmp_path / "out"
    build([corpus], out)
    path = out / reuse.FOLDER / damage
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40  # one bit: the same length, other positions
    path.write_bytes(bytes(data))
    stdout = build([corpus], out)
    if damage == "fingerprints.bin":
        assert copied(stdout) == 0  # every subject's match depends on them
    elif damage == "subjects.txt":
        # Matched by the link store's fingerprints, which the index's (checked) equal: the
        # ids are read from the store, not from this file, which is written whole again.
        assert copied(stdout) >= 0.97
    elif damage == "index.json":  # here a blob's hash: that file is written afresh
        assert copied(stdout) < 0.9
    else:
        assert 0 < copied(stdout) < 0.9  # the other files were still copied from
    same_as_clean([corpus], out, tmp_path)
    assert copied(build([corpus], out)) >= 0.97  # and the index is whole again


def test_reuse_other_base_iri_writes_afresh(corpus, tmp_path) -> None:
    out = tmp_path / "out"
    build([corpus], out)
    stdout = build([corpus], out, "--base", "https://example.org/kg/")
    assert copied(stdout) == 0
    same_as_clean([corpus], out, tmp_path, "--base", "https://example.org/kg/")


def test_reuse_no_cache_neither_reads_nor_writes_the_index(corpus, tmp_path) -> None:
    out = tmp_path / "out"
    build([corpus], out, "--no-cache")
    assert not (out / reuse.FOLDER).exists()
    build([corpus], out)
    assert copied(build([corpus], out, "--no-cache")) == 0


def test_reuse_copy_without_copy_file_range(corpus, tmp_path, monkeypatch) -> None:
    out = tmp_path / "out"
    build([corpus], out)

    def unsupported(*args: object) -> int:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "copy_file_range", unsupported)
    assert copied(build([corpus], out)) >= 0.97
    same_as_clean([corpus], out, tmp_path)


# --- any graph and any change: the copied file is the clean file -------------------------------

IDS = [f"{kind}/{i}" for kind in ("a", "pr", "z") for i in range(4)]
VALUES = st.one_of(
    st.text(max_size=8),
    st.integers(-3, 3),
    st.booleans(),
    st.builds(Text, st.text(max_size=5), st.sampled_from(["en", "zh"])),
    st.builds(Date, st.sampled_from(["2024-01-01", "2025-06-30"])),
)
NODES = st.dictionaries(
    st.sampled_from(IDS),
    st.tuples(
        st.sampled_from(["PullRequest", "SourceFile", "Mention"]),
        st.text(max_size=6),
        st.lists(st.tuples(st.sampled_from(["title", "line", "surface"]), VALUES), max_size=3),
    ),
    max_size=len(IDS),
)
EDGES = st.lists(
    st.tuples(
        st.sampled_from(IDS), st.sampled_from(["touchesFile", "denotes"]), st.sampled_from(IDS)
    ),
    max_size=12,
)


def _graph(nodes: dict, edges: list) -> KnowledgeGraph:
    graph = KnowledgeGraph()
    for node_id, (kind, label, attrs) in sorted(nodes.items()):
        graph.add(Node(node_id, kind, label, tuple(attrs)))
    for source, relation, target in edges:
        graph.link(source, relation, target)
    return graph


def _export(
    graph: KnowledgeGraph, out: Path, previous: reuse.Previous | None, jobs: int = 1
) -> None:
    base = "https://example.org/id/"
    inputs = ExportInput(graph, base, previous=previous, keep_index=True)
    export_all(inputs, out, DATA, jobs=jobs)


@settings(max_examples=80, deadline=None)
@given(NODES, EDGES, NODES, EDGES, st.sampled_from([None, *OUTPUTS]), st.sampled_from([1, 1, 3]))
def test_reuse_any_change_gives_the_clean_bytes(
    tmp_path_factory, old_n, old_e, new_n, new_e, lost, jobs
):
    """Old and new graphs share ids, so blocks are copied, moved, dropped and inserted
    around them, including the first of each section. When one old file is gone, the
    walk that writes the RDF files together writes that file's every block and still
    copies the others'. With 3 jobs the files and the fingerprints are made by worker
    processes; the index they leave is the one a clean build in one process leaves."""
    folder = tmp_path_factory.mktemp("reuse")
    new_n = {**old_n, **new_n} if len(new_n) % 2 else new_n  # often, mostly the same nodes
    new_e = old_e[: len(old_e) // 2] + new_e
    _export(_graph(old_n, old_e), folder / "out", None, jobs)
    if lost:
        (folder / "out" / lost).unlink()
    previous = reuse.load(folder / "out", "https://example.org/id/")
    _export(_graph(new_n, new_e), folder / "out", previous, jobs)
    _export(_graph(new_n, new_e), folder / "clean", None)
    for name in OUTPUTS:
        assert (folder / "out" / name).read_bytes() == (folder / "clean" / name).read_bytes()
    for kept in (folder / "clean" / reuse.FOLDER).iterdir():
        if kept.name != reuse.INDEX:  # which holds the files' inodes and times
            assert (folder / "out" / reuse.FOLDER / kept.name).read_bytes() == kept.read_bytes()


def _fingerprint(*attrs: tuple[str, object], edges: tuple[tuple[str, str], ...] = ()) -> bytes:
    graph = KnowledgeGraph()
    graph.add(Node("pr/1", "PullRequest", "t", attrs))  # type: ignore[arg-type]
    for relation, target in edges:
        graph.link("pr/1", relation, target)
    return reuse.fingerprints(graph, ["pr/1"], graph.out_edges())


def test_reuse_fingerprints_tell_values_apart_but_not_string_objects() -> None:
    """A block is copied when its subject's fingerprint is the same: the types of values
    must count (1, True and "1" are written differently), which string object holds a
    value must not (a cached build makes other objects than a clean one)."""
    values = [1, True, "1", Text("1", "en"), Text("1", "zh"), Date("2024-01-01"), "2024-01-01"]
    prints = [_fingerprint(("n", value)) for value in values]
    prints += [_fingerprint(("n", 1), ("n", 2)), _fingerprint(("n", 2), ("n", 1))]
    prints += [
        _fingerprint(edges=edges)
        for edges in [(("touchesFile", "a"),), (("touchesFile", "b"),), (("denotes", "a"),)]
    ]
    assert len(set(prints)) == len(prints)
    made = "".join(["x", "y"])  # equal to the literal, another object, not interned
    assert made is not "xy"  # noqa: F632
    assert _fingerprint(("n", made), edges=(("r", made),)) == _fingerprint(
        ("n", "xy"), edges=(("r", "xy"),)
    )


def test_reuse_never_opens_a_fifo_put_in_place_of_an_output(corpus, tmp_path) -> None:
    out = tmp_path / "out"
    build([corpus], out)
    nt = out / "graph.nt"
    nt.unlink()
    os.mkfifo(nt)  # opening it to read would wait for a writer forever
    run = subprocess.run(
        [sys.executable, "-m", "kgraph", "build", str(corpus), "-o", str(out), *ONLY],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    same_as_clean([corpus], out, tmp_path)


def test_reuse_turtle_alone_copies_its_unchanged_blocks(corpus, tmp_path) -> None:
    """Turtle is written subject by subject like the other files, and needs no other file."""
    out, clean = tmp_path / "out", tmp_path / "clean"
    only = ["--only", "turtle"]
    assert _build([str(corpus)], out, *only)[0] == 0
    added = [str(corpus), str(SEEDS / SEED_DIGEST)]
    code, stdout, stderr = _build(added, out, *only)
    assert code == 0, stderr
    assert 0.5 < copied(stdout) < 1
    assert _build(added, clean, *only, "--no-cache")[0] == 0
    assert (out / "graph.ttl").read_bytes() == (clean / "graph.ttl").read_bytes()
    assert sorted(p.name for p in out.iterdir()) == [".kgraph", "graph.ttl"]  # no scratch


def test_reuse_page_alone_keeps_the_index_of_the_other_files(corpus, tmp_path) -> None:
    """`--only html` writes no block: the data files and their index stay as they were."""
    out = tmp_path / "out"
    build([corpus], out)
    index = (out / reuse.FOLDER / reuse.INDEX).read_bytes()
    code, _, stderr = _build([str(corpus)], out, "--only", "html")
    assert code == 0, stderr
    assert (out / reuse.FOLDER / reuse.INDEX).read_bytes() == index
    assert copied(build([corpus], out)) >= 0.97


def test_reuse_closes_the_old_files(corpus, tmp_path) -> None:
    """A process that builds again and again (a server, these tests) keeps no old file open."""
    from kgraph.pipeline import BuildOptions, run

    options = BuildOptions(exporters=DATA)
    run([str(corpus)], tmp_path / "out", options)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        assert run([str(corpus)], tmp_path / "out", options).copied > 0.97
    assert len(os.listdir("/proc/self/fd")) == before
