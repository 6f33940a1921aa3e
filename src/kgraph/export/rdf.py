"""RDF exports: N-Triples, Turtle and JSON-LD, streamed subject by subject in sorted order.

We write N-Triples ourselves (escaping is simple and exactly specified) and let pyoxigraph
turn that file into Turtle: rdflib's serialiser is the bottleneck on large graphs (about
40 s for a million triples against 1 s). JSON-LD is written as compact JSON, one subject a
line, with a @context, which rdflib or any JSON-LD processor expands back to the same
triples. No writer holds the whole graph's triples or text: a 100k-entry build has 12
million triples. Each subject is one block of each file, which the next build may copy
instead of writing (`kgraph.export.reuse`).
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

import pyoxigraph as ox
import regex

from kgraph.export.jsonenc import encoder
from kgraph.export.reuse import BlockFile, OldFile, read_range
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


class Subjects:
    """Every subject of the graph in sorted order, the order all outputs share, and each
    one's triples, made when asked: no export holds the whole triple list."""

    def __init__(
        self, graph: KnowledgeGraph, base: str, out_edges: Mapping[str, Sequence[Edge]]
    ) -> None:
        self.graph = graph
        self.base = base
        self.out_edges = out_edges
        self.ids = sorted(graph.nodes.keys() | out_edges.keys())
        self._types = {
            kind: [(RDF_TYPE, class_iri(kind), "", "")]
            + [(RDF_TYPE, extra, "", "") for extra in EXTRA_TYPES.get(kind, ())]
            for kind in {n.kind for n in graph.nodes.values()}
        }

    def terms(self, node_id: str) -> list[Term]:
        """The sorted triples of one subject."""
        node = self.graph.nodes.get(node_id)
        if node is not None:
            terms = [*self._types[node.kind], (RDFS_LABEL, node.label, _STRING, "")]
            terms += [_literal(predicate(name), value) for name, value in node.attrs]
        else:
            terms = []
        base = self.base
        terms += [
            (predicate(e.relation), base + e.target, "", "")
            for e in self.out_edges.get(node_id, ())
        ]
        terms.sort()
        return terms


_STRING = XSD + "string"


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


def write_ntriples(subjects: Subjects, out: BlockFile) -> None:
    """Stream N-Triples, a block per subject; notes the longest literal (see `write_turtle`)."""
    longest = 0
    out.section(SUBJECTS)
    base, ids = subjects.base, subjects.ids
    for index in out.fresh(len(ids)):
        node_id = ids[index]
        terms = subjects.terms(node_id)
        out.write("".join(ntriples_lines(base + node_id, terms)))
        for _, obj, datatype, _ in terms:
            if datatype and len(obj) > longest:
                longest = len(obj)
    out.end_section()
    if out.written.copied and out.old is not None:  # the copied blocks' literals were measured then
        longest = max(longest, out.old.extra.get(LONGEST, 0))
    out.written.extra[LONGEST] = longest


SUBJECTS = "subjects"  # the one section of the RDF files: every subject's block
LONGEST = "longest_literal"


# pyoxigraph's parsers hold one token in a buffer of at most 16 MiB; a literal that could
# come near it (4 bytes a character at worst) is handed over as an object instead.
PARSER_TOKEN_LIMIT = 16 * 1024 * 1024


def write_turtle(ntriples: NTriples, subjects: Subjects, out: BlockFile) -> None:
    """Turtle by pyoxigraph, converted from the N-Triples file (a million triples a second),
    or from the subjects' triples when a literal is too long for its parser.

    A subject's Turtle does not depend on its neighbours (given the prefixes), so when
    blocks can be copied from the last build, only the runs of subjects between them are
    converted, each from its own part of the new N-Triples file."""
    old = out.old
    too_long = 4 * ntriples.longest_literal >= PARSER_TOKEN_LIMIT
    if (
        old is not None
        and not too_long
        and len(old.offsets.get(SUBJECTS, ())) > 1  # an empty graph's Turtle has no prefixes
        and subjects.ids
    ):
        _turtle_reusing(ntriples, subjects, old, out)
        return
    parsed: Iterable[ox.Triple | ox.Quad]
    if too_long:
        parsed = _oxigraph_triples(subjects)
    else:
        parsed = ox.parse(path=str(ntriples.path), format=ox.RdfFormat.N_TRIPLES)
    # No base_iri: pyoxigraph would also relativise the kg: namespace against it.
    ox.serialize(parsed, out.out, format=ox.RdfFormat.TURTLE, prefixes=NAMESPACES)
    out.out.flush()
    starts = _turtle_blocks_in(out.out.name)
    out.wrote_directly(starts[-1])
    if len(starts) == len(subjects.ids) + 1:  # always, unless a subject was not told apart
        out.written.offsets[SUBJECTS] = starts


@dataclass(frozen=True, slots=True)
class NTriples:
    """The N-Triples file just written, where each subject's block is, and its longest
    literal: what Turtle is converted from."""

    path: Path
    offsets: Sequence[int]
    longest_literal: int


_SUBJECT_LINE = re.compile(rb"(?<=\n)<")


def _turtle_blocks(text: bytes) -> list[int]:
    """Where each subject starts in pyoxigraph's Turtle: the lines that open with an IRI
    (the others are prefixes, or indented predicates; literals are written escaped)."""
    return [m.start() for m in _SUBJECT_LINE.finditer(text)]


def _turtle_blocks_in(path: str, chunk: int = 1 << 24) -> array:
    """`_turtle_blocks` of a file, read a chunk at a time, and its size at the end."""
    starts = array("Q")
    size = 0
    with open(path, "rb") as handle:
        previous = b"\n"  # the byte before the chunk: a line starts at the file's start
        while data := handle.read(chunk):
            starts.extend(size + m.start() - 1 for m in _SUBJECT_LINE.finditer(previous + data))
            size += len(data)
            previous = data[-1:]
    starts.append(size)
    return starts


RUN_LIMIT = 1 << 24  # bytes of N-Triples converted at once, when blocks are reused


def _turtle_reusing(ntriples: NTriples, subjects: Subjects, old: OldFile, out: BlockFile) -> None:
    out.raw(read_range(old.fd, 0, old.offsets[SUBJECTS][0]))  # the prefixes
    out.section(SUBJECTS)
    source = os.open(ntriples.path, os.O_RDONLY)
    run: list[int] = []

    def convert() -> None:
        start, end = ntriples.offsets[run[0]], ntriples.offsets[run[-1] + 1]
        converted = BytesIO()
        parsed = ox.parse(read_range(source, start, end), format=ox.RdfFormat.N_TRIPLES)
        ox.serialize(parsed, converted, format=ox.RdfFormat.TURTLE, prefixes=NAMESPACES)
        text = converted.getvalue()
        starts = _turtle_blocks(text)
        if len(starts) != len(run):
            raise RuntimeError(f"Turtle of {len(run)} subjects came out in {len(starts)} blocks")
        for index, begin, finish in zip(run, starts, [*starts[1:], len(text)], strict=True):
            out.start(index)
            out.raw(text[begin:finish])
        run.clear()

    try:
        index = 0
        while index < len(subjects.ids):
            if out.copyable(index) is None:
                if run and ntriples.offsets[index] - ntriples.offsets[run[0]] > RUN_LIMIT:
                    convert()
                run.append(index)
                index += 1
                continue
            if run:
                convert()
            index = out.copy_run(index)
        if run:
            convert()
    finally:
        os.close(source)
    out.end_section()


def _oxigraph_triples(subjects: Subjects) -> Iterator[ox.Triple]:
    iris: dict[str, ox.NamedNode] = {}

    def iri(value: str) -> ox.NamedNode:
        if value not in iris:
            iris[value] = ox.NamedNode(value)
        return iris[value]

    for node_id in subjects.ids:
        subject = subjects.base + node_id
        for pred, obj, datatype, lang in subjects.terms(node_id):
            term: ox.NamedNode | ox.Literal
            if not datatype:
                term = iri(obj)
            elif lang:
                term = ox.Literal(_SURROGATE.sub("\ufffd", obj), language=lang)
            else:  # as the N-Triples escape does
                term = ox.Literal(_SURROGATE.sub("\ufffd", obj), datatype=iri(datatype))
            yield ox.Triple(iri(subject), iri(pred), term)


def write_jsonld(subjects: Subjects, out: BlockFile) -> None:
    """Compact JSON-LD, one subject a line: prefixed terms, ids relative to `@base`.

    Each line is written by json's C encoder (an indented document falls back to the
    pure-Python one, several times slower), and the file is never held whole.
    """
    base = subjects.base
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
    names: dict[str, str] = {}  # predicate, class and datatype IRIs, compacted once
    cut = len(base)
    out.write('{"@context": ' + _dump(context) + ',\n"@graph": [')
    out.section(SUBJECTS)
    ids = subjects.ids
    for index in out.fresh(len(ids)):
        node_id = ids[index]
        node: dict[str, object] = {"@id": node_id if shortens else base + node_id}
        for pred, obj, datatype, lang in subjects.terms(node_id):
            if pred == RDF_TYPE:
                kind = names.get(obj) or names.setdefault(obj, compact(obj))
                node.setdefault("@type", []).append(kind)  # type: ignore[attr-defined]
                continue
            value: object
            if not datatype:
                value = {"@id": obj[cut:] if shortens and obj.startswith(base) else obj}
            elif lang:
                value = {"@value": obj, "@language": lang}
            elif datatype == _STRING:
                value = obj
            else:
                kind = names.get(datatype) or names.setdefault(datatype, compact(datatype))
                value = {"@value": obj, "@type": kind}
            key = names.get(pred) or names.setdefault(pred, compact(pred))
            node.setdefault(key, []).append(value)  # type: ignore[attr-defined]
        out.write(("\n" if out.at_start else ",\n") + _dump(node))
    out.end_section()
    out.write("\n]}\n")


_dump = encoder(sort_keys=True)
