"""JSON that kgraph reads without having necessarily written it, read into one clear error.

`graph.json` (read by `diff`, `eval` and `html`), gold files, and the records kgraph keeps in
`OUT/.kgraph/` may come from another tool, an older kgraph, a person or a broken disk. Python's
`json` raises four different things on them: `UnicodeDecodeError` on bytes that are not
UTF-8, `JSONDecodeError`, `ValueError` on a 5,000-digit number, and `RecursionError` on
200,000 nested `[` (its parser recurses). Each becomes a `JsonFileError`, a `ValueError`
whose text is `FILE:LINE: error: what is wrong`, at the line of the bad byte, of the syntax
error, or of the bracket past the depth Python's parser gives up at.
"""

from __future__ import annotations

import json
from pathlib import Path

import regex

from kgraph.limits import nesting

# A JSON string, to leave its brackets out when finding where a document nests too deeply.
_STRING = regex.compile(r'"(?:[^"\\]++|\\.)*+"?', regex.DOTALL)
# Python's JSON parser stops near its recursion limit (1,000 calls): a document nested this
# deep or deeper is the one it gave up on, whatever the exact depth was.
_PARSER_DEPTH = 900


class JsonFileError(ValueError):
    """A JSON file that cannot be read; `str()` is `FILE:LINE: error: reason`."""

    def __init__(self, source: str, line: int, reason: str) -> None:
        super().__init__(f"{source}:{line}: error: {reason}")
        self.source, self.line, self.reason = source, line, reason


def load(path: Path) -> tuple[object, str]:
    """The document in `path`, and its text (for messages that point to a line)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise JsonFileError(str(path), 0, "no such file") from None
    except OSError as error:
        raise JsonFileError(str(path), 0, f"cannot read: {error.strerror or error}") from None
    text = decode(data, str(path))
    return parse(text, str(path)), text


def decode(data: bytes, source: str) -> str:
    """UTF-8 (a BOM is dropped), or an error at the line of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        bad = data[error.start]
        raise JsonFileError(source, line, f"not UTF-8 (byte 0x{bad:02x}), so not JSON") from None


def parse(text: str | bytes, source: str) -> object:
    """`json.loads`, with every way it fails as a `JsonFileError`."""
    if isinstance(text, bytes):
        text = decode(text, source)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise JsonFileError(
            source, error.lineno, f"not JSON: {error.msg} (column {error.colno})"
        ) from None
    except RecursionError:
        _, at = nesting(text, (m.span() for m in _STRING.finditer(text)), _PARSER_DEPTH)
        line = text.count("\n", 0, at) + 1 if at >= 0 else 1
        raise JsonFileError(
            source, line, f"nested too deeply to read (more than {_PARSER_DEPTH} levels)"
        ) from None
    except ValueError as error:  # a number of more than 4,300 digits
        reason = "a number of more than 4,300 digits" if "digits" in str(error) else str(error)
        raise JsonFileError(source, 1, f"not readable JSON: {reason}") from None
