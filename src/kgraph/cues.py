"""Which catalog cues could match a text, found without running them.

A summary is tried against every cue of the catalog (about 700 regular expressions), and
most cues do not occur in a given summary. Each cue's expression names literal text that
every match must contain (`回滚` in `(?<![A-Za-z0-9_])回滚`, one of `失败`/`出错` in
`(失败|出错)…`); a cue whose literals are all absent cannot match, so it is not run. The
literals are indexed by their first two characters, so one pass over a text's character
pairs finds the candidates: a summary costs tens of microseconds instead of hundreds of
regex scans. A cue whose expression we cannot read this way is always run.
"""

from __future__ import annotations

import re
import re._constants as sre
import re._parser as sre_parse
from collections.abc import Sequence
from dataclasses import dataclass, field

Needles = tuple[str, ...]  # casefolded; a match contains at least one of them


def required_literals(expression: str) -> Needles | None:
    """Literal texts one of which every match contains, or None when we cannot tell.

    Read from the expression's parse tree (`re`'s parser, which reads the `regex` syntax
    the catalog uses; an expression it rejects is always run). Only mandatory parts count:
    a repeat of at least one, a group, every branch of an alternation.
    """
    try:
        tree = sre_parse.parse(expression, 0)
    except (re.error, RecursionError, OverflowError):
        return None
    return _sequence(list(tree))


def _sequence(items: Sequence[tuple[object, object]]) -> Needles | None:
    candidates: list[Needles] = []
    run: list[str] = []
    for op, arg in items:
        if op is sre.LITERAL:
            run.append(chr(arg))  # type: ignore[arg-type]
            continue
        if run:
            candidates.append(("".join(run).casefold(),))
            run = []
        inner = _mandatory(op, arg)
        if inner is not None:
            candidates.append(inner)
    if run:
        candidates.append(("".join(run).casefold(),))
    # The most selective requirement: the one whose shortest literal is longest.
    return max(candidates, key=lambda c: (min(map(len, c)), -len(c)), default=None)


def _mandatory(op: object, arg: object) -> Needles | None:
    if op is sre.SUBPATTERN:
        return _sequence(list(arg[3]))  # type: ignore[index]
    if op is sre.ATOMIC_GROUP:
        return _sequence(list(arg))  # type: ignore[call-overload]
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and arg[0] >= 1:  # type: ignore[index]
        return _sequence(list(arg[2]))  # type: ignore[index]
    if op is sre.BRANCH:
        branches = [_sequence(list(b)) for b in arg[1]]  # type: ignore[index]
        if all(b is not None for b in branches):
            return tuple(sorted({n for b in branches for n in b}))  # type: ignore[union-attr]
    return None


@dataclass(slots=True)
class CueGate:
    """The cues (by index) that may match a text: each needle once, indexed by its first
    two characters (one character for a one-character needle)."""

    always: list[int] = field(default_factory=list)
    by_pair: dict[str, list[tuple[str, tuple[int, ...]]]] = field(default_factory=dict)
    by_char: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, expressions: Sequence[str]) -> CueGate:
        gate = cls()
        cues_of: dict[str, list[int]] = {}
        for index, expression in enumerate(expressions):
            needles = required_literals(expression)
            if not needles or not all(needles):
                gate.always.append(index)
                continue
            for needle in needles:
                cues_of.setdefault(needle, []).append(index)
        for needle, indexes in cues_of.items():
            if len(needle) == 1:
                gate.by_char[needle] = tuple(indexes)
            else:
                gate.by_pair.setdefault(needle[:2], []).append((needle, tuple(indexes)))
        return gate

    def candidates(self, *texts: str) -> set[int]:
        """Indexes of the cues that may match one of `texts`; a superset, never fewer."""
        found = set(self.always)
        for text in dict.fromkeys(texts):
            folded = text.casefold()
            for char in self.by_char.keys() & set(folded):
                found.update(self.by_char[char])
            for pair in self.by_pair.keys() & set(map(str.__add__, folded, folded[1:])):
                for needle, indexes in self.by_pair[pair]:
                    if needle in folded:
                        found.update(indexes)
        return found
