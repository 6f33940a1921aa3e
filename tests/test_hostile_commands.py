"""Property-based: every command, fed random hostile bytes for each file it reads, ends as a
command should: no traceback, no death by a signal (a segmentation fault), an exit code of
0, 1 or 2, and within seconds.

Each example is the real `kgraph` entry point in a forked child (`adversarial.run_cli`), so
that a segfault is seen as one (a negative exit code) instead of taking pytest down, and an
example costs milliseconds of start-up. The bytes mix random data with the pieces hostile
inputs are made of: brackets nested thousands deep, bad UTF-8, BOMs, NULs, fragments of
JSON, SPARQL, Turtle and digests, and catastrophic regular expressions for the catalogs.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adversarial import run_cli
from conftest import SEEDS

# Per command: a few seconds each on a busy two-core machine. KGRAPH_HOSTILE_EXAMPLES=500
# runs a longer search (minutes) before a release or after a change to a reader.
EXAMPLES = int(os.environ.get("KGRAPH_HOSTILE_EXAMPLES", "20"))
TIMEOUT = 60.0  # seconds for one command; a hang fails the example instead of CI


def _settings(examples: int = EXAMPLES) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


PIECES = st.sampled_from(
    [
        b"{", b"[", b"(", b"}", b"]", b")", b'"', b"'", b"\\", b"#", b"<", b">", b"\n", b"\r\n",
        b"\xff", b"\xc3", b"\xef\xbb\xbf", b"\xff\xfe", b"\x00", b"\xed\xa0\x80",
        b"2026-01-01\n", "o/r · 标签视图\n\n".encode(), b"## ", b"---\nrepo: o/r\n---\n",
        b'{"title": ', b'"summary": ', b'{"nodes": [', b'"edges": [', b'{"directed": true, ',
        b'"id": ', b'"kind": "PullRequest"', b"9" * 5000, b"\\ud800",
        b"SELECT * WHERE ", b"ASK { ", b"CONSTRUCT ", b"PREFIX kg: <https://w3id.org/kgraph/ns#>\n",
        b"@prefix kg: <https://w3id.org/kgraph/ns#> .\n", b"<http://x/a> <http://x/b> ",
        b'"x"@en .\n', b"`evict()`", b"(a|aa)+$",
    ]
)  # fmt: skip
# Nesting at depths that crashed or slowed a recursive parser (kgraph's limit is 64).
DEEP = st.builds(
    lambda piece, times: piece * times,
    st.sampled_from([b"[", b"{", b"(", b'{"a":', b"SELECT * WHERE {", b"[ <http://x/p> "]),
    st.sampled_from([2, 65, 1000, 5000, 30_000]),
)
HOSTILE = st.one_of(
    st.binary(max_size=600),
    st.lists(st.one_of(PIECES, DEEP, st.binary(max_size=24)), max_size=10).map(b"".join),
    st.tuples(PIECES, DEEP).map(b"".join),
)


def opened_by(*starts: bytes) -> st.SearchStrategy[bytes]:
    """HOSTILE, or deep nesting after what opens a file of one kind (a query, a JSON
    document): the shapes that reach the parser's recursion rather than its first check."""
    return st.one_of(HOSTILE, st.tuples(st.sampled_from(starts), DEEP).map(b"".join))


QUERIES = opened_by(b"SELECT * WHERE ", b"ASK ", b"SELECT * WHERE { FILTER(")
JSON_FILES = opened_by(b"", b'{"nodes": ', b'{"nodes": [], "edges": ', b"[")
CUES = st.lists(
    st.sampled_from(
        ["(a|aa)+$", "(x+x+)+y", "(\\\\w|\\\\w\\\\w)+$", "a", "(", ")", "[", "]", "{2,}", "*",
         "+", "?", "|", "\\\\", '\\"', "\\\\p{Han}", "缓存", "(?i)", "(?<=a)", "{e<=1}"]
    ),
    max_size=8,
).map("".join)  # fmt: skip
PREFIXES = (
    "@prefix kg: <https://w3id.org/kgraph/ns#> .\n"
    "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
    "@prefix ex: <https://example.org/> .\n"
)


def _catalog(cue: str) -> bytes:
    return (
        PREFIXES + 'ex:p a kg:DesignPattern ; skos:notation "p" ; skos:prefLabel "P"@en ;\n'
        f'    kg:cue "{cue}"@en .\n'
    ).encode("utf-8", "surrogateescape")


CATALOGS = st.one_of(HOSTILE, CUES.map(_catalog))
DIGEST = "2026-01-01\nFix the cache\nA summary naming `lru.py` and `evict()` aaaa xxxxy.\n"


def assert_ended_well(args: list[str]) -> None:
    code, _, stderr = run_cli(args, TIMEOUT)
    assert code >= 0, f"killed by signal {-code}: kgraph {' '.join(args)}\n{stderr[-2000:]}"
    assert "Traceback" not in stderr, stderr[-4000:]
    assert code in (0, 1, 2), (code, stderr[-2000:])


@contextmanager
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


@pytest.fixture(scope="module")
def good_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real build to pair with the hostile files."""
    folder = tmp_path_factory.mktemp("good")
    (folder / "d.txt").write_text(DIGEST, "utf-8")
    code, _, stderr = run_cli(["build", str(folder / "d.txt"), "-o", str(folder / "out"), "-q"])
    assert code == 0, stderr
    return folder / "out"


@_settings(max(EXAMPLES * 3 // 5, 1))
@given(
    digest=HOSTILE,
    name=st.sampled_from(["d.txt", "d.md", "d.jsonl", "d.ndjson", "d.markdown"]),
    catalog=st.none() | CATALOGS,
    topics=st.none() | HOSTILE,
)
def test_properties_build_survives_hostile_digests_and_catalogs(
    digest: bytes, name: str, catalog: bytes | None, topics: bytes | None
) -> None:
    with scratch() as root:
        (root / name).write_bytes(digest)
        args = ["build", str(root / name), "-o", str(root / "out"), "-q"]
        for option, content in (("--catalog", catalog), ("--topics", topics)):
            if content is not None:
                (root / f"{option[2:]}.ttl").write_bytes(content)
                args += [option, str(root / f"{option[2:]}.ttl")]
        assert_ended_well(args)


@_settings()
@given(query=QUERIES, graph=st.none() | HOSTILE, graph_name=st.sampled_from(["ttl", "nt"]))
def test_properties_query_survives_hostile_queries_and_graphs(
    good_out: Path, query: bytes, graph: bytes | None, graph_name: str
) -> None:
    with scratch() as root:
        (root / "q.rq").write_bytes(query)
        out = good_out
        if graph is not None:
            out = root / "out"
            out.mkdir()
            (out / f"graph.{graph_name}").write_bytes(graph)
        assert_ended_well(["query", str(out), str(root / "q.rq")])
        assert_ended_well(["query", str(out), str(root / "q.rq"), "--no-cache"])


@_settings()
@given(graph=JSON_FILES, old_side=st.booleans())
def test_properties_diff_survives_a_hostile_graph_json(
    good_out: Path, graph: bytes, old_side: bool
) -> None:
    with scratch() as root:
        (root / "graph.json").write_bytes(graph)
        pair = [str(root), str(good_out)] if old_side else [str(good_out), str(root)]
        assert_ended_well(["diff", *pair])


@_settings()
@given(
    gold=st.none() | JSON_FILES,
    graph=st.none() | JSON_FILES,
    graph_name=st.sampled_from(["json", "ttl"]),
)
def test_properties_eval_survives_hostile_gold_and_graphs(
    good_out: Path, gold: bytes | None, graph: bytes | None, graph_name: str
) -> None:
    with scratch() as root:
        gold_path = SEEDS / "gold.json"
        if gold is not None:
            gold_path = root / "gold.json"
            gold_path.write_bytes(gold)
        out = good_out
        if graph is not None:
            out = root / "out"
            out.mkdir()
            (out / f"graph.{graph_name}").write_bytes(graph)
        assert_ended_well(["eval", "--gold", str(gold_path), str(out)])


@_settings()
@given(graph=JSON_FILES, focus=st.booleans())
def test_properties_html_survives_a_hostile_graph_json(graph: bytes, focus: bool) -> None:
    with scratch() as root:
        (root / "graph.json").write_bytes(graph)
        assert_ended_well(["html", str(root), *(["--focus", "evict"] if focus else [])])


@_settings()
@given(graph=st.none() | HOSTILE, graph_name=st.sampled_from(["nt", "ttl", "jsonld"]))
def test_properties_push_survives_hostile_graphs_and_an_unreachable_store(
    good_out: Path, graph: bytes | None, graph_name: str
) -> None:
    with scratch() as root:
        out = good_out
        if graph is not None:
            out = root / "out"
            out.mkdir()
            (out / f"graph.{graph_name}").write_bytes(graph)
        endpoint = "http://127.0.0.1:9/sparql"  # the discard port: nothing listens
        assert_ended_well(["push", str(out), "--endpoint", endpoint, "--timeout", "2", "-q"])
