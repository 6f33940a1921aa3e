"""A repository's history as an input: the commits up to `--source`'s REV and what each
changed, read with git and cached in the output folder.

This package knows nothing of reviews. It answers what matching (`kgraph.merges`) and the
graph (`kgraph.commits`) ask: the commits and the files each changed
(`HistoryIndex`), the identifiers of chosen commits' changed lines (`CommitTokens`), and
the whole change of a linked commit (`CommitChange`); and which files change together
(`coupling`, counted over the first-parent `changesets`). Everything read is kept by
repository and commit in `OUT/.kgraph/`:

- `history-OWNER-REPO-COMMIT.json`: the log up to COMMIT (read once per commit);
- `history-OWNER-REPO-diffs.json`: the identifiers of every commit's diff read so far
  (a commit's diff never changes, so this serves every REV);
- `history-OWNER-REPO-COMMIT-links.json`: what matching found and the changes of the
  commits it linked, so that a build of the same digests at the same commit reads
  nothing else.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kgraph.atomic import write_atomic
from kgraph.history.cachefile import dumps, read_document
from kgraph.history.changes import CommitChange, FileChanged, SymbolChanged, read_change
from kgraph.history.index import Commit, HistoryIndex, build_history
from kgraph.history.log import FileDiff, MissingObject, git, is_shallow, read_diffs, read_log
from kgraph.history.tokens import EMPTY, CommitTokens, tokens_of, union
from kgraph.model import Problem, Severity

__all__ = [
    "Commit",
    "CommitChange",
    "CommitTokens",
    "FileChanged",
    "History",
    "HistoryIndex",
    "SymbolChanged",
    "open_history",
    "shown_path",
]

CACHE_FOLDER = ".kgraph"
LINKS_VERSION = 3  # bump when what a link stores changes (3: a change's design signals)
DIFFS_VERSION = 2  # bump when CommitTokens change
DIFF_CHUNK = 500  # commits per git process in `History.diffs`


@dataclass(eq=False)
class History:
    """The history of `repo` up to `commit`, read from `git_dir` as it is asked for."""

    repo: str
    commit: str
    git_dir: Path
    root: Path  # as the user gave it, for messages
    cache_dir: Path | None
    shallow_end: tuple[str, str] | None = None  # (date, sha) of the oldest commit, if shallow
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0  # spent reading git
    _index: HistoryIndex | None = None
    _index_cached: bool | None = None
    _tokens: dict[str, dict[str, CommitTokens]] | None = None
    _tokens_dirty: bool = False
    _links: dict[str, object] | None = None
    _links_dirty: bool = False
    _missing: list[MissingObject] = field(default_factory=list)
    _said: set[str] = field(default_factory=set)
    _used: dict[str, set[str]] = field(
        default_factory=lambda: {"matches": set(), "commits": set(), "changes": set()}
    )

    # --- the log -------------------------------------------------------------------------------

    @property
    def index(self) -> HistoryIndex:
        if self._index is None:
            started = time.perf_counter()
            path = self._cache("")
            if path is not None and path.is_file():
                found = HistoryIndex.from_json(path.read_text("utf-8"))
                if found is not None and (found.repo, found.commit) == (self.repo, self.commit):
                    self._index, self._index_cached = found, True
            if self._index is None:
                log = read_log(self.git_dir, self.commit)
                self._index = build_history(
                    self.repo, self.commit, log, self.shallow_end is not None
                )
                self._index_cached = False
                if path is not None:
                    write_atomic(path, self._index.to_json().encode("utf-8"), durable=False)
            self.seconds += time.perf_counter() - started
        return self._index

    # --- what commits changed ------------------------------------------------------------------

    def tokens(
        self, positions: Iterable[int], paths: Iterable[str] | None = None
    ) -> dict[int, CommitTokens]:
        """The identifiers of each commit's changed lines in the files `paths` names (under
        any name they had), or in all its files, as one `CommitTokens` a commit."""
        return {p: union(parts) for p, parts in self.parts(positions, paths).items()}

    def parts(
        self, positions: Iterable[int], paths: Iterable[str] | None = None
    ) -> dict[int, list[CommitTokens]]:
        """`tokens`, file by file. Diffs not read before are read now, in one `git
        diff-tree` restricted to those files, and kept by commit and file."""
        index = self.index
        known = self._token_cache()
        wanted = set(paths) if paths is not None else None
        asked = set(positions)
        if wanted is None:
            needed = {p: set(index.paths_of(p)) for p in sorted(asked)}
        else:
            touching = index.positions_touching(wanted)
            needed = {p: touching.get(p, set()) for p in sorted(asked)}
        todo = [
            p for p, names in needed.items() if not names <= known.get(index.at(p).sha, {}).keys()
        ]
        if todo:
            started = time.perf_counter()
            spec = sorted({n for p in todo for n in needed[p]}) if wanted is not None else []
            pairs = [(index.at(p).sha, index.at(p).first_parent) for p in todo]
            for (sha, files), position in zip(
                read_diffs(self.git_dir, pairs, self._missing, spec), todo, strict=True
            ):
                stored = known.setdefault(sha, {})
                for diff in files:
                    for name in {diff.path, diff.old_path} & needed[position]:
                        stored[name] = tokens_of([diff])
                for name in needed[position] - stored.keys():
                    stored[name] = EMPTY  # its blob is missing, or git gave no diff of it
            self._tokens_dirty = True
            self._say_missing()
            self.seconds += time.perf_counter() - started
        found = {}
        for position, names in needed.items():
            stored = known.get(index.at(position).sha, {})
            found[position] = [stored[n] for n in sorted(names) if n in stored]
        return found

    def describe(self, sha: str) -> tuple[str, str]:
        """The date (ISO 8601) and subject of a commit of the history."""
        described = self._links_cache().setdefault("commits", {})
        assert isinstance(described, dict)
        self._used["commits"].add(sha)
        found = described.get(sha)
        if isinstance(found, list) and len(found) == 2 and all(isinstance(v, str) for v in found):
            return found[0], found[1]
        commit = self.index.at(self.index.position_of[sha])
        described[sha] = [commit.date, commit.subject]
        self._links_dirty = True
        return commit.date, commit.subject

    def diffs(
        self,
        commits: Sequence[tuple[str, str | None]],
        paths: Sequence[str] = (),
        workers: int = 1,
    ) -> Iterator[tuple[str, list[FileDiff]]]:
        """The diffs of (commit, first parent) pairs, in order, of the files `paths` names,
        read now and not kept: for a count over thousands of commits (function coupling),
        whose result is what gets cached. `workers` git processes read chunks of
        `DIFF_CHUNK` commits side by side (git does most of the work, outside Python's
        lock), at most that many chunks ahead of the caller. A file whose blob is missing
        is said once and left out."""
        started = time.perf_counter()
        chunks = [commits[i : i + DIFF_CHUNK] for i in range(0, len(commits), DIFF_CHUNK)]
        missing: list[list[MissingObject]] = [[] for _ in chunks]

        def read(at: int) -> list[tuple[str, list[FileDiff]]]:
            return list(read_diffs(self.git_dir, chunks[at], missing[at], paths))

        try:
            with ThreadPoolExecutor(max(1, workers)) as pool:
                pending = deque(pool.submit(read, at) for at in range(min(workers, len(chunks))))
                following = len(pending)
                while pending:
                    done = pending.popleft().result()
                    if following < len(chunks):
                        pending.append(pool.submit(read, following))
                        following += 1
                    yield from done
        finally:
            self._missing.extend(m for found in missing for m in found)
            self._say_missing()
            self.seconds += time.perf_counter() - started

    def change(self, sha: str) -> CommitChange | None:
        """The whole change of one commit: files with line counts, and changed definitions."""
        changes = self._links_cache().setdefault("changes", {})
        assert isinstance(changes, dict)
        self._used["changes"].add(sha)
        if (found := CommitChange.from_json(changes.get(sha))) is not None:
            return found
        index = self.index
        position = index.position_of.get(sha)
        if position is None:
            return None
        started = time.perf_counter()
        commit = index.at(position)
        diffs = next(
            (f for _, f in read_diffs(self.git_dir, [(sha, commit.first_parent)], self._missing)),
            [],
        )
        change = read_change(self.git_dir, index, commit, diffs, self._missing)
        self._say_missing()
        changes[sha] = change.to_json()
        self._links_dirty = True
        self.seconds += time.perf_counter() - started
        return change

    # --- what matching remembers ---------------------------------------------------------------

    def remembered(self, key: str) -> object | None:
        """What matching stored under `key` for this repository and commit."""
        self._used["matches"].add(key)
        matches = self._links_cache().get("matches", {})
        return matches.get(key) if isinstance(matches, dict) else None

    def remember(self, key: str, value: object) -> None:
        self._used["matches"].add(key)
        matches = self._links_cache().setdefault("matches", {})
        if isinstance(matches, dict) and matches.get(key) != value:
            matches[key] = value
            self._links_dirty = True

    def save(self) -> None:
        """Keep what this build read for the next one; what it did not ask for (matches of
        digests gone, changes of commits no longer linked) is dropped. A cache that cannot
        be written is said, never fatal: the next build reads git again."""
        try:
            self._save()
        except OSError as error:
            where = error.filename if isinstance(error.filename, str) else str(self.cache_dir)
            self.problems.append(
                Problem(where, 0, f"cannot keep the history's cache: {error.strerror or error}")
            )

    def _save(self) -> None:
        if self._links is not None:
            for part, used in self._used.items():
                kept = self._links.get(part)
                if isinstance(kept, dict) and set(kept) - used:
                    self._links[part] = {k: v for k, v in kept.items() if k in used}
                    self._links_dirty = True
        if self._tokens_dirty and self._tokens is not None and (path := self._cache("diffs")):
            document = {
                "kgraphHistoryDiffs": DIFFS_VERSION,
                "repo": self.repo,
                "commits": {
                    sha: {path: t.to_json() for path, t in sorted(files.items())}
                    for sha, files in sorted(self._tokens.items())
                },
            }
            write_atomic(path, dumps(document), durable=False)
            self._tokens_dirty = False
        if self._links_dirty and self._links is not None and (path := self._cache("links")):
            write_atomic(path, dumps(self._links), durable=False)
            self._links_dirty = False

    # --- caches --------------------------------------------------------------------------------

    def _cache(self, kind: str) -> Path | None:
        if self.cache_dir is None:
            return None
        safe = self.repo.replace("/", "-")
        # A shallow clone deepened later has more history at the same commit.
        at = self.commit + (f"-shallow-{self.shallow_end[1][:12]}" if self.shallow_end else "")
        name = {
            "": f"history-{safe}-{at}.json",
            "diffs": f"history-{safe}-diffs.json",
            "links": f"history-{safe}-{at}-links.json",
        }[kind]
        return self.cache_dir / CACHE_FOLDER / name

    def _token_cache(self) -> dict[str, dict[str, CommitTokens]]:
        if self._tokens is None:
            self._tokens = {}
            document = read_document(self._cache("diffs"))
            commits = document.get("commits") if document.get("repo") == self.repo else None
            if document.get("kgraphHistoryDiffs") == DIFFS_VERSION and isinstance(commits, dict):
                for sha, files in commits.items():
                    if not isinstance(files, dict):
                        continue
                    stored = self._tokens[sha] = {}
                    for path, value in files.items():
                        if (tokens := CommitTokens.from_json(value)) is not None:
                            stored[path] = tokens
        return self._tokens

    def _links_cache(self) -> dict[str, object]:
        if self._links is None:
            document = read_document(self._cache("links"))
            fresh = {"kgraphHistoryLinks": LINKS_VERSION, "repo": self.repo, "commit": self.commit}
            same = all(document.get(k) == v for k, v in fresh.items())
            self._links = document if same else fresh
        return self._links

    def _say_missing(self) -> None:
        """One warning per blob the repository lacks."""
        for m in self._missing:
            if m.blob not in self._said:
                self._said.add(m.blob)
                self.problems.append(
                    Problem(
                        str(self.root),
                        0,
                        f"the repository lacks object {m.blob[:12]} ({m.path} as commit "
                        f"{m.sha[:12]} changed it): that file's change is counted, not read",
                        Severity.WARNING,
                    )
                )

    # --- the build's account -------------------------------------------------------------------

    @property
    def read(self) -> bool:
        """The log was needed by this build (no cache answered everything)."""
        return self._index is not None

    def summary(self) -> str:
        if self._index is None:
            return "history: matches cached"
        how = "log cached" if self._index_cached else f"log read in {self.seconds:.1f}s"
        return f"history: {len(self._index):,} commits, {how}"


def shown_path(path: str) -> str:
    """A path as the graph shows it. git names files by bytes; one that is not UTF-8 is
    read with its bytes kept (lone surrogates, so that git is asked about it by its own
    name), which no output can encode: the graph gets U+FFFD in their place, as the
    source index's warning shows them."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return path


def open_history(
    repo: str, root: Path, git_dir: Path, commit: str, cache_dir: Path | None
) -> History:
    """The history of a git `--source`; says once where a shallow clone's history ends."""
    history = History(repo, commit, git_dir, root, cache_dir)
    if is_shallow(git_dir):
        history.shallow_end = _shallow_end(git_dir, commit)
        date, sha = history.shallow_end
        history.problems.append(
            Problem(
                str(root),
                0,
                f"a shallow clone: its history ends at {date[:10]} (commit {sha[:12]}); PRs "
                "merged before are not linked to their commits (`git fetch --unshallow` "
                "reads the rest)",
                Severity.WARNING,
            )
        )
    return history


def _shallow_end(git_dir: Path, commit: str) -> tuple[str, str]:
    """The oldest commit a shallow clone has below `commit`."""
    result = git(git_dir, "log", "--format=%cI %H", "--reverse", "--max-parents=0", commit)
    lines = result.stdout.decode().split()
    if len(lines) >= 2:
        return lines[0], lines[1]
    boundary = git(git_dir, "rev-parse", "--git-path", "shallow").stdout.decode().strip()
    shallow = Path(boundary) if Path(boundary).is_absolute() else git_dir / boundary
    sha = shallow.read_text().split()[0] if shallow.is_file() else commit
    date = git(git_dir, "show", "-s", "--format=%cI", sha).stdout.decode().strip()
    return date, sha
