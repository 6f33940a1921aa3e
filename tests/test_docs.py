"""The README stays true: its SPARQL examples run on the examples' graph and answer something."""

from __future__ import annotations

import re
from pathlib import Path

import pyoxigraph as ox

README = (Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")


def test_docs_readme_sparql_examples_run_and_return_rows(examples_out) -> None:
    queries = re.findall(r"```sparql\n(.*?)```", README, re.S)
    assert len(queries) >= 3
    store = ox.Store()
    store.bulk_load(path=str(examples_out / "graph.ttl"), format=ox.RdfFormat.TURTLE)
    for query in queries:
        rows = list(store.query(query))
        assert rows, query


def test_docs_readme_names_the_test_command_that_ci_runs() -> None:
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text("utf-8")
    command = ci.strip().splitlines()[-1]
    assert command in README
