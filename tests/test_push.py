"""`kgraph push` against real servers on 127.0.0.1: Oxigraph (PyPI) and Virtuoso (Debian).

Each server is started once for this module, on a free port with a temporary database,
and stopped at the end. Every push is checked by counting in the store, and the named
queries must give the same answers from the store as from the local graph.
"""

from __future__ import annotations

import http.server
import itertools
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

import servers
from conftest import DATA, SEEDS, build
from kgraph import query, remote
from kgraph.cli import cli
from kgraph.push import DEFAULT_GRAPH, chunks, partition
from kgraph.results import Solutions
from test_query_named import EXPECTED

KG = "https://w3id.org/kgraph/ns#"
ID = "https://w3id.org/kgraph/id/"
DIGESTS = [
    f"{ID}digest/{d}" for d in ("day1.txt-aaaa1111", "day2.txt-bbbb2222", "tags.txt-cccc3333")
]
SEED_CASES = [
    ("who-touches", {"symbol": "_sliding_window_lookup"}),
    ("who-touches", {"symbol": "MambaManager.get_num_blocks_to_allocate"}),
    ("who-touches", {"file": "lru.py"}),
    ("hotspots", {}),
    ("shared-code", {}),
    ("pr", {"title": "KV Offload"}),
    ("decisions-since", {"date": "2026-01-01"}),
    ("patterns", {}),
    ("topic", {"name": "SWA"}),
    ("unresolved", {}),
]


def triples_of(path: Path) -> list[ox.Triple]:
    return [q.triple for q in ox.parse(path=str(path))]


# ---- without a server ------------------------------------------------------------------------


def test_push_partition_gives_each_digest_the_facts_it_supports() -> None:
    triples = triples_of(DATA / "named-queries.ttl")
    graphs = partition(triples, DEFAULT_GRAPH)
    assert sorted(graphs) == sorted([*DIGESTS, DEFAULT_GRAPH])
    assert {t for members in graphs.values() for t in members} == set(triples)
    # Only the pattern no PR applies has no digest behind it.
    assert {t.subject.value for t in graphs[DEFAULT_GRAPH]} == {f"{ID}pattern/atomic-rollback"}

    def holders(s: str, p: str, o: str | None = None) -> list[str]:
        return sorted(
            g
            for g, members in graphs.items()
            for t in members
            if t.subject.value == ID + s
            and t.predicate.value == p
            and (o is None or t.object.value == o)
        )

    day1, day2, tags = DIGESTS
    assert holders("entry/day1.txt-aaaa1111/2", KG + "line") == [day1]
    assert holders("mention/tags.txt-cccc3333/3/text-33-35", KG + "surface") == [tags]
    # #101 is described on both days: its title is in both graphs, each entry in its own.
    assert holders("pr/acme/kv/101", "http://purl.org/dc/terms/title") == [day1, day2]
    assert holders("pr/acme/kv/101", KG + "describedBy", ID + "entry/day1.txt-aaaa1111/2") == [day1]
    # A link between PRs of different digests is kept by each of them.
    assert holders("pr/acme/kv/101", KG + "sharesCodeWith", ID + "pr/acme/kv/title-c0ffee") == [
        day1,
        day2,
        tags,
    ]
    # Code named on several days belongs to each, and so does the class a method names.
    assert holders("symbol/acme/kv/_is_current", KG + "name") == [day1]
    assert holders("symbol/acme/kv/LRUPolicy.evict", KG + "qualifiedName") == [day1, day2, tags]
    assert holders("symbol/acme/kv/LRUPolicy", KG + "name") == [day1, day2, tags]
    # Dropping day1's graph leaves #101 known (day2 describes it) but not day1's entry.
    rest = {t for g in (day2, tags, DEFAULT_GRAPH) for t in graphs[g]}
    subjects = {t.subject.value for t in rest}
    assert ID + "pr/acme/kv/101" in subjects and ID + "entry/day1.txt-aaaa1111/2" not in subjects


def test_push_chunks_are_bounded_and_keep_blank_nodes_together() -> None:
    data = (
        '<http://x/a> <http://x/p> _:b1 .\n_:b1 <http://x/q> "1" .\n'
        + "".join(f'<http://x/s{i}> <http://x/p> "{i}" .\n' for i in range(25))
        + "_:b2 <http://x/q> _:b1 .\n"
    )
    triples = [q.triple for q in ox.parse(data.encode(), format=ox.RdfFormat.N_TRIPLES)]
    bodies = chunks(triples, 10)
    sizes = [len(chunk.data.decode().splitlines()) for chunk in bodies]
    assert sizes == [10, 10, 5, 3]
    assert [chunk.blank for chunk in bodies] == [False, False, False, True]
    assert "_:" in bodies[-1].data.decode()
    assert not any("_:" in chunk.data.decode() for chunk in bodies[:-1])
    assert [c.data for c in chunks([], 10)] == [b""]


# ---- real servers ----------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["oxigraph", "virtuoso"])
def server(request, tmp_path_factory) -> Iterator[servers.Running]:
    folder = tmp_path_factory.mktemp(request.param)
    with getattr(servers, request.param)(folder) as running:
        yield running


def push(running: servers.Running, out: Path, *args: str) -> tuple[int, str, str]:
    auth = ["--user", running.user] if running.user else []
    env = {"KGRAPH_PASSWORD": running.password or ""}
    result = CliRunner().invoke(
        cli,
        ["push", str(out), "--endpoint", running.query, "--update", running.update, *auth, *args],
        catch_exceptions=False,
        env=env,
    )
    return result.exit_code, result.stdout, result.stderr


def counted(running: servers.Running, graphs: list[str]) -> int:
    with remote.Server().session() as session:
        return remote.count(session, running.query, graphs)


def ask(endpoint: str, text: str, graphs: list[str], source: str = "query") -> object:
    with remote.Server().session() as session:
        return remote.query(session, endpoint, text, graphs, source)


def normalized(answer: object) -> list[tuple[object, ...]]:
    """Rows as comparable values; xsd:string and simple literals are one thing."""
    assert isinstance(answer, Solutions)

    def term(t: object) -> object:
        if isinstance(t, ox.Literal):
            return (t.value, t.language, None if t.language else t.datatype.value)
        return None if t is None else (type(t).__name__, t.value)  # type: ignore[attr-defined]

    return sorted((tuple(term(t) for t in row) for row in answer.rows), key=repr)


def same_answers(
    running: servers.Running, out: Path, graphs: list[str], cases: list[tuple[str, dict]]
) -> None:
    for name, params in cases:
        text = query.bind(query.named_query(name), params)
        here = query.run_local(out, text, name).answer
        there = ask(running.query, text, graphs, name)
        assert isinstance(here, Solutions) and isinstance(there, Solutions)
        assert there.variables == here.variables
        assert normalized(there) == normalized(here), (running.name, name, params)


def test_push_seeds_round_trip_with_the_same_answers(server, seeds_out) -> None:
    local = len(set(triples_of(seeds_out / "graph.nt")))
    graph = f"urn:kgraph:test:{server.name}:seeds"
    code, out, err = push(server, seeds_out, "--store", server.store, "--graph", graph, "--replace")
    assert code == 0, err
    assert f"pushed {local} triples to 1 graph(s) over the Graph Store protocol" in out
    assert f"the store counts {local}" in out
    assert counted(server, [graph]) == local
    same_answers(server, seeds_out, [graph], SEED_CASES)
    # The CLI asks the server too, with the same table as the local run.
    args = ["-n", "who-touches", "-p", "symbol=_sliding_window_lookup", "-f", "csv"]
    far = CliRunner().invoke(cli, ["query", "--endpoint", server.query, "--graph", graph, *args])
    near = CliRunner().invoke(cli, ["query", str(seeds_out), *args])
    assert far.exit_code == 0 and far.stdout == near.stdout and "19" in far.stdout


def test_push_per_digest_graphs_over_sparql_update_answer_alike(server, fixture_out) -> None:
    main = f"urn:kgraph:test:{server.name}:fixture"
    code, out, err = push(server, fixture_out, "--graph", main, "--graph-per-digest", "--replace")
    assert code == 0, err
    total = len(set(triples_of(fixture_out / "graph.ttl")))
    assert "over SPARQL Update" in out and f"({total} distinct)" in out
    graphs = partition(triples_of(fixture_out / "graph.ttl"), main)
    for iri, members in graphs.items():
        assert counted(server, [iri]) == len(members)
        assert f"sent {len(members)} triples to <{iri}>" in err
    cases = [(name, params) for name, params, _ in EXPECTED]
    same_answers(server, fixture_out, [main, *DIGESTS], cases)
    # Non-ASCII parameters and language tags survive the trip.
    text = query.bind(query.named_query("topic"), {"name": "滑动窗口注意力"})
    answer = ask(server.query, text, [main, *DIGESTS])
    assert isinstance(answer, Solutions) and len(answer.rows) == 1


def test_push_replaces_or_adds(server, fixture_out, seeds_out) -> None:
    graph = f"urn:kgraph:test:{server.name}:replace"
    seeds_triples = set(triples_of(seeds_out / "graph.nt"))
    both = len(seeds_triples | set(triples_of(fixture_out / "graph.ttl")))
    seeds = len(seeds_triples)
    assert push(server, fixture_out, "--store", server.store, "--graph", graph)[0] == 0
    code, out, err = push(server, seeds_out, "--store", server.store, "--graph", graph)
    assert code == 0, err  # added: the graph holds both (dataclasses.replace is in both)
    assert counted(server, [graph]) == both
    code, out, _ = push(server, seeds_out, "--graph", graph, "--replace", "--chunk-size", "100")
    assert code == 0
    # The chunks, and three more: emptying the staging graph, the swap, emptying it again.
    assert f"in {math.ceil(seeds / 100) + 3} request(s); the store counts {seeds}" in out
    assert counted(server, [graph]) == seeds
    assert push(server, seeds_out, "--graph", graph)[0] == 0  # again: a set, nothing changes
    assert counted(server, [graph]) == seeds


@pytest.mark.parametrize("protocol", ["graph-store", "update"])
def test_push_keeps_blank_nodes_whole_across_chunks(server, tmp_path, protocol) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "graph.nt").write_text(
        "".join(f'<http://x/s{i}> <http://x/p> "{i}" .\n' for i in range(7))
        + '<http://x/a> <http://x/p> _:b1 .\n_:b1 <http://x/q> "deep" .\n',
        "utf-8",
    )
    graph = f"urn:kgraph:test:{server.name}:blank-{protocol}"
    code, _, err = push(
        server,
        out,
        "--graph",
        graph,
        "--replace",
        "--chunk-size",
        "2",
        "--store",
        server.store,
        "--protocol",
        protocol,
    )
    assert code == 0, err
    text = "SELECT ?v WHERE { <http://x/a> <http://x/p> ?b . ?b <http://x/q> ?v }"
    answer = ask(server.query, text, [graph])
    assert isinstance(answer, Solutions) and [r[0].value for r in answer.rows] == ["deep"]


def test_push_count_mismatch_fails_with_exit_1(server, fixture_out) -> None:
    """Triples sent to one store but counted on another: the check must catch it."""
    total = len(set(triples_of(fixture_out / "graph.ttl")))
    folder = fixture_out.parent / f"other-{server.name}"
    folder.mkdir()
    with servers.oxigraph(folder) as other:
        code, _, err = push(server, fixture_out, "--endpoint", other.query, "--graph", "urn:x:g")
    assert code == 1
    assert f"<urn:x:g>: sent {total} triples, but the store counts 0" in err


def test_push_falls_back_to_update_when_the_graph_store_refuses(fixture_out, tmp_path) -> None:
    with servers.oxigraph(tmp_path) as running:
        code, out, err = push(
            running, fixture_out, "--store", running.query, "--graph", "urn:x:g", "--replace"
        )
    assert code == 0, err
    assert re.search(r"no Graph Store protocol at \S+/query \(PUT \S+: HTTP 404", err)
    total = len(set(triples_of(fixture_out / "graph.ttl")))
    assert "over SPARQL Update" in out and f"the store counts {total} " in out


def test_push_virtuoso_wants_its_password(fixture_out, tmp_path) -> None:
    with servers.virtuoso(tmp_path) as running:
        args = ["push", str(fixture_out), "--endpoint", running.query]
        args += ["--store", running.store, "--user", "dba"]
        wrong = CliRunner().invoke(cli, args, env={"KGRAPH_PASSWORD": "nope"})
        assert wrong.exit_code == 1 and "HTTP 401" in wrong.stderr
        missing = CliRunner().invoke(cli, args, env={"KGRAPH_PASSWORD": None})
        assert missing.exit_code == 2
        assert "needs the password in the environment variable KGRAPH_PASSWORD" in missing.stderr
        assert counted(running, [DEFAULT_GRAPH]) == 0


def test_push_unreachable_server_exits_1(fixture_out) -> None:
    port = servers.free_port()
    result = CliRunner().invoke(
        cli, ["push", str(fixture_out), "--endpoint", f"http://127.0.0.1:{port}/sparql"]
    )
    assert result.exit_code == 1 and "cannot reach the server" in result.stderr


def test_push_bad_graph_iri_is_a_usage_error(fixture_out) -> None:
    result = CliRunner().invoke(
        cli, ["push", str(fixture_out), "--endpoint", "http://127.0.0.1:9/q", "--graph", "a b"]
    )
    assert result.exit_code == 2 and "Invalid IRI" in result.stderr


def test_push_unreadable_graph_exits_1_with_its_line(tmp_path) -> None:
    (tmp_path / "graph.nt").write_text('<http://x/a> <http://x/b> "c" .\n<http://x/a> oops\n')
    result = CliRunner().invoke(cli, ["push", str(tmp_path), "--endpoint", "http://127.0.0.1:9/"])
    assert result.exit_code == 1
    assert f"{tmp_path / 'graph.nt'}:2: not valid RDF" in result.stderr


def test_push_missing_graph_folder_is_a_usage_error(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["push", str(tmp_path), "--endpoint", "http://127.0.0.1:9/"])
    assert result.exit_code == 2 and "no graph to query" in result.stderr


def test_push_servers_started_quickly(server) -> None:
    assert server.started_in < (10 if server.name == "oxigraph" else 60)
    assert shutil.which("virtuoso-t") or server.name == "oxigraph"


def test_push_per_digest_replace_drops_the_graph_of_a_digest_gone_from_the_build(
    server, tmp_path
) -> None:
    """A day removed from the corpus: pushing the rebuild with --replace drops its graph,
    over either protocol, and leaves no graph of another base alone untouched."""
    (tmp_path / "two").mkdir()
    for name in ("000_0a3d3bb7afca9fae.txt", "001_fa5218c0feccaf24.txt"):
        shutil.copy(SEEDS / name, tmp_path / "two" / name)
    assert build([str(tmp_path / "two")], tmp_path / "both", "--only", "ntriples")[0] == 0
    one = [str(tmp_path / "two" / "000_0a3d3bb7afca9fae.txt")]
    assert build(one, tmp_path / "one", "--only", "ntriples")[0] == 0
    main = f"urn:kgraph:test:{server.name}:days"
    graphs = partition(triples_of(tmp_path / "both" / "graph.nt"), main)
    (gone,) = set(graphs) - set(partition(triples_of(tmp_path / "one" / "graph.nt"), main))
    for via in ([], ["--store", server.store]):
        args = ["--graph", main, "--graph-per-digest", "--replace", *via]
        assert push(server, tmp_path / "both", *args)[0] == 0
        assert counted(server, [gone]) > 0
        code, out, err = push(server, tmp_path / "one", *args)
        assert code == 0, err
        assert "dropped 1 graph(s) of digests no longer in the build" in out
        assert counted(server, [gone]) == 0


# ---- on the wire: each chunk once, and a replace that is the old graph or the new one -------


KGRAPH = Path(sys.executable).parent / "kgraph"


def uploads(wire: servers.Wire, running: servers.Running) -> list[servers.Received]:
    """The requests that carried the graph: to the Graph Store, or INSERTs over Update."""
    store = urllib.parse.urlsplit(running.store).path
    return [
        r
        for r in wire.received
        if r.target.startswith(store + "?")
        or (r.method == "POST" and b"INSERT" in urllib.parse.unquote_to_bytes(r.body))
    ]


@pytest.mark.parametrize("protocol", ["graph-store", "update"])
def test_push_sends_every_chunk_exactly_once(server, seeds_out, protocol) -> None:
    """Counted by a proxy in front of the real server: one connection, no chunk sent twice,
    and with Virtuoso's Digest, every chunk signed in advance."""
    graph = f"urn:kgraph:test:{server.name}:wire-{protocol}"
    expected = chunks(sorted(set(triples_of(seeds_out / "graph.nt")), key=str), 500)
    with servers.Wire(server.base, keep_bodies=True) as wire:
        args = ["push", str(seeds_out), "--endpoint", wire.url(server.query)]
        args += ["--update", wire.url(server.update), "--store", wire.url(server.store)]
        args += ["--user", server.user] if server.user else []
        args += ["--graph", graph, "--replace", "--chunk-size", "500", "--protocol", protocol]
        result = CliRunner().invoke(cli, args, env={"KGRAPH_PASSWORD": server.password or ""})
        assert result.exit_code == 0, result.stderr
        sent = uploads(wire, server)
    if protocol == "graph-store":
        assert sorted(r.body for r in sent) == sorted(c.data for c in expected)
        assert [r.method for r in sent] == ["PUT"] + ["POST"] * (len(expected) - 1)
    else:
        texts = [urllib.parse.parse_qs(r.body.decode())["update"][0] for r in sent]
        assert len(texts) == len(expected)
        for chunk in expected:
            assert sum(chunk.data.decode() in text for text in texts) == 1
    assert wire.bytes_in < 1.01 * sum(r.size for r in sent) + 10_000  # heads and the rest
    # Before the chunks: emptying the staging graph (refused once by Virtuoso, which asks
    # for Digest then, and closes that connection); after them: the swap, emptying the
    # staging graph again, and the count.
    challenged = 1 if server.user else 0
    assert wire.connections == 1 + challenged
    assert len(wire.received) == len(expected) + 4 + challenged
    signed = ["authorization" in r.headers for r in wire.received]
    assert signed == (
        [False] + [True] * (len(signed) - 1) if server.user else [False] * len(signed)
    )
    assert counted(server, [graph]) == len({t for c in expected for t in triples_of_chunk(c)})


def triples_of_chunk(chunk) -> list[ox.Triple]:
    return [q.triple for q in ox.parse(chunk.data, format=ox.RdfFormat.N_TRIPLES)]


def staging_of(graph: str) -> str:
    return "urn:kgraph:staging:" + graph


def replacing(server: servers.Running, out: Path, graph: str, via: str) -> list[str]:
    args = [str(KGRAPH), "push", str(out), "--endpoint", server.query]
    args += ["--update", via + urllib.parse.urlsplit(server.update).path]
    args += ["--user", server.user] if server.user else []
    return [*args, "--graph", graph, "--replace", "--chunk-size", "200", "--protocol", "update"]


CHUNK = 10_000  # bytes: a request larger than this carries a chunk of 200 seed triples


@pytest.mark.parametrize("when", ["mid-way", "at the swap"])
def test_push_replace_killed_leaves_the_old_graph_or_the_new(
    server, seeds_out, fixture_out, when
) -> None:
    """SIGKILL of `kgraph push --replace`: mid-way through the chunks, the store still has
    the old graph whole; once the swap has gone out, the old one or the new one whole."""
    graph = f"urn:kgraph:test:{server.name}:killed-{when.replace(' ', '-')}"
    assert push(server, fixture_out, "--graph", graph, "--replace")[0] == 0
    old = counted(server, [graph])
    new = len(set(triples_of(seeds_out / "graph.nt")))
    assert old != new
    chunk_number = itertools.count()

    def stop_at(r: servers.Received) -> bool:
        if when == "mid-way":
            return r.size > CHUNK and next(chunk_number) == 3  # the fourth chunk
        return b"ADD+SILENT+GRAPH" in r.body

    env = {**os.environ, "KGRAPH_PASSWORD": server.password or ""}
    with servers.Wire(server.base, keep_bodies=True, hold=stop_at) as wire:
        process = subprocess.Popen(
            replacing(server, seeds_out, graph, wire.base), env=env, stderr=subprocess.PIPE
        )
        try:
            assert wire.held.wait(60), process.communicate(timeout=5)
            if when == "mid-way":
                assert counted(server, [staging_of(graph)]) == 3 * 200  # three chunks staged
                assert counted(server, [graph]) == old
            process.kill()
            process.wait(timeout=10)
        finally:
            process.kill()
            wire.release(forward=when == "at the swap")
        assert process.returncode == -signal.SIGKILL
        # Whether the store finishes a swap whose client died (Oxigraph does; Virtuoso rolls
        # it back when the connection goes): it is the old graph or the new, at every look.
        seen = set()
        for _ in range(15):
            seen.add(counted(server, [graph]))
            time.sleep(0.2)
        assert seen <= ({old} if when == "mid-way" else {old, new}), seen
        assert len(seen) <= 2
    # The next push empties what the killed one left in staging, and completes.
    code, _, err = push(server, seeds_out, "--graph", graph, "--replace", "--chunk-size", "200")
    assert code == 0, err
    assert counted(server, [graph]) == new and counted(server, [staging_of(graph)]) == 0


def test_push_replace_cut_off_by_the_server_keeps_the_old_graph(
    server, seeds_out, fixture_out
) -> None:
    """A connection dropped in the middle of a chunk, every time it is tried: one line,
    exit 1, the old graph whole. Dropped once only, the chunk is sent again and the push
    completes: adding ground triples twice leaves the same set, so such a chunk is retried."""
    graph = f"urn:kgraph:test:{server.name}:cut"
    assert push(server, fixture_out, "--graph", graph, "--replace")[0] == 0
    old = counted(server, [graph])
    new = len(set(triples_of(seeds_out / "graph.nt")))
    args = ["--graph", graph, "--replace", "--chunk-size", "200"]
    with servers.Wire(server.base, cut=lambda r: r.size > CHUNK) as wire:
        code, _, err = push(server, seeds_out, "--update", wire.url(server.update), *args)
        tried = [r for r in wire.received if r.size > CHUNK]
    assert code == 1
    assert len(tried) == 1 + remote.RETRIES
    (line,) = err.splitlines()[-1:]
    path = urllib.parse.urlsplit(server.update).path
    assert re.fullmatch(
        rf"kgraph: push failed: POST http://127\.0\.0\.1:\d+{path}: (the server broke off the "
        r"exchange|the connection broke) \(.+\)",
        line,
    ), err
    assert "Traceback" not in err
    assert counted(server, [graph]) == old
    first = itertools.count()
    with servers.Wire(server.base, cut=lambda r: r.size > CHUNK and next(first) == 0) as wire:
        code, _, err = push(server, seeds_out, "--update", wire.url(server.update), *args)
    assert code == 0, err
    assert counted(server, [graph]) == new


def test_push_replace_with_only_the_graph_store_says_it_is_not_atomic(fixture_out, tmp_path):
    with servers.oxigraph(tmp_path) as running:
        code, _, err = push(
            running, fixture_out, "--store", running.store, "--update", running.query,
            "--graph", "urn:x:g", "--replace",
        )  # fmt: skip
        assert code == 0, err
        assert re.search(
            r"no SPARQL Update at \S+/query \(POST \S+: HTTP 4\d\d .*\): --replace over the "
            r"Graph Store protocol alone writes the graph in place, so a push stopped midway "
            r"leaves part of it",
            " ".join(err.split()),
        ), err
        assert counted(running, ["urn:x:g"]) == len(set(triples_of(fixture_out / "graph.ttl")))


class BrokenOff(http.server.BaseHTTPRequestHandler):
    """Announces a body of 1000 bytes, sends 10, and closes the connection."""

    def _answer(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b'{"head": {')
        self.wfile.flush()
        self.close_connection = True

    do_GET = do_POST = do_PUT = do_HEAD = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("command", ["push", "query"])
def test_a_server_that_breaks_off_its_answer_is_one_line_and_exit_1(fixture_out, command):
    broken = http.server.ThreadingHTTPServer(("127.0.0.1", 0), BrokenOff)
    broken.daemon_threads = True
    threading.Thread(target=broken.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{broken.server_address[1]}/sparql"
    try:
        if command == "push":
            args = ["push", str(fixture_out), "--endpoint", url, "--replace"]
        else:
            args = ["query", "--endpoint", url, "-n", "hotspots"]
        run = subprocess.run([str(KGRAPH), *args], capture_output=True, text=True, timeout=60)
    finally:
        broken.shutdown()
    assert run.returncode == 1
    assert "Traceback" not in run.stderr and "IncompleteRead" not in run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith(("kgraph: push failed: POST ", "kgraph: POST "))
    assert "the server broke off the exchange" in line and "expected 1000" in line, line


def test_push_replace_that_virtuoso_refuses_for_its_size_keeps_the_old_graph(
    seeds_out, fixture_out, tmp_path
) -> None:
    """Virtuoso aborts a transaction whose log outgrows TransactionAfterImageLimit: the
    swap is refused whole, the old graph stays, and the message names the setting."""
    with servers.virtuoso(tmp_path, "TransactionAfterImageLimit = 50000\n") as running:
        graph = "urn:kgraph:test:virtuoso:too-large"
        small = ["--graph", graph, "--chunk-size", "20"]
        assert push(running, fixture_out, *small)[0] == 0
        old = counted(running, [graph])
        code, _, err = push(running, seeds_out, *small, "--replace")
        assert code == 1
        (line,) = err.splitlines()[-1:]
        assert "the swap was refused, so the store holds the old graph" in line, err
        assert "TransactionAfterImageLimit" in line
        assert counted(running, [graph]) == old
