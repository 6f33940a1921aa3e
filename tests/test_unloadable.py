"""No traceback from any command: `query`, `push`, `diff`, `eval` and `html` fed an output
folder that a store cannot load end in one line naming the file, and exit 1; an error
nobody foresaw is one line too, and `--debug` shows its traceback."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES, SEEDS, build
from kgraph import api
from kgraph.cli import cli

OUTPUTS = ("graph.ttl", "graph.nt", "graph.jsonld", "graph.json")
OVER_TOKEN = 17 * 1024 * 1024  # over pyoxigraph's 16 MiB token buffer


def _oversized(out: Path) -> None:
    """What an older kgraph wrote from a 17 MB summary: one term over the token limit."""
    literal = "a" * OVER_TOKEN
    triple = f'<https://w3id.org/kgraph/id/x> <https://w3id.org/kgraph/ns#text> "{literal}" .\n'
    for name in ("graph.nt", "graph.ttl"):
        with (out / name).open("a", encoding="utf-8") as handle:
            handle.write(triple)
    data = (out / "graph.json").read_text("utf-8")
    (out / "graph.json").write_text(data[: len(data) // 3], "utf-8")  # and a torn graph.json


def _truncated(out: Path) -> None:
    for name in OUTPUTS:
        data = (out / name).read_bytes()
        (out / name).write_bytes(data[: len(data) // 2])


def _garbage(out: Path) -> None:
    noise = random.Random(7)
    for name in OUTPUTS:
        (out / name).write_bytes(bytes(noise.randrange(256) for _ in range(5000)))


def _nested(out: Path) -> None:
    """Brackets nested deeper than any recursive parser goes."""
    for name in OUTPUTS:
        (out / name).write_text("[" * 200_000, "utf-8")


DAMAGES: dict[str, Callable[[Path], None]] = {
    "oversized": _oversized,
    "truncated": _truncated,
    "garbage": _garbage,
    "nested": _nested,
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("unloadable") / "good"
    code, _, stderr = build([str(EXAMPLES)], out, *(f"--only={n}" for n in api.OUTPUTS[:4]))
    assert code == 0, stderr
    return out


@pytest.fixture(params=sorted(DAMAGES))
def damaged(request: pytest.FixtureRequest, built: Path, tmp_path: Path) -> Path:
    out = tmp_path / request.param
    shutil.copytree(built, out)
    DAMAGES[request.param](out)
    return out


def _commands(out: Path, good: Path) -> dict[str, list[str]]:
    return {
        "query": ["query", str(out), "--name", "hotspots"],
        "query-no-cache": ["query", str(out), "--name", "hotspots", "--no-cache"],
        "push": ["push", str(out), "--endpoint", "http://127.0.0.1:9/query"],
        "diff": ["diff", str(good), str(out)],
        "diff-old": ["diff", str(out), str(good)],
        "eval": ["eval", "--gold", str(SEEDS / "gold.json"), str(out)],
        "html": ["html", str(out), "-o", str(out.parent / f"{out.name}.html")],
    }


@pytest.mark.parametrize("command", sorted(_commands(Path(), Path())))
def test_unloadable_folder_is_one_line_and_exit_1(command: str, damaged: Path, built: Path):
    args = _commands(damaged, built)[command]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    lines = result.stderr.splitlines()
    assert result.exit_code == 1, (result.exit_code, result.stderr)
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and "unforeseen" not in result.stderr
    assert str(damaged) in lines[0]  # names the file that failed
    assert result.stdout == ""


def test_unloadable_oversized_term_is_named_for_what_it_is(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "old"
    shutil.copytree(built, out)
    _oversized(out)
    result = CliRunner().invoke(cli, ["query", str(out), "--name", "hotspots"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"kgraph: {out / 'graph.nt'}:0: not loadable: a term is longer than pyoxigraph's "
        "16 MiB limit (Reached the buffer maximal size of 16777216); rebuild it with this "
        "kgraph, which skips entries that long\n"
    )


def test_unloadable_console_script_prints_no_traceback(built: Path, tmp_path: Path) -> None:
    """The installed `kgraph` command, as a pipeline runs it."""
    out = tmp_path / "torn"
    shutil.copytree(built, out)
    _truncated(out)
    kgraph = Path(sys.executable).parent / "kgraph"
    for args in _commands(out, built).values():
        run = subprocess.run([str(kgraph), *args], capture_output=True, text=True, timeout=120)
        assert run.returncode == 1, (args, run.stderr)
        assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr


def test_unloadable_unforeseen_error_is_one_line_and_debug_shows_it(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(old: object, new: object) -> None:
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(api, "diff", broken)
    result = CliRunner().invoke(cli, ["diff", str(built), str(built)], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stderr == (
        "kgraph: diff failed: RuntimeError: a bug over two lines "
        "(unforeseen; `kgraph --debug diff …` shows the traceback)\n"
    )
    with pytest.raises(RuntimeError, match="a bug"):
        CliRunner().invoke(cli, ["--debug", "diff", str(built), str(built)], catch_exceptions=False)
