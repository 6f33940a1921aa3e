"""Topics: the components and features a PR is about (KV Offload, SWA, P/D, MooncakeStore).

Names are read from the title, through the topic table (`schemas/topics.ttl` plus the
user's), which also folds aliases into one topic (`PD` is `P/D`), and from the shapes
component names take: acronyms (`TOCTOU`, `FP8`), product names in mixed case
(`MooncakeStore`, `DeepSeek-V4`) and, in a Chinese title, hyphenated Latin terms
(`routed-experts`), and pairs of names (`LRU/ARC`). Code is never a topic: backticked
spans are skipped, and so are identifiers (`module_path`, `LookupResult`).
"""

from __future__ import annotations

import regex

from kgraph.catalog import Knowledge
from kgraph.extract.prose import prose
from kgraph.model import Entry, Field, Kind, Mention

WORD = regex.compile(r"(?<![\w./\-])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![\w/(\-]|\.\w)")
# Shapes of one word, used with `fullmatch`; `^` keeps a search linear too.
ACRONYM = regex.compile(r"^[A-Z][A-Z0-9]{1,7}")
MIXED_CASE = regex.compile(r"^[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
HYPHENATED = regex.compile(r"^[a-z][a-z0-9]+(?:-[a-z0-9]+)+")
CJK = regex.compile(r"\p{Han}")
# `LRU/ARC`, `P/D`: two component names joined by a slash (a path has small letters or a dot).
PAIR = regex.compile(r"(?<![\w./\-])[A-Z][A-Za-z0-9]*+/[A-Z][A-Za-z0-9]*+(?![\w/(\-]|\.\w)")
NOT_TOPICS = frozenset(
    "PR PRS API ID IDS OK TODO WIP CI CD UI URL HTTP JSON YAML CLI API NOTE FIX BUG TEST DOC "
    "DOCS README".split()
)
# A mixed-case word ending like a class name is an identifier, not a component.
CLASS_SUFFIX = regex.compile(
    r"(?:Manager|Result|Config|Params|Spec|Request|Response|Handler|Pool|Factory|Mixin|Base|Error"
    r"|Exception|Status|Phase|Worker|Scheduler|Processor|Runner|Queue|Buffer|Allocator|Output"
    r"|Input|Metadata|Info|State|Mode|Type|Kind|Dict|List|Map|Set|Args|Options|Impl|Proxy"
    r"|Wrapper|Helper|Utils?|Builder|Loader|Reader|Writer|Tracker|Monitor|Group|Tensor|Layer"
    r"|Slot|Event|Lock|Context|Client|Server|Adder|Batch|Stats|Table|Index|Key|Entry|Item)$"
)


def extract_topics(entry: Entry, knowledge: Knowledge) -> list[Mention]:
    """Topics of the title: table names and component shapes.

    The title says what the PR is about; a summary names many components in passing
    (on the seeds, summary names added 11 topics and no gold one), so it is not read.
    """
    return _topics(entry.title, Field.TITLE, knowledge)


def _topics(text: str, field: Field, knowledge: Knowledge) -> list[Mention]:
    masked = prose(text).masked
    mentions: list[Mention] = []
    taken: list[tuple[int, int]] = []
    if knowledge.topic_names is not None:
        for match in knowledge.topic_names.finditer(masked):
            start, end = match.span()
            label = knowledge.canonical_topic(match.group(0))
            mentions.append(Mention(Kind.TOPIC, label, text[start:end], start, end, field))
            taken.append(match.span())
    chinese = bool(CJK.search(text))
    for match in PAIR.finditer(masked):
        if not any(a < match.end() and match.start() < b for a, b in taken):
            word = match.group(0)
            mentions.append(Mention(Kind.TOPIC, word, word, match.start(), match.end(), field))
            taken.append(match.span())
    for match in WORD.finditer(masked):
        if any(a < match.end() and match.start() < b for a, b in taken):
            continue
        word = match.group(0)
        if _component(word, chinese):
            mentions.append(Mention(Kind.TOPIC, word, word, match.start(), match.end(), field))
    return sorted(mentions)


def _component(word: str, chinese: bool) -> bool:
    if word.upper() in NOT_TOPICS or "x" * len(word) == word:
        return False
    if ACRONYM.fullmatch(word):
        return True
    if MIXED_CASE.fullmatch(word) and not word.isupper():
        return not CLASS_SUFFIX.search(word.split("-")[0])
    return chinese and bool(HYPHENATED.fullmatch(word))
