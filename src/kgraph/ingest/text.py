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
    """The input cannot be read as text; the message says why, `line` where (the line of
    the first bad byte), and `text` is set when the bytes are text all the same (not
    binary), so that the entries lost with the file can be counted."""

    def __init__(self, message: str, line: int = 1, text: str | None = None) -> None:
        super().__init__(message)
        self.line, self.text = line, text


def decode(data: bytes, source: str) -> tuple[str, list[Problem]]:
    """Decode a digest, returning the text and warnings about what had to be repaired."""
    problems: list[Problem] = []
    if data.startswith(_BINARY_MAGIC):
        raise DecodeError("binary file (an image, archive or executable), not a digest")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as err:
            raise DecodeError(f"invalid UTF-16: {err.reason}") from None
    else:
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
    """Accept GB18030/GBK only when the result is clearly Chinese text, not mojibake.

    Most byte strings decode as GB18030, so decoding is no evidence. Chinese text is: its
    non-ASCII characters are Han and Chinese punctuation; its Han characters are nearly all
    in GB2312 (the 6,763 common ones), whereas Shift-JIS, Big5 or Latin-1 bytes read as GBK
    land in the rare extension rows; and they spread over GB2312's rows, whereas Korean
    EUC-KR bytes read as GB2312 stay in the rows 0xB0-0xC8 where Hangul sits.
    """
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        raise _not_utf8(data, utf8_error) from None
    non_ascii = [c for c in text if ord(c) > 127]
    han = [c for c in non_ascii if _HAN.match(c)]
    chinese = len(han) + sum(1 for c in non_ascii if _CHINESE_PUNCTUATION.match(c))
    common = [b for b in (_gb2312(c) for c in han) if b is not None]
    confident = (
        len(han) >= 2
        and chinese >= 0.9 * len(non_ascii)
        and len(common) >= 0.9 * len(han)
        and sum(1 for lead in common if lead > 0xC8) >= 0.1 * len(common)
    )
    if not confident:
        raise _not_utf8(data, utf8_error)
    return text


_HAN = regex.compile(r"\p{Han}")
_CHINESE_PUNCTUATION = regex.compile(r"[\u3000-\u303f\uff00-\uffef\u2010-\u206f\u00b7]")


def _gb2312(char: str) -> int | None:
    """The lead byte of `char` in GB2312, or None when it is not a common character."""
    try:
        return char.encode("gb2312")[0]
    except UnicodeEncodeError:
        return None


def _not_utf8(data: bytes, err: UnicodeDecodeError) -> DecodeError:
    line = data.count(b"\n", 0, err.start) + 1
    column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
    return DecodeError(
        f"not valid UTF-8 (byte 0x{data[err.start]:02x} at column {column}) and no other "
        "encoding fits with confidence; convert the file to UTF-8",
        line,
        data.decode("utf-8", "replace"),
    )


def quoted(text: str, limit: int = 80) -> str:
    """Input text for a message: repr-escaped (no raw newline or escape code reaches the
    terminal) and cut to `limit` characters (a 20 MB title is not echoed)."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def split_lines(text: str) -> list[str]:
    """Split on any line ending and drop trailing blanks; line i+1 is `result[i]`."""
    return [line.rstrip() for line in LINE_BREAK.split(text)]


__all__ = ["DecodeError", "Problem", "Severity", "decode", "quoted", "split_lines"]
