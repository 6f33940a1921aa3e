"""Each input format, read from real text: daily, tag view, Markdown, JSON Lines."""

from __future__ import annotations

import json
import os
import socket

import pytest

from conftest import DEV, EXAMPLES, SEEDS
from kgraph.ingest import expand_inputs, read_digest, read_inputs
from kgraph.ingest.titles import looks_like_title


def read(text: str, name: str = "digest.txt", forced: str | None = None):
    return read_digest(text.encode("utf-8"), name, forced)


def test_ingest_daily_seed_finds_seven_entries_with_their_lines() -> None:
    result = read_digest((SEEDS / "000_0a3d3bb7afca9fae.txt").read_bytes(), "000.txt")
    assert result.digest.format == "daily" and result.digest.date == "2026-09-16"
    assert [e.line for e in result.entries] == [2, 7, 9, 11, 13, 15, 17]
    first = result.entries[0]
    assert first.title == "KV Offload 热度改为每请求结算一次，修正淘汰顺序"
    assert first.text.count("\n- ") == 3  # the summary continues over three "- " lines
    assert not result.problems


def test_ingest_tag_view_seed_gives_every_entry_the_header_repository() -> None:
    result = read_digest((SEEDS / "001_fa5218c0feccaf24.txt").read_bytes(), "001.txt")
    assert result.digest.format == "tag-view"
    assert len(result.entries) == 8
    assert {e.repo for e in result.entries} == {"vllm-project/vllm"}


@pytest.mark.parametrize("path", sorted(DEV.glob("*.txt")), ids=lambda p: p.name)
def test_ingest_dev_digests_match_gold_titles(path, dev_gold) -> None:
    titles = {g["title"] for g in dev_gold if path.name in g["in_documents"]}
    result = read_digest(path.read_bytes(), path.name)
    assert {e.title for e in result.entries} == titles
    assert not result.problems


def test_ingest_crlf_bom_and_trailing_blanks_are_tolerated() -> None:
    text = "2026-01-02  \r\nFix the cache   \r\nWorth a close read. `a.py` changed.\r\n"
    result = read_digest(b"\xef\xbb\xbf" + text.encode("utf-8"), "d.txt")
    assert [(e.line, e.title, e.text) for e in result.entries] == [
        (2, "Fix the cache", "Worth a close read. `a.py` changed.")
    ]


def test_ingest_title_without_summary_in_the_middle_and_at_the_end_is_kept_and_reported() -> None:
    text = (
        "2026-01-02\nFirst title\nIts summary.\nLonely title\nSecond title\n"
        "Second summary.\nLast title\n"
    )
    result = read(text)
    assert [e.title for e in result.entries] == [
        "First title",
        "Lonely title",
        "Second title",
        "Last title",
    ]
    messages = [str(p) for p in result.problems]
    assert any("digest.txt:4:" in m and "without a summary" in m for m in messages)
    assert any("digest.txt:7:" in m and "without a summary" in m for m in messages)


def test_ingest_short_summary_without_punctuation_stays_with_its_title() -> None:
    result = read("2026-01-02\nTitle one\n可快速浏览\nTitle two\nA summary.\n")
    assert [(e.title, e.text) for e in result.entries] == [
        ("Title one", "可快速浏览"),
        ("Title two", "A summary."),
    ]


def test_ingest_markdown_front_matter_and_linked_number() -> None:
    text = (
        "---\ndate: 2026-11-21\nrepo: sgl-project/sglang\n---\n"
        "## Fix eviction ([#14501](https://github.com/sgl-project/sglang/pull/14501))\n\n"
        "Worth a close read.\n\n## Second\nSkim.\n"
    )
    result = read(text, "x.md")
    assert result.digest.format == "markdown"
    first, second = result.entries
    assert (first.number, first.repo, first.date, first.line) == (
        14501,
        "sgl-project/sglang",
        "2026-11-21",
        5,
    )
    assert second.text == "Skim."


@pytest.mark.parametrize(
    "quote",
    [
        "```markdown\n## not a heading\n```",
        "~~~\n## not a heading\n~~~",
        "   ````\n```\n## not a heading\n```\n````",
        "~~~~ md\n## not a heading\n~~~\n~~~~~  ",
    ],
    ids=["backticks", "tildes", "longer-fence", "info-and-longer-close"],
)
def test_ingest_markdown_heading_inside_a_code_fence_is_summary_text(quote: str) -> None:
    text = f"---\nrepo: acme/w\n---\n## Real title\n\nSummary:\n\n{quote}\n\n## Next\nSkim.\n"
    result = read(text, "f.md")
    assert [e.title for e in result.entries] == ["Real title", "Next"]
    assert "## not a heading" in result.entries[0].text
    assert not result.problems


def test_ingest_markdown_inline_backticks_open_no_fence() -> None:
    result = read("## First\n```a``` is inline code.\n## Second\nSkim.\n", "f.md")
    assert [e.title for e in result.entries] == ["First", "Second"]


def test_ingest_markdown_unclosed_fence_warns_where_it_opened() -> None:
    text = "## First\nSummary.\n```\ncode\n## Swallowed\nSkim.\n"
    result = read(text, "f.md")
    assert [e.title for e in result.entries] == ["First"]
    assert [str(p) for p in result.problems] == [
        "f.md:3: warning: code fence '```' is never closed; the '## ' headings after it are "
        "read as its text"
    ]


@pytest.mark.parametrize(
    "name, text, expected, warning",
    [
        (
            "u.md",
            "---\nrepo: acme/w\n---\n## [Fix thing](https://github.com/other/repo/pull/5)\nS.\n",
            ("other/repo", 5),
            "u.md:4: warning: PR repository 'other/repo' from the URL is used, not 'acme/w' "
            "from the digest",
        ),
        (
            "n.md",
            "# acme/w · 2026-12-20\n## Fix thing ([#600](https://github.com/acme/w/pull/601))\nS.\n",
            ("acme/w", 601),
            "n.md:2: warning: PR number 601 from the URL is used, not 600 from the title",
        ),
        (
            "u.jsonl",
            '{"title": "Fix", "summary": "S.", "repo": "acme/a", "number": 4, '
            '"url": "https://github.com/x/y/pull/3"}\n',
            ("x/y", 3),
            'u.jsonl:1: warning: PR number 3 from the URL is used, not 4 from "number"',
        ),
        (
            "n.jsonl",
            '{"title": "Fix scheduler race (#500)", "summary": "S.", "number": 501}\n',
            (None, 501),
            'n.jsonl:1: warning: PR number 501 from "number" is used, not 500 from the title',
        ),
    ],
    ids=["markdown-repo", "markdown-number", "jsonl-repo-and-number", "jsonl-number-field"],
)
def test_ingest_pr_url_outranks_the_declared_repo_and_number_with_a_warning(
    name, text, expected, warning
) -> None:
    result = read(text, name)
    assert [(e.repo, e.number) for e in result.entries] == [expected]
    assert warning in [str(p) for p in result.problems]


def test_ingest_pr_url_repo_differing_only_in_case_is_no_disagreement() -> None:
    text = "---\nrepo: acme/w\n---\n## Fix ([#7](https://github.com/ACME/W/pull/7))\nS.\n"
    result = read(text, "c.md")
    assert [(e.repo, e.number) for e in result.entries] == [("acme/w", 7)]
    assert not result.problems


def test_ingest_jsonl_fields_and_bad_line_reported_with_its_number() -> None:
    lines = [
        json.dumps({"title": "A (#12)", "summary": "s", "repo": "o/r"}),
        json.dumps({"title": "B", "summary": "t", "url": "https://github.com/o/r/pull/7"}),
        "{not json",
        json.dumps({"summary": "no title"}),
    ]
    result = read("\n".join(lines), "x.jsonl")
    assert [(e.title, e.number, e.repo) for e in result.entries] == [
        ("A (#12)", 12, "o/r"),
        ("B", 7, "o/r"),
    ]
    assert [(p.line, p.skipped_entries) for p in result.problems] == [(3, 1), (4, 1)]
    assert "x.jsonl:3:" in str(result.problems[0])


@pytest.mark.parametrize(
    "name, text, line, given",
    [
        ("d.txt", "2026-02-30\nSome title\nSome summary.\n", 1, "2026-02-30"),
        ("f.md", "---\nrepo: acme/w\ndate: 2026-99-99\n---\n## T\nS.\n", 3, "2026-99-99"),
        ("h.md", "# acme/x · 2026-00-00\n\n## T\nS.\n", 1, "2026-00-00"),
        ("l.jsonl", '{"title": "T", "summary": "S.", "date": "2026-13-45"}\n', 1, "2026-13-45"),
    ],
)
def test_ingest_impossible_date_is_dropped_with_a_warning(name, text, line, given) -> None:
    result = read(text, name)
    assert len(result.entries) == 1 and result.entries[0].date is None
    assert result.digest.date is None
    label = '"date"' if name.endswith(".jsonl") else "date"
    assert [str(p) for p in result.problems] == [
        f"{name}:{line}: warning: ignored {label} '{given}': not a calendar date"
    ]


def test_ingest_markdown_front_matter_date_that_is_no_date_is_reported() -> None:
    result = read("---\ndate: yesterday\n---\n## T\nS.\n", "f.md")
    assert result.entries[0].date is None
    assert [str(p) for p in result.problems] == [
        "f.md:2: warning: ignored date 'yesterday': not YYYY-MM-DD"
    ]


@pytest.mark.parametrize(
    "name, text, line, found",
    [
        ("d.txt", "2026-12-01\nFix zero (#0)\nSkim.\n", 2, "'0' in the title"),
        ("t.txt", "o/r · 标签视图\n\nFix zero #00\n\nSkim.\n", 3, "'00' in the title"),
        ("h.md", "## Fix zero (#0)\nSkim.\n", 1, "'0' in the title"),
        ("u.md", "## [Fix zero](https://github.com/o/r/pull/0)\nSkim.\n", 1, "'0' in the URL"),
        ("l.jsonl", '{"title": "Fix zero (#0)", "summary": "Skim."}\n', 1, "'0' in the title"),
    ],
    ids=["daily", "tag-view", "markdown-title", "markdown-url", "jsonl-title"],
)
def test_ingest_pr_number_zero_is_no_number_and_a_warning(name, text, line, found) -> None:
    result = read(text, name)
    assert [e.number for e in result.entries] == [None]
    assert [str(p) for p in result.problems] == [
        f"{name}:{line}: warning: ignored PR number {found}: not a PR number"
    ]


def test_ingest_format_override_reads_a_headerless_file_as_daily() -> None:
    result = read("Title\nSummary.\n", "notes.txt", forced="daily")
    assert [(e.title, e.text) for e in result.entries] == [("Title", "Summary.")]


def test_ingest_unknown_format_is_an_error_naming_the_file() -> None:
    result = read("just some prose.\nmore prose.\n", "notes.txt")
    assert not result.entries
    assert str(result.problems[0]).startswith("notes.txt:1: error: cannot tell the digest format")


def test_ingest_folders_recurse_sorted_and_skip_hidden(tmp_path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "2.txt").write_text("2026-01-01\nT\nS.\n")
    (tmp_path / "1.md").write_text("## T\nS.\n")
    (tmp_path / ".hidden.txt").write_text("2026-01-01\nT\nS.\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    sources = [r.digest.source for r in read_inputs([str(tmp_path)])]
    assert sources == [str(tmp_path / "1.md"), str(tmp_path / "b" / "2.txt")]


def test_ingest_devices_and_sockets_are_refused_unopened_and_pipes_kept(tmp_path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)  # opened only when read, by the build
    good = tmp_path / "good.txt"
    good.write_text("2026-01-01\nT\nS.\n", "utf-8")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "sock"))
    try:
        given = [str(fifo), "/dev/null", str(tmp_path / "sock"), str(good), "-"]
        expanded = expand_inputs(given)
        paths, problems = expanded.paths, expanded.problems
    finally:
        listener.close()
    assert paths == [str(fifo), str(good), "-"]
    assert [str(p) for p in problems] == [
        f"{where}:0: error: not a file or a pipe (a device or a socket); give a stream as '-' "
        "on stdin"
        for where in ("/dev/null", tmp_path / "sock")
    ]


def test_ingest_recursive_glob_does_not_follow_links_to_folders(tmp_path) -> None:
    """`**` with a link to a parent and a link to itself: glob followed them for minutes."""
    (tmp_path / "in" / "sub").mkdir(parents=True)
    digest = tmp_path / "in" / "sub" / "a.txt"
    digest.write_text("2026-01-01\nT\nS.\n", "utf-8")
    (tmp_path / "in" / "sub" / "up").symlink_to("..")
    (tmp_path / "in" / "self").symlink_to(".")
    (tmp_path / "in" / ".hidden.txt").write_text("2026-01-01\nT\nS.\n", "utf-8")
    expanded = expand_inputs([f"{tmp_path}/in/**/*.txt"])
    paths, problems = expanded.paths, expanded.problems
    assert paths == [str(digest)] and problems == []
    assert expand_inputs([f"{tmp_path}/in/.*.txt"]).paths == [str(tmp_path / "in" / ".hidden.txt")]


@pytest.mark.parametrize(
    "line, expected",
    [
        ("KV Offload 热度改为每请求结算一次，修正淘汰顺序", True),
        ("Restore LIFO reuse of freed KV blocks when prefix caching is off", True),
        ("值得精读。重点看 `base_worker.py`。", False),
        ("- 重点关注 `policies/lru.py`", False),
        ("建议精读，尤其是负责 KV Offload、CPU 缓存策略或调度器的工程师：", False),
    ],
)
def test_ingest_title_traits(line: str, expected: bool) -> None:
    assert looks_like_title(line) is expected


def test_ingest_examples_all_read_cleanly() -> None:
    results = list(read_inputs([str(EXAMPLES)]))
    assert {r.digest.format for r in results} == {"daily", "tag-view", "markdown", "jsonl"}
    assert all(not r.problems for r in results)
