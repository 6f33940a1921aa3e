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
from collections.abc import Iterable, Mapping
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


# Where a name is in a change, as bits of one mask: matching asks a dozen names of hundreds
# of files, and one dictionary lookup a name and file answers all five questions.
ADDED, REMOVED, CONTEXT, DEFINES, UNDEFINES = 1, 2, 4, 8, 16
TOUCHED = ADDED | REMOVED | CONTEXT
_FIELDS = (ADDED, REMOVED, DEFINES, UNDEFINES, CONTEXT)  # the order of the JSON strings


@dataclass(frozen=True, slots=True)
class CommitTokens:
    """The identifiers (three or more characters, or numbers of four digits or more) of
    changed lines: one file's, or, as `union` makes them, several files' of one commit.
    Each maps to where it is: on an added or a removed line, in a hunk header's definition
    line, defined on an added or a removed line."""

    masks: Mapping[str, int]

    def has(self, name: str, bits: int) -> bool:
        return bool(self.masks.get(name, 0) & bits)

    def names(self, bits: int) -> frozenset[str]:
        return frozenset(n for n, m in self.masks.items() if m & bits)

    @property
    def defined(self) -> frozenset[str]:
        """Defined on an added line and on no removed line: introduced, not moved."""
        return frozenset(n for n, m in self.masks.items() if m & DEFINES and not m & UNDEFINES)

    def to_json(self) -> list[str]:
        return [" ".join(sorted(self.names(bit))) for bit in _FIELDS]

    @staticmethod
    def from_json(value: object) -> CommitTokens | None:
        if not (isinstance(value, list) and len(value) == len(_FIELDS)):
            return None
        if not all(isinstance(v, str) for v in value):
            return None
        masks: dict[str, int] = {}
        for bit, names in zip(_FIELDS, value, strict=True):
            for name in names.split():
                masks[name] = masks.get(name, 0) | bit
        return CommitTokens(masks)


EMPTY = CommitTokens({})


def union(parts: Iterable[CommitTokens]) -> CommitTokens:
    """The tokens of several files of one commit as one."""
    parts = list(parts)
    if not parts:
        return EMPTY
    if len(parts) == 1:
        return parts[0]
    masks: dict[str, int] = {}
    for part in parts:
        for name, mask in part.masks.items():
            masks[name] = masks.get(name, 0) | mask
    return CommitTokens(masks)


def tokens_of(files: Iterable[FileDiff]) -> CommitTokens:
    masks: dict[str, int] = {}
    for diff in files:
        if diff.unread or diff.binary:
            continue
        _collect(diff.added, masks, ADDED, DEFINES)
        _collect(diff.removed, masks, REMOVED, UNDEFINES)
        for name in IDENTIFIER.findall("\n".join(diff.contexts)):
            masks[name] = masks.get(name, 0) | CONTEXT
    return CommitTokens(masks)


def _collect(lines: list[tuple[int, str]], masks: dict[str, int], seen: int, defines: int) -> None:
    if not lines:
        return
    text = "\n".join(line for _, line in lines)
    for name in set(IDENTIFIER.findall(text)):
        masks[name] = masks.get(name, 0) | seen
    for found in DEFINITION.finditer(text):
        name = next(g for g in found.groups() if g)
        masks[name] = masks.get(name, 0) | defines
