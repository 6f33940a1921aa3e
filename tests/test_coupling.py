"""Change coupling (`kgraph.history.coupling`) on a git history built here by hand.

Every number asserted below is worked out by hand from the history, in the table of the
`history` fixture's docstring, with code-maat's definition: a change of more than 30
files is left out; degree = shared ÷ mean revisions × 100, truncated; average-revs is
the mean rounded up; kept when mean ≥ 5, shared ≥ 5 and degree ≥ 30.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import rdflib
from click.testing import CliRunner
from pyshacl import validate

from checks import assert_conforms
from conftest import ROOT, SHARED, build
from history_repo import _git
from kgraph.cli import cli
from kgraph.history.changesets import Changeset, FileChange, read_changesets
from kgraph.history.coupling import CouplingOptions, couple

LINES = "".join(f"line {i} of a file long enough for git to see a rename\n" for i in range(20))


def _change(repo: Path, paths: list[str], date: str, message: str) -> None:
    for path in paths:
        file = repo / path
        file.parent.mkdir(parents=True, exist_ok=True)
        before = file.read_text("utf-8") if file.exists() else LINES
        file.write_text(before + f"{message}\n", "utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message, date=date)


GENERATED = [f"gen/f{i:02}.py" for i in range(29)]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Changes, oldest first (dates in 2024; the newest is 12-31, so the trend's last 90
    days start after 10-02):

    | #  | date  | files                                   |
    |----|-------|-----------------------------------------|
    | 1  | 01-05 | a b c                                   |
    | 2  | 01-10 | a b                                     |
    | 3  | 01-15 | a b                                     |
    | 4  | 02-01 | a b c                                   |
    | 5  | 02-10 | a b                                     |
    | 6  | 03-01 | a c                                     |
    | 7  | 03-10 | a                                       |
    | 8  | 04-01 | old d                                   |
    | 9  | 05-01 | old d                                   |
    | 10 | 06-01 | old d                                   |
    | 11 | 12-01 | old → new (renamed), d                  |
    | 12 | 12-05 | new d                                   |
    | 13 | 12-10 | new d                                   |
    | —  | 12-12 | branch: e f, then e f (2 commits)       |
    | 14 | 12-15 | merge of that branch (--no-ff): e f     |
    | 15 | 12-20 | a b and 29 generated files (31 files)   |
    | 16 | 12-31 | b                                       |

    Counted (15 is too large): a 7 (1–7); b 6 (1–5, 16); c 3; new 6 (8–13, under its
    name today); d 6; e 1 and f 1 (the merge is one change, its branch commits none).
    """
    repo = tmp_path_factory.mktemp("coupled")
    _git(repo, "init", "-q", "-b", "main")
    for paths, date, message in [
        (["a.py", "b.py", "c.py"], "2024-01-05T12:00:00+00:00", "c1"),
        (["a.py", "b.py"], "2024-01-10T12:00:00+00:00", "c2"),
        (["a.py", "b.py"], "2024-01-15T12:00:00+00:00", "c3"),
        (["a.py", "b.py", "c.py"], "2024-02-01T12:00:00+00:00", "c4"),
        (["a.py", "b.py"], "2024-02-10T12:00:00+00:00", "c5"),
        (["a.py", "c.py"], "2024-03-01T12:00:00+00:00", "c6"),
        (["a.py"], "2024-03-10T12:00:00+00:00", "c7"),
        (["pkg/old.py", "d.py"], "2024-04-01T12:00:00+00:00", "c8"),
        (["pkg/old.py", "d.py"], "2024-05-01T12:00:00+00:00", "c9"),
        (["pkg/old.py", "d.py"], "2024-06-01T12:00:00+00:00", "c10"),
    ]:
        _change(repo, paths, date, message)
    _git(repo, "mv", "pkg/old.py", "pkg/new.py")
    _change(repo, ["d.py"], "2024-12-01T12:00:00+00:00", "c11")
    _change(repo, ["pkg/new.py", "d.py"], "2024-12-05T12:00:00+00:00", "c12")
    _change(repo, ["pkg/new.py", "d.py"], "2024-12-10T12:00:00+00:00", "c13")
    _git(repo, "checkout", "-qb", "feature")
    _change(repo, ["e.py", "f.py"], "2024-12-12T12:00:00+00:00", "branch 1")
    _change(repo, ["e.py", "f.py"], "2024-12-12T13:00:00+00:00", "branch 2")
    _git(repo, "checkout", "-q", "main")
    _git(
        repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #7 from x/feature", "feature",
        date="2024-12-15T12:00:00+00:00",
    )  # fmt: skip
    _change(repo, ["a.py", "b.py", *GENERATED], "2024-12-20T12:00:00+00:00", "c15")
    _change(repo, ["b.py"], "2024-12-31T12:00:00+00:00", "c16")
    return repo / ".git"


def rows(git_dir: Path, **options: object) -> list[tuple[str, str, int, int]]:
    """code-maat's columns: entity, coupled, degree, average-revs."""
    result = couple(read_changesets(git_dir, "HEAD"), CouplingOptions(**options))  # type: ignore[arg-type]
    return [(p.entity, p.coupled, p.degree, p.average_revisions) for p in result.pairs]


def test_coupling_defaults_follow_the_rename(history: Path) -> None:
    # a–b: 5 shared, mean (7 + 6) / 2 = 6.5 → 76 %, 7; new–d: 6 of 6 → 100 %, 6.
    # a–c (3 shared) and b–c (2) have too few shared revisions.
    assert rows(history) == [("d.py", "pkg/new.py", 100, 6), ("a.py", "b.py", 76, 7)]


def test_coupling_counts_each_file_once_per_change(history: Path) -> None:
    result = couple(read_changesets(history, "HEAD"))
    assert result.revisions == {
        "a.py": 7, "b.py": 6, "c.py": 3, "d.py": 6, "e.py": 1, "f.py": 1, "pkg/new.py": 6,
    }  # fmt: skip
    assert (result.changesets, result.too_large, result.renamed) == (16, 1, 1)


def test_coupling_no_renames_is_code_maats(history: Path) -> None:
    # old: 4 (8–11), new: 3 (11–13): old–d 4 shared and new–d 3, both below 5.
    assert rows(history, follow_renames=False) == [("a.py", "b.py", 76, 7)]
    result = couple(read_changesets(history, "HEAD"), CouplingOptions(follow_renames=False))
    assert (result.revisions["pkg/old.py"], result.revisions["pkg/new.py"]) == (4, 3)


def test_coupling_large_changeset_limit_is_an_option(history: Path) -> None:
    # With change 15 counted: a 8, b 7, 6 shared → 6 / 7.5 = 80 %, average 8; each
    # generated file has one revision, too few.
    assert rows(history, max_changeset_size=31)[:2] == [
        ("d.py", "pkg/new.py", 100, 6),
        ("a.py", "b.py", 80, 8),
    ]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # a–c: 3 shared, mean 5 → 60 %; b–c: 2 shared, mean 4.5 → 44 %, average 5.
        (
            {"min_revs": 3, "min_shared_revs": 2},
            [
                ("d.py", "pkg/new.py", 100, 6),
                ("a.py", "b.py", 76, 7),
                ("a.py", "c.py", 60, 5),
                ("b.py", "c.py", 44, 5),
            ],
        ),
        # b–c's mean 4.5 is below 5: code-maat compares the mean, not each file.
        (
            {"min_shared_revs": 2},
            [("d.py", "pkg/new.py", 100, 6), ("a.py", "b.py", 76, 7), ("a.py", "c.py", 60, 5)],
        ),
        ({"min_degree": 77}, [("d.py", "pkg/new.py", 100, 6)]),
        ({"min_degree": 76}, [("d.py", "pkg/new.py", 100, 6), ("a.py", "b.py", 76, 7)]),
        ({"max_degree": 99}, [("a.py", "b.py", 76, 7)]),
        ({"min_revs": 6}, [("d.py", "pkg/new.py", 100, 6), ("a.py", "b.py", 76, 7)]),
        ({"min_revs": 7}, []),  # a–b's mean is 6.5, new–d's 6
        ({"min_shared_revs": 6}, [("d.py", "pkg/new.py", 100, 6)]),
        # From 04-01: only new–d's six changes (b's one change has no partner).
        ({"since": "2024-04-01"}, [("d.py", "pkg/new.py", 100, 6)]),
        ({"since": "2025-01-01"}, []),
    ],
)
def test_coupling_options(history: Path, options: dict, expected: list) -> None:
    assert rows(history, **options) == expected


def test_coupling_trend_compares_the_last_90_days_with_before(history: Path) -> None:
    result = couple(read_changesets(history, "HEAD"))
    trends = {(p.entity, p.coupled): p.trend for p in result.pairs}
    # a–b: since 10-02, b changed once (16) and a not at all (15 is too large): 0 %;
    # before, 5 shared of a 7 and b 5: 200 · 5 // 12 = 83 %. new–d: 100 % in both.
    assert trends == {("a.py", "b.py"): -83, ("d.py", "pkg/new.py"): 0}
    assert [p.weakening for p in result.pairs] == [False, True]
    # With 400 days, every change is recent: no earlier period to compare with.
    longer = couple(read_changesets(history, "HEAD"), CouplingOptions(trend_days=400))
    assert [p.trend for p in longer.pairs] == [None, None]


# --- in the graph: `kgraph build --source` on the same history ---------------------------

REPO = "acme/coupled"
DIGEST = """acme/coupled · tag view

Faster a

Worth a close read: `a.py` caches its table; `pkg/new.py` is untouched.
"""


@pytest.fixture(scope="module")
def built(history: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    digests = tmp_path_factory.mktemp("coupled-digests")
    (digests / "acme_coupled_tagview.txt").write_text(DIGEST, "utf-8")
    out = tmp_path_factory.mktemp("coupled-out")
    code, stdout, stderr = build([str(digests)], out, "--source", f"{REPO}={history.parent}")
    assert code == 0, stderr
    assert "coupling: 2 pairs over 16 changes (1 too large), 1 renames followed, counted" in stdout
    return out


def couplings(out: Path) -> dict[tuple[str, ...], dict]:
    """Each kg:Coupling of graph.ttl by its files' paths, read with rdflib and SPARQL."""
    graph = rdflib.Graph().parse(out / "graph.ttl")
    found: dict[tuple[str, ...], dict] = {}
    for row in graph.query(
        """PREFIX kg: <https://w3id.org/kgraph/ns#>
        SELECT ?c ?pa ?pb ?ra ?rb ?degree ?shared ?average ?trend WHERE {
          ?c a kg:Coupling ; kg:couplesFile ?a, ?b ; kg:degree ?degree ;
             kg:sharedRevisions ?shared ; kg:averageRevisions ?average .
          OPTIONAL { ?c kg:trend ?trend }
          ?a kg:path ?pa ; kg:revisions ?ra . ?b kg:path ?pb ; kg:revisions ?rb .
          FILTER (?pa < ?pb)
        }"""
    ):
        values = [None if v is None else v.toPython() for v in row[3:]]
        found[(str(row.pa), str(row.pb))] = dict(
            zip(["ra", "rb", "degree", "shared", "average", "trend"], values, strict=True)
        )
    return found


def test_coupling_build_adds_a_node_per_pair(built: Path) -> None:
    assert couplings(built) == {
        ("a.py", "b.py"): {"ra": 7, "rb": 6, "degree": 76, "shared": 5, "average": 7, "trend": -83},
        ("d.py", "pkg/new.py"): {
            "ra": 6, "rb": 6, "degree": 100, "shared": 6, "average": 6, "trend": 0,
        },
    }  # fmt: skip
    assert_conforms(built)
    contract = rdflib.Graph().parse(SHARED / "contract-shapes.ttl")
    ok, _, text = validate(rdflib.Graph().parse(built / "graph.ttl"), shacl_graph=contract)
    assert ok, text


def test_coupling_file_is_the_node_the_review_names(built: Path) -> None:
    """The PR's `a.py` and the coupling's `a.py` are one node, resolved at HEAD."""
    graph = json.loads((built / "graph.json").read_text("utf-8"))
    nodes = {n["id"]: n for n in graph["nodes"]}
    touched = {e["target"] for e in graph["edges"] if e["relation"] == "touchesFile"}
    coupled = {e["target"] for e in graph["edges"] if e["relation"] == "couplesFile"}
    assert "file/acme/coupled/a.py" in touched & coupled
    assert nodes["file/acme/coupled/a.py"]["resolution"] == "resolved"


def test_coupling_second_build_reads_the_pairs_from_the_cache(built: Path, history: Path) -> None:
    digests = next(built.parent.glob("coupled-digests*"))
    code, stdout, _ = build([str(digests)], built, "--source", f"{REPO}={history.parent}")
    assert code == 0 and "pairs cached" in stdout
    code, stdout, _ = build(
        [str(digests)], built, "--source", f"{REPO}={history.parent}", "--no-renames"
    )
    assert (
        code == 0
        and "coupling: 1 pairs over 16 changes (1 too large), no renames, counted" in stdout
    )
    assert list(couplings(built)) == [("a.py", "b.py")]


def test_coupling_options_reach_the_build(built: Path, history: Path, tmp_path: Path) -> None:
    digests = next(built.parent.glob("coupled-digests*"))
    spec = f"{REPO}={history.parent}"
    code, _, _ = build([str(digests)], tmp_path, "--source", spec, "--coupling-min-revs", "3",
                       "--coupling-min-shared-revs", "2", "--coupling-min-degree", "50",
                       "--history-since", "2024-01-01")  # fmt: skip
    assert code == 0
    assert sorted(couplings(tmp_path)) == [
        ("a.py", "b.py"),
        ("a.py", "c.py"),
        ("d.py", "pkg/new.py"),
    ]
    code, _, stderr = build([str(digests)], tmp_path, "--source", spec, "--history-since", "May")
    assert code == 2 and "--history-since" in stderr and "YYYY-MM-DD" in stderr
    code, _, _ = build([str(digests)], tmp_path, "--source", spec, "--no-coupling")
    assert code == 0 and couplings(tmp_path) == {}
    # coupling is counted over the history: --no-history reads none, so counts none
    fresh = tmp_path / "no-history"
    code, stdout, _ = build([str(digests)], fresh, "--source", spec, "--no-history")
    assert code == 0 and couplings(fresh) == {} and "coupling:" not in stdout
    assert not list(fresh.glob(".kgraph/coupling-*")) and not list(fresh.glob(".kgraph/history-*"))


def test_coupling_csv_equals_the_independent_code_maat_script(
    built: Path, history: Path, tmp_path: Path
) -> None:
    """`kgraph query -n coupling -f csv` after a --no-renames build is what
    bench/codemaat_coupling.py (code-maat's algorithm over `git log --raw`) prints."""
    digests = next(built.parent.glob("coupled-digests*"))
    spec = f"{REPO}={history.parent}"
    assert build([str(digests)], tmp_path, "--source", spec, "--no-renames")[0] == 0
    ours = CliRunner().invoke(cli, ["query", str(tmp_path), "-n", "coupling", "-f", "csv"])
    reference = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "codemaat_coupling.py"), str(history), "HEAD"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    assert (
        ours.stdout.splitlines()
        == reference.splitlines()
        == [
            "entity,coupled,degree,average-revs",
            "a.py,b.py,76,7",
        ]
    )
    # Renames followed: the renamed file's pair appears.
    assert build([str(digests)], tmp_path, "--source", spec)[0] == 0
    ours = CliRunner().invoke(cli, ["query", str(tmp_path), "-n", "coupling", "-f", "csv"])
    assert ours.stdout.splitlines()[1:] == ["d.py,pkg/new.py,100,6", "a.py,b.py,76,7"]


# --- rename following, case by case (changesets written out, newest first) -----------------


def _cs(date: str, *files: tuple[str, ...]) -> Changeset:
    return Changeset("0" * 40, f"2024-{date}T00:00:00+00:00", tuple(FileChange(*f) for f in files))


EVERY = CouplingOptions(min_revs=1, min_shared_revs=1, min_degree=0)


def _revisions(*changesets: Changeset) -> dict[str, int]:
    return dict(couple(list(changesets), EVERY).revisions)


def test_coupling_follows_a_chain_of_renames_onto_the_last_name() -> None:
    # a.py → b.py → c.py: all three changes are c.py's.
    assert _revisions(
        _cs("03-01", ("c.py", "R", "b.py")),
        _cs("02-01", ("b.py", "R", "a.py")),
        _cs("01-01", ("a.py", "A")),
    ) == {"c.py": 3}


def test_coupling_a_path_created_again_is_another_file() -> None:
    # a.py was renamed to b.py, then a new a.py was added: the old a.py's change is b.py's.
    assert _revisions(
        _cs("03-01", ("a.py", "A")),
        _cs("02-01", ("b.py", "R", "a.py")),
        _cs("01-01", ("a.py", "M")),
    ) == {"a.py": 1, "b.py": 2}


def test_coupling_names_a_deleted_file_by_its_path_even_when_another_took_it() -> None:
    """x.py was deleted (02), then y.py renamed to x.py (03). Files are known by path, as
    in code-maat: the deleted x.py and y.py are both x.py now, so in 01, where both
    changed, they are one revision of x.py. Such a collision needs a path deleted and then
    reused by a rename; git cannot tell kgraph they were different files."""
    assert _revisions(
        _cs("04-01", ("x.py", "M")),
        _cs("03-01", ("x.py", "R", "y.py")),
        _cs("02-01", ("x.py", "D")),
        _cs("01-01", ("x.py", "M"), ("y.py", "M")),
    ) == {"x.py": 4}


def test_coupling_of_a_shallow_clone_counts_the_history_it_has(
    built: Path, history: Path, tmp_path: Path
) -> None:
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "3", f"file://{history.parent}", str(clone)],
        check=True,
        capture_output=True,
    )
    digests = next(built.parent.glob("coupled-digests*"))
    code, stdout, stderr = build([str(digests)], tmp_path / "out", "--source", f"{REPO}={clone}")
    assert code == 0, stderr
    assert "coupling: 0 pairs over 3 changes (1 too large)" in stdout


def test_coupling_options_are_one_value_in_the_python_api(built: Path, history: Path) -> None:
    from kgraph import api
    from kgraph.errors import UsageError

    digests = next(built.parent.glob("coupled-digests*"))
    spec = f"{REPO}={history.parent}"
    plain = api.build(
        [str(digests)], sources=[spec], coupling=api.CouplingOptions(follow_renames=False)
    )
    answer = plain.query(api.sparql(name="coupling"))
    assert [tuple(t.value for t in row) for row in answer.rows] == [("a.py", "b.py", "76", "7")]
    none = api.build([str(digests)], sources=[spec], coupling=None)
    assert list(none.query(api.sparql(name="coupling")).rows) == []
    with pytest.raises(UsageError, match="expected a day, YYYY-MM-DD"):
        api.build([str(digests)], sources=[spec], coupling=api.CouplingOptions(since="May"))
