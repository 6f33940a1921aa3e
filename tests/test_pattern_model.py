"""The learned second opinion on design patterns (`kgraph.pattern_model`), and how the
pattern extractor weighs it against the concept rules (`kgraph.extract.patterns._weighed`)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgraph.catalog import builtin_knowledge, load_knowledge
from kgraph.extract.patterns import (
    MODEL_MIN_CHARS,
    MODEL_PRIOR,
    asserted,
    confidence_of,
    extract_patterns,
)
from kgraph.model import Entry, Field
from kgraph.pattern_model import ModelError, grams, model_text, parse_model

KNOWLEDGE = builtin_knowledge()
MODEL = KNOWLEDGE.pattern_model
FILLER = "其余部分保持原样，调用方看不到区别。" * 14  # long enough for the model to read


def test_pattern_model_ships_with_the_builtin_knowledge_and_changes_its_fingerprint() -> None:
    assert MODEL is not None and "fail-fast-validation" in MODEL.patterns
    assert set(MODEL.patterns) <= {p.id for p in KNOWLEDGE.patterns}
    rules_only = load_knowledge(pattern_model=False)
    assert rules_only.pattern_model is None
    assert rules_only.fingerprint != KNOWLEDGE.fingerprint


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab c\n\t警告回退默认值拒绝，。XYZ_`\x00é"), max_size=60))
def test_pattern_model_counts_exactly_the_ngrams_it_was_trained_on(text: str) -> None:
    """The numpy lookup finds, of its own vocabulary, what `grams` lists for training."""
    assert MODEL is not None
    document = model_text(text, text)
    known = set(MODEL.vocabulary)
    expected = Counter(g for g in grams(document) if g in known)
    found = Counter(MODEL.vocabulary[row] for row in MODEL._rows_in(document))
    assert found == expected


def test_pattern_model_ngrams_stay_within_a_word_and_skip_the_lone_space() -> None:
    assert grams(" ab cd ") == [
        *["a", "b", "c", "d"],
        *[" a", "ab", "b ", " c", "cd", "d "],
        *[" ab", "ab ", " cd", "cd "],
    ]


def reference_probabilities(model_json: dict, title: str, text: str) -> dict[str, float]:
    """The regression written out plainly: sublinear TF-IDF, L2-normalised, then a sigmoid."""
    counts = Counter(g for g in grams(model_text(title, text)) if g in model_json["idf"])
    weights = {g: (1 + math.log(n)) * model_json["idf"][g] for g, n in counts.items()}
    norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
    out = {}
    for pattern, m in model_json["patterns"].items():
        z = m["intercept"] + sum(
            m["coefficients"].get(g, 0.0) * w / norm for g, w in weights.items()
        )
        out[pattern] = 1 / (1 + math.exp(-z))
    return out


def test_pattern_model_probabilities_are_the_logistic_regression_written_out() -> None:
    from importlib.resources import files

    model_json = json.loads(files("kgraph.schemas").joinpath("pattern-model.json").read_text())
    assert MODEL is not None
    for title, text in [
        (
            "加载失败时回退到默认实现",
            "导入失败时退回纯 torch 实现，并打印一条 warning，服务照常启动。",
        ),
        ("Reject unknown fields", "Unknown keys now raise a `ValueError` at construction."),
        ("", ""),
    ]:
        got = MODEL.probabilities(title, text)
        want = reference_probabilities(model_json, title, text)
        assert got.keys() == want.keys()
        assert all(abs(got[p] - want[p]) < 1e-9 for p in got)
        assert MODEL.probabilities(title, text) == got  # deterministic


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not a pattern model"),
        ('{"idf": {}}', "not a pattern model"),
        (
            '{"idf": {"ab": 1}, "patterns": {"x": {"intercept": 0, "coefficients": {"cd": 1}}}}',
            "has no idf",
        ),
        ('{"idf": {"abcd": 1}, "patterns": {}}', "unexpected length"),
        ('{"idf": [], "patterns": {}}', "not a pattern model"),
    ],
)
def test_pattern_model_file_that_cannot_be_read_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        parse_model(text)


def test_asserted_leaves_out_suggestions_contrasts_and_what_a_change_replaces() -> None:
    assert asserted("建议在内核缺失时退回纯 torch 实现。") == ""
    kept = asserted("这里不再直接抛 `ValueError`，而是记一条日志后继续。")
    assert "ValueError" not in kept and "记一条日志后继续" in kept
    assert "crashing" not in asserted(
        "It returns an error response rather than crashing, and logs it."
    )
    assert "assert" not in asserted("原来的 assert 改成了抛出的 ValueError。")
    assert asserted("Plain text stays.") == "Plain text stays."


def with_model(weight: float, pattern: str = "fail-fast-validation") -> object:
    """The built-in knowledge with a one-feature model: "zz" is evidence of `pattern`."""
    model = parse_model(
        json.dumps(
            {
                "idf": {"zz": 1.0},
                "patterns": {pattern: {"intercept": -4.0, "coefficients": {"zz": weight}}},
            }
        )
    )
    return dataclasses.replace(KNOWLEDGE, pattern_model=model)


def found(knowledge: object, text: str, title: str = "") -> dict[str, object]:
    return {m.key: m for m in extract_patterns(Entry("d", 1, title, text), knowledge)}  # type: ignore[arg-type]


def test_rules_evidence_is_combined_with_the_models_probability() -> None:
    text = "非法的 `block_size` 现在在构造时直接抛 `ValueError`。" + FILLER
    rules = found(dataclasses.replace(KNOWLEDGE, pattern_threshold=0.0, pattern_model=None), text)
    c = confidence_of(rules["fail-fast-validation"])
    for weight in (0.0, 8.0):
        knowledge = dataclasses.replace(with_model(weight), pattern_threshold=0.0)
        q = knowledge.pattern_model.probabilities("", asserted(text))["fail-fast-validation"]
        mention = found(knowledge, text)["fail-fast-validation"]
        assert confidence_of(mention) == round(1 - (1 - c) * (1 - q), 2)
        assert mention.detail.endswith(f"(model {q:.2f})")
        assert mention.surface == rules["fail-fast-validation"].surface  # the rules' span


def test_a_pattern_the_model_finds_needs_a_stated_concept_of_it() -> None:
    stated = "这类请求现在会被拒绝 zz zz zz。" + FILLER
    denied = "这类请求并没有被拒绝 zz zz zz。" + FILLER
    rules_only = dataclasses.replace(KNOWLEDGE, pattern_model=None)
    assert "fail-fast-validation" not in found(rules_only, stated)  # the rules alone: nothing
    mention = found(with_model(30.0), stated)["fail-fast-validation"]
    assert mention.detail.split(" ")[1].startswith("model:")
    assert mention.field is Field.TEXT and "拒绝" in mention.surface
    assert confidence_of(mention) >= KNOWLEDGE.pattern_threshold
    assert "fail-fast-validation" not in found(with_model(30.0), denied)  # its concept denied
    assert "fail-fast-validation" not in found(with_model(0.0), stated)  # the model says no


def test_the_model_gives_a_text_too_short_for_it_its_prior() -> None:
    short = "这类请求现在会被拒绝 zz zz zz。"
    assert len(asserted(short)) < MODEL_MIN_CHARS
    assert "fail-fast-validation" not in found(with_model(30.0), short)
    weak = "调度器先排空请求，再清缓存。"  # a weak ordering the rules see
    every = dataclasses.replace(KNOWLEDGE, pattern_threshold=0.0)
    (mention,) = found(every, weak).values()
    rules = found(dataclasses.replace(every, pattern_model=None), weak)["ordering-constraint"]
    c = confidence_of(rules)
    assert confidence_of(mention) == round(1 - (1 - c) * (1 - MODEL_PRIOR), 2)
    assert mention.detail.endswith(f"(model prior {MODEL_PRIOR:.2f})")


def test_the_prior_keeps_the_rules_own_threshold() -> None:
    """A rule confidence at the rules' own best threshold reaches the default with the prior."""
    from kgraph.catalog import DEFAULT_PATTERN_THRESHOLD, RULES_THRESHOLD

    assert round(1 - (1 - RULES_THRESHOLD) * (1 - MODEL_PRIOR), 2) == DEFAULT_PATTERN_THRESHOLD
