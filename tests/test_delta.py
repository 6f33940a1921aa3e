"""Linking only what changed (`kgraph.delta`): a build into a folder with a link store
gives the bytes a clean build of the same inputs gives, and leaves the store a clean
build leaves, whatever changed: digests added, edited, removed, renamed or moved, and
each way a change reaches PRs it does not describe."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import DATA_OUTPUTS as OUTPUTS
from conftest import ONLY_DATA as ONLY
from conftest import build as _build
from kgraph.linkstore import FOLDER, LinkStore


def build(inputs: list[Path], out: Path, *extra: str) -> str:
    code, stdout, stderr = _build([str(p) for p in inputs], out, *ONLY, *extra)
    assert code == 0, stderr
    return stdout


def relinked(stdout: str) -> int | None:
    """PRs linked again, or None when the build linked everything."""
    found = re.search(r"; (\d+) PRs linked again", stdout)
    return int(found.group(1)) if found else None


def _store(out: Path) -> tuple[list[str], bytes, dict]:
    key = json.loads((out / FOLDER / "index.json").read_text("utf-8"))["key"]
    store = LinkStore(out).load(key)
    assert store is not None
    try:
        return store.ids, store.hashes, store.state
    finally:
        store.close()


def same_as_clean(inputs: list[Path], out: Path, tmp_path: Path, *extra: str) -> None:
    """The outputs are a clean build's, and the store the one a first build leaves."""
    clean, first = tmp_path / "clean", tmp_path / "first"
    for folder in (clean, first):
        shutil.rmtree(folder, ignore_errors=True)
    build(inputs, clean, "--no-cache", *extra)
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (clean / name).read_bytes(), name
    assert relinked(build(inputs, first, *extra)) is None
    ids, hashes, state = _store(out)
    first_ids, first_hashes, first_state = _store(first)
    assert ids == first_ids
    differ = [
        ids[i]
        for i in range(len(ids))
        if hashes[16 * i : 16 * i + 16] != first_hashes[16 * i : 16 * i + 16]
    ]
    assert not differ, differ[:5]
    assert state == first_state


@pytest.fixture
def corpus(generated_corpus: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "digests"
    shutil.copytree(generated_corpus, folder)
    return folder


def _extra(tmp_path: Path, count: int = 1) -> list[Path]:
    from bench.generate import generate

    folder = tmp_path / "extra"
    if not folder.exists():
        generate(folder, 90, seed=99)
    return sorted(folder.rglob("*.txt"))[:count]


def _edit(digest: Path) -> None:
    text = digest.read_text("utf-8")
    changed = re.sub(r"`([A-Za-z_]\w+)`", r"`\1_edited`", text, count=4)
    lines = changed.splitlines()
    del lines[3]  # a title or a summary gone: entries shift, a PR may lose its entry
    digest.write_text("\n".join(lines) + "\n", "utf-8")


@pytest.mark.parametrize("change", ["add", "add-two", "edit", "remove", "rename"])
def test_delta_gives_the_clean_build_of_the_same_inputs(corpus, tmp_path, change) -> None:
    out = tmp_path / "out"
    build([corpus], out)
    digests = sorted(corpus.rglob("*.txt"))
    if change == "add":
        shutil.copy(_extra(tmp_path)[0], corpus / "daily" / "new.txt")
    elif change == "add-two":
        for i, digest in enumerate(_extra(tmp_path, 2)):
            shutil.copy(digest, corpus / "tag-view" / f"new-{i}.txt")
    elif change == "edit":
        _edit(digests[4])
    elif change == "remove":
        digests[6].unlink()
    else:
        digests[2].rename(digests[2].with_name("renamed.txt"))
    stdout = build([corpus], out)
    assert relinked(stdout) is not None and relinked(stdout) < 60, stdout
    same_as_clean([corpus], out, tmp_path)


def test_delta_after_many_changes_keeps_the_clean_store(corpus, tmp_path) -> None:
    """Changes one after the other: no count drifts from a clean build's."""
    out = tmp_path / "out"
    build([corpus], out)
    extra = _extra(tmp_path, 3)
    digests = sorted(corpus.rglob("*.txt"))
    shutil.copy(extra[0], corpus / "daily" / "a.txt")
    build([corpus], out)
    _edit(digests[1])
    build([corpus], out)
    (corpus / "daily" / "a.txt").unlink()
    shutil.copy(extra[1], corpus / "daily" / "b.txt")
    build([corpus], out)
    digests[5].rename(digests[5].with_name("moved.txt"))
    shutil.copy(extra[2], corpus / "c.txt")
    assert relinked(build([corpus], out)) is not None
    same_as_clean([corpus], out, tmp_path)


def test_delta_same_digests_in_a_new_folder_link_nothing_again(corpus, tmp_path) -> None:
    out = tmp_path / "out"
    build([corpus], out)
    moved = tmp_path / "checkout-2" / "digests"
    shutil.move(corpus, moved)
    shutil.copy(_extra(tmp_path)[0], moved / "new.txt")
    stdout = build([moved], out)
    assert "1 digests extracted" in stdout and relinked(stdout) is not None
    same_as_clean([moved], out, tmp_path)


def test_delta_gives_up_when_the_digests_are_read_in_another_order(corpus, tmp_path) -> None:
    """A PR is titled by its first entry in path order: digests moved so that they sort
    otherwise could retitle PRs no change reaches, so everything is linked again."""
    out = tmp_path / "out"
    build([corpus / "daily", corpus / "tag-view"], out)
    first = tmp_path / "a"
    shutil.move(corpus / "tag-view", first)
    stdout = build([corpus / "daily", first], out)
    assert relinked(stdout) is None
    same_as_clean([corpus / "daily", first], out, tmp_path)


def test_delta_damaged_store_links_everything_again(corpus, tmp_path) -> None:
    out = tmp_path / "out"
    build([corpus], out)
    records = out / FOLDER / "records.bin"
    data = bytearray(records.read_bytes())
    for at in range(100, len(data), len(data) // 50):
        data[at] ^= 0x01  # records of many subjects, the change's among them
    records.write_bytes(bytes(data))
    shutil.copy(_extra(tmp_path)[0], corpus / "new.txt")
    assert relinked(build([corpus], out)) is None
    same_as_clean([corpus], out, tmp_path)


def test_delta_with_a_damaged_cache_reads_the_digest_again(corpus, tmp_path) -> None:
    """The linker needs the entries of every PR a change reaches; a cached extraction it
    cannot trust is read again from the digest. One of a digest now gone or changed
    cannot be: then everything is linked again."""
    out = tmp_path / "out"
    build([corpus], out)
    for cached in (out / ".kgraph" / "extract").glob("*.json"):
        cached.write_bytes(b"damaged")
    shutil.copy(_extra(tmp_path)[0], corpus / "new.txt")
    assert relinked(build([corpus], out)) is not None
    same_as_clean([corpus], out, tmp_path)
    for cached in (out / ".kgraph" / "extract").glob("*.json"):
        cached.write_bytes(b"damaged")
    _edit(sorted(corpus.rglob("*.txt"))[3])
    assert "is not in the cache" in build([corpus], out)
    same_as_clean([corpus], out, tmp_path)


@pytest.mark.parametrize(
    "options",
    [("--provenance", "full"), ("--jobs", "2"), ("--share-limit", "3")],
    ids=["full", "jobs", "share-limit"],
)
def test_delta_with_options(corpus, tmp_path, options) -> None:
    out = tmp_path / "out"
    build([corpus], out, *options)
    shutil.copy(_extra(tmp_path)[0], corpus / "new.txt")
    _edit(sorted(corpus.rglob("*.txt"))[2])
    assert relinked(build([corpus], out, *options)) is not None
    same_as_clean([corpus], out, tmp_path, *options)


def test_delta_other_options_link_everything(corpus, tmp_path) -> None:
    out = tmp_path / "out"
    build([corpus], out)
    assert relinked(build([corpus], out, "--share-limit", "5")) is None
    same_as_clean([corpus], out, tmp_path, "--share-limit", "5")


# --- each way a change reaches PRs it does not describe ----------------------------------------


def _jsonl(path: Path, *entries: dict) -> Path:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), "utf-8")
    return path


def _entry(title: str, summary: str, repo: str | None = "acme/kv", **more: object) -> dict:
    entry: dict = {"title": title, "summary": summary, **more}
    if repo:
        entry["repo"] = repo
    return entry


CASES: dict[str, tuple[list[dict], list[dict]]] = {
    # `scheduler.py` was the one longer path's; a second one makes it its own node again.
    "a path that merged no longer does": (
        [
            _entry("Move the queue", "Touches `sched/scheduler.py` and `queue.py`."),
            _entry("Fix a race", "The race was in `scheduler.py`; see `queue.py`."),
        ],
        [_entry("Rename helpers", "Adds `other/scheduler.py` and `queue.py`.")],
    ),
    # `touch` was `CachePolicy.touch`, the one class-qualified `touch`; no longer.
    "a symbol that merged no longer does": (
        [
            _entry("Recency once", "`CachePolicy.touch` now counts once; `flush()` too."),
            _entry("Lazy eviction", "`touch()` is lazy and `flush()` waits."),
        ],
        [_entry("LRU rework", "`LRUPolicy.touch` overrides it; `flush()` stays.")],
    ),
    # A PR without a repository took acme/kv from its distinctive names; now two have them.
    "a repository taken from shared code changes": (
        [
            _entry("Split the allocator", "`core/block_pool_manager.py` and `BlockPoolManager`."),
            _entry(
                "Allocator follow-up",
                "Again `core/block_pool_manager.py` with `BlockPoolManager.evict_blocks`.",
                repo=None,
            ),
        ],
        [
            _entry(
                "Port the allocator",
                "`core/block_pool_manager.py` and `BlockPoolManager.evict_blocks` ported.",
                repo="other/runtime",
            )
        ],
    ),
    # A new repository's name is a package: a path under it now names that repository.
    "a new repository names a package": (
        [
            _entry("Split the engine", "`engine/block_pool.py` moves.", repo=None),
            _entry("Engine follow-up", "`engine/block_pool.py` again.", repo=None),
        ],
        [_entry("Port the engine", "`engine/other.py` is new.", repo="other/engine")],
    ),
    # A title of the last build gains its number: PRs of one id merge across titles.
    "a PR gains a number and another title": (
        [
            _entry("Fix the window", "`window.py` fixed."),
            _entry("Fix the window, part two", "`window.py` again.", number=12),
        ],
        [_entry("Fix the window (#12)", "`window.py`, the last part.")],
    ),
    # `evict` had one home, `lru.py`; a second review places it elsewhere.
    "a symbol gains a second home": (
        [
            _entry("Evict lazily", "`lru.py` 的 `evict()` 改为惰性。"),
            _entry("Evict early", "`evict()` 提前调用。"),
        ],
        [_entry("Move evict", "`policy.py` 的 `evict()` 也有一份。")],
    ),
    # A bare name is code once the corpus backticks it: the PR writing it bare gains it.
    "a bare name becomes code": (
        [
            _entry("Split results", "The LookupResult now carries its block ids."),
            _entry("Other work", "`elsewhere.py` again."),
        ],
        [_entry("Lookup rework", "`LookupResult` gains a field.")],
    ),
    # Two PRs shared `flush`; a third and a fourth make it a hub (--share-limit 3).
    "shared code becomes a hub": (
        [
            _entry("Flush once", "`flush_pending()` once."),
            _entry("Flush twice", "`flush_pending()` twice."),
            _entry("Flush thrice", "`flush_pending()` thrice."),
        ],
        [
            _entry("Flush four", "`flush_pending()` four."),
            _entry("Flush five", "`flush_pending()` five."),
        ],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_delta_reaches_every_pr_a_change_touches(tmp_path, case) -> None:
    first, added = CASES[case]
    digests = tmp_path / "digests"
    digests.mkdir()
    _jsonl(digests / "day1.jsonl", *first)
    _jsonl(digests / "day0.jsonl", _entry("Unrelated", "`elsewhere.py` only."))
    out = tmp_path / "out"
    extra = ("--share-limit", "3")
    build([digests], out, *extra)
    _jsonl(digests / "day2.jsonl", *added)
    stdout = build([digests], out, *extra)
    assert relinked(stdout) is not None and relinked(stdout) >= len(added)
    same_as_clean([digests], out, tmp_path, *extra)
    (digests / "day2.jsonl").unlink()  # and back
    assert relinked(build([digests], out, *extra)) is not None
    same_as_clean([digests], out, tmp_path, *extra)


def test_delta_page_is_the_clean_builds_page(tmp_path) -> None:
    first, added = CASES["a symbol gains a second home"]
    digests = tmp_path / "digests"
    digests.mkdir()
    _jsonl(digests / "day1.jsonl", *first)
    out = tmp_path / "out"
    _build([str(digests)], out)
    _jsonl(digests / "day2.jsonl", *added)
    code, stdout, stderr = _build([str(digests)], out)
    assert code == 0 and relinked(stdout) is not None, stderr
    _build([str(digests)], tmp_path / "clean", "--no-cache")
    for name in (*OUTPUTS, "graph.html"):
        assert (out / name).read_bytes() == (tmp_path / "clean" / name).read_bytes(), name


def test_delta_a_relinked_graph_is_readable_after_the_build(tmp_path) -> None:
    # The summary of a relinked build with --source counts the mentions' resolutions from
    # the graph, which reads the last build's store: the build once closed the store first
    # and ended in "cannot write the output: Bad file descriptor"; an API caller reading
    # `result.graph` met the same error.
    import kgraph

    source, digests = tmp_path / "src", tmp_path / "d"
    source.mkdir()
    digests.mkdir()
    (source / "lru.py").write_text("def evict():\n    pass\n", "utf-8")
    (digests / "a.txt").write_text("2026-01-01\nFix evict\nChanged `evict()` in `lru.py`.\n")
    out = tmp_path / "out"
    build([digests], out, "--source", f"o/r={source}")
    (digests / "b.txt").write_text("2026-01-02\nTidy evict\nRenamed a local in `evict()`.\n")
    stdout = build([digests], out, "--source", f"o/r={source}")
    assert relinked(stdout) is not None and "mentions 2 resolved" in stdout
    (digests / "c.txt").write_text("2026-01-03\nDoc evict\nDocumented `evict()`.\n")
    built = kgraph.build(digests, out, sources=[f"o/r={source}"])
    assert built.exit_code == 0
    assert sum(n.kind == "PullRequest" for n in built.result.graph.nodes.values()) == 3
