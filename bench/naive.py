"""The baseline: the digests-to-RDF script a user would write in an afternoon with rdflib.

It reads the same two plain-text formats, takes every backticked span as a symbol (or a
file when it has a suffix), every `#123` as an issue, adds one `Graph.add` per triple and
serialises Turtle. No entity resolution, no classification of spans, no provenance: a
smaller graph than kgraph's, made the obvious way. `bench/build.py` times it beside kgraph.

    python bench/naive.py CORPUS_DIR OUT.ttl
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from urllib.parse import quote

from rdflib import RDF, RDFS, Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, XSD

KG = Namespace("https://w3id.org/kgraph/ns#")
ID = "https://w3id.org/kgraph/id/"
SPAN = re.compile(r"`([^`\n]+)`")
ISSUE = re.compile(r"(?<![\w&/#])#(\d{1,9})\b")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def node(*parts: str) -> URIRef:
    return URIRef(ID + "/".join(quote(p, safe="") for p in parts))


def entries(text: str) -> tuple[str | None, str | None, list[tuple[int, str, str]]]:
    """(date, repo, [(line, title, summary)]): blank-separated blocks or title/summary lines."""
    lines = text.splitlines()
    header = lines[0].strip()
    date = header if DATE.match(header) else None
    repo = header.split(" ·")[0] if "·" in header else None
    found: list[tuple[int, str, str]] = []
    title: tuple[int, str] | None = None
    summary: list[str] = []
    for number, line in enumerate(lines[1:], start=2):
        line = line.strip()
        if not line:
            continue
        if line[-1] not in "。.:：;；!！?？" and not line.startswith("- ") and len(line) < 140:
            if title:
                found.append((title[0], title[1], " ".join(summary)))
            title, summary = (number, line), []
        else:
            summary.append(line)
    if title:
        found.append((title[0], title[1], " ".join(summary)))
    return date, repo, found


def main(corpus: str, out: str) -> None:
    graph = Graph()
    read = 0
    graph.bind("kg", KG)
    graph.bind("dcterms", DCTERMS)
    for path in sorted(Path(corpus).rglob("*.txt")):
        date, repo, found = entries(path.read_text("utf-8"))
        digest = node("digest", path.name)
        graph.add((digest, RDF.type, KG.Digest))
        graph.add((digest, KG.sourceName, Literal(path.name)))
        if date:
            graph.add((digest, DCTERMS.date, Literal(date, datatype=XSD.date)))
        scope = repo or "_"
        read += len(found)
        for line, title, summary in found:
            pr = node("pr", scope, hashlib.sha1(title.encode()).hexdigest()[:12])
            entry = node("entry", path.name, str(line))
            graph.add((pr, RDF.type, KG.PullRequest))
            graph.add((pr, DCTERMS.title, Literal(title)))
            graph.add((pr, KG.describedBy, entry))
            graph.add((entry, RDF.type, KG.Entry))
            graph.add((entry, KG.partOf, digest))
            graph.add((entry, KG.line, Literal(line)))
            graph.add((entry, KG.text, Literal(summary)))
            if repo:
                graph.add((pr, KG.inRepository, node("repo", repo)))
            for span in SPAN.findall(summary):
                name = span.strip().removesuffix("()")
                is_file = bool(re.search(r"\.\w{1,4}$", name)) and " " not in name
                entity = node("file" if is_file else "symbol", scope, name)
                graph.add((entity, RDF.type, KG.SourceFile if is_file else KG.CodeSymbol))
                graph.add((entity, RDFS.label, Literal(name)))
                graph.add((pr, KG.touchesFile if is_file else KG.mentionsSymbol, entity))
            for number in ISSUE.findall(summary):
                issue = node("issue", scope, number)
                graph.add((issue, RDF.type, KG.Issue))
                graph.add((issue, KG.number, Literal(int(number))))
                graph.add((pr, KG.references, issue))
    graph.serialize(destination=out, format="turtle")
    print(f"{read} entries, {len(graph)} triples")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
