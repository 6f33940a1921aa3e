"""Entities and decisions in plain prose: bare names, described decisions, advice in other words.

Each rule has real sentences that must match (written like the reviews of
`tests/data/prose/`, but not copied from its check split) and near-misses that must not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, build
from kgraph.extract import extract_digest
from kgraph.extract.advice import extract_advice
from kgraph.extract.bare import CANDIDATE, SHAPE, extract_bare_names
from kgraph.extract.decisions import extract_decisions
from kgraph.link import ExtractedEntry
from kgraph.model import Digest, Entry, Kind
from kgraph.recognize import CORPUS, settle_bare_names

PROSE = ROOT / "tests" / "data" / "prose"


def entry(text: str, title: str = "t") -> Entry:
    return Entry("d.txt", 1, title, text, "o/r")


def bare(text: str) -> list[tuple[str, str, str]]:
    return [(m.kind.value, m.key, m.detail) for m in extract_bare_names(entry(text))]


# --- bare file names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, path",
    [
        ("gemma4_mm.py 里的预处理现在按图切块", "gemma4_mm.py"),
        ("gemma4_mm.py里", "gemma4_mm.py"),  # Chinese text has no spaces
        ("修复在 offloading/scheduler.py 的重置循环里", "offloading/scheduler.py"),
        ("manager.py 只用一次遍历", "manager.py"),
        ("The change in vllm/v1/core/block_pool.py keeps the order.", "vllm/v1/core/block_pool.py"),
        ("see ./csrc/attention/paged.cu:120 for the kernel", "csrc/attention/paged.cu"),
        ("（vllm/config/model.py）", "vllm/config/model.py"),
        ("tests/data/cases.json 补了两条", "tests/data/cases.json"),
    ],
)
def test_bare_file_names_in_prose_are_files(text: str, path: str) -> None:
    assert ("file", path, "bare") in bare(text)


@pytest.mark.parametrize(
    "text",
    [
        "文档见 https://docs.vllm.ai/en/latest/usage.md 一节",
        "docs.vllm.ai/en/latest/features.html 有说明",
        "升级到 v0.8.1 之后",
        "吞吐提升 1.5 倍，延迟降到 3.2ms",
        "runs on Node.js and Vue.js",
        "the github.com mirror",
        "改动在 `vllm/v1/worker/gpu_model_runner.py` 里",  # backticked: the span extractor's
        "`python -m vllm.entrypoints.openai.api_server --config a.yaml`",  # inside a span
        "config.json 里多了一个键",  # a data file's basename stays a literal, as backticked
    ],
)
def test_bare_near_misses_are_not_files(text: str) -> None:
    assert not [m for m in bare(text) if m[0] == "file"]


# --- bare identifiers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, name",
    [
        ("the new sync_dp_state() call", "sync_dp_state"),
        ("Scheduler.schedule 现在先算预算", "Scheduler.schedule"),
        ("_maximal_prefix_lookup 对每个取值分别处理", "_maximal_prefix_lookup"),
    ],
)
def test_code_shaped_bare_identifiers_are_symbols(text: str, name: str) -> None:
    assert ("symbol", name, SHAPE) in bare(text)


def test_camel_and_snake_words_are_only_candidates() -> None:
    found = bare("SimpleCPUOffloadScheduler 新增 transfer_jobs 字段, see DeepSeek")
    assert ("symbol", "SimpleCPUOffloadScheduler", CANDIDATE) in found
    assert ("symbol", "transfer_jobs", CANDIDATE) in found
    assert ("symbol", "DeepSeek", CANDIDATE) in found  # the corpus will decide


@pytest.mark.parametrize(
    "text",
    ["e.g. this one", "see vllm.ai", "VLLM_USE_V1 must be set", "a Counter of tokens", "LRU"],
)
def test_bare_identifier_near_misses(text: str) -> None:
    assert not [m for m in bare(text) if m[0] == "symbol"]


def test_the_corpus_keeps_a_candidate_backticked_elsewhere_and_drops_the_rest() -> None:
    digest = Digest("d.txt", "daily")
    one = entry("`LookupResult` 取代三态返回值")
    two = entry("LookupResult 新增一个取值，FlashInfer 后端不受影响")
    items = [
        ExtractedEntry(e, digest, m)
        for e, m in zip([one, two], extract_digest([one, two]), strict=True)
    ]
    settled = settle_bare_names(items)
    names = {(m.key, m.detail) for m in settled[1].mentions if m.kind is Kind.SYMBOL}
    assert ("LookupResult", CORPUS) in names
    assert not any(key == "FlashInfer" for key, _ in names)


# --- reading advice -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, advice",
    [
        ("改动很小，略读即可。", "skim"),
        ("整体可以快速过，十几行。", "skim"),
        ("不必逐行细看，结论在测试里。", "skim"),  # a negated close reading
        ("浏览一下即可。", "skim"),
        ("扫一眼就够了。", "skim"),
        ("值得逐行读一遍。", "close-read"),
        ("建议细读那段条件判断。", "close-read"),
        ("Safe to skim.", "skim"),
        ("Worth a careful read: the ordering matters.", "close-read"),
    ],
)
def test_advice_in_other_words(text: str, advice: str) -> None:
    assert extract_advice(entry(text))[0].key == advice


def test_advice_scoped_to_readers_records_both() -> None:
    found = extract_advice(entry("做调度的同学值得精读，其他人略读即可。"))
    assert (found[0].key, found[0].detail) == ("skim", "")  # everyone else: skim
    assert [(m.key, m.detail) for m in found[1:]] == [("close-read", "for:做调度的同学")]


def test_advice_scoped_in_english() -> None:
    found = extract_advice(
        entry("Worth a careful read for anyone touching DP startup; the rest can skip it.")
    )
    assert found[0].key == "skim"
    assert found[1].key == "close-read" and found[1].detail.startswith("for:anyone touching")


@pytest.mark.parametrize(
    "text, advice",
    [  # sentences of tests/data/prose/tune and tests/data/patterns/tune, and their kin
        ("建议把 -1 的语义和 kernel 那一侧的判断对照着读一遍。", "close-read"),
        ("整体建议按表格对照代码读一遍。", "close-read"),
        ("建议快速过一遍即可。", "skim"),  # a recommended read-through, but a quick one
        ("没什么需要细看的，两行改动。", "skim"),  # a negated close reading
        ("改动很短，其他人了解思路即可。", "skim"),
        ("Close-read for connector authors.", "close-read"),
        ("Close-read if you work on expert-parallel load balancing.", "close-read"),
        ("This doesn't need a careful review; the rename is mechanical.", "skim"),
        ("Worth a look if you touch the scheduler.", "close-read"),
        ("Small and worth a quick look.", "skim"),
        ("Review the kernel line by line.", "close-read"),
        ("Read the tests closely.", "close-read"),
        ("Highly recommended for anyone touching the allocator.", "close-read"),
        ("建议仔细过一遍 allocator 的改动。", "close-read"),
        ("知道有这个开关就行。", "skim"),  # knowing is enough
        ("理解新的默认值即可。", "skim"),
        ("测试可以不看。", "skim"),
        ("You can skip this unless you run Ray.", "skim"),
        # written from the definitions (a close reading, a light one), in words not tuned on
        ("建议把 `_update_states` 读透。", "close-read"),
        ("值得深入研究一下新的缓存淘汰逻辑。", "close-read"),
        ("Read the diff slowly; the invariants are subtle.", "close-read"),
        ("Go through the allocator thoroughly.", "close-read"),
        ("看一下 PR 描述就足够了。", "skim"),
        ("Nothing here needs careful reading.", "skim"),
        ("The rename does not warrant a close look.", "skim"),
    ],
)
def test_advice_close_and_light_reading_in_more_words(text: str, advice: str) -> None:
    assert extract_advice(entry(text))[0].key == advice


@pytest.mark.parametrize(
    "text",
    [
        "建议后续评估让同步路径也真正用上这个线程池，否则这条告警会长期存在。",  # a follow-up
        "建议补一个反复扩容后检查 reserved 显存的用例。",
        "值得注意的是默认值变了。",  # "worth noting" is not "worth reading"
        "The loop walks the list line by line until it finds a placeholder.",  # describes code
        "The docstring explains the contract in detail.",
        "仔细看会发现两条路径共用一个锁。",  # a narrative of the reviewer's reading
        "细看之下，两处逻辑并不对称。",
        "这段代码会逐行读取配置文件。",  # code reading data, not a reader
        "加载器仔细读入每个分片的元数据。",
    ],
)
def test_advice_near_misses(text: str) -> None:
    assert extract_advice(entry(text)) == []


@pytest.mark.parametrize(
    "text, readers",
    [
        ("如果你在做调度，值得精读；否则扫一眼即可。", "for:如果你在做调度"),
        ("If you own the scheduler, read this closely; otherwise a skim is enough.",
         "for:If you own the scheduler"),
        ("Scheduler folks should read this closely; everyone else can skim.",
         "for:Scheduler folks"),
        ("调度相关同学值得精读，其余的人扫一眼即可。", "for:调度相关同学"),
        ("对于做调度的同学，值得精读；其他人略读即可。", "for:对于做调度的同学"),
    ],
)  # fmt: skip
def test_advice_scoped_by_a_condition_or_a_group_of_readers(text: str, readers: str) -> None:
    general, *scoped = extract_advice(entry(text))
    assert (general.key, general.detail) == ("skim", "")  # "否则", "otherwise": the others
    assert [(m.key, m.detail) for m in scoped] == [("close-read", readers)]


def test_advice_for_the_rest_of_the_code_is_not_for_the_other_readers() -> None:
    found = extract_advice(entry("建议细读那段条件判断，其余部分可以略过。"))
    assert [m.key for m in found] == ["close-read"]


# --- described decisions --------------------------------------------------------------------


def decided(text: str) -> list[str]:
    return [m.key for m in extract_digest([entry(text)])[0] if m.kind is Kind.DECISION]


@pytest.mark.parametrize(
    "text, decision",
    [
        (
            "修复把登记挪进每步都会调用的 get_finished，旧入口变成空实现。",
            "修复把登记挪进每步都会调用的 get_finished",
        ),
        ("两个字段同时出现时以新字段为准，旧字段一律丢弃。", "两个字段同时出现时以新字段为准"),
        (
            "The fix now validates the port when the config is built, so a bad value never "
            "reaches the handshake.",
            "The fix now validates the port when the config is built",
        ),
    ],
)
def test_described_decisions_are_found(text: str, decision: str) -> None:
    assert any(d.startswith(decision) for d in decided(text)), decided(text)


@pytest.mark.parametrize(
    "text",
    [
        "建议后续把这两个入口统一到同一个工厂里，免得再漏掉一处。",  # a suggestion
        "A follow-up should probably move the check into the config.",  # a suggestion
        "原来的代码在每一步都会重新扫描整个列表，长输出下很慢。",  # the old code
        "测试新增三个用例，覆盖只有旧字段和两者都有的情形。",  # the tests
        "本 PR 没有新增测试。",  # a statement of no change
        # reading advice, told to the reader
        "Skim, unless you maintain P/D deployment recipes, in which case update them now.",
        "Close-read if you own model loading now; otherwise skim.",
        # work promised for later, and a test told about
        "握手失败目前只在回调里打日志，代码里说以后要让这种请求直接失败，还没有真正落地。",
        "That test now resolves the two futures by hand, in a fixed order.",
    ],
)
def test_described_decision_near_misses(text: str) -> None:
    assert decided(text) == []


def test_a_digest_that_quotes_its_decisions_has_no_described_ones() -> None:
    quoting = [
        entry(f"核心决策是「第 {i} 个选择只在一处生效」。修复把检查挪进配置构造阶段。")
        for i in range(4)
    ]
    found = extract_digest(quoting)
    decisions = [m.key for ms in found for m in ms if m.kind is Kind.DECISION]
    assert decisions and all("一处生效" in d for d in decisions)
    plain = [entry("修复把检查挪进配置构造阶段，越界的值当场报错。")]
    assert extract_digest(plain)[0] and decided(plain[0].text)


def test_title_and_quoted_decisions_are_kept_as_before() -> None:
    assert extract_decisions(entry("设计上是「失败就回滚，不留半成品」。")) != []


# --- the corpus, end to end -----------------------------------------------------------------


def test_eval_reports_files_by_form_and_decisions_by_sentence(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert build([str(PROSE / "tune")], out, "-q")[0] == 0
    gold_path = PROSE / "tune" / "gold.json"
    result = subprocess.run(
        [sys.executable, "-m", "kgraph", "eval", "--gold", str(gold_path), str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    kinds = result.stdout.split("\n\n")[0]  # the kinds' table; per-pattern tables follow
    rows = {line.split()[0]: line.split()[1:] for line in kinds.splitlines()[1:]}
    gold = json.loads(gold_path.read_text("utf-8"))
    bare_gold = sum(g["files_written"].get(f) == "bare" for g in gold for f in set(g["files"]))
    assert bare_gold > 0 and int(rows["files·bare"][0]) == bare_gold
    precision, recall = map(float, rows["files·bare"][3:5])
    assert precision >= 0.95 and recall >= 0.9
    precision, recall = map(float, rows["decisions·sentence"][3:5])
    assert precision >= 0.75 and recall >= 0.65  # measured on tune: 0.77, 0.72
