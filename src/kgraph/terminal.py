"""Text from the graph, made safe to print on a terminal.

Titles and labels come from digests other people and tools wrote. Printed raw, an escape
sequence in one (`ESC ] 0 ; … BEL` sets the terminal's title, others move the cursor or
rewrite what is on screen) acts on the reader's terminal, a newline breaks the one-line
rows a pipeline greps, and a bidirectional override makes text read otherwise than it is.
Control characters and bidirectional controls are shown as escapes instead (`\\x1b`).
"""

from __future__ import annotations

import regex

_UNPRINTABLE = regex.compile(r"[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with every control character written as its Python escape."""
    return _UNPRINTABLE.sub(lambda m: ascii(m.group())[1:-1], text)
