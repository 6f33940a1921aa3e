"""Design concepts and the patterns recognised as combinations of them, on sentences written
for these tests (never taken from a corpus's check split).

Each concept is recognised in Chinese and in English (its catalog examples, and sentences
here); each pattern is found in sentences that state it in words no cue was written for,
and not in near misses: a suggestion, a negation, "不再 X，而是 Y" where only Y is done.
"""

from __future__ import annotations

import dataclasses

import pytest

from kgraph.catalog import builtin_knowledge
from kgraph.extract.concepts import find_concepts
from kgraph.extract.patterns import confidence_of, extract_patterns
from kgraph.model import Entry, Field

KNOWLEDGE = builtin_knowledge()
CONCEPT_IDS = sorted(c.id for c in KNOWLEDGE.concepts)


def concepts_in(text: str) -> set[str]:
    return {h.concept for h in find_concepts(text, KNOWLEDGE)}


def patterns_in(summary: str, title: str = "") -> dict[str, float]:
    return {
        m.key: confidence_of(m) for m in extract_patterns(Entry("d", 1, title, summary), KNOWLEDGE)
    }


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("concept_id", CONCEPT_IDS)
def test_concepts_catalog_example_in_each_language_is_recognised(
    concept_id: str, lang: str
) -> None:
    (concept,) = [c for c in KNOWLEDGE.concepts if c.id == concept_id]
    examples = [t.text for t in concept.examples if t.lang == lang]
    assert examples, f"{concept_id} has no @{lang} example"
    assert all(concept_id in concepts_in(e) for e in examples), examples


# Sentences of our own, one or more per language, for the concepts patterns lean on most.
CONCEPT_SENTENCES = {
    "reject": [
        "参数越界时构造函数会拒绝这个请求。",
        "The validator refuses a negative block size.",
        "Passing both flags now ends in a `TypeError`.",  # a code span says reject
        "两者同时出现就抛 `VLLMValidationError`。",
    ],
    "invalid-input": ["字段为空时不再往下走。", "A malformed header used to reach the parser."],
    "early": ["问题在启动时就暴露出来。", "The mistake surfaces up front, at start-up."],
    "boundary": ["这一步放在所有请求都要经过的入口。", "It runs at the entry point of the server."],
    "unchanged": [
        "没有设置这个开关的部署行为不变。",
        "Deployments that skip the flag are unaffected.",
    ],
    "old-users": ["老客户端照样能用。", "Existing callers see the same result."],
    "one-owner": ["两条路径都改为读同一份配置。", "Both paths call the same helper."],
    "no-copy": ["调度器不再自己推导这个值。", "the two copies could drift apart"],
    "order": ["先停引擎，再清缓存。", "The lock is released only then."],
    "bound": ["预估值不会超过实际持有的块数。", "The estimate is capped at the pool size."],
    "retry": ["失败的分片会被重试。", "The loader retries the shard that failed."],
    "once": ["每个块只归还一次。", "The stats are recorded once."],
    "matrix": ["用例按两种调度模式参数化。", "The test is parametrized over both schedulers."],
    "sentinel": ["用 -1 作占位。", "A sentinel marks the empty slot."],
    "fallback": ["缺少内核时退回纯 torch 实现。", "The pass falls back to the plain kernel."],
    "assert": ["这里用 `assert` 钉死前提。", "The builder asserts that the field is set."],
    "copy": ["先深拷贝一份配置。", "It works on a copy of the params."],
}


@pytest.mark.parametrize(
    ("concept_id", "sentence"),
    [(c, s) for c, sentences in CONCEPT_SENTENCES.items() for s in sentences],
)
def test_concepts_recognised_in_real_sentences(concept_id: str, sentence: str) -> None:
    assert concept_id in concepts_in(sentence)


@pytest.mark.parametrize(
    ("concept_id", "sentence"),
    [
        ("reject", "这里不再拒绝空字符串。"),
        ("reject", "The server no longer rejects an empty prompt."),
        ("unchanged", "没有保持不变的部分。"),
        ("retry", "The client does not retry."),
        # a contrast denies its whole clause, however far the concept sits from it
        ("stale", "这是一次主动的全量清空，并不是在下次查找时才识别出过期嵌入再丢弃。"),
        ("early", "The pool is sized from the config rather than by a probe that runs at start-up."),
        # the old side of a replacement is what the change removes
        ("assert", "原来的 `assert prompt_text is None` 改成了真正抛出的 `ValueError`。"),
        ("fallback", "The PR replaces the silent fallback with a hard error."),
    ],
)
def test_concepts_negated_in_their_clause_are_not_stated(concept_id: str, sentence: str) -> None:
    assert concept_id not in concepts_in(sentence)


@pytest.mark.parametrize(
    ("concept_id", "sentence"),
    [
        # a contrast ends at its quotation: "A 而非 B" + "C" says C
        ("invalid-input", '"按层名身份而非 region 索引路由" + "缺失即响亮失败"的设计值得借鉴。'),
        # nor does it reach past its clause: "不再 X，而是 Y" states Y
        ("reject", "不再悄悄截断过长的 prompt，而是直接抛 `ValueError`。"),
        # a concept that names the alternative turned away from is stated by the contrast
        ("position", "路由按层名身份而非 region 索引。"),
        ("position", "Blocks are matched by name, no longer by their position in the list."),
        # the new side of a replacement is stated
        ("reject", "原来的告警分支也改成了直接抛 `ValueError`。"),
    ],
)
def test_concepts_beside_a_contrast_are_stated(concept_id: str, sentence: str) -> None:
    assert concept_id in concepts_in(sentence)


# Sentences that apply a pattern, in words the pattern's own cues were not written for.
MATCHES = {
    "fail-fast-validation": [
        "构造阶段遇到缺失的 tokenizer 配置就直接抛 `ValueError`。",
        "An unknown key in the YAML file is rejected when the config is built.",
    ],
    "validate-at-boundary": [
        "这项检查放在所有请求都要经过的入口处。",
        "The check sits at the entry point every request passes through.",
    ],
    "backward-compatible-evolution": [
        "没有传这个参数的老调用方行为不变。",
        "Existing callers that never pass the keyword are unaffected.",
    ],
    "single-source-of-truth": [
        "两个入口都改为调用同一个函数，不再各写一遍判断。",
        "Both loaders now call one helper instead of two copies that could drift apart.",
    ],
    "graceful-degradation": [
        "导入失败时退回纯 torch 实现，服务照常运行。",
        "When the kernel is missing the pass falls back to the plain one and keeps running.",
    ],
    "parametrized-test-matrix": [
        "测试按同步和异步两种调度参数化。",
        "The new test is parametrized over both cache layouts.",
    ],
    "sentinel-value": [
        "`None` 表示调用方没有给出上限。",
        "Here `-1` means the slot was never filled.",
    ],
    "explicit-over-inferred-config": [
        "用户显式设置了这个值时，默认推导不再生效。",
        "When the user sets the dtype explicitly it wins over the default.",
    ],
    "extend-existing-api": [
        "在现有的请求模型上新增一个可选字段。",
        "The PR adds an optional keyword to the existing method rather than adding an endpoint.",
    ],
    "copy-with-override": [
        "先拷贝一份参数再改副本，原对象不受影响。",
        "It builds a copy with the override, so the original stays untouched.",
    ],
}


@pytest.mark.parametrize(
    ("pattern_id", "sentence"),
    [(p, s) for p, sentences in MATCHES.items() for s in sentences],
)
def test_patterns_found_as_combinations_of_concepts(pattern_id: str, sentence: str) -> None:
    found = patterns_in(sentence)
    assert pattern_id in found, found
    assert KNOWLEDGE.pattern_threshold <= found[pattern_id] <= 1.0


NEAR_MISSES = {
    "fail-fast-validation": [
        "建议后续对负数超时也直接抛 `ValueError`。",  # a suggestion
        "A follow-up could reject a negative timeout at start-up.",
        "这里不再抛 `ValueError`，而是记一条日志后继续。",  # 不再 X，而是 Y
    ],
    "backward-compatible-evolution": [
        "注意这里没有为旧字段保留任何转发，老脚本会直接失败。",
    ],
    "parametrized-test-matrix": [
        "PR 没有新增测试，建议补一个按两种调度参数化的用例。",
        "No test covers the new branch.",
    ],
    "sentinel-value": ["The field now defaults to 16 instead of a computed value."],
}


@pytest.mark.parametrize(
    ("pattern_id", "sentence"),
    [(p, s) for p, sentences in NEAR_MISSES.items() for s in sentences],
)
def test_patterns_near_misses_are_not_evidence(pattern_id: str, sentence: str) -> None:
    assert pattern_id not in patterns_in(sentence)


def test_patterns_title_is_read_too() -> None:
    mentions = extract_patterns(
        Entry("d", 1, "拒收未知字段，拼错的选项在构造时直接报错", "改动很小。"), KNOWLEDGE
    )
    titled = [m for m in mentions if m.field is Field.TITLE]
    assert [m.key for m in titled] == ["fail-fast-validation"]
    assert titled[0].surface == "拒收未知字段，拼错的选项在构造时直接报错"


def test_patterns_threshold_trades_precision_for_recall() -> None:
    sentence = "调度器先排空请求，再清缓存。"  # a weak ordering: below the default threshold
    assert "ordering-constraint" not in patterns_in(sentence)
    every = dataclasses.replace(KNOWLEDGE, pattern_threshold=0.0)
    (found,) = [m for m in extract_patterns(Entry("d", 1, "", sentence), every)]
    assert found.key == "ordering-constraint"
    assert 0.0 < confidence_of(found) < KNOWLEDGE.pattern_threshold
