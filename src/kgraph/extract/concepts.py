"""Design concepts in a text: where a review says *reject*, *invalid input*, *early*…

A concept is one idea written in many ways, in Chinese, in English or as code (`ValueError`
in backticks says *reject* as well as 拒绝 does). Patterns are recognised as combinations of
concepts (`kgraph.extract.patterns`), so a new wording of a known idea is found without a
cue written for that pattern. The concepts and their cues are catalog data
(`schemas/concepts.ttl`), extended with `--catalog` like the patterns.

A concept the clause negates before it ("不再静默返回", "no longer silently drops", "没有
补测试") is not stated, and is dropped here, so that "不再 X，而是 Y" evidences Y only.
"""

from __future__ import annotations

from typing import NamedTuple

import regex

from kgraph.catalog import Knowledge
from kgraph.ingest.text import quoted

# A negation that takes back what follows it in its clause, looked for just before a
# concept's cue (Chinese within a few characters, English within a few words): the concept
# is then what the change does not do.
NEGATION_ZH = regex.compile(
    r"不再|没有|并没有|并非|并不|不是|而非|而不是|无需|不必|不需要|未曾|别再|从不|避免"
)
NEGATION_EN = regex.compile(
    r"\b(?:no longer|not|never|no|without|nothing|nor|neither|instead of|rather than"
    r"|doesn't|don't|isn't|aren't|won't|can't)\b",
    regex.IGNORECASE,
)
# How far before a cue a negation still governs it, in characters of its clause.
NEGATION_REACH_ZH = 8
NEGATION_REACH_EN = 24
CLAUSE_BREAK = regex.compile(r"[，,；;：:。！？!?\n]|——|(?<=\w)\. ")


class ConceptHit(NamedTuple):
    """Where a cue of a concept matched."""

    start: int
    end: int
    concept: str


def find_concepts(
    text: str, knowledge: Knowledge, stopped: list[str] | None = None
) -> list[ConceptHit]:
    """Every match of every concept cue in `text`, negated ones left out, in text order.

    Only the cues whose literal text occurs are run (`kgraph.cues`), as for pattern cues. A
    user's cue that runs past its timeout is stopped, and said so in `stopped`.
    """
    hits: list[ConceptHit] = []
    for index in sorted(knowledge.concept_gate.candidates(text)):
        concept, cue = knowledge.concept_cues[index]
        try:
            if cue.timeout is None:
                spans = [m.span() for m in cue.pattern.finditer(text)]
            else:
                spans = [m.span() for m in cue.pattern.finditer(text, timeout=cue.timeout)]
        except TimeoutError:
            if stopped is not None:
                stopped.append(
                    f"cue {quoted(cue.source)} of concept {concept} ({cue.where}) was stopped "
                    f"after {cue.timeout:g} s on this entry, so its evidence here is missing"
                )
            continue
        for start, end in spans:
            if end > start and not negated(text, start):
                hits.append(ConceptHit(start, end, concept))
    return sorted(set(hits))


def negated(text: str, start: int) -> bool:
    """Whether a negation in the same clause, shortly before `start`, governs the cue."""
    window = text[max(0, start - NEGATION_REACH_EN) : start]
    breaks = list(CLAUSE_BREAK.finditer(window))
    if breaks:
        window = window[breaks[-1].end() :]
    if NEGATION_EN.search(window) is not None:
        return True
    return NEGATION_ZH.search(window[-NEGATION_REACH_ZH:]) is not None
