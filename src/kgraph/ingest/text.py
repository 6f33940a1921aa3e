"""Bytes to lines: the encodings and line endings digests arrive in.

Digests come from other tools and people, so decoding is tolerant where the meaning is
certain (a UTF-8 BOM, CRLF or mixed endings, trailing blanks) and refuses where it is not
(binary data, an encoding we cannot name with confidence).
"""

from __future__ import annotations

import regex

from kgraph.model import Problem, Severity

LINE_BREAK = regex.compile(r"\r\n|\r|\n")
_BINARY_MAGIC = (b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"PK\x03\x04", b"%PDF", b"\x7fELF")


class DecodeError(ValueError):
    """The input cannot be read as text; the message says why."""


def decode(data: bytes, source: str) -> tuple[str, list[Problem]]:
    """Decode a digest, returning the text and warnings about what had to be repaired."""
    problems: list[Problem] = []
    if data.startswith(_BINARY_MAGIC):
        raise DecodeError("binary file (an image, archive or executable), not a digest")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), problems
        except UnicodeDecodeError as err:
            raise DecodeError(f"invalid UTF-16: {err.reason}") from None
    head = data[:65536]
    if head.count(b"\x00") > max(8, len(head) // 100):
        raise DecodeError("binary file (many NUL bytes), not a digest")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        text = _decode_legacy_chinese(data, err)
        problems.append(
            Problem(source, 1, "not UTF-8; decoded as GB18030 (Chinese legacy encoding)")
        )
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        problems.append(Problem(source, line, "NUL bytes removed"))
        text = text.replace("\x00", "")
    return text, problems


def _decode_legacy_chinese(data: bytes, utf8_error: UnicodeDecodeError) -> str:
    """Accept GB18030/GBK only when the result is clearly Chinese text, not mojibake."""
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        raise DecodeError(_not_utf8(data, utf8_error)) from None
    non_ascii = [c for c in text if ord(c) > 127]
    cjk = sum(
        1
        for c in non_ascii
        if "\u4e00" <= c <= "\u9fff" or "\u3000" <= c <= "\u303f" or "\uff00" <= c <= "\uffef"
    )
    if not non_ascii or cjk / len(non_ascii) < 0.9:
        raise DecodeError(_not_utf8(data, utf8_error))
    return text


def _not_utf8(data: bytes, err: UnicodeDecodeError) -> str:
    line = data.count(b"\n", 0, err.start) + 1
    return (
        f"line {line}: not valid UTF-8 (byte 0x{data[err.start]:02x}) and no other "
        "encoding fits with confidence; convert the file to UTF-8"
    )


def split_lines(text: str) -> list[str]:
    """Split on any line ending and drop trailing blanks; line i+1 is `result[i]`."""
    return [line.rstrip() for line in LINE_BREAK.split(text)]


__all__ = ["DecodeError", "Problem", "Severity", "decode", "split_lines"]
