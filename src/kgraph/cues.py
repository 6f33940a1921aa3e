"""Which catalog cues could match a text, found without running them.

A summary is tried against every cue of the catalog (about 700 regular expressions), and
most cues do not occur in a given summary. Each cue's expression names literal text that
every match must contain: `回滚` in `(?<![A-Za-z0-9_])回滚`, one of `失败`/`出错` and then
one of `删掉`/`删除` in `(失败|出错)[^，]{0,30}(删掉|删除)`. A cue is run only on a text that
holds every one of its requirements. Adjacent literal parts are joined into longer needles
(`` `min( `` and `` `max( `` for the cue `` `(min|max)\\( ``), as a short needle such as a
backtick occurs in nearly every summary.

All needles sit in one Aho-Corasick automaton (pyahocorasick), which finds those a text
holds in one pass in C: a summary costs about 30 microseconds instead of hundreds of regex
scans. A cue whose expression we cannot read this way is always run. The expressions are
read by `kgraph.cue_syntax`, not by `re`'s private parser, which can change in any release.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import ahocorasick

from kgraph import cue_syntax as sre

Needles = tuple[str, ...]  # casefolded; a match contains at least one of them
Requirements = tuple[Needles, ...]  # a match meets every one of them
ParsedItem = tuple[object, Any]  # an (opcode, argument) of `cue_syntax.parse`

# How many needles joining adjacent literal parts may produce; past it, the parts are
# requirements of their own.
_MOST_NEEDLES = 64
# `regex` syntax that `re` parses as something else: POSIX classes (`[[:alpha:]]`) and
# fuzzy matching (`(?:kv){e<=1}`) would be read as literal text that matches need not hold.
_READ_OTHERWISE_BY_RE = re.compile(r"\[:|\{[^{}]*[<=]")


def requirements(expression: str) -> Requirements | None:
    """What every match of the expression contains, or None when we cannot tell.

    Read from the expression's parse tree (`cue_syntax`, which reads the `regex` syntax
    the catalog uses; an expression it cannot read is always run). Only mandatory parts count:
    a repeat of at least one, a group, every branch of an alternation. Needles are
    casefolded, as the texts they are looked for in are.
    """
    if _READ_OTHERWISE_BY_RE.search(expression):
        return None
    try:
        tree = sre.parse(expression)
    except (sre.Unreadable, RecursionError):
        return None
    return _sequence(list(tree)) or None


def most_selective(requirements: Requirements) -> Needles:
    """The requirement least likely to be met by chance: the one whose shortest needle is
    longest, a CJK character counting twice (one of thousands, not of 26 letters)."""
    return max(requirements, key=lambda needles: (min(map(_weight, needles)), -len(needles)))


def _weight(needle: str) -> int:
    return sum(2 if ord(c) >= 0x2E80 else 1 for c in needle)


def _sequence(items: Sequence[ParsedItem]) -> Requirements:
    """The requirements of items matched one after another: runs of parts that match
    known strings are joined into the strings the run can match, other parts bring
    their own requirements."""
    found: list[Needles] = []
    run: set[str] = {""}
    for op, arg in items:
        exact = _exact(op, arg)
        if exact is not None and len(run) * len(exact) <= _MOST_NEEDLES:
            run = {before + after for before in run for after in exact}
            continue
        found += _requirement(run)
        run = exact if exact is not None else {""}
        if exact is None:
            found += _mandatory(op, arg)
    found += _requirement(run)
    return tuple(found)


def _requirement(strings: set[str]) -> list[Needles]:
    """A run's strings as a requirement; none when the run may match the empty string."""
    if "" in strings:
        return []
    return [tuple(sorted({s.casefold() for s in strings}))]


def _exact(op: object, arg: Any) -> set[str] | None:
    """Every string the part can match, when they are few; None otherwise."""
    if op is sre.LITERAL:
        return {chr(arg)}
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
        return {""}  # zero-width: \b, ^, lookarounds add nothing to the matched text
    if op is sre.SUBPATTERN:
        return _exact_sequence(list(arg[3]))
    if op is sre.BRANCH:
        strings: set[str] = set()
        for branch in arg[1]:
            exact = _exact_sequence(list(branch))
            if exact is None:
                return None
            strings |= exact
        return strings if len(strings) <= _MOST_NEEDLES else None
    if op is sre.IN:
        chars = [chr(a) for o, a in arg if o is sre.LITERAL]
        if len(chars) == len(arg) <= _MOST_NEEDLES:
            return set(chars)
        return None
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, high, body = arg
        exact = _exact_sequence(list(body))
        if exact is not None and (low, high) == (0, 1):
            return exact | {""}
        if exact is not None and (low, high) == (1, 1):
            return exact
    return None


def _exact_sequence(items: Sequence[ParsedItem]) -> set[str] | None:
    strings = {""}
    for op, arg in items:
        exact = _exact(op, arg)
        if exact is None or len(strings) * len(exact) > _MOST_NEEDLES:
            return None
        strings = {before + after for before in strings for after in exact}
    return strings


def _mandatory(op: object, arg: Any) -> list[Needles]:
    """The requirements of a part that matches too many strings to list."""
    if op is sre.SUBPATTERN:
        return list(_sequence(list(arg[3])))
    if op is sre.ATOMIC_GROUP:
        return list(_sequence(list(arg)))
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and arg[0] >= 1:
        return list(_sequence(list(arg[2])))
    if op is sre.BRANCH:
        # A match contains one branch's text: one requirement of each branch, pooled.
        branches = [_sequence(list(b)) for b in arg[1]]
        if all(branches):
            return [tuple(sorted({n for b in branches for n in most_selective(b)}))]
    return []


@dataclass(slots=True)
class CueGate:
    """The cues (by index) that may match a text.

    Every needle of every cue is put in one Aho-Corasick automaton, which finds all the
    needles a text holds in a single pass in C. A cue is then looked up by the needles of
    its most selective requirement (`by_needle`) and kept when the text also meets its
    other requirements (`rest`).
    """

    always: list[int] = field(default_factory=list)
    by_needle: dict[str, tuple[int, ...]] = field(default_factory=dict)
    rest: dict[int, tuple[frozenset[str], ...]] = field(default_factory=dict)
    automaton: ahocorasick.Automaton | None = None
    # Needles of one character (a blank, a backtick, "/", "用") are in nearly every text:
    # the automaton reported each occurrence, two thirds of its matches, for Python to put
    # in a set. `in` finds each of them in C instead.
    letters: tuple[str, ...] = ()
    # The last texts asked about and the answer: a pattern extractor asks first whether
    # any combination of concepts could occur, then `find_concepts` asks again.
    _asked: tuple[str, ...] = ()
    _answer: frozenset[int] = frozenset()

    @classmethod
    def of(cls, expressions: Sequence[str]) -> CueGate:
        gate = cls()
        cues_of: dict[str, list[int]] = {}
        needles: set[str] = set()
        for index, expression in enumerate(expressions):
            found = requirements(expression)
            if not found:
                gate.always.append(index)
                continue
            indexed = most_selective(found)
            for needle in indexed:
                cues_of.setdefault(needle, []).append(index)
            others = tuple(frozenset(r) for r in dict.fromkeys(found) if r != indexed)
            if others:
                gate.rest[index] = others
            needles.update(n for r in found for n in r)
        gate.by_needle = {needle: tuple(indexes) for needle, indexes in cues_of.items()}
        gate.letters = tuple(sorted(n for n in needles if len(n) == 1))
        words = sorted(n for n in needles if len(n) > 1)
        if words:
            gate.automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY, ahocorasick.KEY_STRING)
            for needle in words:
                gate.automaton.add_word(needle, needle)
            gate.automaton.make_automaton()
        return gate

    def candidates(self, *texts: str) -> set[int]:
        """Indexes of the cues that may match one of `texts`; a superset, never fewer."""
        if texts == self._asked:
            return set(self._answer)
        found = set(self.always)
        if self.automaton is None and not self.letters:
            return found
        rest, by_needle = self.rest, self.by_needle
        for text in dict.fromkeys(texts):
            folded = text.casefold()
            present = {letter for letter in self.letters if letter in folded}
            if self.automaton is not None:
                present.update(map(itemgetter(1), self.automaton.iter(folded)))
            for needle in present:
                for index in by_needle.get(needle, ()):
                    if index in found:
                        continue  # met already, through another needle or text
                    others = rest.get(index)
                    if others is not None:
                        for required in others:  # a loop, not all(…): half this method's time
                            if present.isdisjoint(required):
                                break
                        else:
                            found.add(index)
                    else:
                        found.add(index)
        self._asked, self._answer = texts, frozenset(found)
        return found
