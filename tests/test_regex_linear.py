"""Hostile text cannot stall a build: every regex and every extractor stays linear.

The checks are generic: they find every module-level pattern in kgraph and every extractor
registered in `kgraph.extract.EXTRACTORS`, so the extractors other branches add are checked
by these same tests once merged. Timings run in a forked child with a hard timeout
(tests/adversarial.py), so a catastrophic pattern fails by name instead of hanging CI.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pyoxigraph as ox
import pytest
import regex

from adversarial import (
    ADVERSARIAL_TEXTS,
    entry_for,
    module_patterns,
    pumped,
    pumps,
    run_timed,
    sample,
    scan,
)
from conftest import build
from kgraph.catalog import builtin_knowledge
from kgraph.extract import EXTRACTORS, Extractor, extract

PATTERNS = module_patterns()
SHORT, LONG = 2_000, 8_000  # characters: a quadratic pattern takes 16x longer at LONG
SUSPECT = 0.002  # seconds at SHORT: linear patterns take microseconds
CONFIRMED = 5  # the slowest pumps, timed again at LONG
EXTRACTOR_BUDGET = 5.0  # seconds for one extractor on one ~150,000-character entry


def _assert_linear(pattern: Any, scan_budget: float = 4.0) -> None:
    """Run in the child: time each pumped input at SHORT; the slowest again at LONG.

    Linear time grows 4x from SHORT to LONG and quadratic 16x; the 50 ms floor and the best
    of three runs keep a linear pattern that a busy machine made look slow from failing.
    Only the slowest pumps are timed again (a quadratic one is among them), and the first
    pass stops after `scan_budget` seconds, so a slow but linear pattern costs seconds too.
    """
    timed = []
    started = time.perf_counter()
    for prefix, pump in pumps(pattern):
        timed.append((_seconds(pattern, pumped(prefix, pump, SHORT)), prefix, pump))
        if time.perf_counter() - started > scan_budget:
            break
    for short, prefix, pump in sorted(timed, reverse=True)[:CONFIRMED]:
        if short <= SUSPECT:
            break
        long = _seconds(pattern, pumped(prefix, pump, LONG))
        if long > 0.05 and long > 8 * short:  # again, the best of three
            short, long = (
                min(_seconds(pattern, pumped(prefix, pump, n)) for _ in range(3))
                for n in (SHORT, LONG)
            )
        if long > 0.05 and long > 8 * short:
            raise AssertionError(
                f"superlinear: {prefix!r} + {pump!r} * n + NUL: {short * 1e3:.1f} ms at "
                f"{SHORT} characters, {long * 1e3:.1f} ms at {LONG}"
            )


def _seconds(pattern: Any, text: str) -> float:
    start = time.perf_counter()
    scan(pattern, text)
    return time.perf_counter() - start


def test_regex_audit_finds_the_patterns_of_every_stage() -> None:
    names = {name for name, _ in PATTERNS}
    for expected in (
        "kgraph.ingest.text.LINE_BREAK",
        "kgraph.ingest.formats._MD_HEADING",
        "kgraph.extract.code.CODE_SPAN",
        "kgraph.extract.issues.HASH_REFERENCE",
        "kgraph.extract.advice.ADVICE",
        "kgraph.link._NUMBER_TAIL",
    ):
        assert expected in names
    assert len(PATTERNS) >= 30


@pytest.mark.parametrize(
    "source, expected",
    [
        (r"^##\s+(.*?)\s*#*\s*$", "## a # "),
        (r"\[#(\d{1,9})\]\(([^\s()]++)\)", "[#1](a)"),
        (r"(?<![\w&/#])#(\d{1,9})(?![\w#])", "a#1a"),
        (r"[\p{Han}\u3000-\u303f]", "中"),
    ],
)
def test_regex_sample_contains_what_the_pattern_repeats(source: str, expected: str) -> None:
    assert sample(source) == expected


@pytest.mark.parametrize(
    "source",
    [  # the Markdown heading, "[title](url)" and "([#N](url))" patterns kgraph used to have
        r"^##\s+(.*?)\s*#*\s*$",
        r"^\[(.+)\]\((\S+)\)$",
        r"\[#(\d+)\]\((\S+?)\)",
    ],
)
def test_regex_audit_catches_the_quadratic_patterns_kgraph_had(source: str) -> None:
    with pytest.raises(RuntimeError, match="superlinear"):
        run_timed(_assert_linear, regex.compile(source), timeout=120)


@pytest.mark.parametrize("name, pattern", PATTERNS, ids=[name for name, _ in PATTERNS])
def test_regex_stays_linear_on_pumped_input(name: str, pattern: Any) -> None:
    run_timed(_assert_linear, pattern, timeout=120)


def _assert_cues_linear() -> None:
    knowledge = builtin_knowledge()
    patterns = [(c.source, c.pattern) for pattern in knowledge.patterns for c in pattern.cues]
    patterns.append(("topic names", knowledge.topic_names))
    for text, pattern in patterns:
        try:
            _assert_linear(pattern, scan_budget=1.0)
        except AssertionError as error:
            raise AssertionError(f"cue {text!r}: {error}") from None


def test_regex_catalog_cues_stay_linear_on_pumped_input() -> None:
    """The pattern catalog's ~700 cue regexes and the topic table's name pattern are data
    (schemas/*.ttl), not module constants: the same audit, in one child."""
    run_timed(_assert_cues_linear, timeout=600)


def _extract_with(extractor: Extractor, text: str) -> None:
    extract(entry_for(text), (extractor,))


@pytest.mark.parametrize("extractor", EXTRACTORS, ids=[e.name for e in EXTRACTORS])
@pytest.mark.parametrize("family", sorted(ADVERSARIAL_TEXTS))
def test_extract_every_extractor_is_fast_on_adversarial_entries(
    extractor: Extractor, family: str
) -> None:
    text = ADVERSARIAL_TEXTS[family]()
    seconds = run_timed(_extract_with, extractor, text, timeout=10 * EXTRACTOR_BUDGET)
    assert seconds < EXTRACTOR_BUDGET, f"{extractor.name} took {seconds:.1f}s on {family}"


def test_extract_ten_thousand_spans_in_one_entry_are_all_classified() -> None:
    text = ADVERSARIAL_TEXTS["10k-backtick-spans"]()
    mentions = extract(entry_for(text))
    symbols = {m.key for m in mentions if m.field.value == "text" and m.kind.value == "symbol"}
    assert len(symbols) == 10_000 and "Cache9999.evict_9999" in symbols


def test_cli_builds_10k_spans_unbalanced_backticks_and_deep_brackets(tmp_path) -> None:
    """Through the real CLI; without the HTML page, whose layout of 20,000 symbol nodes is a
    question of scale, not of hostile text."""
    # In three entries: one of them would be longer than an entry may be (kgraph.limits).
    spans = [" ".join(f"`Cache{i}.evict_{i}()`" for i in range(k, 10_000, 3)) for k in range(3)]
    digest = tmp_path / "spans.txt"
    digest.write_text(
        "2026-01-01\n"
        + "".join(f"Ten thousand spans, part {k + 1}\n{part}.\n" for k, part in enumerate(spans))
        + f"Unbalanced backticks\n{'`a ' * 20_000}`.\n"
        + f"Deep brackets\n`{'(' * 5000}{')' * 5000}` and {'([{' * 5000}{'}])' * 5000}.\n",
        "utf-8",
    )
    start = time.perf_counter()
    code, stdout, stderr = build(
        [str(digest)],
        tmp_path / "out",
        *("--only", "turtle", "--only", "ntriples"),
        *("--only", "jsonld", "--only", "json"),
    )
    seconds = time.perf_counter() - start
    assert code == 0 and not stderr, stderr
    assert stdout.startswith("1 digests, 5 entries, 5 PRs")
    assert seconds < 60, f"took {seconds:.0f}s"
    graph = json.loads((tmp_path / "out" / "graph.json").read_text("utf-8"))
    names = {n["qualifiedName"] for n in graph["nodes"] if n["kind"] == "CodeSymbol"}
    assert {f"Cache{i}.evict_{i}" for i in range(10_000)} <= names
    triples = ox.parse(path=str(tmp_path / "out" / "graph.ttl"), format=ox.RdfFormat.TURTLE)
    assert sum(1 for _ in triples) == (tmp_path / "out" / "graph.nt").read_text("utf-8").count("\n")
