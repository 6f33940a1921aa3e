"""Issue and pull-request references: `#56701` and GitHub issue or pull URLs."""

from __future__ import annotations

import regex

from kgraph.extract.code import CODE_SPAN
from kgraph.model import Entry, Field, Kind, Mention

# `#123` not glued to a word (`abc#1`), an HTML entity (`&#123;`) or a colour (`#fff`).
HASH_REFERENCE = regex.compile(r"(?<![\w&/#])#(\d{1,9})(?![\w#])")
GITHUB_REFERENCE = regex.compile(
    r"https?://github\.com/([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*?)/(?:issues|pull)/(\d{1,9})(?!\d)"
)


def extract_issues(entry: Entry) -> list[Mention]:
    """References in the summary; `detail` is the repository when a URL names it.

    Spans inside backticks are code (`x  # 1`), and a URL's number is not read twice.
    """
    text = entry.text
    taken = [m.span() for m in CODE_SPAN.finditer(text)]
    mentions: list[Mention] = []
    for match in GITHUB_REFERENCE.finditer(text):
        taken.append(match.span())
        mentions.append(
            Mention(
                Kind.ISSUE,
                match.group(2),
                match.group(0),
                match.start(),
                match.end(),
                Field.TEXT,
                match.group(1),
            )
        )
    for match in HASH_REFERENCE.finditer(text):
        if not any(a <= match.start() < b for a, b in taken):
            mentions.append(
                Mention(Kind.ISSUE, match.group(1), match.group(0), match.start(), match.end())
            )
    return sorted(mentions, key=lambda m: m.start)
