"""A build killed at any moment leaves every output whole: the real `kgraph` console script,
in a subprocess, stopped by SIGINT, SIGTERM or SIGKILL while starting, building and writing.

After SIGINT or SIGTERM: one line on stderr, exit 128 + signal, no traceback, and the
outputs are all the previous ones or all the new ones, with no temporary file left. After
SIGKILL (which nothing can catch): each output is the previous or the new file, never half.
"""

from __future__ import annotations

import fcntl
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import EXAMPLES, build

KGRAPH = Path(sys.executable).parent / "kgraph"
ONLY = ("--only", "turtle", "--only", "ntriples", "--only", "jsonld", "--only", "json")
NAMES = ("graph.ttl", "graph.nt", "graph.jsonld", "graph.json")
PROMPT = 5.0  # seconds from the signal to the exit


@pytest.fixture(scope="module")
def big_digest(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    """A digest that takes a couple of seconds to build (so that 1.2 s in is "building",
    not the end of the build), and its complete outputs."""
    root = tmp_path_factory.mktemp("interrupt")
    prose = "The cache eviction order is settled once per request, keeping it honest. " * 8
    lines = ["2026-01-01"]
    for i in range(2400):
        lines.append(f"Fix cache path {i} for `Worker{i % 40}.step`")
        lines.append(f"Touches `vllm/m{i % 60}/f{i}.py`, `helper_{i % 25}()` and #{i + 1}. {prose}")
    digest = root / "big.txt"
    digest.write_text("\n".join(lines) + "\n", "utf-8")
    assert build([str(digest)], root / "new", *ONLY)[0] == 0
    return digest, {name: (root / "new" / name).read_bytes() for name in NAMES}


@pytest.fixture(scope="module")
def old_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("old")
    assert build([str(EXAMPLES)], out, *ONLY)[0] == 0
    return {name: (out / name).read_bytes() for name in NAMES}


def _start(digest: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    assert KGRAPH.exists(), f"the console script is installed beside {sys.executable}"
    return subprocess.Popen(
        [str(KGRAPH), "build", str(digest), "-o", str(out), *ONLY, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _temporary_files(out: Path) -> list[str]:
    return [entry.name for entry in os.scandir(out) if entry.name.endswith(".tmp")]


def _wait_for(moment: str, process: subprocess.Popen[str], out: Path) -> bool:
    """Sleep until `moment`; False when the build ended before it."""
    if moment == "starting":
        time.sleep(0.3)  # the interpreter is up; the CLI's modules are still loading
    elif moment == "building":
        time.sleep(1.2)
    else:  # "writing": the first temporary output file exists
        deadline = time.monotonic() + 120
        while not _temporary_files(out):
            if process.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0)  # poll as fast as possible: the window is a few milliseconds
    return process.poll() is None


@pytest.mark.parametrize(
    ("moment", "jobs"),
    [("starting", "1"), ("building", "1"), ("writing", "1"), ("writing", "2")],
    ids=["starting", "building", "writing", "writing-in-processes"],
)
@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name
)
def test_interrupt_at_any_moment_leaves_whole_outputs(
    tmp_path, big_digest, old_outputs, signum, moment, jobs
) -> None:
    """With `-j 2` the files are written by worker processes, which leave the signal to
    the build's own process."""
    digest, new_outputs = big_digest
    out = tmp_path / "out"
    for _ in range(5):  # "writing" lasts milliseconds: a busy machine may miss it
        out.mkdir(exist_ok=True)
        for name, data in old_outputs.items():
            (out / name).write_bytes(data)
        for name in _temporary_files(out):
            (out / name).unlink()
        process = _start(digest, out, "-j", jobs)
        if not _wait_for(moment, process, out):
            process.wait()
            continue
        process.send_signal(signum)
        signalled = time.monotonic()
        _, stderr = process.communicate(timeout=60)
        waited = time.monotonic() - signalled
        if process.returncode != 0:  # else the build finished just before the signal
            break
    else:
        pytest.fail(f"the build ended before the {moment} moment five times")

    outputs = {name: (out / name).read_bytes() for name in NAMES}
    for name, data in outputs.items():
        assert data in (old_outputs[name], new_outputs[name]), f"{name} is half-written"
    if signum == signal.SIGKILL:
        assert process.returncode == -signal.SIGKILL
        assert all(n.startswith(".graph.") for n in _temporary_files(out))
        assert build([str(digest)], out, *ONLY)[0] == 0  # a stale temporary file is harmless
        assert {name: (out / name).read_bytes() for name in NAMES} == new_outputs
        return
    assert process.returncode == 128 + signum
    assert stderr == (
        f"kgraph: interrupted by {signal.Signals(signum).name}; "
        "no output file was left half-written\n"
    )
    assert waited < PROMPT, f"exited {waited:.1f}s after the signal"
    assert outputs in (old_outputs, new_outputs), "a mix of old and new outputs"
    assert _temporary_files(out) == []


def test_interrupt_python_m_kgraph_is_the_same_command(tmp_path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "kgraph", "build", str(EXAMPLES), "-o", str(tmp_path), "-q"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and (tmp_path / "graph.ttl").exists()


def test_interrupt_finished_build_exits_at_once_with_its_code_and_output(tmp_path) -> None:
    """The console script ends a finished build without freeing the graph (os._exit): what
    it printed must still reach a pipe, and its exit code must stay the build's."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "One", "summary": "Fine."}\n{"title": \n', "utf-8")
    for inputs, code in (([str(EXAMPLES)], 0), ([str(EXAMPLES), str(bad)], 1)):
        run = subprocess.run(
            [sys.executable, "-m", "kgraph", "build", *inputs, "-o", str(tmp_path / "out")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == code, run.stderr
        assert re.fullmatch(r"\d+ digests, .* in [\d.]+s \(.*\)\n", run.stdout), run.stdout
        if code:
            assert "bad.jsonl:2: error: invalid JSON" in run.stderr
            assert run.stderr.endswith("1 entries skipped\n")


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as listed:
        return [int(child) for child in listed.read().split()]


def test_interrupt_a_killed_writer_process_fails_the_build_at_once(
    tmp_path, big_digest, old_outputs
) -> None:
    """The kernel's out-of-memory killer may pick a `-j` writer. The build then fails,
    promptly, saying so, with the old outputs in place: it used to wait forever for the
    dead worker's task."""
    digest, _ = big_digest
    out = tmp_path / "out"
    for _ in range(5):  # the worker may have finished its files before it is found
        out.mkdir(exist_ok=True)
        for name, data in old_outputs.items():
            (out / name).write_bytes(data)
        for name in _temporary_files(out):
            (out / name).unlink()
        process = _start(digest, out, "-j", "2")
        workers: list[int] = []
        if _wait_for("writing", process, out):  # the temporary files come before the workers
            while process.poll() is None and not (workers := _children(process.pid)):
                time.sleep(0)
        if not workers:
            process.wait()
            continue
        for worker in workers:
            os.kill(worker, signal.SIGKILL)
        stderr = _finish(process)
        if process.returncode != 0:
            break
    else:
        pytest.fail("no writer process was caught at work in five builds")
    assert process.returncode == 1
    assert "cannot write the outputs: a writer process died (exit code -9)" in stderr
    assert {name: (out / name).read_bytes() for name in NAMES} == old_outputs
    assert _temporary_files(out) == []


def _finish(process: subprocess.Popen[str], timeout: float = 60) -> str:
    """The stderr of a build started by `_start_reading`; a build that hangs fails the test
    and is killed with its readers, never left behind (one once ran on for 87 minutes)."""
    try:
        return process.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"the build hung for {timeout} s")


def _start_reading(corpus: Path, out: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """A `-j 2` build of `corpus`, and its reader processes once there are any (none when
    the build ended first)."""
    process = subprocess.Popen(
        [str(KGRAPH), "build", str(corpus), "-o", str(out), "--only", "json", "-j", "2",
         "--no-cache"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )  # fmt: skip
    readers: list[int] = []
    while process.poll() is None and not (readers := _children(process.pid)):
        time.sleep(0)
    return process, readers


def test_interrupt_a_killed_reader_process_leaves_its_digests_to_the_build(
    tmp_path, generated_corpus
) -> None:
    """A `-j` reader that dies is reported, and the digests it left are read by the
    build's own process: the graph is whole, the same as a one-process build's."""
    assert build([str(generated_corpus)], tmp_path / "one", "--only", "json")[0] == 0
    for _ in range(5):  # the readers may have finished before one is found
        out = tmp_path / "out"
        process, readers = _start_reading(generated_corpus, out)
        if readers:
            os.kill(readers[0], signal.SIGKILL)
        stderr = _finish(process)
        if "a reader process died" in stderr:
            break
    else:
        pytest.fail("no reader process was caught at work in five builds")
    assert process.returncode == 0, stderr
    assert re.search(
        r"\.txt:0: warning: a reader process died, perhaps killed for want of memory; "
        r"(this digest and the \d+ after it were|it was) read in the build's own "
        r"process",
        stderr,
    )
    assert (out / "graph.json").read_bytes() == (tmp_path / "one" / "graph.json").read_bytes()


def test_interrupt_while_processes_read_stops_them_with_the_build(
    tmp_path, generated_corpus
) -> None:
    """Ctrl-C while `-j 2` readers extract: the build exits promptly with its one line,
    and no reader outlives it."""
    for _ in range(5):
        process, readers = _start_reading(generated_corpus, tmp_path / "out")
        if not readers:
            process.wait()
            continue
        process.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        stderr = _finish(process)
        waited = time.monotonic() - signalled
        if process.returncode != 0:
            break
    else:
        pytest.fail("the build ended before its readers were caught five times")
    assert process.returncode == 128 + signal.SIGINT
    assert stderr == "kgraph: interrupted by SIGINT; no output file was left half-written\n"
    assert waited < PROMPT
    assert not [pid for pid in readers if os.path.exists(f"/proc/{pid}")]


def test_a_second_build_into_a_folder_waits_for_the_first(tmp_path) -> None:
    """Two CI jobs building into one folder: the second says it waits, and writes only
    once the first is done (here the test holds the folder's lock, as a build does)."""
    out = tmp_path / "out"
    assert build([str(EXAMPLES)], out)[0] == 0
    held = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(held, fcntl.LOCK_EX)
    before = (out / "graph.json").stat().st_mtime_ns
    second = subprocess.Popen(
        [str(KGRAPH), "build", str(EXAMPLES), "-o", str(out), "-q"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(3)
        assert second.poll() is None  # still waiting
        assert (out / "graph.json").stat().st_mtime_ns == before
    finally:
        os.close(held)  # the first build ends
    _, stderr = second.communicate(timeout=60)
    assert second.returncode == 0
    assert stderr == f"kgraph: waiting for another build into {out} to end\n"
    assert (out / "graph.json").stat().st_mtime_ns != before


def test_a_reader_that_goes_away_costs_the_printed_lines_not_the_build(tmp_path) -> None:
    """`kgraph build … | true`, `>&-` and `> /dev/full`: the report is written and the
    exit code is the build's; an answer that cannot be written is one line and exit 1."""
    out, report = tmp_path / "out", tmp_path / "report.json"
    command = f"{KGRAPH} build {EXAMPLES} -o {out} --report {report}"
    for redirect in ("| true", ">&-", "> /dev/full"):
        report.unlink(missing_ok=True)
        run = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {command} {redirect}"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0 and "Traceback" not in run.stderr, (redirect, run.stderr)
        assert json.loads(report.read_text("utf-8"))["exitCode"] == 0
    run = subprocess.run(
        ["bash", "-c", f"{KGRAPH} query {out} --name hotspots > /dev/full"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1
    assert run.stderr == "kgraph: cannot write the output: No space left on device\n"


def test_interrupt_during_a_push_says_the_store_may_hold_part_of_the_graph(tmp_path) -> None:
    """Ctrl-C while the store is answering: not the build's "no output file was left
    half-written", but what a push leaves, and what to do about it."""

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            time.sleep(30)

        def log_message(self, *args: object) -> None:
            pass

    slow = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    slow.daemon_threads = True
    threading.Thread(target=slow.serve_forever, daemon=True).start()
    out = tmp_path / "out"
    assert build([str(EXAMPLES)], out, "--only", "ntriples")[0] == 0
    url = f"http://127.0.0.1:{slow.server_address[1]}/sparql"
    push = subprocess.Popen(
        [str(KGRAPH), "push", str(out), "--endpoint", url, "--replace"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2)
        push.send_signal(signal.SIGINT)
        _, stderr = push.communicate(timeout=PROMPT)
    finally:
        slow.shutdown()
    assert push.returncode == 128 + signal.SIGINT
    assert stderr == (
        "kgraph: interrupted by SIGINT; a --replace push swaps the new graph in only at its "
        "end, so the store holds the old one (over the Graph Store protocol alone, part of "
        "the new one): push again to complete it\n"
    )
