"""The plain values that flow down the pipeline: entries, mentions, problems.

Every value is immutable and ordered: hashing gives deduplication for free and ordering
gives deterministic output without a sort key at every call site. Most are frozen
dataclasses; `Mention` is a named tuple, like the graph's `Node` and `Edge`, as a large
corpus has over a million of them, and a tuple is made, pickled (between the `--jobs`
workers and the build) and compared in C, where a frozen dataclass runs Python code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple


@dataclass(frozen=True, slots=True, order=True)
class Entry:
    """One reviewed pull request as one digest tells it."""

    source: str  # the digest's file name as given on the command line ("-" for stdin)
    line: int  # 1-based line of the title in that file
    title: str
    text: str  # the summary, lines joined with "\n"
    repo: str | None = None  # "owner/name" when the digest says so
    date: str | None = None  # ISO date of the digest, when known
    url: str | None = None
    number: int | None = None  # PR number, when the digest gives it


@dataclass(frozen=True, slots=True, order=True)
class Digest:
    """One input file and what it said about itself."""

    source: str
    format: str
    date: str | None = None
    repo: str | None = None
    sha256: str = ""


class Kind(StrEnum):
    """What a mention denotes; each extractor produces one or a few of these."""

    PR_NUMBER = "pr-number"
    FILE = "file"
    SYMBOL = "symbol"
    EXTERNAL_SYMBOL = "external-symbol"
    NON_ENTITY = "non-entity"
    ISSUE = "issue"
    ADVICE = "advice"
    DECISION = "decision"
    PATTERN = "pattern"
    TOPIC = "topic"
    PERSON = "person"
    AUDIENCE = "audience"
    FOLLOW_UP = "follow-up"


class Field(StrEnum):
    TITLE = "title"
    TEXT = "text"


class Mention(NamedTuple):
    """A span of an entry that denotes something.

    `key` is the normalised identity (a path, a qualified name, an issue number, a pattern
    id); `surface` is exactly `text[start:end]` of the entry's `field`.
    """

    kind: Kind
    key: str
    surface: str
    start: int
    end: int
    field: Field = Field.TEXT
    detail: str = ""  # kind-specific: a rejected alternative, a role, an issue's repository…


class Severity(StrEnum):
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """Something wrong with the input, reported as `FILE:LINE: message`."""

    source: str
    line: int
    message: str
    severity: Severity = Severity.WARNING
    skipped_entries: int = 0  # entries this problem kept out of the graph

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.severity.value}: {self.message}"


@dataclass(frozen=True, slots=True)
class ReadResult:
    """What reading one input produced: its entries and everything that went wrong."""

    digest: Digest | None
    entries: tuple[Entry, ...] = ()
    problems: tuple[Problem, ...] = field(default_factory=tuple)


class Incomplete(Exception):
    """What an extractor found in an entry, and why that is not all there is: a user's
    catalog cue stopped for taking too long. `kgraph.extract.extract` reports the reasons
    as warnings at the entry, not as a failure of the build."""

    def __init__(self, mentions: list[Mention], reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.mentions, self.reasons = mentions, reasons
