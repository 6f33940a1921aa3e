"""The code-span extractor on real sentences and on every span the gold files class."""

from __future__ import annotations

import pytest

from conftest import DEV, SEEDS
from kgraph.extract.code import classify, extract_code_spans
from kgraph.model import Entry, Kind

GOLD_CLASS = {
    Kind.FILE: "file",
    Kind.SYMBOL: "symbol",
    Kind.EXTERNAL_SYMBOL: "external_symbol",
    Kind.NON_ENTITY: "non_entity",
}


def _gold_spans():
    import json

    for path in (SEEDS / "gold.json", DEV / "gold.json"):
        for entry in json.loads(path.read_text("utf-8")):
            for span in entry["spans"]:
                yield pytest.param(span, entry.get("repo"), id=f"{entry['id']}:{span['text'][:40]}")


@pytest.mark.parametrize("span, repo", list(_gold_spans()))
def test_code_gold_span_class_and_normal_form(span: dict, repo: str | None) -> None:
    kind, key, _ = classify(span["text"], "", repo)
    assert GOLD_CLASS[kind] == span["class"]
    if kind is not Kind.NON_ENTITY:
        assert key == span["normalized"]


@pytest.mark.parametrize(
    "span, kind, key",
    [
        ("_is_current()", Kind.SYMBOL, "_is_current"),
        ("get_block_ids(group_ids=...)", Kind.SYMBOL, "get_block_ids"),
        ("llama_kv_cache_unified::find_slot", Kind.SYMBOL, "llama_kv_cache_unified::find_slot"),
        (
            "TaskSpecification::ActorTaskRetries()",
            Kind.SYMBOL,
            "TaskSpecification::ActorTaskRetries",
        ),
        ("std::vector", Kind.EXTERNAL_SYMBOL, "std::vector"),
        ("std::move(x)", Kind.NON_ENTITY, "std::move(x)"),
        ("a::", Kind.NON_ENTITY, "a::"),
        (
            "MambaManager.get_num_blocks_to_allocate",
            Kind.SYMBOL,
            "MambaManager.get_num_blocks_to_allocate",
        ),
        ("policies/lru.py", Kind.FILE, "policies/lru.py"),
        ("./tools/run.sh", Kind.FILE, "tools/run.sh"),
        ("csrc/attention/paged_attention_v1.cu", Kind.FILE, "csrc/attention/paged_attention_v1.cu"),
        ("kernel.cuh", Kind.FILE, "kernel.cuh"),
        ("collections.OrderedDict", Kind.EXTERNAL_SYMBOL, "collections.OrderedDict"),
        ("tmp_path", Kind.EXTERNAL_SYMBOL, "tmp_path"),
        ("len(x) > 0", Kind.NON_ENTITY, "len(x) > 0"),
        ("0x1F", Kind.NON_ENTITY, "0x1F"),
        ("'store'", Kind.NON_ENTITY, "'store'"),
        ("--max-num-seqs=8", Kind.NON_ENTITY, "--max-num-seqs=8"),
        ("VLLM_USE_V2", Kind.NON_ENTITY, "VLLM_USE_V2"),
        ("MAX_BATCH_SIZE", Kind.SYMBOL, "MAX_BATCH_SIZE"),
        ("vllm/v1/core/sched/", Kind.NON_ENTITY, "vllm/v1/core/sched"),
        ("settings.yaml", Kind.NON_ENTITY, "settings.yaml"),
        ("git bisect run pytest", Kind.NON_ENTITY, "git bisect run pytest"),
        ("self.cache.clear()", Kind.NON_ENTITY, "self.cache.clear()"),
        ("Request", Kind.SYMBOL, "Request"),
        ("dir with space/a b.py", Kind.FILE, "dir with space/a b.py"),
        ("run me.py", Kind.NON_ENTITY, "run me.py"),
    ],
)
def test_code_classify_cases(span: str, kind: Kind, key: str) -> None:
    assert classify(span)[:2] == (kind, key)


def test_code_env_var_by_context_and_by_repository_prefix() -> None:
    assert classify("MY_FLAG", "设置环境变量 ")[0] is Kind.NON_ENTITY
    assert classify("SGLANG_MAMBA_SSM_DTYPE", "", "sgl-project/sglang")[0] is Kind.NON_ENTITY
    assert classify("TORCH_DTYPE_TO_KV_CACHE_STR", "", "sgl-project/sglang")[0] is Kind.SYMBOL
    # The prefix is the repository name's leading word: llama.cpp's are LLAMA_….
    assert classify("LLAMA_KV_CACHE_DEBUG", "", "ggml-org/llama.cpp")[0] is Kind.NON_ENTITY
    assert classify("MAX_BATCH_SIZE", "", "ggml-org/llama.cpp")[0] is Kind.SYMBOL


def test_code_spans_offsets_and_defining_file_from_a_real_sentence() -> None:
    text = (
        "值得精读。重点看 `base_worker.py` 中 `_set_region_layers`、"
        "`_requires_layer_name_routing`、"
        "`_align_remote_regions_by_layer` 三个方法以及 `_compute_desc_ids` 的 layer-name 分支"
    )
    mentions = extract_code_spans(Entry("d.txt", 1, "t", text))
    assert [m.key for m in mentions] == [
        "base_worker.py",
        "_set_region_layers",
        "_requires_layer_name_routing",
        "_align_remote_regions_by_layer",
        "_compute_desc_ids",
    ]
    assert all(text[m.start : m.end] == m.surface for m in mentions)
    assert [m.detail for m in mentions[1:]] == ["in:base_worker.py"] * 3 + ["name"]


def test_code_spans_in_the_title_are_read_with_title_offsets() -> None:
    entry = Entry("d.txt", 1, "为 `get_sliding_window_size_in_chunks` 补齐", "summary")
    (mention,) = extract_code_spans(entry)
    assert mention.field.value == "title"
    assert entry.title[mention.start : mention.end] == "get_sliding_window_size_in_chunks"


def test_code_file_names_composed_or_decomposed_are_one_key() -> None:
    composed, decomposed = "docs/caf\u00e9.py", "docs/cafe\u0301.py"
    entry = Entry("d.txt", 1, "t", f"`{composed}` and `{decomposed}`")
    first, second = extract_code_spans(entry)
    assert first.kind is second.kind is Kind.FILE
    assert first.key == second.key == composed
    assert entry.text[second.start : second.end] == second.surface == decomposed


def test_code_unbalanced_backtick_costs_one_span_not_the_rest() -> None:
    text = "a ` stray, then `touch` and `evict()`"
    keys = [m.key for m in extract_code_spans(Entry("d", 1, "t", text))]
    assert keys == ["touch", "evict"]
