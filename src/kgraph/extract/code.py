"""Code spans: what each backticked span in a review denotes.

A reviewer backticks files, functions, classes and attributes, but also expressions,
literals, shell commands, CLI flags and names from the standard library. Only the first
group belongs to the reviewed repository; classifying every span lets the graph link PRs
through the code they share without linking them through `None` or `>=`.
"""

from __future__ import annotations

import builtins
import keyword
import sys
import unicodedata
from functools import cache, lru_cache

import regex

from kgraph.model import Entry, Field, Kind, Mention

# A span never crosses a line, is bounded, and does not start with a blank: a stray
# backtick ("a ` b `c`") then costs nothing instead of shifting every later pair.
CODE_SPAN = regex.compile(r"`(?=[^\s`])([^`\n]{1,300}+)`")

IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*+"
# A qualified name: Python's `a.b`, or C++'s `ns::Class::method` (llama.cpp, Ray's core).
SEPARATOR = r"(?:\.|::)"
DOTTED = regex.compile(rf"^{IDENTIFIER}(?:{SEPARATOR}{IDENTIFIER})*+$")
CALL = regex.compile(rf"^({IDENTIFIER}(?:{SEPARATOR}{IDENTIFIER})*+)\((.*)\)$")
PLACEHOLDER_ARG = regex.compile(  # `f(...)`, `f(*args, **kwargs)`, `f(group_ids=...)`
    r"^\s*+(?:\.\.\.|…|\*{1,2}[A-Za-z_]\w*+|[A-Za-z_]\w*+\s*+=\s*+(?:\.\.\.|…))?\s*+$"
)
PATH_CHARS = regex.compile(r"^[\w.@+%#~/ -]++$")
SUFFIX = regex.compile(r"\.([A-Za-z0-9]{1,10})$")
DIRECTORY = regex.compile(r"^(?:[\w.@+-]+/)+$")  # a trailing slash: a folder, not a file
NUMBER = regex.compile(
    r"^[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?[jJ]?$|^0[xob][0-9a-fA-F_]+$"
)
QUOTED = regex.compile(r"""^(?:[rbfuRBFU]{0,2})(["']).*\1$""")
OPERATOR = regex.compile(r"^[<>=!+\-*/%&|^~@:.?]+$")
CLI_FLAG = regex.compile(r"^--?[A-Za-z][\w-]*+(?:[= ]\S*)?$")
ENV_ASSIGNMENT = regex.compile(r"^[A-Z][A-Z0-9_]*+=\S*$")
ALL_CAPS = regex.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
ENV_CONTEXT = regex.compile(
    r"(?:环境变量|env(?:ironment)?\s+var(?:iable)?s?)\s*$", regex.IGNORECASE
)

SOURCE_SUFFIXES = frozenset(
    "py pyi pyx pxd cu cuh cpp cc cxx c h hpp hh hxx rs go java kt scala ts tsx js jsx mjs "
    "rb php swift m mm cs sh bash zsh ps1 md rst proto sql cmake mk ipynb".split()
)
DATA_SUFFIXES = frozenset("json yaml yml toml txt csv tsv ini cfg conf lock log xml html".split())
KEYWORD_OPERATORS = frozenset(
    {"and", "or", "not", "is", "in", "is not", "not in", "is None", "is not None", "lambda",
     "if", "else", "await", "async", "yield", "return", "pass", "del", "assert"}
)  # fmt: skip
LITERAL_WORDS = frozenset(
    {"None", "True", "False", "NULL", "null", "true", "false", "nullptr", "NaN", "nan", "inf",
     "..."}
)  # fmt: skip
COMMANDS = frozenset(
    "python python3 pytest pip pip3 uv git bash sh zsh curl wget docker kubectl make cmake "
    "vllm sglang torchrun export cd ls cat grep sed awk nvidia-smi conda npm node cargo go "
    "ruff mypy pre-commit bazel ninja gcc g++ nvcc lm_eval huggingface-cli hf sudo".split()
)
ENV_PREFIXES = frozenset(
    "VLLM SGLANG CUDA NCCL HF HIP ROCM OMP MKL PYTORCH TRANSFORMERS LD PYTHON NVIDIA "
    "TOKENIZERS XLA TPU RAY UCX TRITON HUGGING GLOO MASTER WORLD LOCAL RANK".split()
)
PYTEST_NAMES = frozenset(
    {"monkeypatch", "tmp_path", "tmp_path_factory", "tmpdir", "capsys", "capfd", "caplog",
     "recwarn", "mocker", "pytestconfig", "pytester"}
)  # fmt: skip
EXTERNAL_HEADS = frozenset(
    {"pytest", "unittest", "mock", "np", "numpy", "torch", "typing_extensions", "std"}
)  # fmt: skip
NOT_STDLIB = frozenset(  # stdlib module names that reviews mostly use as variable names
    {"token", "code", "test", "tests", "array", "select", "site", "parser", "symbol", "keyword",
     "this", "cmd", "config", "resource", "types", "string", "queue", "signal", "platform",
     "trace", "numbers", "operator", "stat", "grp", "pwd", "imp", "nt", "posix", "mailbox"}
)  # fmt: skip
STDLIB_CLASSES = frozenset(
    """Future Event Lock RLock Condition Semaphore BoundedSemaphore Barrier Thread Timer local
    ThreadPoolExecutor ProcessPoolExecutor Executor Queue SimpleQueue LifoQueue PriorityQueue
    Empty Full Path PurePath PosixPath OrderedDict defaultdict deque Counter ChainMap namedtuple
    Enum IntEnum StrEnum Flag IntFlag auto dataclass field Field fields asdict astuple replace
    partial lru_cache cached_property wraps reduce contextmanager asynccontextmanager ExitStack
    suppress nullcontext Any Optional Union Callable Iterable Iterator Generator Sequence Mapping
    MutableMapping TypeVar Generic Protocol NamedTuple TypedDict Literal Final ClassVar
    Awaitable Coroutine AsyncIterator ABC abstractmethod MagicMock AsyncMock Mock patch
    SimpleNamespace WeakValueDictionary WeakKeyDictionary WeakSet ref BytesIO StringIO
    TemporaryDirectory NamedTemporaryFile Decimal Fraction datetime timedelta timezone UUID
    ArgumentParser Namespace Logger LoggerAdapter JSONDecodeError CalledProcessError Popen
    TimeoutExpired CancelledError InvalidStateError""".split()
)


@cache
def _builtins() -> frozenset[str]:
    return frozenset(n for n in dir(builtins) if not n.startswith("_")) - {
        "copyright",
        "credits",
        "license",
        "exit",
        "quit",
        "help",
    }


@cache
def _stdlib_modules() -> frozenset[str]:
    return frozenset(sys.stdlib_module_names) - NOT_STDLIB


def classify(span: str, before: str = "", repo: str | None = None) -> tuple[Kind, str, str]:
    """Return (kind, key, detail) for one backticked span.

    `before` is the text just before the span (an "environment variable" cue); `repo`
    lets `VLLM_FOO` be recognised as vLLM's environment variable. The key of a file is
    its path, of a symbol its qualified name as written, without call parentheses.
    """
    cued = (
        bool(before)
        and bool(ALL_CAPS.match(span.strip()))
        and bool(ENV_CONTEXT.search(before[-30:]))
    )
    if len(span) > 200:  # not remembered: hostile input may hold thousands of long spans
        return _classified.__wrapped__(span, cued, repo)
    return _classified(span, cued, repo)


@lru_cache(maxsize=1 << 16)
def _classified(span: str, cued: bool, repo: str | None) -> tuple[Kind, str, str]:
    """`classify`, remembered: a corpus names the same identifiers over and over (a third
    of the spans of the generated 10k corpus were met before), and a span's class depends
    on the span, its repository and whether an environment-variable cue precedes it."""
    text = span.strip()
    if not text:
        return Kind.NON_ENTITY, text, "empty"
    if text in LITERAL_WORDS or NUMBER.match(text) or QUOTED.match(text) or "://" in text:
        return Kind.NON_ENTITY, text, "literal"
    if text in KEYWORD_OPERATORS or OPERATOR.match(text):
        return Kind.NON_ENTITY, text, "operator"
    if CLI_FLAG.match(text):
        return Kind.NON_ENTITY, text, "cli-flag"
    if ENV_ASSIGNMENT.match(text) or (ALL_CAPS.match(text) and _is_env_name(text, cued, repo)):
        return Kind.NON_ENTITY, text, "env-var"
    first_word = text.split(maxsplit=1)[0]
    if " " in text and (first_word in COMMANDS or first_word.startswith(("./", "$"))):
        return Kind.NON_ENTITY, text, "command"
    if DIRECTORY.match(text) or (
        "/" in text and not _path_suffix(text) and DIRECTORY.match(text + "/")
    ):
        return Kind.NON_ENTITY, text.rstrip("/"), "directory"
    if suffix := _path_suffix(text):
        if "/" in text or suffix in SOURCE_SUFFIXES:
            return Kind.FILE, text.removeprefix("./"), "path" if "/" in text else "basename"
        if suffix in DATA_SUFFIXES:
            return Kind.NON_ENTITY, text, "literal"
    if call := CALL.match(text):
        callee, args = call.group(1), call.group(2)
        if not all(PLACEHOLDER_ARG.match(a) for a in _split_args(args)):
            return Kind.NON_ENTITY, text, "expression"
        if "." in callee and callee[0].islower() and not _is_external_head(callee):
            return Kind.NON_ENTITY, text, "expression"  # a call on a local variable
        text = callee
    if DOTTED.match(text):
        if keyword.iskeyword(text):
            return Kind.NON_ENTITY, text, "operator"
        if _is_external(text):
            return Kind.EXTERNAL_SYMBOL, text, "external"
        return Kind.SYMBOL, text, "dotted" if "." in text or "::" in text else "name"
    return Kind.NON_ENTITY, text, "expression"


def _path_suffix(text: str) -> str | None:
    """The lower-cased extension when `text` is shaped like a path, else None.

    Blanks are allowed inside segments of a path with a slash (`my dir/a b.py`), never at a
    segment's edge, so `a / b.c` stays an expression.
    """
    if not PATH_CHARS.match(text) or (" " in text and "/" not in text):
        return None
    segments = text.removeprefix("./").split("/")
    if any(not s or s != s.strip() for s in segments) or not (match := SUFFIX.search(text)):
        return None
    name = segments[-1]
    return match.group(1).lower() if name[: -len(match.group(0))] else None


def _is_env_name(text: str, cued: bool, repo: str | None) -> bool:
    if cued:
        return True
    prefix = text.split("_", 1)[0]
    # The repository's own prefix: `VLLM_…` for vllm, `LLAMA_…` for llama.cpp.
    own = _LEADING_WORD.match(repo.split("/")[-1]) if repo else None
    return prefix in ENV_PREFIXES or (own is not None and prefix == own.group(0).upper())


_LEADING_WORD = regex.compile(r"[A-Za-z0-9]++")


def _split_args(args: str) -> list[str]:
    """Top-level comma split; nested brackets make a real argument, not a placeholder."""
    if any(c in args for c in "()[]{}\"'"):
        return [args, "("]  # the "(" never matches a placeholder
    return args.split(",") if args.strip() else []


def _is_external_head(dotted: str) -> bool:
    head = regex.split(SEPARATOR, dotted, maxsplit=1)[0]
    return head in _stdlib_modules() or head in EXTERNAL_HEADS


def _is_external(name: str) -> bool:
    if "." in name or "::" in name:
        return _is_external_head(name)
    return name in _builtins() or name in PYTEST_NAMES or name in STDLIB_CLASSES


# "`policies/lru.py` 的 `_is_current()`", "`base_worker.py` 中 `a`、`b`", "`x` in `y.py`"
IN_FILE = regex.compile(r"^\s*(?:的|中的?|里的?|内的?|:|'s)\s*$")
LIST_SEPARATOR = regex.compile(r"^\s*(?:[、,，/]|和|与|及|以及|and|or|, and)\s*$")


def extract_code_spans(entry: Entry) -> list[Mention]:
    """Every backticked span of the title and summary, classified.

    A symbol written right after a file ("`lru.py` 的 `evict()`", or a list of symbols
    after it) carries `detail="in:<path>"`: the review says where it is defined.
    """
    mentions: list[Mention] = []
    for field, text in ((Field.TITLE, entry.title), (Field.TEXT, entry.text)):
        home: str | None = None  # the file that the previous span is, or is defined in
        previous: Mention | None = None
        for match in CODE_SPAN.finditer(text):
            start, end = match.span(1)
            kind, key, detail = classify(
                match.group(1), text[max(0, start - 31) : start - 1], entry.repo
            )
            if not key.isascii():  # `café.py` typed on a Mac (NFD) is the same file
                key = unicodedata.normalize("NFC", key)
            gap = text[previous.end + 1 : start - 1] if previous else ""
            if (
                kind is Kind.SYMBOL
                and home
                and previous
                and (
                    (previous.kind is Kind.FILE and IN_FILE.match(gap))
                    or (previous.kind is Kind.SYMBOL and LIST_SEPARATOR.match(gap))
                )
            ):
                detail = f"in:{home}"
            home = key if kind is Kind.FILE else (home if detail.startswith("in:") else None)
            previous = Mention(kind, key, match.group(1), start, end, field, detail)
            mentions.append(previous)
    return mentions
