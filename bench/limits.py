"""How long one RDF term may be before a store refuses it, or slows to a crawl: the figures
behind `kgraph.limits.MAX_ENTRY_CHARS`.

    .venv/bin/python bench/limits.py [--runs 3] [--virtuoso]

For terms (one literal of a one-triple graph) of several lengths it prints:
- pyoxigraph: whether N-Triples and Turtle parse (its parsers stop at a 16 MiB token);
- rapper: the median CPU seconds raptor2 takes to read the N-Triples and the Turtle file,
  over `--runs` runs, for a literal of worst-case escapes (`\\u0001`: six bytes a character,
  what kgraph writes for a control character);
- with `--virtuoso`: whether Virtuoso (started from tests/servers.py) stores the literal
  whole over SPARQL Update, which is how `kgraph push` loads it.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import pyoxigraph as ox

OXIGRAPH_TOKEN = 16 * 1024 * 1024


def _graph(chars: int, escaped: bool) -> tuple[bytes, bytes]:
    body = "\\u0001" * chars if escaped else "a" * chars
    nt = f'<http://e.org/s> <http://e.org/p> "{body}" .\n'.encode()
    return nt, nt  # the same line is valid Turtle


def _pyoxigraph_loads(data: bytes, fmt: ox.RdfFormat) -> bool:
    try:
        return len(list(ox.parse(input=data, format=fmt))) == 1
    except (SyntaxError, MemoryError):
        return False


def _rapper_seconds(path: Path, syntax: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    subprocess.run(["rapper", "-q", "-c", "-i", syntax, str(path)], check=True)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--virtuoso", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        print("pyoxigraph, one ASCII literal around its 16 MiB token buffer:")
        for chars in (OXIGRAPH_TOKEN - 64, OXIGRAPH_TOKEN + 64):
            nt, ttl = _graph(chars, escaped=False)
            print(
                f"  {chars:>10,} chars: N-Triples {_pyoxigraph_loads(nt, ox.RdfFormat.N_TRIPLES)}"
                f", Turtle {_pyoxigraph_loads(ttl, ox.RdfFormat.TURTLE)}"
            )
        print(f"rapper, CPU seconds (median of {args.runs}), a literal of \\u0001 escapes:")
        for chars in (30_000, 100_000, 300_000):
            nt, _ = _graph(chars, escaped=True)
            path = folder / "term.nt"
            path.write_bytes(nt)
            times = {
                syntax: statistics.median(_rapper_seconds(path, syntax) for _ in range(args.runs))
                for syntax in ("ntriples", "turtle")
            }
            print(
                f"  {chars:>10,} chars ({len(nt):>9,} bytes): N-Triples "
                f"{times['ntriples']:.2f}s, Turtle {times['turtle']:.2f}s"
            )
        if args.virtuoso:
            _virtuoso(folder)


def _virtuoso(folder: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from kgraph import remote
    from servers import virtuoso

    print("Virtuoso over SPARQL Update, one ASCII literal:")
    (folder / "virtuoso").mkdir()
    with virtuoso(folder / "virtuoso") as running:
        server = remote.Server(running.user, running.password, 600)
        for chars in (100_000, 1_000_000, 4_000_000):
            graph = f"http://e.org/g{chars}"
            triple = f'<http://e.org/s> <http://e.org/p> "{"a" * chars}"'
            text = f"INSERT DATA {{ GRAPH <{graph}> {{ {triple} }} }}"
            form = urllib.parse.urlencode({"update": text}).encode()
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
            try:
                remote.request(server, "POST", running.update, form, headers)
                query = f"SELECT (STRLEN(?o) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"
                answer = remote.query(server, running.query, query, (), "bench")
                said = f"stored, {answer.rows[0][0].value} chars read back"  # type: ignore[union-attr]
            except remote.RemoteError as error:
                said = f"refused: {error}"
            print(f"  {chars:>10,} chars: {said}")


if __name__ == "__main__":
    main()
