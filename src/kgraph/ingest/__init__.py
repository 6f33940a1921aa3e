"""Read digests: expand the inputs, decode each file, detect its format, parse it."""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from kgraph.ingest.formats import FORMATS, InputFormat, format_named
from kgraph.ingest.text import DecodeError, decode
from kgraph.limits import within_limits
from kgraph.model import Problem, ReadResult, Severity

DIGEST_SUFFIXES = (".txt", ".md", ".markdown", ".jsonl", ".ndjson")

__all__ = ["FORMATS", "InputFormat", "display_name", "expand_inputs", "read_digest", "read_inputs"]


# A device has no end to read to (/dev/zero filled the memory) and a socket is no file. A
# pipe is read to its end, as standard input is: `kgraph build <(zcat digests.gz)`.
_NOT_READABLE = "not a file or a pipe (a device or a socket); give a stream as '-' on stdin"


def expand_inputs(inputs: Iterable[str]) -> tuple[list[str], list[Problem]]:
    """Files as given, folders recursively (digest suffixes only), globs; `-` is stdin.

    The result is sorted within each input so that a folder reads the same way every time.
    Only regular files and pipes are read: a folder or a glob skips anything else, a named
    one is an error.
    """
    paths: list[str] = []
    problems: list[Problem] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        key = path if path == "-" else os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            paths.append(path)

    for given in inputs:
        if given == "-":
            add("-")
        elif os.path.isdir(given):
            found = sorted(
                str(p)
                for p in Path(given).rglob("*")
                if p.is_file()
                and p.suffix.lower() in DIGEST_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(given).parts)
            )
            if not found:
                problems.append(
                    Problem(
                        given, 0, f"folder holds no digest files ({', '.join(DIGEST_SUFFIXES)})"
                    )
                )
            for path in found:
                add(path)
        elif os.path.isfile(given) or _is_pipe(given):
            add(given)
        elif os.path.exists(given):
            problems.append(Problem(given, 0, _NOT_READABLE, Severity.ERROR))
        elif glob.has_magic(given):
            matches = _matching(given)
            if not matches:
                problems.append(Problem(given, 0, "pattern matches no file", Severity.ERROR))
            for path in matches:
                if os.path.isfile(path):
                    add(path)
        else:
            problems.append(Problem(given, 0, "no such file or folder", Severity.ERROR))
    return paths, problems


def _matching(pattern: str) -> list[str]:
    """What `glob.glob(pattern, recursive=True)` finds, sorted, without entering a linked
    folder below the pattern's fixed part: glob follows links, and `**` over a link to a
    parent folder never ended. A name starting with "." matches only a part that does."""
    parts = Path(pattern).parts
    fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    base, wild = Path(*parts[:fixed]), parts[fixed:]
    if wild[-1] == "**":
        wild = (*wild, "*")  # glob's `folder/**` names the files in it too
    hidden = any(part.startswith(".") for part in wild)
    return sorted(
        str(path)
        for path in base.glob(str(Path(*wild)))
        if hidden or not any(part.startswith(".") for part in path.relative_to(base).parts)
    )


def _is_pipe(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def display_name(path: str) -> str:
    """A file name as messages and the graph show it.

    POSIX file names are bytes: one that is not UTF-8 arrives with lone surrogates, which no
    export can encode, and one may hold a newline that would break `FILE:LINE:`. Both become
    U+FFFD (not a backslash escape: the graph reads `a\\b` as a Windows path).
    """
    if path.isprintable():
        return path
    raw = os.fsencode(path).decode("utf-8", "replace")
    return "".join(c if c.isprintable() else "\ufffd" for c in raw)


def read_digest(data: bytes, source: str, forced: str | None = None) -> ReadResult:
    """Decode and parse one digest; never raises on bad content."""
    sha = hashlib.sha256(data).hexdigest()
    try:
        text, problems = decode(data, source)
    except DecodeError as err:
        return ReadResult(None, (), (Problem(source, 1, str(err), Severity.ERROR),))
    if not text.strip():
        return ReadResult(None, (), (*problems, Problem(source, 1, "empty file, no entries")))
    fmt = format_named(forced) if forced else _detect(os.path.basename(source), text)
    if fmt is None:
        message = (
            "cannot tell the digest format (expected a YYYY-MM-DD line, an "
            "'owner/repo · 标签视图' line, Markdown '## ' titles or JSON Lines); "
            "use --format"
        )
        return ReadResult(None, (), (*problems, Problem(source, 1, message, Severity.ERROR)))
    result = fmt.parse(text, source, sha)
    return within_limits(ReadResult(result.digest, result.entries, (*problems, *result.problems)))


def _detect(name: str, text: str) -> InputFormat | None:
    return next((fmt for fmt in FORMATS if fmt.sniff(name, text)), None)


def read_inputs(inputs: Iterable[str], forced: str | None = None) -> Iterator[ReadResult]:
    """Read every input; unreadable ones become a `ReadResult` with an error, never an exception."""
    paths, problems = expand_inputs(inputs)
    if problems:
        yield ReadResult(
            None, (), tuple(dataclasses.replace(p, source=display_name(p.source)) for p in problems)
        )
    for path in paths:
        if path == "-":
            yield read_digest(sys.stdin.buffer.read(), "-", forced)
            continue
        try:
            data = Path(path).read_bytes()
        except OSError as err:
            yield ReadResult(
                None,
                (),
                (Problem(display_name(path), 0, f"cannot read: {err.strerror}", Severity.ERROR),),
            )
            continue
        yield read_digest(data, display_name(path), forced)
