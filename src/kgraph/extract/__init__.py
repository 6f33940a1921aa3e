"""Extractors: one small, pure function per kind of thing a review names.

Each extractor takes an entry (and the loaded catalogs) and returns mentions; none of them
sees another's output or the graph. `EXTRACTORS` is the one registry; `extract` runs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kgraph.extract.advice import extract_advice
from kgraph.extract.code import extract_code_spans
from kgraph.extract.issues import extract_issues
from kgraph.model import Entry, Kind, Mention


@dataclass(frozen=True, slots=True)
class Extractor:
    name: str
    kinds: tuple[Kind, ...]
    run: Callable[[Entry], Iterable[Mention]]


EXTRACTORS: tuple[Extractor, ...] = (
    Extractor(
        "code-spans",
        (Kind.FILE, Kind.SYMBOL, Kind.EXTERNAL_SYMBOL, Kind.NON_ENTITY),
        extract_code_spans,
    ),
    Extractor("issues", (Kind.ISSUE,), extract_issues),
    Extractor("advice", (Kind.ADVICE,), extract_advice),
)


def extract(entry: Entry, extractors: Iterable[Extractor] = EXTRACTORS) -> tuple[Mention, ...]:
    """All mentions of one entry, in a deterministic order."""
    return tuple(sorted(m for extractor in extractors for m in extractor.run(entry)))
