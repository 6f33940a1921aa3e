"""`kgraph build --source` on a git repository reads its history: each reviewed PR is linked
to the commit that merged it, and gets what that commit changed. End to end, on a real
repository built here with git itself: squash commits `… (#N)`, a branch merged with
`Merge pull request #N from …`, a rename, a follow-up PR, a removed method, a vendored
file, a binary file, a generated file too long to read, a blob the repository lacks, and a
shallow clone. Every check runs the real CLI and reads the real exports, and compares
with what git itself says.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import rdflib
from click.testing import CliRunner
from pyshacl import validate

from conftest import SCHEMAS, SHARED, build
from history_repo import DAILY, REPO, Graph, _commit, _git, _write, make_repo
from kgraph.catalog import DEFAULT_PATTERN_THRESHOLD
from kgraph.cli import cli
from kgraph.history.log import MAX_LINES_PER_FILE, read_diffs, read_log


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return make_repo(tmp_path_factory)


@pytest.fixture(scope="module")
def built(repo, tmp_path_factory: pytest.TempPathFactory) -> tuple[Graph, Path, str, str]:
    out = tmp_path_factory.mktemp("history-out")
    code, stdout, stderr = build([str(repo["digests"])], out, "--source", f"{REPO}={repo['root']}")
    assert code == 0, stderr
    return Graph(out), out, stdout, stderr


def test_history_links_by_number_a_squash_commit_and_a_merge_of_a_branch(built, repo) -> None:
    graph, *_ = built
    shas = repo["shas"]
    assert graph.sha("Add an eviction window to the LRU cache (#11)") == shas["window"]
    assert graph.sha("Rename util to helpers (#12)") == shas["rename"]
    pr = graph.prs["Add an eviction window to the LRU cache (#11)"]
    assert pr["mergeBasis"] == "number"
    commit = graph.merged("Add an eviction window to the LRU cache (#11)")
    assert commit is not None
    assert commit["title"] == "[Core] Add an LRU eviction window (#11)"
    assert commit["date"] == "2026-02-03"
    assert commit["sourceUrl"] == f"https://github.com/{REPO}/commit/{shas['window']}"


def test_history_links_by_content_to_the_merge_not_its_branch_commits(built, repo) -> None:
    graph, *_ = built
    assert graph.sha("Store 记录命中次数") == repo["shas"]["merge"]
    assert graph.prs["Store 记录命中次数"]["mergeBasis"] == "content"


def test_history_tells_a_follow_up_from_the_pr_that_introduced_the_names(built, repo) -> None:
    """Both commits change `evict_window`; only #14 has the test the review names, and #11
    defines what the follow-up only uses."""
    graph, *_ = built
    assert graph.sha("Fix window bound in evict_window") == repo["shas"]["follow-up"]


def test_history_never_links_one_commit_to_two_prs(built, repo) -> None:
    graph, *_ = built
    title = "LRU 缓存新增淘汰窗口"  # describes #11's change, under another title, no number
    assert graph.merged(title) is None
    candidates = [c["sha"] for c in graph.targets(graph.prs[title], "candidateCommit")]
    assert repo["shas"]["window"] in candidates  # its best: kept as a candidate
    linked = [graph.sha(t) for t in graph.prs]
    linked = [sha for sha in linked if sha]
    assert len(linked) == len(set(linked))


def test_history_a_commit_two_prs_claim_stays_with_the_stronger_claim() -> None:
    from kgraph.merges import Candidate, CommitLink, _one_pr_per_commit

    sha = "a" * 40
    claims = [
        CommitLink("pr/b", sha, "content", 9.0, (Candidate(sha, 0.9),)),
        CommitLink("pr/a", sha, "number", float("inf"), (Candidate(sha, 1.0),)),
        CommitLink("pr/c", sha, "content", 2.0, (Candidate(sha, 0.5),)),
    ]
    kept = _one_pr_per_commit(claims)
    assert [k.sha for k in kept] == [None, sha, None]
    assert all(k.candidates for k in kept) and "another PR" in kept[0].reason


def test_history_leaves_prs_the_history_lacks_unlinked_and_counts_them(built) -> None:
    graph, _, stdout, _ = built
    for title in ("Throttle uploads", "Speed up the scheduler (#99)"):
        assert graph.merged(title) is None
        assert graph.targets(graph.prs[title], "candidateCommit") == []
    # The daily digest names no repository, and nothing these two name is in the checkout:
    # they are no PRs of it (as for resolution), and are counted apart.
    assert (
        "commits: 7 PRs linked (5 by number, 2 by content), 1 unlinked (1 with candidate "
        "commits), 2 of no known repository" in stdout
    )


def _bare(root: Path, *args: str) -> subprocess.CompletedProcess:
    """git on the repository's objects alone: a work tree would stand in for a lost blob."""
    return subprocess.run(
        ["git", "--git-dir", str(root / ".git"), "--work-tree", str(root / "nowhere"), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def _git_files(root: Path, sha: str) -> dict[str, tuple[str, str]]:
    """path → (status, old path) of a commit against its first parent, as git lists it."""
    raw = _bare(root, "diff-tree", "-r", "-M", "--no-commit-id", "--name-status", f"{sha}^1", sha)
    raw = raw.stdout.strip()
    found = {}
    for line in raw.splitlines():
        status, *paths = line.split("\t")
        found[paths[-1]] = (status[0], paths[0] if len(paths) == 2 else "")
    return found


def test_history_changed_files_are_the_commits_diff_with_its_lines(built, repo) -> None:
    graph, *_ = built
    root = repo["root"]
    for title in graph.prs:
        commit = graph.merged(title)
        if commit is None:
            continue
        expected = _git_files(root, commit["sha"])
        changes = graph.targets(commit, "hasChange")
        assert {c["path"] for c in changes} == set(expected), title
        for change in changes:
            status, old = expected[change["path"]]
            assert change.get("previousPath", "") == old
            assert change["changeType"][0].upper() == status
            (file,) = graph.targets(change, "changedFile")
            assert file in graph.targets(graph.prs[title], "changesFile")
        counts = _bare(root, "diff-tree", "-r", "-M", "--numstat", "--no-commit-id",
                       f"{commit['sha']}^1", commit["sha"])  # fmt: skip
        if counts.returncode != 0:  # the diagram, whose blob is lost: its own test
            assert "unable to read" in counts.stderr and title == "Document the diagram (#17)"
            continue
        for line in counts.stdout.splitlines():
            added, removed, path = line.split("\t")
            if " => " in path:  # a rename: {old => new}
                head, _, rest = path.partition("{")
                old, _, new = rest.partition(" => ")
                path = head + new.replace("}", "", 1)
            change = next(c for c in changes if c["path"] == path)
            if added == "-":  # binary
                assert "linesAdded" not in change and "linesRemoved" not in change
            else:
                assert (change["linesAdded"], change["linesRemoved"]) == (int(added), int(removed))


def test_history_changed_files_follow_renames_to_the_revision_read(built) -> None:
    graph, *_ = built
    pr = graph.prs["Add an eviction window to the LRU cache (#11)"]
    paths = sorted(f["path"] for f in graph.targets(pr, "changesFile"))
    # #11 changed cache/util.py, which #12 renamed: the file is cache/helpers.py now.
    assert paths == ["cache/helpers.py", "cache/lru.py", "tests/test_lru.py"]
    commit = graph.merged("Add an eviction window to the LRU cache (#11)")
    assert commit is not None
    by_path = {c["path"]: c for c in graph.targets(commit, "hasChange")}
    assert graph.targets(by_path["cache/util.py"], "changedFile")[0]["path"] == "cache/helpers.py"
    renamed = {
        c["path"]: c
        for c in graph.targets(graph.merged("Rename util to helpers (#12)"), "hasChange")
    }
    assert renamed["cache/helpers.py"]["changeType"] == "renamed"
    assert renamed["cache/helpers.py"]["previousPath"] == "cache/util.py"
    # Both PRs changed the same file: they share code.
    twelve = graph.prs["Rename util to helpers (#12)"]["id"]
    assert twelve in graph.out[(pr["id"], "sharesCodeWith")]


def test_history_changed_symbols_take_removed_lines_before_and_added_lines_after(built) -> None:
    graph, *_ = built

    def changed(title: str) -> dict[str, dict]:
        return {s["qualifiedName"]: s for s in graph.targets(graph.prs[title], "changesSymbol")}

    window = changed("Add an eviction window to the LRU cache (#11)")
    # Its blank line before the new method is no change to the class; `LOW = 0` is in no
    # definition.
    assert set(window) == {"LRUCache.evict_window", "test_evict_window_keeps_the_newest"}
    assert window["LRUCache.evict_window"]["resolution"] == "resolved"
    assert window["LRUCache.evict_window"]["line"] > 0  # its line at the revision read
    # #15 removed `Store.load`: a definition of the file before the commit, gone since.
    removed = changed("Remove the legacy loader (#15)")
    assert "Store.load" in removed and "resolution" not in removed["Store.load"]
    (home,) = graph.targets(removed["Store.load"], "definedIn")
    assert home["path"] == "cache/store.py"
    # The follow-up changed one line inside the method: the method, not its class.
    assert set(changed("Fix window bound in evict_window")) >= {"LRUCache.evict_window"}
    assert "LRUCache" not in changed("Fix window bound in evict_window")


def test_history_shared_code_of_linked_prs_is_the_files_their_commits_share(built) -> None:
    graph, *_ = built
    linked = {t: graph.prs[t]["id"] for t in graph.prs if graph.merged(t)}
    files = {
        pr: {f["id"] for f in graph.targets(graph.nodes[pr], "changesFile")}
        for pr in linked.values()
    }
    for a in linked.values():
        expected = {b for b in linked.values() if b != a and files[a] & files[b]}
        assert set(graph.out[(a, "sharesCodeWith")]) & set(linked.values()) == expected


def test_history_bounded_work_on_vendored_binary_and_generated_files(built, repo) -> None:
    graph, *_ = built
    commit = graph.merged("Bump the vendored library and the logo (#16)")
    assert commit is not None
    changes = {c["path"]: c for c in graph.targets(commit, "hasChange")}
    assert changes["vendor/big/lib.js"]["linesAdded"] == 20_000  # counted by git
    assert "linesAdded" not in changes["assets/logo.png"]  # binary
    symbols = graph.targets(
        graph.prs["Bump the vendored library and the logo (#16)"], "changesSymbol"
    )
    assert not any(s["qualifiedName"].startswith("v") for s in symbols)  # vendored: not read
    # The diff of a file with more changed lines than are read is cut, never read whole.
    missing: list = []
    ((_, files),) = read_diffs(
        repo["root"] / ".git", [(repo["shas"]["vendored"], repo["shas"]["remove"])], missing
    )
    by_path = {f.path: f for f in files}
    assert by_path["vendor/big/lib.js"].unread and not by_path["vendor/big/lib.js"].added
    assert by_path["assets/logo.png"].binary
    table = by_path["cache/table.py"]
    assert table.cut and len(table.added) == MAX_LINES_PER_FILE


def test_history_missing_blob_is_said_once_and_its_file_still_counted(built, repo) -> None:
    graph, _, _, stderr = built
    said = [line for line in stderr.splitlines() if repo["blob"][:12] in line]
    assert len(said) == 1 and "docs/diagram.html" in said[0] and "warning" in said[0]
    commit = graph.merged("Document the diagram (#17)")
    assert commit is not None
    (change,) = graph.targets(commit, "hasChange")
    assert change["path"] == "docs/diagram.html" and "linesAdded" not in change


def test_history_export_conforms_to_the_shapes(built) -> None:
    _, out, _, _ = built
    data = rdflib.Graph().parse(out / "graph.ttl")
    for shapes in (SCHEMAS / "shapes.ttl", SHARED / "contract-shapes.ttl"):
        ok, _, report = validate(data, shacl_graph=rdflib.Graph().parse(shapes), inference="none")
        assert ok, report


def test_history_second_build_reads_no_log_and_writes_the_same_bytes(built, repo, tmp_path) -> None:
    _, first, stdout, _ = built
    assert "log read in" in stdout
    out = tmp_path / "out"
    shutil.copytree(first / ".kgraph", out / ".kgraph")
    code, again, stderr = build([str(repo["digests"])], out, "--source", f"{REPO}={repo['root']}")
    assert code == 0, stderr
    assert "history: matches cached" in again
    for name in ("graph.ttl", "graph.json", "graph.nt"):
        assert (out / name).read_bytes() == (first / name).read_bytes(), name
    # Without the match cache the log is read from its cache, the diffs too: same bytes.
    for links in (out / ".kgraph").glob("history-*-links.json"):
        links.unlink()
    code, again, stderr = build([str(repo["digests"])], out, "--source", f"{REPO}={repo['root']}")
    assert code == 0 and "log cached" in again, stderr
    for name in ("graph.ttl", "graph.json", "graph.nt"):
        assert (out / name).read_bytes() == (first / name).read_bytes(), name


def test_history_shallow_clone_says_where_its_history_ends(repo, tmp_path) -> None:
    code, _, stderr = build(
        [str(repo["digests"])], tmp_path, "--source", f"{REPO}={repo['shallow']}"
    )
    assert code == 0, stderr
    (said,) = [line for line in stderr.splitlines() if "shallow clone" in line]
    assert "warning" in said and "2026-02-09" in said  # the oldest of the three commits
    graph = Graph(tmp_path)
    assert graph.sha("Document the diagram (#17)") == repo["shas"]["docs"]
    assert graph.merged("Add an eviction window to the LRU cache (#11)") is None  # before it


def test_history_unknown_revision_is_a_usage_error(repo, tmp_path) -> None:
    code, _, stderr = build(
        [str(repo["digests"])], tmp_path, "--source", f"{REPO}={repo['root']}@v9.9"
    )
    assert code == 2 and "unknown revision 'v9.9'" in stderr
    assert "Traceback" not in stderr


def test_history_repository_matching_nothing_leaves_every_pr_unlinked(tmp_path) -> None:
    root = tmp_path / "other"
    root.mkdir()
    _git(root, "init", "-q")
    _write(root, {"other/thing.py": "def unrelated_helper():\n    return 0\n"})
    _commit(root, "Start (#1)", 1)
    digests = tmp_path / "digests"
    digests.mkdir()
    (digests / "tags.txt").write_text(
        "acme/other · tag view\n\nA change\n\nSkim. `frobnicate_widgets` in `widgets.py`.\n\n"
        "Another change (#7)\n\nSkim. `Widget.spin` spins.\n",
        "utf-8",
    )
    code, stdout, stderr = build([str(digests)], tmp_path / "out", "--source", f"acme/other={root}")
    assert code == 0, stderr
    assert "commits: 0 PRs linked (0 by number, 0 by content), 2 unlinked" in stdout
    assert not any(n["kind"] == "Commit" for n in Graph(tmp_path / "out").nodes.values())


def test_history_plain_folder_reads_no_history(repo, tmp_path) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(repo["root"], folder, ignore=shutil.ignore_patterns(".git"))
    code, stdout, stderr = build(
        [str(repo["digests"])], tmp_path / "out", "--source", f"{REPO}={folder}"
    )
    assert code == 0, stderr
    assert "history" not in stdout and "commits:" not in stdout
    graph = Graph(tmp_path / "out")
    assert not any(n["kind"] in ("Commit", "FileChange") for n in graph.nodes.values())


def test_history_log_lists_every_commit_with_its_files_and_numbers(repo) -> None:
    log = read_log(repo["root"] / ".git", repo["shas"]["docs"])
    assert len(log) == 10  # eight on main, with the merge, and the branch's two
    by_sha = {c.sha: c for c in log}
    merge = by_sha[repo["shas"]["merge"]]
    assert merge.number == 13 and {c.path for c in merge.changes} == {
        "cache/store.py",
        "tests/test_store.py",
    }
    assert by_sha[repo["shas"]["branch1"]].number is None
    assert by_sha[repo["shas"]["window"]].number == 11


def test_history_eval_reports_commit_link_precision_and_recall(built, tmp_path) -> None:
    _, out, _, _ = built
    gold = [
        {"title": "Add an eviction window to the LRU cache (#11)", "repo": REPO, "pr_number": 11},
        {"title": "Store 记录命中次数", "repo": REPO, "pr_number": 13},
        {"title": "Fix window bound in evict_window", "repo": REPO, "pr_number": 14},
        {"title": "LRU 缓存新增淘汰窗口", "repo": REPO, "pr_number": 11},  # left unlinked
        {
            "title": "Elsewhere",
            "repo": "acme/other",
            "pr_number": 5,
        },  # no history of it: not counted
    ]
    (tmp_path / "gold.json").write_text(json.dumps(gold, ensure_ascii=False), "utf-8")
    result = CliRunner().invoke(
        cli, ["eval", str(out), "--gold", str(tmp_path / "gold.json")], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    (row,) = [line.split() for line in result.stdout.splitlines() if line.startswith("commits")]
    # 4 gold links; 7 PRs are linked (4 of them described by no gold entry); 3 right.
    assert row == ["commits", "4", "7", "3", f"{3 / 7:.3f}", f"{3 / 4:.3f}"]
    gold[0]["pr_number"] = "11"
    (tmp_path / "gold.json").write_text(json.dumps(gold, ensure_ascii=False), "utf-8")
    result = CliRunner().invoke(cli, ["eval", str(out), "--gold", str(tmp_path / "gold.json")])
    assert result.exit_code == 1 and '"pr_number" is not an integer' in result.stderr


def test_history_no_history_reads_the_checkout_alone(repo, tmp_path) -> None:
    spec = f"{REPO}={repo['root']}"
    code, stdout, stderr = build([str(repo["digests"])], tmp_path, "--source", spec, "--no-history")
    assert code == 0, stderr
    assert "history" not in stdout and "commits:" not in stdout and "shallow" not in stderr
    graph = Graph(tmp_path)
    assert not any(n["kind"] in ("Commit", "FileChange") for n in graph.nodes.values())
    assert graph.prs["Store 记录命中次数"]["repositoryBasis"] == "source"  # resolution still


def test_history_match_cache_keeps_only_what_the_last_build_asked(built, repo, tmp_path) -> None:
    _, first, _, _ = built
    out = tmp_path / "out"
    shutil.copytree(first / ".kgraph", out / ".kgraph")
    (links,) = (out / ".kgraph").glob("history-*-links.json")
    assert len(json.loads(links.read_text("utf-8"))["matches"]) == 8  # the PRs of acme/cache
    digests = tmp_path / "digests"
    digests.mkdir()
    (digests / "day.txt").write_text(
        "2026-03-02\nRename util to helpers (#12)\nSkim. `clamp` moves to `cache/helpers.py`.\n",
        "utf-8",
    )
    code, _, stderr = build([str(digests)], out, "--source", f"{REPO}={repo['root']}")
    assert code == 0, stderr
    kept = json.loads(links.read_text("utf-8"))
    assert len(kept["matches"]) == 1
    assert list(kept["changes"]) == [repo["shas"]["rename"]]


def test_history_the_review_date_breaks_a_tie_and_nothing_else() -> None:
    from kgraph.merges import Evidence, _tie_broken_by_date

    evidence = Evidence(None, (), (), (), (), (), (), (), ("2026-03-02",))
    days = {1: "2026-02-27", 2: "2025-11-02", 3: "2026-03-01"}
    tie = [(2, 0.50), (1, 0.45)]  # 2 scores a little better, 1 was merged days before
    assert _tie_broken_by_date(tie, evidence, days.__getitem__) == ([(1, 0.45), (2, 0.50)], True)
    clear = [(2, 0.90), (1, 0.30)]  # no tie: the date changes nothing
    assert _tie_broken_by_date(clear, evidence, days.__getitem__) == (clear, False)
    both_near = [(3, 0.50), (1, 0.45)]  # both near the review: still a tie
    assert _tie_broken_by_date(both_near, evidence, days.__getitem__) == (both_near, False)
    undated = Evidence(None, (), (), (), (), (), (), (), ())
    assert _tie_broken_by_date(tie, undated, days.__getitem__) == (tie, False)


def test_history_a_changed_corpus_rebuilt_in_place_equals_a_clean_build(repo, tmp_path) -> None:
    # A commit link depends on every PR of the repository (one commit, one PR), so a build
    # with a history links everything again: into a folder of an earlier build, after the
    # follow-up's entry is dropped and after it comes back, the outputs are a clean build's.
    lines = DAILY.splitlines(keepends=True)
    at = lines.index("Fix window bound in evict_window\n")
    fewer = tmp_path / "fewer"
    fewer.mkdir()
    (fewer / "2026-03-02.txt").write_text("".join(lines[:at] + lines[at + 2 :]), "utf-8")
    source = ("--source", f"{REPO}={repo['root']}")
    daily, clean = tmp_path / "daily", tmp_path / "clean"
    for inputs in (repo["digests"], fewer, repo["digests"]):
        code, stdout, stderr = build([str(inputs)], daily, *source)
        assert code == 0, stderr
        assert "PRs linked again" not in stdout  # not the delta linker's partial link
        shutil.rmtree(clean, ignore_errors=True)
        code, _, stderr = build([str(inputs)], clean, *source)
        assert code == 0, stderr
        for name in ("graph.ttl", "graph.json", "graph.nt", "graph.html"):
            assert (daily / name).read_bytes() == (clean / name).read_bytes(), (inputs, name)
    assert not (daily / ".kgraph" / "link").exists(), "no link store with a history"


def test_history_a_changed_file_whose_name_is_not_utf8_is_shown_not_fatal(tmp_path) -> None:
    # git names files by bytes: `bad\xfe.py`, changed by a linked commit, once ended the
    # build in a UnicodeEncodeError while the outputs were written.
    root = tmp_path / "repo"
    _git(root.parent, "init", "-q", "-b", "main", root.name)
    _write(root, {"good.py": "def evict():\n    return 0\n"})
    _commit(root, "Start", 1)
    _write(root, {"good.py": "def evict():\n    return 1\n"})
    with open(bytes(root) + b"/bad\xfe.py", "w", encoding="utf-8") as handle:
        handle.write("x = 1\n")
    sha = _commit(root, "Fix evict (#5)", 2)
    digest = tmp_path / "d.txt"
    digest.write_text("2026-02-03\nFix evict (#5)\nChanged `evict()` in `good.py`.\n", "utf-8")
    out = tmp_path / "out"
    for _ in range(2):  # read from git, then from the history's caches
        code, stdout, stderr = build([str(digest)], out, "--source", f"{REPO}={root}")
        assert code == 0, stderr
        assert "1 PRs linked (1 by number" in stdout
        graph = Graph(out)
        assert graph.sha("Fix evict (#5)") == sha
        changed = graph.targets(graph.prs["Fix evict (#5)"], "changesFile")
        assert sorted(f["path"] for f in changed) == ["bad\ufffd.py", "good.py"]
        rdflib.Graph().parse(out / "graph.ttl")


def test_history_design_signals_of_the_change_are_evidence_of_their_patterns(tmp_path) -> None:
    # The review says nothing of validation; the commit adds a check that rejects a bad
    # port: the PR applies fail-fast validation on the change's evidence, of kind "change".
    root = tmp_path / "repo"
    _git(root.parent, "init", "-q", "-b", "main", root.name)
    _write(root, {"net.py": "def serve(port):\n    return port\n", "tests/test_net.py": ""})
    _commit(root, "Start", 1)
    _write(
        root,
        {
            "net.py": "def serve(port):\n    if not 0 < port < 65536:\n"
            '        raise ValueError(f"bad port {port}")\n    return port\n',
            "tests/test_net.py": "import pytest\n\n\n"
            '@pytest.mark.parametrize("port", [0, 65536])\ndef test_bad(port):\n    pass\n',
        },
    )
    sha = _commit(root, "Check the port (#7)", 2)
    digest = tmp_path / "d.txt"
    digest.write_text("2026-02-03\nCheck the port (#7)\nSkim. `serve` in `net.py`.\n", "utf-8")
    out = tmp_path / "out"
    code, _, stderr = build([str(digest)], out, "--source", f"{REPO}={root}")
    assert code == 0, stderr
    graph = Graph(out)
    pr = graph.prs["Check the port (#7)"]
    assert [p["notation"] for p in graph.targets(pr, "appliesPattern")] == ["fail-fast-validation"]
    evidence = sorted(
        (n for n in graph.nodes.values() if n["kind"] == "ChangeEvidence"), key=lambda n: n["line"]
    )
    assert [(e["signal"], e["line"], e["evidenceKind"]) for e in evidence] == [
        ("guard-raise", 3, "change"),
        ("parametrize-added", 4, "change"),
    ]
    assert evidence[0]["addedLine"] == 'raise ValueError(f"bad port {port}")'
    assert [c["sha"] for c in graph.targets(evidence[0], "inCommit")] == [sha]
    assert [f["path"] for f in graph.targets(evidence[1], "inFile")] == ["tests/test_net.py"]
    # The test matrix is evidence below the threshold: shown, not applied.
    (matrix,) = graph.targets(evidence[1], "evidenceOf")
    assert matrix["notation"] == "parametrized-test-matrix"
    assert evidence[1]["confidence"] < DEFAULT_PATTERN_THRESHOLD <= evidence[0]["confidence"]
    conforms, _, report = validate(
        rdflib.Graph().parse(out / "graph.ttl"),
        shacl_graph=rdflib.Graph().parse(SCHEMAS / "shapes.ttl"),
    )
    assert conforms, report
