"""Issue and pull-request references: `#56701` and GitHub issue or pull URLs."""

from __future__ import annotations

from bisect import bisect_right

import regex

from kgraph.extract.code import CODE_SPAN
from kgraph.model import Entry, Field, Kind, Mention

# `#123` not glued to a word (`abc#1`), an HTML entity (`&#123;`) or a colour (`#fff`).
HASH_REFERENCE = regex.compile(r"(?<![\w&/#])#(\d{1,9})(?![\w#])")
GITHUB_REFERENCE = regex.compile(
    r"https?://github\.com/([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*?)/(?:issues|pull)/(\d{1,9})(?!\d)"
)


def extract_issues(entry: Entry) -> list[Mention]:
    """References in the summary; `detail` is the repository when a URL names it, and
    `key` the number in ASCII decimal digits, so that `#7`, `#007` and `#７` are one issue.

    Spans inside backticks are code (`x  # 1`), and a URL's number is not read twice.
    The taken spans are merged into disjoint runs, so one bisection per `#N` tells whether
    it is inside one (a scan of all of them made 10,000 spans and references quadratic).
    """
    text = entry.text
    taken = [m.span() for m in CODE_SPAN.finditer(text)]
    mentions: list[Mention] = []
    for match in GITHUB_REFERENCE.finditer(text):
        taken.append(match.span())
        if number := _number(match.group(2)):
            mentions.append(
                Mention(
                    Kind.ISSUE,
                    number,
                    match.group(0),
                    match.start(),
                    match.end(),
                    Field.TEXT,
                    match.group(1),
                )
            )
    runs = _disjoint(taken)
    for match in HASH_REFERENCE.finditer(text):
        if not _inside(runs, match.start()) and (number := _number(match.group(1))):
            mentions.append(Mention(Kind.ISSUE, number, match.group(0), match.start(), match.end()))
    return sorted(mentions, key=lambda m: m.start)


def _number(digits: str) -> str | None:
    """The number as GitHub writes it; None for 0, which numbers no issue."""
    return str(value) if (value := int(digits)) > 0 else None


def _disjoint(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union of `spans` as sorted, non-overlapping runs."""
    runs: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if runs and start <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], end))
        else:
            runs.append((start, end))
    return runs


def _inside(spans: list[tuple[int, int]], position: int) -> bool:
    """Is `position` inside one of the sorted, disjoint `spans`?"""
    index = bisect_right(spans, position, key=lambda span: span[0]) - 1
    return index >= 0 and spans[index][0] <= position < spans[index][1]
