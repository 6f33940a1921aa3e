"""A small real git repository for the history tests (tests/test_history.py and the page's
browser test): squash commits `… (#N)`, a branch merged with `Merge pull request #N from …`,
a rename, a follow-up, a removed method, vendored, binary and generated files, a blob the
repository lacks, a shallow clone of it, and a daily digest about its PRs.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from kgraph.history.log import MAX_LINES_PER_FILE

REPO = "acme/cache"

LRU_V1 = '''"""An LRU cache."""
from cache.util import clamp


class LRUCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.entries = {}

    def get(self, key):
        return self.entries.get(key)

    def put(self, key, value):
        self.entries[key] = value
'''
LRU_V2 = (
    LRU_V1.replace('"""An LRU cache."""\n', '"""An LRU cache."""\n\nWINDOW_LIMIT = 8\n')
    + '''
    def evict_window(self, window_size):
        """Drop the entries outside the newest window."""
        size = clamp(window_size, 0, WINDOW_LIMIT)
        keep = list(self.entries)[-size:]
        self.entries = {k: self.entries[k] for k in keep}
'''
)
LRU_V3 = LRU_V2.replace(
    "clamp(window_size, 0, WINDOW_LIMIT)", "clamp(window_size, 1, WINDOW_LIMIT)"
)
STORE_V1 = """class Store:
    def __init__(self, path):
        self.path = path

    def load(self):
        with open(self.path) as f:
            return f.read()

    def save(self, text):
        with open(self.path, "w") as f:
            f.write(text)
"""
STORE_V2 = (
    STORE_V1.replace(
        "        self.path = path\n", "        self.path = path\n        self.hit_count = 0\n"
    )
    + """
    def record_hit(self):
        self.hit_count += 1
        return self.hit_count
"""
)
STORE_V3 = STORE_V2.replace(
    """    def load(self):
        with open(self.path) as f:
            return f.read()

""",
    "",
)
UTIL = """def clamp(value, low, high):
    return max(low, min(value, high))


def halve(value):
    return value // 2


def double(value):
    return value * 2


def square(value):
    return value * value
"""
HELPERS = UTIL.replace("min(value, high)", "min(high, value)")

# A daily digest (no repository named): one title line, then one summary line.
DAILY = "".join(
    line + "\n"
    for line in [
        "2026-03-02",
        "Add an eviction window to the LRU cache (#11)",
        "Worth a close read. `LRUCache.evict_window` keeps the newest entries,"
        " at most `WINDOW_LIMIT`.",
        "Store 记录命中次数",
        "值得精读。`Store.record_hit` 递增 `hit_count`，测试见 `tests/test_store.py`；改动只在"
        " `cache/store.py`。",
        "Fix window bound in evict_window",
        "Skim. `LRUCache.evict_window` now keeps at least one entry,"
        " `clamp(window_size, 1, WINDOW_LIMIT)`; `test_evict_window_never_empties`"
        " in `tests/test_lru.py` covers it.",
        "LRU 缓存新增淘汰窗口",
        "值得精读。`LRUCache.evict_window` 只保留窗口内的条目，上限 `WINDOW_LIMIT`；见"
        " `cache/lru.py` 与 `tests/test_lru.py` 的 `test_evict_window_keeps_the_newest`。",
        "Rename util to helpers (#12)",
        "Skim. `clamp` moves to `cache/helpers.py`.",
        "Remove the legacy loader (#15)",
        "Skim. `Store.load` is gone; `Store.save` stays.",
        "Bump the vendored library and the logo (#16)",
        "Skim. `vendor/big/lib.js` is regenerated and `cache/table.py` is rebuilt.",
        "Document the diagram (#17)",
        "Skim. `docs/diagram.html` shows the flow.",
        "Throttle uploads",
        "Worth a close read. `UploadLimiter.throttle_uploads` in"
        " `cache/limiter.py` waits for a token.",
        "Speed up the scheduler (#99)",
        "Skim. `Scheduler.tick` is faster.",
    ]
)


def _git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    if date:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    result = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        check=True,
        text=True,
        env=env,
    )
    return result.stdout.strip()


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (root / path).write_bytes(content)
        else:
            (root / path).write_text(content, "utf-8")


def _commit(root: Path, message: str, day: int) -> str:
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", message, date=f"2026-02-{day:02d}T12:00:00+00:00")
    return _git(root, "rev-parse", "HEAD")


def make_repo(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The repository, its commits by name, a shallow clone, and the digests."""
    root = tmp_path_factory.mktemp("cache")
    _git(root, "init", "-q", "-b", "main")
    _write(
        root,
        {
            "cache/__init__.py": "",
            "cache/lru.py": LRU_V1,
            "cache/store.py": STORE_V1,
            "cache/util.py": UTIL,
            "README.md": "# cache\n",
            "vendor/big/lib.js": "function lib() {\n  return 1;\n}\n",
            "assets/logo.png": bytes(range(256)) * 4,
        },
    )
    shas = {"root": _commit(root, "Initial import", 1)}
    _write(root, {"cache/lru.py": LRU_V2, "cache/util.py": UTIL + "\n\nLOW = 0\n"})
    _write(root, {"tests/test_lru.py": "def test_evict_window_keeps_the_newest():\n    pass\n"})
    shas["window"] = _commit(root, "[Core] Add an LRU eviction window (#11)", 3)
    _git(root, "mv", "cache/util.py", "cache/helpers.py")
    _write(root, {"cache/helpers.py": HELPERS + "\n\nLOW = 0\n"})
    _write(root, {"cache/lru.py": LRU_V2.replace("cache.util", "cache.helpers")})
    shas["rename"] = _commit(root, "Rename util to helpers (#12)", 4)
    _git(root, "checkout", "-qb", "hits")
    _write(root, {"cache/store.py": STORE_V2})
    shas["branch1"] = _commit(root, "Track hits in the store", 5)
    _write(root, {"tests/test_store.py": "def test_record_hit_counts():\n    pass\n"})
    shas["branch2"] = _commit(root, "Test hit tracking", 6)
    _git(root, "checkout", "-q", "main")
    _git(
        root, "merge", "--no-ff", "-q", "-m", "Merge pull request #13 from dev/hits", "hits",
        date="2026-02-07T12:00:00+00:00",
    )  # fmt: skip
    shas["merge"] = _git(root, "rev-parse", "HEAD")
    _write(root, {"cache/lru.py": LRU_V3.replace("cache.util", "cache.helpers")})
    _write(
        root,
        {
            "tests/test_lru.py": "def test_evict_window_keeps_the_newest():\n    pass\n\n\n"
            "def test_evict_window_never_empties():\n    pass\n"
        },
    )
    shas["follow-up"] = _commit(root, "Fix window bound in evict_window (#14)", 8)
    _write(root, {"cache/store.py": STORE_V3})
    shas["remove"] = _commit(root, "Remove legacy loader (#15)", 9)
    table = "".join(f"ROW_{i} = {i}\n" for i in range(MAX_LINES_PER_FILE + 2000))
    _write(
        root,
        {
            "vendor/big/lib.js": "".join(f"var v{i} = {i};\n" for i in range(20_000)),
            "assets/logo.png": bytes(reversed(range(256))) * 4,
            "cache/table.py": table,
        },
    )
    shas["vendored"] = _commit(root, "Bump vendored lib and logo (#16)", 10)
    diagram = "<html><body>" + "<p>flow</p>\n" * 200 + "</body></html>\n"
    _write(root, {"docs/diagram.html": diagram})
    shas["docs"] = _commit(root, "Add the docs diagram (#17)", 11)
    shallow = tmp_path_factory.mktemp("shallow") / "cache"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "3", f"file://{root}", str(shallow)],
        check=True,
        capture_output=True,
    )
    # The mirror lacks the diagram's blob, as GitHub's archives lack their largest files.
    blob = _git(root, "rev-parse", "HEAD:docs/diagram.html")
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    digests = tmp_path_factory.mktemp("cache-digests")
    (digests / "2026-03-02.txt").write_text(DAILY, "utf-8")
    return {"root": root, "shas": shas, "shallow": shallow, "digests": digests, "blob": blob}


class Graph:
    """graph.json with the lookups the checks need."""

    def __init__(self, out: Path) -> None:
        data = json.loads((out / "graph.json").read_text("utf-8"))
        self.nodes = {n["id"]: n for n in data["nodes"]}
        self.out: dict[tuple[str, str], list[str]] = defaultdict(list)
        for e in data["edges"]:
            self.out[(e["source"], e["relation"])].append(e["target"])
        self.prs = {n["title"]: n for n in data["nodes"] if n["kind"] == "PullRequest"}

    def targets(self, node: dict, relation: str) -> list[dict]:
        return [self.nodes[t] for t in self.out[(node["id"], relation)]]

    def merged(self, title: str) -> dict | None:
        found = self.targets(self.prs[title], "mergedAs")
        assert len(found) <= 1
        return found[0] if found else None

    def sha(self, title: str) -> str | None:
        commit = self.merged(title)
        return commit["sha"] if commit else None
