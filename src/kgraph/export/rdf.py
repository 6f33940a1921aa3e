"""RDF exports: N-Triples, Turtle and JSON-LD from one sorted list of triples.

We write N-Triples ourselves (escaping is simple and exactly specified) and let pyoxigraph
turn them into Turtle: rdflib's serialiser is the bottleneck on large graphs (about 40 s for
a million triples against 1 s). JSON-LD is written as compact, framed-by-subject JSON with
a @context, which rdflib or any JSON-LD processor expands back to the same triples.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyoxigraph as ox
import regex

from kgraph.graph import Date, KnowledgeGraph, Text, Value
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


@dataclass(frozen=True, slots=True, order=True)
class Triple:
    subject: str
    predicate: str
    object: str  # an IRI, or a literal's lexical form
    datatype: str = ""  # "" for an IRI object
    lang: str = ""


def triples(graph: KnowledgeGraph, base: str) -> list[Triple]:
    """Every triple of the graph, sorted: the order all RDF outputs share."""
    out: list[Triple] = []
    for node in graph.nodes.values():
        subject = base + node.id
        out.append(Triple(subject, RDF_TYPE, class_iri(node.kind)))
        out.extend(Triple(subject, RDF_TYPE, extra) for extra in EXTRA_TYPES.get(node.kind, ()))
        out.append(Triple(subject, RDFS_LABEL, node.label, XSD + "string"))
        for name, value in node.attrs:
            out.append(_literal(subject, predicate(name), value))
    for edge in graph.edges:
        out.append(Triple(base + edge.source, predicate(edge.relation), base + edge.target))
    out.sort()
    return out


def _literal(subject: str, pred: str, value: Value) -> Triple:
    if isinstance(value, bool):
        return Triple(subject, pred, "true" if value else "false", XSD + "boolean")
    if isinstance(value, int):
        return Triple(subject, pred, str(value), XSD + "integer")
    if isinstance(value, Text):
        return Triple(subject, pred, value.text, NAMESPACES["rdf"] + "langString", value.lang)
    if isinstance(value, Date):
        return Triple(subject, pred, value.iso, XSD + "date")
    if (
        value.startswith(("http://", "https://"))
        and pred.endswith(("#url", "#sourceUrl"))
        and (iri := safe_iri(value))
    ):
        return Triple(subject, pred, iri)  # an address no IRI can hold stays a string
    return Triple(subject, pred, value, XSD + "string")


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


def to_ntriples(rows: list[Triple]) -> str:
    lines = []
    for t in rows:
        if not t.datatype:
            obj = f"<{t.object}>"
        elif t.lang:
            obj = f'"{_fast_escape(t.object)}"@{t.lang}'
        elif t.datatype == XSD + "string":
            obj = f'"{_fast_escape(t.object)}"'
        else:
            obj = f'"{_fast_escape(t.object)}"^^<{t.datatype}>'
        lines.append(f"<{t.subject}> <{t.predicate}> {obj} .\n")
    return "".join(lines)


# pyoxigraph's parsers hold one token in a buffer of at most 16 MiB; a literal that could
# come near it (4 bytes a character at worst) is handed over as an object instead.
PARSER_TOKEN_LIMIT = 16 * 1024 * 1024


def to_turtle(ntriples: str, rows: Sequence[Triple] = ()) -> bytes:
    """Turtle by pyoxigraph from the N-Triples (fast), or from `rows` when a literal is huge."""
    parsed: Iterable[ox.Triple | ox.Quad]
    if any(4 * len(t.object) >= PARSER_TOKEN_LIMIT for t in rows):
        parsed = _oxigraph_triples(rows)
    else:
        parsed = ox.parse(ntriples.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    # No base_iri: pyoxigraph would also relativise the kg: namespace against it.
    turtle = ox.serialize(parsed, format=ox.RdfFormat.TURTLE, prefixes=NAMESPACES)
    assert turtle is not None  # no output file given: pyoxigraph returns the bytes
    return turtle


def _oxigraph_triples(rows: Sequence[Triple]) -> list[ox.Triple]:
    iris: dict[str, ox.NamedNode] = {}

    def iri(value: str) -> ox.NamedNode:
        if value not in iris:
            iris[value] = ox.NamedNode(value)
        return iris[value]

    def term(t: Triple) -> ox.NamedNode | ox.Literal:
        text = _SURROGATE.sub("\ufffd", t.object)  # as the N-Triples escape does
        if not t.datatype:
            return iri(t.object)
        if t.lang:
            return ox.Literal(text, language=t.lang)
        return ox.Literal(text, datatype=iri(t.datatype))

    return [ox.Triple(iri(t.subject), iri(t.predicate), term(t)) for t in rows]


def to_jsonld(rows: list[Triple], base: str) -> str:
    """Compact JSON-LD: one object per subject, prefixed terms, ids relative to `@base`."""
    context: dict[str, object] = {k: v for k, v in NAMESPACES.items()}
    context["@base"] = base
    nodes: dict[str, dict[str, list[object]]] = {}
    ids: dict[str, str] = {}

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

    for t in rows:
        ids.setdefault(t.subject, relative(t.subject))
        node = nodes.setdefault(t.subject, {})
        if t.predicate == RDF_TYPE:
            node.setdefault("@type", []).append(compact(t.object))
            continue
        value: object
        if not t.datatype:
            value = {"@id": relative(t.object)}
        elif t.lang:
            value = {"@value": t.object, "@language": t.lang}
        elif t.datatype == XSD + "string":
            value = t.object
        else:
            value = {"@value": t.object, "@type": compact(t.datatype)}
        node.setdefault(compact(t.predicate), []).append(value)
    graph = [{"@id": ids[subject], **properties} for subject, properties in nodes.items()]
    document = {"@context": context, "@graph": graph}
    return json.dumps(document, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
