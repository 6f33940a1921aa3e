"""The exports, parsed by independent parsers and checked against the SHACL shapes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import networkx as nx
import pyoxigraph as ox
import pytest
import rdflib
from pyshacl import validate
from rdflib.compare import graph_diff, isomorphic

from conftest import EXAMPLES, SCHEMAS, SHARED, build
from kgraph.export import reuse

GOLDEN = Path(__file__).parent / "golden"


def _conforms(data: rdflib.Graph, shapes: Path) -> None:
    ok, _, report = validate(data, shacl_graph=rdflib.Graph().parse(shapes), inference="none")
    assert ok, report


def test_export_turtle_conforms_to_project_and_contract_shapes(seeds_out) -> None:
    data = rdflib.Graph().parse(seeds_out / "graph.ttl")
    _conforms(data, SCHEMAS / "shapes.ttl")
    _conforms(data, SHARED / "contract-shapes.ttl")


def test_export_all_rdf_formats_hold_the_same_graph(seeds_out) -> None:
    turtle = rdflib.Graph().parse(seeds_out / "graph.ttl")
    for name, fmt in (("graph.nt", "nt"), ("graph.jsonld", "json-ld")):
        other = rdflib.Graph().parse(seeds_out / name, format=fmt)
        assert isomorphic(turtle, other), name


def test_export_turtle_parses_in_pyoxigraph_with_the_same_triple_count(seeds_out) -> None:
    triples = list(ox.parse(path=str(seeds_out / "graph.ttl"), format=ox.RdfFormat.TURTLE))
    lines = (seeds_out / "graph.nt").read_text("utf-8").splitlines()
    assert len(triples) == len(lines) > 500


def test_export_turtle_parses_in_rapper(seeds_out) -> None:
    assert shutil.which("rapper"), "install raptor2-utils (bash .ci/run does) for this check"
    run = subprocess.run(
        ["rapper", "-i", "turtle", "-c", str(seeds_out / "graph.ttl")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "returned" in run.stderr


def test_export_json_loads_as_a_networkx_graph(seeds_out, seeds_json) -> None:
    graph = nx.node_link_graph(seeds_json, edges="edges")
    assert graph.number_of_nodes() == len(seeds_json["nodes"])
    assert seeds_json["graph"]["counts"]["PullRequest"] == 13


@pytest.mark.parametrize("name", ["turtle", "ntriples", "jsonld"])
def test_export_rdf_file_written_alone_is_the_one_written_in_the_shared_walk(
    seeds_out, tmp_path, name
) -> None:
    """The RDF formats are written in one walk over the subjects; each file is still the
    bytes it is when it is the only one asked for."""
    code, _, stderr = build([str(SHARED / "seeds")], tmp_path, "--only", name)
    assert code == 0, stderr
    (written,) = [p for p in tmp_path.iterdir() if p.is_file()]
    assert written.stat().st_size > 10_000
    assert written.read_bytes() == (seeds_out / written.name).read_bytes()


def test_export_in_processes_is_the_build_in_one(seeds_out, tmp_path) -> None:
    """With -j 3 the files are written, and the subjects fingerprinted, by worker
    processes (the RDF formats' walk cut in three): every file, and where its index says
    each block starts, is what one process writes."""
    code, _, stderr = build([str(SHARED / "seeds")], tmp_path, "-j", "3")
    assert code == 0, stderr
    for name in ("graph.ttl", "graph.nt", "graph.jsonld", "graph.json", "graph.html"):
        assert (tmp_path / name).read_bytes() == (seeds_out / name).read_bytes(), name
    for index in (seeds_out / reuse.FOLDER).iterdir():
        if index.name != reuse.INDEX:  # which holds the files' inodes and times
            assert (tmp_path / reuse.FOLDER / index.name).read_bytes() == index.read_bytes()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_export_is_byte_identical_across_runs(tmp_path) -> None:
    for out in ("a", "b"):
        assert build([str(EXAMPLES)], tmp_path / out)[0] in (0, 1)
    for name in ("graph.ttl", "graph.nt", "graph.jsonld", "graph.json", "graph.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_export_is_byte_identical_whatever_the_string_hash_seed(generated_corpus, tmp_path) -> None:
    """Each Python process hashes strings with its own seed, which orders sets; no output
    may depend on that order. The page draws every node here, so that the layout's warm
    start runs: it once took a float mean over a set, and moved nodes from run to run."""
    import os
    import sys

    for seed in ("1", "2"):
        subprocess.run(
            [sys.executable, "-m", "kgraph", "build", str(generated_corpus), "-o",
             str(tmp_path / seed), "--no-cache", "--html-max-nodes", "0", "-q"],
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )  # fmt: skip
    for name in ("graph.ttl", "graph.nt", "graph.jsonld", "graph.json", "graph.html"):
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes(), name


def test_export_golden_turtle_of_the_examples(tmp_path, request) -> None:
    build([str(EXAMPLES)], tmp_path)
    produced = rdflib.Graph().parse(tmp_path / "graph.ttl")
    golden = GOLDEN / "examples.ttl"
    if request.config.getoption("--update-golden"):
        GOLDEN.mkdir(exist_ok=True)
        shutil.copy(tmp_path / "graph.ttl", golden)
    expected = rdflib.Graph().parse(golden)
    if not isomorphic(produced, expected):
        _, only_new, only_old = graph_diff(produced, expected)
        pytest.fail(
            "graph differs from tests/golden/examples.ttl\nonly in build:\n"
            + "\n".join(sorted(map(str, only_new)))[:3000]
            + "\nonly in golden:\n"
            + "\n".join(sorted(map(str, only_old)))[:3000]
        )


def test_export_committed_output_is_the_build_of_the_examples(tmp_path) -> None:
    build([str(EXAMPLES)], tmp_path)
    committed = Path(__file__).resolve().parents[1] / "output"
    for name in ("graph.ttl", "graph.json", "graph.jsonld", "graph.nt", "graph.html"):
        assert (committed / name).read_bytes() == (tmp_path / name).read_bytes(), (
            f"output/{name} is stale: run `kgraph build examples -o output`"
        )


def test_export_iris_are_valid_for_hostile_names(tmp_path) -> None:
    digest = tmp_path / "h.jsonl"
    digest.write_text(
        json.dumps(
            {
                "title": 'Fix <script>alert(1)</script> "quotes" \\ back',
                "summary": "See `dir with space/a b#c%d.py`, `../../etc/passwd.py` and `ünï.cödé`.",
                "repo": "o/r",
            }
        )
        + "\n",
        "utf-8",
    )
    assert build([str(digest)], tmp_path / "out")[0] == 0
    parsed = list(ox.parse(path=str(tmp_path / "out" / "graph.ttl"), format=ox.RdfFormat.TURTLE))
    iris = {t.subject.value for t in parsed} | {
        t.object.value for t in parsed if isinstance(t.object, ox.NamedNode)
    }
    assert not any(" " in i or "/../" in i for i in iris)
    paths = {t.object.value for t in parsed if t.predicate.value.endswith("#path")}
    assert paths == {"dir with space/a b#c%d.py", "../../etc/passwd.py"}
