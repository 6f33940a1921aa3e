"""The shape of review prose that the design extractors share: sentences, clauses, quotes.

Reviews state design knowledge in sentences and clauses, and mark the phrases that matter
with quotes. Code spans are masked first (same length, so every offset stays an offset
into the original text): a comma, a quote mark or a full stop inside `f(a, "b")` is code,
not prose.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate

import regex

from kgraph.extract.code import CODE_SPAN

SENTENCE_END = frozenset("。！？!?\n")
CLAUSE_SEPARATORS = frozenset("，,；;：:")
OPEN_BRACKETS = {"（": "）", "(": ")", "[": "]", "【": "】"}
PAIRED_QUOTES = {"「": "」", "『": "』", "“": "”", "‘": "’"}
CJK = r"\p{Han}"
# An ASCII ' opens a quote only after a blank, CJK text or punctuation, so "user's" is no quote.
SINGLE_QUOTED = regex.compile(
    rf"(?<=^|[\s{CJK}（(「:：，,、])'(?=\S)([^'\n]{{1,80}}?)(?<=\S)'(?=$|[\s{CJK}）)」.,，。；;:：!?！？])"
)
_SEPARATOR_CHARS = regex.escape("".join(sorted(CLAUSE_SEPARATORS)))
_SEPARATORS = regex.compile(rf"[{_SEPARATOR_CHARS}]|——| — ")
_SEPARATORS_WITH_ENUMERATION = regex.compile(rf"[{_SEPARATOR_CHARS}、]|——| — ")
LEADING_NOISE = regex.compile(r"^(?:[-*•·]\s+|\s+)+")
# The characters the scans below stop at; the rest of a text is passed over in C.
_SENTENCE_END_OR_STOP = regex.compile("[" + regex.escape("".join(sorted(SENTENCE_END))) + ".]")
_QUOTE_OPENER = regex.compile("[" + regex.escape("".join(sorted(PAIRED_QUOTES))) + '"]')
_OPENER_OF = {close: open_ for open_, close in OPEN_BRACKETS.items()}
_BRACKET_OR_LINE_END = regex.compile(
    "[" + regex.escape("".join(sorted([*OPEN_BRACKETS, *_OPENER_OF]))) + "\n]"
)


@dataclass(frozen=True, slots=True, order=True)
class Quote:
    """A quoted phrase: `start`/`end` include the quote marks, `inner_*` exclude them."""

    start: int
    end: int
    inner_start: int
    inner_end: int


@dataclass(slots=True, eq=False)
class Prose:
    """One text with its code masked and its quotes, brackets and sentences found once.

    Clause splits are remembered per span: the extractors ask for the same ones often.
    """

    text: str
    masked: str
    quotes: tuple[Quote, ...]
    depth: tuple[int, ...]  # bracket-or-quote nesting depth at each character
    sentence_spans: tuple[tuple[int, int], ...] = ()
    _clauses: dict[tuple[int, int, bool], list[Span]] = field(default_factory=dict)

    def sentences(self) -> tuple[tuple[int, int], ...]:
        return self.sentence_spans

    def clauses(self, start: int, end: int, split_enumeration: bool = False) -> list[Span]:
        """Top-level clauses of `text[start:end]`: split at commas, semicolons, colons and
        dashes that are outside quotes and brackets. `split_enumeration` also splits at 、.
        """
        key = (start, end, split_enumeration)
        if key not in self._clauses:
            self._clauses[key] = self._split(start, end, split_enumeration)
        return list(self._clauses[key])

    def _split(self, start: int, end: int, split_enumeration: bool) -> list[Span]:
        base = self.depth[start] if start < len(self.depth) else 0
        spans: list[Span] = []
        clause_start = start
        text = self.masked
        # Candidate separators come from one C scan that reports a match at every position
        # (overlapped), in the priority a character-by-character walk would give them;
        # those inside quotes or brackets, or inside a separator just taken, are passed over.
        separators = _SEPARATORS_WITH_ENUMERATION if split_enumeration else _SEPARATORS
        # A separator that starts inside the span counts whole, even past its end.
        for match in separators.finditer(text, start, end + 2, overlapped=True):
            i = match.start()
            if i >= end:
                break
            if i < clause_start or self.depth[i] != base:
                continue
            spans.extend(Span(s, e, match.group()) for s, e in _trimmed(text, clause_start, i))
            clause_start = match.end()
        spans.extend(Span(s, e, "") for s, e in _trimmed(text, clause_start, end))
        return spans

    def quotes_in(self, start: int, end: int) -> list[Quote]:
        """The quotes inside `start:end`; found by bisection (quotes are sorted by start), as
        a scan of all of them per clause made a text of many quoted clauses quadratic."""
        inside = []
        for index in range(
            bisect_left(self.quotes, start, key=lambda q: q.start), len(self.quotes)
        ):
            q = self.quotes[index]
            if q.start >= end:
                break
            if q.end <= end:
                inside.append(q)
        return inside

    def enclosing(self, position: int) -> tuple[int, int]:
        """The span inside the innermost bracket or quote around `position` (or the text)."""
        level = self.depth[position]
        if level == 0:
            return 0, len(self.text)
        left = position
        while left > 0 and self.depth[left - 1] >= level:
            left -= 1
        right = position
        while right < len(self.text) and self.depth[right] >= level:
            right += 1
        return left, right


@dataclass(frozen=True, slots=True, order=True)
class Span:
    start: int
    end: int
    separator: str = ""  # the punctuation that ended the clause


@lru_cache(maxsize=256)
def prose(text: str) -> Prose:
    """The text's structure; cached, since every design extractor reads the same entry."""
    masked = CODE_SPAN.sub(lambda m: "`" + "x" * (len(m.group(0)) - 2) + "`", text)
    quotes = _find_quotes(masked)
    # Depth by a difference array: adding 1 over each span one by one took quadratic time
    # on 5,000 nested brackets.
    change = [0] * (len(masked) + 2)
    spans = [(q.inner_start, q.inner_end) for q in quotes]
    spans += [(left + 1, right) for left, right in _brackets(masked)]
    for start, end in spans:
        if start < end:
            change[start] += 1
            change[end] -= 1
    depth = list(accumulate(change[: len(masked) + 1]))
    return Prose(text, masked, tuple(quotes), tuple(depth), tuple(_sentences(masked, depth)))


def _sentences(text: str, depth: list[int]) -> Iterator[tuple[int, int]]:
    """Spans ending at a sentence terminator (outside quotes and brackets) or a line end.

    An English full stop ends a sentence only before a blank or the end of the text.
    """
    start = 0
    for match in _SENTENCE_END_OR_STOP.finditer(text):
        i = match.start()
        char = match.group()
        ends = char != "." or i + 1 == len(text) or text[i + 1].isspace()
        if ends and (depth[i] == 0 or char == "\n"):
            yield from _trimmed(text, start, i + (char != "\n"))
            start = i + 1
    yield from _trimmed(text, start, len(text))


def _find_quotes(masked: str) -> list[Quote]:
    found: list[Quote] = []
    opener = _QUOTE_OPENER.search(masked)
    while opener is not None:
        i, char = opener.start(), opener.group()
        j = _closing(masked, i, char, PAIRED_QUOTES.get(char, char))
        if j is not None:
            found.append(Quote(i, j + 1, i + 1, j))
        opener = _QUOTE_OPENER.search(masked, i + 1 if j is None else j + 1)
    taken = [(q.start, q.end) for q in found]
    for match in SINGLE_QUOTED.finditer(masked):
        if not any(a <= match.start() < b for a, b in taken):
            found.append(Quote(match.start(), match.end(), match.start(1), match.end(1)))
    return sorted(found)


def _closing(masked: str, i: int, opener: str, close: str) -> int | None:
    """Index of the mark closing the quote opened at `i` on the same line, nesting allowed."""
    level = 0
    for j in range(i + 1, min(len(masked), i + 400)):
        char = masked[j]
        if char == "\n":
            return None
        if char == close and level == 0:
            return j if j > i + 1 else None
        if char == opener and opener != close:
            level += 1
        elif char == close:
            level -= 1
    return None


def _brackets(masked: str) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    for match in _BRACKET_OR_LINE_END.finditer(masked):
        i, char = match.start(), match.group()
        if char in OPEN_BRACKETS:
            stack.append((char, i))
        elif char == "\n":
            stack.clear()
        else:
            while stack and stack[-1][0] != _OPENER_OF[char]:
                stack.pop()  # an unclosed bracket inside a closed one is plain text
            if stack:
                pairs.append((stack.pop()[1], i))
    return pairs


def _trimmed(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The span without surrounding blanks or a leading list bullet; nothing if empty."""
    segment = text[start:end]
    lead = LEADING_NOISE.match(segment)
    offset = lead.end() if lead else 0
    stripped = segment[offset:].rstrip()
    if stripped.strip(" \t。.!?！？"):
        yield start + offset, start + offset + len(stripped)


def compact(text: str) -> tuple[str, list[int]]:
    """The text with every code span shortened to "`c`", and where each character came from.

    Cue phrases allow a few words between their parts; a long identifier between them is
    still one word, so it should not use up the gap.
    """
    out: list[str] = []
    origin: list[int] = []
    last = 0
    for match in CODE_SPAN.finditer(text):
        out.append(text[last : match.start()])
        origin.extend(range(last, match.start()))
        out.append("`c`")
        origin.extend((match.start(), match.start() + 1, match.end() - 1))
        last = match.end()
    out.append(text[last:])
    origin.extend(range(last, len(text) + 1))  # one past the end maps to the end
    return "".join(out), origin


# --- comparing short texts ----------------------------------------------------------------

TOKEN = regex.compile(r"\p{Han}|[\p{L}\p{N}_]+")


def tokens(text: str) -> list[str]:
    """Each CJK character, and each run of letters or digits (case-folded), is one token."""
    return TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


def overlap(a: str, b: str) -> float:
    """How much two phrases share: the smaller of the two coverage ratios, in [0, 1].

    The shared tokens are counted as a multiset; a phrase and a long sentence that contains
    it score low, because the sentence is mostly something else.
    """
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    counts: dict[str, int] = {}
    for t in ta:
        counts[t] = counts.get(t, 0) + 1
    shared = 0
    for t in tb:
        if counts.get(t, 0) > 0:
            counts[t] -= 1
            shared += 1
    return min(shared / len(ta), shared / len(tb))
