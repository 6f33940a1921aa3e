"""Issue references and reading advice on real sentences."""

from __future__ import annotations

import pytest

from kgraph.extract.advice import extract_advice
from kgraph.extract.issues import extract_issues
from kgraph.model import Entry


def entry(text: str) -> Entry:
    return Entry("d.txt", 1, "t", text)


def test_issues_hash_and_urls_from_seed_sentences() -> None:
    text = (
        "阅读时应同时打开 Issue #56701 的失败表格；完成语义与 #56104 的兼容处理，"
        "见 https://github.com/vllm-project/vllm/pull/50276 。颜色 #fff，`x  # 12`，&#123;"
    )
    mentions = extract_issues(entry(text))
    assert [(m.key, m.detail) for m in mentions] == [
        ("56701", ""),
        ("56104", ""),
        ("50276", "vllm-project/vllm"),
    ]
    assert all(text[m.start : m.end] == m.surface for m in mentions)


def test_issue_numbers_are_one_key_however_written_and_zero_is_no_issue() -> None:
    text = "See #7, #007, #٧ and #７; also #0 and https://github.com/o/r/issues/0007."
    mentions = extract_issues(entry(text))
    assert [(m.surface, m.key) for m in mentions] == [
        ("#7", "7"),
        ("#007", "7"),
        ("#٧", "7"),
        ("#７", "7"),
        ("https://github.com/o/r/issues/0007", "7"),
    ]


@pytest.mark.parametrize(
    "text, advice",
    [
        ("建议精读，尤其是负责 KV Offload 的工程师", "close-read"),
        ("值得精读（篇幅小、信息密度高）。", "close-read"),
        ("不值得精读，可快速浏览。值得关注的设计决策有两个", "skim"),
        ("可快速浏览，但测试写法值得借鉴。", "skim"),
        ("Worth a close read if you touch the zeroing kernel.", "close-read"),
        ("Skim. A one-line fix.", "skim"),
    ],
)
def test_advice_cases(text: str, advice: str) -> None:
    general = extract_advice(entry(text))[0]  # the advice for everyone comes first
    assert (general.key, general.detail) == (advice, "")


def test_advice_absent_when_the_review_gives_none() -> None:
    assert extract_advice(entry("Fixes a race in the scheduler.")) == []
