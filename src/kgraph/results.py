"""Query answers as plain values, and the formats they are printed in.

Local answers (pyoxigraph) and remote ones (an endpoint's JSON) become the same values:
`Solutions` (SELECT), `Boolean` (ASK) or `Triples` (CONSTRUCT, DESCRIBE), so one set of
writers serves both. `csv`, `tsv` and `json` are the W3C SPARQL 1.1 results formats, for
pipelines; `table` is for people: aligned columns (CJK characters count as two), IRIs
shortened with the vocabulary's prefixes and the instance base, long values cut.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import pyoxigraph as ox

from kgraph.errors import UsageError
from kgraph.terminal import printable
from kgraph.vocab import DEFAULT_BASE, NAMESPACES

Term = ox.NamedNode | ox.BlankNode | ox.Literal
XSD_STRING = NAMESPACES["xsd"] + "string"
TABLE_WIDTH = 80  # display columns a table cell may take before it is cut

SELECT_FORMATS = ("table", "csv", "tsv", "json")
GRAPH_FORMATS = ("table", "turtle", "ntriples")
FORMATS = ("table", "csv", "tsv", "json", "turtle", "ntriples")


class FormatError(UsageError):
    """An output format that does not fit the query's form (CSV for a CONSTRUCT)."""


@dataclass(frozen=True, slots=True)
class Solutions:
    variables: tuple[str, ...]
    rows: tuple[tuple[Term | None, ...], ...]


@dataclass(frozen=True, slots=True)
class Boolean:
    value: bool


@dataclass(frozen=True, slots=True)
class Triples:
    triples: tuple[ox.Triple, ...]


Answer = Solutions | Boolean | Triples


def from_pyoxigraph(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples) -> Answer:
    if isinstance(result, ox.QueryBoolean):
        return Boolean(bool(result))
    if isinstance(result, ox.QueryTriples):
        return Triples(tuple(sorted(result, key=str)))
    names = tuple(v.value for v in result.variables)
    rows = tuple(tuple(solution[name] for name in names) for solution in result)
    return Solutions(names, rows)


def render(answer: Answer, output_format: str) -> str:
    if isinstance(answer, Triples):
        if output_format not in GRAPH_FORMATS:
            raise FormatError(
                f"a CONSTRUCT or DESCRIBE query answers RDF: use --format "
                f"{' or '.join(GRAPH_FORMATS[1:])} (or table, which prints Turtle)"
            )
        return _graph(answer, output_format)
    if output_format not in SELECT_FORMATS:
        raise FormatError(
            f"--format {output_format} is for CONSTRUCT queries; "
            f"use one of {', '.join(SELECT_FORMATS)}"
        )
    if isinstance(answer, Boolean):
        if output_format == "json":
            return json.dumps({"head": {}, "boolean": answer.value}) + "\n"
        return ("true" if answer.value else "false") + ("\r\n" if output_format == "csv" else "\n")
    return {"table": table, "csv": to_csv, "tsv": to_tsv, "json": to_json}[output_format](answer)


# ---- W3C formats -------------------------------------------------------------------------------


def to_json(answer: Solutions) -> str:
    """SPARQL 1.1 Query Results JSON: unbound variables are left out of their row."""
    bindings = [
        {
            name: _json_term(term)
            for name, term in zip(answer.variables, row, strict=True)
            if term is not None
        }
        for row in answer.rows
    ]
    document = {"head": {"vars": list(answer.variables)}, "results": {"bindings": bindings}}
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def _json_term(term: Term) -> dict[str, str]:
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    out = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype.value != XSD_STRING:
        out["datatype"] = term.datatype.value
    return out


def to_csv(answer: Solutions) -> str:
    """SPARQL 1.1 CSV: values only (IRIs bare, literals without quotes or types), CRLF rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(answer.variables)
    for row in answer.rows:
        writer.writerow(["" if term is None else _csv_value(term) for term in row])
    return buffer.getvalue()


def _csv_value(term: Term) -> str:
    return f"_:{term.value}" if isinstance(term, ox.BlankNode) else term.value


def to_tsv(answer: Solutions) -> str:
    """SPARQL 1.1 TSV: `?var` headers, every value in its N-Triples form (types kept)."""
    lines = ["\t".join("?" + name for name in answer.variables)]
    for row in answer.rows:
        # pyoxigraph writes terms as N-Triples: a literal's tab or newline is escaped.
        lines.append("\t".join("" if term is None else str(term) for term in row))
    return "\n".join(lines) + "\n"


def _graph(answer: Triples, output_format: str) -> str:
    rdf_format = ox.RdfFormat.N_TRIPLES if output_format == "ntriples" else ox.RdfFormat.TURTLE
    prefixes = None if output_format == "ntriples" else NAMESPACES
    data = ox.serialize(answer.triples, format=rdf_format, prefixes=prefixes)
    assert data is not None  # no output file given: pyoxigraph returns the bytes
    return data.decode("utf-8")


# ---- table -------------------------------------------------------------------------------------


def table(answer: Solutions) -> str:
    header = list(answer.variables)
    cells = [[_display(term) for term in row] for row in answer.rows]
    widths = [
        max([_width(name)] + [_width(row[i]) for row in cells]) for i, name in enumerate(header)
    ]
    lines = [_line(header, widths), "  ".join("─" * w for w in widths)]
    lines.extend(_line(row, widths) for row in cells)
    count = len(answer.rows)
    lines.append(f"({count} row{'' if count == 1 else 's'})")
    return "\n".join(lines) + "\n"


def _line(values: Iterable[str], widths: list[int]) -> str:
    return "  ".join(
        v + " " * (w - _width(v)) for v, w in zip(values, widths, strict=True)
    ).rstrip()


def _display(term: Term | None) -> str:
    if term is None:
        return ""
    if isinstance(term, ox.NamedNode):
        text = _shorten(term.value)
    elif isinstance(term, ox.BlankNode):
        text = f"_:{term.value}"
    else:
        text = term.value
    text = printable(" ".join(text.split()))  # one row, one line, no escape codes
    return _cut(text, TABLE_WIDTH)


def _shorten(iri: str) -> str:
    if iri.startswith(DEFAULT_BASE) and len(iri) > len(DEFAULT_BASE):
        return iri[len(DEFAULT_BASE) :]
    for prefix, namespace in NAMESPACES.items():
        if iri.startswith(namespace) and len(iri) > len(namespace):
            return f"{prefix}:{iri[len(namespace) :]}"
    return iri


def char_width(char: str) -> int:
    """Columns a character takes on a terminal: two for CJK, none for a combining mark."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _width(text: str) -> int:
    return sum(char_width(c) for c in text)


def _cut(text: str, limit: int) -> str:
    if _width(text) <= limit:
        return text
    out, used = [], 0
    for char in text:
        width = char_width(char)
        if used + width > limit - 1:
            break
        out.append(char)
        used += width
    return "".join(out) + "…"
