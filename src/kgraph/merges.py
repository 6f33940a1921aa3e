"""Commit matching: which commit of the history merged each reviewed PR.

By number first: a PR whose digest gives its number is the commit whose subject ends in
`(#N)` (a squash merge) or reads `Merge pull request #N from …`. Most digests give no
number, so by content next: every commit that changed a file the review names, or the
file that defines a name it uses, is a candidate, scored by how much of the review its
diff explains:

- each name the review uses that the commit's changed lines contain, weighted by how rare
  it is among the candidates (`transfer_jobs` in three of them tells more than
  `ParallelConfig` in two hundred); more when the commit *defines* it (an added `def` or
  assignment that no removed line had): the PR that introduced `check_shm_free_space` is
  told that way from the later fixes that only call it;
- each file the review names that the commit changed;
- for an English title, its words in the commit's subject; a name of the review in the
  subject.

The score is the share of the review's evidence the commit explains. A link is made only
when the best candidate explains enough and clearly more than the next; otherwise the PR
keeps its best candidates and no link: a wrong link is worse than none. The review's date
breaks a tie only (reviews are written before and after merges), and a commit whose PR
number the review names as another PR ("the follow-up #52076") is never this PR's. One
commit is never the merge of two PRs: the PR with the weaker claim loses it.

Everything here depends on the PR's own evidence and the history alone, so each outcome
is remembered by the history cache under a hash of that evidence.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import keyword
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from kgraph.history import Commit, History
from kgraph.history.tokens import CommitTokens
from kgraph.model import Field, Kind, Mention
from kgraph.resolve import Resolution, Status, distinctive

MATCH_VERSION = 1  # bump when evidence or scores change: remembered matches are recomputed

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
MIN_SHARE = 0.3  # a link explains at least this share of the review's evidence
MIN_RATIO = 1.3  # …and this many times the next candidate's score
RESCORED = 5  # the best candidates scored again on their whole diff
MIN_PIECES = 4  # …and explains at least this many of its names and files
CANDIDATES_KEPT = 5  # kg:candidateCommit of an unlinked PR
MAX_DEFINING_FILES = 4  # a name defined in more files than this leads to no candidates
MAX_POOL = 3000  # candidates scored per PR, those touching the most named files first

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}|(?<![\w.])[0-9]{4,}(?![\w.])")
_CODE_WORD = re.compile(r"[A-Za-z_]*[a-z0-9][A-Z_][A-Za-z0-9_]*|[A-Za-z]+_[A-Za-z0-9_]+")
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
        for identifier in _CODE_WORD.findall(title):
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
    tokens = history.tokens([*pool, *referenced], _files(evidence, history))
    unknown = [
        name
        for name in evidence.novel
        if not any(name in t.added or name in t.removed for t in tokens.values())
    ]
    scored = _scores(evidence, history, pool, referenced, tokens)
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    # The best few again, on their whole diffs: a definition the commit moved from a file
    # no review names is not one it introduced, and their tests name things too.
    top = [p for p, _ in ranked[:RESCORED]]
    whole = history.tokens(top)
    scored.update(_scores(evidence, history, pool, referenced, {**tokens, **whole}, top))
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    candidates = tuple(Candidate(index.at(p).sha, round(s, 4)) for p, s in ranked[:CANDIDATES_KEPT])
    if not ranked or ranked[0][1] <= 0:
        return CommitLink(pr, None, "", 0.0, candidates, "no commit explains its review")
    best = ranked[0][1]
    runner = max(ranked[1][1], 0.0) if len(ranked) > 1 else 0.0
    margin = best / runner if runner > 0 else math.inf
    basis = "number" if evidence.number is not None else "content"
    if unknown:
        reason = f"it names code no commit has (`{unknown[0]}`): merged after the history ends?"
        return CommitLink(pr, None, "", margin, candidates, reason)
    if best < MIN_SHARE:
        return CommitLink(pr, None, "", margin, candidates, "no commit explains enough of it")
    if _pieces(evidence, index.at(ranked[0][0]), tokens[ranked[0][0]]) < MIN_PIECES:
        return CommitLink(pr, None, "", margin, candidates, "too little evidence to tell")
    if margin < MIN_RATIO:
        return CommitLink(pr, None, "", margin, candidates, "no commit stands out")
    return CommitLink(pr, index.at(ranked[0][0]).sha, basis, margin, candidates)


def _pieces(evidence: Evidence, commit: Commit, tokens: CommitTokens) -> int:
    """How many of the review's names and files the commit's change explains."""
    subject = set(_IDENTIFIER.findall(commit.subject))
    names = sum(
        i in tokens.added or i in tokens.removed or i in tokens.context or i in subject
        for i, _ in evidence.names
    )
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
    pool = [p for p in weight if index.is_candidate(p) and index.at(p).number not in excluded]
    pool.sort(key=lambda p: (-weight[p], p))
    return sorted(pool[:MAX_POOL])


def _files(evidence: Evidence, history: History) -> list[str]:
    """The files whose changed lines are read: those the review names and those defining
    the names it uses, under every name a rename gave them."""
    index = history.index
    named = {path for options in evidence.paths for path in options} | set(evidence.homes)
    return sorted({old for path in named for old in index.names_of(path)})


def _scores(
    evidence: Evidence,
    history: History,
    pool: Sequence[int],
    referenced: Sequence[int],
    tokens: Mapping[int, CommitTokens],
    only: Sequence[int] | None = None,
) -> dict[int, float]:
    """Each candidate's share of the review's evidence that its change explains (of the
    candidates `only` names, when given; rarity is always counted over the whole pool)."""
    index = history.index
    total = len(pool)
    names = [(i, w) for i, w in evidence.names]
    frequency: dict[str, int] = defaultdict(int)
    # Where each name first appears on an added line (the largest position is the oldest),
    # and whether a PR the review names as another one put it there.
    introduced: dict[str, int] = {}
    for position in sorted({*pool, *referenced}):
        found = tokens.get(position)
        if found is None:
            continue
        for identifier, _ in names:
            if position in pool and (
                identifier in found.added
                or identifier in found.removed
                or identifier in found.context
            ):
                frequency[identifier] += 1
            if identifier in found.added:
                introduced[identifier] = position
    later = {p for p in referenced if index.at(p).number in evidence.later}
    earlier = {p for p in referenced if index.at(p).number in evidence.earlier}
    by_follow_up = {i for i, at in introduced.items() if at in later}
    rarity = {i: math.log(1 + (total + 1) / (1 + frequency[i])) for i, _ in names}
    path_rarity = []
    for options in evidence.paths:
        touching = {p for path in options for p in index.touching(path)} & set(pool)
        path_rarity.append(math.log(1 + (total + 1) / (1 + len(touching))))
    base = sum(w * rarity[i] * (1 + DEFINED_BONUS + NEW_BONUS) for i, w in names)
    base += PATH_WEIGHT * sum(path_rarity)
    title = TITLE_SHARE * base if evidence.words else 0.0
    possible = base + title
    if possible <= 0:
        return {}
    scores: dict[int, float] = {}
    for position in pool if only is None else only:
        commit = index.at(position)
        found = tokens.get(position)
        subject = set(_IDENTIFIER.findall(commit.subject))
        score = 0.0
        if found is not None:
            defined = found.defined
            late = 0
            for identifier, weight in names:
                if identifier in subject:
                    score += SUBJECT_WEIGHT * weight * rarity[identifier]
                if identifier in found.added or identifier in found.removed:
                    bonus = 1.0
                    if identifier in defined:
                        bonus += DEFINED_BONUS
                    if identifier in found.added and identifier not in found.removed:
                        bonus += NEW_BONUS
                    score += weight * rarity[identifier] * bonus
                elif identifier in found.context:
                    score += CONTEXT_WEIGHT * weight * rarity[identifier]
                elif introduced.get(identifier, total + len(index)) < position and (
                    identifier not in by_follow_up
                ):
                    late += 1  # the review names what only a later commit added
            # The PR came after those it builds on, and before its follow-ups.
            late += sum(position > p for p in earlier) + sum(position < p for p in later)
            score *= ANACHRONISM**late
        changed = {c.path for c in commit.changes} | {c.old_path for c in commit.changes}
        for options, rare in zip(evidence.paths, path_rarity, strict=True):
            if changed.intersection(options):
                score += PATH_WEIGHT * rare
        if evidence.words:
            subject_words = {w.casefold() for w in _WORD.findall(commit.subject)}
            subject_words.update(w.casefold() for w in _CODE_WORD.findall(commit.subject))
            shared = sum(w in subject_words for w in evidence.words)
            score += title * shared / len(evidence.words)
        scores[position] = score / possible
    return scores


def _tie_broken_by_date(
    ranked: list[tuple[int, float]], evidence: Evidence, history: History
) -> list[tuple[int, float]]:
    """Among candidates that score alike, the one merged nearest the review's date first;
    the date never lowers a score, so it cannot make a weak candidate a link."""
    if not evidence.dates:
        return ranked
    best = ranked[0][1]
    close = [(p, s) for p, s in ranked if s >= best / MIN_RATIO]
    if len(close) < 2:
        return ranked
    return ranked  # dates are not used yet: see the docs


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
