"""Commit matching: which commit of the history merged each reviewed PR.

By number first: a PR whose digest gives its number is the commit whose subject ends in
`(#N)` (a squash merge) or reads `Merge pull request #N from …`. Most digests give no
number, so by content next: every commit that changed a file the review names, or the
file that defines a name it uses, is a candidate (not a root commit, which imports a
codebase; not, where most commits name their PR, one that names none), scored by how
much of the review its diff explains:

- each name the review uses that the commit's changed lines contain, or that names the
  definition a hunk is in, weighted by how rare it is among the candidates
  (`transfer_jobs` in three of them tells more than `ParallelConfig` in two hundred); more
  when the commit *defines* it (an added `def` or assignment that no removed line had):
  the PR that introduced `check_shm_free_space` is told that way from the later fixes that
  only call it;
- each file the review names that the commit changed;
- the title's words and names in the commit's subject;
- time: a name the review uses that only a later commit added, a PR the review builds on
  that came after the commit, or a follow-up it names that came before, make the commit
  an unlikely merge of this PR (a review cannot name code that did not exist yet).

The score is the share of the review's evidence the commit explains. A link is made only
when the best candidate explains enough of it, enough of its names and files, and clearly
more than the next, or when the review's date breaks a tie (reviews are written around
merges, before or after; the date never lowers a score); and never when the review names a
distinctive name no candidate's diff and no file at REV has (a PR merged later). Otherwise
the PR keeps its best candidates and no link: a wrong link is worse than none. A commit
whose PR number the review names as another PR ("the follow-up #52076") is never this
PR's. One commit is never the merge of two PRs: the PR with the weaker claim loses it.

Everything here depends on the PR's own evidence and the history alone, so each outcome
is remembered by the history cache under a hash of that evidence (and `MATCH_VERSION`,
which a change to the weights below must bump).
"""

from __future__ import annotations

import builtins
import datetime
import hashlib
import json
import keyword
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from kgraph.history import Commit, History
from kgraph.history.tokens import (
    ADDED,
    CONTEXT,
    DEFINES,
    REMOVED,
    TOUCHED,
    UNDEFINES,
    CommitTokens,
)
from kgraph.model import Field, Kind, Mention
from kgraph.resolve import Resolution, Status, distinctive

MATCH_VERSION = 3  # bump when evidence or scores change: remembered matches are recomputed

# Weights of the evidence, tuned on the dev corpus (../shared/dev, 22 vLLM PRs).
NAME_WEIGHT = 1.0  # a name the review writes (its last segment)
QUALIFIER_WEIGHT = 0.6  # the class or module of a qualified name
EXPRESSION_WEIGHT = 0.4  # a name inside a backticked expression or command
FLAG_WEIGHT = 0.8  # `--data-parallel-rpc-port` is the attribute `data_parallel_rpc_port`
STEM_WEIGHT = 0.3  # `startup_plan.py` is imported as `startup_plan`
DEFINED_BONUS = 1.0  # the commit defines the name (added, never removed): it introduced it
NEW_BONUS = 0.3  # the name is on added lines, not on removed ones
PATH_WEIGHT = 1.5  # a file the review names, by its full path or its basename
CONTEXT_WEIGHT = 0.8  # the name of the definition a hunk is in (git's hunk header)
SUBJECT_WEIGHT = 1.5  # a name of the review in the commit's subject
TITLE_SHARE = 0.5  # an English title's words in the subject, against the rest of the evidence
ANACHRONISM = 0.3  # the score's factor for each name the review uses that a later commit added
SIZE_EXPONENT = 0.5  # how much a commit's files beyond those the review names weigh against it
SIZE_SLACK = 2  # files a PR changes besides those its review names, at no cost
MIN_SHARE = 0.3  # a link explains at least this share of the review's evidence
MIN_RATIO = 1.3  # …and this many times the next candidate's score
RESCORED = 5  # the best candidates scored again on their whole diff
NUMBERED_HISTORY = 0.5  # a history where this share of commits name their PR is "numbered"
DATE_WINDOW = 21  # days between a review and a merge that make a tie the merge's
MIN_PIECES = 4  # …and explains at least this many of its names and files
CANDIDATES_KEPT = 5  # kg:candidateCommit of an unlinked PR
MAX_DEFINING_FILES = 4  # a name defined in more files than this leads to no candidates
MAX_POOL = 3000  # candidates scored per PR, those touching the most named files first

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}|(?<![\w.])[0-9]{4,}(?![\w.])")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
_WORD = re.compile(r"[A-Za-z]{3,}")
_PATH = re.compile(r"(?<![\w./-])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z]{1,5}(?![\w/])")
# Names every program has: they tell no commit from another.
COMMON_NAMES = (
    frozenset(keyword.kwlist)
    | frozenset(dir(builtins))
    | frozenset(
        "self cls args kwargs none true false null nullptr void int char float double bool auto "
        "const static return struct class std torch np numpy".split()
    )
)
# Words just before a PR number that make it a later PR than the reviewed one.
FOLLOW_UP = re.compile(
    r"follow[- ]?ups?\b|later\b|subsequent|afterwards|next PR|后续|随后|之后的|跟进|接下来",
    re.IGNORECASE,
)
FOLLOW_UP_WINDOW = 40  # characters before the number
FOLLOW_UP_FACTOR = 0.25  # the weight of a name in a sentence about a follow-up
SENTENCE_ENDS = ("。", "！", "？", "；", "\n", ". ", "! ", "? ", "; ")
STOPWORDS = frozenset(
    "the and for with from into when that this than then them they their its not are was "
    "but all any can via per use used uses using one two new old fix fixes fixed add adds "
    "added make makes made only also more less after before over under out off".split()
)


@dataclass(frozen=True, slots=True)
class ReviewEntry:
    """One digest's entry about the PR: what matching reads of it."""

    title: str
    text: str
    date: str | None
    mentions: tuple[Mention, ...]


@dataclass(frozen=True, slots=True)
class Review:
    """One PR as matching sees it: its number and the entries that describe it."""

    id: str  # the PR's node id
    number: int | None
    entries: tuple[ReviewEntry, ...]

    @property
    def mentions(self) -> list[Mention]:
        return [m for e in self.entries for m in e.mentions]


@dataclass(frozen=True, slots=True)
class Candidate:
    sha: str
    score: float


@dataclass(frozen=True, slots=True)
class CommitLink:
    """The outcome for one PR: the commit that merged it, or the candidates left."""

    pr: str
    sha: str | None
    basis: str  # "number", "content", or "" when unlinked
    margin: float  # the best score over the next one's (inf: nothing else came close)
    candidates: tuple[Candidate, ...]  # best first; the PR's kg:candidateCommits if unlinked
    reason: str = ""  # why an unlinked PR is unlinked

    @property
    def linked(self) -> bool:
        return self.sha is not None


@dataclass(frozen=True, slots=True)
class Evidence:
    number: int | None
    names: tuple[tuple[str, float], ...]  # identifier, how strongly the review names it
    paths: tuple[tuple[str, ...], ...]  # per file named: the paths it may be at REV
    unplaced: tuple[str, ...]  # files named that REV lacks, as written: the history may know
    homes: tuple[str, ...]  # files that define the names the review uses
    words: tuple[str, ...]  # an English title's words
    earlier: tuple[int, ...]  # PRs the review builds on ("introduced by #41956"): older
    later: tuple[int, ...]  # PRs the review calls follow-ups ("the follow-up #52076"): newer
    dates: tuple[str, ...]
    novel: tuple[str, ...] = ()  # distinctive names the checkout at REV does not define

    @property
    def references(self) -> tuple[int, ...]:
        """Other PRs the review names: never this one."""
        return tuple(sorted({*self.earlier, *self.later}))

    def key(self) -> str:
        text = json.dumps([MATCH_VERSION, *map(list, self._fields())], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def _fields(self) -> tuple[Iterable[object], ...]:
        return (
            [self.number], self.names, self.paths, self.unplaced, self.homes, self.words,
            self.earlier,
            self.later, self.dates, self.novel,
        )  # fmt: skip


def match_commits(
    reviews: Sequence[Review],
    history: History,
    resolutions: Mapping[str, Mapping[Mention, Resolution]],
) -> list[CommitLink]:
    """The commit link of every review (of `history`'s repository), each PR once."""
    found = []
    for review in reviews:
        evidence = evidence_of(review, resolutions.get(review.id, {}), history)
        key = evidence.key()
        remembered = _from_json(review.id, history.remembered(key))
        if remembered is None:
            remembered = rank(review.id, evidence, history)
            history.remember(key, _to_json(remembered))
        found.append(remembered)
    return _one_pr_per_commit(found)


# --- evidence -----------------------------------------------------------------------------------


def evidence_of(
    review: Review, resolved: Mapping[Mention, Resolution], history: History
) -> Evidence:
    names: dict[str, float] = defaultdict(float)

    def name(identifier: str, weight: float) -> None:
        if len(identifier) >= 3 and identifier not in COMMON_NAMES:
            names[identifier] = max(names[identifier], weight)

    paths: set[tuple[str, ...]] = set()
    unplaced: set[str] = set()
    homes: set[str] = set()
    earlier: set[int] = set()
    later: set[int] = set()
    novel: set[str] = set()
    spans = {id(e): _follow_up_sentences(e, history.repo) for e in review.entries}
    for entry, m in ((e, m) for e in review.entries for m in e.mentions):
        # A name in the sentence about a follow-up ("the follow-up #52076 renamed `a` to
        # `b`") is mostly the follow-up's.
        scale = FOLLOW_UP_FACTOR if _inside(m, spans[id(entry)]) else 1.0
        if m.kind is Kind.SYMBOL:
            *qualifiers, last = re.split(r"\.|::", m.key)
            name(last, NAME_WEIGHT * scale)
            for q in qualifiers:
                name(q, QUALIFIER_WEIGHT * scale)
            found = resolved.get(m)
            if found and found.status is Status.MISSING and distinctive(last):
                novel.add(last)
            if (
                found
                and found.status is not Status.MISSING
                and (0 < len(set(found.paths)) <= MAX_DEFINING_FILES)
            ):
                homes.update(found.paths)
        elif m.kind is Kind.NON_ENTITY:
            if m.detail == "cli-flag":
                name(m.key.lstrip("-").split("=")[0].replace("-", "_"), FLAG_WEIGHT)
                continue
            unplaced.update(_PATH.findall(m.key))  # `pytest tests/x/test_y.py -k z`
            for identifier in _IDENTIFIER.findall(_PATH.sub(" ", m.key)):
                name(identifier, EXPRESSION_WEIGHT)
        elif m.kind is Kind.FILE:
            found = resolved.get(m)
            if found and found.paths:
                paths.add(tuple(sorted(found.paths)))
            else:  # not in the checkout: a file the history may still know
                unplaced.add(m.key)
            stem = m.key.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            if "_" in stem:
                name(stem, STEM_WEIGHT)
        elif _is_reference(m, history.repo):
            (later if _follow_up(entry, m) else earlier).add(int(m.key))
    titles = sorted({e.title for e in review.entries})
    words: set[str] = set()
    for title in titles:
        for identifier in _code_words(title):
            name(identifier, NAME_WEIGHT)
            words.add(identifier.casefold())
        if _english(title):
            words.update(w.casefold() for w in _WORD.findall(title))
    words -= STOPWORDS
    earlier.discard(review.number or 0)
    later.discard(review.number or 0)
    return Evidence(
        review.number,
        tuple(sorted(names.items())),
        tuple(sorted(paths)),
        tuple(sorted(unplaced)),
        tuple(sorted(homes)),
        tuple(sorted(words)),
        tuple(sorted(earlier - later)),
        tuple(sorted(later)),
        tuple(sorted({e.date for e in review.entries if e.date})),
        tuple(sorted(novel)),
    )


def _is_reference(m: Mention, repo: str) -> bool:
    return m.kind is Kind.ISSUE and m.detail in ("", repo) and m.key.isdigit()


def _follow_up(entry: ReviewEntry, m: Mention) -> bool:
    text = entry.title if m.field is Field.TITLE else entry.text
    return bool(FOLLOW_UP.search(text[max(0, m.start - FOLLOW_UP_WINDOW) : m.start]))


def _follow_up_sentences(entry: ReviewEntry, repo: str) -> list[tuple[int, int]]:
    """The sentences of the entry's text that name a follow-up PR."""
    found = []
    for m in entry.mentions:
        if m.field is Field.TEXT and _is_reference(m, repo) and _follow_up(entry, m):
            start = max((entry.text.rfind(c, 0, m.start) for c in SENTENCE_ENDS), default=-1)
            ends = [e for c in SENTENCE_ENDS if (e := entry.text.find(c, m.end)) >= 0]
            found.append((start + 1, min(ends, default=len(entry.text))))
    return found


def _inside(m: Mention, spans: list[tuple[int, int]]) -> bool:
    return m.field is Field.TEXT and any(a <= m.start < b for a, b in spans)


def _english(title: str) -> bool:
    letters = [c for c in title if c.isalpha()]
    return bool(letters) and sum(c.isascii() for c in letters) / len(letters) > 0.9


def _historical_paths(key: str, history: History) -> tuple[str, ...]:
    """Paths the history has that a file name as written may be (`offloading/scheduler.py`)."""
    key = key.strip("/")
    base = key.rsplit("/", 1)[-1]
    found = [p for p in history.index.touching_basename(base) if p == key or p.endswith("/" + key)]
    return tuple(found) if len(found) <= MAX_DEFINING_FILES else ()


# --- ranking ------------------------------------------------------------------------------------


def rank(pr: str, evidence: Evidence, history: History) -> CommitLink:
    """Score the PR's candidate commits and decide whether the best is its merge."""
    index = history.index
    placed = {options for key in evidence.unplaced if (options := _historical_paths(key, history))}
    evidence = replace(evidence, paths=tuple(sorted({*evidence.paths, *placed})), unplaced=())
    if evidence.number is not None:
        numbered = [p for p in index.by_number(evidence.number) if index.is_candidate(p)]
        if len(numbered) == 1:
            sha = index.at(numbered[0]).sha
            return CommitLink(pr, sha, "number", math.inf, (Candidate(sha, 1.0),))
        if not numbered:
            return CommitLink(pr, None, "", 0.0, (), f"no commit merged #{evidence.number}")
        pool = numbered
    else:
        pool = _pool(evidence, history)
    if not pool:
        return CommitLink(pr, None, "", 0.0, (), "no commit changed the code it names")
    referenced = sorted(
        {p for n in evidence.references for p in index.by_number(n) if index.is_candidate(p)}
    )
    names = frozenset(i for i, _ in evidence.names) | frozenset(evidence.novel)
    parts = history.parts([*pool, *referenced], _files(evidence, history))
    hits = {p: _hits(names, found) for p, found in parts.items()}
    unknown = [
        name
        for name in evidence.novel
        if not any(h.get(name, 0) & (ADDED | REMOVED) for h in hits.values())
    ]
    scale = _scale(evidence, history, pool, referenced, hits)
    if scale is None:
        return CommitLink(pr, None, "", 0.0, (), "its review names nothing a commit could explain")
    paths = frozenset().union(*(touching for touching, _ in scale.paths))

    def worth(position: int) -> bool:
        """A commit that changed none of the names nor the files, and whose subject has none
        of the title's words, explains nothing: not scored."""
        if hits.get(position) or position in paths:
            return True
        subject = index.at(position).subject.casefold()
        return any(w in subject for w in evidence.words)

    scored = {p: _score(scale, evidence, index.at(p), hits.get(p, {})) for p in pool if worth(p)}
    scored.update((p, 0.0) for p in pool if p not in scored)
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    # The best few again, on their whole diffs: a definition the commit moved from a file
    # no review names is not one it introduced, and their tests name things too.
    top = [p for p, _ in ranked[:RESCORED]]
    for position, found in history.parts(top).items():
        scored[position] = _score(scale, evidence, index.at(position), _hits(names, found))
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    ranked, dated = _tie_broken_by_date(ranked, evidence, lambda p: index.at(p).day)
    candidates = tuple(Candidate(index.at(p).sha, round(s, 4)) for p, s in ranked[:CANDIDATES_KEPT])
    if not ranked or ranked[0][1] <= 0:
        return CommitLink(pr, None, "", 0.0, candidates, "no commit explains its review")
    best = ranked[0][1]
    runner = max((s for _, s in ranked[1:]), default=0.0)
    margin = best / runner if runner > 0 else math.inf
    basis = "number" if evidence.number is not None else "content"
    if unknown:
        reason = f"it names code no commit has (`{unknown[0]}`): merged after the history ends?"
        return CommitLink(pr, None, "", margin, candidates, reason)
    if best < MIN_SHARE:
        return CommitLink(pr, None, "", margin, candidates, "no commit explains enough of it")
    if _pieces(evidence, index.at(ranked[0][0]), hits.get(ranked[0][0], {})) < MIN_PIECES:
        return CommitLink(pr, None, "", margin, candidates, "too little evidence to tell")
    if margin < MIN_RATIO and not dated:
        return CommitLink(pr, None, "", margin, candidates, "no commit stands out")
    return CommitLink(pr, index.at(ranked[0][0]).sha, basis, margin, candidates)


def _hits(names: frozenset[str], parts: Sequence[CommitTokens]) -> dict[str, int]:
    """Where each of `names` is in a commit's change (its files' tokens), as bits."""
    found: dict[str, int] = {}
    for t in parts:
        masks = t.masks
        for name in names.intersection(masks):  # a set op over the few names
            found[name] = found.get(name, 0) | masks[name]
    return found


def _pieces(evidence: Evidence, commit: Commit, hits: Mapping[str, int]) -> int:
    """How many of the review's names and files the commit's change explains."""
    subject = _subject_names(commit.subject)
    names = sum(hits.get(i, 0) & TOUCHED != 0 or i in subject for i, _ in evidence.names)
    changed = {c.path for c in commit.changes} | {c.old_path for c in commit.changes}
    return names + sum(bool(changed.intersection(options)) for options in evidence.paths)


def _pool(evidence: Evidence, history: History) -> list[int]:
    """Candidate commits: those that changed a file the review names or one that defines a
    name it uses, those changing the most of them first; never a PR the review names as
    another."""
    index = history.index
    weight: dict[int, float] = defaultdict(float)
    for options in evidence.paths:
        for position in {p for path in options for p in index.touching(path)}:
            weight[position] += 2.0
    for home in evidence.homes:
        for position in index.touching(home):
            weight[position] += 1.0
    excluded = set(evidence.references)
    # Where most commits name the PR they merged (squash or merge commits), one that names
    # none was pushed, not merged from a PR; a root commit imports a codebase.
    numbered = index.numbered_share >= NUMBERED_HISTORY
    pool = [
        p
        for p in weight
        if index.is_candidate(p)
        and (commit := index.at(p)).number not in excluded
        and commit.parents
        and (commit.number is not None or not numbered)
    ]
    pool.sort(key=lambda p: (-weight[p], p))
    return sorted(pool[:MAX_POOL])


def _files(evidence: Evidence, history: History) -> list[str]:
    """The files whose changed lines are read: those the review names and those defining
    the names it uses, under every name a rename gave them."""
    index = history.index
    named = {path for options in evidence.paths for path in options} | set(evidence.homes)
    return sorted({old for path in named for old in index.names_of(path)})


@dataclass(slots=True)
class _Scale:
    """What one PR's candidates are scored against: how rare each name and file is among
    them, where each name first appeared, and the most a commit could explain."""

    weights: dict[str, float]  # name → how strongly the review names it × how rare it is
    dated: list[tuple[int, str]]  # (where it first appeared on an added line, name), newest
    # first, for the names no follow-up of the review added
    earlier: list[int]  # positions of the PRs the review builds on
    later: list[int]  # …and of those it calls follow-ups
    paths: list[tuple[set[int], float]]  # per file named: the positions changing it, rarity
    title: float  # the weight of the title's words
    possible: float


def _scale(
    evidence: Evidence,
    history: History,
    pool: Sequence[int],
    referenced: Sequence[int],
    hits: Mapping[int, Mapping[str, int]],
) -> _Scale | None:
    index = history.index
    total = len(pool)
    frequency: dict[str, int] = defaultdict(int)
    introduced: dict[str, int] = {}
    in_pool = set(pool)
    for position in sorted({*pool, *referenced}):
        for identifier, mask in hits.get(position, {}).items():
            if position in in_pool and mask & TOUCHED:
                frequency[identifier] += 1
            if mask & ADDED:
                introduced[identifier] = position  # positions ascend: the oldest stays
    later = [p for p in referenced if index.at(p).number in evidence.later]
    earlier = [p for p in referenced if index.at(p).number in evidence.earlier]
    weights = {i: w * math.log(1 + (total + 1) / (1 + frequency[i])) for i, w in evidence.names}
    follow_ups = set(later)
    dated = sorted((at, i) for i, at in introduced.items() if i in weights and at not in follow_ups)
    paths = []
    for options in evidence.paths:
        touching = {p for path in options for p in index.touching(path)} & in_pool
        paths.append((touching, math.log(1 + (total + 1) / (1 + len(touching)))))
    base = sum(weights.values()) * (1 + DEFINED_BONUS + NEW_BONUS)
    base += PATH_WEIGHT * sum(rare for _, rare in paths)
    title = TITLE_SHARE * base if evidence.words else 0.0
    if base + title <= 0:
        return None
    return _Scale(weights, dated, earlier, later, paths, title, base + title)


def _score(scale: _Scale, evidence: Evidence, commit: Commit, hits: Mapping[str, int]) -> float:
    """The share of the review's evidence that one commit's change explains."""
    position = commit.position
    subject = commit.subject
    weights = scale.weights
    score = 0.0
    for identifier, mask in hits.items():
        rare = weights.get(identifier)
        if rare is None:
            continue  # a name only looked for (`novel`), not scored
        if mask & (ADDED | REMOVED):
            bonus = 1.0
            if mask & DEFINES and not mask & UNDEFINES:
                bonus += DEFINED_BONUS
            if not mask & REMOVED:
                bonus += NEW_BONUS
            score += rare * bonus
        elif mask & CONTEXT:
            score += CONTEXT_WEIGHT * rare
    # A substring test first: the subject's identifiers are read only when one may be there.
    if any(i in subject for i in weights):
        names = _subject_names(subject)
        score += SUBJECT_WEIGHT * sum(rare for i, rare in weights.items() if i in names)
    # Names the review uses that only a later commit added (positions are newest first), and
    # the PRs it builds on (the PR came after them) and calls follow-ups (before them).
    late = 0
    for at, identifier in scale.dated:
        if at >= position:
            break  # the rest came before this commit
        if not hits.get(identifier, 0) & TOUCHED:
            late += 1
    late += sum(position > p for p in scale.earlier) + sum(position < p for p in scale.later)
    if late:
        score *= ANACHRONISM**late
    named = 0
    for touching, rare in scale.paths:
        if position in touching:
            score += PATH_WEIGHT * rare
            named += 1
    # A review explains the change it describes: a commit of forty files that also holds
    # the names of a two-line fix is likelier the PR that introduced them.
    score *= min(1.0, (1 + named + SIZE_SLACK) / (1 + len(commit.changes))) ** SIZE_EXPONENT
    if evidence.words:
        folded = subject.casefold()
        if any(w in folded for w in evidence.words):
            words = _subject_words(subject)
            shared = sum(w in words for w in evidence.words)
            score += scale.title * shared / len(evidence.words)
    return score / scale.possible


def _code_words(text: str) -> list[str]:
    """The names of `text` that read as code: `snake_case`, `CamelCase`, `lowerCamel`."""
    return [w for w in _NAME.findall(text) if "_" in w.strip("_") or _CAMEL.search(w) is not None]


@lru_cache(maxsize=1 << 14)
def _subject_names(subject: str) -> frozenset[str]:
    """A commit subject's identifiers."""
    return frozenset(_IDENTIFIER.findall(subject))


@lru_cache(maxsize=1 << 14)
def _subject_words(subject: str) -> frozenset[str]:
    """A commit subject's words and code words, case-folded."""
    words = {w.casefold() for w in _WORD.findall(subject)}
    words.update(w.casefold() for w in _code_words(subject))
    return frozenset(words)


def _tie_broken_by_date(
    ranked: list[tuple[int, float]], evidence: Evidence, day_of: Callable[[int], str]
) -> tuple[list[tuple[int, float]], bool]:
    """Among candidates that score alike (within `MIN_RATIO` of the best), the one merged
    within `DATE_WINDOW` days of the review, when exactly one is, goes first, and the tie
    is broken (True): reviews are written around merges, before or after. The date never
    lowers a score, and never puts a candidate first that did not tie for first."""
    if len(ranked) < 2 or not evidence.dates or ranked[0][1] <= 0:
        return ranked, False
    best = ranked[0][1]
    tied = [(p, s) for p, s in ranked if s * MIN_RATIO >= best]
    if len(tied) < 2:
        return ranked, False
    reviewed = [_day_number(d) for d in evidence.dates]
    near = [
        (p, s)
        for p, s in tied
        if (day := _day_number(day_of(p))) is not None
        and any(r is not None and abs(day - r) <= DATE_WINDOW for r in reviewed)
    ]
    if len(near) != 1:
        return ranked, False
    chosen = near[0]
    return [chosen, *((p, s) for p, s in ranked if p != chosen[0])], True


def _day_number(day: str) -> int | None:
    try:
        return datetime.date.fromisoformat(day[:10]).toordinal()
    except ValueError:
        return None


def _one_pr_per_commit(links: list[CommitLink]) -> list[CommitLink]:
    """A commit linked to several PRs stays with the strongest claim (a number, then the
    larger margin); the others lose the link and keep it as a candidate."""
    claims: dict[str, list[int]] = defaultdict(list)
    for i, link in enumerate(links):
        if link.sha is not None:
            claims[link.sha].append(i)
    out = list(links)
    for _sha, holders in claims.items():
        if len(holders) < 2:
            continue
        ordered = sorted(
            holders, key=lambda i: (links[i].basis != "number", -links[i].margin, links[i].pr)
        )
        for loser in ordered[1:]:
            link = links[loser]
            out[loser] = CommitLink(
                link.pr, None, "", link.margin, link.candidates, "its commit merged another PR"
            )
    return out


def _to_json(link: CommitLink) -> list[object]:
    return [
        link.sha,
        link.basis,
        None if math.isinf(link.margin) else round(link.margin, 4),
        [[c.sha, c.score] for c in link.candidates],
        link.reason,
    ]


def _from_json(pr: str, value: object) -> CommitLink | None:
    try:
        assert isinstance(value, list)
        sha, basis, margin, candidates, reason = value
        return CommitLink(
            pr,
            sha,
            basis,
            math.inf if margin is None else float(margin),
            tuple(Candidate(str(s), float(score)) for s, score in candidates),
            reason,
        )
    except (AssertionError, TypeError, ValueError):
        return None
