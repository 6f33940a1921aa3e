"""Answers in the W3C SPARQL results formats, read back by independent parsers, and the table."""

from __future__ import annotations

import csv
import io
import json

import pyoxigraph as ox
import pytest
from rdflib.query import Result

from kgraph.results import Boolean, Solutions, from_pyoxigraph, render

DATA = """
@prefix kg: <https://w3id.org/kgraph/ns#> .
@prefix id: <https://w3id.org/kgraph/id/> .
id:a kg:text "comma, \\"quote\\"\\nand a newline\\tand a tab" ; kg:line 7 ; kg:kind kg:Entry .
id:b kg:text "懒失效"@zh ; kg:line 12 ; kg:kind [ kg:line 1 ] .
<http://example.org/other> kg:text "plain" .
"""
QUERY = """PREFIX kg: <https://w3id.org/kgraph/ns#>
SELECT ?s ?text ?line ?kind WHERE {
  ?s kg:text ?text . OPTIONAL { ?s kg:line ?line } OPTIONAL { ?s kg:kind ?kind }
} ORDER BY ?s"""


@pytest.fixture(scope="module")
def answer() -> Solutions:
    store = ox.Store()
    store.load(DATA.encode("utf-8"), format=ox.RdfFormat.TURTLE)
    result = from_pyoxigraph(store.query(QUERY))
    assert isinstance(result, Solutions) and len(result.rows) == 3
    return result


def test_results_json_reads_back_in_pyoxigraph_and_rdflib(answer) -> None:
    text = render(answer, "json")
    back = list(ox.parse_query_results(text.encode(), format=ox.QueryResultsFormat.JSON))
    assert [tuple(s[v] for v in answer.variables) for s in back] == list(answer.rows)
    theirs = Result.parse(io.StringIO(text), format="json")
    assert [str(v) for v in theirs.vars] == list(answer.variables)
    assert len(list(theirs)) == 3
    document = json.loads(text)
    other = document["results"]["bindings"][0]  # http://example.org/other sorts first
    assert "line" not in other and "kind" not in other  # unbound: left out
    first = document["results"]["bindings"][1]
    assert first["text"] == {"type": "literal", "value": 'comma, "quote"\nand a newline\tand a tab'}
    assert first["kind"]["type"] == "uri"
    assert first["line"] == {
        "type": "literal",
        "value": "7",
        "datatype": "http://www.w3.org/2001/XMLSchema#integer",
    }
    assert document["results"]["bindings"][2]["text"] == {
        "type": "literal",
        "value": "懒失效",
        "xml:lang": "zh",
    }
    assert document["results"]["bindings"][2]["kind"]["type"] == "bnode"


def test_results_tsv_reads_back_in_pyoxigraph_with_types_kept(answer) -> None:
    text = render(answer, "tsv")
    assert text.splitlines()[0] == "?s\t?text\t?line\t?kind"
    assert len(text.splitlines()) == 4  # the newline and tab inside a literal are escaped
    back = list(ox.parse_query_results(text.encode(), format=ox.QueryResultsFormat.TSV))
    rows = [tuple(s[v] for v in answer.variables) for s in back]
    # Blank node labels may be renamed by a reader; everything else must be identical.
    assert [r[:3] for r in rows] == [r[:3] for r in answer.rows]
    assert isinstance(rows[2][3], ox.BlankNode)


def test_results_csv_is_values_only_with_crlf_rows(answer) -> None:
    text = render(answer, "csv")
    assert text.count("\r\n") == 4  # header and 3 rows; the quoted newline stays "\n"
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["s", "text", "line", "kind"]
    assert rows[1] == ["http://example.org/other", "plain", "", ""]
    assert rows[2] == [
        "https://w3id.org/kgraph/id/a",
        'comma, "quote"\nand a newline\tand a tab',
        "7",
        "https://w3id.org/kgraph/ns#Entry",
    ]
    assert rows[3][1] == "懒失效" and rows[3][3].startswith("_:")
    theirs = Result.parse(io.StringIO(text), format="csv")
    assert len(list(theirs)) == 3


def test_results_table_aligns_wide_characters_and_cuts_long_values() -> None:
    long = "词" * 60
    store = ox.Store()
    store.load(
        f'<http://x/a> <http://x/p> "{long}" .\n<http://x/b> <http://x/p> "ab\\ncd" .\n'.encode(),
        format=ox.RdfFormat.N_TRIPLES,
    )
    answer = from_pyoxigraph(store.query("SELECT ?v ?s WHERE { ?s <http://x/p> ?v } ORDER BY ?s"))
    lines = render(answer, "table").splitlines()
    assert lines[-1] == "(2 rows)"
    first, second = lines[2], lines[3]
    assert first.startswith("词" * 39 + "…  ")  # at most 80 columns: 39 wide ones and "…"
    assert second.startswith("ab cd ")  # one row, one line
    # The second column starts at the same display column on every row.
    assert first.endswith("http://x/a") and second.endswith("http://x/b")
    assert len(second) - len("http://x/b") == 39 * 2 + 1 + 2


def test_results_table_shortens_kgraph_iris(answer) -> None:
    table = render(answer, "table")
    assert "\na " in table and "kg:Entry" in table and "http://example.org/other" in table


def test_results_boolean_in_every_select_format() -> None:
    assert render(Boolean(True), "table") == "true\n"
    assert render(Boolean(False), "csv") == "false\r\n"
    assert json.loads(render(Boolean(False), "json")) == {"head": {}, "boolean": False}
