"""What a commit's changed lines say, as sets of identifiers: what matching compares a
review with.

A review names the code its PR changed: `check_shm_free_space`, `transfer_jobs`. Those
names are in the PR's added or removed lines; and when the PR introduced a name, its
added lines define it (`def check_shm_free_space`, `transfer_jobs: list[int] = …`) where
no removed line did. A later fix that only calls the function has the name in its lines
but defines nothing: that is how the PR is told from its follow-ups.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kgraph.history.log import FileDiff

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}|(?<![\w.])[0-9]{4,}(?![\w.])")
# A line that defines a name, in the languages a review names code of: a keyword
# definition (`def`, `class`, `struct`, `fn`…), an assignment (`x = …`, `self.x: T = …`;
# not a keyword argument `x=…` of a call, not `==`), an annotated field or YAML key
# (`x: int`), a C macro.
DEFINITION = re.compile(
    r"^[ \t]*(?:(?:export|pub|public|private|protected|static|async|inline|virtual)[ \t]+)*"
    r"(?:def|class|struct|union|enum|fn|func|function|interface|trait|type|object)[ \t]+"
    r"([A-Za-z_]\w*)"
    r"|^[ \t]*(?:self\.|this\.)?([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?[ \t]=(?!=)"
    r"|^[ \t]*(?:self\.)?([A-Za-z_]\w*)[ \t]*:[ \t]*(?:[A-Za-z_\"'\[(]|$)"
    r"|^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class CommitTokens:
    """The identifiers (three or more characters) of changed lines: one file's, or, as
    `union` makes them, several files' of one commit."""

    added: frozenset[str]
    removed: frozenset[str]
    defined_added: frozenset[str] = frozenset()  # defined on an added line
    defined_removed: frozenset[str] = frozenset()  # defined on a removed line
    context: frozenset[str] = frozenset()  # in the definition lines of hunk headers

    @property
    def changed(self) -> frozenset[str]:
        return self.added | self.removed

    @property
    def touched(self) -> frozenset[str]:
        """On a changed line, or naming the definition a changed line is in."""
        return self.added | self.removed | self.context

    @property
    def defined(self) -> frozenset[str]:
        """Defined on an added line and on no removed line: introduced, not moved."""
        return self.defined_added - self.defined_removed

    def to_json(self) -> list[str]:
        return [" ".join(sorted(s)) for s in (self.added, self.removed, self.defined_added,
                                               self.defined_removed, self.context)]  # fmt: skip

    @staticmethod
    def from_json(value: object) -> CommitTokens | None:
        if not (isinstance(value, list) and len(value) == 5):
            return None
        if not all(isinstance(v, str) for v in value):
            return None
        return CommitTokens(*(frozenset(v.split()) for v in value))


EMPTY = CommitTokens(frozenset(), frozenset())


def union(parts: Iterable[CommitTokens]) -> CommitTokens:
    """The tokens of several files of one commit as one."""
    parts = list(parts)
    if not parts:
        return EMPTY
    if len(parts) == 1:
        return parts[0]
    return CommitTokens(
        frozenset().union(*(p.added for p in parts)),
        frozenset().union(*(p.removed for p in parts)),
        frozenset().union(*(p.defined_added for p in parts)),
        frozenset().union(*(p.defined_removed for p in parts)),
        frozenset().union(*(p.context for p in parts)),
    )


def tokens_of(files: Iterable[FileDiff]) -> CommitTokens:
    added: set[str] = set()
    removed: set[str] = set()
    defined_added: set[str] = set()
    defined_removed: set[str] = set()
    context: set[str] = set()
    for diff in files:
        if diff.unread or diff.binary:
            continue
        _collect(diff.added, added, defined_added)
        _collect(diff.removed, removed, defined_removed)
        context.update(IDENTIFIER.findall("\n".join(diff.contexts)))
    return CommitTokens(
        frozenset(added),
        frozenset(removed),
        frozenset(defined_added),
        frozenset(defined_removed),
        frozenset(context),
    )


def _collect(lines: list[tuple[int, str]], names: set[str], defined: set[str]) -> None:
    if not lines:
        return
    text = "\n".join(line for _, line in lines)
    names.update(IDENTIFIER.findall(text))
    for found in DEFINITION.finditer(text):
        defined.add(next(g for g in found.groups() if g))
