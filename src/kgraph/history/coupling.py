"""Change coupling: which files change together, change after change, over a history.

The measure is code-maat's `coupling` analysis (Adam Tornhill, *Your Code as a Crime
Scene*), so that its users can check one against the other:

- a change of more than `max_changeset_size` files is left out altogether (a reformat, a
  vendored update, a mass rename couples everything with everything and means nothing);
- a file's revisions are the changes kept that touch it; a pair's shared revisions are
  the changes kept that touch both;
- degree = shared revisions ÷ the mean of the two files' revisions × 100, truncated to a
  whole number as code-maat prints it; `average-revs` is that mean, rounded up;
- a pair is kept when the mean revisions ≥ `min_revs`, the shared revisions ≥
  `min_shared_revs`, the exact degree ≥ `min_degree` and the truncated one ≤ `max_degree`.

Two things code-maat does not do. Renames are followed: every change is counted under
the name its file has at the history's newest commit (code-maat counts `old.py` and
`new.py` as two files, so a renamed file's pairs split or vanish); `follow_renames=False`
gives code-maat's numbers exactly. And each pair has a trend: its degree over the window's
last `trend_days` days against its degree before them.

Counting is one pass over the changes; memory holds at most C(max_changeset_size, 2)
new pairs per change.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from kgraph.history.changesets import Changeset

CREATED = frozenset("ARC")  # statuses of a path that did not hold this file before
WEAKENING = -10  # a trend this many points down or more is drawn as weakening


@dataclass(frozen=True, slots=True)
class CouplingOptions:
    """code-maat's defaults (`-n 5 -m 5 -i 30 -x 100 -s 30`), renames followed, all history;
    with `functions`, the coupling of the functions of files with at least
    `function_min_revs` revisions too (`kgraph.history.functions`)."""

    min_revs: int = 5
    min_shared_revs: int = 5
    min_degree: int = 30
    max_degree: int = 100
    max_changeset_size: int = 30
    follow_renames: bool = True
    since: str | None = None  # YYYY-MM-DD: only changes that landed that day or later
    trend_days: int = 90
    functions: bool = False
    function_min_revs: int = 50

    def key(self) -> str:
        """What a cached result depends on."""
        return (
            f"n{self.min_revs}-m{self.min_shared_revs}-i{self.min_degree}-x{self.max_degree}"
            f"-s{self.max_changeset_size}-{'r' if self.follow_renames else 'nr'}"
            f"-{self.since or 'all'}-t{self.trend_days}"
            + (f"-f{self.function_min_revs}" if self.functions else "")
        )


@dataclass(frozen=True, slots=True, order=True)
class Coupling:
    """Two files that change together; `entity` sorts before `coupled`, as in code-maat."""

    entity: str
    coupled: str
    shared_revisions: int
    entity_revisions: int
    coupled_revisions: int
    trend: int | None = None  # recent degree − earlier degree, in points; None: not both

    @property
    def exact_degree(self) -> float:
        return 200 * self.shared_revisions / (self.entity_revisions + self.coupled_revisions)

    @property
    def degree(self) -> int:
        """Truncated, as code-maat's `(int coupling)`; exact in integers."""
        return 200 * self.shared_revisions // (self.entity_revisions + self.coupled_revisions)

    @property
    def average_revisions(self) -> int:
        """The mean of the two files' revisions, rounded up (code-maat's `average-revs`)."""
        return -(-(self.entity_revisions + self.coupled_revisions) // 2)

    @property
    def weakening(self) -> bool:
        return self.trend is not None and self.trend <= WEAKENING

    def partner(self, path: str) -> str:
        return self.coupled if path == self.entity else self.entity


@dataclass(frozen=True, slots=True)
class CouplingResult:
    pairs: tuple[Coupling, ...]  # strongest first: degree, then average revisions, then names
    revisions: Mapping[str, int]  # per file, in the changes counted
    changesets: int  # changes in the window
    too_large: int  # of those, left out for touching more than max_changeset_size files
    renamed: int  # earlier names counted under a later one
    options: CouplingOptions = field(default_factory=CouplingOptions)

    def of(self, path: str) -> list[Coupling]:
        return [p for p in self.pairs if path in (p.entity, p.coupled)]


def couple(
    changesets: Iterable[Changeset], options: CouplingOptions | None = None
) -> CouplingResult:
    """The coupled pairs of `changesets`, given newest first (as `git log` lists them)."""
    options = options or CouplingOptions()
    named, renamed = _named(changesets, options.follow_renames)
    since = options.since
    window = named if since is None else [(d, f) for d, f in named if d[:10] >= since]
    newest = max((_when(date) for date, _ in window), default=None)
    recent_from = newest - datetime.timedelta(days=options.trend_days) if newest else None
    revisions: Counter[str] = Counter()
    shared: Counter[tuple[str, str]] = Counter()
    recent_revisions: Counter[str] = Counter()
    recent_shared: Counter[tuple[str, str]] = Counter()
    too_large = 0
    limit = options.max_changeset_size
    for date, files in window:
        if len(files) > limit:
            too_large += 1
            continue
        names = sorted(files)
        revisions.update(names)
        if len(names) > 1:
            pairs = list(combinations(names, 2))
            shared.update(pairs)
        else:
            pairs = []
        if recent_from is not None and _when(date) > recent_from:
            recent_revisions.update(names)
            recent_shared.update(pairs)
    kept = []
    # code-maat's `within-threshold?` in integers: the mean ≥ min_revs ⇔ the sum ≥
    # 2·min_revs; the exact degree ≥ min_degree ⇔ 200·shared ≥ min_degree·sum.
    min_shared, min_sum = options.min_shared_revs, 2 * options.min_revs
    min_degree, max_degree = options.min_degree, options.max_degree
    for pair, together in shared.items():
        if together < min_shared:
            continue
        a, b = pair
        ra, rb = revisions[a], revisions[b]
        total = ra + rb
        if total < min_sum or 200 * together < min_degree * total:
            continue
        if 200 * together // total > max_degree:
            continue
        trend = _trend(
            (recent_shared[pair], recent_revisions[a], recent_revisions[b]),
            (together - recent_shared[pair], ra - recent_revisions[a], rb - recent_revisions[b]),
        )
        kept.append(Coupling(a, b, together, ra, rb, trend))
    kept.sort(key=lambda c: (-c.degree, -c.average_revisions, c.entity, c.coupled))
    return CouplingResult(
        tuple(kept), dict(sorted(revisions.items())), len(window), too_large, renamed, options
    )


def _trend(recent: tuple[int, int, int], earlier: tuple[int, int, int]) -> int | None:
    """The recent degree minus the earlier one (both truncated), when both periods saw
    either file change; a pair that stopped changing together has a recent degree of 0."""
    degrees = []
    for together, ra, rb in (recent, earlier):
        if ra + rb == 0:
            return None
        degrees.append(200 * together // (ra + rb))
    return degrees[0] - degrees[1]


def _named(
    changesets: Iterable[Changeset], follow_renames: bool
) -> tuple[list[tuple[str, frozenset[str]]], int]:
    """Each change's date and the names of its files (`named_changes`)."""
    found, renamed = named_changes(changesets, follow_renames)
    return [(c.date, frozenset(n for _, n in names)) for c, names in found], renamed


def named_changes(
    changesets: Iterable[Changeset], follow_renames: bool
) -> tuple[list[tuple[Changeset, tuple[tuple[str, str], ...]]], int]:
    """Each change with its files' (path, name) pairs, and how many earlier names were
    followed. With `follow_renames`, a file's name is the one it has at the newest change:
    walking from the newest change back, a rename maps its old path onto the new path's
    name from then on, and a path created by a change (added, or a rename's or copy's
    target) is, before it, another file's. Without, a rename counts both of its paths, as
    code-maat does."""
    found: list[tuple[Changeset, tuple[tuple[str, str], ...]]] = []
    later: dict[str, str] = {}  # an older path → the name its file has at the newest change
    followed: set[str] = set()
    for changeset in changesets:
        if not follow_renames:
            names = {f.path for f in changeset.files}
            names.update(f.old_path for f in changeset.files if f.status == "R")
            found.append((changeset, tuple((n, n) for n in sorted(names - {""}))))
            continue
        if not later:  # no rename seen yet: every file has its own name
            now = [(f, f.path) for f in changeset.files]
        else:
            now = [(f, later.get(f.path, f.path)) for f in changeset.files]
        for f, name in now:
            if f.status in CREATED:
                if later:
                    later.pop(f.path, None)
                if f.status == "R" and f.old_path:
                    later[f.old_path] = name
                    followed.add(f.old_path)
        found.append((changeset, tuple((f.path, name) for f, name in now if name)))
    return found, len(followed)


def _when(date: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(date)


def coupled_partners(
    result: CouplingResult, paths: Sequence[str], min_degree: int
) -> list[Coupling]:
    """The pairs of at least `min_degree` that join one of `paths` to a file not among them,
    strongest first: the files that usually change with these and did not this time."""
    changed = set(paths)
    return [
        p
        for p in result.pairs
        if p.degree >= min_degree and ((p.entity in changed) != (p.coupled in changed))
    ]
