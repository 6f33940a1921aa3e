"""The parts of a cue's regular expression, read by us rather than by `re`'s private parser.

`kgraph.cues` needs to know which literal text every match of a cue contains. `re` has a
parser that would tell (`re._parser`), but it is private: it moved in 3.11 and can change
in any release. So we read the expressions ourselves, as far as the cue gate needs: the
syntax shared by `re` and `regex` (version 0) that catalog cues use — literals and escapes,
`.`, classes, groups of every kind, lookarounds, alternation, quantifiers (greedy, lazy,
possessive), anchors. Anything else raises `Unreadable`, and the cue is then always run:
reading less than the whole syntax costs speed, never a match.

`parse` gives a list of (opcode, argument) items shaped as `re._parser` gives them, which
is what `kgraph.cues` walks:

    LITERAL            a code point
    AT                 an anchor or word boundary (zero-width)
    ASSERT, ASSERT_NOT (direction, items) of a lookaround (zero-width)
    SUBPATTERN         (group, 0, 0, items) of a group
    ATOMIC_GROUP       items
    BRANCH             (None, [items of each alternative])
    IN                 [(LITERAL, code point) | (NEGATE, None) | (RANGE, (low, high))
                        | (CATEGORY, letter)] of a class
    MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT   (low, high, items)
    ANY, CATEGORY      one character we do not list (`.`, `\\w`, `\\s`, `\\d`…)
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

LITERAL, AT, ASSERT, ASSERT_NOT = "literal", "at", "assert", "assert_not"
SUBPATTERN, ATOMIC_GROUP, BRANCH, IN = "subpattern", "atomic_group", "branch", "in"
MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT = "max_repeat", "min_repeat", "possessive_repeat"
ANY, CATEGORY, NEGATE, RANGE = "any", "category", "negate", "range"
MAXREPEAT = 1 << 32  # an unbounded repeat's upper bound

Item = tuple[str, Any]

_ANCHORS = frozenset("bBAZ")
_CLASSES = frozenset("dDsSwW")
_CONTROLS = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
_HARMLESS_FLAGS = frozenset("aimsuL")  # change what `.`, `^`, `\w` match: not literals


class Unreadable(ValueError):
    """Syntax this reader does not know: the cue is always run."""


def parse(expression: str) -> list[Item]:
    reader = _Reader(expression)
    items = reader.alternation()
    if reader.at < len(expression):
        raise Unreadable(f"unbalanced ')' at {reader.at}")
    return items


def alternatives(expression: str) -> list[str]:
    """The expression's top-level alternatives as source text (`a|(b|c)d` is `a`, `(b|c)d`),
    or the expression alone when it has one or cannot be read."""
    reader = _Reader(expression)
    cuts = [-1]
    try:
        reader.sequence()
        while reader._peek() == "|":
            cuts.append(reader.at)
            reader.at += 1
            reader.sequence()
    except Unreadable:
        return [expression]
    if reader.at < len(expression):
        return [expression]
    cuts.append(len(expression))
    return [expression[a + 1 : b] for a, b in pairwise(cuts)]


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def _peek(self, count: int = 1) -> str:
        return self.text[self.at : self.at + count]

    def _take(self, count: int = 1) -> str:
        taken = self.text[self.at : self.at + count]
        if len(taken) < count:
            raise Unreadable("the expression ends too early")
        self.at += count
        return taken

    def alternation(self) -> list[Item]:
        """Alternatives up to a `)` or the end; one alternative is its items as they are."""
        branches = [self.sequence()]
        while self._peek() == "|":
            self.at += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else [(BRANCH, (None, branches))]

    def sequence(self) -> list[Item]:
        items: list[Item] = []
        while self.at < len(self.text) and self._peek() not in "|)":
            if self._quantifier(items):
                continue
            item = self.atom()
            if item is not None:
                items.append(item)
        return items

    def atom(self) -> Item | None:
        char = self._take()
        if char == "(":
            return self.group()
        if char == "[":
            return (IN, self.char_class())
        if char == "\\":
            return self.escape()
        if char == ".":
            return (ANY, None)
        if char in "^$":
            return (AT, char)
        if char in "*+?":
            raise Unreadable(f"nothing to repeat at {self.at - 1}")
        return (LITERAL, ord(char))

    def group(self) -> Item | None:
        if self._peek() != "?":
            return (SUBPATTERN, (1, 0, 0, self._closed()))
        self.at += 1
        for opener, op, direction in (
            ("<=", ASSERT, -1), ("<!", ASSERT_NOT, -1), ("=", ASSERT, 1), ("!", ASSERT_NOT, 1)
        ):  # fmt: skip
            if self.text.startswith(opener, self.at):
                self.at += len(opener)
                return (op, (direction, self._closed()))
        if self._peek() == ":":
            self.at += 1
            return (SUBPATTERN, (None, 0, 0, self._closed()))
        if self._peek() == ">":
            self.at += 1
            return (ATOMIC_GROUP, self._closed())
        if self._peek(2) == "P<" or self._peek() == "<":
            end = self.text.find(">", self.at)
            if end < 0:
                raise Unreadable("unterminated group name")
            self.at = end + 1
            return (SUBPATTERN, (1, 0, 0, self._closed()))
        if self._peek() == "#":
            end = self.text.find(")", self.at)
            if end < 0:
                raise Unreadable("unterminated comment")
            self.at = end + 1
            return None
        flags = ""
        while self._peek() and self._peek() in _HARMLESS_FLAGS | {"-"}:
            flags += self._take()
        if not flags:
            raise Unreadable(f"unknown group syntax at {self.at}")
        if self._peek() == ")":  # (?i): for the whole expression
            self.at += 1
            return None
        if self._take() != ":":
            raise Unreadable(f"unknown flag at {self.at - 1}")  # (?x) and others
        return (SUBPATTERN, (None, 0, 0, self._closed()))

    def _closed(self) -> list[Item]:
        items = self.alternation()
        if self._peek() != ")":
            raise Unreadable("missing ')'")
        self.at += 1
        return items

    def escape(self) -> Item:
        char = self._take()
        if char in _ANCHORS:
            return (AT, char)
        if char in _CLASSES:
            return (CATEGORY, char)
        return (LITERAL, self._escaped_code(char))

    def _escaped_code(self, char: str) -> int:
        if char in _CONTROLS:
            return ord(_CONTROLS[char])
        if char in _HEX_DIGITS:
            digits = self._take(_HEX_DIGITS[char])
            try:
                return int(digits, 16)
            except ValueError:
                raise Unreadable(f"bad \\{char} escape") from None
        if char.isalnum():  # back references, \p{…}, \N{…}, octal and regex's own escapes
            raise Unreadable(f"unknown escape \\{char}")
        return ord(char)

    def char_class(self) -> list[Item]:
        members: list[Item] = []
        if self._peek() == "^":
            self.at += 1
            members.append((NEGATE, None))
        first = True
        while True:
            char = self._take()
            if char == "]" and not first:
                return members
            first = False
            if char == "\\":
                escaped = self._take()
                if escaped in _CLASSES:
                    members.append((CATEGORY, escaped))
                    continue
                # `\b` is a backspace inside a class.
                code = 8 if escaped == "b" else self._escaped_code(escaped)
            else:
                code = ord(char)
            if self._peek() == "-" and self._peek(2) != "-]" and len(self._peek(2)) == 2:
                self.at += 1
                high = self._take()
                if high == "\\":
                    high = chr(self._escaped_code(self._take()))
                members.append((RANGE, (code, ord(high))))
            else:
                members.append((LITERAL, code))

    def _quantifier(self, items: list[Item]) -> bool:
        """Apply a quantifier at the reading position to the last item, if there is one."""
        char = self._peek()
        if char in ("*", "+", "?"):
            low, high = {"*": (0, MAXREPEAT), "+": (1, MAXREPEAT), "?": (0, 1)}[char]
            self.at += 1
        elif char == "{" and (bounds := self._bounds()) is not None:
            low, high = bounds
        else:
            return False
        if not items or items[-1][0] in (AT, ASSERT, ASSERT_NOT):
            raise Unreadable(f"nothing to repeat at {self.at - 1}")
        op = MAX_REPEAT
        if self._peek() == "?":
            self.at, op = self.at + 1, MIN_REPEAT
        elif self._peek() == "+":
            self.at, op = self.at + 1, POSSESSIVE_REPEAT
        items[-1] = (op, (low, high, [items[-1]]))
        return True

    def _bounds(self) -> tuple[int, int] | None:
        """`{m}`, `{m,n}`, `{m,}`, `{,n}` at the reading position (consumed); None when the
        brace is a literal `{`, as in `re`."""
        end = self.text.find("}", self.at)
        if end < 0:
            return None
        low, comma, high = self.text[self.at + 1 : end].partition(",")
        if not (_digits(low) or (comma and not low)) or not (_digits(high) or not high):
            return None
        if not low and not high:
            return None
        self.at = end + 1
        first = int(low) if low else 0
        return first, (int(high) if high else MAXREPEAT) if comma else first


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()  # as `re` reads a repeat: ASCII digits only
