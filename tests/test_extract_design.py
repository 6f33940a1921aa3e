"""Patterns, topics, people, audience and follow-ups on real sentences, and mention offsets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DEV, SEEDS
from kgraph.catalog import builtin_knowledge
from kgraph.extract import EXTRACTORS, extract
from kgraph.extract.audience import extract_audience
from kgraph.extract.followups import extract_follow_ups
from kgraph.extract.patterns import extract_patterns
from kgraph.extract.people import extract_people
from kgraph.extract.topics import extract_topics
from kgraph.ingest import read_inputs
from kgraph.model import Entry, Field, Kind


def entry(text: str, title: str = "t") -> Entry:
    return Entry("d.txt", 1, title, text)


def patterns(text: str) -> dict[str, str]:
    return {m.key: m.surface for m in extract_patterns(entry(text), builtin_knowledge())}


@pytest.mark.parametrize(
    "text, pattern_id, evidence",
    [
        (
            "重点关注"
            " `policies/lru.py` 的 `_is_current()` / `evict()` 三者构成的懒失效与原子回滚协议，"
            "这是最容易被破坏的部分。",
            "lazy-invalidation",
            "重点关"
            "注 `policies/lru.py` 的 `_is_current()` / `evict()` 三者构成的懒失效与原子回滚协议",
        ),
        (
            "测试手"
            "法同样值得借鉴：用 `monkeypatch` 把 `batch_lookup` 换成受 `threading.Event` 控制的 "
            "`blocking_lookup`，把并发时序钉死成确定性断言。",
            "deterministic-concurrency-test",
            "用 `monkeypatch` 把 `batch_lookup` 换成受 `threading.Event` 控制的 `blocking_lookup`",
        ),
        (
            "Saving g"
            "oes through a temp file plus `os.replace`, and an `OSError` on that path only logs.",
            "graceful-degradation",
            "and an `OSError` on that path only logs",
        ),
        (
            "The mappi"
            "ng now lives in one table, `_DEVICE_TO_DISTRIBUTED_BACKEND` in `parallel_state.py`.",
            "single-source-of-truth",
            "The mapping now lives in one table",
        ),
        (
            # the code between the cue's parts is long; the compacted text still sees one clause
            "老的 `--kv-cache-memory-utilization-fraction-override` 参数照样生效。",
            "backward-compatible-evolution",
            "老的 `--kv-cache-memory-utilization-fraction-override` 参数照样生效",
        ),
    ],
)
def test_patterns_real_sentences_with_their_evidence_clause(
    text: str, pattern_id: str, evidence: str
) -> None:
    assert patterns(text)[pattern_id] == evidence


@pytest.mark.parametrize(
    "text",
    [
        "修复只改 12 行源码，是小而典型的调度状态机 bug。",  # a state machine named, not introduced
        "否则顺序会静默降级。",  # a risk, not graceful degradation
        "以 max 组合语义兼容 Mamba 与 MTP 两类 drafter。",  # supports both, not backward compatible
        "若要投产，建议先补齐多级部署验证，并考虑在服务入口校验。",  # a suggestion
    ],
)
def test_patterns_look_alikes_are_not_evidence(text: str) -> None:
    ids = set(patterns(text))
    assert not ids & {
        "explicit-state-machine",
        "graceful-degradation",
        "backward-compatible-evolution",
        "validate-at-boundary",
    }


@pytest.mark.parametrize(
    "title, topics",
    [
        ("修复 P/D 下多模块 MTP 未验证 draft 污染 KV cache", ["KV cache", "MTP", "P/D"]),
        ("PD 预填充中止请求时释放 metadata_buffer_index，修复缓冲槽泄漏", ["P/D"]),
        ("KV offload 异步查找复用在途探针", ["KV Offload"]),
        ("排除 QSA ring 组，修复 MooncakeStore 混合注意力启动崩溃", ["MooncakeStore", "QSA"]),
        ("提交前校验 routed-experts 偏移，避免 EngineCore 崩溃", ["EngineCore", "routed-experts"]),
        ("Bind the shm_broadcast remote socket to port 0 to close a TOCTOU race", ["TOCTOU"]),
        ("卸载查找结果改用 LookupResult 枚举，取代 bool|None 三态", []),
        ("把各后端重复的 KVManager 状态方法收拢到 `CommonKVManager`", []),
        (
            "Restore LIFO reuse of freed KV blocks when prefix caching is off",
            ["KV", "LIFO", "prefix caching"],
        ),
    ],
)
def test_topics_from_titles_through_the_alias_table(title: str, topics: list[str]) -> None:
    mentions = extract_topics(entry("summary", title), builtin_knowledge())
    assert sorted(m.key for m in mentions) == topics
    assert all(m.field is Field.TITLE and title[m.start : m.end] == m.surface for m in mentions)


@pytest.mark.parametrize(
    "title, topics",
    [  # titles of tests/data/prose/tune: libraries by the table, pairs with a Chinese name
        ("编译缓存键纳入 inductor 与 functorch 配置", ["Inductor", "compile cache", "functorch"]),
        ("前缀缓存保留间隔扩展到 Mamba/线性注意力",
         ["Mamba", "linear attention", "prefix caching"]),
        ("Separate timeout knob for the gloo CPU groups", ["CPU", "gloo"]),
        ("Responses API 续接对话时丢弃上一轮的 system 指令", ["Responses API"]),
        ("prefix-LM 多模态模型自动抬高批次 token 下限", ["multimodal", "prefix-LM"]),
        ("torch.compile 缓存哈希不再包含由目录位置推导出的环境变量", ["torch.compile"]),
        ("Mamba 混合模型在 GPU 上清零新分配的 KV 块，防止残留 NaN 污染", ["GPU", "KV", "Mamba"]),
        ("AllReduce+RMSNorm fusion pass steps aside on GPUs that lack multicast",
         ["AllReduce", "GPU", "RMSNorm"]),  # `GPUs` is `GPU`
        # a connector or executor a user picks by name in the configuration is a component
        ("UniProcExecutor 去掉取异步输出的专用线程，改由 Future 惰性求值", ["UniProcExecutor"]),
        ("MultiConnector 允许挂多个同类型连接器，指标按类名合并", ["MultiConnector"]),
        # components named in plain words, which only the table knows
        ("MooncakeStore 的 load_mask 不再二次裁掉 Eagle 末块", ["Eagle", "MooncakeStore"]),
        ("API server stops racing uvicorn for the SIGINT/SIGTERM handlers",
         ["API server", "SIGINT/SIGTERM", "uvicorn"]),
        ("Rejection samplers share one bonus-token path", ["rejection sampler"]),
    ],
)  # fmt: skip
def test_topics_libraries_pairs_and_named_apis(title: str, topics: list[str]) -> None:
    assert sorted(m.key for m in extract_topics(entry("summary", title), builtin_knowledge())) == (
        topics
    )


@pytest.mark.parametrize(
    "title",
    [
        "KVBlockZeroer 改为按组清零，TokenizerManager 不受影响",  # classes that do something
        "dummy run 的 slot mapping 全部置 -1，不再往 null block 写 NaN",  # a value
        "修复 models/Mamba/layer.py 与 vllm/ray/utils.py 的导入",  # paths, not names
        "Remove API fallbacks that vLLM no longer needs",  # a sentence's first word; the project
        "Model Runner V2 的 QuantizationStrategy 改为按层选择",  # a version; a class
    ],
)
def test_topics_near_misses(title: str) -> None:
    assert extract_topics(entry("summary", title), builtin_knowledge()) == []


def test_topics_are_read_from_the_title_not_the_summary() -> None:
    """A summary names components and libraries in passing; the seeds' and dev's gold
    name title topics only (a summary's libraries alone add a wrong one to dev)."""
    summary = (  # from tests/data/prose/tune, pa-044 and pa-019
        "`_checkpoints_fit_in_ram` 用 psutil 取可用内存，超过阈值就打 warning 并放弃预取。"
        "原来会对每个子连接器类各构建一次 Prometheus 指标；KV cache 与 CUDA graph 不受影响。"
    )
    mentions = extract_topics(entry(summary, "检查点位于 NFS 时自动预取"), builtin_knowledge())
    assert [(m.key, m.field) for m in mentions] == [("NFS", Field.TITLE)]


@pytest.mark.parametrize(
    "text, people",
    [
        ("review 中 ivanium 与作者的几轮交锋是接口设计讨论的良好案例。", [("ivanium", "reviewer")]),
        ("值得精读，njhill 作为共同作者参与了这版重写。", [("njhill", "co-author")]),
        ("值得精读，作者 NickLucche 顺手同步更新了设计文档。", [("NickLucche", "author")]),
        ("hnyls2002 co-authored the final shape.", [("hnyls2002", "co-author")]),
        (
            "作者 @kvcache-dev 在 review 中与 reviewer ivanium 讨论了重试。",
            [("ivanium", "reviewer"), ("kvcache-dev", "author")],
        ),
        ("Thanks @a-b for the report; mail x@y.org.", [("a-b", "")]),
        ("The follow-up #52076 rewrote the misleading comment and co-authored docs.", []),
        ("reviewed by zhuohan123 in two rounds.", [("zhuohan123", "reviewer")]),
        ("Reviewed by: zhuohan123 in two rounds.", []),  # the name must follow "by"
        # role words the dozen characters around a handle cut in two are read whole
        ("Maintainers: @alice, please take a look.", [("alice", "maintainer")]),
        ("Thanks to @bob, who co-authored the patch.", [("bob", "co-author")]),
        # a plural role noun names a group, not the bare word beside it
        ("Worth a close read for structured-output maintainers.", []),
        ("KV connector authors should read this one closely.", []),
        ("Reviewers @carol and @dan signed off.", [("carol", "reviewer"), ("dan", "reviewer")]),
    ],
)
def test_people_handles_and_roles(text: str, people: list[tuple[str, str]]) -> None:
    mentions = extract_people(entry(text))
    assert [(m.key, m.detail) for m in mentions] == people
    assert all(text[m.start : m.end] == m.surface for m in mentions)


@pytest.mark.parametrize(
    "text, audience",
    [
        (
            "建议精读，尤其是负责 KV Offload、CPU 缓存策略或调度器的工程师：",
            "负责 KV Offload、CPU 缓存策略或调度器的工程师",
        ),
        ("值得精读，尤其面向 KV offload / 调度方向的同学。", "KV offload / 调度方向的同学"),
        ("对 KV offload / SWA 相关贡献者推荐阅读。", "KV offload / SWA 相关贡献者"),
        ("值得精读尤其面向 KV offload / 调度方向的同学。", "KV offload / 调度方向的同学"),
        (
            "Worth a close read if you touch `vllm/v1/worker/utils.py`.",
            "if you touch `vllm/v1/worker/utils.py`",
        ),
    ],
)
def test_audience_as_written(text: str, audience: str) -> None:
    assert [m.key for m in extract_audience(entry(text))] == [audience]


def test_audience_none_when_the_review_names_no_readers() -> None:
    assert extract_audience(entry("建议读者顺手排查自己代码里是否存在绕过入口的路径。")) == []


def test_audience_is_found_in_each_clause_and_never_across_a_line() -> None:
    text = "改动很小，但维护调度器的同学值得一看；\n另外面向\n做量化的工程师"
    mentions = extract_audience(entry(text))
    assert sorted(m.key for m in mentions) == ["做量化的工程师", "维护调度器的同学"]
    assert all(text[m.start : m.end] == m.surface for m in mentions)
    assert extract_audience(entry("值得一看，维护调度器的\n同学")) == []  # a line apart
    # a role verb in one clause and a reader word in another make no description
    assert extract_audience(entry("负责调度，同学们都看过")) == []


def test_follow_ups_keep_the_condition_and_skip_plain_sentences() -> None:
    text = (
        "值得精读。若要投产，建议先补齐多级部署验证。修复本身只有 15 行。"
        "后续可跟进：对 `h"
        "ash_block_size` 补充参数化覆盖。把「放宽 store 掩码」与「不改变注意力窗口」两件事解耦。"
    )
    assert [m.key for m in extract_follow_ups(entry(text))] == [
        "若要投产，建议先补齐多级部署验证。",
        "后续可跟进：对 `hash_block_size` 补充参数化覆盖。",
    ]


def test_extractors_registry_covers_every_design_kind() -> None:
    kinds = {k for e in EXTRACTORS for k in e.kinds}
    assert {
        Kind.DECISION,
        Kind.PATTERN,
        Kind.TOPIC,
        Kind.PERSON,
        Kind.AUDIENCE,
        Kind.FOLLOW_UP,
    } <= kinds


def test_extract_mention_offsets_hold_on_every_seed_and_dev_entry() -> None:
    count = 0
    for result in read_inputs([str(SEEDS), str(DEV)]):
        for e in result.entries:
            for m in extract(e):
                source = e.text if m.field is Field.TEXT else e.title
                assert source[m.start : m.end] == m.surface, (e.title, m)
                count += 1
    assert count > 800


PIECES = [
    *"ab XY_-`'\"「」“”()（），,。.;；:：\n而非不是用替代比更决策一二是#@",
    "rather than",
    "instead of",
]
PROSE = st.lists(st.sampled_from([*PIECES, "(1)", "(2)", "一是", "解耦"]), max_size=60).map("".join)


@settings(max_examples=150, deadline=None)
@given(PROSE, PROSE)
def test_extract_any_text_gives_mentions_whose_surface_is_their_span(title: str, text: str) -> None:
    e = Entry("d.txt", 1, title, text)
    for m in extract(e):
        source = text if m.field is Field.TEXT else title
        assert 0 <= m.start <= m.end <= len(source)
        assert source[m.start : m.end] == m.surface
