"""Every export kgraph writes loads everywhere: an entry over `MAX_ENTRY_CHARS` is an error at
its line, skipped and counted, and what is written parses in pyoxigraph, in rapper and with
json.loads, however hostile the text (a property test)."""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path

import pyoxigraph as ox
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks import (
    RDF_EXPORTS,
    assert_nothing_lost,
    build_reported,
    html_data,
    parse_exports,
    strings_in,
)
from kgraph.cli import cli
from kgraph.limits import MAX_ENTRY_CHARS


def _rapper_count(path: Path, syntax: str) -> int:
    """How many triples rapper (raptor2, C: independent of kgraph and pyoxigraph) reads."""
    run = subprocess.run(
        ["rapper", "-c", "-i", syntax, str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    found = re.search(r"returned (\d+) triples", run.stderr)
    assert found, run.stderr
    return int(found.group(1))


def _all_exports_load(out: Path) -> int:
    """Every file of the build parses: the RDF ones in pyoxigraph (same triple count in all
    three) and in rapper (Turtle and N-Triples), graph.json and graph.jsonld with
    json.loads, the page's data blocks with json.loads. Returns the triple count."""
    triples = parse_exports(out)  # pyoxigraph; json.loads of graph.json
    json.loads((out / "graph.jsonld").read_text("utf-8"))
    assert _rapper_count(out / "graph.ttl", "turtle") == triples
    assert _rapper_count(out / "graph.nt", "ntriples") == triples
    html_data((out / "graph.html").read_text("utf-8"))  # json.loads of each data block
    return triples


def test_limits_a_20_mb_line_is_one_error_and_the_rest_is_kept(tmp_path: Path) -> None:
    """The 20 MB-line digest: exit 1, one error at the entry's line, every other entry of
    the digest in the graph, and `kgraph query` answers from the output."""
    huge = ("the cache eviction order 修复 淘汰 `mod.py` #12 " * 500_000)[:20_000_000]
    digest = tmp_path / "huge.txt"
    digest.write_text(
        "2026-01-01\n"
        "Keep the scheduler's order\nTouches `vllm/v1/core/sched/scheduler.py` only.\n"
        f"A huge summary\n{huge}.\n"
        "Evict in one place\nAlso `vllm/v1/core/sched/scheduler.py`, again.\n",
        "utf-8",
    )
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 1, stderr
    errors = [line for line in stderr.splitlines() if ": error: " in line]
    assert errors == [
        f"{digest}:4: error: entry skipped: its summary has 20,000,001 characters, over the "
        f"{MAX_ENTRY_CHARS:,} an entry may have, so that every export loads in any store; "
        "split or shorten it"
    ]
    assert report["summary"]["entriesSkipped"] == 1
    assert report["summary"]["entriesInGraph"] == 2
    assert_nothing_lost(report, graph)
    titles = sorted(n["title"] for n in graph["nodes"] if n["kind"] == "Entry")
    assert titles == ["Evict in one place", "Keep the scheduler's order"]
    assert _all_exports_load(tmp_path / "out") > 0
    answer = CliRunner().invoke(
        cli, ["query", str(tmp_path / "out"), "--name", "hotspots", "--format", "json"]
    )
    assert answer.exit_code == 0, answer.stderr
    rows = json.loads(answer.stdout)["results"]["bindings"]
    assert any(r["code"]["value"].endswith("scheduler.py") for r in rows)


def test_limits_each_field_of_an_entry_is_bounded(tmp_path: Path) -> None:
    """Title, summary, URL and repository each become one term: each is bounded, and an
    entry exactly at the bound is kept whole, not cut."""
    at_limit = "\x01" * MAX_ENTRY_CHARS  # six bytes each once escaped: the longest term
    records = [
        {"title": "At the limit", "summary": at_limit},
        {"title": "T" * (MAX_ENTRY_CHARS + 1), "summary": "A long title."},
        {"title": "Long URL", "summary": "s", "url": "https://e.org/" + "u" * MAX_ENTRY_CHARS},
        {"title": "Long repo", "summary": "s", "repo": "o/" + "r" * MAX_ENTRY_CHARS},
        {"title": "Fine", "summary": "Fine."},
    ]
    digest = tmp_path / "fields.jsonl"
    digest.write_text("\n".join(json.dumps(r) for r in records) + "\n", "utf-8")
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 1
    skipped = [line.split(": error: ")[0] for line in stderr.splitlines() if ": error: " in line]
    assert skipped == [f"{digest}:{n}" for n in (2, 3, 4)]
    for field in ("title has", "URL has", "repository has"):
        assert field in stderr
    assert_nothing_lost(report, graph)
    texts = {n["title"]: n["text"] for n in graph["nodes"] if n["kind"] == "Entry"}
    assert sorted(texts) == ["At the limit", "Fine"]
    assert texts["At the limit"] == at_limit  # whole: nothing is cut short
    assert _all_exports_load(tmp_path / "out") > 0


# Characters that cost most once escaped (controls: six bytes; astral: four), quotes and
# backslashes, bidirectional controls, lone surrogates, CJK, markup; few mention triggers,
# which would make a long entry slow to write rather than hostile to parse.
HOSTILE = st.sampled_from(
    ["\x01", "\x1f", "\x7f", '"', "\\", "\u202e", "\u2028", "\ud800", "🚀", "修", "<", "&", " "]
)
SIZES = st.one_of(st.integers(0, 300), st.sampled_from([MAX_ENTRY_CHARS, MAX_ENTRY_CHARS + 1]))


@st.composite
def hostile_text(draw: st.DrawFn) -> str:
    """A text of a size around the limit, made of a short hostile run repeated."""
    size = draw(SIZES)
    run = "".join(draw(st.lists(HOSTILE, min_size=1, max_size=8)))
    return (run * (size // len(run) + 1))[:size]


RECORD = st.fixed_dictionaries(
    {
        "title": st.one_of(st.just("A title"), hostile_text().map("T".__add__)),
        "summary": hostile_text(),
    },
    optional={"url": hostile_text().map("https://e.org/".__add__)},
)


def _longest(record: dict) -> int:
    return max(len(record["title"]), len(record["summary"]), len(record.get("url", "")))


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(records=st.lists(RECORD, min_size=1, max_size=3))
def test_limits_random_hostile_digests_write_exports_every_parser_loads(records) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        digest = root / "hostile.jsonl"
        digest.write_text("\n".join(json.dumps(r) for r in records) + "\n", "utf-8")
        code, stderr, report, graph = build_reported([str(digest)], root / "out")
        assert code in (0, 1), stderr
        assert "Traceback" not in stderr
        assert_nothing_lost(report, graph)
        # Skipped for its size: only an entry longer than the limit, and then said at its
        # line (cleaning, e.g. stripping blanks, may bring one back under it).
        skipped = [p["line"] for p in report["problems"] if "an entry may have" in p["message"]]
        assert all(_longest(records[line - 1]) > MAX_ENTRY_CHARS for line in skipped)
        within = [i + 1 for i, r in enumerate(records) if _longest(r) <= MAX_ENTRY_CHARS]
        assert not set(within) & set(skipped)
        entries = [n for n in graph["nodes"] if n["kind"] == "Entry"]
        assert len(entries) + len(skipped) <= len(records)
        assert len(entries) >= len(within)
        _all_exports_load(root / "out")
        for name, fmt in RDF_EXPORTS.items():
            for triple in ox.parse(path=str(root / "out" / name), format=fmt):
                if isinstance(triple.object, ox.Literal):
                    assert len(triple.object.value) <= MAX_ENTRY_CHARS, name
        page = (root / "out" / "graph.html").read_text("utf-8")
        assert any(s for block in html_data(page) for s in strings_in(block))
