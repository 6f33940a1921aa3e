"""Design decisions on real sentences: every form the issue names, and quotes that are not."""

from __future__ import annotations

import pytest

from kgraph.extract.decisions import extract_decisions
from kgraph.extract.prose import overlap, prose
from kgraph.model import Entry, Field


def decisions(text: str, title: str = "t") -> list[tuple[str, str]]:
    mentions = extract_decisions(Entry("d.txt", 1, title, text))
    for m in mentions:
        source = text if m.field is Field.TEXT else title
        assert source[m.start : m.end] == m.surface
    return [(m.key, m.detail) for m in mentions]


@pytest.mark.parametrize(
    "form, text, decision, rejected",
    [
        (
            "quoted 「」 with 而非",
            "值得学习的三个设计"
            "决策：一是「用逻辑 rank 而非物理位置表达 recency」，从而让 pin 状态与淘汰顺序解耦。",
            "用逻辑 rank 而非物理位置表达 recency",
            "物理位置表达 recency",
        ),
        (
            "quoted “” after a cue",
            "核心设计决策是“把跨模块的 lookahead 推导收敛为单一属性 + 单一 backoff 函数”。",
            "把跨模块的 lookahead 推导收敛为单一属性 + 单一 backoff 函数",
            "",
        ),
        (
            'quoted "" before a cue',
            '重点看 `_compute_desc_ids` 的分支："缺失即响亮失败"的设计对跨进程资源映射有借鉴价值。',
            "缺失即响亮失败",
            "",
        ),
        (
            "quoted '' with 而不是",
            "关注两个设计决"
            "策：(a) 校验位置选在 InputProcessor；(b) 采用 '拒绝' 而不是 'clamp'，避免静默改写。",
            "采用 '拒绝' 而不是 'clamp'",
            "clamp",
        ),
        (
            "X 而非 Y",
            "若要加固，本 PR 对 RDMA 发送队列满做退避重试，而非直接判定读取失败。",
            "本 PR 对 RDMA 发送队列满做退避重试，而非直接判定读取失败",
            "直接判定读取失败",
        ),
        (
            "「X」，而不是 Y",
            "核心决策是「空间问题在启动期就响亮地报出来」，而不是拖到首次写入时才以 SIGBUS 收场。",
            "空间问题在启动期就响亮地报出来",
            "拖到首次写入时才以 SIGBUS 收场",
        ),
        (
            "用 X 替代 Y",
            "本 PR 引入四个取值。用 `LookupResult` 替代三态布尔，每个分支的语义都写在了名字上。",
            "用 `LookupResult` 替代三态布尔",
            "三态布尔",
        ),
        (
            "X rather than Y",
            "A stale plan is skipped, and an unreadable file is logged as a warning and ignored "
            "rather than failing startup.",
            "an unreadable file is logged as a warning and ignored rather than failing startup",
            "failing startup",
        ),
        (
            "X instead of Y, with the quote in X",
            'The fix routes blocks through `prepend_n`, restoring the intended "reuse the most '
            'recently freed block first" order instead of cycling through the whole pool.',
            "reuse the most recently freed block first",
            "cycling through the whole pool",
        ),
        (
            'English cue before a quote, with "rather than" after it',
            'hnyls2002 co-authored it, and the guiding decision reads "one table for device '
            'defaults, overrides stay at the call site" rather than a per-caller ladder.',
            "one table for device defaults, overrides stay at the call site",
            "a per-caller ladder",
        ),
        (
            "X，比 Y 更…",
            "把检查放在所有请求必经的这一处，比在每个 HTTP 端点各写一遍更不容易漏。",
            "把检查放在所有请求必经的这一处，比在每个 HTTP 端点各写一遍更不容易漏",
            "在每个 HTTP 端点各写一遍",
        ),
        (
            "a long quoted statement without a cue",
            "构造成功后由 work"
            "er 独占，「两个方向的 handler 只管排空各自的传输，mmap 的回收全部归 worker 一家」。",
            "两个方向的 handler 只管排空各自的传输，mmap 的回收全部归 worker 一家",
            "",
        ),
    ],
)
def test_decisions_each_form(form: str, text: str, decision: str, rejected: str) -> None:
    found = decisions(text)
    assert (decision, rejected) in found, (form, found)


def test_decisions_numbered_zh_list_gives_each_item() -> None:
    text = (
        "不值"
        "得精读，可快速浏览。值得关注的设计决策有两个：一是把 `HiSparseConnector` 视为 HiSparse "
        "功能的单一"
        "事实来源（single source of truth），用 `has_connector` 的既有语义消除无信息量的空配置；"
        "二是显式配置优先级不被默认值覆盖的约定，这是配置推断类改动应遵循的通用模式。"
    )
    assert [d for d, _ in decisions(text)] == [
        "把 `HiSparseConnector` 视为 HiSparse 功能的单一事实来源",
        "用 `has_connector` 的既有语义消除无信息量的空配置",
        "显式配置优先级不被默认值覆盖的约定",
    ]


def test_decisions_numbered_parenthesised_list_skips_labels_warnings_and_explanations() -> None:
    text = (
        "重点关注"
        "四个设计决策：(1) 用 `len + 1` 哨兵而非 `None` 表达「本窗口无约束」，三个消费点的 `>=` "
        "各有语义，不"
        "要「顺手统一」；(2) 降序扫描把语义从「第一次边界」改成「最后一次边界」，这改变了行为；"
        "(3) 断言降级为日志是刻意的（避免 engine core 被打挂），代价是兜底变晚；"
        "(4) 「reasoning parser 必须无状态」目前只是文档契约。"
    )
    assert [d for d, _ in decisions(text)] == [
        "用 `len + 1` 哨兵而非 `None` 表达「本窗口无约束」",
        "降序扫描把语义从「第一次边界」改成「最后一次边界」",
        "断言降级为日志是刻意的",
        "reasoning parser 必须无状态",
    ]


def test_decisions_lettered_list_and_a_dash_label() -> None:
    text = (
        "关注三个设计决"
        "策：(a) 校验位置选在 InputProcessor 而非 SamplingParams 或调度器，理由是覆盖全部调用；"
        "(b) 采用 '拒"
        "绝' 而不是 'clamp'；(c) 闭区间语义——把 offset == prompt_len 视为合法的空切片而非错误，"
        "并同步放宽调度器断言。"
    )
    assert decisions(text) == [
        ("校验位置选在 InputProcessor 而非 SamplingParams 或调度器", "SamplingParams 或调度器"),
        ("采用 '拒绝' 而不是 'clamp'", "clamp"),
        ("把 offset == prompt_len 视为合法的空切片而非错误", "错误"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        # a reading order
        "值得精读，且建议按「契约 → 消费方 → 测试」的顺序读：先看 `_get_constraint_start()`。",
        # the meaning of a value, and names of states
        'The writer binds port 0; port `0` here means "let the kernel choose".',
        "其中 `None` 同时承载「块在但暂不可读」和「位置不确定、稍后重查」两层意思。",
        # a rejected behaviour, and a description of an old check
        "理由是多节点必须共用同一个固定端口，「各节点各自随机挑一个」本身就是错误行为。",
        "此前「LoRA 未启用却点名了 adapter」的检查分散在三处。",
        # the old code, and a suggestion
        "过去它返回的是节点内的 `data_parallel_rank_local`，而不是全局的 DP 编号。",
        "若计划进一步加固，可考虑让调度器显式抛错替代 assert。",
        # a numbered list that is not about decisions
        "建议重点核对两点：一是 worker 异常时是否一定投递结果，二是 drain 后是否还有依赖。",
    ],
)
def test_decisions_quotes_and_contrasts_that_are_not_decisions(text: str) -> None:
    assert decisions(text) == []


def test_decisions_title_contrast_unless_the_summary_repeats_it() -> None:
    title = "MoRIIO 读路径对 RDMA 发送队列满做退避重试，而非直接判定读取失败"
    (only,) = decisions("可快速浏览。", title)
    assert only == (title, "直接判定读取失败")
    repeated = decisions("决策是「对 RDMA 发送队列满做退避重试，而非直接判定读取失败」。", title)
    assert [d for d, _ in repeated] == ["对 RDMA 发送队列满做退避重试，而非直接判定读取失败"]


def test_decisions_code_spans_hide_their_punctuation() -> None:
    text = "决策是「用 `f(a, b)` 的返回值，而非 `g('x')`」。"
    assert decisions(text) == [("用 `f(a, b)` 的返回值，而非 `g('x')`", "`g('x')`")]


def test_prose_overlap_is_symmetric_and_penalises_long_sentences() -> None:
    gold = "把「估算等于实测」写成断言"
    assert overlap(gold, "新增测试把「估算等于实测」写成断言") >= 0.5
    assert (
        overlap(gold, gold + "，是排查同类 block accounting 问题的通用模板，建议照抄到其他管理器")
        < 0.5
    )
    assert overlap("reject rather than clamp", "Reject rather than CLAMP.") == 1.0
    assert overlap("", "x") == 0.0


def test_prose_quotes_pair_on_one_line_and_skip_apostrophes() -> None:
    text = "the user's value wins; '拒绝' 与 \"clamp\"，「嵌套「内层」外层」\n「未闭合"
    quotes = [text[q.inner_start : q.inner_end] for q in prose(text).quotes]
    assert quotes == ["拒绝", "clamp", "嵌套「内层」外层"]
