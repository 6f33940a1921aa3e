"""Bad input through the real CLI: a clear FILE:LINE message, the right exit code, a report
that accounts for every entry, and exports that still parse. One real file per case."""

from __future__ import annotations

import io
import json
import os
import threading
from contextlib import suppress

import pytest
from click.testing import CliRunner

from checks import assert_conforms, assert_nothing_lost, build_reported, parse_exports
from conftest import SEEDS, build
from kgraph import atomic, corpus
from kgraph.catalog import builtin_knowledge
from kgraph.cli import cli
from kgraph.corpus import DigestReader
from kgraph.model import Severity

DAILY_SEED = SEEDS / "000_0a3d3bb7afca9fae.txt"
TAG_VIEW_SEED = SEEDS / "001_fa5218c0feccaf24.txt"


def _entries(graph: dict) -> list[dict]:
    return sorted(
        (n for n in graph["nodes"] if n["kind"] == "Entry"), key=lambda n: (n["line"], n["id"])
    )


def _problems(report: dict) -> list[tuple[str, int, str]]:
    return [(p["file"].rsplit("/", 1)[-1], p["line"], p["severity"]) for p in report["problems"]]


@pytest.mark.parametrize(
    "name, content",
    [
        ("empty.txt", b""),
        ("blank.txt", b"  \n\t\r\n   \n"),
        ("empty.jsonl", b"\n\n"),
        ("empty.md", b" \n"),
    ],
)
def test_cli_empty_and_blank_files_warn_and_build_nothing(tmp_path, name, content) -> None:
    digest = tmp_path / name
    digest.write_bytes(content)
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 0, stderr
    assert f"{name}:1: warning:" in stderr and "no entries" in stderr
    assert "kgraph: 1 problem(s) (0 error(s), 1 warning(s))" in stderr
    assert report["summary"]["entriesRead"] == 0
    assert_nothing_lost(report, graph)
    assert build_reported([str(digest)], tmp_path / "strict", "--strict")[0] == 1


@pytest.mark.parametrize(
    "name, content",
    [
        ("header.txt", "2026-01-01\n\n\n"),
        ("header-tag.txt", "vllm-project/vllm · 标签视图\n\n"),
        ("header.md", "---\ndate: 2026-01-01\nrepo: o/r\n---\n\n# o/r · 2026-01-01\n"),
    ],
)
def test_cli_header_without_entries_warns_no_entries_found(tmp_path, name, content) -> None:
    digest = tmp_path / name
    digest.write_text(content, "utf-8")
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 0
    assert f"{name}:1: warning: no entries found" in stderr
    assert report["summary"] == {
        "digests": 1,
        "entriesRead": 0,
        "entriesInGraph": 0,
        "entriesSkipped": 0,
        "problems": 1,
        "errors": 0,
        "warnings": 1,
    }
    assert [n["kind"] for n in graph["nodes"]] == ["Digest"]


@pytest.mark.parametrize(
    "name, content, lonely_lines",
    [
        (
            "daily.txt",
            "2026-01-01\nFirst title\nIts summary.\nLonely in the middle\n"
            "Second title\nSecond summary.\nLonely at the end\n",
            [4, 7],
        ),
        (
            "tag.txt",
            "o/r · 标签视图\n\n第一个标题\n\n摘要一。\n\n中间孤立的标题\n\n"
            "第二个标题\n\n摘要二。\n\n最后孤立的标题\n",
            [7, 13],
        ),
        (
            "notes.md",
            "## First\nIts summary.\n## Lonely in the middle\n"
            "## Second\nSummary.\n## Lonely last\n",
            [3, 6],
        ),
        (
            "lines.jsonl",
            '{"title": "First", "summary": "s."}\n{"title": "Lonely"}\n'
            '{"title": "Second", "summary": "t."}\n{"title": "Lonely last", "summary": null}\n',
            [2, 4],
        ),
    ],
)
def test_cli_title_without_summary_is_kept_and_reported_at_its_line(
    tmp_path, name, content, lonely_lines
) -> None:
    digest = tmp_path / name
    digest.write_text(content, "utf-8")
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 0, stderr
    for line in lonely_lines:
        assert f"{name}:{line}: warning:" in stderr
    entries = _entries(graph)
    assert len(entries) == 4
    assert {e["line"] for e in entries if e["text"] == ""} == set(lonely_lines)
    assert_nothing_lost(report, graph)
    assert build_reported([str(digest)], tmp_path / "strict", "--strict")[0] == 1


PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00"
    b"\x00\x00IEND\xaeB`\x82"
)


@pytest.mark.parametrize(
    "name, content",
    [
        ("image.txt", PNG),
        ("zeros.txt", b"2026-01-01\n" + b"\x00" * 4096),
        ("archive.md", b"PK\x03\x04" + bytes(range(256)) * 4),
    ],
)
def test_cli_binary_file_is_an_error_naming_it_and_the_rest_still_builds(
    tmp_path, name, content
) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / name).write_bytes(content)
    (tmp_path / "in" / "good.txt").write_bytes(DAILY_SEED.read_bytes())
    code, stderr, report, graph = build_reported([str(tmp_path / "in")], tmp_path / "out")
    assert code == 1
    assert f"{name}:1: error: binary file" in stderr
    assert report["summary"]["digests"] == 1 and report["summary"]["entriesInGraph"] == 7
    assert report["exitCode"] == 1 and report["summary"]["errors"] == 1
    assert_nothing_lost(report, graph)
    parse_exports(tmp_path / "out")


def test_cli_device_given_as_input_is_refused_and_the_rest_still_builds(tmp_path) -> None:
    code, stderr, report, graph = build_reported(["/dev/null", str(DAILY_SEED)], tmp_path / "out")
    assert code == 1
    assert "/dev/null:0: error: not a file or a pipe" in stderr
    assert report["summary"]["digests"] == 1 and report["summary"]["entriesInGraph"] == 7
    assert_nothing_lost(report, graph)


def test_cli_digest_larger_than_the_limit_is_refused_unread(tmp_path) -> None:
    """A sparse file of 64 GiB takes no disk and would fill the memory if read."""
    (tmp_path / "in").mkdir()
    huge = tmp_path / "in" / "huge.txt"
    with huge.open("wb") as file:
        file.truncate(64 << 30)
    (tmp_path / "in" / "good.txt").write_bytes(DAILY_SEED.read_bytes())
    code, stderr, report, graph = build_reported([str(tmp_path / "in")], tmp_path / "out")
    assert code == 1
    assert "huge.txt:0: error: larger than 1,024 MB" in stderr
    assert report["summary"]["digests"] == 1 and report["summary"]["entriesInGraph"] == 7
    assert_nothing_lost(report, graph)


def test_pipe_longer_than_the_limit_is_refused_after_the_limit(tmp_path, monkeypatch) -> None:
    """A pipe has no size to check first: it is read up to the limit and no further."""
    monkeypatch.setattr(corpus, "MAX_DIGEST_BYTES", 1000)
    pipe = tmp_path / "endless.txt"
    os.mkfifo(pipe)
    written: list[int] = []

    def write() -> None:
        # The reader stops reading, as it should: a write, or the flush on closing, fails.
        with suppress(BrokenPipeError), pipe.open("wb") as out:
            for _ in range(100):
                written.append(out.write(b"x" * 4096))

    writer = threading.Thread(target=write)
    writer.start()
    (extracted, key) = DigestReader(None, builtin_knowledge()).read_path(str(pipe))
    writer.join()
    (problem,) = extracted.result.problems
    assert key == "" and problem.severity is Severity.ERROR and "larger than" in problem.message
    assert sum(written) < 100 * 4096


def test_cli_pipe_given_as_input_is_read_to_its_end(tmp_path) -> None:
    """`kgraph build <(zcat digests.gz)`: the shell passes a pipe as /dev/fd/N."""
    pipe = tmp_path / "digest.txt"
    os.mkfifo(pipe)
    writer = threading.Thread(target=lambda: pipe.write_bytes(DAILY_SEED.read_bytes()))
    writer.start()
    code, _, report, graph = build_reported([str(pipe)], tmp_path / "out")
    writer.join()
    assert code == 0 and report["summary"]["entriesInGraph"] == 7
    assert_nothing_lost(report, graph)


def test_cli_binary_on_stdin_is_an_error_naming_stdin(tmp_path) -> None:
    result = CliRunner().invoke(
        cli, ["build", "-", "-o", str(tmp_path / "out")], input=PNG, catch_exceptions=False
    )
    assert result.exit_code == 1
    assert "-:1: error: binary file" in result.stderr


@pytest.mark.parametrize("encoding", ["gbk", "gb18030"])
@pytest.mark.parametrize("seed", [DAILY_SEED, TAG_VIEW_SEED], ids=lambda p: p.name[:3])
def test_cli_legacy_chinese_encoding_is_decoded_with_a_warning(tmp_path, encoding, seed) -> None:
    text = seed.read_text("utf-8")
    (tmp_path / "utf8").mkdir()
    (tmp_path / "legacy").mkdir()
    (tmp_path / "utf8" / "d.txt").write_text(text, "utf-8")
    (tmp_path / "legacy" / "d.txt").write_bytes(text.encode(encoding))
    _, _, _, expected = build_reported([str(tmp_path / "utf8")], tmp_path / "a")
    code, stderr, _, graph = build_reported([str(tmp_path / "legacy")], tmp_path / "b")
    assert code == 0
    assert "d.txt:1: warning: not UTF-8; decoded as GB18030" in stderr
    assert [(e["title"], e["text"]) for e in _entries(graph)] == [
        (e["title"], e["text"]) for e in _entries(expected)
    ]


@pytest.mark.parametrize(
    "text, encoding",
    [
        ("2026-01-01\nキャッシュの修正\n読む価値あり。東京都の新宿区です。\n", "shift_jis"),
        (
            "2026-01-01\n캐시 수정\n요청마다 한 번씩 정산하도록 합니다. 꼭 읽어 볼 가치가 "
            "있습니다.\n",
            "euc_kr",
        ),
        ("2026-01-01\nRésumé été\nÀ Noël, très éléphant çà et là.\n", "latin-1"),
        ("2026-01-01\n修復快取\n值得精讀，修改了快取淘汰順序。\n", "big5"),
    ],
)
def test_cli_undetectable_encoding_is_an_error_naming_the_file(tmp_path, text, encoding) -> None:
    digest = tmp_path / f"{encoding}.txt"
    digest.write_bytes(text.encode(encoding))
    code, stderr, report, _ = build_reported([str(digest)], tmp_path / "out")
    assert code == 1
    assert f"{encoding}.txt:2: error: not valid UTF-8" in stderr
    assert "convert the file to UTF-8" in stderr
    assert report["problems"][0]["severity"] == "error"


def test_cli_bom_crlf_and_mixed_line_endings_read_like_plain_utf8(tmp_path) -> None:
    lines = DAILY_SEED.read_text("utf-8").splitlines()
    endings = ["\r\n", "\r", "\n"]
    mixed = "".join(line + endings[i % 3] for i, line in enumerate(lines))
    variants = {
        "plain.txt": "\n".join(lines).encode("utf-8") + b"\n",
        "bom.txt": b"\xef\xbb\xbf" + "\n".join(lines).encode("utf-8"),
        "crlf.txt": "\r\n".join(lines).encode("utf-8") + b"\r\n",
        "mixed.txt": b"\xef\xbb\xbf" + mixed.encode("utf-8"),
        "utf16.txt": "\r\n".join(lines).encode("utf-16"),
    }
    seen = []
    for name, data in variants.items():
        (tmp_path / name).write_bytes(data)
        code, stderr, report, graph = build_reported([str(tmp_path / name)], tmp_path / name[:-4])
        assert code == 0 and not report["problems"], stderr
        digest = next(n for n in graph["nodes"] if n["kind"] == "Digest")
        assert digest["date"] == "2026-09-16"
        seen.append([(e["line"], e["title"], e["text"]) for e in _entries(graph)])
    assert all(s == seen[0] for s in seen) and len(seen[0]) == 7
    assert all("\r" not in text and "\ufeff" not in title for _, title, text in seen[0])


def test_cli_nul_bytes_are_removed_with_a_warning_at_their_line(tmp_path) -> None:
    digest = tmp_path / "nul.txt"
    digest.write_bytes(b"2026-01-01\nFix the\x00 cache\nSum\x00mary `a.py`.\n")
    code, stderr, _, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 0
    assert "nul.txt:2: warning: NUL bytes removed" in stderr
    (entry,) = _entries(graph)
    assert (entry["title"], entry["text"]) == ("Fix the cache", "Summary `a.py`.")
    parse_exports(tmp_path / "out")


def test_cli_lone_surrogates_and_nul_in_json_lines_become_replacement_characters(
    tmp_path,
) -> None:
    digest = tmp_path / "sur.jsonl"
    digest.write_text(
        '{"title": "Fix \\ud800 here", "summary": "Bad \\udc00 `x\\udfff.py` \\u0000 end.",'
        ' "url": "https://github.com/o/r/pull/7\\ud83d"}\n',
        "ascii",
    )
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 0
    for field in ("title", "summary", "url"):
        assert f"sur.jsonl:1: warning: lone surrogate in '{field}' replaced by U+FFFD" in stderr
    assert "sur.jsonl:1: warning: NUL characters removed from 'summary'" in stderr
    (entry,) = _entries(graph)
    assert entry["title"] == "Fix \ufffd here" and entry["text"] == "Bad \ufffd `x\ufffd.py`  end."
    assert parse_exports(tmp_path / "out") > 10
    assert_nothing_lost(report, graph)


def test_cli_invalid_json_on_line_7_skips_that_entry_and_exits_1(tmp_path) -> None:
    lines = [json.dumps({"title": f"Entry {i}", "summary": "Fine."}) for i in range(1, 11)]
    lines[6] = '{"title": "Entry 7", "summary": "cut here'
    digest = tmp_path / "bad.jsonl"
    digest.write_text("\n".join(lines) + "\n", "utf-8")
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 1
    assert "bad.jsonl:7: error: invalid JSON (Unterminated string" in stderr
    assert "1 entries skipped" in stderr
    assert report["summary"]["entriesRead"] == 10
    assert report["summary"]["entriesInGraph"] == 9
    assert report["problems"] == [
        {
            "file": str(digest),
            "line": 7,
            "severity": "error",
            "message": report["problems"][0]["message"],
            "skippedEntries": 1,
        }
    ]
    assert [e["line"] for e in _entries(graph)] == [1, 2, 3, 4, 5, 6, 8, 9, 10]
    assert_nothing_lost(report, graph)


def test_cli_json_nested_5000_deep_or_with_a_5000_digit_number_is_skipped(tmp_path) -> None:
    digest = tmp_path / "deep.jsonl"
    digest.write_text(
        json.dumps({"title": "Fine", "summary": "ok."})
        + '\n{"title": "Deep", "summary": "s", "x": '
        + "[" * 5000
        + "]" * 5000
        + "}\n"
        + '{"title": "Huge", "summary": "s", "number": '
        + "9" * 5000
        + "}\n"
        + json.dumps({"title": "Big number", "summary": "s", "number": 10**12})
        + "\n",
        "utf-8",
    )
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 1
    assert "deep.jsonl:2: error: unreadable JSON (nested too deeply); entry skipped" in stderr
    assert "deep.jsonl:3: error: unreadable JSON" in stderr
    assert "deep.jsonl:4: warning: ignored \"number\" '1000000000000'" in stderr
    assert report["summary"]["entriesSkipped"] == 2
    assert [e["title"] for e in _entries(graph)] == ["Fine", "Big number"]
    assert_nothing_lost(report, graph)


def test_cli_title_with_a_5000_digit_pr_number_does_not_crash(tmp_path) -> None:
    digits = "9" * 5000
    (tmp_path / "n.md").write_text(f"## Fix it (#{digits})\nSummary #{digits}.\n", "utf-8")
    (tmp_path / "n.jsonl").write_text(
        json.dumps({"title": f"Fix it #{digits}", "summary": f"See #{digits}."}) + "\n", "utf-8"
    )
    code, stderr, _, graph = build_reported([str(tmp_path)], tmp_path / "out")
    assert code == 0, stderr
    prs = [n for n in graph["nodes"] if n["kind"] == "PullRequest"]
    assert len(prs) == 2 and not any("number" in pr for pr in prs)
    assert not any(n["kind"] == "Issue" for n in graph["nodes"])


def test_cli_impossible_dates_are_dropped_and_the_graph_conforms_to_the_shapes(tmp_path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "bad-date.txt").write_text("2026-02-30\nSome title\nSome summary.\n", "utf-8")
    (folder / "front.md").write_text("---\ndate: 2026-99-99\n---\n## Front\nS.\n", "utf-8")
    (folder / "header.md").write_text("# acme/x · 2026-00-00\n\n## Header\nS.\n", "utf-8")
    (folder / "lines.jsonl").write_text(
        json.dumps({"title": "Bad", "summary": "S.", "date": "2026-13-45"})
        + "\n"
        + json.dumps({"title": "Other", "summary": "S."})
        + "\n",
        "utf-8",
    )
    code, stderr, report, graph = build_reported([str(folder)], tmp_path / "out")
    assert code == 0, stderr
    for where in ("bad-date.txt:1", "front.md:2", "header.md:1", "lines.jsonl:1"):
        assert f"{where}: warning: ignored " in stderr
    assert stderr.count(": not a calendar date") == 4
    assert len(_entries(graph)) == 5
    assert not [n for n in graph["nodes"] if n.get("date")]
    assert_nothing_lost(report, graph)
    assert_conforms(tmp_path / "out")


def test_cli_pr_number_zero_in_a_title_gives_a_pr_without_a_number(tmp_path) -> None:
    digest = tmp_path / "zero.txt"
    digest.write_text("2026-12-01\nFix zero (#0)\nSkim.\n", "utf-8")
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 0, stderr
    assert "zero.txt:2: warning: ignored PR number '0' in the title" in stderr
    (pr,) = [n for n in graph["nodes"] if n["kind"] == "PullRequest"]
    assert "number" not in pr and pr["title"] == "Fix zero (#0)"
    assert_nothing_lost(report, graph)
    assert_conforms(tmp_path / "out")


def test_cli_pr_url_of_another_repository_names_the_pr_and_warns(tmp_path) -> None:
    digest = tmp_path / "u.md"
    digest.write_text(
        "---\nrepo: acme/w\n---\n## [Fix thing](https://github.com/other/repo/pull/5)\n\n"
        "Summary.\n",
        "utf-8",
    )
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 0, stderr
    assert "u.md:4: warning: PR repository 'other/repo' from the URL is used" in stderr
    (pr,) = [n for n in graph["nodes"] if n["kind"] == "PullRequest"]
    assert pr["id"] == "pr/other/repo/5"
    assert_nothing_lost(report, graph)


def test_cli_unrecognised_first_title_is_a_skipped_entry_not_lost_text(tmp_path) -> None:
    digest = tmp_path / "d.txt"
    long_title = "Fix " + "the cache " * 20
    digest.write_text(f"2026-01-01\n{long_title}\nIts summary.\nNext title\nSummary.\n", "utf-8")
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 1
    assert "d.txt:2: error: text before the first title belongs to no entry" in stderr
    assert [e["title"] for e in _entries(graph)] == ["Next title"]
    assert report["summary"]["entriesRead"] == 2 and report["summary"]["entriesSkipped"] == 1
    assert_nothing_lost(report, graph)


@pytest.mark.parametrize("heading", ["## #", "## ", "##", "##   ", "##\t"], ids=repr)
def test_cli_empty_markdown_heading_is_a_skipped_entry(tmp_path, heading) -> None:
    digest = tmp_path / "h.md"
    digest.write_text(f"## Good\nSummary.\n{heading}\nOrphan summary.\n## C#\nIs kept.\n", "utf-8")
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out")
    assert code == 1
    assert "h.md:3: error: empty '## ' title; entry skipped" in stderr
    assert [(e["title"], e["text"]) for e in _entries(graph)] == [
        ("Good", "Summary."),
        ("C#", "Is kept."),
    ]
    assert_nothing_lost(report, graph)


def test_cli_digest_given_twice_is_read_once_and_the_counts_add_up(tmp_path) -> None:
    digest = "2026-12-01\nDuplicated digest title\nSummary.\n"
    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "d.txt").write_text(digest, "utf-8")
    inputs = [str(tmp_path / "x"), str(tmp_path / "y")]
    code, stderr, report, graph = build_reported(inputs, tmp_path / "out")
    assert code == 1  # its entries count as skipped, and every skipped entry is an error
    assert "d.txt:1: error: the same digest was given twice" in stderr
    assert report["summary"]["entriesRead"] == 2
    assert [e["title"] for e in _entries(graph)] == ["Duplicated digest title"]
    assert_nothing_lost(report, graph)


def test_cli_file_name_with_a_backslash_keeps_it_whole(tmp_path) -> None:
    digest = tmp_path / 'q"<>\\x.txt'  # one name on POSIX, not a folder and a file
    digest.write_text("2026-12-01\nBackslash title\nSummary.\n", "utf-8")
    code, _, report, graph = build_reported([str(digest)], tmp_path / "out")
    (node,) = [n for n in graph["nodes"] if n["kind"] == "Digest"]
    assert code == 0 and node["sourceName"] == 'q"<>\\x.txt'
    assert_nothing_lost(report, graph)
    parse_exports(tmp_path / "out")


def test_cli_file_names_that_are_not_utf8_or_hold_newlines_are_shown_safely(tmp_path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    names = [b"caf\xe9.txt", b"new\nline.txt", b"spaced #%.. name.txt"]
    for raw in names:
        path = bytes(folder).decode() + "/" + raw.decode("utf-8", "surrogateescape")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(f"2026-01-01\nTitle of {raw!r}\nSummary.\n")
    code, stderr, report, graph = build_reported([str(folder)], tmp_path / "out")
    assert code == 0, stderr
    sources = sorted(n["sourceName"] for n in graph["nodes"] if n["kind"] == "Digest")
    assert sources == ["caf\ufffd.txt", "new\ufffdline.txt", "spaced #%.. name.txt"]
    assert parse_exports(tmp_path / "out") > 0
    assert_nothing_lost(report, graph)


@pytest.mark.parametrize("name", ["graph.json", "graph.ttl", ".kgraph/manifest.json"])
def test_cli_report_that_would_replace_an_output_is_a_usage_error(tmp_path, name) -> None:
    out = tmp_path / "out"
    assert CliRunner().invoke(cli, ["build", str(DAILY_SEED), "-o", str(out), "-q"]).exit_code == 0
    before = (out / name).read_bytes()
    report = str(tmp_path / "elsewhere" / ".." / "out" / name)  # the same file, spelt otherwise
    result = CliRunner().invoke(cli, ["build", str(DAILY_SEED), "-o", str(out), "--report", report])
    assert result.exit_code == 2
    assert "--report" in result.stderr and "is a file kgraph writes in" in result.stderr
    assert (out / name).read_bytes() == before


def test_cli_unwritable_output_is_an_error_and_exit_1(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", "utf-8")
    report_path = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        ["build", str(DAILY_SEED), "-o", str(blocker / "out"), "--report", str(report_path)],
        catch_exceptions=False,
    )
    assert result.exit_code == 1
    assert ":0: error: cannot write the outputs:" in result.stderr
    report = json.loads(report_path.read_text("utf-8"))
    assert report["exitCode"] == 1 and report["outputs"] == []
    assert report["summary"]["entriesInGraph"] == 7


def test_cli_unwritable_report_is_an_error_and_exit_1(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", "utf-8")
    result = CliRunner().invoke(
        cli,
        ["build", str(DAILY_SEED), "-o", str(tmp_path / "out"), "--report", str(blocker / "r")],
        catch_exceptions=False,
    )
    assert result.exit_code == 1
    assert "error: cannot write the report" in result.stderr
    assert (tmp_path / "out" / "graph.ttl").exists()


@pytest.mark.parametrize("base", ["https://x y/", "no-scheme/", "https://a/{b}/"])
def test_cli_invalid_base_iri_is_a_usage_error(tmp_path, base) -> None:
    result = CliRunner().invoke(
        cli, ["build", str(DAILY_SEED), "-o", str(tmp_path), "--base", base]
    )
    assert result.exit_code == 2
    assert "--base" in result.stderr


def test_cli_an_output_that_cannot_be_made_is_named_not_its_temporary_file(
    tmp_path, monkeypatch
) -> None:
    """A folder kgraph may not write to: the message names the output, as a user knows
    it, not the hidden temporary file the refusal came from."""

    def refuse(dir: str, prefix: str, suffix: str) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied", f"{dir}/{prefix}k3x9q1{suffix}")

    monkeypatch.setattr(atomic.tempfile, "mkstemp", refuse)
    result = CliRunner().invoke(cli, ["build", str(DAILY_SEED), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    named = tmp_path / "out" / "graph.ttl"
    assert f"{named}:0: error: cannot write the outputs: Permission denied" in result.stderr
    assert ".tmp" not in result.stderr


# --- the second battery (issue 26) ----------------------------------------------------------

JSON = ("--only", "json")  # the builds below check what is read, not the exports


def _not_read(report: dict) -> list[tuple[str, str]]:
    return [(p["path"], p["reason"]) for p in report["notRead"]]


def _digest_sources(graph: dict) -> list[str]:
    return sorted(n["sourceName"] for n in graph["nodes"] if n["kind"] == "Digest")


def test_cli_folder_walk_follows_no_symbolic_link_and_says_so_once(tmp_path) -> None:
    """A link in an input folder can lead anywhere: to a file outside it, to /etc/passwd,
    to a parent folder. A walk follows none, as git and ripgrep do, and the summary lists
    them once; a link named as an input is followed."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "o.txt").write_text("2026-01-01\nOutside title\nSecret.\n", "utf-8")
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_text("2026-01-01\nInside title\nSummary.\n", "utf-8")
    (folder / "link.txt").symlink_to(tmp_path / "outside" / "o.txt")
    (folder / "passwd.txt").symlink_to("/etc/passwd")
    (folder / "dir").symlink_to(tmp_path / "outside")
    (folder / "up").symlink_to("..")
    (folder / "image.png").symlink_to("/etc/passwd")  # no digest's suffix: not worth a word
    result = CliRunner().invoke(cli, ["build", str(folder), "-o", str(tmp_path / "out"), *JSON])
    assert result.exit_code == 0, result.stderr
    assert "passwd" not in result.stderr and not result.stderr
    links = [str(folder / name) for name in ("dir", "link.txt", "passwd.txt", "up")]
    assert result.stdout.count("symbolic link") == 1
    assert f"not read: 4 symbolic link(s) ({', '.join(links[:3])} and 1 more)" in result.stdout
    code, _, report, graph = build_reported([str(folder)], tmp_path / "again", *JSON)
    assert code == 0 and _not_read(report) == [(link, "symbolic link") for link in links]
    assert _digest_sources(graph) == ["a.txt"]
    for pattern, read, passed in [
        ("*.txt", ["a.txt"], ["link.txt", "passwd.txt"]),
        ("*/o.txt", [], ["dir"]),
        ("**/*.txt", ["a.txt"], ["link.txt", "passwd.txt"]),
    ]:
        _, _, report, graph = build_reported([f"{folder}/{pattern}"], tmp_path / "glob", *JSON)
        assert _digest_sources(graph) == read, pattern
        assert _not_read(report) == [(str(folder / n), "symbolic link") for n in passed], pattern
        assert not [p for p in report["problems"] if "passwd" in p["file"]]
    code, _, report, graph = build_reported([str(folder / "link.txt")], tmp_path / "named", *JSON)
    assert code == 0 and _digest_sources(graph) == ["link.txt"]
    assert _not_read(report) == []


def test_cli_folder_walk_reads_no_output_or_report_of_kgraph(tmp_path) -> None:
    """`kgraph build IN -o IN/out --report IN/out/report.jsonl`, run twice, read its own
    report back as a JSON Lines digest (23 errors). A walk reads neither the build's output
    folder and report nor the output folder of another build (it holds `.kgraph/`)."""
    folder = tmp_path / "in"
    (folder / "old").mkdir(parents=True)
    (folder / "a.txt").write_text("2026-01-01\nInside title\nSummary.\n", "utf-8")
    (folder / "old" / "b.txt").write_text("2026-01-01\nOld title\nSummary.\n", "utf-8")
    assert build([str(folder / "old" / "b.txt")], folder / "old", *JSON)[0] == 0
    args = [str(folder), "--report", str(folder / "out" / "report.jsonl"), *JSON]
    for _ in range(2):
        code, stdout, stderr = build(args[:1], folder / "out", *args[1:])
        assert code == 0 and not stderr, stderr
    report = json.loads((folder / "out" / "report.jsonl").read_text("utf-8"))
    assert report["summary"]["digests"] == 1 and report["problems"] == []
    assert _not_read(report) == [
        (str(folder / "old"), "kgraph output"),
        (str(folder / "out"), "kgraph output"),
    ]
    assert f"not read: 2 kgraph output(s) ({folder / 'old'}, {folder / 'out'})" in stdout
    for _ in range(2):  # a report beside the digests, and outputs elsewhere
        code, _, stderr = build([str(folder), "--report", str(folder / "r.jsonl")], tmp_path / "o")
        assert code == 0 and not stderr, stderr
    for pattern in ("*.jsonl", "**/*.jsonl", "*/*.jsonl"):
        args = [f"{folder}/{pattern}", "--report", str(folder / "r.jsonl"), *JSON]
        code, _, stderr = build(args, tmp_path / "o")
        assert code == 1 and "pattern matches no file" in stderr and "r.jsonl:" not in stderr


def test_cli_records_kgraph_keeps_nested_too_deeply_are_ignored_not_a_traceback(tmp_path) -> None:
    """The records in OUT/.kgraph/ are JSON that anything may have overwritten: 200,000
    nested `[` there raised RecursionError in every command that read one."""
    out = tmp_path / "out"
    digest = tmp_path / "d.txt"
    digest.write_text("2026-01-01\nA title\nA summary naming `a.py`.\n", "utf-8")
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.py").write_text("def f():\n    pass\n", "utf-8")
    args = ["--source", f"o/r={source}"]
    assert build([str(digest)], out, *args)[0] == 0
    query = tmp_path / "q.rq"
    query.write_text("SELECT * WHERE { ?s ?p ?o } LIMIT 1\n", "utf-8")
    assert CliRunner().invoke(cli, ["query", str(out), str(query)]).exit_code == 0
    records = [
        *(out / ".kgraph").glob("*.json"),
        *(out / ".kgraph" / "output").glob("*.json"),
        *(out / ".kgraph-store").glob("*.json"),
    ]
    assert {r.name for r in records} >= {"outputs.json", "manifest.json", "index.json"}
    assert any(r.name.startswith("source-") for r in records)
    assert any(r.name == "kgraph-stamp.json" for r in records)
    for record in records:
        record.write_bytes(b"[" * 200_000)
    for command in (
        ["build", str(digest), "-o", str(out), *args, "-q"],
        ["query", str(out), str(query)],
        ["diff", str(out), str(out)],
        ["eval", "--gold", str(SEEDS / "gold.json"), str(out)],
        ["html", str(out), "-o", str(tmp_path / "page.html")],
    ):
        result = CliRunner().invoke(cli, command, catch_exceptions=False)
        assert result.exit_code == 0, (command, result.stderr)


def test_cli_bad_byte_is_reported_at_its_line_with_the_entries_it_cost(tmp_path) -> None:
    """A bad byte on line 6 was `a.txt:1: error: line 6: …`, and line 1 in the report:
    an editor or a CI annotation jumps to FILE:LINE. The file's entries, read with U+FFFD
    for the byte, are counted as skipped: nothing disappears without a number."""
    digest = tmp_path / "a.txt"
    digest.write_bytes(
        b"2026-01-01\nTitle one\nSummary one.\nTitle two\nSummary two.\n"
        b"Title \xff three\nSummary three.\n"
    )
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out", *JSON)
    assert code == 1
    message = (
        "not valid UTF-8 (byte 0xff at column 7) and no other encoding fits with confidence; "
        "convert the file to UTF-8; its 3 entries are skipped"
    )
    assert stderr.startswith(f"{digest}:6: error: {message}\n")
    assert report["problems"] == [
        {"file": str(digest), "line": 6, "severity": "error", "message": message,
         "skippedEntries": 3}
    ]  # fmt: skip
    assert report["summary"]["entriesRead"] == 3 and report["summary"]["entriesSkipped"] == 3
    assert_nothing_lost(report, graph)


def test_cli_json_lines_of_the_wrong_type_must_be_strings_and_repeated_keys_warn(
    tmp_path,
) -> None:
    """`"title": 12345` was reported as `missing "title"`, `"summary": [...]` as `missing
    "summary"`, and a key given twice silently kept its last value."""
    digest = tmp_path / "t.jsonl"
    digest.write_text(
        '{"title": 12345, "summary": "s"}\n'
        '{"title": "Listed", "summary": ["a", "b"]}\n'
        '{"title": "First", "title": "Second", "summary": "s", "x": {"k": 1, "k": 2}}\n'
        '{"summary": "no title"}\n'
        '{"title": " ", "summary": "blank title"}\n'
        '{"title": {"en": "t"}, "summary": true}\n',
        "utf-8",
    )
    code, _, report, graph = build_reported([str(digest)], tmp_path / "out", *JSON)
    assert code == 1
    assert [str(p["line"]) + ": " + p["message"] for p in report["problems"]] == [
        '1: "title" must be a string, not a number; entry skipped',
        '2: "summary" must be a string, not a list',
        '3: "title" given twice; the last value is used',
        '4: missing "title"; entry skipped',
        '5: empty "title"; entry skipped',
        '6: "title" must be a string, not an object; entry skipped',
    ]
    assert [e["title"] for e in _entries(graph)] == ["Listed", "Second"]
    assert_nothing_lost(report, graph)


def test_cli_the_same_file_given_twice_is_read_once_with_an_error(tmp_path) -> None:
    """`kgraph build a.txt a.txt` said nothing and exited 0; the README promises that a
    digest given twice is read once, with an error, its second copy's entries skipped."""
    digest = tmp_path / "a.txt"
    digest.write_text("2026-01-01\nTitle one\nSummary one.\nTitle two\nSummary.\n", "utf-8")
    (tmp_path / "link.txt").symlink_to(digest)
    for inputs in ([digest, digest], [digest, tmp_path / "link.txt"], [tmp_path, digest]):
        code, stderr, report, graph = build_reported(list(map(str, inputs)), tmp_path / "o", *JSON)
        assert code == 1, inputs
        assert ":1: error: the same digest was given twice; its 2 entries are read once" in stderr
        assert report["summary"]["entriesRead"] == 4 and report["summary"]["entriesSkipped"] == 2
        assert [e["title"] for e in _entries(graph)] == ["Title one", "Title two"]
        assert_nothing_lost(report, graph)


def test_cli_tag_view_of_title_and_summary_lines_without_a_blank_between_is_read(tmp_path):
    """A tag view whose blocks are a title line and then a summary line was read as "text
    before the first title": the whole file, every entry, skipped as one."""
    header, *blocks = [b for b in TAG_VIEW_SEED.read_text("utf-8").split("\n\n") if b.strip()]
    pairs = [f"{blocks[i].strip()}\n{blocks[i + 1].strip()}" for i in range(0, len(blocks), 2)]
    joined = tmp_path / "joined.txt"
    joined.write_text(header + "\n\n" + "\n\n".join(pairs) + "\n", "utf-8")
    _, _, _, expected = build_reported([str(TAG_VIEW_SEED)], tmp_path / "a", *JSON)
    code, stderr, report, graph = build_reported([str(joined)], tmp_path / "b", *JSON)
    assert code == 0 and not report["problems"], stderr
    assert len(_entries(graph)) == len(pairs) == 8
    assert [(e["title"], e["text"]) for e in _entries(graph)] == [
        (e["title"], e["text"]) for e in _entries(expected)
    ]
    assert [e["line"] for e in _entries(graph)] == [3 + 3 * i for i in range(8)]
    repos = {e["target"] for e in graph["edges"] if e["relation"] == "inRepository"}
    assert repos == {"repo/" + header.split(" ")[0]}  # from the header
    # a summary block that opens with a short line stays the summary of the title before it
    kept = tmp_path / "kept.txt"
    kept.write_text(
        "o/r · 标签视图\n\n标题一\n\n值得精读\n- 重点看 `a.py`。\n\n标题二\n\n摘要。\n", "utf-8"
    )
    code, stderr, _, graph = build_reported([str(kept)], tmp_path / "c", *JSON)
    assert code == 0, stderr
    assert [(e["title"], e["text"]) for e in _entries(graph)] == [
        ("标题一", "值得精读\n- 重点看 `a.py`。"),
        ("标题二", "摘要。"),
    ]


def test_cli_text_before_the_first_title_says_how_many_entries_it_cost(tmp_path) -> None:
    long_titles = [f"Fix {'the cache ' * 20}{n}" for n in ("one", "two")]
    digest = tmp_path / "d.txt"
    digest.write_text(
        f"2026-01-01\n{long_titles[0]}\nIts summary.\n{long_titles[1]}\nIts summary.\n"
        "Next title\nSummary.\n",
        "utf-8",
    )
    code, stderr, report, graph = build_reported([str(digest)], tmp_path / "out", *JSON)
    assert code == 1
    assert "d.txt:2: error: text before the first title belongs to no entry" in stderr
    assert "skipped as 2 entries: " in stderr
    assert report["summary"]["entriesRead"] == 3 and report["summary"]["entriesSkipped"] == 2
    assert_nothing_lost(report, graph)


@pytest.mark.parametrize(
    ("data", "size", "limit", "expected"),
    [
        (b"abc", 3, 1000, b"abc"),  # a file as its size says
        (b"abcdef", 3, 1000, b"abcdef"),  # one that grew while it was read: all of it
        (b"abcdef", 3, 5, None),  # grew past the limit
        (b"x" * 2500, 0, 3000, b"x" * 2500),  # a pipe under the limit, over several chunks
        (b"", 0, 1000, b""),  # an empty pipe
        (b"x" * 3001, 0, 3000, None),
    ],
)
def test_read_at_most_reads_what_is_there_up_to_the_limit(
    monkeypatch, data: bytes, size: int, limit: int, expected: bytes | None
) -> None:
    monkeypatch.setattr(corpus, "MAX_DIGEST_BYTES", limit)
    monkeypatch.setattr(corpus, "READ_CHUNK", 1024)
    assert corpus._read_at_most(io.BytesIO(data), size) == expected
