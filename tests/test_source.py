"""`kgraph build --source`: mentions resolved against a real git repository, end to end.

The repository is built here, in a temporary folder, with git itself: Python packages with
two `scheduler.py` files, a policy class and its override, a dataclass, a C++/CUDA file,
a YAML pipeline, a test file, and a second commit that renames a file and shifts lines,
plus an uncommitted edit that no build may see. Every check runs the real CLI and reads
the real exports.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
import rdflib
from pyshacl import validate

from conftest import SCHEMAS, SEEDS, SHARED
from conftest import build as _build

REPO = "acme/widget"


def build(inputs: list[str], out: Path, *extra: str) -> tuple[int, str, str]:
    """With a Mention node for every span, which the checks read to see what each name of
    a review resolved to (`Graph.named`)."""
    return _build(inputs, out, "--provenance", "full", *extra)


FILES_V1 = {
    "pkg/__init__.py": "",
    "pkg/policies/__init__.py": "",
    "pkg/policies/base.py": """class CachePolicy:
    \"\"\"Base of the eviction policies.\"\"\"

    def touch(self, keys):
        raise NotImplementedError

    def evict(self):
        raise NotImplementedError
""",
    "pkg/policies/lru.py": """from pkg.policies.base import CachePolicy


class LRUCachePolicy(CachePolicy):
    def touch(self, keys):
        self.order = list(keys)

    def evict(self):
        return self.order.pop(0)
""",
    "pkg/util/cache.py": """class LRUCache:
    def touch(self, key):
        return key
""",
    "pkg/offload/__init__.py": "",
    "pkg/offload/scheduler.py": """from dataclasses import dataclass

MAX_WINDOW = 4


def get_window_chunks(window, chunk):
    return max(1, (window - 1) // chunk)


@dataclass
class RequestState:
    max_tokens: int = 0

    def __post_init__(self):
        self.max_tokens = int(self.max_tokens)


class OffloadScheduler:
    def __init__(self, config):
        self.policy_path = config.get("policy_path")

    def _lookup_chunks(self, state):
        return state.max_tokens

    def _window_lookup(self, state):
        return get_window_chunks(MAX_WINDOW, state.max_tokens)
""",
    "pkg/core/__init__.py": "",
    "pkg/core/sched/__init__.py": "",
    "pkg/core/sched/scheduler.py": """from dataclasses import dataclass

from pkg.offload.scheduler import RequestState


@dataclass
class SchedulerConfig:
    budget: int = 0

    def __post_init__(self):
        self.budget = max(self.budget, 0)


class Scheduler:
    def schedule(self, state: RequestState):
        return state
""",
    "pkg/old_name.py": "def legacy_helper():\n    return 1\n",
    "csrc/kernels.cu": """#include <cstdint>

struct Launcher {
  int grid;
};

void declared_only(int n);

__global__ void fused_kernel(float* out,
                             const float* in) {
  out[0] = in[0];
}

void Launcher::launch(int n) {
  grid = n;
}
""",
    "pkg/broken.py": "def half_written(:\n    pass\n\n\ndef recovered_name():\n    return 2\n",
    "ci/pipeline.yaml": """steps:
  - label: unit tests
    source_file_dependencies:
      - pkg/
""",
    "tests/test_scheduler.py": """from pkg.offload.scheduler import get_window_chunks


def test_window_chunks():
    assert get_window_chunks(8, 4) == 1
""",
}

TAG_VIEW = """acme/widget · tag view

Offload window chunks keep the retained token

Worth a close read: `get_window_chunks` rounds up; `test_window_chunks` covers it;
`scheduler.py` calls it.

Per-request token cap for loading

Worth a close read: `__post_init__` parses `max_tokens`, and `_lookup_chunks` applies the cap.

Pending blocks no longer block the window

Skim. `_window_lookup` clears its flag; the window is `MAX_WINDOW`.

Eviction order follows recency once per request

Worth a close read. Focus on `policies/lru.py`: `evict()`, and on the `touch` API;
custom policies set `policy_path`.

The policy base gains a default

Skim. `CachePolicy.touch` now has a default that `lru.py` inherits; `LRUCachePolicy.evict` stays.

Scheduler call sites move

Skim. The scheduler in `pkg/core/sched/` changes; read `scheduler.py` first.

One scheduler file is renamed

Skim. Only `scheduler.py` changes.

Another scheduler file is renamed

Skim. Again only `scheduler.py` changes.

A touch is renamed

Skim. Only `touch` is renamed.

Kernel launch fix

Skim. `fused_kernel` takes a `Launcher`; `declared_only` is gone;
CI reads `source_file_dependencies`; the new `_brand_new_helper` helps;
`Launcher.launch` sets the grid, and `recovered_name` survives a syntax error.

Rename follow-up

Skim. `old_name.py` keeps `legacy_helper`; nobody calls `dirty_only`.
"""

DAILY = """2026-01-05
Chunk lookup honours the cap
Worth a close read. `_lookup_chunks` returns early.
Unrelated tooling change
Skim. `frobnicate_widgets_now` is new.
"""


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        check=True,
        text=True,
    )
    return result.stdout.strip()


def _write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, "utf-8")


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A git repository: REV (first commit), HEAD (rename, shifted lines), a dirty tree."""
    root = tmp_path_factory.mktemp("widget")
    _git(root, "init", "-q")
    _write(root, FILES_V1)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first")
    rev = _git(root, "rev-parse", "HEAD")
    _git(root, "mv", "pkg/old_name.py", "pkg/new_name.py")
    shifted = "# moved\n# lines\n# down\n" + FILES_V1["pkg/offload/scheduler.py"]
    _write(root, {"pkg/offload/scheduler.py": shifted})
    _git(root, "commit", "-qam", "rename and shift")
    head = _git(root, "rev-parse", "HEAD")
    # Uncommitted: git-read builds must not see it, a plain-folder build must.
    (root / "pkg/util/cache.py").write_text(
        FILES_V1["pkg/util/cache.py"] + "\n\ndef dirty_only():\n    return 0\n", "utf-8"
    )
    digests = tmp_path_factory.mktemp("widget-digests")
    (digests / "acme_widget_tagview.txt").write_text(TAG_VIEW, "utf-8")
    (digests / "2026-01-05.txt").write_text(DAILY, "utf-8")
    return {"root": root, "rev": rev, "head": head, "digests": digests, "shifted": shifted}


class Graph:
    """graph.json with the lookups the checks need."""

    def __init__(self, out: Path) -> None:
        data = json.loads((out / "graph.json").read_text("utf-8"))
        self.nodes = {n["id"]: n for n in data["nodes"]}
        self.out: dict[tuple[str, str], list[str]] = defaultdict(list)
        for e in data["edges"]:
            self.out[(e["source"], e["relation"])].append(e["target"])
        self.prs = {n["title"]: n for n in data["nodes"] if n["kind"] == "PullRequest"}

    def named(self, title: str, surface: str) -> dict:
        """The node a mention with this surface in this PR's entry denotes."""
        entries = set(self.out[(self.prs[title]["id"], "describedBy")])
        for node in self.nodes.values():
            if (
                node["kind"] == "Mention"
                and node["surface"] == surface
                and self.out[(node["id"], "inEntry")][0] in entries
            ):
                return self.nodes[self.out[(node["id"], "denotes")][0]]
        raise AssertionError(f"{surface} not named in {title}")

    def one(self, node: dict, relation: str) -> dict:
        (target,) = self.out[(node["id"], relation)]
        return self.nodes[target]

    def targets(self, node: dict, relation: str) -> list[dict]:
        return [self.nodes[t] for t in self.out[(node["id"], relation)]]


@pytest.fixture(scope="module")
def pinned(checkout, tmp_path_factory: pytest.TempPathFactory) -> tuple[Graph, Path, str]:
    out = tmp_path_factory.mktemp("pinned")
    spec = f"{REPO}={checkout['root']}@{checkout['rev']}"
    code, stdout, stderr = build([str(checkout["digests"])], out, "--source", spec)
    assert code == 0, stderr
    return Graph(out), out, stdout


def _url(sha: str, path: str, line: int | None = None) -> str:
    anchor = f"#L{line}" if line else ""
    return f"https://github.com/{REPO}/blob/{sha}/{path}{anchor}"


def test_source_basename_and_partial_path_resolve_to_one_file_node(pinned, checkout) -> None:
    graph, _, _ = pinned
    by_partial = graph.named("Eviction order follows recency once per request", "policies/lru.py")
    by_base = graph.named("The policy base gains a default", "lru.py")
    assert by_partial is by_base
    assert by_base["path"] == "pkg/policies/lru.py"
    assert by_base["resolution"] == "resolved"
    assert by_base["sourceUrl"] == _url(checkout["rev"], "pkg/policies/lru.py")


def test_source_ambiguous_file_keeps_its_name_and_links_its_candidates(pinned) -> None:
    graph, _, _ = pinned
    node = graph.named("One scheduler file is renamed", "scheduler.py")
    assert node["path"] == "scheduler.py" and node["resolution"] == "ambiguous"
    assert node["candidateCount"] == 2
    assert sorted(c["path"] for c in graph.targets(node, "candidate")) == [
        "pkg/core/sched/scheduler.py",
        "pkg/offload/scheduler.py",
    ]
    # The same name in another PR is the same ambiguous node, and pairs no PRs.
    again = graph.named("Another scheduler file is renamed", "scheduler.py")
    assert again is node
    one = graph.prs["One scheduler file is renamed"]["id"]
    other = graph.prs["Another scheduler file is renamed"]["id"]
    assert other not in graph.out[(one, "sharesCodeWith")]


def test_source_folder_span_and_named_symbols_choose_among_candidates(pinned) -> None:
    graph, _, _ = pinned
    by_folder = graph.named("Scheduler call sites move", "scheduler.py")
    assert by_folder["path"] == "pkg/core/sched/scheduler.py"
    assert by_folder["resolution"] == "resolved"
    # `get_window_chunks` is defined in the offload scheduler: that is the one meant.
    by_symbol = graph.named("Offload window chunks keep the retained token", "scheduler.py")
    assert by_symbol["path"] == "pkg/offload/scheduler.py"


def test_source_symbol_resolves_to_its_definition_at_the_pinned_commit(pinned, checkout) -> None:
    graph, _, _ = pinned
    text = FILES_V1["pkg/offload/scheduler.py"]
    node = graph.named("Pending blocks no longer block the window", "_window_lookup")
    line = line_of(text, "def _window_lookup")
    assert node["resolution"] == "resolved"
    assert node["qualifiedName"] == "OffloadScheduler._window_lookup"
    assert node["line"] == line
    assert graph.one(node, "definedIn")["path"] == "pkg/offload/scheduler.py"
    assert node["sourceUrl"] == _url(checkout["rev"], "pkg/offload/scheduler.py", line)
    assert graph.one(node, "memberOf")["qualifiedName"] == "OffloadScheduler"
    assert graph.one(node, "memberOf")["line"] == line_of(text, "class OffloadScheduler")


@pytest.mark.parametrize(
    ("title", "surface", "path", "needle"),
    [
        ("Per-request token cap for loading", "max_tokens", "pkg/offload/scheduler.py",
         "max_tokens: int"),  # a dataclass field
        ("Pending blocks no longer block the window", "MAX_WINDOW", "pkg/offload/scheduler.py",
         "MAX_WINDOW = 4"),  # a module constant
        ("Eviction order follows recency once per request", "policy_path",
         "pkg/offload/scheduler.py", "self.policy_path ="),  # a config attribute
        ("Offload window chunks keep the retained token", "test_window_chunks",
         "tests/test_scheduler.py", "def test_window_chunks"),
        ("Kernel launch fix", "fused_kernel", "csrc/kernels.cu", "void fused_kernel("),
        ("Kernel launch fix", "Launcher", "csrc/kernels.cu", "struct Launcher"),
        ("Kernel launch fix", "Launcher.launch", "csrc/kernels.cu", "void Launcher::launch"),
        ("Kernel launch fix", "recovered_name", "pkg/broken.py", "def recovered_name"),
        ("Kernel launch fix", "source_file_dependencies", "ci/pipeline.yaml",
         "source_file_dependencies:"),  # a YAML key
        ("Rename follow-up", "legacy_helper", "pkg/old_name.py", "def legacy_helper"),
    ],
)  # fmt: skip
def test_source_every_kind_of_definition_is_found(pinned, title, surface, path, needle) -> None:
    graph, _, _ = pinned
    node = graph.named(title, surface)
    assert node["resolution"] == "resolved", node
    assert graph.one(node, "definedIn")["path"] == path
    assert node["line"] == line_of(FILES_V1[path], needle)


def test_source_context_picks_the_definition_of_a_common_name(pinned) -> None:
    graph, _, _ = pinned
    # `__post_init__` is in two files; `_lookup_chunks` (same entry) lives in one of them.
    node = graph.named("Per-request token cap for loading", "__post_init__")
    assert node["qualifiedName"] == "RequestState.__post_init__"
    # "`policies/lru.py`: `evict()`" says where `evict` is: the override, not the base.
    evict = graph.named("Eviction order follows recency once per request", "evict()")
    assert evict["qualifiedName"] == "LRUCachePolicy.evict"
    qualified = graph.named("The policy base gains a default", "LRUCachePolicy.evict")
    assert qualified is evict


def test_source_touch_and_the_qualified_name_are_one_symbol_when_the_source_says_so(
    pinned,
) -> None:
    graph, _, _ = pinned
    # Next to `policies/lru.py`, `touch` is the policies' API: the base method and its
    # override are one family, named by the base definition.
    touch = graph.named("Eviction order follows recency once per request", "touch")
    qualified = graph.named("The policy base gains a default", "CachePolicy.touch")
    assert touch is qualified
    assert touch["qualifiedName"] == "CachePolicy.touch"
    assert graph.one(touch, "definedIn")["path"] == "pkg/policies/base.py"
    # Alone, `touch` may also be `LRUCache.touch`: ambiguous, never merged.
    alone = graph.named("A touch is renamed", "touch")
    assert alone is not touch and alone["resolution"] == "ambiguous"
    assert sorted(c["qualifiedName"] for c in graph.targets(alone, "candidate")) == [
        "CachePolicy.touch",
        "LRUCache.touch",
    ]
    assert graph.targets(alone, "definedIn") == []  # candidates in two files


def test_source_missing_names_are_marked_and_never_the_work_tree(pinned) -> None:
    graph, _, _ = pinned
    for title, surface in [
        ("Kernel launch fix", "_brand_new_helper"),  # the PR adds it
        ("Kernel launch fix", "declared_only"),  # a C++ declaration is not a definition
        ("Rename follow-up", "dirty_only"),  # only in the uncommitted work tree
    ]:
        node = graph.named(title, surface)
        assert node["resolution"] == "missing", surface
        assert "line" not in node and "sourceUrl" not in node
        assert graph.targets(node, "definedIn") == []


def test_source_repository_less_prs_gain_the_repository_whose_code_they_name(pinned) -> None:
    graph, _, _ = pinned
    gained = graph.prs["Chunk lookup honours the cap"]
    assert gained["repositoryBasis"] == "source"
    assert graph.one(gained, "inRepository")["label"] == REPO
    assert graph.named("Chunk lookup honours the cap", "_lookup_chunks")["resolution"] == (
        "resolved"
    )
    stranger = graph.prs["Unrelated tooling change"]
    assert stranger["repositoryBasis"] == "unknown"
    assert "resolution" not in graph.named("Unrelated tooling change", "frobnicate_widgets_now")


def test_source_prs_naming_code_of_one_file_share_code(pinned) -> None:
    graph, _, _ = pinned
    titles = [
        "Offload window chunks keep the retained token",  # get_window_chunks
        "Per-request token cap for loading",  # __post_init__, _lookup_chunks
        "Pending blocks no longer block the window",  # _window_lookup
        "Chunk lookup honours the cap",  # _lookup_chunks, from the daily digest
    ]
    ids = [graph.prs[t]["id"] for t in titles]
    for a in ids:
        assert sorted(set(ids) - {a}) == sorted(set(graph.out[(a, "sharesCodeWith")]) & set(ids)), (
            graph.nodes[a]["title"]
        )
    home = graph.nodes["file/acme/widget/pkg/offload/scheduler.py"]
    assert home["prCount"] >= 4


def test_source_pinned_and_head_builds_differ_as_the_history_does(checkout, tmp_path) -> None:
    code, _, stderr = build(
        [str(checkout["digests"])], tmp_path, "--source", f"{REPO}={checkout['root']}"
    )
    assert code == 0, stderr
    graph = Graph(tmp_path)
    renamed = graph.named("Rename follow-up", "old_name.py")
    assert renamed["resolution"] == "missing"
    helper = graph.named("Rename follow-up", "legacy_helper")
    assert graph.one(helper, "definedIn")["path"] == "pkg/new_name.py"
    node = graph.named("Pending blocks no longer block the window", "_window_lookup")
    line = line_of(checkout["shifted"], "def _window_lookup")
    assert (
        node["line"] == line == line_of(FILES_V1["pkg/offload/scheduler.py"], "def _window_l") + 3
    )
    assert node["sourceUrl"] == _url(checkout["head"], "pkg/offload/scheduler.py", line)
    assert graph.named("Rename follow-up", "dirty_only")["resolution"] == "missing"


def test_source_plain_folder_reads_the_files_on_disk_without_links(checkout, tmp_path) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(checkout["root"], folder, ignore=shutil.ignore_patterns(".git"))
    _write(
        folder, {".venv/pyvenv.cfg": "home = /usr\n", ".venv/lib/site.py": "def x():\n    pass\n"}
    )
    # A link is not a second definition of what it points at: git keeps only the link.
    (folder / "alias.py").symlink_to(folder / "pkg" / "util" / "cache.py")
    out = tmp_path / "out"
    code, stdout, stderr = build([str(checkout["digests"])], out, "--source", f"{REPO}={folder}")
    assert code == 0, stderr
    assert f"{REPO} (folder)" in stdout
    graph = Graph(out)
    dirty = graph.named("Rename follow-up", "dirty_only")
    assert dirty["resolution"] == "resolved" and "sourceUrl" not in dirty
    assert graph.one(dirty, "definedIn")["path"] == "pkg/util/cache.py"
    assert not any("sourceUrl" in n for n in graph.nodes.values())
    (cache,) = (out / ".kgraph").glob("source-acme-widget-folder-*.json")
    listed = json.loads(cache.read_text("utf-8"))["files"]
    assert "pkg/util/cache.py" in listed and ".venv/lib/site.py" not in listed
    assert "alias.py" not in listed


IGNORING = {
    ".gitignore": "build/\n*.gen.py\n!keep.gen.py\n/only_top.py\n!build/keep.py\n[unclosed\n",
    "pkg/a.py": "def a():\n    pass\n",
    "pkg/x.gen.py": "X = 1\n",
    "pkg/keep.gen.py": "KEEP = 1\n",
    "pkg/only_top.py": "TOP = 1\n",
    "pkg/local.py": "LOCAL = 1\n",
    "only_top.py": "TOP = 2\n",
    "build/out.py": "OUT = 1\n",
    "build/keep.py": "KEEP = 2\n",  # its folder is ignored: a negation cannot bring it back
    "sub/.gitignore": "local.py\n!*.gen.py\n",
    "sub/local.py": "LOCAL = 2\n",
    "sub/deep/local.py": "LOCAL = 3\n",
    "sub/z.gen.py": "Z = 1\n",  # the nearer .gitignore re-includes it
    "secret.py": "SECRET = 1\n",
    "node_modules/m.js": "var m;\n",  # never source, whatever the ignore files say
}


def test_source_plain_folder_leaves_out_what_git_ignores_as_git_does(tmp_path) -> None:
    """The same tree as a plain folder and as a git work tree: kgraph's file list of the
    folder is what `git ls-files` lists as kept, less the folders that are never source."""
    from kgraph.source.checkout import list_files, open_checkout

    plain, repo = tmp_path / "plain", tmp_path / "repo"
    for root in (plain, repo):
        _write(root, IGNORING)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for root in (plain, repo):
        (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (root / ".git" / "info" / "exclude").write_text("secret.py\n", "utf-8")
    kept_by_git = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "--cached", "--others", "--exclude-standard"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    checkout = open_checkout(plain, None)
    assert checkout.git_dir is None
    listed = list_files(checkout)
    assert listed == sorted(p for p in kept_by_git if not p.startswith("node_modules/"))
    assert "pkg/keep.gen.py" in listed and "sub/z.gen.py" in listed and "pkg/local.py" in listed
    assert not {"build/keep.py", "sub/deep/local.py", "secret.py", "only_top.py"} & set(listed)
    # A change of the ignore files is a change of the folder: the cached index is not reused.
    before = checkout.fingerprint
    (plain / "sub" / ".gitignore").write_text("local.py\n", "utf-8")
    assert checkout.fingerprint != before and "sub/z.gen.py" not in list_files(checkout)


def test_source_index_is_cached_by_commit_and_not_rebuilt(checkout, pinned, tmp_path) -> None:
    _, first_out, first_stdout = pinned
    assert "indexed in" in first_stdout
    cache = first_out / ".kgraph" / f"source-acme-widget-{checkout['rev']}.json"
    assert cache.is_file()
    out = tmp_path / "out"
    shutil.copytree(first_out / ".kgraph", out / ".kgraph")
    # Doctor the cached line of `_window_lookup`: a build that re-indexed would not see it.
    document = json.loads(cache.read_text("utf-8"))
    number, line, kind, qualname = document["names"]["_window_lookup"].split(",")
    assert qualname == "OffloadScheduler._window_lookup" and int(line) > 0
    document["names"]["_window_lookup"] = f"{number},999,{kind},{qualname}"
    (out / ".kgraph" / cache.name).write_text(json.dumps(document), "utf-8")
    spec = f"{REPO}={checkout['root']}@{checkout['rev']}"
    code, stdout, stderr = build([str(checkout["digests"])], out, "--source", spec)
    assert code == 0, stderr
    assert "index cached" in stdout
    node = Graph(out).named("Pending blocks no longer block the window", "_window_lookup")
    assert node["line"] == 999
    # A damaged cache is rebuilt, never trusted.
    (out / ".kgraph" / cache.name).write_text("{not json", "utf-8")
    code, stdout, _ = build([str(checkout["digests"])], out, "--source", spec)
    assert code == 0 and "indexed in" in stdout
    node = Graph(out).named("Pending blocks no longer block the window", "_window_lookup")
    assert node["line"] == line_of(FILES_V1["pkg/offload/scheduler.py"], "def _window_lookup")


def test_source_build_is_byte_identical_fresh_or_cached(pinned, checkout, tmp_path) -> None:
    _, first_out, _ = pinned
    spec = f"{REPO}={checkout['root']}@{checkout['rev']}"
    code, stdout, _ = build([str(checkout["digests"])], tmp_path, "--source", spec)
    assert code == 0 and "indexed in" in stdout  # a fresh output folder: indexed again
    for name in ("graph.ttl", "graph.json", "graph.nt"):
        assert (tmp_path / name).read_bytes() == (first_out / name).read_bytes(), name


def test_source_build_is_byte_identical_whatever_the_string_hash_seed(
    pinned, checkout, tmp_path
) -> None:
    """Resolution against a checkout walks sets of candidates; the outputs may not follow
    their order, which each process's string hash seed decides."""
    import os
    import sys

    _, first_out, _ = pinned
    spec = f"{REPO}={checkout['root']}@{checkout['rev']}"
    for seed in ("1", "2"):
        subprocess.run(
            [sys.executable, "-m", "kgraph", "build", str(checkout["digests"]), "-o",
             str(tmp_path / seed), "--source", spec, "--no-cache", "-q", "--provenance", "full"],
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )  # fmt: skip
    for name in ("graph.ttl", "graph.json", "graph.nt", "graph.html"):
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes(), name
        assert (tmp_path / "1" / name).read_bytes() == (first_out / name).read_bytes(), name


def test_source_export_conforms_to_the_shapes(pinned) -> None:
    _, out, _ = pinned
    data = rdflib.Graph().parse(out / "graph.ttl")
    for shapes in (SCHEMAS / "shapes.ttl", SHARED / "contract-shapes.ttl"):
        ok, _, report = validate(data, shacl_graph=rdflib.Graph().parse(shapes), inference="none")
        assert ok, report
    kg = rdflib.Namespace("https://w3id.org/kgraph/ns#")
    urls = list(data.objects(None, kg.sourceUrl))
    assert urls and all(isinstance(u, rdflib.URIRef) for u in urls)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-equals-sign", "OWNER/REPO=PATH"),
        ("notarepo=.", "OWNER/NAME"),
        ("acme/widget={root}/nope", "no such folder"),
        ("acme/widget={root}@no-such-rev", "unknown revision"),
    ],
)
def test_source_bad_specs_are_usage_errors(checkout, tmp_path, spec, message) -> None:
    code, _, stderr = build(
        [str(checkout["digests"])], tmp_path, "--source", spec.format(root=checkout["root"])
    )
    assert code == 2 and message in stderr


def test_source_rev_on_a_plain_folder_and_a_repeated_repository_are_usage_errors(
    checkout, tmp_path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, _, stderr = build([str(checkout["digests"])], tmp_path, "--source", f"{REPO}={plain}@v1")
    assert code == 2 and "plain folder" in stderr
    twice = ["--source", f"{REPO}={checkout['root']}"] * 2
    code, _, stderr = build([str(checkout["digests"])], tmp_path, *twice)
    assert code == 2 and "given twice" in stderr


def test_source_the_seeds_three_swa_prs_share_one_vllm_file(seeds_json, tmp_path) -> None:
    """The headline question on the real seed digests: with the vLLM file that defines
    their three functions, the SWA offload/MTP, max_load_tokens and SWA pending-block PRs
    share code; from the text alone they do not."""
    root = tmp_path / "vllm"
    home = "vllm/distributed/kv_transfer/kv_connector/v1/offloading/scheduler.py"
    _write(
        root,
        {
            home: "def get_sliding_window_size_in_chunks(window, chunk):\n    return 1\n\n\n"
            "class RequestOffloadState:\n    def __post_init__(self):\n        pass\n\n\n"
            "class OffloadingConnectorScheduler:\n"
            "    def _sliding_window_lookup(self):\n        pass\n\n"
            "    def _lookup_complete_chunks(self, req_status):\n        pass\n",
            "vllm/v1/core/sched/scheduler.py": "class Scheduler:\n    def __post_init__(self):\n"
            "        pass\n",
        },
    )
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "snapshot")
    code, _, stderr = build([str(SEEDS)], tmp_path / "out", "--source", f"vllm-project/vllm={root}")
    assert code == 0, stderr
    graph = Graph(tmp_path / "out")
    titles = [
        "SWA offload 覆盖补齐 MTP 保留 token",
        "KV Offload 新增按请求的 max_load_tokens 加载上限",
        "修复 SWA 卸载中失效窗口内 pending 块误阻塞就绪前缀",
    ]
    ids = [graph.prs[t]["id"] for t in titles]
    for a in ids:
        assert set(ids) - {a} <= set(graph.out[(a, "sharesCodeWith")]), graph.nodes[a]["title"]
    for title, name in zip(
        titles,
        ["get_sliding_window_size_in_chunks", "_lookup_complete_chunks", "_sliding_window_lookup"],
        strict=True,
    ):
        assert graph.one(graph.named(title, name), "definedIn")["path"] == home
    # The daily digest names no repository: the PR gained it from the checkout.
    assert graph.prs[titles[1]]["repositoryBasis"] == "source"
    text_only = {n["id"]: n for n in seeds_json["nodes"]}
    shared_before = {
        (e["source"], e["target"]) for e in seeds_json["edges"] if e["relation"] == "sharesCodeWith"
    }
    before = [
        n["id"]
        for n in text_only.values()
        if n.get("title") in titles and n["kind"] == "PullRequest"
    ]
    assert not any((a, b) in shared_before for a in before for b in before)


def test_source_index_is_the_same_built_in_one_process_or_several(tmp_path) -> None:
    """A large checkout is parsed by several processes; the index must not depend on it."""
    from kgraph.source.checkout import open_checkout
    from kgraph.source.index import PARALLEL_MIN, build_index

    files = {
        f"pkg/mod{i:03d}.py": f"class C{i}(C{max(i - 1, 0)}):\n    def run_{i % 7}(self, x):\n"
        f"        y{i} = x\n        return y{i}\n\n\nLIMIT_{i} = {i}\n"
        for i in range(PARALLEL_MIN + 40)
    }
    files["native/k.cu"] = "__global__ void k(int* a) {\n  a[0] = 1;\n}\n"
    _write(tmp_path, files)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "many")
    checkout = open_checkout(tmp_path, None)
    alone = build_index(REPO, checkout, workers=1)
    several = build_index(REPO, checkout, workers=2)
    assert alone.definition_count == several.definition_count > 4 * PARALLEL_MIN
    assert alone.to_json() == several.to_json()
    (run,) = [d for d in several.definitions("run_3") if d.path == "pkg/mod010.py"]
    assert (run.qualname, run.line) == ("C10.run_3", 2)


@pytest.mark.parametrize("kind", ["git", "folder"])
def test_source_file_name_that_is_not_utf8_is_left_out_with_a_warning(tmp_path, kind) -> None:
    """`bad\\xffname.py` in the tree ended the build in a UnicodeEncodeError while the
    index cache was written, and no graph at all was written."""
    tree = tmp_path / "tree"
    _write(tree, {"good.py": "def evict():\n    pass\n"})
    with open(bytes(tree) + b"/bad\xffname.py", "w", encoding="utf-8") as handle:
        handle.write("def lost():\n    pass\n")
    if kind == "git":
        _git(tree, "init", "-q")
        _git(tree, "add", "-A")
        _git(tree, "commit", "-qm", "files")
    digest = tmp_path / "d.txt"
    digest.write_text("2026-01-01\nFix evict\nChanged `evict()` in `good.py`.\n", "utf-8")
    for _ in range(2):  # indexed, then read back from the cache: the same warning
        code, _, stderr = build([str(digest)], tmp_path / "out", "--source", f"o/r={tree}")
        assert code == 0, stderr
        assert stderr.startswith(
            f"{tree}:0: warning: 1 file(s) whose name is not UTF-8 left out of o/r's index "
            "('bad\ufffdname.py'); no review can name them\n"
        )
        graph = Graph(tmp_path / "out")
        assert graph.named("Fix evict", "evict()")["resolution"] == "resolved"
