"""How large one entry and one digest may be, and how deeply a user's text may nest:
the bounds that keep every export loadable in the stores users load it into, a hostile
digest fast, an enormous input from filling the memory, and a recursive parser from
overflowing its stack.

An entry's title, summary, URL and repository each become one RDF term (a literal or an
IRI): one token of every export. The limits of the stores, measured by `bench/limits.py`
(pyoxigraph 0.5, raptor2 2.0.16, Virtuoso 7.2):
- pyoxigraph, so `kgraph query`, and the Oxigraph server: 16 MiB a token, its parsers'
  buffer ("Reached the buffer maximal size of 16777216"); one byte more is refused.
- rapper: no fixed limit, but its reading time grows with the square of a term's length:
  0.04 s CPU for a term of 180 kB, 0.4 s for 600 kB, 3.5 s for 1.8 MB.
- Virtuoso: stores a literal of 4,000,000 characters whole over SPARQL Update, which is
  how `kgraph push` loads it (its Graph Store endpoint is not used for it).
A review summary is a few thousand characters. `MAX_ENTRY_CHARS` characters, escaped at
most six bytes each (`\u0001`: kgraph's escapes are never longer), make a term of at
most 600 kB in any export: under a twentieth of pyoxigraph's limit, a seventh of what
Virtuoso was seen to take, and under half a second for rapper. A longer entry is an error
at its line: it is skipped and counted (exit code 1), and every other entry of its digest
still goes into the graph. Nothing is cut short. The bound also caps what the extractors
read of one entry, so a hostile summary cannot make them slow.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kgraph.model import Entry, Problem, ReadResult, Severity

MAX_ENTRY_CHARS = 100_000
# A digest is read whole, and decoded and split in memory: a few times its size. A real one
# is a few hundred kilobytes, a 100,000-entry JSON Lines export some 60 MB.
MAX_DIGEST_BYTES = 1 << 30
# Brackets, braces and parentheses a user's text may nest before it goes to a parser that
# recurses: pyoxigraph's SPARQL parser overflowed its stack (a segmentation fault, no
# message) at about 2,500 levels, and `regex` raises RecursionError compiling 1,000 nested
# groups. A real query or cue nests a few levels; past this one it is hostile or generated.
MAX_NESTING = 64
_BRACKET = re.compile(r"[()\[\]{}]")


def _longest_field(entry: Entry) -> tuple[str, int]:
    fields = (
        ("title", entry.title),
        ("summary", entry.text),
        ("URL", entry.url or ""),
        ("repository", entry.repo or ""),
    )
    name, text = max(fields, key=lambda field: len(field[1]))
    return name, len(text)


def within_limits(result: ReadResult) -> ReadResult:
    """The digest's entries that every store can load; each longer one is an error at its
    line, skipped and counted."""
    kept: list[Entry] = []
    problems = list(result.problems)
    for entry in result.entries:
        name, length = _longest_field(entry)
        if length <= MAX_ENTRY_CHARS:
            kept.append(entry)
            continue
        message = (
            f"entry skipped: its {name} has {length:,} characters, over the "
            f"{MAX_ENTRY_CHARS:,} an entry may have, so that every export loads in any "
            "store; split or shorten it"
        )
        problems.append(Problem(entry.source, entry.line, message, Severity.ERROR, 1))
    if len(kept) == len(result.entries):
        return result
    problems.sort(key=lambda p: p.line)  # stable: the parser's order within a line
    return ReadResult(result.digest, tuple(kept), tuple(problems))


def nesting(
    text: str, skipped: Iterable[tuple[int, int]] = (), limit: int = MAX_NESTING
) -> tuple[int, int]:
    """The deepest nesting of brackets, braces and parentheses in `text` outside the
    `skipped` (start, end) spans (its strings and comments), and the offset of the first
    bracket past `limit` (-1 if none is). A closing one too many counts as none: the
    parser will say what is wrong with it. Linear in the text."""
    spans = sorted(skipped)
    depth = deepest = 0
    at = -1
    cut = 0  # spans[:cut] end before the bracket being read
    for match in _BRACKET.finditer(text):
        offset = match.start()
        while cut < len(spans) and spans[cut][1] <= offset:
            cut += 1
        if cut < len(spans) and spans[cut][0] <= offset:
            continue
        if match.group() in "([{":
            depth += 1
            deepest = max(deepest, depth)
            if depth == limit + 1 and at < 0:
                at = offset
        else:
            depth = max(depth - 1, 0)
    return deepest, at
