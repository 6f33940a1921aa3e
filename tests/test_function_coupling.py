"""Function coupling (`kgraph.history.functions`) on a git history built here by hand.

The history's changes, oldest first, and what each changes (worked out by hand from the
module's rules: a hunk counts for the definition git's header names unless it starts at
that definition's indentation or less; a definition's own line counts for it):

| #   | change                                      | units                        |
|-----|---------------------------------------------|------------------------------|
| 1   | sched.py and cache.py created               | every definition of both     |
| 2–6 | the bodies of `schedule` and `lookup`       | sched#schedule, cache#lookup |
| 7–8 | the body of `allocate`                      | sched#allocate               |
| 9   | `def drain` added after `free`              | sched#drain (not free)       |
| 10  | a module constant added after `drain`       | none                         |
| 11  | cache.py renamed store.py, `lookup` edited  | store#lookup                 |
| 12  | `Queue.push`'s body and `evict`'s body      | sched#push, store#evict      |

Revisions, renames followed: schedule 6, lookup 7 (1, 2–6, 11), allocate 3, push 2, evict 2,
free 1, drain 1, Queue 1. Pairs with shared ≥ 5: schedule ~ lookup, shared 6: degree
200·6/13 = 92, average revisions ⌈13/2⌉ = 7. Without renames: cache#lookup has 6, the pair
has degree 200·6/12 = 100.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import rdflib
from click.testing import CliRunner

from checks import assert_conforms
from conftest import build
from history_repo import _git
from kgraph.cli import cli
from kgraph.history import open_history
from kgraph.history.changesets import changesets_of
from kgraph.history.coupling import CouplingOptions, couple
from kgraph.history.functions import (
    couple_functions,
    definition_of,
    split_unit,
    unit_name,
    units_of,
)
from kgraph.history.log import parse_diffs

REPO = "acme/functions"

SCHED = '''"""The scheduler."""


def schedule(queue):
    step = 0
    return step


def allocate(n):
    blocks = []
    return blocks


class Queue:
    def push(self, item):
        self.items = [item]


def free(block):
    return None
'''

CACHE = '''"""The cache."""


def lookup(key):
    found = None
    return found


def evict(key):
    return key
'''


def _edit(repo: Path, path: str, old: str, new: str) -> None:
    file = repo / path
    text = file.read_text("utf-8")
    assert old in text
    file.write_text(text.replace(old, new, 1), "utf-8")


def _commit(repo: Path, day: int, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message, date=f"2024-03-{day:02}T12:00:00+00:00")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("functions") / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "sched.py").write_text(SCHED, "utf-8")
    (repo / "cache.py").write_text(CACHE, "utf-8")
    _commit(repo, 1, "Start")
    for i in range(5):
        _edit(repo, "sched.py", f"step = {i}" if i else "step = 0", f"step = {i + 1}")
        _edit(repo, "cache.py", "found = None" if i == 0 else f"found = {i}", f"found = {i + 1}")
        _commit(repo, 2 + i, f"Tune {i}")
    for i in range(2):
        _edit(repo, "sched.py", "blocks = []" if i == 0 else "blocks = [0]", f"blocks = [{i}]")
        _commit(repo, 7 + i, f"Allocate {i}")
    text = (repo / "sched.py").read_text("utf-8")
    (repo / "sched.py").write_text(text + "\n\ndef drain():\n    return 0\n", "utf-8")
    _commit(repo, 9, "Drain")
    text = (repo / "sched.py").read_text("utf-8")
    (repo / "sched.py").write_text(text + "\n\nLIMIT = 3\n", "utf-8")
    _commit(repo, 10, "Limit")
    _git(repo, "mv", "cache.py", "store.py")
    _edit(repo, "store.py", "found = 5", "found = 6")
    _commit(repo, 11, "Rename the cache")
    _edit(repo, "sched.py", "self.items = [item]", "self.items.append(item)")
    _edit(repo, "store.py", "return key", "return None")
    _commit(repo, 12, "Push and evict")
    return repo / ".git"


def _count(git_dir: Path, **options: object) -> tuple[dict[str, int], list[tuple]]:
    history = open_history(
        REPO, git_dir.parent, git_dir, _git(git_dir.parent, "rev-parse", "HEAD"), None
    )
    changesets = changesets_of(history.index)
    chosen = CouplingOptions(functions=True, function_min_revs=1, **options)  # type: ignore[arg-type]
    files = couple(changesets, chosen)
    result = couple_functions(history, files, changesets)
    revisions = {
        "#".join((p.removesuffix(".py"), n)): r
        for (p, n), r in ((split_unit(u), r) for u, r in result.revisions.items())
    }
    pairs = [
        (
            "#".join(split_unit(p.entity)),
            "#".join(split_unit(p.coupled)),
            p.degree,
            p.average_revisions,
        )
        for p in result.pairs
    ]
    return revisions, pairs


def test_function_coupling_counts_the_functions_each_change_touched(history: Path) -> None:
    revisions, pairs = _count(history)
    assert revisions == {
        "sched#schedule": 6,
        "sched#allocate": 3,
        "sched#Queue": 1,
        "sched#push": 2,
        "sched#free": 1,  # not the drain added after it (change 9)
        "sched#drain": 1,
        "store#lookup": 7,  # under the name it has now, across the rename
        "store#evict": 2,
    }
    assert pairs == [("sched.py#schedule", "store.py#lookup", 92, 7)]


def test_function_coupling_without_renames_splits_the_renamed_file(history: Path) -> None:
    revisions, pairs = _count(history, follow_renames=False)
    assert revisions["cache#lookup"] == 6 and revisions["store#lookup"] == 1
    assert pairs == [("cache.py#lookup", "sched.py#schedule", 100, 6)]


def test_function_coupling_keeps_to_files_with_enough_revisions(history: Path) -> None:
    """store.py (cache.py before) changed 8 times, sched.py 11: at 9, only sched.py's
    functions are counted, and no pair is left."""
    git_dir = history
    head = _git(git_dir.parent, "rev-parse", "HEAD")
    found = open_history(REPO, git_dir.parent, git_dir, head, None)
    changesets = changesets_of(found.index)
    files = couple(changesets, CouplingOptions(functions=True, function_min_revs=9))
    assert files.revisions == {"sched.py": 11, "store.py": 8}
    result = couple_functions(found, files, changesets)
    assert {split_unit(u)[0] for u in result.revisions} == {"sched.py"}
    assert result.pairs == ()


def test_function_coupling_survives_a_missing_blob(history: Path, tmp_path: Path) -> None:
    """A damaged clone: one version of sched.py is gone. Its change is said once and
    skipped; the rest is counted."""
    clone = tmp_path / "damaged"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", str(history.parent), str(clone)], check=True
    )
    blob = _git(clone, "rev-parse", "HEAD~3:sched.py")  # as "Drain" left it
    for pack in list((clone / ".git" / "objects" / "pack").glob("*.pack")):
        # loose objects, so that one can be removed
        data = pack.read_bytes()
        for leftover in pack.parent.glob(pack.stem + ".*"):
            leftover.unlink()
        subprocess.run(["git", "-C", str(clone), "unpack-objects", "-q"], input=data, check=True)
    (clone / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    damaged = open_history(REPO, clone, clone / ".git", _git(clone, "rev-parse", "HEAD"), None)
    changesets = changesets_of(damaged.index)
    files = couple(changesets, CouplingOptions(functions=True, function_min_revs=1))
    result = couple_functions(damaged, files, changesets)
    warnings = [p.message for p in damaged.problems]
    assert len(warnings) == 1 and blob[:12] in warnings[0] and "sched.py" in warnings[0]
    counted = {"#".join(split_unit(u)): r for u, r in result.revisions.items()}
    assert "sched.py#drain" not in counted  # its one change ("Drain") could not be read
    assert counted["sched.py#schedule"] == 6 and counted["store.py#lookup"] == 7


@pytest.mark.parametrize(
    ("language", "line", "expected"),
    [
        ("python", "    async def handle(self, request):", (4, "handle")),
        ("python", "class KVCacheManager(Base):", (0, "KVCacheManager")),
        ("python", "    return define(x)", None),
        (
            "c",
            "void paged_attention_v1_launcher(torch::Tensor& out,",
            (0, "paged_attention_v1_launcher"),
        ),
        ("c", "int Scheduler::step(int n) {", (0, "Scheduler::step")),
        ("c", "struct BlockTable {", (0, "BlockTable")),
        ("c", "  if (n > 0) {", None),
        ("rust", "pub(crate) async fn tokenize(&self) -> Vec<u32> {", (0, "tokenize")),
        ("go", "func (s *Server) Serve(ctx context.Context) error {", (0, "Serve")),
        ("kotlin", "    private fun reset(cache: Cache) {", (4, "reset")),
    ],
)
def test_definition_lines_per_language(language: str, line: str, expected: object) -> None:
    assert definition_of(language, line) == expected


DIFF = (
    b"""\x01"""
    + b"0" * 40
    + b"""
diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -5,0 +6,3 @@ def first(x):
+
+def second(y):
+    return y
@@ -9 +12 @@ def third(z):
-    return z
+    return -z
@@ -20,0 +24,1 @@ class Holder:
+    limit = 3
@@ -30 +35 @@ def fourth(
-    x,
+    x: int,
"""
)


def test_a_hunk_counts_for_its_own_definitions_not_the_one_before() -> None:
    """`second` added after `first` changes `second`; `third`'s body changes `third`; a
    class attribute changes the class; a parameter line changes its function."""
    [(_, [diff])] = list(parse_diffs(DIFF))
    assert units_of("python", diff) == {"second", "third", "Holder", "fourth"}


def test_unit_names_keep_a_file_and_a_name_apart() -> None:
    assert split_unit(unit_name("csrc/a::b.cu", "Foo::bar")) == ("csrc/a::b.cu", "Foo::bar")


@pytest.fixture(scope="module")
def built(history: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    digests = tmp_path_factory.mktemp("functions-digests")
    (digests / "acme_functions_tagview.txt").write_text(
        f"{REPO} · tag view\n\nTune the scheduler\n\n`schedule` now steps once.\n", "utf-8"
    )
    out = tmp_path_factory.mktemp("functions-out")
    spec = f"{REPO}={history.parent}"
    code, stdout, stderr = build(
        [str(digests)], out, "--source", spec, "--function-coupling",
        "--function-coupling-min-revs", "1", "--coupling-min-revs", "1",
    )  # fmt: skip
    assert code == 0, stderr
    assert "1 function pairs over 12 changes, counted" in stdout
    return out


def test_function_coupling_build_links_the_two_definitions(built: Path) -> None:
    graph = rdflib.Graph().parse(built / "graph.ttl")
    rows = list(
        graph.query(
            """PREFIX kg: <https://w3id.org/kgraph/ns#>
            SELECT ?sa ?sb ?ra ?rb ?degree ?shared WHERE {
              ?c a kg:Coupling ; kg:couplesSymbol ?a, ?b ; kg:degree ?degree ;
                 kg:sharedRevisions ?shared .
              ?a kg:revisions ?ra . ?b kg:revisions ?rb .
              FILTER (STR(?a) < STR(?b))
              BIND (STR(?a) AS ?sa) BIND (STR(?b) AS ?sb)
            }"""
        )
    )
    assert [tuple(v.toPython() for v in row) for row in rows] == [
        (
            "https://w3id.org/kgraph/id/symbol/acme/functions/sched.py/schedule",
            "https://w3id.org/kgraph/id/symbol/acme/functions/store.py/lookup",
            6,
            7,
            92,
            6,
        )
    ]
    assert_conforms(built)


def test_function_coupling_query_and_cache(built: Path, history: Path) -> None:
    answer = CliRunner().invoke(cli, ["query", str(built), "-n", "function-coupling", "-f", "csv"])
    assert answer.stdout.splitlines() == [
        "entity,coupled,degree,average-revs",
        "sched.py#schedule,store.py#lookup,92,7",
    ]
    digests = next(built.parent.glob("functions-digests*"))
    spec = f"{REPO}={history.parent}"
    code, stdout, _ = build(
        [str(digests)], built, "--source", spec, "--function-coupling",
        "--function-coupling-min-revs", "1", "--coupling-min-revs", "1",
    )  # fmt: skip
    assert code == 0 and "1 function pairs over 12 changes, pairs cached" in stdout
    # Off by default: no function pairs, and the file pairs stay.
    code, stdout, _ = build([str(digests)], built, "--source", spec, "--coupling-min-revs", "1")
    assert code == 0 and "function pairs" not in stdout
    answer = CliRunner().invoke(cli, ["query", str(built), "-n", "function-coupling", "-f", "csv"])
    assert answer.stdout.splitlines() == ["entity,coupled,degree,average-revs"]
