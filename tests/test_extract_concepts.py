"""Design concepts and the patterns recognised as combinations of them, on sentences written
for these tests (never taken from a corpus's check split).

Each concept is recognised in Chinese and in English (its catalog examples, and sentences
here); each pattern is found in sentences that state it in words no cue was written for,
and not in near misses: a suggestion, a negation, "不再 X，而是 Y" where only Y is done.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kgraph.catalog import builtin_knowledge
from kgraph.extract.concepts import find_concepts, negated, negation_starts
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
    "invalid-input": [
        "注册的类不是 ConfigParserBase 的子类会抛 ValueError。",
        "It raises a `ValueError` if the children disagree.",
        "字段为空时不再往下走。",
        "A malformed header used to reach the parser.",
        # a condition on the input before a rejection
        "`dtype` 不是 `float16` 就直接抛错。",
        "如果连后备内核也没有，则报错退出。",
        "The loader raises if the shard is not in the index.",
    ],
    "early": ["问题在启动时就暴露出来。", "The mistake surfaces up front, at start-up."],
    "boundary": ["这一步放在所有请求都要经过的入口。", "It runs at the entry point of the server."],
    "unchanged": [
        "没有设置这个开关的部署行为不变。",
        "Deployments that skip the flag are unaffected.",
    ],
    "old-users": ["老客户端照样能用。", "Existing callers see the same result."],
    "one-owner": ["两条路径都改为读同一份配置。", "Both paths call the same helper."],
    "no-copy": [
        "调度器不再自己推导这个值。",
        "the two copies could drift apart",
        "枚举加了新后端，这里自动跟上。",
        "The list picks up new backends automatically.",
    ],
    "order": ["先停引擎，再清缓存。", "The lock is released only then."],
    "bound": ["预估值不会超过实际持有的块数。", "The estimate is capped at the pool size."],
    "retry": ["失败的分片会被重试。", "The loader retries the shard that failed."],
    "once": ["每个块只归还一次。", "The stats are recorded once."],
    "same-work": ["多个请求同时加载同一个适配器。", "Duplicate requests arrive together."],
    "matrix": ["用例按两种调度模式参数化。", "The test is parametrized over both schedulers."],
    "sentinel": ["用 -1 作占位。", "A sentinel marks the empty slot."],
    "fallback": [
        "导入失败就记一条附带堆栈的 warning 并返回 False。",
        "Otherwise it logs an info message and stays on plain `torch.distributed`.",
        "缺少内核时退回纯 torch 实现。",
        "The pass falls back to the plain kernel.",
    ],
    "assert": ["这里用 `assert` 钉死前提。", "The builder asserts that the field is set."],
    "copy": ["先深拷贝一份配置。", "It works on a copy of the params."],
    # the rest of the catalog, in sentences from the tune splits, the seeds and dev where they
    # say it plainly, else in their style
    "added": [
        "`KVTransferConfig` 新增一个字段 `kv_load_failure_policy`。",
        "The PR adds a boolean field `assume_32_bit_indexing` to `DynamicShapesConfig`.",
    ],
    "atomic": [
        "写入先落到临时文件再整体替换，读者要么看到旧文件要么看到新文件。",
        (
            "It writes to a per-process temp file and then calls `os.replace`, which swaps the "
            "file in a single step."
        ),
    ],
    "branch-chain": [
        "`ModelRunner` 里那串按设备类型分派的 if/elif 分支链被一张表取代。",
        "`ModelRunner` carried a six-way if/elif ladder from device type to collective backend.",
    ],
    "capability": [
        "能力由连接器类型自己声明，调度器只管问。",
        "Each backend declares `supports_update_block_table` and the builder asks it.",
    ],
    "clear": [
        "退出时把原来的设置放回去。",
        "`gc.unfreeze()` in a `finally` puts them back afterwards.",
        "重置时把请求自己的 `transfer_jobs` 一并清空。",
        "Once waited on, the event is reset to `None`, so each event guards exactly one hand-off.",
    ],
    "coalesce": [
        "同一个键的并发查找只发起一次请求，后来者复用在途的探针。",
        "Concurrent lookups of the same key now share one in-flight request.",
    ],
    "config-source": [
        "KV 精度直接从检查点的量化配置里读出。",
        "The head dimension is read from the checkpoint's config.",
    ],
    "decouple": [
        "现在怎么取缓存与缓存里装的是什么各管各的，两件事从此互不牵扯。",
        (
            "The device-side timeout is left alone, which means the NCCL and gloo timeouts can "
            "now be tuned independently."
        ),
    ],
    "default": [
        "用户没有设置时，超时默认仍是 600 秒。",
        "Existing callers are unaffected because the new keyword defaults to `None`.",
    ],
    "enumerate-types": [
        "原先靠 `isinstance(allocator, SWATokenToKVPoolAllocator)` 逐个判断缓存类型。",
        "The dispatcher ran `isinstance` checks on each backend class in turn.",
    ],
    "estimate": [
        "无论上游怎么估算可存 token，能存的 chunk 数都不会超过实际持有的块。",
        "The scheduler allocates by the estimated number of blocks the prompt will need.",
    ],
    "existing": [
        "字段加在现有的 `DynamicShapesConfig` 上，没有另起配置类。",
        (
            "No new loader entry point was added, the existing function simply learned one more "
            "argument."
        ),
    ],
    "explicit": [
        "用户写下的 false 总能压过默认值，显式设置一律以用户的为准。",
        "A value the user sets explicitly always wins over the one derived from the model.",
    ],
    "failure": [
        "在不支持对称内存的环境里初始化失败时，进程会在启动时崩掉。",
        "On GPUs that lack multicast the allocation fails with a `RuntimeError`.",
    ],
    "fill-unset": [
        "优化级别只填补仍为 `None` 的字段，用户给过的值原样保留。",
        "The optimization level only fills the fields the user left unset.",
    ],
    "identity": [
        "核心判断是「用全局唯一的身份当键，而不是节点内的相对位置」。",
        "The connector now matches regions by layer name, a stable identity across ranks.",
    ],
    "infer": [
        "没有显式给出时，按 checkpoint 的量化配置自动选定 KV 精度。",
        "When the flag is absent the dtype is inferred from the checkpoint.",
    ],
    "instead-of-new": [
        "执行器直接用 renderer 已有的 `_executor`，没有另开线程池。",
        "The policy rides on the existing config rather than introducing a separate flag.",
    ],
    "invariant": [
        "这一前提被钉死：一个块在任意时刻只属于一个请求。",
        "The fix makes the invariant explicit: a negative draft id is never accepted.",
    ],
    "lazy": [
        "其他 ubatch 等到下一次发现尺寸不够时再各自扩容。",
        (
            "Nothing deletes the old artifacts: the next lookup computes a different hash and "
            "compiles afresh."
        ),
    ],
    "lenient": [
        "配置或环境变量给了非法值时只打一条 warning 并回落到默认值。",
        "An unrecognised value logs a warning and continues with the default cache dtype.",
    ],
    "means": [
        "`None` 表示调用方没有给出上限。",
        "A negative block id means the slot was never filled.",
    ],
    "must": [
        "缓存清理必须排在排空之后，否则仍在运行的请求会引用已被清掉的块。",
        "The abort must be applied before the next step is scheduled.",
    ],
    "name-lookup": [
        "改为查 `_LOAD_FORMAT_TO_MODEL_LOADER` 字典。",
        "The loader looks the format up in the registry dict.",
        "启动时按名字查到后端类并延迟导入。",
        "The backend class is looked up by name at start-up and imported lazily.",
    ],
    "no-crash": [
        "把后端换成 Triton，模型照常加载。",
        "The group still works, just without the shared-memory fast path.",
        "跳过这个融合 pass，其余编译照常进行。",
        "The pass is skipped and the rest still runs.",
        "导入失败时记一条日志继续服务，而不是让进程崩溃。",
        "If nothing survives, the engine keeps running without CUDA graphs instead of crashing.",
    ],
    "not-silent": [
        "拼错的编译选项不再被悄悄吞掉。",
        "A builder that forgets to fill the field fails immediately instead of silently syncing.",
    ],
    "override": [
        "遇到共享的输出对象时先 `copy.copy` 一份再写两个字段。",
        "It asks each child with a copy of the config whose transfer config is swapped per child.",
        "它像 `dataclasses.replace` 一样复制源 spec，只改写 `block_size` 一个字段。",
        "The helper builds the result with `replace(...)` and the given overrides.",
    ],
    "parameter": [
        "离线入口 `LLM` 的构造函数加了同名关键字参数。",
        "The method gains one more optional argument, `timeout`.",
    ],
    "partial": [
        "中途被打断后续跑时，只补跑缺结果的组合。",
        "Only the failed blocks are recomputed; the ones that loaded are kept.",
    ],
    "path": [
        "块的归还因此只剩一条路径。",
        "Only one path frees the blocks now.",
    ],
    "position": [
        "以前靠形参次序对上实参，漏传一个就整体错位。",
        "The KV engine id uses the local rank as its position within the node.",
    ],
    "registry": [
        "新后端只需在注册表里按名字登记类路径。",
        "Each backend is registered by name in the attention registry.",
    ],
    "scope": [
        "配置只在这个 `with` 上下文期间有效，退出即撤下。",
        (
            "The config is installed for exactly the duration of the reset and taken away again "
            "when the block exits."
        ),
    ],
    "separately": [
        "两个超时从此各自调节，互不影响。",
        "The two timeouts are tuned independently from now on.",
    ],
    "side-effect": [
        "块只在 `_free_blocks` 一个函数里归还。",
        "The blocks are freed in one place, `_free_blocks`.",
    ],
    "single-path": [
        "所有路径都走到同一个收尾函数，登记必须放在每一步都会经过的钩子里。",
        "Every path goes through one function, `structured_outputs_from_response_format()`.",
    ],
    "stale": [
        "过时的映射在读取时被识别出来并丢弃。",
        (
            'The module docstring states the rule as "a stale plan costs nothing and is never '
            'trusted".'
        ),
    ],
    "state": [
        "用三个具名状态替代「是否已加载」的布尔判断。",
        "The streaming state records which channel the parser is in.",
    ],
    "synchronize": [
        "阶段之间靠 `_staged_barrier` 同步，第二轮以不带超时的屏障对齐。",
        "The test blocks until a marker file is deleted, then issues the abort.",
    ],
    "test": [
        "新测试覆盖了注册自定义后端与 Mamba 后端两条路径。",
        "The new test reloads the envs module so that each case sees a fresh value.",
    ],
    "transition": [
        "每个分支处理完一个阶段后显式写下一个状态，推进到下一个阶段。",
        "Each handler finishes its phase and then advances to the next one.",
    ],
    "undo": [
        "任何一步失败时，把已占的块全部归还。",
        "On any exception the method aborts everything added so far before re-raising.",
    ],
    "unknown": [
        "遇到不认识的键直接报错。",
        "Any other dict logs a warning that lists the supported values.",
    ],
    "untouched": [
        "这样做是为了避免改到全局常量。",
        "The helper edits a copy without touching the shared default.",
        "原来的配置对象不被改动，调用方手里的那份保持原样。",
        "Cached blocks still go through `append_n`, so LRU eviction order is untouched.",
    ],
    "validate": [
        "反序列化时按 schema 校验每个字段。",
        "The field is checked against the allowed range when the request is parsed.",
    ],
    "without-fix": [
        "它在那个修复合入之前应该失败。",
        "The test is expected to fail until the fix lands.",
        "回归测试放到修复前的代码上必然失败。",
        "The regression test fails deterministically without the fix.",
    ],
}


def test_concepts_every_concept_has_sentences_in_both_languages() -> None:
    def language(sentence: str) -> str:
        return "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in sentence) else "en"

    covered = {(c, language(s)) for c, sentences in CONCEPT_SENTENCES.items() for s in sentences}
    missing = [(c, lang) for c in CONCEPT_IDS for lang in ("zh", "en") if (c, lang) not in covered]
    assert not missing


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
        (
            "early",
            "The pool is sized from the config rather than by a probe that runs at start-up.",
        ),
        # the old side of a replacement is what the change removes
        ("assert", "原来的 `assert prompt_text is None` 改成了真正抛出的 `ValueError`。"),
        ("fallback", "The PR replaces the silent fallback with a hard error."),
        ("assert", "对不支持的顶层配置名也从 assert 改为 ValueError。"),
        ("assert", "vllm/multimodal/cache.py 把这个 assert 换成抛 `MultiModalCacheMissError`。"),
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
    # a reverted PR, and a shutdown that is graceful: the words, not the patterns
    "atomic-rollback": [
        "这是此前被回滚的 #29980 的重新提交。",
        "This re-lands the change after its rollback.",
    ],
    "graceful-degradation": [
        "`serve_http` installs its own signal handlers for graceful shutdown.",
    ],
    "fail-fast-validation": [
        "建议后续对负数超时也直接抛 `ValueError`。",  # a suggestion
        "A follow-up could reject a negative timeout at start-up.",
        "这里不再抛 `ValueError`，而是记一条日志后继续。",  # 不再 X，而是 Y
    ],
    "backward-compatible-evolution": [
        "注意这里没有为旧字段保留任何转发，老脚本会直接失败。",
    ],
    "parametrized-test-matrix": [
        "A parametrized check over the registered backends would be cheap to add later.",
        "PR 没有新增测试，建议补一个按两种调度参数化的用例。",
        "No test covers the new branch.",
    ],
    "sentinel-value": [
        "The field now defaults to 16 instead of a computed value.",
        # one word that is a cue of two concepts (占位: sentinel and means) is one piece of
        # evidence, and a multimodal placeholder token is no sentinel
        "调度失败时归还编码器缓存占位。",
        "多模态 prompt 的占位符匹配改为线性扫描。",
    ],
    "invariant-as-assertion": ["新增 batch invariant 模式下的 RMSNorm 内核。"],
    "request-coalescing": ["关停时直接中止在途请求，不再等待。"],
    # a reviewer's request is work not done yet
    "deterministic-concurrency-test": [
        "A reviewer suggested adding a barrier to `test_shutdown_race` in a follow-up.",
        "It might be worth replacing the sleep in `test_drain` with an event.",
    ],
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


PARAPHRASES = Path(__file__).parent / "data" / "patterns" / "paraphrases"


@pytest.mark.parametrize(
    ("split", "recall_floor", "near_ceiling"),
    # the floors sit just under what the recognizer reaches (tune 92/119 and 3/42 near misses
    # matched; check, never tuned on, 41/85 and 5/42): a change that loses more fails here
    [("tune", 0.77, 3), ("check", 0.48, 6)],
)
def test_patterns_paraphrased_by_a_writer_who_saw_only_definitions(
    split: str, recall_floor: float, near_ceiling: int
) -> None:
    data = json.loads((PARAPHRASES / f"{split}.json").read_text(encoding="utf-8"))
    found = [pid in patterns_in(s) for pid, d in data.items() for s in d["match"]]
    near = [pid in patterns_in(s) for pid, d in data.items() for s in d["near"]]
    assert sum(found) / len(found) >= recall_floor
    assert sum(near) <= near_ceiling


@pytest.mark.parametrize(
    "text",
    [
        "这里不再回退，而是直接拒绝；并不是在查找时才丢弃，没有新增参数。",
        "It no longer retries, rather than failing; NOTHING is cached and it isn't lazy.",
        "Straße: the fold changes length, so it doesn't skip nor fall back.",  # ß folds to ss
        "无否定词的一句话，只有 `ValueError` 和 cache。",
    ],
)
def test_negation_looked_up_in_its_starts_answers_as_the_search_does(text: str) -> None:
    """`negated` with the text's negation starts (found once per text) is the same test as
    without them, at every position: the starts only skip the search where none can be."""
    starts = negation_starts(text)
    assert [negated(text, i, starts) for i in range(len(text) + 1)] == [
        negated(text, i) for i in range(len(text) + 1)
    ]


def test_a_cue_that_opens_with_its_own_negation_is_not_negated_by_an_earlier_one() -> None:
    """ "instead of crashing" says no-crash by itself; the "without" before it negates the
    CUDA graphs, not the cue, so the sentence is graceful degradation."""
    text = "so the engine keeps running without CUDA graphs instead of crashing"
    assert concepts_in(text) >= {"fallback", "no-crash"}
    assert patterns_in(text).get("graceful-degradation", 0) >= KNOWLEDGE.pattern_threshold
