"""How much of one entry the extractors read, and how large a digest may be: the bounds that
keep a hostile digest fast, and an endless or enormous input from filling the memory.

Every extractor is linear (the tests audit each regex and time each extractor on hostile
text), but some read a text many times over (the pattern catalog alone has some 700 cues),
so a 20 MB "summary" would still take minutes. A review summary is a few thousand
characters; past `MAX_READ_CHARS` the extractors read the beginning only, and the build says
so. The entry itself, with its whole text, still goes into the graph.
"""

from __future__ import annotations

import dataclasses

from kgraph.model import Entry, Problem, Severity

MAX_READ_CHARS = 300_000
# A digest is read whole, and decoded and split in memory: a few times its size. A real one
# is a few hundred kilobytes, a 100,000-entry JSON Lines export some 60 MB.
MAX_DIGEST_BYTES = 1 << 30


def readable_part(entry: Entry) -> tuple[Entry, Problem | None]:
    """The entry as the extractors see it, and a warning when it had to be cut."""
    longest = max(len(entry.title), len(entry.text))
    if longest <= MAX_READ_CHARS:
        return entry, None
    cut = dataclasses.replace(
        entry, title=entry.title[:MAX_READ_CHARS], text=entry.text[:MAX_READ_CHARS]
    )
    message = (
        f"entry of {longest:,} characters: mentions are read from the first "
        f"{MAX_READ_CHARS:,} characters of its title and summary; the whole text is kept"
    )
    return cut, Problem(entry.source, entry.line, message, Severity.WARNING)
