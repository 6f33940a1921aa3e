"""Design concepts in a text: where a review says *reject*, *invalid input*, *early*…

A concept is one idea written in many ways, in Chinese, in English or as code (`ValueError`
in backticks says *reject* as well as 拒绝 does). Patterns are recognised as combinations of
concepts (`kgraph.extract.patterns`), so a new wording of a known idea is found without a
cue written for that pattern. The concepts and their cues are catalog data
(`schemas/concepts.ttl`), extended with `--catalog` like the patterns.

A concept the clause negates before it ("不再静默返回", "no longer silently drops", "没有
补测试"), or names as the old side of a replacement ("原来的 X 改成了 Y"), is not stated, and
is dropped here, so that "不再 X，而是 Y" evidences Y only.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Sequence
from typing import NamedTuple

import ahocorasick
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
# A contrast ("并不是 X", "不再 X", "rather than X") denies its whole clause, not the next few
# words: "并不是在下次查找时才识别出过期嵌入再丢弃" does not lazily invalidate. It reaches
# to the start of its clause, or of a quotation it sits in (`"A 而非 B" + "C"` contrasts A
# with B only), up to this many characters before the cue.
# A bare 没有 stays a near negation: it often only qualifies a noun ("没有覆盖该方法的第三方
# 连接器行为不变"), where 并没有 denies what its clause says.
CONTRAST_ZH = regex.compile(r"不再|并不是|不是|而不是|并非|而非|并没有|并未|未能|没能")
CONTRAST_EN = regex.compile(
    r"\b(?:no longer|instead of|rather than|not because|is not|are not|isn't|aren't)\b",
    regex.IGNORECASE,
)
CONTRAST_REACH = 40
QUOTE_MARK = regex.compile(r"[\"「」“”『』]")
# The old side of a replacement ("原来的 `assert …` 改成了抛出的 `ValueError`", "replaces
# the warning with an assert") is what the change removes: its concepts are not stated.
REPLACED_ZH = regex.compile(
    r"(?:原来|原先|以前|过去|之前|旧)的?[^，,；;。]{0,40}?(?=(?:也|都)?(?:改成|改为|换成|替换成|替换为|变成))"
    # "从 assert 改为 ValueError", "把这个 assert 换成抛 …": what it changes from
    r"|(?<=从)[^，,；;。]{1,30}?(?=(?:改成|改为|换成|替换成|替换为|变成))"
    r"|(?<=把(?:这个|这些|这里的|原来的|原有的))[^，,；;。]{1,20}?(?=(?:改成|改为|换成|替换成|替换为))"
)
REPLACED_EN = regex.compile(
    r"(?<=\breplac(?:e|es|ed|ing) )[^,;.]{1,40}?(?= with\b)", regex.IGNORECASE
)
# What each replacement needs (its verb), looked for first: most texts replace nothing.
REPLACING = regex.compile(r"改成|改为|换成|替换成|替换为|变成|replac", regex.IGNORECASE)
CLAUSE_BREAK = regex.compile(r"[，,；;：:。！？!?\n]|——|(?<=\w)\. ")


# Every negation and contrast, without its word boundaries: a superset of what `negated`
# looks for, found in one search of the reach before a cue, so that a cue with none there (most
# cues) is not negated without cutting its clause out (a third of the extractor's time).
NEGATION_ANYWHERE = regex.compile(
    "|".join(
        r.pattern.replace(r"\b", "") for r in (NEGATION_ZH, NEGATION_EN, CONTRAST_ZH, CONTRAST_EN)
    ),
    regex.IGNORECASE,
)
# A cue that opens with a negation or contrast ("instead of crashing", "without mutating",
# 不会崩溃, 而不是报错) says its own polarity: a negation before it ("keeps running without
# CUDA graphs instead of crashing") negates something else.
OPENS_NEGATED = regex.compile(
    "|".join(f"(?:{r.pattern})" for r in (NEGATION_ZH, NEGATION_EN, CONTRAST_ZH, CONTRAST_EN)),
    regex.IGNORECASE,
)
# The same words as literals, in one automaton that finds all of them in a text in one pass
# in C: a single search of the whole text for the alternation costs as much as all of an
# entry's searches of a cue's reach.
NEGATION_WORDS = ahocorasick.Automaton(ahocorasick.STORE_LENGTH)
for _word in regex.split(r"\|", regex.sub(r"\\b|\(\?:|\)", "", NEGATION_ANYWHERE.pattern)):
    NEGATION_WORDS.add_word(_word.casefold())
NEGATION_WORDS.make_automaton()


class ConceptHit(NamedTuple):
    """Where a cue of a concept matched."""

    start: int
    end: int
    concept: str


def find_concepts(
    text: str,
    knowledge: Knowledge,
    stopped: list[str] | None = None,
    only: Collection[str] | None = None,
) -> list[ConceptHit]:
    """Every match of every concept cue in `text` (of the concepts in `only`, when given),
    negated and replaced ones left out, in text order.

    Only the cues whose literal text occurs are run (`kgraph.cues`), as for pattern cues. A
    user's cue that runs past its timeout is stopped, and said so in `stopped`.
    """
    hits: list[ConceptHit] = []
    starts = negation_starts(text)
    replaced = (
        [m.span() for r in (REPLACED_ZH, REPLACED_EN) for m in r.finditer(text)]
        if REPLACING.search(text) is not None
        else []
    )
    for index in sorted(knowledge.concept_gate.candidates(text)):
        concept, cue = knowledge.concept_cues[index]
        if only is not None and concept not in only:
            continue
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
            if (
                end > start
                and not negated(text, start, starts)
                and not any(a <= start < b for a, b in replaced)
            ):
                hits.append(ConceptHit(start, end, concept))
    return sorted(set(hits))


def negation_starts(text: str) -> list[int] | None:
    """Every position where a negation or contrast word starts in `text` (overlapping ones
    too), in order, so that `negated` looks a cue's reach up instead of searching it; None
    when case folding changes the text's length (the positions would not be the text's)."""
    folded = text.casefold()
    if len(folded) != len(text):
        return None
    return sorted({end - length + 1 for end, length in NEGATION_WORDS.iter(folded)})


def negated(text: str, start: int, starts: Sequence[int] | None = None) -> bool:
    """Whether a negation in the same clause, shortly before `start`, or a contrast anywhere
    before it in its clause, governs the cue (one that opens with a negation of its own says
    its own polarity). `starts` is `negation_starts(text)`, when known: a negation within
    reach starts at one of them."""
    reach = max(0, start - CONTRAST_REACH)
    if starts is not None:
        index = bisect_left(starts, reach)
        if index == len(starts) or starts[index] >= start:
            return False  # none starts within reach
    if NEGATION_ANYWHERE.search(text, reach, start) is None:
        return False  # none within reach
    if OPENS_NEGATED.match(text, start):
        return False  # "instead of crashing", 不会崩溃: the cue states its own polarity
    clause = text[reach:start]
    breaks = list(CLAUSE_BREAK.finditer(clause))
    if breaks:
        clause = clause[breaks[-1].end() :]
    window = clause[-NEGATION_REACH_EN:]
    quotes = list(QUOTE_MARK.finditer(clause))
    if quotes:
        clause = clause[quotes[-1].end() :]
    if CONTRAST_ZH.search(clause) is not None or CONTRAST_EN.search(clause) is not None:
        return True
    if NEGATION_EN.search(window) is not None:
        return True
    return NEGATION_ZH.search(window[-NEGATION_REACH_ZH:]) is not None
