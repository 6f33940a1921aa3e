"""Read digests: expand the inputs, decode each file, detect its format, parse it."""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import os
import stat
import sys
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kgraph.ingest.formats import FORMATS, InputFormat, format_named
from kgraph.ingest.text import DecodeError, decode
from kgraph.limits import within_limits
from kgraph.model import Problem, ReadResult, Severity

DIGEST_SUFFIXES = (".txt", ".md", ".markdown", ".jsonl", ".ndjson")

__all__ = [
    "FORMATS",
    "LINK",
    "OUTPUT",
    "InputFormat",
    "Inputs",
    "Passed",
    "display_name",
    "expand_inputs",
    "read_digest",
    "read_inputs",
]


# A device has no end to read to (/dev/zero filled the memory) and a socket is no file. A
# pipe is read to its end, as standard input is: `kgraph build <(zcat digests.gz)`.
_NOT_READABLE = "not a file or a pipe (a device or a socket); give a stream as '-' on stdin"


@dataclass(frozen=True, slots=True, order=True)
class Passed:
    """A path a folder walk or a glob did not read, and why."""

    path: str
    reason: str  # LINK or OUTPUT


LINK = "symbolic link"
OUTPUT = "kgraph output"


@dataclass(frozen=True, slots=True)
class Inputs:
    """What the inputs named: the files to read, the problems, and what a walk passed by."""

    paths: list[str]  # in reading order; "-" is stdin
    problems: list[Problem]
    passed: list[Passed] = field(default_factory=list)  # sorted, for the summary


def expand_inputs(inputs: Iterable[str], written: Collection[str | Path] = ()) -> Inputs:
    """Files as given, folders recursively (digest suffixes only), globs; `-` is stdin.

    The result is sorted within each input so that a folder reads the same way every time.
    Only regular files and pipes are read: a folder or a glob skips anything else, a named
    one is an error. A walk follows no symbolic link, to a file or to a folder (as git and
    ripgrep do): a link can lead anywhere, `/etc/passwd` or a parent folder. Nor does it
    read what kgraph writes: the files and folders in `written` (the build's output folder
    and report) and any folder holding a `.kgraph/` record, a build's output folder, whose
    JSON report would be read back as JSON Lines. What a walk passed is in `passed`; a
    path named as an input is read, as the user asked. A file named or found twice is
    listed twice: the build keeps its first copy and reports the second as an error.
    """
    paths: list[str] = []
    problems: list[Problem] = []
    passed: set[Passed] = set()
    own = frozenset(os.path.realpath(path) for path in written)
    first: dict[str, str] = {}  # real path -> the path it was first reached by

    def add(path: str) -> None:
        # A file reached twice (named twice, through a link, in two inputs) is listed
        # again under its first name, so that the build tells the second copy by its
        # name and content and reports it (kgraph.pipeline). A stream is read only once.
        key = path if path == "-" else os.path.realpath(path)
        if key not in first:
            first[key] = path
            paths.append(path)
        elif key != "-" and not _is_pipe(path):
            paths.append(first[key])

    for given in inputs:
        if given == "-":
            add("-")
        elif os.path.isdir(given):
            found = _walk(given, own, passed)
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
            matches = _matching(given, own, passed)
            if not matches:
                problems.append(Problem(given, 0, "pattern matches no file", Severity.ERROR))
            for path in matches:
                if os.path.isfile(path):
                    add(path)
        else:
            problems.append(Problem(given, 0, "no such file or folder", Severity.ERROR))
    return Inputs(paths, problems, sorted(passed))


def _is_digest_name(name: str) -> bool:
    return os.path.splitext(name)[1].lower() in DIGEST_SUFFIXES


def _written(path: str, own: frozenset[str]) -> bool:
    """Is `path` one of the build's own outputs, or the output folder of some build?"""
    return os.path.realpath(path) in own or os.path.isdir(os.path.join(path, ".kgraph"))


def _walk(folder: str, own: frozenset[str], passed: set[Passed]) -> list[str]:
    """The digest files below `folder`, sorted; the symbolic links met on the way (to a
    folder, or to a file with a digest's suffix) and kgraph's outputs go to `passed`.
    Hidden files and folders are skipped."""
    found: list[str] = []
    for parent, dirs, files in os.walk(folder):  # never enters a linked folder
        for name in list(dirs):
            path = os.path.join(parent, name)
            if name.startswith("."):
                dirs.remove(name)
            elif os.path.islink(path):
                dirs.remove(name)
                passed.add(Passed(path, LINK))
            elif _written(path, own):
                dirs.remove(name)
                passed.add(Passed(path, OUTPUT))
        for name in files:
            path = os.path.join(parent, name)
            if name.startswith(".") or not _is_digest_name(name):
                continue
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode):
                passed.add(Passed(path, LINK))
            elif _written(path, own):
                passed.add(Passed(path, OUTPUT))
            elif stat.S_ISREG(mode):
                found.append(path)
    return sorted(found)


def _matching(pattern: str, own: frozenset[str], passed: set[Passed]) -> list[str]:
    """What `glob.glob(pattern, recursive=True)` finds, sorted, without what `_walk` would
    not read below the pattern's fixed part (which goes to `passed`): glob follows links,
    and `**` over a link to a parent folder never ended. A name starting with "." matches
    only a part that does."""
    parts = Path(pattern).parts
    fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    base, wild = Path(*parts[:fixed]), parts[fixed:]
    if wild[-1] == "**":
        wild = (*wild, "*")  # glob's `folder/**` names the files in it too
    hidden = any(part.startswith(".") for part in wild)
    found: list[str] = []
    for path in base.glob(str(Path(*wild))):
        relative = path.relative_to(base).parts
        if not hidden and any(part.startswith(".") for part in relative):
            continue
        for step in (base.joinpath(*relative[: i + 1]) for i in range(len(relative))):
            if step.is_symlink():
                if step != path or (path.is_file() and _is_digest_name(path.name)):
                    passed.add(Passed(str(step), LINK))
                break
            if _written(str(step), own):
                passed.add(Passed(str(step), OUTPUT))
                break
        else:
            found.append(str(path))
    return sorted(found)


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
        lost = _entries_in(err.text, source, forced) if err.text is not None else 0
        count = "its entry is" if lost == 1 else f"its {lost} entries are"
        message = f"{err}; {count} skipped" if lost else str(err)
        return ReadResult(None, (), (Problem(source, err.line, message, Severity.ERROR, lost),))
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


def _entries_in(text: str, source: str, forced: str | None) -> int:
    """How many entries a file that cannot be decoded holds, read with U+FFFD for its bad
    bytes: they are lost with it, and counted as skipped, so that nothing disappears."""
    fmt = format_named(forced) if forced else _detect(os.path.basename(source), text)
    if fmt is None or not text.strip():
        return 0
    result = fmt.parse(text, source, "")
    return len(result.entries) + sum(p.skipped_entries for p in result.problems)


def _detect(name: str, text: str) -> InputFormat | None:
    return next((fmt for fmt in FORMATS if fmt.sniff(name, text)), None)


def read_inputs(inputs: Iterable[str], forced: str | None = None) -> Iterator[ReadResult]:
    """Read every input; unreadable ones become a `ReadResult` with an error, never an exception."""
    expanded = expand_inputs(inputs)
    paths, problems = expanded.paths, expanded.problems
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
