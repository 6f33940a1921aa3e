"""Extractors: one small, pure function per kind of thing a review names.

Each extractor takes an entry and the loaded knowledge (pattern catalog, topic table) and
returns mentions; none of them sees another's output or the graph. `EXTRACTORS` is the one
registry; `extract` runs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kgraph.catalog import Knowledge, builtin_knowledge
from kgraph.extract.advice import extract_advice
from kgraph.extract.audience import extract_audience
from kgraph.extract.bare import extract_bare_names
from kgraph.extract.code import extract_code_spans
from kgraph.extract.decisions import extract_decisions, settle_described
from kgraph.extract.followups import extract_follow_ups
from kgraph.extract.issues import extract_issues
from kgraph.extract.patterns import extract_patterns
from kgraph.extract.people import extract_people
from kgraph.extract.topics import extract_topics
from kgraph.model import Entry, Incomplete, Kind, Mention, Problem


@dataclass(frozen=True, slots=True)
class Extractor:
    name: str
    kinds: tuple[Kind, ...]
    run: Callable[[Entry, Knowledge], Iterable[Mention]]


def _text_only(
    function: Callable[[Entry], Iterable[Mention]],
) -> Callable[[Entry, Knowledge], Iterable[Mention]]:
    """An extractor that reads the entry alone."""
    return lambda entry, _knowledge: function(entry)


EXTRACTORS: tuple[Extractor, ...] = (
    Extractor(
        "code-spans",
        (Kind.FILE, Kind.SYMBOL, Kind.EXTERNAL_SYMBOL, Kind.NON_ENTITY),
        _text_only(extract_code_spans),
    ),
    Extractor(
        "bare-names", (Kind.FILE, Kind.SYMBOL, Kind.EXTERNAL_SYMBOL), _text_only(extract_bare_names)
    ),
    Extractor("issues", (Kind.ISSUE,), _text_only(extract_issues)),
    Extractor("advice", (Kind.ADVICE,), _text_only(extract_advice)),
    Extractor("decisions", (Kind.DECISION,), _text_only(extract_decisions)),
    Extractor("patterns", (Kind.PATTERN,), extract_patterns),
    Extractor("topics", (Kind.TOPIC,), extract_topics),
    Extractor("people", (Kind.PERSON,), _text_only(extract_people)),
    Extractor("audience", (Kind.AUDIENCE,), _text_only(extract_audience)),
    Extractor("follow-ups", (Kind.FOLLOW_UP,), _text_only(extract_follow_ups)),
)


def extract(
    entry: Entry,
    extractors: Iterable[Extractor] = EXTRACTORS,
    knowledge: Knowledge | None = None,
    problems: list[Problem] | None = None,
) -> tuple[Mention, ...]:
    """All mentions of one entry read as a digest of its own, in a deterministic order."""
    return extract_digest([entry], extractors, knowledge, problems)[0]


# The mentions of each (title, summary, repository) extracted so far, for `extract_digest`.
Remembered = dict[tuple[str, str, str | None], tuple[Mention, ...]]


def extract_digest(
    entries: Sequence[Entry],
    extractors: Iterable[Extractor] = EXTRACTORS,
    knowledge: Knowledge | None = None,
    problems: list[Problem] | None = None,
    remembered: Remembered | None = None,
) -> list[tuple[Mention, ...]]:
    """The mentions of each entry of one digest. Entries are extracted one by one; then the
    digest's style settles what only the whole digest shows (`settle_described`). An
    extractor that could not finish an entry (`Incomplete`) gives what it found, and a
    warning at the entry in `problems`.

    The extractors read an entry's title, summary and repository alone, and a PR reviewed
    on several days is often given the same summary (one entry in thirteen of the
    generated corpus): `remembered` keeps what each gave, for the digests read after."""
    knowledge = knowledge or builtin_knowledge()
    extractors = tuple(extractors)
    found = [_mentions(entry, extractors, knowledge, problems, remembered) for entry in entries]
    return settle_described([e.text for e in entries], found)


def _mentions(
    entry: Entry,
    extractors: Sequence[Extractor],
    knowledge: Knowledge,
    problems: list[Problem] | None,
    remembered: Remembered | None = None,
) -> tuple[Mention, ...]:
    said = (entry.title, entry.text, entry.repo)
    if remembered is not None and (known := remembered.get(said)) is not None:
        return known
    found: list[Mention] = []
    complete = True
    for extractor in extractors:
        try:
            found.extend(extractor.run(entry, knowledge))
        except Incomplete as gap:
            complete = False  # not remembered: its warning is the entry's own
            found.extend(gap.mentions)
            if problems is not None:
                problems.extend(Problem(entry.source, entry.line, r) for r in gap.reasons)
    mentions = tuple(sorted(found))
    if remembered is not None and complete:
        remembered[said] = mentions
    return mentions
