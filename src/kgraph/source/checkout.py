"""Reading a repository's files: from git at one commit, or from a plain folder.

A git checkout is read through git itself (`ls-tree` for the file list, one
`cat-file --batch` process for the contents), never through the work tree: `@REV` then
means exactly that commit, uncommitted edits cannot shift a line number, and bare
repositories and mirrors work too: git's own view of what is in the repository. A plain
folder is read from disk, less what git would ignore there: its `.gitignore` files (at the
top and in subfolders, each for its own folder, negations included) and
`.git/info/exclude`, read with pathspec, which implements git's rules, over a floor of
folders that are never source (`NOT_SOURCE`, virtual environments).
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from kgraph.errors import UsageError


class SourceError(UsageError):
    """A `--source` that cannot be read: no such folder, not git, unknown revision."""

    option = "--source"


@dataclass(frozen=True, slots=True)
class Checkout:
    """Where the files come from: a git repository at `commit`, or a plain folder."""

    root: Path
    commit: str | None  # a full SHA for git, None for a plain folder
    git_dir: Path | None = None

    @property
    def fingerprint(self) -> str:
        """What the cached index is keyed by: the commit, or a digest of the folder's
        file names, sizes and modification times."""
        if self.commit:
            return self.commit
        digest = hashlib.sha256()
        for path, size, mtime in sorted(_folder_stats(self.root)):
            digest.update(f"{path}\0{size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
        return "folder-" + digest.hexdigest()[:16]


def open_checkout(root: Path, rev: str | None) -> Checkout:
    """Decide how to read `root`; with `rev`, resolve it to a full commit SHA."""
    if not root.is_dir():
        raise SourceError(f"{root}: no such folder")
    git_dir = _git_dir(root)
    if git_dir is None:
        if rev:
            raise SourceError(f"{root}: @{rev} needs a git repository, and this is a plain folder")
        return Checkout(root, None)
    wanted = rev or "HEAD"
    result = _git(git_dir, "rev-parse", "--verify", "--quiet", f"{wanted}^{{commit}}")
    commit = result.stdout.decode().strip()
    if result.returncode != 0 or not commit:
        if rev:
            raise SourceError(f"{root}: unknown revision {rev!r}")
        raise SourceError(f"{root}: the git repository has no commit yet")
    return Checkout(root, commit, git_dir)


def _git_dir(root: Path) -> Path | None:
    """The git directory when `root` is the top of a work tree or a bare repository.

    A folder that merely sits inside some other repository is a plain folder: reading that
    repository's whole tree would index the wrong files.
    """
    try:
        result = _run_git(
            "-C", str(root), "rev-parse", "--is-bare-repository", "--absolute-git-dir"
        )
    except FileNotFoundError:
        return None  # no git on this machine: every folder is a plain folder
    lines = result.stdout.decode().splitlines()
    if result.returncode != 0 or len(lines) != 2:
        return None
    bare, git_dir = lines[0] == "true", Path(lines[1])
    if bare:
        return git_dir if git_dir.resolve() == root.resolve() else None
    top = _run_git("-C", str(root), "rev-parse", "--show-toplevel").stdout.decode().strip()
    return git_dir if top and Path(top).resolve() == root.resolve() else None


def _run_git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], capture_output=True, check=False)


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return _run_git("--git-dir", str(git_dir), *args)


def list_files(checkout: Checkout) -> list[str]:
    """Every file path of the checkout, `/`-separated, sorted."""
    if checkout.git_dir is None:
        return sorted(path for path, _, _ in _folder_stats(checkout.root))
    result = _git(checkout.git_dir, "ls-tree", "-r", "-z", "--full-tree", checkout.commit or "")
    if result.returncode != 0:
        raise SourceError(f"{checkout.root}: git ls-tree failed: {result.stderr.decode().strip()}")
    paths = []
    for record in result.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        if meta.split(b" ")[1] == b"blob":  # submodules are commits, not files
            paths.append(path.decode("utf-8", "surrogateescape"))
    return sorted(paths)


def read_files(checkout: Checkout, paths: list[str]) -> Iterator[tuple[str, bytes]]:
    """The contents of `paths`, in order; files git or the disk cannot give are skipped.

    A mirror may lack its largest blobs ("missing" in `cat-file`): their paths are still
    listed, they only define nothing.
    """
    if checkout.git_dir is None:
        for path in paths:
            try:
                yield path, (checkout.root / path).read_bytes()
            except OSError:
                continue
        return
    yield from _cat_files(checkout.git_dir, checkout.commit or "", paths)


def _cat_files(git_dir: Path, commit: str, paths: list[str]) -> Iterator[tuple[str, bytes]]:
    with subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        # One request, then its whole answer: neither pipe can fill up and block the other.
        out = process.stdout
        for path in paths:
            if "\n" in path:
                continue
            process.stdin.write(f"{commit}:{path}\n".encode("utf-8", "surrogateescape"))
            process.stdin.flush()
            header = out.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                continue  # "missing", or "ambiguous"
            size = int(header[2])
            data = out.read(size)
            out.read(1)  # the newline after the contents
            yield path, data
        process.stdin.close()


NOT_SOURCE = frozenset(
    {".git", "__pycache__", "node_modules", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
     ".ruff_cache"}
)  # fmt: skip


def _folder_stats(root: Path) -> Iterator[tuple[str, int, int]]:
    """(relative path, size, mtime) of every regular file under `root` that git would keep.

    Skips `.git`, caches, `node_modules` and virtual environments (a folder with a
    `pyvenv.cfg`), whose code is not the repository's, whatever the ignore files say; what
    the ignore files exclude (a folder excluded is not entered, so nothing below it can be
    re-included, as in git); and links, which git keeps as links: followed, a linked file
    would define its names twice.
    """
    root_text = str(root)
    top = [_ignore_rules("", os.path.join(root_text, ".git", "info", "exclude"))]
    rules_of: dict[str, list[IgnoreRules]] = {root_text: [r for r in top if r]}
    for folder, dirs, files in os.walk(root_text):
        relative_folder = os.path.relpath(folder, root_text).replace(os.sep, "/")
        relative_folder = "" if relative_folder == "." else relative_folder
        rules = rules_of.pop(folder)
        if here := _ignore_rules(relative_folder, os.path.join(folder, ".gitignore")):
            rules = [*rules, here]
        kept = []
        for d in sorted(dirs):
            if d in NOT_SOURCE or os.path.exists(os.path.join(folder, d, "pyvenv.cfg")):
                continue
            if _ignored(rules, _join(relative_folder, d) + "/"):
                continue
            kept.append(d)
            rules_of[os.path.join(folder, d)] = rules
        dirs[:] = kept
        for name in files:
            full = os.path.join(folder, name)
            try:
                info = os.lstat(full)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            relative = _join(relative_folder, name)
            if not _ignored(rules, relative):
                yield relative, info.st_size, info.st_mtime_ns


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """The patterns of one ignore file, which apply to paths under `base` (`/`-separated,
    relative to the checkout's root; empty for the root)."""

    base: str
    spec: pathspec.GitIgnoreSpec


def _ignore_rules(base: str, path: str) -> IgnoreRules | None:
    """The ignore file at `path`, if it is a regular file (git does not follow a linked
    `.gitignore` either). A line that is not a valid pattern is passed over, as git does."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            lines = handle.read().decode("utf-8", "surrogateescape").splitlines()
    except OSError:
        return None
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:
        spec = pathspec.GitIgnoreSpec.from_lines([line for line in lines if _valid(line)])
    return IgnoreRules(base, spec)


def _valid(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True


def _ignored(rules: list[IgnoreRules], path: str) -> bool:
    """Whether git would ignore `path` (a folder's ends with `/`): the deepest ignore file
    with a pattern that matches decides, and within it the last such pattern; the rules
    are in order of precedence, `.git/info/exclude` first and lowest."""
    for rule in reversed(rules):
        relative = path[len(rule.base) + 1 :] if rule.base else path
        decided = rule.spec.check_file(relative).include
        if decided is not None:
            return decided
    return False


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name
