"""Text that looks like markup, code or IRIs: every export still parses in independent
parsers (pyoxigraph, rapper), every IRI is valid, and the HTML shows all of it as text."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pyoxigraph as ox
import pytest

from checks import RDF_EXPORTS, assert_nothing_lost, build_reported, html_data, strings_in
from kgraph.graph import node_id
from kgraph.iri import escape_iri, is_absolute_iri, safe_iri
from kgraph.vocab import NAMESPACES

HOSTILE_TITLES = [
    "Fix <script>window.__pwned = 1</script> in the cache",
    'Quote " and > and < and & and \\ backslash \\n not a newline',
    'End the data </script><img src=x onerror="window.__pwned=1"> here',
    "Emoji 🚀🔥 and a ZWJ family 👨‍👩‍👧 and 修复 中文",
    "RTL \u202eevil\u202c mark \u200f and \u200e marks",
    "Line separator \u2028 and paragraph \u2029 inside",
    "CDATA ]]> and comment <!-- --> and entity &amp;lt; end",
    "Control \x1b[31m red \x07 bell",
]
HOSTILE_PATHS = [
    "dir with space/a b#c%d.py",
    "../../etc/passwd.py",
    "%2e%2e/encoded.py",
    "ünï/cödé.py",
    "a/./b/../c.py",
    "x/@scope/+plus~tilde.py",
]


@pytest.fixture(scope="module")
def hostile_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict]:
    root = tmp_path_factory.mktemp("hostile")
    folder = root / "in # 100% ..dir"
    folder.mkdir()
    lines = [
        {
            "title": title,
            "summary": f'Touches `{path}` and #12; see <b>bold</b> & "quotes".',
            "repo": "c-ünï/rëpo.x",
            "url": f'https://github.com/c-ünï/rëpo.x/pull/{i + 1} <x>"{{}}|^`',
        }
        for i, (title, path) in enumerate(zip(HOSTILE_TITLES, HOSTILE_PATHS * 2, strict=False))
    ]
    lines.append({"title": "Multi\nline\ntitle", "summary": "A summary\nover lines."})
    (folder / "hostile digest #1 %.jsonl").write_text(
        "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", "utf-8"
    )
    (folder / "daily <x>.txt").write_text(
        "2026-01-01\n"
        + "".join(
            f"{t}\nMentions `{p}` here.\n"
            for t, p in zip(HOSTILE_TITLES, HOSTILE_PATHS * 2, strict=False)
        )
        + "\n",
        "utf-8",
    )
    code, stderr, report, graph = build_reported([str(folder)], root / "out")
    assert code == 0, stderr
    return root / "out", report, graph


def test_export_hostile_text_parses_identically_in_turtle_ntriples_and_jsonld(
    hostile_out,
) -> None:
    out, report, graph = hostile_out
    sets = {
        name: {str(t) for t in ox.parse(path=str(out / name), format=fmt)}
        for name, fmt in RDF_EXPORTS.items()
    }
    assert sets["graph.ttl"] == sets["graph.nt"] == sets["graph.jsonld"]
    titles = {
        t.object.value
        for t in ox.parse(path=str(out / "graph.ttl"), format=ox.RdfFormat.TURTLE)
        if t.predicate.value == "http://purl.org/dc/terms/title"
    }
    assert set(HOSTILE_TITLES) | {"Multi\nline\ntitle"} <= titles
    assert_nothing_lost(report, graph)
    assert report["summary"]["entriesInGraph"] == 2 * len(HOSTILE_TITLES) + 1


def test_export_every_iri_is_valid_and_percent_encoded(hostile_out) -> None:
    out, _, graph = hostile_out
    iris = set()
    for triple in ox.parse(path=str(out / "graph.nt"), format=ox.RdfFormat.N_TRIPLES):
        iris |= {t.value for t in (triple.subject, triple.object) if isinstance(t, ox.NamedNode)}
    iris |= {node["iri"] for node in graph["nodes"]}
    for iri in iris:
        assert is_absolute_iri(iri), iri
        assert not any(c in iri for c in ' <>"{}|^`\\\n'), iri
        assert "/../" not in iri and "/./" not in iri, iri
    paths = {n["path"] for n in graph["nodes"] if n["kind"] == "SourceFile"}
    assert set(HOSTILE_PATHS) <= paths
    urls = {n["url"] for n in graph["nodes"] if n.get("url")}
    assert 'https://github.com/c-ünï/rëpo.x/pull/1 <x>"{}|^`' in urls  # verbatim in JSON
    rdf_urls = {i for i in iris if i.startswith("https://github.com/")}
    assert "https://github.com/c-ünï/rëpo.x/pull/1%20%3Cx%3E%22%7B%7D%7C%5E%60" in rdf_urls


def test_export_hostile_output_parses_in_rapper(hostile_out) -> None:
    out, _, _ = hostile_out
    assert shutil.which("rapper"), "install raptor2-utils (bash .ci/run does) for this check"
    expected = (out / "graph.nt").read_text("utf-8").count("\n")  # U+2028 is no line end
    for name, syntax in (("graph.ttl", "turtle"), ("graph.nt", "ntriples")):
        run = subprocess.run(
            ["rapper", "-i", syntax, "-c", str(out / name)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        assert f"returned {expected} triples" in run.stderr


def test_export_html_embeds_hostile_text_as_data_never_as_markup(hostile_out) -> None:
    out, _, _ = hostile_out
    page = (out / "graph.html").read_text("utf-8")
    shown = set()
    for block in html_data(page):
        shown |= set(strings_in(block))
    for title in HOSTILE_TITLES:
        assert any(title in text for text in shown), title
    for markup in (
        "<script>window.__pwned",
        "</script><img src=x",
        '<img src=x onerror="window.__pwned=1">',
        "<!-- -->",
        "<b>bold</b>",
    ):
        assert markup not in page, markup


@pytest.mark.browser
def test_export_html_in_chromium_runs_no_injected_script(hostile_out) -> None:
    from playwright.sync_api import sync_playwright

    out, _, _ = hostile_out
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto((out / "graph.html").as_uri())
        page.wait_for_load_state("load")
        injected = page.evaluate(
            "() => ({pwned: window.__pwned === 1,"
            " handlers: document.querySelectorAll('[onerror]').length,"
            " images: document.querySelectorAll('img[src=x]').length,"
            " bold: document.querySelectorAll('b').length})"
        )
        browser.close()
    assert injected == {"pwned": False, "handlers": 0, "images": 0, "bold": 0}
    assert dialogs == []


@pytest.mark.parametrize(
    "segments",
    [
        ("symbol", "o", "r", "a b<c>\"d'{e}|f^g`h\\i"),
        ("file", "o", "r", "..", ".", "%", "#", "?", ""),
        ("symbol", "_external", "\ud800\udfff\x00\x7f\u2028"),
        ("topic", "中文 主题", "🚀"),
    ],
)
def test_graph_node_ids_are_valid_iri_paths_whatever_the_text(segments) -> None:
    iri = "https://w3id.org/kgraph/id/" + node_id(*segments)
    assert is_absolute_iri(iri)
    assert ox.NamedNode(iri).value == iri
    assert iri.count("/") == 5 + len(segments) - 1


def test_iri_escape_keeps_valid_iris_and_repairs_the_rest() -> None:
    assert escape_iri("https://github.com/o/r/pull/1") == "https://github.com/o/r/pull/1"
    assert escape_iri("http://x/ü?q=1") == "http://x/ü?q=1"
    assert safe_iri("https://x/a b>") == "https://x/a%20b%3E"
    assert safe_iri("https://x/%zz\ud800") == "https://x/%25zz%ED%A0%80"
    assert safe_iri("not a url") is None and safe_iri("https://[bad") is None


@pytest.mark.parametrize("base", ["https://example.org/kg#", "https://example.org/a/b/"])
def test_export_jsonld_holds_the_same_triples_whatever_the_base(tmp_path, base) -> None:
    digest = tmp_path / "d.txt"
    digest.write_text("2026-01-01\nFix <x> cache\nTouches `a b.py` and #1.\n", "utf-8")
    code, stderr, _, _ = build_reported([str(digest)], tmp_path / "out", "--base", base)
    assert code == 0, stderr
    sets = {
        name: {str(t) for t in ox.parse(path=str(tmp_path / "out" / name), format=fmt)}
        for name, fmt in RDF_EXPORTS.items()
    }
    assert sets["graph.ttl"] == sets["graph.jsonld"] == sets["graph.nt"]
    assert any(base + "pr/" in triple for triple in sets["graph.jsonld"])


def _pyoxigraph_turtle(ntriples: Path) -> bytes:
    converted = io.BytesIO()
    parsed = ox.parse(path=str(ntriples), format=ox.RdfFormat.N_TRIPLES)
    ox.serialize(parsed, converted, format=ox.RdfFormat.TURTLE, prefixes=NAMESPACES)
    return converted.getvalue()


def _without_prefixes(turtle: bytes) -> bytes:
    return b"".join(line for line in turtle.splitlines(True) if not line.startswith(b"@prefix"))


def test_turtle_is_what_pyoxigraph_writes_from_the_ntriples(hostile_out) -> None:
    """kgraph writes Turtle itself, subject by subject; pyoxigraph's serializer, fed the
    N-Triples, is the reference for every escape, literal short form and prefixed name."""
    out, _, _ = hostile_out
    ours = (out / "graph.ttl").read_bytes()
    expected = "".join(f"@prefix {p}: <{iri}> .\n" for p, iri in NAMESPACES.items())
    assert ours.startswith(expected.encode())
    assert _without_prefixes(ours) == _without_prefixes(_pyoxigraph_turtle(out / "graph.nt"))


@pytest.mark.parametrize(
    "base", ["https://w3id.org/kgraph/ns#", "http://purl.org/dc/terms/", "https://w3id.org/"]
)
def test_turtle_prefixes_node_iris_where_a_base_inside_a_namespace_lets_them(
    hostile_out, tmp_path, base
) -> None:
    """A --base inside (or above) a vocabulary namespace makes node IRIs prefixed names,
    escaped (`kg:pr\\/1`) or, where no local name can hold them, written whole."""
    out, _, _ = hostile_out
    folder = next(out.parent.glob("in *"))
    code, stderr, _, _ = build_reported([str(folder)], tmp_path / "out", "--base", base)
    assert code == 0, stderr
    ours = (tmp_path / "out" / "graph.ttl").read_bytes()
    assert _without_prefixes(ours) == _without_prefixes(
        _pyoxigraph_turtle(tmp_path / "out" / "graph.nt")
    )
    if base != "https://w3id.org/":
        assert b"\\/" in ours  # some node IRIs did become escaped prefixed names
