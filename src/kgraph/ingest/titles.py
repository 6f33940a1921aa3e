"""Telling titles from summaries in plain-text digests.

A digest is a run of *units* (lines in a daily digest, blank-separated blocks in a tag
view). A title is short, is one line, carries no sentence-final punctuation and is not a
list item; a summary is everything up to the next title. Grouping by these traits instead
of by line parity keeps multi-line summaries and a title that lost its summary apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex

from kgraph.ingest.text import quoted
from kgraph.model import Problem, Severity

SENTENCE_END = "。！？!?.:：;；…，,、"
MAX_TITLE_WIDTH = 140  # display columns: a CJK character counts as two
_LIST_ITEM = regex.compile(r"^\s*(?:[-*•·]\s|\d+[.)、]\s|\(\d+\)|（\d+）)")
_WIDE = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\uff00-\uffef\u3000-\u303f]")


@dataclass(frozen=True, slots=True)
class Unit:
    line: int  # 1-based line where the unit starts
    text: str  # may span several lines (a tag-view block)


@dataclass(frozen=True, slots=True)
class Block:
    """A title and the summary units that follow it."""

    line: int
    title: str
    summary: str


def display_width(text: str) -> int:
    return len(text) + len(_WIDE.findall(text))


def looks_like_title(text: str, max_width: int | None = MAX_TITLE_WIDTH) -> bool:
    stripped = text.strip()
    if not stripped or "\n" in stripped or _LIST_ITEM.match(stripped):
        return False
    if stripped[-1] in SENTENCE_END:
        return False
    return max_width is None or display_width(stripped) <= max_width


def _orphans(source: str, units: Sequence[Unit]) -> Problem:
    """Text before the first title: entries whose titles were not recognised, so they count
    as skipped entries (an error), never as text that silently vanished. How many: one per
    line shaped like a title but for its width (a title too long), and at least one."""
    lost = max(1, sum(looks_like_title(u.text.partition("\n")[0], None) for u in units))
    return Problem(
        source,
        units[0].line,
        "text before the first title belongs to no entry (a title is one line of at most "
        f"{MAX_TITLE_WIDTH} columns, not ending in punctuation); skipped as "
        f"{'one entry' if lost == 1 else f'{lost} entries'}: {quoted(units[0].text)}",
        Severity.ERROR,
        lost,
    )


def group(units: Sequence[Unit], source: str) -> tuple[list[Block], list[Problem]]:
    """Group units into title + summary blocks, reporting anything that does not fit.

    Two title-like units in a row are ambiguous: the first is a title whose summary is
    missing when the second is followed by a summary, otherwise the second is a short
    summary ("可快速浏览") of the first.
    """
    blocks: list[Block] = []
    problems: list[Problem] = []
    title: Unit | None = None
    summary: list[str] = []

    def close() -> None:
        if title is None:
            return
        if not summary:
            problems.append(
                Problem(source, title.line, f"title without a summary: {quoted(title.text)}")
            )
        blocks.append(Block(title.line, title.text.strip(), "\n".join(summary).strip()))

    first = next((i for i, unit in enumerate(units) if looks_like_title(unit.text)), len(units))
    if first:
        problems.append(_orphans(source, units[:first]))
    for index in range(first, len(units)):
        unit = units[index]
        if looks_like_title(unit.text):
            next_is_summary = index + 1 < len(units) and not looks_like_title(units[index + 1].text)
            starts_entry = title is None or bool(summary) or next_is_summary
            if starts_entry:
                close()
                title, summary = unit, []
                continue
        assert title is not None  # units[first] is title-like, so it opened an entry
        summary.append(unit.text.strip())
    close()
    return blocks, problems
