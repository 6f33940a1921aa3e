"""Design knowledge in the exported graph, read back with independent parsers."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from pyshacl import validate

from conftest import SCHEMAS, SEEDS, build

PREFIXES = """PREFIX kg: <https://w3id.org/kgraph/ns#>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
"""


@pytest.fixture(scope="module")
def store(seeds_out: Path) -> ox.Store:
    store = ox.Store()
    store.bulk_load(path=str(seeds_out / "graph.ttl"), format=ox.RdfFormat.TURTLE)
    return store


@pytest.fixture(scope="module")
def full_store(tmp_path_factory: pytest.TempPathFactory) -> ox.Store:
    """The seeds built with `--provenance full`: a Mention for every span that names something."""
    out = tmp_path_factory.mktemp("seeds-full")
    code, _, stderr = build([str(SEEDS)], out, "--provenance", "full")
    assert code == 0, stderr
    store = ox.Store()
    store.bulk_load(path=str(out / "graph.ttl"), format=ox.RdfFormat.TURTLE)
    return store


def rows(store: ox.Store, query: str) -> list[tuple[str, ...]]:
    return [tuple(term.value for term in row) for row in store.query(PREFIXES + query)]


@pytest.mark.parametrize(("provenance", "at_least"), [("evidence", 40), ("full", 150)])
def test_design_every_mention_surface_is_its_span_of_the_entry(
    request, provenance: str, at_least: int
) -> None:
    store = request.getfixturevalue("store" if provenance == "evidence" else "full_store")
    mentions = rows(
        store,
        """SELECT ?surface ?start ?end ?field ?text ?title WHERE {
             ?m a kg:Mention ; kg:surface ?surface ; kg:start ?start ; kg:end ?end ;
                kg:field ?field ; kg:inEntry ?e . ?e kg:text ?text ; dcterms:title ?title }""",
    )
    assert len(mentions) > at_least
    for surface, start, end, field, text, title in mentions:
        source = text if field == "text" else title
        assert source[int(start) : int(end)] == surface


def test_design_evidence_mentions_are_of_design_knowledge_only(store, full_store) -> None:
    """The default graph keeps the Mention of each decision, pattern, topic and person
    clause, the same as a full one, and none of a file, symbol or issue."""
    query = """SELECT ?m ?class WHERE { ?m a kg:Mention ; kg:denotes/a ?class }"""
    evidence, full = set(rows(store, query)), set(rows(full_store, query))
    design = {
        "https://w3id.org/kgraph/ns#" + c
        for c in ("DesignDecision", "DesignPattern", "Topic", "Person")
    }
    kept = {(m, c) for m, c in full if c in design}
    assert {(m, c) for m, c in evidence if c in design} == kept
    assert {m for m, _ in evidence} == {m for m, _ in kept}  # every one denotes design
    assert {c for _, c in kept} == design and len({m for m, _ in full}) > len(kept) + 50


def test_design_where_a_symbol_was_discussed_is_one_query(full_store: ox.Store) -> None:
    (found,) = rows(
        full_store,
        """SELECT ?digest ?line ?start ?surface WHERE {
             ?m kg:denotes/kg:name "_sliding_window_lookup" ; kg:surface ?surface ;
                kg:start ?start ; kg:inEntry ?e .
             ?e kg:line ?line ; kg:partOf/kg:sourceName ?digest }""",
    )
    assert found[0] == "001_fa5218c0feccaf24.txt" and found[3] == "_sliding_window_lookup"
    assert int(found[1]) > 1 and int(found[2]) > 0


def test_design_decision_with_rejected_alternative_on_its_pr(store: ox.Store) -> None:
    found = rows(
        store,
        """SELECT ?title ?rejected WHERE {
             ?pr kg:makesDecision ?d ; dcterms:title ?title .
             ?d rdfs:label "用逻辑 rank 而非物理位置表达 recency" ;
                kg:rejectedAlternative ?rejected }""",
    )
    assert found == [("KV Offload 热度改为每请求结算一次，修正淘汰顺序", "物理位置表达 recency")]


def test_design_pattern_is_a_skos_concept_with_its_evidence(store: ox.Store) -> None:
    found = rows(
        store,
        """SELECT ?en ?zh ?scheme ?evidence WHERE {
             ?pr kg:appliesPattern ?p ;
                 dcterms:title "KV Offload 异步查找复用在途探针，消除重复后端探测" .
             ?p a skos:Concept ; skos:notation "explicit-state-machine" ; skos:prefLabel ?en, ?zh ;
                skos:inScheme [ a skos:ConceptScheme ; skos:prefLabel ?scheme ] .
             FILTER(lang(?en) = "en" && lang(?zh) = "zh")
             ?m kg:denotes ?p ; kg:surface ?evidence ; kg:inEntry/^kg:describedBy ?pr }""",
    )
    assert found and {f[:3] for f in found} == {
        ("Explicit state machine", "显式状态机", "kgraph design patterns")
    }
    assert any("用显式状态机替代布尔标记" in f[3] for f in found)


def test_design_topics_people_audience_and_follow_ups(store: ox.Store) -> None:
    assert ("PD",) in rows(
        store, 'SELECT ?alias WHERE { ?t a kg:Topic ; rdfs:label "P/D" ; skos:altLabel ?alias }'
    )
    assert rows(
        store,
        """SELECT ?role WHERE { ?pr kg:involves ?p . ?p rdfs:label "ivanium" .
             ?m kg:denotes ?p ; kg:role ?role }""",
    ) == [("reviewer",)]
    audience = rows(store, "SELECT DISTINCT ?a WHERE { ?pr kg:recommendedFor ?a }")
    assert ("负责 KV Offload、CPU 缓存策略或调度器的工程师",) in audience
    follow_ups = [f for (f,) in rows(store, "SELECT ?f WHERE { ?pr kg:followUp ?f }")]
    assert any(f.startswith("若要投产，建议先补齐多级部署验证") for f in follow_ups)


def test_design_shapes_require_evidence_for_an_applied_pattern(seeds_out: Path) -> None:
    """The SHACL-SPARQL rule is live: drop the evidence mentions of one pattern and the
    graph no longer conforms."""
    data = rdflib.Graph().parse(seeds_out / "graph.ttl")
    shapes = rdflib.Graph().parse(SCHEMAS / "shapes.ttl")
    assert validate(data, shacl_graph=shapes, inference="none")[0]
    kg = rdflib.Namespace("https://w3id.org/kgraph/ns#")
    pattern = next(data.objects(None, kg.appliesPattern))
    for mention in list(data.subjects(kg.denotes, pattern)):
        data.remove((mention, None, None))
    ok, _, report = validate(data, shacl_graph=shapes, inference="none")
    assert not ok and "no mention in its entries denotes" in report


def test_design_cli_catalog_and_topics_extend_the_build(tmp_path: Path) -> None:
    catalog = tmp_path / "team.ttl"
    catalog.write_text(
        """@prefix kg: <https://w3id.org/kgraph/ns#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
<urn:team> a skos:ConceptScheme ; skos:prefLabel "team patterns"@en .
<urn:team#probe> a kg:DesignPattern ; skos:inScheme <urn:team> ; skos:notation "probe-first" ;
    skos:prefLabel "Probe first"@en ; kg:cue "孤儿回收"@zh .
""",
        "utf-8",
    )
    topics = tmp_path / "topics.ttl"
    topics.write_text(
        """@prefix kg: <https://w3id.org/kgraph/ns#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
<urn:t#lookup> a kg:Topic ; skos:prefLabel "Async lookup" ; skos:altLabel "异步查找" .
""",
        "utf-8",
    )
    code, _, stderr = build(
        [str(SEEDS)], tmp_path / "out", "--catalog", str(catalog), "--topics", str(topics)
    )
    assert code == 0, stderr
    store = ox.Store()
    store.bulk_load(path=str(tmp_path / "out" / "graph.ttl"), format=ox.RdfFormat.TURTLE)
    assert rows(
        store,
        """SELECT ?title ?scheme WHERE { ?pr kg:appliesPattern ?p ; dcterms:title ?title .
             ?p skos:notation "probe-first" ; skos:inScheme/skos:prefLabel ?scheme }""",
    ) == [("KV Offload 异步查找复用在途探针，消除重复后端探测", "team patterns")]
    assert rows(store, 'SELECT ?t WHERE { ?t a kg:Topic ; rdfs:label "Async lookup" }')


def test_design_cli_bad_catalog_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text(
        '@prefix kg: <https://w3id.org/kgraph/ns#> .\n<urn:x> kg:cue "[" .\n'
        "<urn:x> a kg:DesignPattern ;\n kg:nope ",
        "utf-8",
    )
    code, stdout, stderr = build([str(SEEDS)], tmp_path / "out", "--catalog", str(bad))
    assert code == 2 and stdout == ""
    assert stderr.startswith(f"{bad}:4: error: not valid Turtle")
    assert not (tmp_path / "out").exists()
