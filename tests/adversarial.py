"""Adversarial inputs for every regex and every extractor, timed in a child that cannot hang.

Reusable by any test (and by the extractors other branches add, with no change here):

- `module_patterns()` finds every compiled pattern held at module level anywhere in kgraph
  (directly, or in a tuple, list or dict); `pumps(pattern)` lists, from a rough
  sample of what the pattern matches, the pieces that make a backtracking regex go
  quadratic or worse: a prefix of the sample, one piece of it repeated thousands of times,
  and a NUL that makes the match fail at the end (the classic ReDoS "pump"); `pumped`
  builds one at any length, to compare the time at two lengths.
- `ADVERSARIAL_TEXTS` are whole entry texts — unbalanced backticks, 10,000 spans, 5,000
  nested brackets, long blank runs — that `entry_for` turns into entries for the extractors.
- `run_timed` runs a function in a forked child with a hard timeout and returns its time,
  so a catastrophic pattern fails a test with its name instead of stalling CI.
- `HOSTILE_JSON` are JSON files every reader of one must survive, and `run_cli` runs the
  real `kgraph` entry point in a forked child, giving its exit code as a process's (negative
  for a signal), fast enough for a property test of every command.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import multiprocessing
import os
import pkgutil
import re
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import regex

from kgraph.model import Entry

PATTERN_TYPES = (type(regex.compile("")), re.Pattern)


def module_patterns(package: str = "kgraph") -> list[tuple[str, Any]]:
    """(qualified name, pattern) for every distinct compiled pattern in `package`'s modules."""
    root = importlib.import_module(package)
    modules = pkgutil.walk_packages(root.__path__, package + ".")
    names = [package, *sorted(m.name for m in modules)]
    found: dict[int, tuple[str, Any]] = {}
    defined: set[int] = set()  # patterns named where they are assigned, not where imported
    for name in names:
        if name.endswith("__main__"):
            continue  # importing it would be harmless, but it is the CLI, not a library module
        module = importlib.import_module(name)
        source = inspect.getsource(module)
        for attr, value in sorted(vars(module).items()):
            assigned = re.search(rf"^{re.escape(attr)}\s*(?::[^=\n]+)?=", source, re.M)
            for pattern in _patterns_in(value, depth=2):
                if id(pattern) not in found or (assigned and id(pattern) not in defined):
                    found[id(pattern)] = (f"{name}.{attr}", pattern)
                if assigned:
                    defined.add(id(pattern))
    return sorted(found.values(), key=lambda item: item[0])


def _patterns_in(value: object, depth: int) -> Iterator[Any]:
    if isinstance(value, PATTERN_TYPES):
        yield value
    elif depth and isinstance(value, tuple | list | frozenset | set):
        for item in value:
            yield from _patterns_in(item, depth - 1)
    elif depth and isinstance(value, dict):
        for item in value.values():
            yield from _patterns_in(item, depth - 1)


# --- pumped strings ----------------------------------------------------------------------------

_CLASS_SAMPLE = {"d": "1", "w": "a", "s": " ", "S": "a", "D": "a", "W": " ", "n": "\n", "t": "\t"}
_FILLERS = (" ", "a", "1", "`", "#", "(", ")", "[", ".", "/", "-", "_", ":", "中", "\u3000")


def sample(source: str) -> str:
    """A rough string of what `source` matches: one copy of every atom, in order.

    Not exact (alternatives are all kept, lookarounds included): it only has to contain the
    pieces whose repetition makes a pattern backtrack.
    """
    out: list[str] = []
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\" and i + 1 < len(source):
            nxt = source[i + 1]
            if nxt in "pP" and source[i + 2 : i + 3] == "{":
                out.append("中" if "Han" in source[i : source.find("}", i)] else "a")
                i = source.find("}", i) + 1
                continue
            if nxt in "xu":
                width = 2 if nxt == "x" else 4
                out.append(chr(int(source[i + 2 : i + 2 + width], 16)))
                i += 2 + width
                continue
            out.append(_CLASS_SAMPLE.get(nxt, "" if nxt in "bBAZzG" else nxt))
            i += 2
        elif char == "[":
            end, member = _class_member(source, i)
            out.append(member)
            i = end
        elif char == "(":
            i += 1
            if source.startswith("?P<", i):
                i = source.index(">", i) + 1
            elif source.startswith("?", i):
                i += 3 if source.startswith(("?<=", "?<!"), i) else 2
        elif char == "{":
            i = source.find("}", i) + 1 or len(source)
        elif char in ")|*+?^$":
            i += 1
        elif char == ".":
            out.append("a")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _class_member(source: str, start: int) -> tuple[int, str]:
    """The end of the character class at `start`, and one character it accepts."""
    i = start + 1
    negated = source.startswith("^", i)
    i += negated
    members: list[str] = []
    while i < len(source) and (source[i] != "]" or i == start + 1 + negated):
        if source[i] == "\\" and i + 1 < len(source):
            nxt = source[i + 1]
            if nxt in "pP" and source[i + 2 : i + 3] == "{":
                i = source.find("}", i) + 1
                members.append("中")
                continue
            if nxt in "xu":
                width = 2 if nxt == "x" else 4
                members.append(chr(int(source[i + 2 : i + 2 + width], 16)))
                i += 2 + width
                continue
            members.append(_CLASS_SAMPLE.get(nxt, nxt))
            i += 2
        else:
            members.append(source[i])
            i += 1
    if negated:
        member = next(c for c in "ax0_ -" if c not in members)
    else:
        member = next((c for c in members if c != "-"), "-")
    return i + 1, member


def pumps(pattern: Any) -> list[tuple[str, str]]:
    """(prefix, pump) pairs from the pattern's sample: every prefix, with every piece of up to
    six characters that follows it, and with a few characters digests are full of."""
    source = pattern.pattern  # a bytes pattern is pumped as text, and scanned as UTF-8
    seed = sample(source.decode("latin-1") if isinstance(source, bytes) else source)
    found: set[tuple[str, str]] = set()
    stride = max(1, len(seed) // 40)  # a long alternation of phrases: every few prefixes
    for i in range(0, len(seed) + 1, stride):
        for j in range(i + 1, min(len(seed), i + 6) + 1):
            found.add((seed[:i], seed[i:j]))
        for filler in _FILLERS:
            found.add((seed[:i], filler))
    return sorted(found)


def pumped(prefix: str, pump: str, length: int) -> str:
    """`prefix`, then `pump` repeated to about `length` characters, then a NUL to fail on."""
    return prefix + pump * (length // len(pump)) + "\x00"


def scan(pattern: Any, text: str) -> None:
    """What the pipeline does with a pattern: search, and walk every match."""
    subject = text.encode("utf-8", "surrogatepass") if isinstance(pattern.pattern, bytes) else text
    pattern.search(subject)
    for _ in pattern.finditer(subject):
        pass


# --- whole entries for the extractors ----------------------------------------------------------

ADVERSARIAL_TEXTS: dict[str, Callable[[], str]] = {
    "unbalanced-backticks": lambda: "`a " * 40_000 + "`",
    "10k-backtick-spans": lambda: " ".join(f"`Cache{i}.evict_{i}()`" for i in range(10_000)),
    "only-backticks": lambda: "`" * 150_000,
    "open-span-never-closed": lambda: "`" + "a" * 150_000,
    "5k-nested-brackets": lambda: (
        "`" + "(" * 5000 + ")" * 5000 + "` " + "([{" * 5000 + "}])" * 5000 + " f(" * 5000
    ),
    "spans-and-references": lambda: "`a` #1 https://github.com/o/r/pull/2 " * 5_000,
    "hashes": lambda: "#" * 50_000 + " #1" * 20_000 + "&#1;" * 10_000,
    "github-urls": lambda: "https://github.com/" * 5_000 + "https://github.com/a/" + "b/" * 40_000,
    "blank-runs": lambda: "a" + " " * 80_000 + "x" + "\u3000\t " * 20_000 + "(#1)",
    "advice-cues": lambda: "不值得精" * 20_000 + "worth a close " * 5_000,
    "dotted-names": lambda: "a." * 60_000 + "`" + "a." * 140 + "`",
    "file-then-symbols": lambda: "`a.py` 的 `b`、" * 10_000,
    "markdown-links": lambda: "[#1](" * 20_000 + "[a](" * 20_000,
    "title-numbers": lambda: "(#1)" * 20_000 + " #1" * 20_000,
    "html-and-quotes": lambda: '<script>"\\' * 20_000,
    # the shapes the design extractors (decisions, people, audience…) read
    "quoted-clauses": lambda: "「决策」，" * 20_000,
    "quoted-sentences": lambda: "决策是「x」。" * 20_000,
    "numbered-decisions": lambda: "决策：(1) 用 X 而非 Y；(2) 「a」的设计；" * 5_000,
    "contrasts": lambda: "用 A 替代 B，" * 10_000 + '"use a lock" rather than "a queue", ' * 2_000,
    "people-and-roles": lambda: "作者 alice, reviewer bob, @carol 作为共同作者 " * 4_000,
    "audience-introducers": lambda: "尤其是尤其适合负责" * 15_000,
}


def entry_for(text: str) -> Entry:
    """An entry whose title and summary are both the adversarial text."""
    return Entry("adversarial.txt", 2, text, text, "o/r", "2026-01-01")


# --- a clock that cannot hang ------------------------------------------------------------------


def run_timed(function: Callable[..., object], *args: object, timeout: float) -> float:
    """Seconds `function(*args)` took in a forked child; TimeoutError past `timeout`.

    The child is killed on timeout, so one catastrophic regex costs `timeout`, not CI's hour.
    An exception in the child is raised again here as a RuntimeError with its repr.
    """
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_timed, args=(send, function, args), daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(timeout):
            raise TimeoutError(f"still running after {timeout:.0f}s")
        status, value = receive.recv()
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    if status == "error":
        raise RuntimeError(value)
    return float(value)


def _timed(send: Any, function: Callable[..., object], args: tuple[object, ...]) -> None:
    try:
        start = time.perf_counter()
        function(*args)
        send.send(("ok", time.perf_counter() - start))
    except BaseException as err:  # report every failure to the parent, then exit
        send.send(("error", repr(err)))
    finally:
        send.close()


# --- hostile JSON files ------------------------------------------------------------------------

# What another tool, a person or a broken disk may leave where kgraph reads a JSON file
# (graph.json for diff, eval and html; gold files): each must be one line naming the file.
HOSTILE_JSON: dict[str, bytes] = {
    "200k-nested-lists": b"[" * 200_000,
    "200k-nested-objects": b'{"a":' * 200_000,
    "deep-inside-nodes": b'{"nodes": [' + b"[" * 100_000 + b"]" * 100_000 + b'], "edges": []}',
    "latin-1": b'[{"title": "caf\xe9"}]',
    "bad-byte-on-line-3": b'[\n{"title": "a"},\n{"title": "\xff"}]',
    "empty": b"",
    "nul-bytes": b"\x00" * 100,
    "png": b"\x89PNG\r\n\x1a\n" + bytes(range(256)),
    "5000-digit-number": b'{"nodes": [{"id": 1' + b"9" * 5000 + b"}], " + b'"edges": []}',
    "nodes-a-string": b'{"nodes": "abc", "edges": 5}',
    "nodes-numbers": b'{"nodes": [1, 2], "edges": [3]}',
    "id-a-list": b'{"nodes": [{"id": [1], "kind": "PullRequest", "label": "x"}], "edges": []}',
    "edge-without-ends": b'{"nodes": [], "edges": [{"relation": "describedBy"}]}',
    "line-records-broken": (
        b'{"directed": true, "nodes": [\n{"id": "a", "kind": "PullRequest"\n"edges": [\n{"x"\n'
    ),
    "line-record-without-id": b'{"directed": true, "nodes": [\n{"kind": "PullRequest"},\n'
    b'"edges": [\n{"source": "a", "relation": "describedBy"}\n]}\n',
}


# --- the real command line, many times a second ------------------------------------------------


def run_cli(args: list[str], timeout: float = 60.0) -> tuple[int, str, str]:
    """`kgraph ARGS` as its console script runs it (`kgraph.__main__.main`, signal handlers
    and all), in a forked child of this already-imported process, so that an example costs
    milliseconds instead of an interpreter's start. Returns (exit code, stdout, stderr); the
    exit code is negative, as `subprocess` gives it, when a signal killed the child (a
    segmentation fault is -11), and a child still running after `timeout` is killed and
    reported as TimeoutError. stdin is empty."""
    with tempfile.TemporaryDirectory() as scratch:
        out, err = Path(scratch) / "out", Path(scratch) / "err"
        pid = os.fork()
        if pid == 0:  # the child: never returns
            _run_main_in_child(args, out, err)
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise TimeoutError(f"kgraph {' '.join(args)[:200]} ran past {timeout:.0f}s")
            time.sleep(0.005)
        text = (
            out.read_bytes().decode("utf-8", "replace"),
            err.read_bytes().decode("utf-8", "replace"),
        )
        return os.waitstatus_to_exitcode(status), *text


def _run_main_in_child(args: list[str], out: Path, err: Path) -> None:
    code = 1
    try:
        for fd, path, flags in (
            (0, os.devnull, os.O_RDONLY),
            (1, out, os.O_WRONLY | os.O_CREAT),
            (2, err, os.O_WRONLY | os.O_CREAT),
        ):
            os.dup2(os.open(path, flags), fd)
        # The streams the interpreter would have opened on them (pytest replaced its own).
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        sys.argv = ["kgraph", *args]
        from kgraph.__main__ import main

        try:
            main()
            code = 0
        except SystemExit as stop:  # as the interpreter reads it
            if isinstance(stop.code, int) or stop.code is None:
                code = stop.code or 0
            else:
                print(stop.code, file=sys.stderr)
        except BaseException:  # as the interpreter prints it
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
