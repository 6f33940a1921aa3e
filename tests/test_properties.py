"""Property-based: random digests in every format — random Unicode, random backticks,
markup, references, lone surrogates — never crash a build, every export parses and
conforms to the SHACL shapes, and no entry is lost.

Example counts are kept moderate (CI has two cores); each example is a real CLI build.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyshacl import validate

from checks import assert_nothing_lost, build_reported, html_data, parse_exports, strings_in
from conftest import SCHEMAS, SHARED
from kgraph.ingest.titles import looks_like_title


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# Any character a UTF-8 file can hold, except the line breaks that shape a text digest.
LINE_CHARS = st.characters(codec="utf-8", exclude_characters="\n\r\x00")
EDGE = st.sampled_from("AbZx修中é")  # a title's first and last character
TRICKS = st.sampled_from(
    [
        "`",
        "``",
        "`a.py`",
        "`dir with space/a b#c%d.py`",
        "`../../etc/passwd.py`",
        "`Cache.evict()`",
        "`f(((((`",
        "#12",
        "https://github.com/o/r/pull/3",
        "<script>alert(1)</script>",
        '"',
        "\\",
        "\u202e",
        "\u2028",
        "🚀",
        "]]>",
        "建议精读",
        "skim",
        "「决策」而非「旧做法」",
        "作者 alice",
        "%2e%2e/",
        "&amp;",
    ]
)
PIECE = st.one_of(TRICKS, st.text(LINE_CHARS, max_size=12))


@st.composite
def titles(draw: st.DrawFn) -> str:
    core = draw(st.text(LINE_CHARS, max_size=24))
    title = draw(EDGE) + core + draw(EDGE)
    return title if looks_like_title(title) else draw(EDGE) + draw(EDGE)


@st.composite
def summaries(draw: st.DrawFn) -> str:
    """One line that cannot pass for a title: it ends with a full stop."""
    return "S: " + " ".join(draw(st.lists(PIECE, max_size=8))) + "."


ENTRIES = st.lists(st.tuples(titles(), summaries()), min_size=1, max_size=5)


def _daily(entries: list[tuple[str, str]]) -> str:
    return "2026-01-02\n" + "".join(f"{t}\n{s}\n" for t, s in entries)


def _tag_view(entries: list[tuple[str, str]]) -> str:
    return "o/r · 标签视图\n\n" + "".join(f"{t}\n\n{s}\n\n" for t, s in entries)


def _markdown(entries: list[tuple[str, str]]) -> str:
    return "---\nrepo: o/r\n---\n" + "".join(f"## {t}\n{s}\n\n" for t, s in entries)


WRITERS = {"daily.txt": _daily, "tag.txt": _tag_view, "notes.md": _markdown}

# JSON Lines carries anything JSON can spell: newlines, NUL, lone surrogates.
JSON_TEXT = st.one_of(
    st.text(max_size=20),
    st.lists(st.one_of(PIECE, st.sampled_from(["\ud800", "\udfff", "\x00", "\n"])), max_size=6).map(
        "".join
    ),
)
RECORDS = st.lists(
    st.fixed_dictionaries(
        {"title": JSON_TEXT, "summary": JSON_TEXT},
        optional={"repo": st.sampled_from(["o/r", "bad repo", ""]), "number": st.integers()},
    ),
    min_size=1,
    max_size=5,
)


def _entry_titles(graph: dict) -> list[str]:
    return sorted(n["title"] for n in graph["nodes"] if n["kind"] == "Entry")


@_settings(40)
@given(
    texts=st.lists(st.tuples(st.sampled_from(sorted(WRITERS)), ENTRIES), min_size=1, max_size=3),
    records=RECORDS,
)
def test_properties_random_digests_build_parse_and_lose_nothing(texts, records) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "in").mkdir()
        expected: list[str] = []
        for index, (name, entries) in enumerate(texts):
            (root / "in" / f"{index}-{name}").write_text(WRITERS[name](entries), "utf-8")
            expected += [title for title, _ in entries]
        (root / "in" / "lines.jsonl").write_text(
            "\n".join(json.dumps(r) for r in records) + "\n", "ascii"
        )
        code, stderr, report, graph = build_reported([str(root / "in")], root / "out")
        assert code in (0, 1), stderr
        assert_nothing_lost(report, graph)
        readable = [r for r in records if _clean_title(r["title"])]
        assert report["summary"]["entriesRead"] == len(expected) + len(records)
        assert report["summary"]["entriesInGraph"] == len(expected) + len(readable)
        assert _entry_titles(graph) == sorted(
            [t.strip() for t in expected] + [_clean_title(r["title"]) for r in readable]
        )
        assert parse_exports(root / "out") > 0
        shown = {
            s
            for block in html_data((root / "out" / "graph.html").read_text("utf-8"))
            for s in strings_in(block)
        }
        assert all(any(t.strip() in s for s in shown) for t, _ in texts[0][1])


def _clean_title(title: str) -> str:
    """What kgraph keeps of a JSON title: lone surrogates as U+FFFD (a high one right before
    a low one is one character once through JSON), NUL removed, stripped."""
    title = json.loads(json.dumps(title))
    fixed = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in title)
    return fixed.replace("\x00", "").strip()


@_settings(8)
@given(
    texts=st.lists(st.tuples(st.sampled_from(sorted(WRITERS)), ENTRIES), max_size=2),
    records=RECORDS,
)
def test_properties_random_digests_conform_to_the_shapes(texts, records) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "in").mkdir()
        for index, (name, entries) in enumerate(texts):
            (root / "in" / f"{index}-{name}").write_text(WRITERS[name](entries), "utf-8")
        (root / "in" / "lines.jsonl").write_text(
            "\n".join(json.dumps(r) for r in records) + "\n", "ascii"
        )
        code, stderr, _, _ = build_reported([str(root / "in")], root / "out")
        assert code in (0, 1), stderr
        data = rdflib.Graph().parse(root / "out" / "graph.ttl")
        for shapes in (SCHEMAS / "shapes.ttl", SHARED / "contract-shapes.ttl"):
            ok, _, report = validate(
                data, shacl_graph=rdflib.Graph().parse(shapes), inference="none"
            )
            assert ok, report


@_settings(30)
@given(
    content=st.one_of(
        st.binary(max_size=400),
        st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.lists(st.one_of(PIECE, st.sampled_from(["\n", "\r\n", "\r", "\n\n", "## ", "- "])))
        .map("".join)
        .map(lambda t: t.encode("utf-8")),
    ),
    name=st.sampled_from(["x.txt", "x.md", "x.jsonl", "x.ndjson", "x.markdown"]),
    header=st.sampled_from(["", "2026-01-02\n", "o/r · 标签视图\n\n", "---\n", "{"]),
)
def test_properties_arbitrary_bytes_never_crash_a_build(content, name, header) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / name).write_bytes(header.encode("utf-8") + content)
        code, stderr, report, graph = build_reported([str(root / name)], root / "out")
        assert code in (0, 1), stderr
        assert "Traceback" not in stderr
        assert all(":" in line for line in stderr.splitlines())
        assert_nothing_lost(report, graph)
        assert parse_exports(root / "out") >= 0
