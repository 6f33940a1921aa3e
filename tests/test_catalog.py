"""The pattern catalog and the topic table: what they must carry, and how users extend them."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SCHEMAS
from kgraph import catalog
from kgraph.catalog import CatalogError, builtin_knowledge, load_knowledge
from kgraph.extract.patterns import extract_patterns
from kgraph.model import Entry

REQUIRED_IDS = """single-source-of-truth explicit-state-machine lazy-invalidation atomic-rollback
decoupling backward-compatible-evolution fail-fast-validation validate-at-boundary
lenient-config-parsing sentinel-value invariant-as-assertion parametrized-test-matrix
deterministic-concurrency-test negative-control extend-existing-api identity-over-position
explicit-over-inferred-config config-inference request-coalescing graceful-degradation
scoped-state copy-with-override plugin-registry bounded-estimate partial-retry
single-effect-path ordering-constraint capability-on-type""".split()
CATALOG_IDS = sorted(p.id for p in builtin_knowledge().patterns)

PREFIXES = """@prefix kg: <https://w3id.org/kgraph/ns#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix ex: <https://example.org/> .
"""


def test_catalog_carries_every_required_pattern() -> None:
    assert set(REQUIRED_IDS) <= set(CATALOG_IDS)


@pytest.mark.parametrize("pattern_id", CATALOG_IDS)
def test_catalog_pattern_is_described_in_both_languages(pattern_id: str) -> None:
    pattern = builtin_knowledge().pattern(pattern_id)
    assert pattern is not None
    assert {t.lang for t in pattern.labels} == {"en", "zh"}
    assert {t.lang for t in pattern.definitions} == {"en", "zh"}
    assert all(len(t.text) > 20 for t in pattern.definitions)
    assert pattern.scheme == "kgraph design patterns"


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("pattern_id", CATALOG_IDS)
def test_catalog_pattern_has_a_cue_in_each_language_that_fires(pattern_id: str, lang: str) -> None:
    """The catalog's own example sentence of each language is recognised by a cue of that
    language, and extraction finds the pattern in it with the evidence around the cue."""
    pattern = builtin_knowledge().pattern(pattern_id)
    assert pattern is not None
    (example,) = [t.text for t in pattern.examples if t.lang == lang]
    cues = [
        c
        for c in pattern.cues
        if c.lang == lang and c.source not in {t.text for t in pattern.labels}
    ]
    assert any(c.pattern.search(example) for c in cues), f"no {lang} cue of {pattern_id} fires"
    every = dataclasses.replace(builtin_knowledge(), pattern_threshold=0.0)  # weak cues too
    found = [m for m in extract_patterns(Entry("d", 1, "t", example), every) if m.key == pattern_id]
    assert found and all(example[m.start : m.end] == m.surface for m in found)


def test_catalog_cue_inside_a_suggestion_is_no_evidence() -> None:
    knowledge = builtin_knowledge()
    text = "建议对 `AsyncLookupManager` 增加一条断言，要求回收后队列为空。"
    assert not [m for m in extract_patterns(Entry("d", 1, "t", text), knowledge)]
    text = "新增一条断言，要求回收后队列为空。"
    assert [m.key for m in extract_patterns(Entry("d", 1, "t", text), knowledge)] == [
        "invariant-as-assertion"
    ]


def test_catalog_user_file_adds_a_pattern_and_extends_an_existing_one(tmp_path: Path) -> None:
    user = tmp_path / "mine.ttl"
    user.write_text(
        PREFIXES
        + """ex:scheme a skos:ConceptScheme ; skos:prefLabel "team patterns"@en .
ex:circuit-breaker a kg:DesignPattern, skos:Concept ; skos:inScheme ex:scheme ;
    skos:notation "circuit-breaker" ; skos:prefLabel "Circuit breaker"@en, "熔断"@zh ;
    kg:cue "熔断(器|机制)"@zh, "\\\\btrips? the breaker\\\\b"@en .
ex:more a kg:DesignPattern ; skos:notation "decoupling" ; skos:altLabel "各走各的"@zh .
""",
        "utf-8",
    )
    knowledge = load_knowledge([user])
    breaker = knowledge.pattern("circuit-breaker")
    assert breaker is not None and breaker.scheme == "team patterns"
    assert len(knowledge.patterns) == len(CATALOG_IDS) + 1

    def ids(text: str) -> list[str]:
        return [m.key for m in extract_patterns(Entry("d", 1, "t", text), knowledge)]

    assert ids("下游超时后熔断器打开，请求直接返回。") == ["circuit-breaker"]
    assert ids("After three timeouts the client trips the breaker.") == ["circuit-breaker"]
    assert ids("存储与传输从此各走各的。") == ["decoupling"]
    builtin = extract_patterns(Entry("d", 1, "t", "存储与传输从此各走各的。"), builtin_knowledge())
    assert builtin == []


@pytest.mark.parametrize(
    "body, line, message",
    [
        (
            'ex:a a kg:DesignPattern ; skos:notation "a" ;\n    kg:cue "(unclosed"@en .\n',
            5,
            "not a valid expression",
        ),
        (
            'ex:a a kg:DesignPattern ;\n    skos:prefLabel "A"@en .\n',
            4,
            "exactly one skos:notation",
        ),
        (
            'ex:a a kg:DesignPattern ; skos:notation "a" ;\n    kg:cue "unterminated .\n',
            5,
            "not valid Turtle",
        ),
        (
            '\nex:a a kg:DesignPattern ; skos:notation "a" ;\n    kg:cue "a cue"@en .\n',
            5,
            "pattern a needs a skos:prefLabel",
        ),
        (
            '\n\nex:d a kg:DesignPattern ; skos:notation "decoupling" ;\n'
            '    skos:prefLabel "Loose coupling"@en .\n',
            6,
            "pattern decoupling has two skos:prefLabel in @en",
        ),
        (  # regex compiles recursively: RecursionError, a traceback
            'ex:a a kg:DesignPattern ; skos:notation "a" ;\n    kg:cue "'
            + "(" * 3000
            + "a"
            + ")" * 3000
            + '"@en .\n',
            5,
            "cue of a is not a valid expression: it nests 3,000 levels of brackets, more than 64",
        ),
        (  # escaped brackets are text, not nesting
            'ex:a a kg:DesignPattern ; skos:notation "a" ;\n    kg:cue "'
            + "\\\\(" * 100
            + '["@en .\n',
            5,
            "cue of a is not a valid expression: unterminated character set",
        ),
    ],
)
def test_catalog_errors_name_file_and_line(
    tmp_path: Path, body: str, line: int, message: str
) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text(PREFIXES + body, "utf-8")
    with pytest.raises(CatalogError) as caught:
        load_knowledge([bad])
    assert str(caught.value).startswith(f"{bad}:{line}: error: ")
    assert message in str(caught.value)


def test_catalog_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="no such file"):
        load_knowledge([], [tmp_path / "nope.ttl"])


def test_catalog_file_without_patterns_or_topics_is_an_error_not_a_no_op(tmp_path: Path) -> None:
    """A file whose concepts lack the kgraph class would otherwise change nothing, silently."""
    plain = tmp_path / "plain.ttl"
    plain.write_text(
        PREFIXES + 'ex:a a skos:Concept ; skos:notation "a" ; kg:cue "x"@en .\n', "utf-8"
    )
    with pytest.raises(CatalogError, match=r"plain\.ttl:1: error: no kg:DesignPattern"):
        load_knowledge([plain])
    with pytest.raises(CatalogError, match=r"plain\.ttl:1: error: no kg:Topic"):
        load_knowledge([], [plain])


def test_topics_alias_table_folds_spellings_into_one_topic() -> None:
    knowledge = builtin_knowledge()
    assert knowledge.canonical_topic("PD") == "P/D"
    assert knowledge.canonical_topic("P/D disaggregation") == "P/D"
    assert knowledge.canonical_topic("KV offload") == "KV Offload"
    assert knowledge.canonical_topic("shm") == "shared memory"
    assert knowledge.canonical_topic("Unlisted") == "Unlisted"
    topic = knowledge.topic("P/D")
    assert topic is not None and "PD" in topic.aliases


def test_topics_user_table_adds_aliases_and_takes_over_redefined_ones(tmp_path: Path) -> None:
    user = tmp_path / "topics.ttl"
    user.write_text(
        PREFIXES
        + """ex:pd a kg:Topic ; skos:prefLabel "P/D" ; skos:altLabel "prefill-decode split" .
ex:dis a kg:Topic ; skos:prefLabel "Disaggregation" ; skos:altLabel "PD" .
""",
        "utf-8",
    )
    knowledge = load_knowledge([], [user])
    assert knowledge.canonical_topic("prefill-decode split") == "P/D"
    assert knowledge.canonical_topic("PD") == "Disaggregation"
    pd = knowledge.topic("P/D")
    assert pd is not None and "PD" not in pd.aliases


def test_topics_table_file_is_the_packaged_one() -> None:
    assert (SCHEMAS / "topics.ttl").read_text("utf-8").count("a kg:Topic") == len(
        builtin_knowledge().topics
    )


def test_catalog_every_builtin_cue_compiles() -> None:
    """The built-in cues are compiled when first run, not on loading: this is their check."""
    knowledge = builtin_knowledge()
    cues = [cue for pattern in knowledge.patterns for cue in pattern.cues]
    assert len(cues) > 600
    for cue in cues:
        assert cue.pattern.pattern == cue.expression


def _evil_catalog(tmp_path: Path, cue: str) -> Path:
    catalog = tmp_path / "evil.ttl"
    catalog.write_text(
        PREFIXES + 'ex:evil a kg:DesignPattern ; skos:notation "evil" ;\n'
        f'    skos:prefLabel "Evil"@en ;\n    kg:cue "{cue}"@en .\n',
        "utf-8",
    )
    return catalog


def _kgraph(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The real CLI in a child: before the fix, a catastrophic cue ran for ever."""
    return subprocess.run(
        [sys.executable, "-m", "kgraph", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("cue", ["(a|aa)+$", r"(\\w|\\w\\w)+$"])  # as Turtle writes them
def test_catalog_cue_that_backtracks_catastrophically_is_refused_when_it_loads(
    tmp_path: Path, cue: str
) -> None:
    """`(a|aa)+$` made `kgraph build` run for ever on a 60-character summary."""
    digest = tmp_path / "d.txt"
    digest.write_text("2026-01-01\nA title\n" + "a" * 60 + "!\n", "utf-8")
    run = _kgraph(
        "build", digest, "-o", tmp_path / "out", "--catalog", _evil_catalog(tmp_path, cue)
    )
    assert run.returncode == 2
    assert run.stderr.startswith(
        f"{tmp_path / 'evil.ttl'}:6: error: cue of evil backtracks catastrophically: matching "
        "it on 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\x00' took over 0.1 s"
    )
    assert not (tmp_path / "out" / "graph.json").exists()


def test_catalog_probes_refuse_no_builtin_cue() -> None:
    """The probes a user's cue must pass are passed by every cue of the built-in catalog."""
    slow = [
        (pattern.id, cue.expression, probe)
        for pattern in builtin_knowledge().patterns
        for cue in pattern.cues
        for probe in catalog._probes(cue.expression)
        if catalog._times_out(cue.pattern, probe)
    ]
    assert slow == []


def test_catalog_cue_that_runs_past_its_timeout_is_stopped_and_named_at_the_entry(
    tmp_path: Path,
) -> None:
    """`(x+x+)+y` passes the probes (cubic, not exponential) but took minutes on a long
    summary: the match is stopped after CUE_TIMEOUT, a warning names the cue, its catalog
    line and the entry, and the rest of the entry and the build go on."""
    digest = tmp_path / "d.txt"
    digest.write_text(
        "2026-01-01\nA long one\nSee `a.py`: " + "x" * 3000 + " y.\nA short one\nxxy.\n", "utf-8"
    )
    catalog = _evil_catalog(tmp_path, "(x+x+)+y")
    for _ in range(2):  # a stopped cue's entry is not cached: the next build says it again
        run = _kgraph("build", digest, "-o", tmp_path / "out", "--catalog", catalog, "-q")
        assert run.returncode == 0, run.stderr
        assert run.stderr.splitlines() == [
            f"{digest}:2: warning: cue '(x+x+)+y' of pattern evil ({catalog}:6) was stopped "
            "after 0.5 s on this entry, so its evidence here is missing: it backtracks "
            "catastrophically on this text",
            "kgraph: 1 problem(s) (0 error(s), 1 warning(s))",
        ]
        graph = json.loads((tmp_path / "out" / "graph.json").read_text("utf-8"))
        evidence = [n["surface"] for n in graph["nodes"] if n["id"].endswith("/pattern-evil")]
        files = [n for n in graph["nodes"] if n["kind"] == "SourceFile"]
        assert evidence == ["xxy"] and [f["path"] for f in files] == ["a.py"]
