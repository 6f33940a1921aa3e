"""Reading a repository's history with git itself: the log, and the diffs of chosen commits.

`git log --raw -M` lists every commit's changed files, renames detected, without reading
one file's contents: two seconds for vLLM's 20,000 commits. `--numstat`, which counts
lines, reads every blob (~1,000 commits/s), and a library that walks the history in Python
(PyDriller, ~55 commits/s) is slower still; so the log is read raw, and diffs
(`git diff-tree -p -U0`: changed lines only, no context) and line counts only for the
commits that matching and the graph need. Like `kgraph.source.checkout`, this reads the
object database, never a work tree: a bare mirror works, and `@REV` means that commit.

A mirror may lack some blobs (GitHub's archives leave out the largest files). `git log
--raw` never needs them; a diff that does makes git stop, so the commit is read again
without that file, which is said once and counted as changed but unread.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

# A commit's header in the log: \x01 SHA PARENTS \0 DATE \0 SUBJECT \0, then its raw records.
LOG_FORMAT = "%x01%H %P%x00%cI%x00%s"
SQUASH_NUMBER = re.compile(r"\(#([1-9][0-9]{0,8})\)\s*$")
MERGE_NUMBER = re.compile(r"^Merge pull request #([1-9][0-9]{0,8}) from \S")

# Bounds on one commit's diff: generated files, vendored trees and data dumps can change
# millions of lines, and none of it tells one PR from another.
MAX_LINES_PER_FILE = 4_000  # changed lines read per file; the rest are counted, not read
MAX_LINE_CHARS = 400  # longer lines are data (minified code, embedded tables)
MAX_FILES_READ = 400  # files per commit whose lines are read
VENDORED = re.compile(
    r"(?:^|/)(?:third_party|third-party|vendor|vendored|node_modules|_vendor|external)/"
    r"|(?:^|/)(?:package-lock\.json|yarn\.lock|poetry\.lock|uv\.lock|Cargo\.lock)$"
    r"|\.(?:min\.js|map|svg|ipynb|lock|pb|onnx|bin|pt|safetensors|json|csv|tsv|txt)$",
    re.IGNORECASE,
)


class HistoryError(Exception):
    """A history that cannot be read at all (git failed for another reason than a blob)."""


@dataclass(frozen=True, slots=True, order=True)
class Change:
    """One file a commit changed, as `git log --raw -M` lists it."""

    path: str  # after the commit; for a deletion, the deleted path
    status: str  # A added, M modified, D deleted, R renamed, C copied, T type changed
    old_path: str = ""  # before a rename or copy


@dataclass(frozen=True, slots=True)
class LogCommit:
    sha: str
    parents: tuple[str, ...]
    date: str  # the committer's date, ISO 8601 with its offset: when it landed
    subject: str
    changes: tuple[Change, ...]  # against the first parent; empty for a merge of branches

    @property
    def number(self) -> int | None:
        """The PR this commit merged, by its subject: `… (#N)` or `Merge pull request #N`."""
        found = MERGE_NUMBER.match(self.subject) if len(self.parents) > 1 else None
        found = found or (SQUASH_NUMBER.search(self.subject) if len(self.parents) <= 1 else None)
        return int(found.group(1)) if found else None


def git(git_dir: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], input=stdin, capture_output=True, check=False
    )


def read_log(git_dir: Path, commit: str) -> list[LogCommit]:
    """Every commit reachable from `commit`, newest first, with the files each changed.

    A merge of a pull request (`Merge pull request #N from …`) lists what it brought in
    against its first parent, the PR's whole change; other merges (a sync with upstream)
    list nothing, as their change is the commits they merge, each listed on its own.
    """
    result = git(
        git_dir,
        "-c", "core.quotePath=false",
        "log", "-z", "--raw", "-M", "--no-abbrev", "--diff-merges=first-parent",
        "--no-color", f"--format={LOG_FORMAT}", commit, "--",
    )  # fmt: skip
    if result.returncode != 0:
        raise HistoryError(f"git log failed: {result.stderr.decode(errors='replace').strip()}")
    return list(parse_log(result.stdout))


def parse_log(data: bytes) -> Iterator[LogCommit]:
    tokens = data.split(b"\0")
    i, n = 0, len(tokens)
    while i < n:
        token = tokens[i].lstrip(b"\n")
        i += 1
        if not token.startswith(b"\x01"):
            continue
        sha, *parents = token[1:].decode("ascii").split()
        date = tokens[i].decode("utf-8", "replace") if i < n else ""
        subject = tokens[i + 1].decode("utf-8", "replace") if i + 1 < n else ""
        i += 2
        changes: list[Change] = []
        while i < n and tokens[i].lstrip(b"\n").startswith(b":"):
            status = tokens[i].rsplit(b" ", 1)[-1].decode("ascii")[:1]
            first = _path(tokens[i + 1]) if i + 1 < n else ""
            if status in ("R", "C") and i + 2 < n:
                changes.append(Change(_path(tokens[i + 2]), status, first))
                i += 3
            else:
                changes.append(Change(first, status))
                i += 2
        found = LogCommit(sha, tuple(parents), date, subject, tuple(sorted(changes)))
        if len(parents) > 1 and found.number is None:
            found = LogCommit(sha, found.parents, date, subject, ())
        yield found


def _path(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def is_shallow(git_dir: Path) -> bool:
    result = git(git_dir, "rev-parse", "--is-shallow-repository")
    return result.stdout.decode().strip() == "true"


# --- diffs ---------------------------------------------------------------------------------


@dataclass(slots=True)
class FileDiff:
    """The changed lines of one file in one commit (`-U0`: no context lines)."""

    path: str  # after the commit (the deleted path for a deletion)
    old_path: str  # before it (the same path unless renamed; "" when added)
    added: list[tuple[int, str]] = field(default_factory=list)  # (line in the new file, text)
    removed: list[tuple[int, str]] = field(default_factory=list)  # (line in the old file, text)
    contexts: list[str] = field(default_factory=list)  # the definition line each hunk is in
    # Per hunk: its definition line ("" when git names none), and how many added and removed
    # lines came before it, so that `added[a:b]` are the hunk's own (`hunk_lines`).
    hunks: list[tuple[str, int, int]] = field(default_factory=list)
    binary: bool = False
    cut: bool = False  # more lines changed than were read
    unread: bool = False  # its blob is missing, or it is vendored or generated


def hunk_lines(
    diff: FileDiff,
) -> Iterator[tuple[str, list[tuple[int, str]], list[tuple[int, str]]]]:
    """Each hunk of `diff`: its definition line, its removed lines and its added lines."""
    bounds = [*diff.hunks, ("", len(diff.added), len(diff.removed))]
    for (context, added_at, removed_at), (_, added_end, removed_end) in pairwise(bounds):
        yield context, diff.removed[removed_at:removed_end], diff.added[added_at:added_end]


@dataclass(frozen=True, slots=True)
class MissingObject:
    """A blob the repository lacks: the file of that commit whose diff was not read."""

    sha: str  # the commit
    path: str
    blob: str


def read_diffs(
    git_dir: Path,
    commits: Sequence[tuple[str, str | None]],
    missing: list[MissingObject],
    paths: Sequence[str] = (),
) -> Iterator[tuple[str, list[FileDiff]]]:
    """The diff of each (commit, first parent or None for a root commit), in order; only
    of the files `paths` names, when it names any.

    One `git diff-tree --stdin` reads them all. A blob git cannot read stops it; the commit
    it stopped in is read again on its own without that file (appended to `missing`), then
    the rest after it.
    """
    todo = list(commits)
    while todo:
        done, stopped = _run_diff_tree(git_dir, todo, paths, ())
        yield from done
        todo = todo[len(done) :]
        if not stopped or not todo:
            continue
        yield todo[0][0], _read_alone(git_dir, todo[0], missing, paths)
        todo = todo[1:]


def _read_alone(
    git_dir: Path,
    commit: tuple[str, str | None],
    missing: list[MissingObject],
    paths: Sequence[str] = (),
) -> list[FileDiff]:
    """One commit's diff, leaving out each file whose blob is missing, one after another."""
    excluded: list[str] = []
    while True:
        done, stopped = _run_diff_tree(git_dir, [commit], paths, excluded)
        if done and not stopped:
            return done[0][1]
        blob, path = _missing_blob(git_dir, commit, excluded)
        if path is None:
            return []  # git fails on this commit for another reason: its lines are not read
        missing.append(MissingObject(commit[0], path, blob))
        excluded.append(path)


# Hunk headers name the function a change is in (`@@ … @@ def reset_cache(self):`) once
# attributes give each language git's own driver for it; git reads them for bare
# repositories too.
ATTRIBUTES = Path(__file__).with_name("attributes")
DIFF_ARGS = (
    "-c", "core.quotePath=false", "-c", f"core.attributesFile={ATTRIBUTES}", "diff-tree",
    "-r", "-M", "-p", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--always",
    "--root", "--pretty=format:%x01%H",
)  # fmt: skip


def _run_diff_tree(
    git_dir: Path,
    commits: Sequence[tuple[str, str | None]],
    paths: Sequence[str],
    excluded: Sequence[str],
) -> tuple[list[tuple[str, list[FileDiff]]], bool]:
    """The diffs git finished, in order, and whether it stopped early (the commit it was
    reading when it stopped is not among them)."""
    lines = "".join(f"{sha} {parent}\n" if parent else f"{sha}\n" for sha, parent in commits)
    args = [*DIFF_ARGS, "--stdin"]
    if paths or excluded:
        args += ["--", *([f":(literal){p}" for p in paths] if paths else ["."])]
        args += [f":(exclude,literal){p}" for p in excluded]
    result = git(git_dir, *args, stdin=lines.encode())
    parsed = list(parse_diffs(result.stdout))
    stopped = result.returncode != 0
    if stopped and parsed:
        parsed.pop()  # the commit git was in when it stopped: maybe cut short
    done = []
    for (sha, _), (found, files) in zip(commits, parsed, strict=False):
        if sha != found:
            break
        done.append((sha, files))
    return done, stopped or len(done) < len(commits)


def _missing_blob(
    git_dir: Path, commit: tuple[str, str | None], excluded: list[str]
) -> tuple[str, str | None]:
    """The first blob of `commit`'s change that the repository lacks, and its path."""
    sha, parent = commit
    args = ["diff-tree", "-r", "-M", "-z", "--no-abbrev", "--root", sha]
    if parent:
        args = ["diff-tree", "-r", "-M", "-z", "--no-abbrev", parent, sha]
    result = git(git_dir, "-c", "core.quotePath=false", *args)
    tokens = result.stdout.split(b"\0")
    records: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        meta = tokens[i].lstrip(b"\n")
        if not meta.startswith(b":"):
            i += 1
            continue
        fields = meta.split(b" ")
        status = fields[-1][:1]
        span = 3 if status in (b"R", b"C") else 2
        path = _path(tokens[i + span - 1]) if i + span - 1 < len(tokens) else ""
        for blob in (fields[2], fields[3]):
            if blob.strip(b"0"):
                records.append((blob.decode(), path))
        i += span
    check = git(
        git_dir, "cat-file", "--batch-check", stdin="".join(f"{b}\n" for b, _ in records).encode()
    )
    for (blob, path), line in zip(records, check.stdout.splitlines(), strict=False):
        if line.endswith(b" missing") and path not in excluded:
            return blob, path
    return "", None


def parse_diffs(data: bytes) -> Iterator[tuple[str, list[FileDiff]]]:
    """(commit, its file diffs) from `git diff-tree --pretty=format:%x01%H -p -U0` output."""
    for chunk in data.split(b"\x01")[1:]:
        sha = chunk[:40].decode("ascii", "replace")
        yield sha, _parse_files(chunk[40:])


def _parse_files(data: bytes) -> list[FileDiff]:
    files: list[FileDiff] = []
    current: FileDiff | None = None
    old_line = new_line = 0
    read = 0
    for raw in data.split(b"\n"):
        if raw.startswith(b"diff --git "):
            current = FileDiff("", "")
            files.append(current)
            read = 0
            continue
        if current is None:
            continue
        if raw.startswith(b"@@ "):
            old_line, new_line = _hunk_starts(raw)
            context = raw.split(b" @@ ", 1)[1] if b" @@ " in raw else b""
            shown = context[:MAX_LINE_CHARS].decode("utf-8", "replace")
            if context and len(current.contexts) < MAX_LINES_PER_FILE:
                current.contexts.append(shown)
            if len(current.hunks) < MAX_LINES_PER_FILE:
                current.hunks.append((shown, len(current.added), len(current.removed)))
            continue
        head = raw[:1]
        if head == b"+" and not raw.startswith(b"+++ "):
            _keep(current, current.added, new_line, raw, read)
            read += 1
            new_line += 1
        elif head == b"-" and not raw.startswith(b"--- "):
            _keep(current, current.removed, old_line, raw, read)
            read += 1
            old_line += 1
        elif raw.startswith(b"--- "):
            current.old_path = _diff_path(raw[4:])
        elif raw.startswith(b"+++ "):
            current.path = _diff_path(raw[4:])
        elif raw.startswith(b"rename from "):
            current.old_path = _path(raw[12:])
        elif raw.startswith(b"rename to "):
            current.path = _path(raw[10:])
        elif raw.startswith(b"Binary files "):
            current.binary = True
            if b" and " in raw:
                left, _, right = raw[13:].rpartition(b" differ")[0].partition(b" and ")
                current.old_path = current.old_path or _diff_path(left)
                current.path = current.path or _diff_path(right)
    for f in files:
        if not f.path:
            f.path = f.old_path
        if VENDORED.search(f.path):
            f.unread, f.added, f.removed, f.contexts, f.hunks = True, [], [], [], []
    if len(files) > MAX_FILES_READ:
        for f in files[MAX_FILES_READ:]:
            f.unread, f.added, f.removed, f.contexts, f.hunks = True, [], [], [], []
    return files


def _keep(diff: FileDiff, lines: list[tuple[int, str]], number: int, raw: bytes, read: int) -> None:
    if read >= MAX_LINES_PER_FILE:
        diff.cut = True
    elif len(raw) <= MAX_LINE_CHARS:
        lines.append((number, raw[1:].decode("utf-8", "replace")))


_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _hunk_starts(raw: bytes) -> tuple[int, int]:
    """The first old and new line of a hunk; with -U0 a pure insertion names the line
    before it (`-10,0`) and a pure deletion the line before it on the new side."""
    found = _HUNK.match(raw)
    if not found:
        return 0, 0
    old, new = int(found.group(1)), int(found.group(3))
    if found.group(2) == b"0":
        old += 1
    if found.group(4) == b"0":
        new += 1
    return old, new


def _diff_path(raw: bytes) -> str:
    """`a/path`, `b/path` or `/dev/null` of a `---`/`+++` line; git C-quotes a path only
    for control characters once `core.quotePath` is off."""
    raw = raw.rstrip(b"\t")
    if raw == b"/dev/null":
        return ""
    if raw.startswith(b'"') and raw.endswith(b'"'):
        raw = _unquote(raw[1:-1])
    return _path(raw[2:] if raw[:2] in (b"a/", b"b/") else raw)


def _unquote(raw: bytes) -> bytes:
    out = bytearray()
    i = 0
    escapes = {
        b"n": 10,
        b"t": 9,
        b'"': 34,
        b"\\": 92,
        b"a": 7,
        b"b": 8,
        b"f": 12,
        b"r": 13,
        b"v": 11,
    }
    while i < len(raw):
        char = raw[i : i + 1]
        if char == b"\\" and i + 1 < len(raw):
            following = raw[i + 1 : i + 2]
            if following in escapes:
                out.append(escapes[following])
                i += 2
                continue
            if raw[i + 1 : i + 4].isdigit():
                out.append(int(raw[i + 1 : i + 4], 8))
                i += 4
                continue
        out += char
        i += 1
    return bytes(out)


# --- line counts ---------------------------------------------------------------------------


def read_numstat(
    git_dir: Path, sha: str, parent: str | None, missing: list[MissingObject]
) -> dict[str, tuple[int, int] | None]:
    """Lines added and removed per file path (after the commit) of one commit; None for a
    binary file or one whose blob is missing."""
    excluded: list[str] = []
    while True:
        base = [parent, sha] if parent else ["--root", sha]
        args = ["-c", "core.quotePath=false", "diff-tree", "-r", "-M", "-z", "--numstat", *base]
        if excluded:
            args += ["--", ".", *(f":(exclude,literal){p}" for p in excluded)]
        result = git(git_dir, *args)
        if result.returncode == 0:
            break
        blob, path = _missing_blob(git_dir, (sha, parent), excluded)
        if path is None:
            return {}
        if not any(m.blob == blob and m.sha == sha for m in missing):
            missing.append(MissingObject(sha, path, blob))
        excluded.append(path)
    counts: dict[str, tuple[int, int] | None] = {p: None for p in excluded}
    tokens = result.stdout.split(b"\0")
    i = 0
    while i < len(tokens):
        record = tokens[i].lstrip(b"\n")
        i += 1
        parts = record.split(b"\t")
        if len(parts) != 3 or not parts[0]:
            continue
        added, removed, raw = parts
        if not raw:  # a rename: the old and new paths follow
            raw = tokens[i + 1] if i + 1 < len(tokens) else b""
            i += 2
        number = added.isdigit() and removed.isdigit()
        counts[_path(raw)] = (int(added), int(removed)) if number else None
    return counts
