"""Check a build with history against gold and against git itself, the issue's three figures.

1. links: each gold entry with a `pr_number` (of the repository given) is found by title;
   its PR is right when `kg:mergedAs` is the commit whose subject merged that number,
   wrong when it is another commit, unlinked otherwise;
2. changed files: for every linked PR, the files of its `kg:FileChange`s (path, change type,
   previous path, lines added and removed) against `git diff-tree -r -M` of the commit, run
   here;
3. shared code: the `kg:sharesCodeWith` pairs among linked PRs against the pairs whose
   commits change a common file, computed here from git's own lists, renames followed to
   the revision read with `git log --diff-filter=R` (files changed by more PRs than the
   build's share limit pair none, as in the build).

    python bench/history_quality.py OUT --gold ../shared/dev/gold.json \\
        --repo /work/.mirror/jsboige+vllm/repo --rev 6adad087… --name vllm-project/vllm
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from itertools import combinations
from pathlib import Path

MERGED = re.compile(r"\(#([0-9]+)\)\s*$|^Merge pull request #([0-9]+) ")
SHARE_LIMIT = 20  # kgraph build's default --share-limit


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "--git-dir", str(repo), "--work-tree", "/nonexistent", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def normalize(title: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\s*\(#\d+\)\s*$", "", title)).strip().casefold()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="a kgraph build output folder")
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--repo", type=Path, required=True, help="the git directory")
    parser.add_argument("--rev", required=True)
    parser.add_argument("--name", required=True, help="OWNER/REPO")
    args = parser.parse_args(argv)

    data = json.loads((args.out / "graph.json").read_text("utf-8"))
    nodes = {n["id"]: n for n in data["nodes"]}
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for e in data["edges"]:
        out[(e["source"], e["relation"])].append(e["target"])
    prs = [n for n in data["nodes"] if n["kind"] == "PullRequest"]
    by_title: dict[str, dict] = {}
    for pr in prs:
        for title in [pr["title"], *(nodes[e]["title"] for e in out[(pr["id"], "describedBy")])]:
            by_title.setdefault(normalize(title), pr)

    # 1. links
    gold = [
        g
        for g in json.loads(args.gold.read_text("utf-8"))
        if g.get("pr_number") and (g.get("repo_verified") or g.get("repo")) == args.name
    ]
    right = wrong = unlinked = 0
    for g in gold:
        pr = by_title.get(normalize(g["title"]))
        merged = out[(pr["id"], "mergedAs")] if pr else []
        if not merged:
            unlinked += 1
            print(f"  unlinked  #{g['pr_number']}  {g['title']}")
            continue
        found = MERGED.search(nodes[merged[0]]["title"])
        number = int(found.group(1) or found.group(2)) if found else None
        if number == g["pr_number"]:
            right += 1
        else:
            wrong += 1
            print(f"  WRONG     #{g['pr_number']} linked to {nodes[merged[0]]['label']}")
    print(
        f"links: {right} of {len(gold)} right ({right / max(len(gold), 1):.0%}), "
        f"{wrong} wrong, {unlinked} unlinked"
    )

    # 2. changed files
    linked = {
        pr["id"]: nodes[out[(pr["id"], "mergedAs")][0]] for pr in prs if out[(pr["id"], "mergedAs")]
    }
    renames = _renames(args.repo, args.rev)
    files_of: dict[str, set[str]] = {}
    checked = differ = 0
    for pr_id, commit in sorted(linked.items()):
        sha = commit["sha"]
        parent = git(args.repo, "rev-parse", f"{sha}^1").stdout.strip()
        listed = git(args.repo, "diff-tree", "-r", "-M", "-z", "--name-status", parent, sha)
        expected = _name_status(listed.stdout)
        counts = git(args.repo, "diff-tree", "-r", "-M", "-z", "--numstat", parent, sha)
        lines = _numstat(counts.stdout) if counts.returncode == 0 else {}
        got = {}
        for change_id in out[(commit["id"], "hasChange")]:
            c = nodes[change_id]
            got[c["path"]] = (
                c["changeType"][0].upper() if c["changeType"] != "type-changed" else "T",
                c.get("previousPath", ""),
                (c["linesAdded"], c["linesRemoved"]) if "linesAdded" in c else None,
            )
        want = {path: (status, old, lines.get(path)) for path, (status, old) in expected.items()}
        if counts.returncode != 0:  # a blob the mirror lacks: compare the lists, not lines
            got = {p: (s, o, None) for p, (s, o, _) in got.items()}
            want = {p: (s, o, None) for p, (s, o, _) in want.items()}
        checked += 1
        if got != want:
            differ += 1
            print(f"  files differ for {commit['label']}: {sorted(set(got) ^ set(want))}")
        files_of[pr_id] = {_at_head(path, sha, renames, args.repo) for path in expected}
    print(f"changed files: {checked - differ} of {checked} linked commits equal git's diff")

    # 3. shared code among linked PRs
    touched: dict[str, set[str]] = defaultdict(set)
    for pr_id, paths in files_of.items():
        for path in paths:
            touched[path].add(pr_id)
    expected_pairs = {
        frozenset((a, b))
        for a, b in combinations(sorted(files_of), 2)
        if any(len(touched[p]) <= SHARE_LIMIT for p in files_of[a] & files_of[b])
    }
    graph_pairs = {
        frozenset((a, b)) for a in linked for b in out[(a, "sharesCodeWith")] if b in linked
    }
    print(
        f"shared code: {len(graph_pairs)} pairs of linked PRs in the graph, "
        f"{len(expected_pairs)} whose commits change a common file; "
        + ("equal" if graph_pairs == expected_pairs else "DIFFERENT")
    )
    for pair in sorted(graph_pairs ^ expected_pairs, key=sorted):
        print("  ", " | ".join(nodes[p]["title"] for p in sorted(pair)))
    ok = wrong <= 1 and right >= 0.9 * len(gold) and not differ and graph_pairs == expected_pairs
    return 0 if ok else 1


def _name_status(text: str) -> dict[str, tuple[str, str]]:
    tokens = text.split("\0")
    found: dict[str, tuple[str, str]] = {}
    i = 0
    while i < len(tokens) and tokens[i]:
        status = tokens[i][0]
        if status in "RC":
            found[tokens[i + 2]] = (status, tokens[i + 1])
            i += 3
        else:
            found[tokens[i + 1]] = (status, "")
            i += 2
    return found


def _numstat(text: str) -> dict[str, tuple[int, int] | None]:
    tokens = text.split("\0")
    found: dict[str, tuple[int, int] | None] = {}
    i = 0
    while i < len(tokens) and tokens[i]:
        added, removed, path = tokens[i].lstrip("\n").split("\t")
        i += 1
        if not path:
            path = tokens[i + 1]
            i += 2
        found[path] = (int(added), int(removed)) if added != "-" else None
    return found


def _renames(repo: Path, rev: str) -> list[tuple[str, str, str]]:
    """(commit, old, new) of every rename up to `rev`, oldest first."""
    log = git(repo, "log", "--reverse", "-M", "--diff-filter=R", "--name-status", "-z",
              "--format=%x01%H", rev)  # fmt: skip
    found = []
    for chunk in log.stdout.split("\x01")[1:]:
        sha, _, rest = chunk.partition("\0")
        sha = sha.strip()
        tokens = [t for t in rest.strip("\n").split("\0")]
        i = 0
        while i + 2 < len(tokens):
            if tokens[i].lstrip("\n").startswith("R"):
                found.append((sha, tokens[i + 1], tokens[i + 2]))
                i += 3
            else:
                i += 1
    return found


def _at_head(path: str, sha: str, renames: list[tuple[str, str, str]], repo: Path) -> str:
    """`path` after every rename made by a commit that descends from `sha`."""
    for commit, old, new in renames:
        if old == path and commit != sha and _descends(repo, commit, sha):
            path = new
    return path


_DESCENDS: dict[tuple[str, str], bool] = {}


def _descends(repo: Path, commit: str, ancestor: str) -> bool:
    key = (commit, ancestor)
    if key not in _DESCENDS:
        _DESCENDS[key] = git(repo, "merge-base", "--is-ancestor", ancestor, commit).returncode == 0
    return _DESCENDS[key]


if __name__ == "__main__":
    sys.exit(main())
