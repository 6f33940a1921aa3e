"""The CLI as users and pipelines meet it: help text, summary line, exit codes, stdin."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from conftest import EXAMPLES, SEEDS, build
from kgraph import outputs
from kgraph.cli import cli


def _commands(group: click.Group):
    for name, command in group.commands.items():
        yield name, command
        if isinstance(command, click.Group):
            yield from _commands(command)


def test_cli_every_command_has_help() -> None:
    assert cli.help and len(cli.help) > 40
    for name, command in _commands(cli):
        assert command.help, f"kgraph {name} has no help"
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output


def test_cli_build_prints_a_one_line_summary(tmp_path) -> None:
    code, stdout, stderr = build([str(SEEDS)], tmp_path)
    assert code == 0, stderr
    assert stdout.startswith("2 digests, 15 entries, 13 PRs, 6 files,")
    assert stdout.count("\n") == 1
    for name in ("graph.ttl", "graph.nt", "graph.jsonld", "graph.json", "graph.html"):
        assert (tmp_path / name).stat().st_size > 0


def test_cli_build_reads_stdin_with_a_forced_format(tmp_path) -> None:
    text = (SEEDS / "001_fa5218c0feccaf24.txt").read_text("utf-8")
    result = CliRunner().invoke(
        cli, ["build", "-", "-o", str(tmp_path), "--format", "tag-view"], input=text
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("1 digests, 8 entries, 8 PRs")


def test_cli_build_glob_and_only(tmp_path) -> None:
    code, stdout, _ = build([str(EXAMPLES / "*.jsonl")], tmp_path, "--only", "json")
    assert code == 0 and stdout.startswith("1 digests, 2 entries")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".kgraph", "graph.json"]  # and the cache


def test_cli_missing_input_exits_1_naming_it(tmp_path) -> None:
    code, _, stderr = build([str(tmp_path / "nope.txt")], tmp_path / "out")
    assert code == 1
    assert "nope.txt:0: error: no such file or folder" in stderr


def test_cli_skipped_entry_exits_1_and_warning_exits_0_unless_strict(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "A", "summary": "s"}\n{oops\n', "utf-8")
    code, _, stderr = build([str(bad)], tmp_path / "o1")
    assert code == 1 and "bad.jsonl:2:" in stderr and "1 entries skipped" in stderr
    lonely = tmp_path / "lonely.txt"
    lonely.write_text("2026-01-01\nTitle one\nSummary.\nLonely title\n", "utf-8")
    assert build([str(lonely)], tmp_path / "o2")[0] == 0
    assert build([str(lonely)], tmp_path / "o3", "--strict")[0] == 1


@pytest.mark.parametrize(
    "args",
    [["build"], ["build", "x", "--format", "nope"], ["build", "x", "--base", "no-slash"], ["nope"]],
)
def test_cli_usage_errors_exit_2(args) -> None:
    assert CliRunner().invoke(cli, args).exit_code == 2


def test_cli_only_says_which_files_it_left_from_another_graph_and_readers_skip_them(
    tmp_path,
) -> None:
    """`--only json` after a full build leaves the RDF files and the page of the earlier
    graph: the build warns of each, and `query` will not answer from them; a build of the
    earlier graph again makes them current. `--no-cache` keeps no record."""
    out = tmp_path / "out"
    assert build([str(EXAMPLES)], out)[0] == 0
    code, _, stderr = build([str(SEEDS)], out, "--only", "json")
    assert code == 0
    left = ["graph.html", "graph.jsonld", "graph.nt", "graph.ttl"]
    assert [line.split(":")[0] for line in stderr.splitlines()[:-1]] == [
        str(out / name) for name in left
    ]
    assert "left from an earlier build" in stderr
    query = CliRunner().invoke(cli, ["query", str(out), "--name", "hotspots"])
    assert query.exit_code == 2 and ".nt: left from an earlier build" in query.stderr
    diff = CliRunner().invoke(cli, ["diff", str(out), str(out)])
    assert diff.exit_code == 0  # graph.json is the last build's
    code, _, stderr = build([str(EXAMPLES)], out, "--only", "turtle")
    assert code == 0 and stderr.splitlines()[0].startswith(f"{out / 'graph.json'}:0: warning")
    assert len(stderr.splitlines()) == 2  # graph.json alone, and the count
    assert CliRunner().invoke(cli, ["query", str(out), "--name", "hotspots"]).exit_code == 0
    assert build([str(EXAMPLES)], out, "--no-cache")[0] == 0
    assert not (out / ".kgraph" / "outputs.json").exists()


def test_cli_a_record_that_cannot_be_written_does_not_fail_the_build(tmp_path, monkeypatch) -> None:
    """A read-only OUT/.kgraph: the outputs are written, so the build is not a failure."""

    def refuse(path, data, durable=True) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    out = tmp_path / "out"
    assert build([str(EXAMPLES)], out)[0] == 0
    monkeypatch.setattr(outputs, "write_atomic", refuse)
    result = CliRunner().invoke(cli, ["build", str(SEEDS), "-o", str(out), "--only", "json"])
    assert result.exit_code == 0, result.stderr
    assert not (out / outputs.RECORD).exists()  # none, rather than a wrong one


def test_cli_html_redrawn_from_the_last_graph_is_no_longer_left_from_another(tmp_path) -> None:
    out = tmp_path / "out"
    assert build([str(EXAMPLES)], out)[0] == 0
    assert "graph.html:0: warning" in build([str(SEEDS)], out, "--only", "json")[2]
    assert CliRunner().invoke(cli, ["html", str(out)]).exit_code == 0  # the seeds' page now
    code, _, stderr = build([str(SEEDS)], out, "--only", "json")
    assert code == 0 and "graph.ttl:0: warning" in stderr
    assert "graph.html" not in stderr
