"""The corpus decides on bare identifiers: a name is code where the corpus or the code says so.

`kgraph.extract.bare` marks a `CamelCase` or `snake_case` word written without backticks
and without the shape of code (a call, a dotted name, a leading underscore) as a
*candidate*. Alone, such a word may be a product ("FlashInfer") as easily as a class. It
is kept as a symbol when the same name is backticked somewhere in the corpus (a reviewer
who once wrote `LookupResult` meant code) or when a `--source` checkout defines it; the
mention then says so (`bare:corpus`, `bare:source`), and the graph records it as
`kg:recognizedBy`. Other candidates are dropped.

This runs between extraction and linking because it needs the whole corpus; it changes
only the candidates' mentions.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence

from kgraph.extract.bare import CANDIDATE
from kgraph.link import ExtractedEntry
from kgraph.model import Kind, Mention
from kgraph.source import SourceIndex

CORPUS, SOURCE = "bare:corpus", "bare:source"


def settle_bare_names(
    items: Sequence[ExtractedEntry],
    sources: Sequence[SourceIndex] = (),
    backticked: Container[str] | None = None,
) -> list[ExtractedEntry]:
    """The entries with each bare candidate kept (and marked how) or dropped. `backticked`
    is the corpus's backticked names, when `items` are not the whole corpus (a build that
    links only what changed: `kgraph.delta`)."""
    if backticked is None:
        backticked = backticked_names(items)
    settled: list[ExtractedEntry] = []
    for item in items:
        if not any(m.detail == CANDIDATE for m in item.mentions):
            settled.append(item)
            continue
        kept = []
        for m in item.mentions:
            if m.detail != CANDIDATE:
                kept.append(m)
            elif m.key in backticked:
                kept.append(m._replace(detail=CORPUS))
            elif any(index.definitions(m.key.rsplit(".", 1)[-1]) for index in sources):
                kept.append(m._replace(detail=SOURCE))
        settled.append(ExtractedEntry(item.entry, item.digest, tuple(sorted(kept))))
    return settled


def backticked_names(items: Iterable[ExtractedEntry]) -> set[str]:
    """The symbols some entry writes as code, not bare: what makes a bare name code."""
    return {m.key for item in items for m in item.mentions if is_backticked(m)}


def is_backticked(mention: Mention) -> bool:
    return mention.kind is Kind.SYMBOL and not mention.detail.startswith("bare")


def candidates(mentions: Iterable[Mention]) -> set[str]:
    """The names of the bare candidates among `mentions`."""
    return {m.key for m in mentions if m.detail == CANDIDATE}
