"""Incremental builds: only new or changed digests are extracted, and the outputs are the
same bytes as a clean build's."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

import kgraph
from conftest import DATA_OUTPUTS as OUTPUTS
from conftest import ONLY_DATA as ONLY
from conftest import SEED_DIGEST, SEEDS
from conftest import build as _build
from kgraph import atomic, cache, outputs
from kgraph.atomic import write_sealed


@pytest.fixture
def corpus(generated_corpus: Path) -> Path:
    return generated_corpus


def build(inputs: list[str], out: Path, *extra: str) -> tuple[int, str, str]:
    return _build(inputs, out, *ONLY, *extra)


def _copy(corpus: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "digests"
    shutil.copytree(corpus, folder)
    return folder


def _same_as_clean(inputs: Path, incremental: Path, tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    shutil.rmtree(clean, ignore_errors=True)
    code, _, stderr = build([str(inputs)], clean, "--no-cache")
    assert code == 0, stderr
    assert not (clean / ".kgraph").exists()  # --no-cache neither reads nor writes it
    for name in OUTPUTS:
        assert (incremental / name).read_bytes() == (clean / name).read_bytes(), name


def _counts(stdout: str) -> tuple[int, int, int]:
    """(extracted, unchanged, removed) digests from the summary line; a clean build says
    nothing, as every digest was extracted."""
    found = re.search(r"; (\d+) digests extracted, (\d+) unchanged, (\d+) removed[;)]", stdout)
    if found is None:
        total = int(re.match(r"(\d+) digests", stdout).group(1))
        return total, 0, 0
    extracted, unchanged, removed = found.groups()
    return int(extracted), int(unchanged), int(removed)


def _cached_files(out: Path) -> list[Path]:
    return sorted((out / ".kgraph" / "extract").glob("*.json"))


def test_incremental_rebuild_without_changes_extracts_nothing(corpus, tmp_path) -> None:
    inputs, out = _copy(corpus, tmp_path), tmp_path / "out"
    code, stdout, _ = build([str(inputs)], out)
    digests = len(list(inputs.rglob("*.txt")))
    assert code == 0 and _counts(stdout) == (digests, 0, 0) and digests > 15
    assert len(_cached_files(out)) == digests
    code, stdout, _ = build([str(inputs)], out)
    assert code == 0 and _counts(stdout) == (0, digests, 0)
    _same_as_clean(inputs, out, tmp_path)


def test_incremental_added_digest_is_the_only_one_extracted(corpus, tmp_path) -> None:
    inputs, out = _copy(corpus, tmp_path), tmp_path / "out"
    assert build([str(inputs)], out)[0] == 0
    before = len(list(inputs.rglob("*.txt")))
    shutil.copy(SEEDS / SEED_DIGEST, inputs / SEED_DIGEST)
    code, stdout, _ = build([str(inputs)], out)
    assert code == 0 and _counts(stdout) == (1, before, 0)
    _same_as_clean(inputs, out, tmp_path)
    nodes = json.loads((out / "graph.json").read_text("utf-8"))["nodes"]
    assert any(n["label"] == "SWA offload 覆盖补齐 MTP 保留 token" for n in nodes)


def test_incremental_changed_digest_gives_the_clean_build(corpus, tmp_path) -> None:
    inputs, out = _copy(corpus, tmp_path), tmp_path / "out"
    assert build([str(inputs)], out)[0] == 0
    digest = sorted(inputs.rglob("*.txt"))[3]
    text = digest.read_text("utf-8")
    changed = re.sub(r"`([A-Za-z_]\w+)`", r"`\1_renamed`", text, count=3)
    assert changed != text
    digest.write_text(changed, "utf-8")
    code, stdout, _ = build([str(inputs)], out)
    assert code == 0 and _counts(stdout)[0] == 1
    _same_as_clean(inputs, out, tmp_path)
    nodes = json.loads((out / "graph.json").read_text("utf-8"))["nodes"]
    assert any(n["label"].endswith("_renamed") for n in nodes)
    assert len(_cached_files(out)) == len(list(inputs.rglob("*.txt")))  # the old one went


def test_incremental_removed_digest_removes_its_facts_and_cache(corpus, tmp_path) -> None:
    inputs, out = _copy(corpus, tmp_path), tmp_path / "out"
    assert build([str(inputs)], out)[0] == 0
    removed = sorted(inputs.rglob("*.txt"))[5]
    before = json.loads((out / "graph.json").read_text("utf-8"))
    gone = [n["id"] for n in before["nodes"] if n["kind"] == "Digest" and removed.name in n["id"]]
    assert len(gone) == 1
    removed.unlink()
    code, stdout, _ = build([str(inputs)], out)
    assert code == 0 and _counts(stdout)[::2] == (0, 1)
    _same_as_clean(inputs, out, tmp_path)
    ids = {n["id"] for n in json.loads((out / "graph.json").read_text("utf-8"))["nodes"]}
    assert gone[0] not in ids
    entries = gone[0].replace("digest/", "entry/", 1) + "/"
    assert not [i for i in ids if i.startswith(entries)]
    assert len(_cached_files(out)) == len(list(inputs.rglob("*.txt")))
    manifest = json.loads((out / ".kgraph" / "manifest.json").read_text("utf-8"))
    assert removed.name not in json.dumps(manifest)
    assert all(len(item["sha256"]) == 64 for item in manifest["inputs"])


def test_incremental_same_digests_in_a_new_folder_hit_the_cache(corpus, tmp_path) -> None:
    """A pipeline that checks the digests out into a new folder on every run: the cache is
    keyed by what the files hold, so only the new digest is extracted, nothing counts as
    removed, and the graph is a clean build's of the new folder."""
    out = tmp_path / "out"
    assert build([str(_copy(corpus, tmp_path))], out)[0] == 0
    moved = tmp_path / "checkout-2" / "digests"
    shutil.copytree(corpus, moved)
    shutil.copy(SEEDS / SEED_DIGEST, moved / SEED_DIGEST)
    code, stdout, _ = build([str(moved)], out)
    assert code == 0 and _counts(stdout) == (1, len(list(corpus.rglob("*.txt"))), 0)
    _same_as_clean(moved, out, tmp_path)
    renamed = moved / "daily" / "renamed.txt"  # one more name for the same bytes: a new input
    shutil.copy(sorted(moved.rglob("*.txt"))[0], renamed)
    code, stdout, _ = build([str(moved)], out)
    assert code == 0 and _counts(stdout)[0] == 0
    _same_as_clean(moved, out, tmp_path)


def test_incremental_new_kgraph_code_extracts_everything_again(
    corpus, tmp_path, monkeypatch
) -> None:
    inputs, out = _copy(corpus, tmp_path), tmp_path / "out"
    first = build([str(inputs)], out)
    monkeypatch.setattr(kgraph, "__version__", kgraph.__version__ + ".post1")
    cache.code_fingerprint.cache_clear()
    try:
        code, stdout, _ = build([str(inputs)], out)
    finally:
        monkeypatch.undo()
        cache.code_fingerprint.cache_clear()
    assert code == 0 and _counts(stdout) == _counts(first[1])
    _same_as_clean(inputs, out, tmp_path)


def test_incremental_catalog_or_format_change_extracts_again(corpus, tmp_path) -> None:
    inputs, out = _copy(corpus, tmp_path), tmp_path / "out"
    assert build([str(inputs / "daily")], out)[0] == 0
    digests = len(list((inputs / "daily").rglob("*.txt")))
    code, stdout, _ = build([str(inputs / "daily")], out, "--format", "daily")
    assert code == 0 and _counts(stdout)[0] == digests
    catalog = tmp_path / "extra.ttl"
    catalog.write_text(
        "@prefix kg: <https://w3id.org/kgraph/ns#> .\n"
        "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
        '<urn:x:p> a kg:DesignPattern ; skos:notation "extra-pattern" ;\n'
        '  skos:prefLabel "extra pattern"@en ; kg:cue "缓存"@zh .\n',
        "utf-8",
    )
    code, stdout, stderr = build(
        [str(inputs / "daily")], out, "--format", "daily", "--catalog", str(catalog)
    )
    assert code == 0, stderr
    assert _counts(stdout)[0] == digests


def test_incremental_damaged_cache_file_is_extracted_again(corpus, tmp_path) -> None:
    inputs, out = _copy(corpus, tmp_path), tmp_path / "out"
    assert build([str(inputs)], out)[0] == 0
    damaged = _cached_files(out)[0]
    damaged.write_bytes(damaged.read_bytes()[:100])
    write_sealed(_cached_files(out)[1], b'{"digest": null}')  # whole, but of the wrong shape
    edited = _cached_files(out)[2]  # still JSON of the right shape, but a title made null
    seal, document = edited.read_text("utf-8").split("\n", 1)
    document = json.loads(document)
    document["entries"][0][2] = None
    edited.write_text(seal + "\n" + json.dumps(document, ensure_ascii=False), "utf-8")
    (out / ".kgraph" / "manifest.json").write_bytes(b"\0garbage")
    # Without the link store, every digest is read back from the cache (with it, only
    # those a change reaches: tests/test_delta.py damages one of those).
    shutil.rmtree(out / ".kgraph" / "link")
    code, stdout, _ = build([str(inputs)], out)
    assert code == 0 and _counts(stdout)[0] == 3
    _same_as_clean(inputs, out, tmp_path)


def test_incremental_jobs_give_the_same_bytes_as_one_process(corpus, tmp_path) -> None:
    inputs = _copy(corpus, tmp_path)
    code, _, stderr = build([str(inputs)], tmp_path / "jobs", "--jobs", "2", "--no-cache")
    assert code == 0 and stderr == ""
    assert not list(tmp_path.joinpath("jobs").glob(".*.tmp"))  # no stray temporary files
    _same_as_clean(inputs, tmp_path / "jobs", tmp_path)


def test_incremental_writer_groups_are_atomic_together(tmp_path) -> None:
    """A writer that fills several files (the RDF walk) replaces all of them or none."""
    first, second = tmp_path / "a.nt", tmp_path / "b.ttl"
    first.write_bytes(b"old a")
    second.write_bytes(b"old b")

    def both(handles) -> list[int]:
        return [handle.write(data) for handle, data in zip(handles, [b"new a", b"b"], strict=True)]

    def failing(handles) -> list[int]:
        both(handles)
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic.write_groups_atomic([((first, second), failing)])
    with pytest.raises(ValueError, match="1 results for 2 files"):
        atomic.write_groups_atomic([((first, second), lambda handles: [0])])
    assert (first.read_bytes(), second.read_bytes()) == (b"old a", b"old b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.nt", "b.ttl"]  # no temporary file
    alone = tmp_path / "c.json"
    said = atomic.write_groups_atomic(
        [((first, second), both), ((alone,), lambda handles: [handles[0].write(b"{}")])]
    )
    assert said == [5, 1, 2]  # what the writers said of each file, in the files' order
    assert (first.read_bytes(), second.read_bytes(), alone.read_bytes()) == (b"new a", b"b", b"{}")


def test_incremental_jobs_with_a_cache_and_stdin(corpus, tmp_path, monkeypatch) -> None:
    """A digest on stdin is read by the parent while the workers read the files."""
    inputs, out = _copy(corpus, tmp_path), tmp_path / "out"
    seed = (SEEDS / SEED_DIGEST).read_bytes()
    from click.testing import CliRunner

    from kgraph.cli import cli

    args = ["build", str(inputs), "-", "-o", str(out), "-j", "2", *ONLY]
    first = CliRunner().invoke(cli, args, input=seed, catch_exceptions=False)
    again = CliRunner().invoke(cli, args, input=seed, catch_exceptions=False)
    assert first.exit_code == again.exit_code == 0
    assert _counts(again.stdout)[0] == 0  # stdin is cached by its bytes too
    nodes = json.loads((out / "graph.json").read_text("utf-8"))["nodes"]
    assert any(n["label"] == "SWA offload 覆盖补齐 MTP 保留 token" for n in nodes)


def test_incremental_cache_key_covers_every_module_extraction_imports() -> None:
    """A change to code that extraction runs must drop the cache: `EXTRACTION_CODE` lists
    every kgraph module that the readers and extractors import, directly or not."""
    import ast

    root = Path(kgraph.__file__).parent
    covered = set()
    for name in cache.EXTRACTION_CODE:
        path = root / name
        covered |= set(path.rglob("*.py")) if path.is_dir() else {path}
    todo, seen = [root / "corpus.py", root / "cache.py"], set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        assert path in covered, f"{path.relative_to(root)} is imported by extraction"
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = []
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("kgraph")
            ):
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("kgraph")]
            for name in names:
                parts = name.split(".")[1:]
                for candidate in (
                    root.joinpath(*parts).with_suffix(".py"),
                    root.joinpath(*parts, "__init__.py"),
                ):
                    if parts and candidate.exists():
                        todo.append(candidate)
    assert len(seen) > 15


def test_incremental_cached_digest_reports_its_problems_again(tmp_path) -> None:
    """Problems are part of what a digest gave: a rebuild from the cache reports the same
    ones with the same exit code, so no skipped entry goes unreported."""
    from kgraph.limits import MAX_ENTRY_CHARS

    lines = [json.dumps({"title": f"Entry {i}", "summary": "Fine."}) for i in range(1, 5)]
    lines[2] = '{"title": "Entry 3", "summary": "cut here'
    lines.append(json.dumps({"title": "Long", "summary": "`x.py` " * (MAX_ENTRY_CHARS // 6)}))
    digest = tmp_path / "bad.jsonl"
    digest.write_text("\n".join(lines) + "\n", "utf-8")
    first = build([str(digest)], tmp_path / "out")
    again = build([str(digest)], tmp_path / "out")
    assert first[0] == again[0] == 1
    assert "bad.jsonl:3: error: invalid JSON" in first[2]
    assert "bad.jsonl:5: error: entry skipped: its summary has" in first[2]
    assert again[2] == first[2]
    assert _counts(again[1]) == (0, 1, 0)


def test_only_the_outputs_and_the_manifest_are_flushed_to_disk(
    corpus, tmp_path, monkeypatch
) -> None:
    """The extraction cache and the output index are caches: a file a crash damages is a
    miss, so they skip fsync (0.3 ms a file, 6,000 files at 100k entries); the outputs and
    the record of which graph each describes do not."""
    flushed: list[str] = []
    real_fsync = atomic.os.fsync

    def fsync(fd: int) -> None:
        flushed.append(Path(os.readlink(f"/proc/self/fd/{fd}")).name)
        real_fsync(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    code, _, stderr = build([str(corpus)], tmp_path / "out")
    assert code == 0, stderr
    written = sorted(re.sub(r"^\.(.+?)\.\w+\.tmp$", r"\1", name) for name in flushed)
    assert written == sorted([*OUTPUTS, cache.MANIFEST, outputs.RECORD.name]), flushed
    assert len(list((tmp_path / "out" / cache.FOLDER).iterdir())) > 10  # written, not flushed
