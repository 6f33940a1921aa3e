"""Progress: a redrawn line on a terminal, nothing in a pipeline or with --quiet."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

from conftest import EXAMPLES, SEEDS
from kgraph.progress import Progress


def test_progress_draws_a_bar_that_fills() -> None:
    stream = io.StringIO()
    progress = Progress(stream, interval=0)
    progress.stage("reading and extracting", 4, "digests")
    for _ in range(4):
        progress.advance()
    progress.clear()
    frames = stream.getvalue().split("\r\x1b[K")
    assert "[------------------------] 0/4 digests" in frames[1]
    assert "[############------------] 2/4 digests" in frames[3]
    assert "[########################] 4/4 digests" in frames[5]
    assert frames[-1] == ""  # cleared: the summary line starts on a clean line


def test_progress_without_a_stream_draws_nothing() -> None:
    progress = Progress(None)
    progress.stage("linking")
    progress.advance()
    progress.clear()  # no stream, no error


def _run_on_a_terminal(*args: str) -> tuple[int, str]:
    """The real console script with stderr (and stdout) on a pseudo-terminal."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "kgraph", *args], stdout=follower, stderr=follower
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closes when the process exits
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return process.wait(), b"".join(chunks).decode("utf-8", "replace")


def test_progress_on_a_terminal_shows_each_stage_then_the_summary(tmp_path) -> None:
    code, seen = _run_on_a_terminal("build", str(SEEDS), str(EXAMPLES), "-o", str(tmp_path))
    assert code == 0
    assert "kgraph: reading and extracting [" in seen and "/6 digests" in seen
    assert "kgraph: linking" in seen and "kgraph: writing graph.ttl" in seen
    last = seen.rsplit("\r\x1b[K", 1)[-1]
    assert last.startswith("6 digests, ") and "entries/s" in last  # the line was cleared


def test_progress_is_silent_with_quiet_and_in_a_pipeline(tmp_path) -> None:
    code, seen = _run_on_a_terminal("build", str(SEEDS), "-o", str(tmp_path), "-q")
    assert code == 0 and seen == ""
    piped = subprocess.run(
        [sys.executable, "-m", "kgraph", "build", str(SEEDS), "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert piped.returncode == 0 and piped.stderr == ""
    assert piped.stdout.startswith("2 digests, 15 entries")
