"""RDF exports: N-Triples, Turtle and JSON-LD, streamed subject by subject in sorted order.

We write every format ourselves from each subject's sorted triples: rdflib's serialiser
is the bottleneck on large graphs (about 40 s for a million triples). N-Triples escaping
is simple and exactly specified; Turtle takes the form pyoxigraph's serialiser gives, which
the tests compare it with. JSON-LD is written as compact JSON, one subject a line, with a
@context, which rdflib or any JSON-LD processor expands back to the same triples. No
writer holds the whole graph's triples or text: a 100k-entry build has 11 million triples.
Each subject is one block of each file, which the next build may copy instead of writing
(`kgraph.export.reuse`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from io import BytesIO
from typing import NamedTuple

import pyoxigraph as ox
import regex

from kgraph.export.jsonenc import encoder
from kgraph.export.reuse import BlockFile
from kgraph.graph import Date, Edge, GraphView, Text, Value
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
# should and cost a fraction of an object each; a 100k-entry graph has 11 million of them.
Term = tuple[str, str, str, str]


class Subjects:
    """Every subject of the graph in sorted order, the order all outputs share, and each
    one's triples, made when asked: no export holds the whole triple list."""

    def __init__(
        self,
        graph: GraphView,
        base: str,
        out_edges: Mapping[str, Sequence[Edge]],
        ids: list[str] | None = None,  # sorted, when known (the store's)
        kinds: Iterable[str] | None = None,  # every kind of node, when known
    ) -> None:
        self.graph = graph
        self.base = base
        self.out_edges = out_edges
        nodes = graph.nodes
        # Every source of an edge is a node, as a rule: then the node ids alone are sorted,
        # in the order the linker made them, which holds runs a sort takes whole (0.8 s
        # against 1.6 s for a set of 1.2 million ids at 100k entries).
        self.ids = (
            ids
            if ids is not None
            else sorted(
                nodes if out_edges.keys() <= nodes.keys() else nodes.keys() | out_edges.keys()
            )
        )
        if kinds is None:
            kinds = {n.kind for n in nodes.values()}
        self._types = {
            kind: [(RDF_TYPE, class_iri(kind), "", "")]
            + [(RDF_TYPE, extra, "", "") for extra in EXTRA_TYPES.get(kind, ())]
            for kind in kinds
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
    if isinstance(value, float):
        return pred, f"{value:.2f}", XSD + "decimal", ""
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


def _ntriples(subjects: Subjects) -> Format:
    base = subjects.base
    return Format(block=lambda node_id, terms: "".join(ntriples_lines(base + node_id, terms)))


SUBJECTS = "subjects"  # the one section of the RDF files: every subject's block


class Format(NamedTuple):
    """How one RDF file is written: its blocks, what comes before and after them, and
    what separates them (JSON-LD's commas)."""

    block: Callable[[str, Sequence[Term]], str]  # a subject's id and sorted triples
    head: str = ""
    tail: str = ""
    first: str = ""  # before the first block
    between: str = ""  # before every other block


_DONE = -1  # a file's way through the subjects is over


def write_rdf(
    subjects: Subjects,
    turtle: BlockFile | None = None,
    ntriples: BlockFile | None = None,
    jsonld: BlockFile | None = None,
) -> None:
    """Write the RDF files asked for in one walk over the subjects.

    Each subject's triples are made once for all the files: making them was a third of
    each format's time, when every format was written in a walk of its own. Each file
    still copies its own unchanged blocks from the last build's, so the walk makes the
    triples of a subject only where some file writes its block.
    """
    formats = [
        (out, make(subjects))
        for out, make in ((turtle, _turtle), (ntriples, _ntriples), (jsonld, _jsonld))
        if out is not None
    ]
    ids, terms = subjects.ids, subjects.terms
    files = []  # (file, format, its way through the subjects), of those with blocks to write
    at: list[int] = []  # the next subject whose block each of them writes
    for out, form in formats:
        if form.head:
            out.write(form.head)
        out.section(SUBJECTS)
        fresh = out.fresh(len(ids))
        if (first := next(fresh, _DONE)) != _DONE:
            files.append((out, form, fresh))
            at.append(first)
    while at:
        index = min(at)
        node_id = ids[index]
        triples = terms(node_id)
        for k, (out, form, fresh) in enumerate(files):
            if at[k] == index:
                separator = form.first if out.at_start else form.between
                out.write(separator + form.block(node_id, triples))
                at[k] = next(fresh, _DONE)
        if _DONE in at:
            files = [f for f, where in zip(files, at, strict=True) if where != _DONE]
            at = [where for where in at if where != _DONE]
    for out, form in formats:
        out.end_section()
        if form.tail:
            out.write(form.tail)


def _jsonld(subjects: Subjects) -> Format:
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

    def block(node_id: str, terms: Sequence[Term]) -> str:
        node: dict[str, object] = {"@id": node_id if shortens else base + node_id}
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
            elif datatype == _STRING:
                value = obj
            else:
                kind = names.get(datatype) or names.setdefault(datatype, compact(datatype))
                value = {"@value": obj, "@type": kind}
            key = names.get(pred) or names.setdefault(pred, compact(pred))
            node.setdefault(key, []).append(value)  # type: ignore[attr-defined]
        return _dump(node)

    head = '{"@context": ' + _dump(context) + ',\n"@graph": ['
    return Format(block, head=head, tail="\n]}\n", first="\n", between=",\n")


_dump = encoder(sort_keys=True)


# --- Turtle ---------------------------------------------------------------------------------
# Written subject by subject like N-Triples, in the form pyoxigraph's serializer gives (the
# tests compare the two byte for byte, past the prefixes): each subject with its predicates
# on tab-indented lines, a repeated predicate's objects joined by " , ". It used to be
# converted from the N-Triples file by pyoxigraph once that file was written, which made
# N-Triples and Turtle together the longest task of a `-j` build.

TURTLE_PREFIXES = "".join(f"@prefix {name}: <{iri}> .\n" for name, iri in NAMESPACES.items())
_XSD_INTEGER, _XSD_BOOLEAN = XSD + "integer", XSD + "boolean"
_INTEGER = re.compile(r"[+-]?[0-9]+")
# A local name pyoxigraph writes as it is after its prefix; others are asked of it.
_PLAIN_LOCAL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.:-]*[A-Za-z0-9_-])?")
_NAMESPACE = re.compile("|".join(map(re.escape, NAMESPACES.values())))  # the first that fits
_PREFIX_OF = {namespace: name for name, namespace in NAMESPACES.items()}
_TURTLE_NEEDS_ESCAPE = regex.compile(r'[\\"\x00-\x1f\x7f]')


def turtle_iri(iri: str) -> str:
    """`prefix:local` where a prefix covers the IRI, else `<iri>`."""
    namespace = _NAMESPACE.match(iri)
    if namespace is None:
        return f"<{iri}>"
    local = iri[namespace.end() :]
    if _PLAIN_LOCAL.fullmatch(local):
        return f"{_PREFIX_OF[namespace.group()]}:{local}"
    return _pyoxigraph_iri(iri)


def _turtle(subjects: Subjects) -> Format:
    """The prefixes (none for an empty graph), then a block per subject."""
    base = subjects.base
    names = {RDF_TYPE: "a"}

    # Unless --base lies inside a vocabulary namespace, no prefix covers a node's IRI.
    covered = any(ns.startswith(base) or base.startswith(ns) for ns in NAMESPACES.values())

    def iri(value: str) -> str:
        return f"<{value}>" if not covered and value.startswith(base) else turtle_iri(value)

    def block(node_id: str, terms: Sequence[Term]) -> str:
        return turtle_block(base + node_id, terms, names, iri)

    return Format(block, head=TURTLE_PREFIXES if subjects.ids else "")


def turtle_block(
    subject: str,
    terms: Sequence[Term],
    names: dict[str, str],
    iri: Callable[[str], str] = turtle_iri,
) -> str:
    """One subject's Turtle; `names` caches the Turtle of vocabulary IRIs."""
    parts = [iri(subject), " "]
    previous = ""
    for pred, obj, datatype, lang in terms:
        if pred == previous:
            parts.append(" , ")
        else:
            if previous:
                parts.append(" ;\n\t")
            parts.append(names.get(pred) or names.setdefault(pred, turtle_iri(pred)))
            parts.append(" ")
            previous = pred
        if not datatype:
            parts.append(iri(obj))
        elif lang:
            parts.append(f'"{_turtle_escape(obj)}"@{lang.lower()}')
        elif datatype == _STRING:
            parts.append(f'"{_turtle_escape(obj)}"')
        elif (datatype == _XSD_INTEGER and _INTEGER.fullmatch(obj)) or (
            datatype == _XSD_BOOLEAN and obj in ("true", "false")
        ):
            parts.append(obj)
        else:
            kind = names.get(datatype) or names.setdefault(datatype, turtle_iri(datatype))
            parts.append(f'"{_turtle_escape(obj)}"^^{kind}')
    parts.append(" .\n")
    return "".join(parts)


def _pyoxigraph_iri(iri: str) -> str:
    """How pyoxigraph writes an IRI its prefixes cover but whose local name needs escapes
    (`kg:a\\/b`) or cannot be one (`<…#·a>`); reached only when `--base` lies inside a
    vocabulary namespace."""
    out = BytesIO()
    triple = ox.Triple(ox.NamedNode("s:"), ox.NamedNode("p:"), ox.NamedNode(iri))
    ox.serialize([triple], out, format=ox.RdfFormat.TURTLE, prefixes=NAMESPACES)
    line = out.getvalue().decode().rsplit("\n", 2)[-2]
    return line.removeprefix("<s:> <p:> ").removesuffix(" .")


def _turtle_escape(text: str) -> str:
    """As for N-Triples, but a lone surrogate becomes U+FFFD itself, as pyoxigraph reads
    the N-Triples escape back."""
    if text.isprintable() and "\\" not in text and '"' not in text:
        return text
    text = _SURROGATE.sub("\ufffd", text)
    return _TURTLE_NEEDS_ESCAPE.sub(lambda m: _escape_one(m.group()), text)
