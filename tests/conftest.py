"""Shared fixtures: where the seeds are, and one real CLI build of them per session."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgraph.cli import cli

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KGRAPH_SHARED", ROOT.parent / "shared"))
SEEDS = SHARED / "seeds"
DEV = SHARED / "dev"
EXAMPLES = ROOT / "examples"
SCHEMAS = ROOT / "schemas"
DATA = Path(__file__).parent / "data"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="Rewrite tests/golden/* from the current build instead of comparing.",
    )


def build(inputs: list[str], out: Path, *extra: str) -> tuple[int, str, str]:
    """Run `kgraph build` through click, as a user would; returns (exit, stdout, stderr)."""
    result = CliRunner().invoke(
        cli, ["build", *inputs, "-o", str(out), *extra], catch_exceptions=False
    )
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="session")
def seeds_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("seeds-out")
    code, _, stderr = build([str(SEEDS)], out)
    assert code == 0, stderr
    return out


@pytest.fixture(scope="session")
def examples_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("examples-out")
    code, _, stderr = build([str(EXAMPLES)], out)
    assert code == 0, stderr
    return out


@pytest.fixture(scope="session")
def seeds_json(seeds_out: Path) -> dict:
    return json.loads((seeds_out / "graph.json").read_text("utf-8"))


@pytest.fixture(scope="session")
def gold() -> list[dict]:
    return json.loads((SEEDS / "gold.json").read_text("utf-8"))


@pytest.fixture(scope="session")
def dev_gold() -> list[dict]:
    return json.loads((DEV / "gold.json").read_text("utf-8"))


@pytest.fixture(scope="session")
def fixture_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output folder whose graph is the hand-written tests/data/named-queries.ttl."""
    out = tmp_path_factory.mktemp("fixture-out")
    shutil.copy(DATA / "named-queries.ttl", out / "graph.ttl")
    return out


# What the incremental and reuse tests build from: the outputs, without the HTML page (tested
# elsewhere, and its layout is slow on hundreds of entries), a seed digest to add, and
# about twenty generated digests in both styles and several repositories.
DATA_OUTPUTS = ("graph.ttl", "graph.nt", "graph.jsonld", "graph.json")
ONLY_DATA = [arg for name in ("turtle", "ntriples", "jsonld", "json") for arg in ("--only", name)]
SEED_DIGEST = "000_0a3d3bb7afca9fae.txt"


@pytest.fixture(scope="session")
def generated_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bench.generate import generate

    folder = tmp_path_factory.mktemp("corpus") / "digests"
    generate(folder, 300, seed=11)
    return folder
