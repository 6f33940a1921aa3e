"""RDF exports: N-Triples, Turtle and JSON-LD, streamed subject by subject in sorted order.

We write N-Triples ourselves (escaping is simple and exactly specified) and let pyoxigraph
turn that file into Turtle: rdflib's serialiser is the bottleneck on large graphs (about
40 s for a million triples against 1 s). JSON-LD is written as compact JSON, one subject a
line, with a @context, which rdflib or any JSON-LD processor expands back to the same
triples. No writer holds the whole graph's triples or text: a 100k-entry build has 12
million triples.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox
import regex

from kgraph.graph import Date, Edge, KnowledgeGraph, Text, Value
from kgraph.iri import safe_iri
from kgraph.vocab import (
    EXTRA_TYPES,
    NAMESPACES,
    RDF_TYPE,
    RDFS_LABEL,
    class_iri,
    predicate,
)

XSD = NAMESPACES["xsd"]


# One triple of a subject: (predicate, object, datatype, lang). The object is an IRI when
# datatype is "", else a literal's lexical form. Plain tuples sort as the N-Triples lines
# should and cost a fraction of an object each; a 100k-entry graph has 12 million of them.
Term = tuple[str, str, str, str]
Block = tuple[str, list[Term]]  # a subject's IRI and its sorted triples


def subject_blocks(
    graph: KnowledgeGraph, base: str, out_edges: Mapping[str, Sequence[Edge]]
) -> Iterator[Block]:
    """Every subject with its triples, in sorted order: the order all RDF outputs share.

    Generated one subject at a time, so no export holds the whole triple list.
    """
    string = XSD + "string"
    ids = graph.nodes.keys() | out_edges.keys()
    types = {
        kind: [(RDF_TYPE, class_iri(kind), "", "")]
        for kind in {n.kind for n in graph.nodes.values()}
    }
    for kind, terms in types.items():
        terms.extend((RDF_TYPE, extra, "", "") for extra in EXTRA_TYPES.get(kind, ()))
    no_edges: Sequence[Edge] = ()
    for node_id in sorted(ids):
        node = graph.nodes.get(node_id)
        if node is not None:
            terms = [*types[node.kind], (RDFS_LABEL, node.label, string, "")]
            terms += [_literal(predicate(name), value) for name, value in node.attrs]
        else:
            terms = []
        terms += [
            (predicate(e.relation), base + e.target, "", "")
            for e in out_edges.get(node_id, no_edges)
        ]
        terms.sort()
        yield base + node_id, terms


def _literal(pred: str, value: Value) -> Term:
    if isinstance(value, bool):
        return pred, "true" if value else "false", XSD + "boolean", ""
    if isinstance(value, int):
        return pred, str(value), XSD + "integer", ""
    if isinstance(value, Text):
        return pred, value.text, NAMESPACES["rdf"] + "langString", value.lang
    if isinstance(value, Date):
        return pred, value.iso, XSD + "date", ""
    if (
        value.startswith(("http://", "https://"))
        and pred.endswith(("#url", "#sourceUrl"))
        and (iri := safe_iri(value))
    ):
        return pred, iri, "", ""  # an address no IRI can hold stays a string
    return pred, value, XSD + "string", ""


_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


_NEEDS_ESCAPE = regex.compile(r'[\\"\x00-\x1f\x7f\ud800-\udfff]')
_SURROGATE = regex.compile(r"[\ud800-\udfff]")


def _escape_one(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    if "\ud800" <= char <= "\udfff":
        return "\\uFFFD"
    return f"\\u{ord(char):04X}"


def _escape(text: str) -> str:
    """Escape for an N-Triples string; the scan runs in C (a 20 MB summary takes a blink)."""
    return _NEEDS_ESCAPE.sub(lambda m: _escape_one(m.group()), text)


def _fast_escape(text: str) -> str:
    if text.isprintable() and "\\" not in text and '"' not in text:
        return text
    return _escape(text)


def ntriples_lines(subject: str, terms: Sequence[Term]) -> list[str]:
    lines = []
    string = XSD + "string"
    for pred, obj, datatype, lang in terms:
        if not datatype:
            term = f"<{obj}>"
        elif lang:
            term = f'"{_fast_escape(obj)}"@{lang}'
        elif datatype == string:
            term = f'"{_fast_escape(obj)}"'
        else:
            term = f'"{_fast_escape(obj)}"^^<{datatype}>'
        lines.append(f"<{subject}> <{pred}> {term} .\n")
    return lines


def write_ntriples(blocks: Iterable[Block], out: BinaryIO) -> int:
    """Stream N-Triples; returns the length of the longest literal (see `write_turtle`)."""
    longest = 0
    with _Chunked(out) as chunks:
        for subject, terms in blocks:
            chunks.extend(ntriples_lines(subject, terms))
            for _, obj, datatype, _ in terms:
                if datatype and len(obj) > longest:
                    longest = len(obj)
    return longest


# pyoxigraph's parsers hold one token in a buffer of at most 16 MiB; a literal that could
# come near it (4 bytes a character at worst) is handed over as an object instead.
PARSER_TOKEN_LIMIT = 16 * 1024 * 1024


def write_turtle(
    ntriples: Path, longest_literal: int, blocks: Callable[[], Iterable[Block]], out: BinaryIO
) -> None:
    """Turtle by pyoxigraph, streamed from the N-Triples file (a million triples a second),
    or from the blocks themselves when a literal is too long for its parser."""
    parsed: Iterable[ox.Triple | ox.Quad]
    if 4 * longest_literal >= PARSER_TOKEN_LIMIT:
        parsed = _oxigraph_triples(blocks())
    else:
        parsed = ox.parse(path=str(ntriples), format=ox.RdfFormat.N_TRIPLES)
    # No base_iri: pyoxigraph would also relativise the kg: namespace against it.
    ox.serialize(parsed, out, format=ox.RdfFormat.TURTLE, prefixes=NAMESPACES)


def _oxigraph_triples(blocks: Iterable[Block]) -> Iterator[ox.Triple]:
    iris: dict[str, ox.NamedNode] = {}

    def iri(value: str) -> ox.NamedNode:
        if value not in iris:
            iris[value] = ox.NamedNode(value)
        return iris[value]

    for subject, terms in blocks:
        for pred, obj, datatype, lang in terms:
            term: ox.NamedNode | ox.Literal
            if not datatype:
                term = iri(obj)
            elif lang:
                term = ox.Literal(_SURROGATE.sub("\ufffd", obj), language=lang)
            else:  # as the N-Triples escape does
                term = ox.Literal(_SURROGATE.sub("\ufffd", obj), datatype=iri(datatype))
            yield ox.Triple(iri(subject), iri(pred), term)


def write_jsonld(blocks: Iterable[Block], base: str, out: BinaryIO) -> None:
    """Compact JSON-LD, one subject a line: prefixed terms, ids relative to `@base`.

    Each line is written by json's C encoder (an indented document falls back to the
    pure-Python one, several times slower), and the file is never held whole.
    """
    context: dict[str, object] = {k: v for k, v in NAMESPACES.items()}
    context["@base"] = base

    def compact(iri: str) -> str:
        for prefix, ns in NAMESPACES.items():
            if iri.startswith(ns) and iri != ns:
                return f"{prefix}:{iri[len(ns) :]}"
        return iri

    # A relative id resolves against @base by RFC 3986, which drops a base's query or
    # fragment: "pr/1" against "https://x/kg#" is "https://x/pr/1". Such bases get full IRIs.
    shortens = base.endswith("/") and "?" not in base and "#" not in base

    def relative(iri: str) -> str:
        return iri[len(base) :] if shortens and iri.startswith(base) else iri

    string = XSD + "string"
    names: dict[str, str] = {}  # predicate, class and datatype IRIs, compacted once
    cut = len(base)
    with _Chunked(out) as chunks:
        chunks.append('{"@context": ' + _dump(context) + ',\n"@graph": [')
        separator = "\n"
        for subject, terms in blocks:
            node: dict[str, object] = {"@id": relative(subject)}
            for pred, obj, datatype, lang in terms:
                if pred == RDF_TYPE:
                    kind = names.get(obj) or names.setdefault(obj, compact(obj))
                    node.setdefault("@type", []).append(kind)  # type: ignore[attr-defined]
                    continue
                value: object
                if not datatype:
                    value = {"@id": obj[cut:] if shortens and obj.startswith(base) else obj}
                elif lang:
                    value = {"@value": obj, "@language": lang}
                elif datatype == string:
                    value = obj
                else:
                    value = {"@value": obj, "@type": names.get(datatype) or compact(datatype)}
                key = names.get(pred) or names.setdefault(pred, compact(pred))
                node.setdefault(key, []).append(value)  # type: ignore[attr-defined]
            chunks.append(separator + _dump(node))
            separator = ",\n"
        chunks.append("\n]}\n")


# Built once: json.dumps with options builds an encoder at every call.
_dump = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


class _Chunked:
    """Text lines gathered and written as UTF-8 in large chunks: one `write` per line
    would cost more than building the line."""

    LIMIT = 1 << 20

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.parts: list[str] = []
        self.size = 0

    def append(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size >= self.LIMIT:
            self.flush()

    def extend(self, texts: Sequence[str]) -> None:
        self.parts.extend(texts)
        self.size += sum(map(len, texts))
        if self.size >= self.LIMIT:
            self.flush()

    def flush(self) -> None:
        self.out.write("".join(self.parts).encode("utf-8"))
        self.parts.clear()
        self.size = 0

    def __enter__(self) -> _Chunked:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.flush()
