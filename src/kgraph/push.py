"""Loading a build into a triple store over HTTP, then checking what the store holds.

The graph goes over the SPARQL 1.1 Graph Store HTTP Protocol (PUT or POST of N-Triples)
to the store's Graph Store endpoint, in chunks of `chunk_size` triples, so a large graph
never needs one giant request. When no Graph Store endpoint is given, or the server refuses
the protocol there (404, 405, 415, 501…), the graph goes as SPARQL Update instead:
`INSERT DATA` per chunk. (We do not guess a Graph Store address: Virtuoso's SPARQL endpoint
never answers a PUT, it only times out.) Blank nodes, which are scoped to one request, all
travel in one chunk. After the last chunk, a COUNT query on the SPARQL endpoint must find
every triple we sent. All requests go through one kept-alive `remote.Session`.

`replace` is atomic wherever the server takes SPARQL Update (Oxigraph, Virtuoso, Fuseki):
the chunks go to a staging graph (`urn:kgraph:staging:` and the graph's IRI), emptied
first, and one update request swaps every staged graph in (`DROP` the graph, `ADD` the
staging graph to it) and drops the digest graphs the build no longer has; then the staging
graphs are emptied. The store holds the old graphs or the new ones,
never a mix, whenever the push stops; a push stopped midway leaves its staging graph,
which the next push to the same graph empties. Where only the Graph Store protocol is
available, the first chunk replaces the graph in place (PUT) and the others add to it, so
a push stopped midway leaves part of the graph; the progress message says so.

With `per_digest`, every digest's facts go to a named graph of their own (named by the
digest's IRI), so a store can drop or replace one day's facts: a digest owns its Digest,
Entry and Mention nodes, the PRs its entries describe, what its mentions name, and what
those point at (a method's class, a PR's repository, a decision…). A fact two digests
support is in both graphs; one that joins two digests (`kg:sharesCodeWith` across days)
is in both; facts no digest supports (a pattern catalog nobody applied) go to the main
graph. Corpus-wide numbers (`kg:prCount`) are as of the build that was pushed.
"""

from __future__ import annotations

import math
import time
import urllib.parse
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox

from kgraph.remote import RemoteError, Server, Session, count, query
from kgraph.results import Solutions
from kgraph.store import graph_source, unreadable
from kgraph.vocab import KG, RDF_TYPE

DEFAULT_GRAPH = "https://w3id.org/kgraph/graph"
DEFAULT_CHUNK = 20_000  # triples per request: a few MB of N-Triples
PROTOCOLS = ("auto", "graph-store", "update")
# Answers that mean "no Graph Store protocol here", not "your data is wrong".
NOT_GRAPH_STORE = frozenset({400, 404, 405, 406, 415, 501})
DIGEST = "/digest/"  # in the IRI of a digest, which names its graph
STAGING = "urn:kgraph:staging:"  # + a graph's IRI: where a replacing push loads it


@dataclass(frozen=True, slots=True)
class Target:
    """Where a store listens: its SPARQL endpoint, and optionally separate write addresses."""

    endpoint: str  # SPARQL query endpoint: the count check, and updates unless `update`
    store: str | None = None  # Graph Store protocol endpoint
    update: str | None = None  # SPARQL Update endpoint

    @property
    def update_url(self) -> str:
        return self.update or self.endpoint


@dataclass(frozen=True, slots=True)
class PushOptions:
    graph: str = DEFAULT_GRAPH
    replace: bool = False
    per_digest: bool = False
    chunk_size: int = DEFAULT_CHUNK
    protocol: str = "auto"


@dataclass(frozen=True, slots=True)
class GraphReport:
    iri: str
    sent: int  # distinct triples sent to this graph
    counted: int  # triples the store holds in it afterwards


@dataclass(slots=True)
class PushReport:
    protocol: str = ""
    graphs: list[GraphReport] = field(default_factory=list)
    triples: int = 0  # distinct triples of the build
    union: int | None = None  # distinct triples across the pushed graphs, counted by the store
    requests: int = 0  # write requests: chunks, the staging graphs emptied, the swap, drops
    seconds: float = 0.0
    atomic: bool | None = None  # with replace: whether the new graphs were swapped in at once
    problems: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # digest graphs of digests now gone

    @property
    def verified(self) -> bool:
        return not self.problems


def read_triples(out_dir: Path) -> list[ox.Triple]:
    source, rdf_format = graph_source(out_dir)
    try:
        return sorted({q.triple for q in ox.parse(path=str(source), format=rdf_format)}, key=str)
    except (SyntaxError, MemoryError) as error:
        raise unreadable(source, error) from None


def partition(triples: Iterable[ox.Triple], main_graph: str) -> dict[str, list[ox.Triple]]:
    """Each triple under the digests that support it (see the module docstring)."""
    triples = list(triples)
    provenance: dict[str, set[str]] = defaultdict(set)
    for t in triples:
        if t.predicate.value == RDF_TYPE and t.object == ox.NamedNode(KG + "Digest"):
            provenance[_key(t.subject)].add(_key(t.subject))
    # Evidence flows from a digest to its entries, their mentions and the PRs they describe.
    for predicate in ("partOf", "inEntry", "describedBy"):
        for t in triples:
            if t.predicate.value == KG + predicate and isinstance(t.object, ox.NamedNode):
                provenance[_key(t.subject)] |= provenance[t.object.value]
    fixed = {node for node, digests in provenance.items() if digests}
    prs = {_key(t.subject) for t in triples if t.predicate.value == KG + "describedBy"}
    # What a mention names is known from the digests of its mentions: finer than its PR's
    # digests (a PR described on two days may name a symbol on one of them only).
    evidenced: set[str] = set()
    for t in triples:
        if t.predicate.value == KG + "denotes" and _key(t.object) not in fixed:
            provenance[_key(t.object)] |= provenance[_key(t.subject)]
            evidenced.add(_key(t.object))
    # Everything else is known through the nodes that point at it, transitively.
    edges: dict[str, set[str]] = defaultdict(set)
    for t in triples:
        if isinstance(t.object, ox.NamedNode | ox.BlankNode) and t.predicate.value != RDF_TYPE:
            edges[_key(t.subject)].add(_key(t.object))
    pending = list(fixed | evidenced)
    while pending:
        node = pending.pop()
        for target in edges.get(node, ()):
            if target in fixed or (target in evidenced and node in prs):
                continue
            if not provenance[node] <= provenance[target]:
                provenance[target] |= provenance[node]
                pending.append(target)
    graphs: dict[str, list[ox.Triple]] = defaultdict(list)
    for t in triples:
        own = provenance.get(_key(t.subject), set())
        other = (
            provenance.get(_key(t.object), set()) if not isinstance(t.object, ox.Literal) else set()
        )
        names = (own & other or own | other) if other else own
        for name in sorted(names) or [main_graph]:
            graphs[name].append(t)
    return dict(sorted(graphs.items()))


def _key(term: object) -> str:
    return term.value if isinstance(term, ox.NamedNode) else str(term)


@dataclass(frozen=True, slots=True)
class Chunk:
    data: bytes  # N-Triples
    blank: bool  # holds blank nodes (then it is the last chunk, and holds all of them)


def chunks(triples: list[ox.Triple], size: int) -> list[Chunk]:
    """N-Triples bodies of at most `size` triples; blank-node triples all in the last one."""
    ground = [t for t in triples if not _has_blank(t)]
    blank = [t for t in triples if _has_blank(t)]
    out = [Chunk(_ntriples(ground[i : i + size]), False) for i in range(0, len(ground), size)]
    if blank:
        out.append(Chunk(_ntriples(blank), True))
    return out or [Chunk(b"", False)]


def _has_blank(t: ox.Triple) -> bool:
    return isinstance(t.subject, ox.BlankNode) or isinstance(t.object, ox.BlankNode)


def _ntriples(triples: list[ox.Triple]) -> bytes:
    data = ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES)
    assert data is not None  # no output file given: pyoxigraph returns the bytes
    return data


def push(
    out_dir: Path,
    target: Target,
    server: Server,
    options: PushOptions,
    progress: Callable[[str], None] = lambda _: None,
) -> PushReport:
    """Send the build's graph, then count what the store holds; problems are reported."""
    started = time.perf_counter()
    if options.protocol == "graph-store" and not target.store:
        raise ValueError("--protocol graph-store needs the Graph Store endpoint (--store URL)")
    for iri in (options.graph, target.endpoint, target.store or "", target.update_url):
        if iri:
            _check_iri(iri)
    triples = read_triples(out_dir)
    graphs = partition(triples, options.graph) if options.per_digest else {options.graph: triples}
    report = PushReport(triples=len(triples))
    with server.session() as session:
        _send(session, target, options, graphs, report, progress)
        _check(session, target, options, graphs, report)
    report.seconds = time.perf_counter() - started
    return report


def _send(
    session: Session,
    target: Target,
    options: PushOptions,
    graphs: dict[str, list[ox.Triple]],
    report: PushReport,
    progress: Callable[[str], None],
) -> None:
    protocol = "graph-store" if target.store and options.protocol != "update" else "update"
    # Emptying a staging graph and the swap handle as many triples as all the chunks do
    # together, so they may take as long: each waits a request's timeout once per chunk.
    requests = sum(max(1, math.ceil(len(m) / options.chunk_size)) for m in graphs.values())
    patience = session.server.timeout * requests
    staged = options.replace and _empty_staging(
        session, target, graphs, protocol, progress, patience
    )
    report.atomic = staged if options.replace else None
    if staged:
        report.requests += 1
    for iri, members in graphs.items():
        bodies = chunks(members, options.chunk_size)
        into = STAGING + iri if staged else iri
        for index, chunk in enumerate(bodies):
            # The first chunk replaces the graph it goes to (the staging graph, or in place).
            replace = options.replace and index == 0
            if protocol == "graph-store":
                try:
                    _graph_store(session, target, into, chunk, replace)
                except RemoteError as error:
                    first = report.requests == int(staged) and options.protocol == "auto"
                    if not (first and error.status in NOT_GRAPH_STORE):
                        raise
                    progress(
                        f"no Graph Store protocol at {target.store} ({error}); "
                        f"using SPARQL Update at {target.update_url}"
                    )
                    protocol = "update"
            if protocol == "update":
                _update(session, target, into, chunk, replace and not staged)
            report.requests += 1
        staging = f" (staged in <{into}>)" if staged else ""
        progress(f"sent {len(members)} triples to <{iri}>{staging} in {len(bodies)} request(s)")
    report.protocol = protocol
    gone = []
    if options.per_digest and options.replace:
        gone = _gone_digest_graphs(session, target.endpoint, graphs)
    if staged:
        _swap(session, target, graphs, gone, patience)
        progress(f"swapped {len(graphs)} graph(s) in with one request")
        report.requests += 2
        try:
            _sparql_update(
                session, target, _staging_drops(graphs), idempotent=True, timeout=patience
            )
        except RemoteError as error:  # the push is done all the same
            progress(f"the staging graphs stay until the next push: {error}")
    else:
        for iri in gone:
            _drop(session, target, iri, protocol)
            report.requests += 1
    report.dropped = gone


def _check(
    session: Session,
    target: Target,
    options: PushOptions,
    graphs: dict[str, list[ox.Triple]],
    report: PushReport,
) -> None:
    for iri, members in graphs.items():
        counted = count(session, target.endpoint, [iri])
        report.graphs.append(GraphReport(iri, len(members), counted))
        if counted < len(members) or (options.replace and counted != len(members)):
            report.problems.append(
                f"<{iri}>: sent {len(members)} triples, but the store counts {counted}"
            )
    if options.per_digest and options.replace:
        report.union = count(session, target.endpoint, list(graphs), distinct=True)
        if report.union != report.triples:
            report.problems.append(
                f"the build has {report.triples} triples, but the store's digest graphs "
                f"hold {report.union} distinct ones"
            )


def _empty_staging(
    session: Session,
    target: Target,
    graphs: Iterable[str],
    protocol: str,
    progress: Callable[[str], None],
    timeout: float,
) -> bool:
    """Empty the staging graphs (of a push that was stopped); False when the server takes
    no SPARQL Update, so that only the Graph Store protocol can replace, in place."""
    try:
        _sparql_update(session, target, _staging_drops(graphs), idempotent=True, timeout=timeout)
    except RemoteError as error:
        if protocol != "graph-store" or error.status in (None, 401):
            raise
        progress(
            f"no SPARQL Update at {target.update_url} ({error}): --replace over the Graph "
            "Store protocol alone writes the graph in place, so a push stopped midway "
            "leaves part of it (give --update URL for an atomic replace)"
        )
        return False
    return True


def _swap(
    session: Session,
    target: Target,
    graphs: dict[str, list[ox.Triple]],
    gone: list[str],
    timeout: float,
) -> None:
    """One request: each graph is dropped and its staged triples added, and the graphs of
    digests gone from the build are dropped. A store runs one update request as one
    transaction. (Not `MOVE`, which also deletes the staging graph in that transaction:
    Virtuoso aborts a transaction whose log outgrows `TransactionAfterImageLimit`, and the
    staging graph is emptied in a request of its own after the swap.)"""
    operations = [
        f"DROP SILENT GRAPH {ox.NamedNode(iri)} ;\n"
        f"ADD SILENT GRAPH {ox.NamedNode(STAGING + iri)} TO GRAPH {ox.NamedNode(iri)}"
        for iri in graphs
    ]
    operations += [f"DROP SILENT GRAPH {ox.NamedNode(iri)}" for iri in gone]
    try:
        _sparql_update(session, target, " ;\n".join(operations), timeout=timeout)
    except RemoteError as error:
        if error.status is None:  # no answer: the store may be swapping still
            outcome = (
                "the store holds the old graph or, once it has swapped, the new one; "
                "push again to be sure of the new one"
            )
        else:
            outcome = "the swap was refused, so the store holds the old graph"
            if "SR325" in str(error):  # Virtuoso's transaction log limit
                outcome += (
                    "; Virtuoso swaps a graph this large only with a larger "
                    "TransactionAfterImageLimit in the [Parameters] of virtuoso.ini"
                )
        raise RemoteError(f"{error} ({outcome})", error.status) from None


def _staging_drops(graphs: Iterable[str]) -> str:
    return " ;\n".join(f"DROP SILENT GRAPH {ox.NamedNode(STAGING + iri)}" for iri in graphs)


def _gone_digest_graphs(session: Session, endpoint: str, graphs: Iterable[str]) -> list[str]:
    """The store's digest graphs under the same base as this build's, of digests the build
    no longer has: a day dropped from the corpus, whose facts `--replace` must drop too."""
    prefixes = {iri[: iri.rindex(DIGEST) + len(DIGEST)] for iri in graphs if DIGEST in iri}
    if not prefixes:
        return []
    tests = " || ".join(f"STRSTARTS(STR(?g), {ox.Literal(p)})" for p in sorted(prefixes))
    text = f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?s ?p ?o }} FILTER ({tests}) }}"
    answer = query(session, endpoint, text, source="digest graphs")
    assert isinstance(answer, Solutions)
    found = {row[0].value for row in answer.rows if isinstance(row[0], ox.NamedNode)}
    return sorted(found - set(graphs))


def _drop(session: Session, target: Target, iri: str, protocol: str) -> None:
    if protocol == "graph-store":
        assert target.store is not None
        session.request("DELETE", _with_graph(target.store, iri))
        return
    _sparql_update(session, target, f"DROP SILENT GRAPH {ox.NamedNode(iri)}", idempotent=True)


def _sparql_update(
    session: Session,
    target: Target,
    text: str,
    idempotent: bool = False,
    timeout: float | None = None,
) -> None:
    session.request(
        "POST",
        target.update_url,
        urllib.parse.urlencode({"update": text}).encode("utf-8"),
        {"Content-Type": "application/x-www-form-urlencoded"},
        idempotent=idempotent,
        timeout=timeout,
    )


def _check_iri(iri: str) -> None:
    ox.NamedNode(iri)  # raises ValueError on anything that is not an absolute IRI


def _with_graph(url: str, iri: str) -> str:
    return url + ("&" if "?" in url else "?") + urllib.parse.urlencode({"graph": iri})


def _graph_store(session: Session, target: Target, iri: str, chunk: Chunk, replace: bool) -> None:
    """PUT replaces the graph, POST adds to it; either may be repeated for ground triples."""
    assert target.store is not None
    session.request(
        "PUT" if replace else "POST",
        _with_graph(target.store, iri),
        chunk.data,
        {"Content-Type": "application/n-triples"},
        idempotent=not chunk.blank,
    )


def _update(session: Session, target: Target, iri: str, chunk: Chunk, replace: bool) -> None:
    graph = str(ox.NamedNode(iri))
    data = chunk.data.decode("utf-8")
    # Virtuoso refuses blank nodes in INSERT DATA; a template with an empty WHERE makes
    # the same fresh nodes everywhere (one solution, one set of blank nodes).
    if chunk.blank:
        text = f"INSERT {{ GRAPH {graph} {{\n{data}}} }} WHERE {{}}"
    else:
        text = f"INSERT DATA {{ GRAPH {graph} {{\n{data}}} }}"
    if replace:
        text = f"DROP SILENT GRAPH {graph} ;\n{text}"
    # Inserting ground triples twice leaves the same set; fresh blank nodes would double.
    _sparql_update(session, target, text, idempotent=not chunk.blank)
