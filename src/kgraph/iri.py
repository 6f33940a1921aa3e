"""IRIs built from text that digests control: escaped so that every export stays parseable.

Node ids are percent-encoded segment by segment (`graph.node_id`); this module covers the
IRIs taken whole from input or options — a PR's URL, the `--base` of the graph — where a
space, a `>` or a lone surrogate would otherwise end up inside `<…>` in N-Triples.
"""

from __future__ import annotations

from urllib.parse import quote

import pyoxigraph as ox
import regex

# Characters RFC 3987 never allows unescaped in an IRI: ASCII controls and delimiters,
# C1 controls, surrogates, private-use and non-characters; and a `%` that starts no escape.
_UNSAFE = regex.compile(
    r'[\p{Cc}\p{Cs}\p{Co}\p{Noncharacter_Code_Point} <>"{}|\\^`]|%(?![0-9A-Fa-f]{2})'
)


def escape_iri(text: str) -> str:
    """Percent-encode what may not appear in an IRI; leave everything else as written."""
    return _UNSAFE.sub(lambda m: quote(m.group(), safe="", errors="surrogatepass"), text)


def is_absolute_iri(text: str) -> bool:
    """True when an RDF parser accepts `text` as an absolute IRI (checked by pyoxigraph)."""
    try:
        ox.NamedNode(text)
    except ValueError:
        return False
    return True


def safe_iri(text: str) -> str | None:
    """`text` escaped into a valid absolute IRI, or None when no escaping makes it one."""
    escaped = escape_iri(text)
    return escaped if is_absolute_iri(escaped) else None
