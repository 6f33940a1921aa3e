"""`kgraph query`: named queries and their parameters, user queries, forms, and errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from click.testing import CliRunner

from conftest import DATA
from kgraph import query
from kgraph.cli import cli
from test_query_named import EXPECTED

ECHO = """# Echo a value back: shows that a parameter arrives as exactly one literal.
# @param v string  anything at all
SELECT ?echo WHERE {
  VALUES (?v) { (UNDEF) }
  BIND(?v AS ?echo)
}
"""
HOSTILE = [
    'q"} ; DROP ALL #',
    "x\\u0022y",
    "back\\slash",
    "a\ttab and\ntwo lines",
    "😀 中文 `evict()`",
    "' } UNION { ?s ?p ?o } #",
    "",
]


def kgraph(*args: str | Path) -> tuple[int, str, str]:
    """`kgraph query ARGS` as a user runs it; stdout exactly as written (CRLF kept)."""
    result = CliRunner().invoke(cli, ["query", *map(str, args)], catch_exceptions=False)
    return result.exit_code, result.stdout_bytes.decode("utf-8"), result.stderr


def test_query_list_names_every_query_its_summary_and_parameters() -> None:
    code, out, _ = kgraph("--list")
    assert code == 0
    for named in query.named_queries().values():
        line = next(line for line in out.splitlines() if line.startswith(named.name + " "))
        assert named.summary[:30] in line
        for param in named.params:
            assert f"{param.name} ({param.type}): {param.help}" in out
    assert "symbol=… | file=…" in out


@pytest.mark.parametrize("value", HOSTILE)
def test_query_parameters_arrive_as_one_literal_whatever_they_hold(tmp_path, value) -> None:
    (tmp_path / "echo.rq").write_text(ECHO, "utf-8")
    code, out, err = kgraph(
        DATA.parent / "data",
        tmp_path / "echo.rq",
        "-p",
        f"v={value}",
        "--format",
        "json",
        "--no-cache",
    )
    assert code == 2 and "no graph to query" in err  # tests/data has no graph.* file
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "graph.nt").write_text("", "utf-8")
    code, out, err = kgraph(out_dir, tmp_path / "echo.rq", "-p", f"v={value}", "-f", "json")
    assert code == 0, err
    (binding,) = json.loads(out)["results"]["bindings"]
    assert binding["echo"] == {"type": "literal", "value": value}


def test_query_hostile_parameter_matches_nothing_and_breaks_nothing(fixture_out) -> None:
    for value in HOSTILE:
        code, out, err = kgraph(
            fixture_out, "-n", "who-touches", "-p", f"symbol={value}", "-f", "csv"
        )
        assert (code, out, err) == (0, "code,title,number,digest,line\r\n", "")


def test_query_bind_leaves_absent_parameters_undefined() -> None:
    text = query.bind(query.named_query("who-touches"), {"file": "lru.py"})
    # Every branch (named and changed, symbol and file) gets the row.
    assert text.count('VALUES (?symbol ?file) { (UNDEF "lru.py") }') == 4
    assert "(UNDEF UNDEF)" not in text
    text = query.bind(query.named_query("decisions-since"), {"date": "2026-09-01"})
    assert 'VALUES (?date) { ("2026-09-01"^^<http://www.w3.org/2001/XMLSchema#date>) }' in text
    text = query.bind(query.named_query("pr"), {"number": "#51787"})
    assert '"51787"^^<http://www.w3.org/2001/XMLSchema#integer>' in text


def test_query_bind_fills_the_parameter_row_not_its_quotes_in_strings_or_comments(
    fixture_out, tmp_path
) -> None:
    """Parameters are never pasted into the query's text: a row quoted in a string or a
    comment stays as written, and the query still runs."""
    row = "VALUES (?n) { (UNDEF) }"
    path = tmp_path / "by-number.rq"
    path.write_text(
        "# @param n integer  the number\n"
        f"# an example row: {row}\n"
        "SELECT ?title WHERE {\n"
        "  ?pr <https://w3id.org/kgraph/ns#number> ?n ; <http://purl.org/dc/terms/title> ?title .\n"
        f"  FILTER(?title != \"{row}\" && ?title != '''{row}''')\n"
        f"  {row}\n"
        "}\n",
        "utf-8",
    )
    text = query.bind(query.query_file(path), {"n": "51787"})
    assert text.count(row) == 3  # the comment's, and the two strings'
    assert text.count('VALUES (?n) { ("51787"^^') == 1
    code, out, _ = kgraph(fixture_out, path, "-p", "n=51787", "-f", "csv")
    assert code == 0 and out.startswith("title")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-n", "who-touch"], "no named query 'who-touch' (did you mean who-touches?); available:"),
        (["-n", "who-touches"], "needs one of the parameters symbol, file: --param symbol=VALUE"),
        (["-n", "topic"], "needs parameter 'name': --param name=VALUE"),
        (["-n", "who-touches", "-p", "file=a", "-p", "symbol=b"], "takes only one of symbol, file"),
        (["-n", "topic", "-p", "nmae=x"], "has no parameter 'nmae'; it takes: name"),
        (["-n", "topic", "-p", "name"], "--param 'name': expected NAME=VALUE"),
        (["-n", "topic", "-p", "name=a", "-p", "name=b"], "--param name is given twice"),
        (["-n", "hotspots", "-p", "x=1"], "declares no parameters; drop --param"),
        (["-n", "decisions-since", "-p", "date=16/09/2026"], "is not a date (YYYY-MM-DD)"),
        (["-n", "pr", "-p", "number=fifty"], "parameter number: 'fifty' is not a whole number"),
        (["-n", "hotspots", "-f", "turtle"], "--format turtle is for CONSTRUCT queries"),
    ],
)
def test_query_usage_errors_exit_2_and_say_what_to_do(fixture_out, args, message) -> None:
    code, out, err = kgraph(fixture_out, *args)
    assert code == 2 and out == ""
    assert message in err


def test_query_unknown_named_query_lists_every_available_one(fixture_out) -> None:
    _, _, err = kgraph(fixture_out, "-n", "nope")
    assert all(name in err for name in query.named_queries())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "expected OUTPUT_DIR QUERY.rq (got 0)"),
        (["-n", "hotspots"], "expected OUTPUT_DIR (got 0)"),
        (["a", "b", "-n", "hotspots"], "expected OUTPUT_DIR (got 2)"),
        (["nowhere", "-n", "hotspots"], "nowhere: no such folder (run `kgraph build"),
        (["--endpoint", "http://127.0.0.1:9/q"], "expected QUERY.rq (got 0)"),
        (["--show"], "expected OUTPUT_DIR QUERY.rq (got 0)"),
    ],
)
def test_query_wrong_arguments_exit_2(args, message) -> None:
    code, _, err = kgraph(*args)
    assert code == 2 and message in err


@pytest.mark.parametrize(
    ("body", "line", "column", "detail"),
    [
        ('  ?pr kg:title "unterminated .\n}\n', 3, 31, "expected one of"),
        ("  ?pr kg:title ?t .\n  FILTER(?t > 1\n}\n", 5, 2, "the query ends too early;"),
        ("  ?pr kg:title ?t .\n", 3, 20, "the query ends too early; expected one of"),
    ],
)
def test_query_syntax_error_points_to_line_and_column(
    fixture_out, tmp_path, body, line, column, detail
) -> None:
    bad = tmp_path / "bad.rq"
    bad.write_text("PREFIX kg: <https://w3id.org/kgraph/ns#>\nSELECT ?pr WHERE {\n" + body)
    code, out, err = kgraph(fixture_out, bad)
    assert code == 2 and out == ""
    first, source_line, caret = err.splitlines()[:3]
    assert first.startswith(f"kgraph: {bad}:{line}:{column}: syntax error: {detail}")
    assert "[" not in first  # pyoxigraph's character classes are left out
    assert source_line == "  " + [*bad.read_text().splitlines(), ""][line - 1]
    assert caret == "  " + " " * (column - 1) + "^"


def test_query_syntax_error_caret_is_under_the_column_after_wide_characters_and_tabs(
    fixture_out, tmp_path
) -> None:
    bad = tmp_path / "wide.rq"
    bad.write_text('SELECT ?x WHERE {\n\t?x ?p "中文中文" ; ) }\n', "utf-8")
    code, _, err = kgraph(fixture_out, bad)
    first, source_line, caret = err.splitlines()[:3]
    column = int(first.split(":")[3])
    before = source_line[2 : 2 + column - 1]
    assert code == 2 and before.startswith('\t?x ?p "中文中文"')
    # On a terminal the caret sits under that column: the tab is kept, and each of the four
    # CJK characters before it takes two columns.
    assert caret == "  \t" + " " * (len(before) - 1 + 4) + "^"


def test_query_semantic_error_is_reported_in_words(fixture_out, tmp_path) -> None:
    bad = tmp_path / "group.rq"
    bad.write_text("SELECT (COUNT(?x) AS ?n) ?y WHERE { ?x ?p ?y }\n")
    code, _, err = kgraph(fixture_out, bad)
    assert code == 2
    assert f"{bad}:1:" in err and "The SELECT contains a variable that is unbound" in err


def test_query_undeclared_prefix_is_named(fixture_out, tmp_path) -> None:
    bad = tmp_path / "prefix.rq"
    bad.write_text("SELECT * WHERE {\n  ?a foo:b ?c\n}\n", "utf-8")
    code, _, err = kgraph(fixture_out, bad)
    assert code == 2
    assert f"{bad}:2:" in err and "undeclared prefix 'foo:'" in err


def test_query_unreadable_graph_exits_1_with_its_line(tmp_path) -> None:
    (tmp_path / "graph.ttl").write_text("<http://x/a> <http://x/b> <http://x/c> .\n<oops\n")
    code, _, err = kgraph(tmp_path, "-n", "hotspots")
    assert code == 1 and f"{tmp_path / 'graph.ttl'}:2: not valid RDF" in err


def test_query_ask_and_construct(fixture_out, tmp_path) -> None:
    ask = tmp_path / "ask.rq"
    ask.write_text("PREFIX kg: <https://w3id.org/kgraph/ns#>\nASK { ?pr kg:number 101 }\n")
    assert kgraph(fixture_out, ask)[1] == "true\n"
    assert json.loads(kgraph(fixture_out, ask, "-f", "json")[1]) == {"head": {}, "boolean": True}
    ask.write_text("PREFIX kg: <https://w3id.org/kgraph/ns#>\nASK { ?pr kg:number 999 }\n")
    assert kgraph(fixture_out, ask)[1] == "false\n"

    construct = tmp_path / "construct.rq"
    construct.write_text(
        "PREFIX kg: <https://w3id.org/kgraph/ns#>\n"
        "CONSTRUCT { ?b kg:sharesCodeWith ?a } WHERE { ?a kg:sharesCodeWith ?b }\n"
    )
    expected = rdflib.Graph().parse(DATA / "named-queries.ttl")
    pairs = set(
        expected.subject_objects(rdflib.URIRef("https://w3id.org/kgraph/ns#sharesCodeWith"))
    )
    assert len(pairs) == 6
    for fmt, parser in (("table", "turtle"), ("turtle", "turtle"), ("ntriples", "nt")):
        code, out, err = kgraph(fixture_out, construct, "-f", fmt)
        assert code == 0, err
        got = rdflib.Graph().parse(data=out, format=parser)
        assert {(o, s) for s, _, o in got} == pairs
    code, _, err = kgraph(fixture_out, construct, "-f", "csv")
    assert code == 2 and "use --format turtle or ntriples" in err


@pytest.mark.parametrize(("name", "params"), [(n, p) for n, p, _ in EXPECTED])
def test_query_show_prints_standard_sparql_another_engine_answers_alike(
    fixture_out, name, params
) -> None:
    """`--show` gives the bound text; rdflib's own engine must find the same rows in it."""
    args = [a for k, v in params.items() for a in ("-p", f"{k}={v}")]
    code, text, _ = kgraph("--show", "-n", name, *args)
    assert code == 0 and text.startswith("# ")
    graph = rdflib.Graph().parse(DATA / "named-queries.ttl")
    theirs = sorted(tuple(None if t is None else str(t) for t in row) for row in graph.query(text))
    code, out, _ = kgraph(fixture_out, "-n", name, *args, "-f", "json")
    data = json.loads(out)
    ours = sorted(
        tuple(b.get(v, {}).get("value") for v in data["head"]["vars"])
        for b in data["results"]["bindings"]
    )
    assert ours == theirs


def test_query_show_needs_no_output_folder(fixture_out, tmp_path) -> None:
    rq = tmp_path / "echo.rq"
    rq.write_text(ECHO, "utf-8")
    for args in ([rq], [fixture_out, rq]):
        code, out, _ = kgraph("--show", *args, "-p", "v=x")
        assert code == 0 and 'VALUES (?v) { ("x") }' in out
    shown = kgraph("--show", fixture_out, "-n", "decisions-since", "-p", "date=2026-01-02")[1]
    assert 'VALUES (?date) { ("2026-01-02"' in shown


def test_query_user_file_may_declare_parameters_like_a_named_query(fixture_out, tmp_path) -> None:
    rq = tmp_path / "by-number.rq"
    rq.write_text(
        "# PR titles by number.\n# @param n integer  the number\n"
        "PREFIX kg: <https://w3id.org/kgraph/ns#>\nPREFIX dcterms: <http://purl.org/dc/terms/>\n"
        "SELECT ?title WHERE {\n  VALUES (?n) { (UNDEF) }\n"
        "  ?pr kg:number ?n ; dcterms:title ?title .\n}\n"
    )
    code, out, _ = kgraph(fixture_out, rq, "-p", "n=104", "-f", "csv")
    assert (code, out) == (0, "title\r\nBump the CI image\r\n")
    assert kgraph(fixture_out, rq)[0] == 2  # n is required


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("# @param v text  oops\n", ":1: expected '@param NAME TYPE description'"),
        ("# @params v string\n", ":1: unknown header tag @params"),
        ("# @param v string  x\n# @one-of v w\n", "@one-of names undeclared parameters: w"),
        ("# @param w string  x\n", "the parameter row binds ?v but the header declares ?w"),
    ],
)
def test_query_malformed_header_is_a_usage_error(fixture_out, tmp_path, header, message) -> None:
    rq = tmp_path / "q.rq"
    rq.write_text(header + "SELECT * WHERE {\n  VALUES (?v) { (UNDEF) }\n}\n")
    code, _, err = kgraph(fixture_out, rq)
    assert code == 2 and message in err


def test_query_parameter_row_is_required_when_parameters_are_declared() -> None:
    with pytest.raises(query.QueryError, match="needs a parameter row"):
        query.parse("# @param v string  x\nSELECT * WHERE { ?s ?p ?v }\n", "q", "q.rq")


def test_query_named_queries_load_from_the_installed_package() -> None:
    shipped = sorted(p.stem for p in (Path(__file__).parents[1] / "queries").glob("*.rq"))
    assert sorted(query.named_queries()) == shipped
    sample = {"string": "x", "integer": "1", "date": "2026-01-01"}
    for named in query.named_queries().values():
        given = [p for p in named.params if p.name not in named.one_of[1:]]
        ox.Store().query(query.bind(named, {p.name: sample[p.type] for p in given}))


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * WHERE " + "{" * 5000 + "}" * 5000,
        "SELECT * WHERE {" * 20000 + "}" * 20000,
        "SELECT * WHERE { FILTER(" + "(" * 5000 + "1" + ")" * 5000 + ") }",
    ],
    ids=["5k-groups", "20k-subqueries", "5k-parentheses"],
)
@pytest.mark.parametrize("where", ["local", "no-cache", "endpoint"])
def test_query_nested_too_deeply_is_a_usage_error_not_a_segfault(
    fixture_out, tmp_path, text, where
) -> None:
    """pyoxigraph's parser recurses: 5,000 nested groups overflowed its stack and the
    process died of SIGSEGV (exit 139, no message), whether the graph was local or not.
    The nesting is checked first (in a child process: the crash would take pytest down)."""
    deep = tmp_path / "deep.rq"
    deep.write_text(text, "utf-8")
    target = {
        "local": [str(fixture_out)],
        "no-cache": [str(fixture_out), "--no-cache"],
        "endpoint": ["--endpoint", "http://127.0.0.1:9/sparql"],  # nothing is sent
    }[where]
    run = subprocess.run(
        [sys.executable, "-m", "kgraph", "query", *target, str(deep)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, run.stderr
    assert f"kgraph: {deep}:1:" in run.stderr and "kgraph takes at most 64" in run.stderr
    assert "Traceback" not in run.stderr


def test_query_nesting_counts_no_bracket_in_strings_comments_or_iris(fixture_out, tmp_path) -> None:
    ok = tmp_path / "ok.rq"
    ok.write_text(
        "# " + "(" * 100 + "\nSELECT ?x WHERE {\n"
        + '  BIND("' + "{" * 100 + '" AS ?x)\n'
        + "  BIND('''" + "[" * 100 + "''' AS ?y)\n"
        + "  OPTIONAL { ?x <http://x/a#(((((((> ?z }\n"
        + "}\n"
        + "ORDER BY " + "(" * 60 + "?x" + ")" * 60 + "\n",
        "utf-8",
    )  # fmt: skip
    code, _, err = kgraph(fixture_out, ok)
    assert code == 0, err
    assert query.check_syntax("SELECT * WHERE " + "{" * 64 + "}" * 64, "q") == "SELECT"
    with pytest.raises(query.QueryError, match=r"^q:2:65: the query nests 65 levels"):
        query.check_syntax("SELECT * WHERE\n{" + "{" * 64 + "}" * 65, "q")
