"""`--provenance evidence|full`: what each keeps, and that queries, the page and `kgraph eval`
read the same answers from either."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from pyshacl import validate

from checks import html_data
from conftest import DEV, EXAMPLES, SCHEMAS, SEEDS, SHARED, build
from kgraph import query
from kgraph.results import Solutions

KG = "https://w3id.org/kgraph/ns#"
CODE = {KG + "SourceFile", KG + "CodeSymbol", KG + "Issue"}


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The seeds and the dev corpus built twice, once with each provenance."""
    outs = {}
    for provenance in ("evidence", "full"):
        out = tmp_path_factory.mktemp(f"seeds-dev-{provenance}")
        code, _, stderr = build([str(SEEDS), str(DEV)], out, "--provenance", provenance)
        assert code == 0, stderr
        outs[provenance] = out
    return outs


def _triples(out: Path) -> set[ox.Triple]:
    return {q.triple for q in ox.parse(path=str(out / "graph.nt"), format=ox.RdfFormat.N_TRIPLES)}


def test_provenance_evidence_is_the_full_graph_without_the_mentions_of_code(both) -> None:
    """Nothing but the Mention nodes of files, symbols and issues differs: every other
    triple, the design evidence's Mentions included, is in both graphs."""
    full, evidence = _triples(both["full"]), _triples(both["evidence"])
    types = {(t.subject, t.object.value) for t in full if t.predicate.value.endswith("#type")}
    denoted = {t.subject: t.object for t in full if t.predicate.value == KG + "denotes"}
    code_mentions = {m for m, target in denoted.items() if any((target, c) in types for c in CODE)}
    assert len(code_mentions) > 300
    assert evidence == {t for t in full if t.subject not in code_mentions}
    assert len(evidence) < 0.8 * len(full)


@pytest.mark.parametrize("provenance", ["evidence", "full"])
def test_provenance_every_build_passes_every_shape(both, provenance) -> None:
    data = rdflib.Graph().parse(both[provenance] / "graph.ttl")
    for shapes in (SCHEMAS / "shapes.ttl", SHARED / "contract-shapes.ttl"):
        ok, _, report = validate(data, shacl_graph=rdflib.Graph().parse(shapes), inference="none")
        assert ok, report


def test_provenance_eval_scores_both_builds_alike(both) -> None:
    from click.testing import CliRunner

    from kgraph.cli import cli

    tables = []
    for provenance in ("evidence", "full"):
        result = CliRunner().invoke(
            cli, ["eval", "--gold", str(DEV / "gold.json"), str(both[provenance])]
        )
        assert result.exit_code == 0, result.output
        tables.append(result.output)
    assert tables[0] == tables[1] and "symbols" in tables[0]


def _rows(out: Path, name: str, **params: str) -> list[tuple[str | None, ...]]:
    answer = query.run_local(out, query.bind(query.named_query(name), params), name).answer
    assert isinstance(answer, Solutions)
    return [tuple(None if t is None else t.value for t in row) for row in answer.rows]


def test_provenance_who_touches_lists_every_entry_a_mention_would(both, gold, dev_gold) -> None:
    """The entries whose text names the code are found alike in both graphs, and they
    include every entry that a full graph's Mentions place the code in."""
    full = json.loads((both["full"] / "graph.json").read_text("utf-8"))
    nodes = {n["id"]: n for n in full["nodes"]}
    named_in: set[tuple[str, str]] = set()  # (code's id, entry's label) of every Mention
    denotes = {e["source"]: e["target"] for e in full["edges"] if e["relation"] == "denotes"}
    in_entry = {e["source"]: e["target"] for e in full["edges"] if e["relation"] == "inEntry"}
    for mention, target in denotes.items():
        if nodes[target]["kind"] in ("SourceFile", "CodeSymbol"):
            named_in.add((target, nodes[in_entry[mention]]["label"]))
    asked = 0
    for entry in [*gold, *dev_gold]:
        for kind, names in (("symbol", entry["symbols"]), ("file", entry["files"])):
            for name in names:
                rows = _rows(both["evidence"], "who-touches", **{kind: name})
                assert rows == _rows(both["full"], "who-touches", **{kind: name}), name
                found = {(code, f"{digest}:{line}") for code, _, _, digest, line in rows}
                for target, label in named_in:
                    code = nodes[target].get("path") or nodes[target]["qualifiedName"]
                    if any(c == code for c, _ in found):
                        assert (code, label) in found, (name, label)
                asked += 1
    assert asked > 60


def test_provenance_page_is_the_same_page_from_either_graph(tmp_path) -> None:
    """The page lists under each file, symbol and issue the entries that name it, read
    from their text: the page of a graph without those Mentions is the same bytes."""
    pages = []
    for provenance in ("evidence", "full"):
        out = tmp_path / provenance
        code, _, stderr = build([str(EXAMPLES)], out, "--provenance", provenance)
        assert code == 0, stderr
        pages.append((out / "graph.html").read_bytes())
    assert pages[0] == pages[1]
    (data,) = html_data(pages[0].decode("utf-8"))
    code = [n for n in data["nodes"] if n["k"] in ("SourceFile", "CodeSymbol", "Issue")]
    assert len(code) > 20 and sum(1 for n in code if n.get("e")) > 0.75 * len(code)
