"""`kgraph eval` through the real CLI, its matching rules, and the thresholds on the seeds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from adversarial import HOSTILE_JSON
from conftest import DEV, SEEDS, build
from kgraph.cli import cli
from kgraph.evaluate import GraphView, PullRequestView, evaluate, read_graph

DATA = Path(__file__).parent / "data" / "design"


def run_eval(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["eval", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def table(stdout: str) -> dict[str, tuple[int, int, int, float, float]]:
    rows = {}
    for line in stdout.split("\n\n")[0].splitlines()[1:]:  # the kinds; pattern tables follow
        kind, gold, found, matched, precision, recall = line.split()[:6]
        rows[kind] = (int(gold), int(found), int(matched), float(precision), float(recall))
    return rows


@pytest.fixture(scope="module")
def seeds_table(seeds_out: Path) -> dict[str, tuple[int, int, int, float, float]]:
    code, stdout, stderr = run_eval("--gold", str(SEEDS / "gold.json"), str(seeds_out))
    assert code == 0, stderr
    return table(stdout)


@pytest.mark.parametrize(
    "kind, floor",
    [
        ("prs", 1.0),
        ("files", 0.95),
        ("symbols", 0.95),
        ("issues", 0.95),
        ("decisions", 0.8),
        ("patterns", 0.8),
    ],
)
def test_evaluate_seeds_meet_the_thresholds(seeds_table, kind: str, floor: float) -> None:
    gold, found, _, precision, recall = seeds_table[kind]
    assert gold > 0 and found > 0
    assert precision >= floor and recall >= floor, (kind, precision, recall)


def test_evaluate_prints_every_kind_in_order(seeds_table) -> None:
    assert list(seeds_table) == [
        "prs", "files", "files·backtick", "files·bare", "symbols", "issues", "decisions",
        "decisions·sentence", "patterns", "topics", "topics·title", "people", "advice", "commits",
    ]  # fmt: skip
    assert seeds_table["prs"][:3] == (13, 13, 13)


def test_evaluate_turtle_and_json_agree(seeds_out: Path) -> None:
    gold = str(SEEDS / "gold.json")
    from_json = run_eval("--gold", gold, str(seeds_out / "graph.json"))
    from_turtle = run_eval("--gold", gold, str(seeds_out / "graph.ttl"))
    assert from_json[0] == from_turtle[0] == 0
    assert from_json[1] == from_turtle[1]


def test_evaluate_dev_and_probe_sets_hold_up(tmp_path: Path) -> None:
    """The extractors were tuned on the seeds and dev; the probe set was written later, in
    new words, to catch cues that only fit the sentences they were written from."""
    for name, folder, floor in (("dev", DEV, 0.85), ("probe", DATA, 0.8)):
        out = tmp_path / name
        assert build([str(folder)], out, "-q")[0] == 0
        code, stdout, _ = run_eval("--gold", str(folder / "gold.json"), str(out))
        assert code == 0
        rows = table(stdout)
        for kind in ("decisions", "patterns", "topics"):
            assert min(rows[kind][3:]) >= floor, (name, kind, rows[kind])


def test_evaluate_verbose_lists_misses_and_extras(tmp_path: Path, seeds_out: Path) -> None:
    gold = json.loads((SEEDS / "gold.json").read_text("utf-8"))
    gold[0]["patterns"].append("plugin-registry")
    gold[0]["decisions"] = gold[0]["decisions"][1:]
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(gold, ensure_ascii=False), "utf-8")
    code, stdout, _ = run_eval("-v", "--gold", str(path), str(seeds_out))
    assert code == 0
    assert "- seed-01 patterns: plugin-registry" in stdout
    assert "+ seed-01 decisions: 用逻辑 rank 而非物理位置表达 recency" in stdout
    assert table(stdout.split("\n- ")[0].split("\n+ ")[0])["patterns"][4] < 1.0


def view(**values: list[str]) -> GraphView:
    pr = PullRequestView("Fix eviction order", {"fix eviction order"})
    for kind, items in values.items():
        pr.values[kind] = items
    return GraphView([pr], {"pd": "p/d", "p/d": "p/d"})


@pytest.mark.parametrize(
    "kind, extracted, written, matches",
    [
        ("files", "vllm/v1/kv_offload/cpu/policies/lru.py", "policies/lru.py", True),
        ("files", "vllm/v1/core/xlru.py", "lru.py", False),
        ("symbols", "MambaManager.get_num_blocks_to_allocate", "get_num_blocks_to_allocate", True),
        ("symbols", "get_num_blocks_to_allocate", "MambaManager.get_num_blocks_to_allocate", False),
        ("symbols", "Scheduler.xevict", "evict", False),
        (
            "decisions",
            "非法值 warning + 忽略而非报错",
            "`__post_init__` 的解析约定：非法值 warning + 忽略而非报错",
            True,
        ),
        ("decisions", "每请求一次访问", "用逻辑 rank 而非物理位置表达 recency", False),
        ("topics", "P/D", "PD", True),
        ("topics", "KV cache", "kv  CACHE", True),
        ("people", "NickLucche", "nicklucche", True),
    ],
)
def test_evaluate_matching_rules(kind: str, extracted: str, written: str, matches: bool) -> None:
    gold = [{"title": "Fix eviction order", kind if kind != "people" else "persons": [written]}]
    score = evaluate(gold, view(**{kind: [extracted]})).score(kind)
    assert (score.matched_gold == 1) is matches
    assert score.precision == (1.0 if matches else 0.0)


def test_evaluate_topics_by_title_count_only_gold_topics_the_title_writes() -> None:
    """A gold that lists a summary's components too (`scheduler` here) charges title
    reading in `topics` for what it cannot see; `topics·title` does not."""
    gold = [{"title": "Fix eviction order", "topics": ["Eviction  order", "scheduler"]}]
    found = view(topics=["eviction order"], **{"topics·title": ["eviction order"]})
    evaluation = evaluate(gold, found)
    assert (evaluation.score("topics").gold, evaluation.score("topics").recall) == (2, 0.5)
    by_title = evaluation.score("topics·title")
    assert (by_title.gold, by_title.matched_gold, by_title.precision) == (1, 1, 1.0)


def test_evaluate_one_extracted_value_matches_one_gold_value() -> None:
    gold = [{"title": "Fix eviction order", "files": ["lru.py", "policies/lru.py"]}]
    score = evaluate(gold, view(files=["vllm/policies/lru.py"])).score("files")
    assert (score.gold, score.found, score.matched_gold) == (2, 1, 1)


def test_evaluate_unknown_pr_counts_against_precision_and_missing_pr_against_recall() -> None:
    gold = [{"title": "Another PR", "files": ["a.py"]}]
    result = evaluate(gold, view(files=["b.py"]))
    assert result.score("prs").precision == 0.0 and result.score("prs").recall == 0.0
    assert result.score("files").recall == 0.0 and result.score("files").precision == 0.0


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", r"gold\.json:1: error: not JSON"),
        ('{"title": "x"}', r"gold\.json:1: error: expected a list of entries"),
        (
            '[{"title": "a"},\n {"title": null}]',
            r'gold\.json:2: error: gold entry 2: "title" is not',
        ),
        (
            '[\n {"title": "a", "files": "tab.py"}]',
            r'gold\.json:2: error: gold entry 1: "files" is not',
        ),
        (
            '[{"title": "a", "issues": [1, true]}]',
            r'gold\.json:1: error: gold entry 1: "issues" is not',
        ),
    ],
)
def test_evaluate_bad_gold_exits_1_naming_file_and_line(
    tmp_path: Path, seeds_out: Path, content: str, message: str
) -> None:
    path = tmp_path / "gold.json"
    path.write_text(content, "utf-8")
    code, _, stderr = run_eval("--gold", str(path), str(seeds_out))
    assert code == 1 and re.search(message, stderr)


def test_evaluate_folder_without_a_graph_exits_1(tmp_path: Path) -> None:
    code, _, stderr = run_eval("--gold", str(SEEDS / "gold.json"), str(tmp_path))
    assert code == 1 and "no graph.json or graph.ttl" in stderr


def test_evaluate_read_graph_prefers_json(tmp_path: Path, seeds_out: Path) -> None:
    (tmp_path / "graph.ttl").write_bytes((seeds_out / "graph.ttl").read_bytes())
    assert len(read_graph(tmp_path).prs) == 13
    (tmp_path / "graph.json").write_text("{", "utf-8")
    with pytest.raises(ValueError, match=r"graph\.json:1: error: not JSON"):
        read_graph(tmp_path)


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
@pytest.mark.parametrize("which", ["gold", "graph"])
def test_evaluate_hostile_gold_or_graph_is_one_line_naming_it_and_exit_1(
    tmp_path: Path, seeds_out: Path, name: str, which: str
) -> None:
    """A deeply nested gold file raised RecursionError, a gold file that is not UTF-8
    UnicodeDecodeError, a node that is a string AttributeError: each a traceback."""
    hostile = tmp_path / ("gold.json" if which == "gold" else "graph.json")
    hostile.write_bytes(HOSTILE_JSON[name])
    gold = hostile if which == "gold" else SEEDS / "gold.json"
    code, stdout, stderr = run_eval(
        "--gold", str(gold), str(hostile if which == "graph" else seeds_out)
    )
    assert code == 1 and stdout == ""
    (line,) = stderr.splitlines()
    assert line.startswith(f"{hostile}:") and ": error: " in line
    if name == "bad-byte-on-line-3":
        assert line.startswith(f"{hostile}:3: error: not UTF-8 (byte 0xff)")


def test_evaluate_patterns_one_by_one_and_at_thresholds(tmp_path: Path) -> None:
    """The per-pattern rows add up to the patterns row; a higher threshold keeps fewer."""
    out = tmp_path / "out"
    corpus = Path(__file__).parent / "data" / "patterns" / "tune"
    code = (
        CliRunner()
        .invoke(
            cli,
            [
                "build",
                str(corpus),
                "-o",
                str(out),
                "-q",
                "--only",
                "json",
                "--pattern-threshold",
                "0",
            ],
            catch_exceptions=False,
        )
        .exit_code
    )
    assert code == 0
    code, stdout, _ = run_eval("--gold", str(corpus / "gold.json"), str(out))
    assert code == 0
    kinds, by_pattern, thresholds = stdout.strip().split("\n\n")
    total = table(kinds)["patterns"]
    rows = [line.split() for line in by_pattern.splitlines()[1:]]
    assert {r[0] for r in rows} >= {"fail-fast-validation", "sentinel-value"}
    for column in (1, 2, 3):  # gold, found, matched
        assert sum(int(r[column]) for r in rows) == total[column - 1]
    levels = [line.split() for line in thresholds.splitlines()[1:]]
    found = [int(level[1]) for level in levels]
    assert [float(level[0]) for level in levels] == sorted(float(level[0]) for level in levels)
    assert found == sorted(found, reverse=True) and found[0] > found[-1]
    assert float(levels[0][3]) < float(levels[-1][3])  # precision rises with the threshold
