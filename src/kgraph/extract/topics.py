"""Topics: the components and features a PR is about (KV Offload, SWA, P/D, MooncakeStore).

Names are read from the title, through the topic table (`schemas/topics.ttl` plus the
user's), which also folds aliases into one topic (`PD` is `P/D`) and knows the libraries
whose names are plain words (`gloo`, `safetensors`, `Ray`), and from the shapes component
names take: acronyms (`TOCTOU`, `FP8`; `GPUs` is `GPU`), product names in mixed case
(`MooncakeStore`, `DeepSeek-V4`), named APIs (`Responses API`) and, in a Chinese title,
hyphenated Latin terms (`routed-experts`, `prefix-LM`), and pairs of names (`LRU/ARC`, and
`Mamba/线性注意力`, where the slash does not make a path). Code is never a topic: backticked
spans are skipped, and so are identifiers (`module_path`, `LookupResult`, `KVBlockZeroer`),
values (`NaN`) and the project's own name (`vLLM`); a connector or executor a user picks by
name (`OffloadingConnector`, `UniProcExecutor`) is a component.
"""

from __future__ import annotations

import regex

from kgraph.catalog import Knowledge
from kgraph.extract.prose import prose
from kgraph.model import Entry, Field, Kind, Mention

# A slash joins a word to a path, unless the other side is not Latin (`Mamba/线性注意力`).
WORD = regex.compile(
    r"(?<![\w.\-])(?<![A-Za-z0-9_./\-]/)[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"
    r"(?![\w(\-]|/[A-Za-z0-9_./\-]|\.\w)"
)
# Shapes of one word, used with `fullmatch`; `^` keeps a search linear too.
ACRONYM = regex.compile(r"^[A-Z][A-Z0-9]{1,7}")
VERSION = regex.compile(r"^[Vv][0-9]+")  # `V2` of Model Runner V2: a version, not a name
PLURAL_ACRONYM = regex.compile(r"^[A-Z][A-Z0-9]{1,7}s")
MIXED_CASE = regex.compile(r"^[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
HYPHENATED = regex.compile(r"^[a-z][a-z0-9]+(?:-[A-Za-z0-9]+)+")
CJK = regex.compile(r"\p{Han}")
# `LRU/ARC`, `P/D`: two component names joined by a slash (a path has small letters or a dot).
PAIR = regex.compile(r"(?<![\w./\-])[A-Z][A-Za-z0-9]*+/[A-Z][A-Za-z0-9]*+(?![\w/(\-]|\.\w)")
# Words of the change itself, values (`NaN`, `None`) and the projects' own names are never
# what a PR is about.
NOT_TOPICS = frozenset(
    "PR PRS API ID IDS OK TODO WIP CI CD UI URL HTTP JSON YAML CLI API NOTE FIX BUG TEST DOC "
    "DOCS README NAN INF NONE NULL TRUE FALSE VLLM SGLANG SGL".split()
)
# A mixed-case word ending like a class name is an identifier, not a component.
CLASS_SUFFIX = regex.compile(
    r"(?:Manager|Result|Config|Params|Spec|Request|Response|Handler|Pool|Factory|Mixin|Base|Error"
    r"|Exception|Status|Phase|Worker|Scheduler|Processor|Runner|Queue|Buffer|Allocator|Output"
    r"|Input|Metadata|Info|State|Mode|Type|Kind|Dict|List|Map|Set|Args|Options|Impl|Proxy"
    r"|Wrapper|Helper|Utils?|Builder|Loader|Reader|Writer|Tracker|Monitor|Group|Tensor|Layer"
    r"|Slot|Event|Lock|Context|Client|Server|Adder|Batch|Stats|Table|Index|Key|Entry|Item"
    r"|Strategy|Policy)$"
)
# A compound whose last word is an agent noun of six letters or more names a class that
# does something (`KVBlockZeroer`, `TokenizerManager`); `FlashInfer` is a product.
AGENT_NOUN = regex.compile(r"(?<=[a-zA-Z0-9])[A-Z][a-z]{3,}(?:er|or)$")
# ... except the classes a user picks by name in the configuration, which are components
# (`kv_connector="OffloadingConnector"`, `distributed_executor_backend="uni"`):
# `MultiConnector`, `UniProcExecutor`.
PLUGGABLE = regex.compile(r"(?<=[a-zA-Z0-9])(?:Connector|Executor)$")
# `Responses API`, `Completions API`: a named API is one topic.
NAMED_API = regex.compile(r"(?<![\w./\-])[A-Z][A-Za-z0-9]+ API\b")


def extract_topics(entry: Entry, knowledge: Knowledge) -> list[Mention]:
    """Topics of the title: table names and component shapes.

    The title says what the PR is about; a summary names many components in passing, so
    it is not read. Measured with the same shapes and table: summary names added 19 topics
    to the seeds and 35 to dev, none of them gold, and on tests/data/prose/tune, whose gold
    does list summary components, 62 right against 83 wrong (a precision near 0.43). Even
    the libraries a summary names alone (psutil, pydantic) add one wrong topic to dev.
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
    for match in NAMED_API.finditer(masked):
        if (chinese or match.start() > 0) and not _overlaps(match, taken):
            word = " ".join(match.group(0).split())
            label = knowledge.canonical_topic(word)
            start, end = match.span()
            mentions.append(Mention(Kind.TOPIC, label, match.group(0), start, end, field))
            taken.append(match.span())
    for match in PAIR.finditer(masked):
        if not _overlaps(match, taken):
            word = match.group(0)
            mentions.append(Mention(Kind.TOPIC, word, word, match.start(), match.end(), field))
            taken.append(match.span())
    for match in WORD.finditer(masked):
        if _overlaps(match, taken):
            continue
        word = match.group(0)
        if _component(word, chinese):
            key = word[:-1] if PLURAL_ACRONYM.fullmatch(word) else word  # `GPUs` is `GPU`
            mentions.append(Mention(Kind.TOPIC, key, word, match.start(), match.end(), field))
    return sorted(mentions)


def _overlaps(match: regex.Match[str], taken: list[tuple[int, int]]) -> bool:
    return any(a < match.end() and match.start() < b for a, b in taken)


def _component(word: str, chinese: bool) -> bool:
    if word.upper() in NOT_TOPICS or "x" * len(word) == word or VERSION.fullmatch(word):
        return False
    if ACRONYM.fullmatch(word):
        return True
    if MIXED_CASE.fullmatch(word) and not word.isupper():
        head = word.split("-")[0]
        if PLUGGABLE.search(head):
            return True
        return not CLASS_SUFFIX.search(head) and not AGENT_NOUN.search(head)
    return chinese and bool(HYPHENATED.fullmatch(word))
