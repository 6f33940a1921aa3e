"""The README and docs/ stay true: what they show runs.

Every fenced block of README.md and docs/*.md is read by its language:

- ```bash and ```sh blocks are commands. Each runs in bash (`-euo pipefail`) in a sandbox
  that looks like a fresh checkout: the repository's folders, the committed `output/` (a
  copy), `.venv`, and `../shared` beside it. A command must exit 0 without a traceback; a
  trailing comment after two spaces is what it prints (up to an ellipsis `…`). SKIPPED
  lists the few commands that cannot run here, each with its reason.
- ```sparql blocks run on the examples' graph and must answer something.
- ``` blocks (no language) of `kgraph …` lines are synopses: every option they name must be
  one that command's `--help` lists.
- ```turtle and ```json blocks must parse.

Every relative link (and image) must lead to an existing file, and its `#anchor` to a heading
of that file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from kgraph.cli import cli
from servers import oxigraph

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KGRAPH_SHARED", ROOT.parent / "shared"))
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
VENV_BIN = Path(sys.executable).parent

# Commands (or `&&` steps of one) that cannot run in a test, matched from their start.
SKIPPED = {
    # Creating and installing the virtual environment: the tests already run in it, and
    # installing would need the package index.
    "python3 -m venv .venv": "the tests run in this virtual environment",
    ".venv/bin/pip install": "installing needs the package index",
    # The checks themselves: CI runs this whole line (see the last test of this file).
    ".venv/bin/ruff check": "part of the test command that CI runs",
    ".venv/bin/mypy": "part of the test command that CI runs",
    ".venv/bin/pytest": "the test suite itself",
    # A remote clone: the sandbox has a small local git repository at ../vllm instead.
    "git clone https://github.com/vllm-project/vllm": "clones from the network",
    # Servers the test does not start. test_push.py pushes to a real Virtuoso; Fuseki is
    # not installed. Oxigraph's commands (127.0.0.1:7878) run against tests/servers.py's.
    "KGRAPH_PASSWORD=dba kgraph push output --user dba": "needs a Virtuoso server",
    "kgraph push output --endpoint http://127.0.0.1:3030": "needs a Fuseki server",
    # The build benchmark runs for many minutes; test_bench.py runs it small.
    ".venv/bin/python bench/build.py": "the benchmark takes minutes",
    # The history's benchmark and checks need the vLLM fork's 20,000 commits.
    ".venv/bin/python bench/history.py": "the benchmark takes minutes on the vLLM history",
    ".venv/bin/python bench/history_quality.py": "needs a build against the vLLM history",
}
DOCUMENTED_OXIGRAPH = "127.0.0.1:7878"  # the address the docs show for `oxigraph serve`


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence
    language: str
    text: str

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    blocks, opened, language, body = [], 0, "", []
    for number, line in enumerate(page.read_text("utf-8").splitlines(), 1):
        if not opened and line.startswith("```"):
            opened, language, body = number, line[3:].strip(), []
        elif opened and line.startswith("```"):
            blocks.append(Block(page, opened, language, "\n".join(body) + "\n"))
            opened = 0
        elif opened:
            body.append(line)
    assert not opened, f"{page}:{opened}: a fence is never closed"
    return blocks


ALL_BLOCKS = [block for page in PAGES for block in fenced_blocks(page)]


def commands(block: Block) -> list[str]:
    """The block's commands: continuation lines joined, whole-line comments dropped."""
    joined = re.sub(r"\\\n\s*", "", block.text)
    return [line for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def skip_reason(step: str) -> str | None:
    return next((why for start, why in SKIPPED.items() if step.startswith(start)), None)


def runnable(command: str) -> str:
    """The command without its skipped `&&` steps ('' when nothing is left)."""
    return " && ".join(s for s in command.split(" && ") if not skip_reason(s.strip()))


def shell_blocks(page: Path) -> list[Block]:
    return [b for b in ALL_BLOCKS if b.page == page and b.language in ("bash", "sh")]


def make_sandbox(root: Path) -> Path:
    """A checkout as a reader has it: the repository's folders, `output/`, `../shared`, and a
    small git repository at `../vllm` with the code the examples name, for `--source`."""
    checkout = root / "kgraph"
    checkout.mkdir()
    for name in ("examples", "queries", "schemas", "bench", "src", "tests", "docs", ".ci"):
        (checkout / name).symlink_to(ROOT / name)
    (checkout / "pyproject.toml").symlink_to(ROOT / "pyproject.toml")
    (checkout / ".venv").symlink_to(VENV_BIN.parent)
    shutil.copytree(ROOT / "output", checkout / "output")
    (root / "shared").symlink_to(SHARED)
    vllm = root / "vllm"
    scheduler = vllm / "vllm/distributed/kv_transfer/kv_connector/v1/offloading/scheduler.py"
    scheduler.parent.mkdir(parents=True)
    scheduler.write_text(
        "class OffloadingConnectorScheduler:\n"
        "    def _sliding_window_lookup(self, blocks):\n"
        "        return blocks\n",
        "utf-8",
    )
    git = ["git", "-C", str(vllm), "-c", "user.name=docs", "-c", "user.email=docs@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "snapshot"], check=True)
    return checkout


@pytest.fixture(scope="module")
def oxigraph_server(tmp_path_factory: pytest.TempPathFactory):
    with oxigraph(tmp_path_factory.mktemp("docs-oxigraph")) as running:
        yield running


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_shell_commands_run(page: Path, tmp_path: Path, request) -> None:
    blocks = shell_blocks(page)
    to_run = [(b, c, runnable(c)) for b in blocks for c in commands(b)]
    to_run = [(b, shown, command) for b, shown, command in to_run if command]
    if not to_run:
        return  # a page without commands; test_docs_pages_show_commands counts them
    sandbox = make_sandbox(tmp_path)
    address = DOCUMENTED_OXIGRAPH
    if any(DOCUMENTED_OXIGRAPH in command for _, _, command in to_run):
        address = request.getfixturevalue("oxigraph_server").base.removeprefix("http://")
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    env.pop("KGRAPH_PASSWORD", None)
    for block, shown, command in to_run:
        command = command.replace(DOCUMENTED_OXIGRAPH, address)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command],
            cwd=sandbox,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        where = f"{block.where()}: {shown}"
        assert done.returncode == 0, (
            f"{where}\nexit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        )
        assert "Traceback" not in done.stderr, f"{where}\n{done.stderr[-3000:]}"
        printed = re.search(r"\s{2,}# (.+)$", shown)
        if printed:
            expected = printed.group(1).split("…")[0].strip()
            assert expected in done.stdout, f"{where}\nprinted:\n{done.stdout[:2000]}"


def test_docs_pages_show_commands_and_skip_only_what_they_list() -> None:
    shown = [c for page in PAGES for b in shell_blocks(page) for c in commands(b)]
    assert len(shown) >= 20
    steps = [step.strip() for command in shown for step in command.split(" && ")]
    for start in SKIPPED:
        assert any(step.startswith(start) for step in steps), f"SKIPPED names {start!r}: unused"
    # A README shell block holds nothing but commands the test runs or SKIPPED lists.
    assert shell_blocks(ROOT / "README.md")


def test_docs_sparql_examples_run_and_return_rows(examples_out) -> None:
    queries = [b for b in ALL_BLOCKS if b.language == "sparql"]
    assert len(queries) >= 5
    store = ox.Store()
    store.bulk_load(path=str(examples_out / "graph.ttl"), format=ox.RdfFormat.TURTLE)
    for block in queries:
        rows = list(store.query(block.text))
        assert rows, block.where()


def synopses() -> list[tuple[Block, str]]:
    lines = []
    for block in ALL_BLOCKS:
        joined = re.sub(r"\n\s+", " ", block.text)  # an indented line continues the last
        if block.language == "" and joined.startswith("kgraph "):
            lines += [(block, line) for line in joined.splitlines() if line.strip()]
    return lines


def test_docs_synopses_name_only_options_their_command_has() -> None:
    found = synopses()
    assert {line.split()[1] for _, line in found} >= {
        "build",
        "html",
        "eval",
        "diff",
        "query",
        "push",
    }
    helps: dict[str, str] = {}
    for block, line in found:
        assert line.startswith("kgraph "), f"{block.where()}: not a synopsis: {line}"
        command = line.split()[1]
        if command not in helps:
            result = CliRunner().invoke(cli, [command, "--help"])
            assert result.exit_code == 0, f"{block.where()}: kgraph {command} --help"
            helps[command] = result.output
        options = re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", line)
        for option in options:
            assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", helps[command]), (
                f"{block.where()}: kgraph {command} has no {option}"
            )


def test_docs_turtle_and_json_examples_parse() -> None:
    turtle = [b for b in ALL_BLOCKS if b.language == "turtle"]
    documents = [b for b in ALL_BLOCKS if b.language == "json"]
    assert turtle and documents
    for block in turtle:
        assert list(ox.parse(block.text.encode(), format=ox.RdfFormat.TURTLE)), block.where()
    for block in documents:
        assert json.loads(block.text), block.where()


def test_docs_blocks_have_a_language_the_tests_read() -> None:
    # python blocks belong to docs/python-api.md, whose examples its own tests run.
    known = {"bash", "sh", "sparql", "turtle", "json", "python", ""}
    for block in ALL_BLOCKS:
        assert block.language in known, f"{block.where()}: ```{block.language} is read by nothing"


# A page another branch is writing; the README and the index link to it already. Once it
# exists its anchors are checked like any other page's.
PENDING = {ROOT / "docs" / "python-api.md"}


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"^```.*?^```", "", page.read_text("utf-8"), flags=re.S | re.M)
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def links(page: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text("utf-8"), flags=re.S | re.M)
    text = re.sub(r"(`+).*?\1", "", text, flags=re.S)  # code spans are not links
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_relative_links_lead_to_files_and_headings(page: Path) -> None:
    for link in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", link):
            continue  # http:, https:, mailto:
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if target in PENDING and not target.exists():
            continue
        assert target.exists(), f"{page.relative_to(ROOT)}: {link}: no such file"
        if anchor:
            assert target.suffix == ".md", (
                f"{page.relative_to(ROOT)}: {link}: anchor into a non-page"
            )
            assert anchor in anchors(target), f"{page.relative_to(ROOT)}: {link}: no such heading"


def test_docs_index_lists_every_page() -> None:
    index = (ROOT / "docs" / "index.md").read_text("utf-8")
    for page in PAGES[1:]:
        if page.name != "index.md":
            assert f"]({page.name})" in index, f"docs/index.md does not list {page.name}"


def test_docs_readme_is_short() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert len(readme.split()) <= 2500
    assert len(readme.splitlines()) <= 250


def test_docs_readme_names_the_test_command_that_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    command = ci.strip().splitlines()[-1]
    assert command in (ROOT / "README.md").read_text("utf-8")


def test_docs_readme_names_every_package_ci_installs() -> None:
    """CI installs nothing the README does not tell a developer to have."""
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    readme = (ROOT / "README.md").read_text("utf-8")
    packages = re.findall(r"need\+=\(([\w.+-]+)\)", ci)
    assert len(packages) >= 4
    for package in packages:
        assert f"`{package}`" in readme, package
    installs = [line for line in ci.splitlines() if "pip install" in line]
    assert installs == [ci.strip().splitlines()[-1]]  # only the README's test command
