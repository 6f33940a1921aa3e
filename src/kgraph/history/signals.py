"""Design signals in a commit's diff: what the change itself says of its design, whatever
its review says.

A review may call a change "fail fast" or say nothing of it; the diff shows the `raise`
that was added. Four signals are read from the changed lines of Python files, each a
fact of the diff alone, checked against the old side so that a moved line is not news:

- `guard-raise`: a `raise …Error(…)` added under an added `if` in code that is not a
  test: a check that rejects bad input where it arrives (fail-fast validation);
- `assert-added`: an `assert` statement added to code that is not a test (an invariant
  stated as an assertion; every test asserts, so tests say nothing);
- `parametrize-added`: a `@pytest.mark.parametrize` table added to a test (a test matrix);
- `default-parameter-added`: a parameter with a default added to the signature of a
  function the old side already had (an existing API extended, old callers unchanged).

This module knows nothing of patterns: `kgraph.commits` maps each signal to the pattern
it is evidence of, with a weight measured on labelled reviews (`bench/change_signals.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kgraph.history.log import FileDiff

MAX_TEXT = 160  # characters of the evidence line kept
MAX_PER_KIND = 3  # signals of one kind kept per commit: evidence, not an inventory
GUARD_REACH = 4  # an `if` at most this many lines above the `raise`
SIGNATURE_REACH = 12  # lines of a signature after its `def`

_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|testing)/|(?:^|/)test_[^/]*\.py$|_test\.py$")
# Errors that say the input is wrong (not RuntimeError, NotImplementedError: the
# program's own state, or a gap).
_RAISE = re.compile(
    r"^\s*raise\s+(?:[\w.]*\.)?(?:ValueError|TypeError|\w*Validation\w*|\w*Invalid\w*)\s*\("
)
_IF = re.compile(r"^\s*(?:el)?if\s.+:\s*(?:#.*)?$")
_ASSERT = re.compile(r"^\s*assert\s+[^=]")
_PARAMETRIZE = re.compile(r"^\s*@pytest\.mark\.parametrize\s*\(")
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\((.*)$")
_DEFAULTED = re.compile(r"^\s*\*?([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")


@dataclass(frozen=True, slots=True, order=True)
class Signal:
    """One design signal of a commit: what kind, and the added line that shows it."""

    kind: str
    path: str
    line: int  # in the file as the commit left it
    text: str

    def to_json(self) -> list[object]:
        return [self.kind, self.path, self.line, self.text]

    @staticmethod
    def from_json(value: Sequence[object]) -> Signal:
        kind, path, line, text = value
        return Signal(str(kind), str(path), int(str(line)), str(text))


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def signals_of(diffs: Iterable[FileDiff]) -> tuple[Signal, ...]:
    """The design signals of one commit's diff (`-U0`, as `kgraph.history.log` reads it)."""
    found: list[Signal] = []
    for diff in diffs:
        if diff.unread or diff.binary or not diff.path.endswith(".py"):
            continue
        found.extend(_file_signals(diff))
    kept: list[Signal] = []
    counts: dict[str, int] = {}
    for signal in sorted(found):
        counts[signal.kind] = counts.get(signal.kind, 0) + 1
        if counts[signal.kind] <= MAX_PER_KIND:
            kept.append(signal)
    return tuple(kept)


def _file_signals(diff: FileDiff) -> Iterable[Signal]:
    removed = {text.strip() for _, text in diff.removed}
    added = {number: text for number, text in diff.added}
    test = is_test_path(diff.path)

    def signal(kind: str, number: int) -> Signal:
        return Signal(kind, diff.path, number, added[number].strip()[:MAX_TEXT])

    for number, text in diff.added:
        if text.strip() in removed:
            continue  # moved or re-indented, not new
        if test:
            if _PARAMETRIZE.match(text):
                yield signal("parametrize-added", number)
            continue
        if _RAISE.match(text) and _guarded(added, number):
            yield signal("guard-raise", number)
        elif _ASSERT.match(text):
            yield signal("assert-added", number)
    if not test:
        yield from _defaults_added(diff, added, signal)


def _guarded(added: Mapping[int, str], number: int) -> bool:
    """Is an added `if` just above the added `raise` (the check and its rejection)?"""
    indent = len(added[number]) - len(added[number].lstrip())
    for above in range(number - 1, max(0, number - GUARD_REACH) - 1, -1):
        text = added.get(above)
        if text is None:
            return False  # the lines above were there before: not a new check
        if _IF.match(text) and len(text) - len(text.lstrip()) < indent:
            return True
    return False


def _defaults_added(
    diff: FileDiff, added: Mapping[int, str], signal: Callable[[str, int], Signal]
) -> Iterable[Signal]:
    """A parameter with a default added to a function whose old signature the diff
    removed (the function existed; its callers need not change)."""
    old = _signatures(dict(diff.removed))
    if not old:
        return
    new = _signatures(added)
    for name, (params, first) in sorted(new.items()):
        before = old.get(name)
        if before is None:
            continue
        gained = [p for p in params if p[0] not in {q[0] for q in before[0]}]
        if gained and all(defaulted for _, defaulted in gained):
            yield signal("default-parameter-added", first)


def _signatures(lines: Mapping[int, str]) -> dict[str, tuple[list[tuple[str, bool]], int]]:
    """Each `def` among consecutive `lines`: its parameters (name, has a default) as far
    as the signature is among them, and its line."""
    found: dict[str, tuple[list[tuple[str, bool]], int]] = {}
    for number, text in sorted(lines.items()):
        match = _DEF.match(text)
        if match is None:
            continue
        parts = [match.group(3)]
        at = number
        while not _ends_signature(parts[-1]) and at - number < SIGNATURE_REACH:
            at += 1
            if at not in lines:
                break
            parts.append(lines[at])
        if not _ends_signature(parts[-1]):
            continue  # the signature is not all among the changed lines: unknown
        found[match.group(2)] = (_parameters(" ".join(parts)), number)
    return found


def _ends_signature(line: str) -> bool:
    """Does a signature end on this line: `)` then an optional `-> T`, then `:` (and a
    comment)? Read by hand: a pattern searched for this backtracks on a line of `)`s."""
    code = line.split("#", 1)[0].rstrip()
    if not code.endswith(":"):
        return False
    head = code[:-1].rstrip()
    if "->" in head:
        head = head[: head.rindex("->")].rstrip()
    return head.endswith(")")


def _parameters(signature: str) -> list[tuple[str, bool]]:
    """Top-level parameters of `a, b: int = 1, *args) -> X:` as (name, has a default)."""
    depth, current, params = 0, "", []
    for char in signature:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
        if char == "," and depth == 0:
            params.append(current)
            current = ""
        else:
            current += char
    params.append(current)
    out = []
    for param in params:
        param = param.strip()
        if not param or param in ("*", "/"):
            continue
        name = re.match(r"\**([A-Za-z_]\w*)", param)
        if name is None:
            continue
        out.append((name.group(1), bool(_DEFAULTED.match(param)) or param.startswith("*")))
    return out
