"""The Python API on the real examples and seeds: what `kgraph.build` and `kgraph.open`
give is checked against the files the build wrote, read by independent parsers."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
import rdflib.compare

import kgraph
from conftest import EXAMPLES, ROOT, SEEDS
from kgraph import api
from kgraph.errors import KgraphError, UsageError
from kgraph.results import Solutions
from kgraph.store import GraphNotFound

CORPORA = {"examples": EXAMPLES, "seeds": SEEDS}


@pytest.fixture(scope="module", params=sorted(CORPORA))
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(f"api-{request.param}")
    result = kgraph.build([str(CORPORA[request.param])], out, only=["ntriples", "json"])
    assert result.exit_code == 0, result.problems
    assert result.out == out and result.result is not None
    return out


def test_api_rdflib_holds_every_triple_of_graph_nt(built: Path) -> None:
    graph = kgraph.open(built).rdflib()
    expected = list(ox.parse(path=str(built / "graph.nt"), format=ox.RdfFormat.N_TRIPLES))
    assert len(graph) == len(expected) > 1000
    # rdflib's own N-Triples parser, independent of the conversion from pyoxigraph's terms.
    own = rdflib.Graph().parse(built / "graph.nt", format="nt")
    assert rdflib.compare.isomorphic(graph, own)


def test_api_rdflib_per_digest_is_a_dataset_of_digest_graphs(built: Path) -> None:
    dataset = kgraph.open(built).rdflib(per_digest=True)
    assert isinstance(dataset, rdflib.Dataset)
    names = {str(g.identifier) for g in dataset.graphs() if len(g)}
    digests = {
        str(s)
        for s in kgraph.open(built)
        .rdflib()
        .subjects(rdflib.RDF.type, rdflib.URIRef("https://w3id.org/kgraph/ns#Digest"))
    }
    assert digests and digests <= names <= digests | {api.DEFAULT_GRAPH}
    union = {t for g in dataset.graphs() for t in g}
    assert len(union) == len(kgraph.open(built).rdflib())


def test_api_networkx_has_the_nodes_and_edges_of_graph_json(built: Path) -> None:
    data = json.loads((built / "graph.json").read_text("utf-8"))
    network = kgraph.open(built).networkx()
    assert network.is_directed() and network.is_multigraph()
    assert network.number_of_nodes() == len(data["nodes"]) > 50
    assert network.number_of_edges() == len(data["edges"]) > 50
    some = data["edges"][0]
    assert network.has_edge(some["source"], some["target"], key=some["relation"])
    node = data["nodes"][0]
    assert network.nodes[node["id"]]["kind"] == node["kind"]


def _hotspots_from_pyoxigraph(out: Path) -> list[tuple[str, ...]]:
    """The named query run by pyoxigraph itself on graph.nt, outside kgraph."""
    store = ox.Store()
    store.bulk_load(path=str(out / "graph.nt"), format=ox.RdfFormat.N_TRIPLES)
    text = resources.files("kgraph.queries").joinpath("hotspots.rq").read_text("utf-8")
    answer = store.query(text)
    assert isinstance(answer, ox.QuerySolutions)
    names = [v.value for v in answer.variables]
    return [tuple(str(row[n]) for n in names) for row in answer]


def test_api_query_answers_a_named_query(built: Path) -> None:
    answer = kgraph.open(built).query(name="hotspots")
    assert isinstance(answer, Solutions) and answer.rows
    assert [tuple(str(term) for term in row) for row in answer.rows] == _hotspots_from_pyoxigraph(
        built
    )
    table = api.render(answer)
    assert table.splitlines()[0].split()[:2] == ["prs", "kind"]


def test_api_query_takes_text_and_parameters(built: Path) -> None:
    opened = kgraph.open(built)
    count = opened.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    assert isinstance(count, Solutions)
    assert int(count.rows[0][0].value) == len(opened.rdflib())  # type: ignore[union-attr]
    with pytest.raises(UsageError, match="needs one of the parameters symbol, file"):
        opened.query(name="who-touches", params={})
    with pytest.raises(UsageError, match="syntax error"):
        opened.query("SELEC nothing")
    touching = opened.query(name="who-touches", params={"file": "scheduler.py"})
    assert touching == opened.query(name="who-touches", params=["file=scheduler.py"])
    assert isinstance(touching, Solutions)
    shown = api.sparql(name="who-touches", params={"file": "scheduler.py"}).text
    assert '"scheduler.py"' in shown  # the value is filled in as a literal


def test_api_build_in_memory_is_the_folder_build(built: Path) -> None:
    corpus = EXAMPLES if "examples" in built.name else SEEDS
    memory = kgraph.build([str(corpus)])
    assert memory.out is None and memory.exit_code == 0
    assert not list(Path.cwd().glob(".kgraph-store*"))
    folder = kgraph.open(built)
    assert rdflib.compare.isomorphic(memory.rdflib(), folder.rdflib())
    network = memory.networkx()
    assert (network.number_of_nodes(), network.number_of_edges()) == (
        folder.networkx().number_of_nodes(),
        folder.networkx().number_of_edges(),
    )
    assert memory.query(name="hotspots") == folder.query(name="hotspots")


def test_api_build_options_are_checked_and_named() -> None:
    with pytest.raises(UsageError) as error:
        kgraph.build([str(EXAMPLES)], base="https://example.org/no-slash")
    assert error.value.option == "--base" and error.value.exit_code == 2
    with pytest.raises(UsageError) as error:
        kgraph.build([str(EXAMPLES)], only=["pdf"])
    assert error.value.option == "--only"
    with pytest.raises(UsageError) as error:
        kgraph.build([str(EXAMPLES)], sources=["not-a-repo"])
    assert error.value.option == "--source"


def test_api_bad_input_is_counted_not_raised(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "Good", "summary": "ok"}\n{"title": 5}\n', "utf-8")
    result = kgraph.build(bad)
    assert result.exit_code == 1
    assert [(p.source.endswith("bad.jsonl"), p.line) for p in result.problems] == [(True, 2)]
    assert result.result is not None and result.result.entries_skipped == 1


def test_api_open_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(GraphNotFound, match="no such folder"):
        kgraph.open(tmp_path / "nowhere")
    empty = kgraph.open(tmp_path)
    with pytest.raises(GraphNotFound, match="no graph to query"):
        empty.query("ASK {}")
    with pytest.raises(GraphNotFound, match=r"graph\.json: no such file"):
        empty.networkx()
    with pytest.raises(KgraphError):
        empty.rdflib()


def test_api_import_is_cheap_and_lazy() -> None:
    """`import kgraph` loads nothing heavy; a build and a query load neither rdflib nor
    networkx; no warning on the way (-W error)."""
    code = (
        "import sys, kgraph\n"
        "assert 'kgraph.api' not in sys.modules and 'pyoxigraph' not in sys.modules\n"
        f"b = kgraph.build([{str(EXAMPLES)!r}])\n"
        "b.query('ASK { ?s ?p ?o }')\n"
        "assert 'rdflib' not in sys.modules and 'networkx' not in sys.modules, 'eager'\n"
        "b.rdflib(); b.networkx()\n"
        "assert 'rdflib' in sys.modules and 'networkx' in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_api_is_all_the_cli_imports() -> None:
    """cli.py parses options and calls kgraph.api (and kgraph.errors), nothing deeper."""
    tree = ast.parse((ROOT / "src" / "kgraph" / "cli.py").read_text("utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kgraph"):
            imported |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            imported |= {a.name for a in node.names if a.name.startswith("kgraph")}
    assert imported == {"kgraph.__version__", "kgraph.api", "kgraph.errors"}


def test_api_docs_page_runs(tmp_path: Path) -> None:
    """Every Python example of docs/python-api.md runs, in order, next to the examples."""
    page = (ROOT / "docs" / "python-api.md").read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert len(blocks) >= 4
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", "\n".join(blocks)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("4 digests, 11 entries, 10 PRs")
    assert "kgraph: nothing new" in done.stdout
