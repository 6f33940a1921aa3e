"""The history's cache files: JSON documents in `OUT/.kgraph/`, read without trust.

A cache is an optimisation, never a source of truth: a file that is missing, damaged, or not
a JSON object reads as an empty document, and the caller reads git again. Documents are
written as ASCII JSON, so that a path git gave as undecodable bytes (kept as lone
surrogates) survives the round trip.
"""

from __future__ import annotations

import json
from pathlib import Path


def read_document(path: Path | None) -> dict:
    """The JSON object at `path`, or {} for anything else."""
    if path is None or not path.is_file():
        return {}
    try:
        document = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def dumps(document: object) -> bytes:
    """Compact ASCII JSON and a newline."""
    return (json.dumps(document, separators=(",", ":")) + "\n").encode("ascii")
