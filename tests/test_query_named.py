"""Every named query of queries/, with its expected rows on a hand-written graph, and the
code questions (who touches X, what code is shared) checked on the real seeds."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DATA, DEV, SEEDS, build
from kgraph import evaluate, query
from kgraph.cli import cli
from kgraph.results import Solutions

A = "Track cache recency once per request"  # #101, in day1.txt and day2.txt
B = "Evict blocks lazily in the LRU policy"  # #102, day2.txt
C = "SWA 卸载修复窗口失效"  # no number, tags.txt (undated)
D = "Bump the CI image"  # #104, day2.txt
PR_101 = "https://w3id.org/kgraph/id/pr/acme/kv/101"
PR_102 = "https://w3id.org/kgraph/id/pr/acme/kv/102"
PR_C = "https://w3id.org/kgraph/id/pr/acme/kv/title-c0ffee"


def rows(out: Path, query_name: str, **params: str) -> list[tuple[str | None, ...]]:
    """The query's rows, in its own order, as plain strings (None for unbound)."""
    text = query.bind(query.named_query(query_name), params)
    answer = query.run_local(out, text, query_name).answer
    assert isinstance(answer, Solutions)
    return [tuple(None if t is None else t.value for t in row) for row in answer.rows]


EXPECTED: list[tuple[str, dict[str, str], list[tuple[str | None, ...]]]] = [
    (
        "shared-code",
        {},
        [
            ("3", "symbol", "LRUPolicy.evict", "acme/kv", B, "102"),
            ("3", "symbol", "LRUPolicy.evict", "acme/kv", C, None),
            ("3", "symbol", "LRUPolicy.evict", "acme/kv", A, "101"),
            ("2", "file", "kv/policies/lru.py", "acme/kv", B, "102"),
            ("2", "file", "kv/policies/lru.py", "acme/kv", A, "101"),
        ],
    ),
    (
        "co-changed",
        {},
        [
            ("named", "file", "kv/policies/lru.py", "acme/kv", A, "101", B, "102"),
            ("named", "symbol", "LRUPolicy.evict", "acme/kv", B, "102", C, None),
            ("named", "symbol", "LRUPolicy.evict", "acme/kv", A, "101", B, "102"),
            ("named", "symbol", "LRUPolicy.evict", "acme/kv", A, "101", C, None),
        ],
    ),
    ("review-gaps", {}, []),  # no PR is linked to a commit
    (
        "hotspots",
        {},
        [
            ("3", "symbol", "LRUPolicy.evict", "acme/kv"),
            ("2", "file", "kv/policies/lru.py", "acme/kv"),
            ("1", "file", "scheduler.py", "acme/kv"),
            ("1", "symbol", "LRUPolicy", "acme/kv"),
            ("1", "symbol", "_is_current", "acme/kv"),
            ("1", "symbol", "on_store_miss", "acme/kv"),
        ],
    ),
    (
        "who-touches",
        {"symbol": "evict"},
        [
            ("LRUPolicy.evict", B, "102", "day2.txt", "5"),
            ("LRUPolicy.evict", C, None, "tags.txt", "3"),
            ("LRUPolicy.evict", A, "101", "day1.txt", "2"),
            ("LRUPolicy.evict", A, "101", "day2.txt", "2"),
        ],
    ),
    (
        "who-touches",
        {"symbol": "_is_current"},
        [("_is_current", A, "101", "day1.txt", "2")],  # day2.txt's entry does not name it
    ),
    (
        "who-touches",
        {"file": "lru.py"},
        [
            ("kv/policies/lru.py", B, "102", "day2.txt", "5"),
            ("kv/policies/lru.py", A, "101", "day1.txt", "2"),
            ("kv/policies/lru.py", A, "101", "day2.txt", "2"),
        ],
    ),
    ("who-touches", {"file": "olicies/lru.py"}, []),  # whole segments only
    ("who-touches", {"symbol": "LRUPolicy"}, [("LRUPolicy", B, "102", "day2.txt", "5")]),
    (
        "pr",
        {"number": "#102"},
        [
            (PR_102, "appliesPattern", "Lazy invalidation"),
            (PR_102, "describedBy", "day2.txt:5"),
            (PR_102, "hasTopic", "KV Offload"),
            (PR_102, "inRepository", "acme/kv"),
            (PR_102, "makesDecision", "Evict lazily on lookup"),
            (PR_102, "mentionsSymbol", "LRUPolicy"),
            (PR_102, "mentionsSymbol", "LRUPolicy.evict"),
            (PR_102, "mentionsSymbol", "dataclasses.replace"),
            (PR_102, "number", "102"),
            (PR_102, "readingAdvice", "skim"),
            (PR_102, "repositoryBasis", "digest"),
            (PR_102, "sharesCodeWith", C),
            (PR_102, "sharesCodeWith", A),
            (PR_102, "title", B),
            (PR_102, "touchesFile", "kv/policies/lru.py"),
        ],
    ),
    (
        "pr",
        {"title": "窗口"},
        [
            (PR_C, "appliesPattern", "Decoupling"),
            (PR_C, "describedBy", "tags.txt:3"),
            (PR_C, "hasTopic", "SWA"),
            (PR_C, "inRepository", "acme/kv"),
            (PR_C, "makesDecision", "放宽 store 掩码"),
            (PR_C, "mentionsSymbol", "LRUPolicy.evict"),
            (PR_C, "mentionsSymbol", "dataclasses.replace"),
            (PR_C, "readingAdvice", "close-read"),
            (PR_C, "repositoryBasis", "digest"),
            (PR_C, "sharesCodeWith", B),
            (PR_C, "sharesCodeWith", A),
            (PR_C, "title", C),
            (PR_C, "touchesFile", "scheduler.py"),
        ],
    ),
    (
        "patterns",
        {},
        [
            # the fixture's mentions predate kg:confidence: no confidence, no kind
            ("2", "lazy-invalidation", "Lazy invalidation", B, "evicts lazily", None, None),
            ("2", "lazy-invalidation", "Lazy invalidation", A, "invalidated lazily", None, None),
            ("1", "decoupling", "Decoupling", C, "解耦", None, None),
        ],
    ),
    (
        "decisions-since",
        {"date": "2026-09-10"},
        [
            ("2026-09-10", "Rank by logical order, not position", A),
            ("2026-09-16", "Evict lazily on lookup", B),
        ],
    ),
    (
        # #101 was first recorded on the 10th, so it is not new on the 11th.
        "decisions-since",
        {"date": "2026-09-11"},
        [("2026-09-16", "Evict lazily on lookup", B)],
    ),
    ("decisions-since", {"date": "2026-09-17"}, []),
    (
        "topic",
        {"name": "kv OFFLOADING"},
        [("KV Offload", B, "102", "skim"), ("KV Offload", A, "101", "close-read")],
    ),
    ("topic", {"name": "滑动窗口注意力"}, [("SWA", C, None, "close-read")]),
    (
        "unresolved",
        {},
        [
            ("ambiguous", "file", "scheduler.py", "2", "scheduler.py", C, "tags.txt", "3"),
            ("missing", "symbol", "_is_current", "0", "_is_current", A, "day1.txt", "2"),
            ("missing", "symbol", "on_store_miss", "0", "on_store_miss", D, "day2.txt", "8"),
        ],
    ),
]


@pytest.mark.parametrize(
    ("name", "params", "expected"), EXPECTED, ids=[f"{n}-{p}" for n, p, _ in EXPECTED]
)
def test_query_named_expected_rows_on_the_fixture(fixture_out, name, params, expected) -> None:
    assert rows(fixture_out, name, **params) == expected


@pytest.fixture(scope="module")
def coupling_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("coupling-out")
    shutil.copy(DATA / "coupling.ttl", out / "graph.ttl")
    return out


COUPLING_ROWS = [
    ("kv/c.py", "z.py", "71", "7"),  # its files given z.py first: entity sorts first
    ("kv/a.py", "kv/b.py", "62", "8"),  # equal degrees: the larger average-revs first
    ("kv/b.py", "kv/c.py", "62", "6"),
    ("kv/a.py", "z.py", "40", "10"),
]


def test_query_named_coupling_rows_on_the_fixture(coupling_out) -> None:
    assert rows(coupling_out, "coupling") == COUPLING_ROWS


def test_query_named_function_coupling_rows_on_the_fixture(coupling_out) -> None:
    assert rows(coupling_out, "function-coupling") == [
        ("kv/a.py#Table.load", "z.py#load", "92", "7"),  # given z.py first: entity sorts first
        ("kv/a.py#Table.load", "kv/c.py#helper", "90", "6"),
    ]


def test_query_named_review_risks_on_the_fixture(coupling_out) -> None:
    # 201: b.py (62 % with a.py); z.py is coupled at 40 % only. 202 changed a.py and b.py
    # and names c.py: nothing. 203 names a symbol c.py defines: nothing. 204: a.py and
    # c.py, both 62 % with b.py. 205 is not linked.
    assert rows(coupling_out, "review-risks") == [
        ("Cache the table in a", "201", "kv/b.py", "kv/a.py", "62"),
        ("Tidy b", "204", "kv/a.py", "kv/b.py", "62"),
        ("Tidy b", "204", "kv/c.py", "kv/b.py", "62"),
    ]


def test_query_named_coupling_csv_has_code_maats_columns(coupling_out) -> None:
    result = CliRunner().invoke(
        cli, ["query", str(coupling_out), "-n", "coupling", "-f", "csv"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == "entity,coupled,degree,average-revs"
    assert [tuple(r) for r in csv.reader(io.StringIO(result.stdout))][1:] == COUPLING_ROWS
    # TSV and JSON keep the variable, as their W3C formats require.
    tsv = CliRunner().invoke(cli, ["query", str(coupling_out), "-n", "coupling", "-f", "tsv"])
    assert tsv.stdout.splitlines()[0] == "?entity\t?coupled\t?degree\t?average_revs"


def test_query_named_column_header_tag_is_checked() -> None:
    with pytest.raises(query.QueryError, match=r"q.rq:1: expected '@column NAME HEADING'"):
        query.parse("# @column only-one\nSELECT * WHERE {}", "q", "q.rq")


# On tests/data/history-queries.ttl: PRs 201 and 202 are linked to their commits, whose
# changes differ from what the reviews name; the SWA PR has a candidate commit only.
E = "Bound the eviction window"  # #201
F = "Count hits per request"  # #202
G = "SWA 窗口修复"  # unlinked, names stats.py and LRUPolicy.evict
EXPECTED_HISTORY: list[tuple[str, dict[str, str], list[tuple[str | None, ...]]]] = [
    (
        "shared-code",
        {},
        [
            ("2", "file", "kv/policies/lru.py", "acme/kv", E, "201"),
            ("2", "file", "kv/policies/lru.py", "acme/kv", F, "202"),
            ("2", "file", "kv/stats.py", "acme/kv", F, "202"),
            ("2", "file", "kv/stats.py", "acme/kv", G, None),
            ("2", "symbol", "LRUPolicy.evict", "acme/kv", E, "201"),  # changed it
            ("2", "symbol", "LRUPolicy.evict", "acme/kv", G, None),  # #202 names, not changes
        ],
    ),
    (
        "hotspots",
        {},
        [
            ("2", "file", "kv/policies/lru.py", "acme/kv"),
            ("2", "file", "kv/stats.py", "acme/kv"),
            ("2", "symbol", "LRUPolicy.evict", "acme/kv"),
            ("1", "file", "tests/test_lru.py", "acme/kv"),
            ("1", "symbol", "LRUPolicy.touch", "acme/kv"),
            ("1", "symbol", "Stats.count", "acme/kv"),
            ("1", "symbol", "on_store_miss", "acme/kv"),  # named only: #201's names do not count
        ],
    ),
    (
        "who-touches",
        {"symbol": "evict"},
        [
            ("LRUPolicy.evict", E, "201", "day.txt", "2"),  # its commit changed it
            ("LRUPolicy.evict", G, None, "day.txt", "6"),  # its review names it
        ],
    ),
    (
        "who-touches",
        {"file": "stats.py"},
        [
            ("kv/stats.py", F, "202", "day.txt", "4"),
            ("kv/stats.py", G, None, "day.txt", "6"),
        ],
    ),
    ("who-touches", {"symbol": "LRUPolicy"}, []),  # named by #201, which did not change it
    (
        "co-changed",
        {},
        [
            ("changed", "file", "kv/policies/lru.py", "acme/kv", E, "201", F, "202"),
            ("changed and named", "file", "kv/stats.py", "acme/kv", F, "202", G, None),
            ("changed and named", "symbol", "LRUPolicy.evict", "acme/kv", E, "201", G, None),
        ],
    ),
    (
        "review-gaps",
        {},
        [
            (E, "201", "changed, not named", "file", "tests/test_lru.py"),
            (E, "201", "named, not changed", "symbol", "_is_current"),
            # `LRUPolicy` counts as changed: its method `evict` is.
            (F, "202", "named, not changed", "symbol", "LRUPolicy.evict"),
        ],
    ),
]


@pytest.fixture(scope="module")
def history_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output folder whose graph is the hand-written tests/data/history-queries.ttl."""
    out = tmp_path_factory.mktemp("history-out")
    shutil.copy(DATA / "history-queries.ttl", out / "graph.ttl")
    return out


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    EXPECTED_HISTORY,
    ids=[f"{n}-{p}" for n, p, _ in EXPECTED_HISTORY],
)
def test_query_named_expected_rows_with_commits(history_out, name, params, expected) -> None:
    assert rows(history_out, name, **params) == expected


def test_query_named_every_shipped_query_has_expected_rows() -> None:
    tested = {name for name, _, rows_ in [*EXPECTED, *EXPECTED_HISTORY] if rows_} | {
        "coupling",
        "function-coupling",
        "review-risks",
    }
    assert tested == set(query.named_queries())


def test_query_named_every_query_documents_itself_and_its_parameters() -> None:
    for named in query.named_queries().values():
        assert len(named.summary) > 40, named.name
        assert all(p.help for p in named.params), named.name


# ---- the real seeds --------------------------------------------------------------------------


def test_query_named_who_touches_sliding_window_lookup_on_the_seeds(seeds_out, gold) -> None:
    """The issue's own example, through the CLI."""
    result = CliRunner().invoke(
        cli,
        [
            *("query", str(seeds_out), "--name", "who-touches"),
            *("--param", "symbol=_sliding_window_lookup", "--format", "csv"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    table = list(csv.DictReader(io.StringIO(result.stdout)))
    expected = {e["title"] for e in gold if "_sliding_window_lookup" in e["symbols"]}
    assert expected and {row["title"] for row in table} == expected
    assert all(row["digest"].endswith(".txt") and int(row["line"]) > 0 for row in table)


def test_query_named_who_touches_every_gold_symbol_and_file_of_the_seeds(seeds_out, gold) -> None:
    wanted: dict[tuple[str, str], set[str]] = defaultdict(set)
    for entry in gold:
        for symbol in entry["symbols"]:
            wanted[("symbol", symbol)].add(entry["title"])
        for path in entry["files"]:
            wanted[("file", path)].add(entry["title"])
    assert len(wanted) > 40
    for (kind, name), titles in wanted.items():
        found = {row[1] for row in rows(seeds_out, "who-touches", **{kind: name})}
        assert found == titles, (kind, name)


def test_query_named_who_touches_lists_the_line_of_every_entry_that_names_it(seeds_out) -> None:
    """A PR described by both seeds gets one row per digest, each with its entry's line."""
    found = rows(seeds_out, "who-touches", symbol="_is_current")
    digests = sorted(p.name for p in SEEDS.glob("*.txt"))
    assert sorted(row[3] for row in found) == digests
    for row in found:
        lines = (SEEDS / str(row[3])).read_text("utf-8").splitlines()
        assert lines[int(str(row[4])) - 1].startswith("KV Offload 热度改为每请求结算一次")


@pytest.fixture(scope="module")
def seeds_dev_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("seeds-dev-out")
    code, _, stderr = build([str(SEEDS), str(DEV)], out)
    assert code == 0, stderr
    return out


def _code_prs(out: Path) -> dict[tuple[str, str], set[str]]:
    """From graph.json (another export, read without SPARQL): (id, code) -> PR titles."""
    graph = json.loads((out / "graph.json").read_text("utf-8"))
    nodes = {n["id"]: n for n in graph["nodes"]}
    prs: dict[tuple[str, str], set[str]] = defaultdict(set)
    for edge in graph["edges"]:
        if edge["relation"] in ("touchesFile", "mentionsSymbol"):
            target = nodes[edge["target"]]
            if not target.get("isExternal"):
                code = target.get("path") or target["qualifiedName"]
                prs[(target["id"], code)].add(nodes[edge["source"]]["title"])
    return prs


def test_query_named_shared_code_is_every_entity_two_prs_share(seeds_dev_out, seeds_out) -> None:
    shared = {key: titles for key, titles in _code_prs(seeds_dev_out).items() if len(titles) > 1}
    assert len(shared) > 10
    expected = Counter((str(len(t)), key[1], title) for key, t in shared.items() for title in t)
    found = Counter((r[0], r[2], r[4]) for r in rows(seeds_dev_out, "shared-code"))
    assert found == expected
    # The two seeds alone share no code (gold.json agrees), so the answer is empty.
    assert not [key for key, t in _code_prs(seeds_out).items() if len(t) > 1]
    assert rows(seeds_out, "shared-code") == []


def test_query_named_hotspots_count_the_prs_of_every_entity(seeds_dev_out) -> None:
    expected = Counter((str(len(t)), key[1]) for key, t in _code_prs(seeds_dev_out).items())
    found = rows(seeds_dev_out, "hotspots")
    assert Counter((r[0], r[2]) for r in found) == expected
    counts = [int(str(r[0])) for r in found]
    assert counts == sorted(counts, reverse=True)


def test_query_named_patterns_shows_each_pattern_confidence_and_evidence_kind(seeds_out) -> None:
    """Every row of a real build says how sure its evidence is and that it comes from the
    review's text; the confidence is the best of the PR's mentions in the JSON export."""
    result = CliRunner().invoke(
        cli,
        ["query", str(seeds_out), "--name", "patterns", "--format", "csv"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    table = list(csv.DictReader(io.StringIO(result.stdout)))
    assert table and {row["kind"] for row in table} == {"text"}
    assert all(0.0 < float(row["confidence"]) <= 1.0 for row in table)
    view = evaluate.read_graph(seeds_out)
    by_title = {pr.title: pr for pr in view.prs}
    for row in table:
        best = by_title[row["title"]].pattern_confidence[row["pattern"]]
        assert float(row["confidence"]) == pytest.approx(best)
