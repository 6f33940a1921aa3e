"""The synthetic corpus behind the benchmark: reproducible, and shaped like real digests."""

from __future__ import annotations

import json
import re

from bench.generate import generate

from conftest import SEEDS, build


def _bytes(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.txt"))}


def test_generate_same_seed_gives_the_same_bytes(tmp_path) -> None:
    generate(tmp_path / "a", 400, seed=7)
    generate(tmp_path / "b", 400, seed=7)
    generate(tmp_path / "c", 400, seed=8)
    assert _bytes(tmp_path / "a") == _bytes(tmp_path / "b")
    assert _bytes(tmp_path / "a") != _bytes(tmp_path / "c")


def test_generate_writes_exactly_the_entries_asked_and_kgraph_reads_them_cleanly(tmp_path) -> None:
    corpus = generate(tmp_path / "corpus", 600, seed=3)
    code, stdout, stderr = build([str(tmp_path / "corpus")], tmp_path / "out", "--only", "json")
    assert code == 0 and stderr == ""
    assert stdout.startswith(f"{len(corpus.files)} digests, 600 entries, ")
    data = json.loads((tmp_path / "out" / "graph.json").read_text("utf-8"))
    counts = data["graph"]["counts"]
    assert counts["Entry"] == 600
    assert counts["PullRequest"] < 600  # some PRs are reviewed in several digests
    shared = sum(1 for e in data["edges"] if e["relation"] == "sharesCodeWith")
    assert shared > 0


def test_generate_is_shaped_like_the_seeds(tmp_path) -> None:
    corpus = generate(tmp_path / "corpus", 2000, seed=1)
    text = "\n".join(p.read_text("utf-8") for p in corpus.files)
    headers = [p.read_text("utf-8").splitlines()[0] for p in corpus.files]
    assert any(re.fullmatch(r"\d{4}-\d{2}-\d{2}", h) for h in headers)
    assert any(h.endswith("标签视图") for h in headers)
    assert len({h.split(" ·")[0] for h in headers if "·" in h}) >= 4  # several repositories
    assert re.search(r"[\u4e00-\u9fff]", text) and re.search(r"\bWorth a close read\b", text)
    real = "\n".join(p.read_text("utf-8") for p in SEEDS.glob("*.txt"))
    density = len(re.findall(r"`[^`\n]+`", text)) / len(text.encode())
    real_density = len(re.findall(r"`[^`\n]+`", real)) / len(real.encode())
    assert 0.5 < density / real_density < 2
    assert 300 < corpus.bytes / corpus.entries < 1200  # bytes an entry, like the real ones
    # Skew: the most named symbol is named far more often than a typical one.
    spans = re.findall(r"`([A-Za-z_][\w.]*)`", text)
    counts = sorted((spans.count(s) for s in set(spans)), reverse=True)
    assert counts[0] > 20 * counts[len(counts) // 2]


def test_generate_never_copies_a_seed_sentence(tmp_path) -> None:
    corpus = generate(tmp_path / "corpus", 1500, seed=2)
    text = "\n".join(p.read_text("utf-8") for p in corpus.files)
    real = "\n".join(p.read_text("utf-8") for p in SEEDS.glob("*.txt"))
    sentences = {s.strip() for s in re.split(r"[。！？\n]", real) if len(s.strip()) >= 12}
    sentences = {s for s in sentences if "标签视图" not in s}  # the format's header, not prose
    assert len(sentences) > 40
    assert not [s for s in sentences if s in text]
