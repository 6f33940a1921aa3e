"""Names written without backticks: `gemma4_mm.py 里的…`, `the new sync_dp_state() call`.

Reviewers do not always backtick. A file name with a source or config extension is a file
wherever it stands in prose, and it is classified by the same rules as a backticked span
(`kgraph.extract.code.classify`), so a bare name and a backticked one are never two kinds.
Identifiers are riskier: "DeepSeek" and "FlashInfer" have the shape of class names but are
products. So a bare identifier is a symbol here only when its own shape says code:

- a call, `sync_dp_state()`;
- a dotted name, `Scheduler.schedule`, `self.block_pool`;
- a leading underscore, `_maximal_prefix_lookup`.

Other `CamelCase` and `snake_case` words become *candidates* (`detail="bare:candidate"`):
the corpus decides on them (`kgraph.recognize`), keeping one only where the same name is
backticked elsewhere or a `--source` checkout defines it.

Not caught: URLs and their pieces (`docs.vllm.ai/en/latest`), domain names, version strings
(`v0.8.1`), numbers with a dot (`1.5`), and anything inside a backticked span. Chinese text
has no spaces, so a name ends where its run of ASCII letters, digits, `_`, `.`, `/`, `-`
ends: `gemma4_mm.py里` is `gemma4_mm.py`.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

from kgraph.extract import code
from kgraph.model import Entry, Field, Kind, Mention

# How a mention of a name was recognised; `kg:recognizedBy` in the graph.
BACKTICK, SHAPE, CANDIDATE = "backtick", "bare:shape", "bare:candidate"

# A run of characters that names can be made of; ASCII only, so CJK text ends it.
RUN = regex.compile(r"[A-Za-z0-9_./\-:@~+]++")
URL_LIKE = regex.compile(r"://|^www\.|@", regex.IGNORECASE)
# The characters of a path segment; a run is cut into paths at the others (`a.py:12`).
SEGMENT = regex.compile(r"[A-Za-z0-9_.\-]++")
EXTENSION = regex.compile(r"[A-Za-z][A-Za-z0-9]{0,9}")
# Where a run is cut into pieces that may each be a path (`a.py:12`, `x.py@main`).
PIECE_BREAK = regex.compile(r"[:@~+]")
TOP_LEVEL_DOMAINS = frozenset(
    "com org net io ai dev app co edu gov cn uk de fr jp ru info me tech cloud so sh".split()
)
# Web frameworks named like files: "Node.js" is a runtime, `node.js` a file.
NAMED_LIKE_FILES = regex.compile(r"^[A-Z][A-Za-z0-9]*\.(?:js|ts)$")
IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*+"
CALL = regex.compile(rf"(?<![A-Za-z0-9_.]){IDENTIFIER}(?:\.{IDENTIFIER})*+\(\)")
DOTTED = regex.compile(
    rf"(?<![A-Za-z0-9_./\-]){IDENTIFIER}(?:\.{IDENTIFIER})++(?![A-Za-z0-9_(/\-])"
)
LEADING_UNDERSCORE = regex.compile(
    r"(?<![A-Za-z0-9_./\-])_[A-Za-z][A-Za-z0-9_]*+(?![A-Za-z0-9_(.])"
)
# A capitalised word; CamelCase when a small letter is followed by a capital
# (`LookupResult`, `SimpleCPUOffload`), checked on the word so that the search stays linear.
CAPITALISED = regex.compile(r"(?<![A-Za-z0-9_./\-])[A-Z][A-Za-z0-9]*+(?![A-Za-z0-9_(./\-])")
INNER_CAPITAL = regex.compile(r"[a-z][A-Z]")
# snake_case with an inner underscore (`transfer_jobs`).
SNAKE = regex.compile(r"(?<![A-Za-z0-9_./\-])[a-z][a-z0-9]*+(?:_[a-z0-9]++)++(?![A-Za-z0-9_(./\-])")
ALL_CAPS = regex.compile(r"^[A-Z0-9_]+$")


def extract_bare_names(entry: Entry) -> list[Mention]:
    """Files, symbols and symbol candidates named in prose without backticks."""
    mentions: list[Mention] = []
    for field, text in ((Field.TITLE, entry.title), (Field.TEXT, entry.text)):
        mentions.extend(_bare(text, field, entry.repo))
    return mentions


def _bare(text: str, field: Field, repo: str | None) -> Iterator[Mention]:
    # Code spans are blanked, backticks included: nothing inside one is bare.
    masked = code.CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)
    taken: list[tuple[int, int]] = []
    for run in RUN.finditer(masked):
        start, end = run.span()
        word = run.group(0)
        if "." not in word or URL_LIKE.search(word):
            continue  # a path's last segment has an extension: without a dot, no path
        for at, name in _paths(word, start):
            if _domain(name) or NAMED_LIKE_FILES.match(name):
                continue
            kind, key, _detail = code.classify(name)
            if kind is Kind.FILE:
                taken.append((at, at + len(name)))
                yield Mention(Kind.FILE, key, name, at, at + len(name), field, "bare")
    for pattern in (CALL, DOTTED, LEADING_UNDERSCORE, CAPITALISED, SNAKE):
        for match in pattern.finditer(masked):
            start, end = match.span()
            if any(a < end and start < b for a, b in taken) or _in_url(masked, start):
                continue
            name = match.group(0)
            shaped = pattern is not CAPITALISED and pattern is not SNAKE
            if pattern is CAPITALISED and not INNER_CAPITAL.search(name):
                continue
            if pattern is DOTTED and not _code_like_dotted(name):
                continue
            if pattern is CALL and not _code_like_call(name):
                continue
            if ALL_CAPS.match(name.replace(".", "")):
                continue  # constants and environment variables are not followed bare
            kind, key, _detail = code.classify(name, "", repo)
            if kind not in (Kind.SYMBOL, Kind.EXTERNAL_SYMBOL):
                continue
            taken.append((start, end))
            how = SHAPE if shaped else CANDIDATE
            if kind is Kind.EXTERNAL_SYMBOL and not shaped:
                continue  # a bare `Counter` is the word, not collections.Counter
            yield Mention(kind, key, name, start, end, field, how)


def _paths(run: str, offset: int) -> Iterator[tuple[int, str]]:
    """The pieces of a run shaped like a file path, with their offsets: segments of name
    characters split by `/`, the last with an extension of letters (`a/b.py`, `x.cu`)."""
    at = 0
    for piece in PIECE_BREAK.split(run):
        start = at
        at += len(piece) + 1
        name = piece.rstrip(".-")
        lead = len(name) - len(name.lstrip("(-"))
        name = name[lead:]
        segments = name.split("/")
        if segments[0] in (".", ".."):
            segments = segments[1:]
        stem, dot, extension = segments[-1].rpartition(".") if segments else ("", "", "")
        if (
            not dot
            or not stem.strip(".")
            or ".." in name.lstrip("./")
            or not EXTENSION.fullmatch(extension)
            or not all(s and SEGMENT.fullmatch(s) and s.strip(".") for s in segments)
        ):
            continue
        yield offset + start + lead, name


def _domain(name: str) -> bool:
    """`docs.vllm.ai/en/latest/x.md` or `github.com`: a host, or a path under one."""
    segments = [s for s in name.split("/") if s not in (".", "..")]
    head = segments[0]
    if "." not in head:
        return False
    return len(segments) > 1 or head.rsplit(".", 1)[-1].lower() in TOP_LEVEL_DOMAINS


def _code_like_dotted(name: str) -> bool:
    """`Scheduler.schedule`, `torch.cuda`-like names with a class or module head; not `e.g`,
    `vllm.ai`, nor an attribute of a local variable (`req.block_hashes`, `self.x`), which
    names no definition."""
    parts = name.removesuffix("()").split(".")
    if parts[-1].lower() in TOP_LEVEL_DOMAINS or any(len(p) < 2 for p in parts):
        return False
    return parts[0][0].isupper() and not parts[0].isupper()


def _code_like_call(name: str) -> bool:
    """`sync_dp_state()`, `LookupResult()`, `Foo.bar()`: not `result()`, a word called."""
    callee = name.removesuffix("()")
    if "." in callee:
        return _code_like_dotted(callee)
    return "_" in callee or any(c.isupper() for c in callee[1:]) or callee[0].isupper()


def _in_url(masked: str, position: int) -> bool:
    """Inside a run of non-blank characters that holds `://`."""
    start = position
    while start > 0 and not masked[start - 1].isspace():
        start -= 1
    end = masked.find(" ", position)
    return "://" in masked[start : end if end >= 0 else len(masked)]
