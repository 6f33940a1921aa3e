"""Talking to a SPARQL server: the SPARQL 1.1 Protocol and Graph Store HTTP Protocol.

All requests of one push or one query go through one `Session`: one httpx client, so the
connection is kept alive from request to request. Credentials are sent only once the server
has asked for them, and from then on with every request (pre-emptively): Digest (which
Virtuoso's protected endpoints use) when the server offers it, else Basic. So that a large
upload is not sent only to be refused, the first request that carries one is preceded by a
HEAD of the same address, whose challenge (if any) is answered from then on; every byte of
the graph then goes over the wire once.

Why httpx rather than urllib or requests: urllib's auth handlers answer each 401 anew, on
a new connection each time, so every chunk of a push went out twice; requests needs the
authentication scheme named up front, while httpx's `DigestAuth.auth_flow` can be fed the
challenge of our probe and then signs every request itself; httpx is typed, and its errors
tell a refused connection, a timeout and a connection broken mid-answer apart.

Every request has a timeout. A request that cannot change the store twice (a query, PUT,
DELETE, HEAD, or one the caller marks `idempotent`) is retried when the connection fails or
the server is briefly unavailable (502, 503, 504); no timeout is retried. Every failure
becomes one `RemoteError` whose message names the method, the address and what went wrong.
httpx is imported when a session opens: commands that never talk to a server do not load it.
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyoxigraph as ox

from kgraph.errors import KgraphError
from kgraph.query import check_syntax
from kgraph.results import Answer, Boolean, Solutions, Triples, from_pyoxigraph

if TYPE_CHECKING:
    import httpx

RESULTS_JSON = "application/sparql-results+json"
N_TRIPLES = "application/n-triples"
USER_AGENT = "kgraph"
SERVER_SAYS = 400  # characters of a server's error page kept in a message
PROBE_ABOVE = 1 << 16  # bytes of a body worth a HEAD first, while no challenge is known
PROBE_WAIT = 10.0  # seconds the HEAD may take at most
RETRIES = 2  # further attempts of a request that may be repeated
RETRY_AFTER = 0.5  # seconds before the first retry, doubling
BUSY = frozenset({502, 503, 504})
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


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

    def session(self) -> Session:
        return Session(self)


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    content_type: str
    body: bytes


class Session:
    """One kept-alive connection to a server, for every request of a push or a query."""

    def __init__(self, server: Server) -> None:
        import httpx  # here, not at the top: only commands that talk to a server need it

        self._httpx = httpx
        self.server = server
        self.requests = 0  # sent over the wire, retries and probes included
        self._client = httpx.Client(
            timeout=server.timeout, headers={"User-Agent": USER_AGENT}, follow_redirects=True
        )
        self._auth: httpx.Auth | None = None  # once the server asked: what answers it
        self._probed = False  # whether a HEAD went ahead of a large body

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def request(
        self,
        method: str,
        url: str,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        idempotent: bool = False,
        timeout: float | None = None,
    ) -> Response:
        """One request, retried only when repeating it cannot change the outcome; returns
        the answer or raises `RemoteError`. `timeout` overrides the server's, for a request
        known to take long."""
        httpx = self._httpx
        repeatable = idempotent or method in IDEMPOTENT
        for attempt in range(RETRIES + 1):
            again = repeatable and attempt < RETRIES
            try:
                response = self._exchange(method, url, body, headers or {}, timeout)
            except httpx.TimeoutException:
                waited = timeout or self.server.timeout
                raise RemoteError(
                    f"{method} {_public(url)}: no answer within {waited:g}s"
                ) from None
            except httpx.TransportError as error:
                if not again:
                    raise RemoteError(f"{method} {_public(url)}: {_broken(error)}") from None
            else:
                if not (again and response.status_code in BUSY):
                    if response.status_code >= 400:
                        raise _refused(method, url, response)
                    content_type = response.headers.get("Content-Type", "")
                    return Response(response.status_code, content_type, response.content)
            time.sleep(RETRY_AFTER * 2**attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _exchange(
        self, method: str, url: str, body: bytes, headers: dict[str, str], timeout: float | None
    ) -> httpx.Response:
        """Send with the credentials the server wants, learning them from its first 401."""
        request = self._client.build_request(
            method, url, content=body, headers=headers, timeout=timeout or self.server.timeout
        )
        wants_probe = len(body) > PROBE_ABOVE and not self._probed
        if self._auth is None and self.server.user is not None and wants_probe:
            self._probed = True
            wait = min(PROBE_WAIT, timeout or self.server.timeout)
            probe = self._client.build_request("HEAD", url, timeout=wait)
            # A server that does not answer a HEAD: the request goes all the same.
            with contextlib.suppress(self._httpx.TransportError):
                self._take_challenge(probe, self._send(probe))
        if self._auth is None:
            response = self._send(request)
            signed = self._take_challenge(request, response)
            return response if signed is None else self._send(signed)
        flow = self._auth.auth_flow(request)
        response = self._send(next(flow))
        try:
            again = flow.send(response)  # Digest, with a stale nonce: the new challenge
        except StopIteration:
            return response
        return self._send(again)

    def _take_challenge(
        self, request: httpx.Request, response: httpx.Response
    ) -> httpx.Request | None:
        """Answer the challenge of a 401 from now on; returns `request` signed to answer it,
        or None when there is none we can answer."""
        if response.status_code != 401 or self.server.user is None:
            return None
        offered = " ".join(response.headers.get_list("www-authenticate")).lower()
        user, password = self.server.user, self.server.password or ""
        auth: httpx.Auth
        if "digest" in offered:
            auth = self._httpx.DigestAuth(user, password)
        elif "basic" in offered:
            auth = self._httpx.BasicAuth(user, password)
        else:
            return None
        flow = auth.auth_flow(request)
        first = next(flow)
        try:
            # Basic signs at once; Digest signs once it has read the challenge.
            signed = first if "authorization" in first.headers else flow.send(response)
        except StopIteration:
            return None
        self._auth = auth
        return signed

    def _send(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return self._client.send(request)


def _refused(method: str, url: str, response: httpx.Response) -> RemoteError:
    said = response.content[: SERVER_SAYS * 4].decode("utf-8", "replace")
    said = " ".join(said.split())[:SERVER_SAYS]
    return RemoteError(
        f"{method} {_public(url)}: HTTP {response.status_code} {response.reason_phrase}"
        + (f": {said}" if said else ""),
        response.status_code,
    )


def _broken(error: Exception) -> str:
    """What a failed exchange means to a user, from httpx's error."""
    name = type(error).__name__
    detail = str(error) or name
    if name == "ConnectError":
        return f"cannot reach the server ({detail})"
    if name == "RemoteProtocolError":
        return f"the server broke off the exchange ({detail})"
    if name in ("ReadError", "WriteError"):
        return f"the connection broke ({detail})"
    if name == "UnsupportedProtocol":
        return f"not an http(s) address ({detail})"
    return f"the request failed ({detail})"


def _public(url: str) -> str:
    """The address without its query string (which may hold a whole graph's name or data)."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def query(
    session: Session,
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
    answer = session.request(
        "POST",
        endpoint,
        urllib.parse.urlencode(fields).encode("utf-8"),
        {"Content-Type": "application/x-www-form-urlencoded", "Accept": accept},
        idempotent=True,  # a query changes nothing
    )
    content_type, body = answer.content_type, answer.body
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


def count(session: Session, endpoint: str, graphs: Sequence[str], distinct: bool = False) -> int:
    """How many triples the named graphs hold (distinct across them when asked)."""
    values = " ".join(str(ox.NamedNode(g)) for g in graphs)
    pattern = f"VALUES ?g {{ {values} }} GRAPH ?g {{ ?s ?p ?o }}"
    if distinct:
        text = f"SELECT (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?s ?p ?o WHERE {{ {pattern} }} }}"
    else:
        text = f"SELECT (COUNT(*) AS ?n) WHERE {{ {pattern} }}"
    answer = query(session, endpoint, text, source="count")
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
