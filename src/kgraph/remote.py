"""Talking to a SPARQL server: the SPARQL 1.1 Protocol and Graph Store HTTP Protocol.

Only the standard library (urllib): a push or a remote query is a handful of plain HTTP
requests, and one fewer dependency is one fewer thing to install beside a triple store.
Basic and Digest authentication both work (Virtuoso's protected endpoints use Digest);
every request has a timeout, and every failure becomes one `RemoteError` whose message
names the method, the address and what the server said.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyoxigraph as ox

from kgraph.errors import KgraphError
from kgraph.query import check_syntax
from kgraph.results import Answer, Boolean, Solutions, Triples, from_pyoxigraph

RESULTS_JSON = "application/sparql-results+json"
N_TRIPLES = "application/n-triples"
USER_AGENT = "kgraph"
SERVER_SAYS = 400  # characters of a server's error page kept in a message


class RemoteError(KgraphError):
    """A request failed: the server was unreachable or answered with an error."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Server:
    """Credentials and limits for one server; the password never appears in messages."""

    user: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout: float = 60.0

    def opener(self, url: str) -> urllib.request.OpenerDirector:
        if self.user is None:
            return urllib.request.build_opener()
        passwords = urllib.request.HTTPPasswordMgrWithDefaultRealm()
        passwords.add_password(None, url, self.user, self.password or "")
        return urllib.request.build_opener(
            urllib.request.HTTPBasicAuthHandler(passwords),
            urllib.request.HTTPDigestAuthHandler(passwords),
        )


def request(
    server: Server,
    method: str,
    url: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, str, bytes]:
    """One HTTP request; returns (status, content type, body) or raises `RemoteError`."""
    all_headers = {"User-Agent": USER_AGENT, **(headers or {})}
    req = urllib.request.Request(url, data=body, headers=all_headers, method=method)
    try:
        with server.opener(url).open(req, timeout=server.timeout) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        said = error.read(SERVER_SAYS * 4).decode("utf-8", "replace")
        said = " ".join(said.split())[:SERVER_SAYS]
        raise RemoteError(
            f"{method} {_public(url)}: HTTP {error.code} {error.reason}"
            + (f": {said}" if said else ""),
            error.code,
        ) from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        if isinstance(reason, TimeoutError):
            raise RemoteError(
                f"{method} {_public(url)}: no answer within {server.timeout:g}s"
            ) from None
        raise RemoteError(f"{method} {_public(url)}: cannot reach the server ({reason})") from None


def _public(url: str) -> str:
    """The address without its query string (which may hold a whole graph's name or data)."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def query(
    server: Server,
    endpoint: str,
    text: str,
    default_graphs: Sequence[str] = (),
    source: str = "query",
) -> Answer:
    """Run a query over the SPARQL Protocol (POST, form-encoded) and read its answer.

    The query is parsed locally first, so a syntax error is reported with its line and
    column before anything is sent. `default_graphs` become `default-graph-uri`
    parameters: the query's default graph is then the merge of those graphs.
    """
    form = check_syntax(text, source)
    fields = [("query", text)] + [("default-graph-uri", g) for g in default_graphs]
    accept = RESULTS_JSON if form != "CONSTRUCT" else f"{N_TRIPLES}, text/turtle;q=0.9"
    _, content_type, body = request(
        server,
        "POST",
        endpoint,
        urllib.parse.urlencode(fields).encode("utf-8"),
        {"Content-Type": "application/x-www-form-urlencoded", "Accept": accept},
    )
    if form == "CONSTRUCT":
        rdf_format = (
            ox.RdfFormat.TURTLE if "turtle" in content_type.lower() else ox.RdfFormat.N_TRIPLES
        )
        return Triples(tuple(sorted(ox.parse(body, format=rdf_format), key=str)))
    if form == "ASK":
        return _boolean(body, endpoint)
    try:
        return from_pyoxigraph(ox.parse_query_results(body, format=ox.QueryResultsFormat.JSON))
    except (SyntaxError, ValueError) as error:
        raise RemoteError(f"{_public(endpoint)}: unreadable results ({error})") from None


def _boolean(body: bytes, endpoint: str) -> Boolean:
    """An ASK answer; Virtuoso answers it as a one-row SELECT of 1 or 0."""
    try:
        document = json.loads(body)
        if "boolean" in document:
            return Boolean(bool(document["boolean"]))
        (row,) = document["results"]["bindings"]
        (value,) = row.values()
        return Boolean(value["value"] in ("1", "true"))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise RemoteError(f"{_public(endpoint)}: unreadable ASK answer") from None


def count(server: Server, endpoint: str, graphs: Sequence[str], distinct: bool = False) -> int:
    """How many triples the named graphs hold (distinct across them when asked)."""
    values = " ".join(str(ox.NamedNode(g)) for g in graphs)
    pattern = f"VALUES ?g {{ {values} }} GRAPH ?g {{ ?s ?p ?o }}"
    if distinct:
        text = f"SELECT (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?s ?p ?o WHERE {{ {pattern} }} }}"
    else:
        text = f"SELECT (COUNT(*) AS ?n) WHERE {{ {pattern} }}"
    answer = query(server, endpoint, text, source="count")
    assert isinstance(answer, Solutions)
    try:
        (row,) = answer.rows
        term = row[0]
        assert isinstance(term, ox.Literal)
        return int(term.value)
    except (ValueError, AssertionError):
        raise RemoteError(
            f"{_public(endpoint)}: the triple count came back as {answer.rows!r}"
        ) from None
