"""Design patterns: which catalog patterns a summary gives evidence for, and where.

Every cue of every pattern of the catalog (`schemas/patterns.ttl` plus the user's) is tried
on the summary; a match is evidence, and the mention spans the clause around it, so a
reader sees the sentence that shows the pattern, not a two-character keyword. A cue inside
a suggestion ("建议对 X 增加一条断言", "consider adding…") is advice for later, not evidence.
"""

from __future__ import annotations

import regex

from kgraph.catalog import Knowledge
from kgraph.extract.prose import Prose, compact, prose
from kgraph.ingest.text import quoted
from kgraph.model import Entry, Incomplete, Kind, Mention

SUGGESTION = regex.compile(
    r"建议(?:先|补|对|增加|顺手|后续|同时跟进|再)|可考虑|可以考虑|考虑(?:把|在|将)|后续可|若要|若计划|请补|补测"
    r"|TODO|落地前|\bconsider\b|\bcould\b|\bfollow-?ups?\b|\bnext step",
    regex.IGNORECASE,
)


def extract_patterns(entry: Entry, knowledge: Knowledge) -> list[Mention]:
    """One mention per pattern and evidence clause; `detail` is the text the cue matched.

    Cues are tried on the summary as written and on a copy with each code span shortened
    to "`c`", so that a long identifier between a cue's parts counts as one word. Only the
    cues whose literal text occurs are run (`kgraph.cues`), in catalog order. A user's cue
    that runs past its timeout is stopped: the mentions of the others come in `Incomplete`.
    """
    text = entry.text
    p = prose(text)
    suggested = _suggestions(p)
    short, origin = compact(text)
    evidence: dict[str, list[tuple[int, int, str]]] = {}  # by pattern id
    stopped: list[str] = []
    for index in sorted(knowledge.cue_gate.candidates(text, short)):
        pattern_id, cue = knowledge.cues[index]
        try:
            spans = _spans(cue.pattern, text, cue.timeout)
            if short != text and cue.has_gaps:
                spans += [
                    (origin[a], origin[b - 1] + 1)
                    for a, b in _spans(cue.pattern, short, cue.timeout)
                ]
        except TimeoutError:  # only a user's cue has a timeout
            stopped.append(
                f"cue {quoted(cue.source)} of pattern {pattern_id} ({cue.where}) was stopped "
                f"after {cue.timeout:g} s on this entry, so its evidence here is missing: "
                "it backtracks catastrophically on this text"
            )
            continue
        for a, b in spans:
            if not any(s <= a < e for s, e in suggested):
                evidence.setdefault(pattern_id, []).append((*_clause_around(p, a, b), text[a:b]))
    mentions = [
        Mention(Kind.PATTERN, pattern_id, text[start:end], start, end, detail=cue_text)
        for pattern_id, found in evidence.items()
        for start, end, cue_text in _merged(found)
    ]
    if stopped:
        raise Incomplete(sorted(mentions), stopped)
    return sorted(mentions)


def _spans(pattern: regex.Pattern[str], text: str, timeout: float | None) -> list[tuple[int, int]]:
    """Non-empty matches; `search` first, as most cues do not occur in a given summary.
    Raises TimeoutError when one of them takes longer than `timeout` seconds (passed only
    when there is one: even `timeout=None` adds a third to a search's cost)."""
    if timeout is None:
        if pattern.search(text) is None:
            return []
        matches = pattern.finditer(text)
    else:
        if pattern.search(text, timeout=timeout) is None:
            return []
        matches = pattern.finditer(text, timeout=timeout)
    return [m.span() for m in matches if m.end() > m.start()]


def _merged(evidence: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping evidence of one pattern is one span; the first cue text stays its detail."""
    merged: list[tuple[int, int, str]] = []
    for start, end, cue in sorted(evidence):
        if merged and start < merged[-1][1]:
            first = merged[-1]
            merged[-1] = (first[0], max(first[1], end), first[2])
        else:
            merged.append((start, end, cue))
    return merged


def _suggestions(p: Prose) -> list[tuple[int, int]]:
    """From a suggestion cue to the end of its sentence."""
    spans = []
    for start, end in p.sentences():
        cue = SUGGESTION.search(p.masked, start, end)
        if cue is not None:
            spans.append((cue.start(), end))
    return spans


def _clause_around(p: Prose, start: int, end: int) -> tuple[int, int]:
    """The clause (or clauses) around a cue match, without the sentence's final stop."""
    for s, e in p.sentences():
        if s <= start < e:
            clauses = [c for c in p.clauses(s, e) if c.end > start and c.start < end]
            if clauses:
                start, end = min(clauses[0].start, start), max(clauses[-1].end, end)
            break
    while end > start + 1 and p.text[end - 1] in "。.!?！？;；":
        end -= 1
    return start, end
