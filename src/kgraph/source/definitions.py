"""Where a file defines things: Python through `ast`, other languages and YAML lexically.

A review names `_sliding_window_lookup`, `RequestOffloadState.__post_init__`,
`cache_policy_module_path` (an attribute set in `__init__`), `apply_admission_cap` (a
parameter) or `source_file_dependencies` (a YAML key). To say where each is defined we
record every definition a reader could mean, with a strength (`tier`) so that a real
`def` outranks a parameter of the same name. Python is parsed exactly; C/C++/CUDA, other
languages and YAML are read line by line, which finds definitions well enough to link a
review to a line and never fails on code it does not understand.
"""

from __future__ import annotations

import ast
import bisect
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

import regex


class DefKind(StrEnum):
    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"
    FIELD = "field"  # assigned or annotated in a class body: dataclass fields, enum members
    CONSTANT = "constant"  # assigned at module level
    ATTRIBUTE = "attribute"  # `self.x = …` inside a method
    KEY = "key"  # a YAML mapping key
    MACRO = "macro"  # a C preprocessor `#define`
    PARAMETER = "parameter"
    LOCAL = "local"  # assigned inside a function body


# How strongly a definition claims its name: a review's `touch` means a `def touch` before
# a field or constant called `touch` (often an alias: `SamplingParams = object`), before an
# attribute set in a method, before a parameter or a local.
TIER: dict[DefKind, int] = {
    DefKind.CLASS: 1,
    DefKind.FUNCTION: 1,
    DefKind.METHOD: 1,
    DefKind.FIELD: 2,
    DefKind.CONSTANT: 2,
    DefKind.ATTRIBUTE: 3,
    DefKind.KEY: 3,
    DefKind.MACRO: 3,
    DefKind.PARAMETER: 4,
    DefKind.LOCAL: 4,
}
WEAK_TIER = 4  # parameters and locals: names a file uses rather than defines
CALLABLE = frozenset({DefKind.CLASS, DefKind.FUNCTION, DefKind.METHOD})
MEMBER_KINDS = frozenset({DefKind.METHOD, DefKind.FIELD, DefKind.ATTRIBUTE})


@dataclass(frozen=True, slots=True, order=True)
class Definition:
    """One named thing a file defines, at a 1-based line.

    `qualname` is dotted from the outermost enclosing definition (`Class.method`,
    `Class.method.param`, `Outer.Inner.field`, `func.local`); `bases` are the simple
    names of a class's base classes, so that overrides can be told from unrelated methods.
    """

    path: str
    qualname: str
    line: int
    kind: DefKind
    bases: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def owner(self) -> str:
        return self.qualname.rsplit(".", 1)[0] if "." in self.qualname else ""

    @property
    def tier(self) -> int:
        return TIER[self.kind]


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What one file contributes to the index: its definitions and the modules it imports."""

    definitions: tuple[Definition, ...]
    imports: tuple[str, ...] = ()


PYTHON_SUFFIXES = (".py", ".pyi")
C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".inl")
OTHER_SUFFIXES = (".rs", ".go", ".java", ".kt", ".scala", ".swift", ".ts", ".tsx", ".js", ".mjs")
YAML_SUFFIXES = (".yaml", ".yml")
PARSED_SUFFIXES = PYTHON_SUFFIXES + C_SUFFIXES + OTHER_SUFFIXES + YAML_SUFFIXES


def language(path: str) -> str:
    """The language family of a file, by suffix: "python", "c", "yaml", "other" or ""."""
    lower = path.lower()
    for name, suffixes in (
        ("python", PYTHON_SUFFIXES),
        ("c", C_SUFFIXES),
        ("yaml", YAML_SUFFIXES),
        ("other", OTHER_SUFFIXES),
    ):
        if lower.endswith(suffixes):
            return name
    return ""


def is_test(path: str) -> bool:
    """A file of a test suite: under `tests/` or `test/`, or named `test_*`, `*_test.*`."""
    *folders, name = path.split("/")
    stem = name.rsplit(".", 1)[0]
    return (
        any(f in ("tests", "test", "testing") for f in folders)
        or stem.startswith("test_")
        or stem.endswith("_test")
        or stem == "conftest"
    )


MAX_PARSED_BYTES = 2_000_000  # larger files are generated or vendored: listed, not parsed


def facts_of(path: str, data: bytes) -> FileFacts:
    """The definitions of one file, chosen by its suffix; never raises on bad content."""
    if len(data) > MAX_PARSED_BYTES:
        return FileFacts(())
    text = data.decode("utf-8", "replace")
    lower = path.lower()
    if lower.endswith(PYTHON_SUFFIXES):
        return _python_facts(path, text)
    if lower.endswith(YAML_SUFFIXES):
        return FileFacts(tuple(_yaml_keys(path, text)))
    if lower.endswith(C_SUFFIXES):
        return FileFacts(tuple(_dedupe(_c_definitions(path, text))))
    if lower.endswith(OTHER_SUFFIXES):
        return FileFacts(tuple(_dedupe(_keyword_definitions(path, text))))
    return FileFacts(())


def _dedupe(definitions: Iterator[Definition]) -> list[Definition]:
    """One definition per qualified name and file: the strongest, then the first.

    `@overload` stubs, property setters and re-assignments repeat a name; a reader means
    the first line that defines it.
    """
    best: dict[str, Definition] = {}
    for d in definitions:
        old = best.get(d.qualname)
        if old is None or (d.tier, d.line) < (old.tier, old.line):
            best[d.qualname] = d
    return sorted(best.values(), key=lambda d: (d.line, d.qualname))


@dataclass(frozen=True, slots=True, order=True)
class Span:
    """The lines a class, function or method takes: where a changed line belongs."""

    first: int
    last: int
    definition: Definition


def definition_spans(path: str, data: bytes) -> list[Span]:
    """The classes, functions and methods of one file with the lines each spans, in order.

    Python's come from `ast` (decorators included); other languages' end at the brace that
    closes them, or, without braces, before the next definition. A line inside a method is
    inside its class too: `innermost` picks the method.
    """
    if len(data) > MAX_PARSED_BYTES:
        return []
    text = data.decode("utf-8", "replace")
    lower = path.lower()
    spans: list[Span] = []
    if lower.endswith(PYTHON_SUFFIXES):
        collector = _PythonCollector(path)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                collector.module(ast.parse(text))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return _lexical_spans(text, _dedupe(_keyword_definitions(path, text)))
        for d in _dedupe(iter(collector.found)):
            if d.kind in CALLABLE and (d.qualname, d.line) in collector.spans:
                first, last = collector.spans[(d.qualname, d.line)]
                spans.append(Span(first, last, d))
        return sorted(spans)
    if lower.endswith(C_SUFFIXES):
        return _lexical_spans(text, _dedupe(_c_definitions(path, text)))
    if lower.endswith(OTHER_SUFFIXES):
        return _lexical_spans(text, _dedupe(_keyword_definitions(path, text)))
    return []


def innermost(spans: list[Span], line: int) -> Definition | None:
    """The most deeply nested definition whose lines include `line`."""
    best = None
    for span in spans:
        if span.first > line:
            break
        if span.last >= line and (best is None or span.first >= best.first):
            best = span
    return best.definition if best else None


MAX_BODY_CHARS = 400_000  # a brace this far from its opening closes no definition we draw


def _lexical_spans(text: str, definitions: list[Definition]) -> list[Span]:
    callables = sorted((d for d in definitions if d.kind in CALLABLE), key=lambda d: d.line)
    starts = _line_starts(text)
    total = len(starts)
    spans = []
    for i, d in enumerate(callables):
        following = callables[i + 1].line - 1 if i + 1 < len(callables) else total
        last = _closing_line(text, starts, d.line)
        spans.append(Span(d.line, last if last is not None else max(d.line, following), d))
    return sorted(spans)


def _closing_line(text: str, starts: list[int], line: int) -> int | None:
    """The line of the `}` that closes the body opened after `line`, if it opens one."""
    begin = starts[line - 1]
    rest = text[begin : begin + 400]
    brace, semicolon = rest.find("{"), rest.find(";")
    if brace < 0 or (0 <= semicolon < brace):
        return None
    depth = 0
    end = min(len(text), begin + brace + MAX_BODY_CHARS)
    for at in range(begin + brace, end):
        char = text[at]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return _line_of(starts, at)
    return None


# --- Python ------------------------------------------------------------------------------------


def _python_facts(path: str, text: str) -> FileFacts:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in old code are not our problem
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # Python 2 files, templates, syntax from a newer Python: fall back to reading lines.
        return FileFacts(tuple(_dedupe(_keyword_definitions(path, text))))
    collector = _PythonCollector(path)
    try:
        collector.module(tree)
    except RecursionError:  # blocks nested deeper than any reader writes
        return FileFacts(tuple(_dedupe(_keyword_definitions(path, text))))
    return FileFacts(tuple(_dedupe(iter(collector.found))), tuple(sorted(collector.imports)))


class _PythonCollector:
    """Walks a module the way a reader names things: classes, their members, functions,
    their parameters and locals, module constants."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.found: list[Definition] = []
        self.imports: set[str] = set()
        self.spans: dict[tuple[str, int], tuple[int, int]] = {}  # (qualname, line) → lines
        package = module_name(path).split(".")
        self.package = package if path.endswith("__init__.py") else package[:-1]

    def add(self, qualname: str, line: int, kind: DefKind, bases: tuple[str, ...] = ()) -> None:
        self.found.append(Definition(self.path, qualname, line, kind, bases))

    def module(self, tree: ast.Module) -> None:
        for stmt in _flat(tree.body):
            self.statement(stmt, "", DefKind.CONSTANT)

    def statement(self, stmt: ast.stmt, scope: str, assigned: DefKind) -> None:
        """A statement of a module or class body (`assigned` says what its names become)."""
        prefix = f"{scope}." if scope else ""
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            self.imported(stmt)
        elif isinstance(stmt, ast.ClassDef):
            self.klass(stmt, prefix)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            kind = DefKind.METHOD if assigned is DefKind.FIELD else DefKind.FUNCTION
            self.function(stmt, prefix, kind)
        else:
            for name, line in _assigned_names(stmt):
                self.add(prefix + name, line, assigned)

    def klass(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = prefix + node.name
        self.add(qualname, node.lineno, DefKind.CLASS, _base_names(node))
        self.spans[(qualname, node.lineno)] = _extent(node)
        for stmt in _flat(node.body):
            self.statement(stmt, qualname, DefKind.FIELD)

    def function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, kind: DefKind
    ) -> None:
        qualname = prefix + node.name
        self.add(qualname, node.lineno, kind)  # the `def` line, not a decorator's
        self.spans[(qualname, node.lineno)] = _extent(node)
        arguments = [*node.args.posonlyargs, *node.args.args]
        static = any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
        )
        receiver = arguments[0].arg if kind is DefKind.METHOD and arguments and not static else None
        every = [*arguments, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]
        for arg in every:
            if arg is not None and arg.arg != receiver:
                self.add(f"{qualname}.{arg.arg}", arg.lineno, DefKind.PARAMETER)
        owner = prefix[:-1]
        for stmt in _own_statements(node.body):
            if isinstance(stmt, ast.ClassDef):
                self.klass(stmt, qualname + ".")
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self.function(stmt, qualname + ".", DefKind.FUNCTION)
            elif isinstance(stmt, ast.Import | ast.ImportFrom):
                self.imported(stmt)
            else:
                for name, line in _assigned_names(stmt):
                    self.add(f"{qualname}.{name}", line, DefKind.LOCAL)
                if receiver and owner:
                    for name, line in _receiver_attributes(stmt, receiver):
                        self.add(f"{owner}.{name}", line, DefKind.ATTRIBUTE)

    def imported(self, stmt: ast.Import | ast.ImportFrom) -> None:
        """`a.b` for `import a.b`, `a.b` and `a.b.c` for `from a.b import c`; relative
        imports made absolute from the file's own package."""
        if isinstance(stmt, ast.Import):
            self.imports.update(alias.name for alias in stmt.names)
            return
        if stmt.level:
            base = self.package[: len(self.package) - stmt.level + 1]
            head = ".".join([*base, stmt.module] if stmt.module else base)
        else:
            head = stmt.module or ""
        if head:
            self.imports.add(head)
            self.imports.update(f"{head}.{a.name}" for a in stmt.names if a.name != "*")


def _extent(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """The first and last line of a definition, its decorators included."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def _base_names(node: ast.ClassDef) -> tuple[str, ...]:
    names = []
    for base in node.bases:
        while isinstance(base, ast.Subscript):  # Generic[T], Base[int]
            base = base.value
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return tuple(names)


def _flat(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a module or class body, looking inside `if`/`try`/`with` blocks.

    `if TYPE_CHECKING:` imports and `try: … except ImportError:` fallbacks define names at
    module level as much as plain statements do.
    """
    for stmt in body:
        if isinstance(stmt, ast.If | ast.While | ast.For | ast.AsyncFor):
            yield from _flat(stmt.body)
            yield from _flat(stmt.orelse)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            yield from _flat(stmt.body)
            for handler in stmt.handlers:
                yield from _flat(handler.body)
            yield from _flat(stmt.orelse)
            yield from _flat(stmt.finalbody)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            yield from _flat(stmt.body)
        else:
            yield stmt


def _own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a function body, at any block depth, but not inside nested defs.

    Compound statements are yielded too (a `for` target and a `with … as` name are locals).
    """
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _own_statements(getattr(stmt, name, []) or [])
        for handler in getattr(stmt, "handlers", []) or []:
            yield from _own_statements(handler.body)
        for case in getattr(stmt, "cases", []) or []:
            yield from _own_statements(case.body)


def _assigned_names(stmt: ast.stmt) -> Iterator[tuple[str, int]]:
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor):
        targets = [stmt.target]
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        targets = [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    for target in targets:
        for node in _target_nodes(target):
            if isinstance(node, ast.Name):
                yield node.id, node.lineno


def _receiver_attributes(stmt: ast.stmt, receiver: str) -> Iterator[tuple[str, int]]:
    """`self.x = …` and `self.x: T = …` in one statement."""
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, ast.AnnAssign):
        targets = [stmt.target]
    for target in targets:
        for node in _target_nodes(target):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == receiver
            ):
                yield node.attr, node.lineno


def _target_nodes(target: ast.expr) -> Iterator[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _target_nodes(element)
    elif isinstance(target, ast.Starred):
        yield from _target_nodes(target.value)
    else:
        yield target


def module_name(path: str) -> str:
    """`vllm/v1/core/sched/scheduler.py` → `vllm.v1.core.sched.scheduler`; a package's
    `__init__.py` is the package itself; a `src/` or `python/` root is not part of it."""
    stem = path.rsplit(".", 1)[0]
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    if len(parts) > 1 and parts[0] in ("src", "python", "lib"):
        parts.pop(0)
    return ".".join(parts)


# --- other languages, read line by line --------------------------------------------------------

KEYWORD_DEFINITION = regex.compile(
    r"^[ \t]*(?:(?:pub(?:\([^)]*\))?|export|default|async|static|public|private|protected|"
    r"abstract|final|unsafe|extern|inline|virtual|template\s*<[^>\n]*>)\s+)*"
    r"(class|struct|union|enum(?:\s+class)?|namespace|interface|trait|def|fn|func|function|"
    r"type|object)\s+([A-Za-z_]\w*)",
    regex.MULTILINE,
)
C_FUNCTION = regex.compile(
    # return type (words, ::, <>, *, &), then a possibly qualified name and "(" on one line
    r"[ \t]*(?:[A-Za-z_][\w:<>,*&\[\] \t]*?[\s*&>])?((?:[A-Za-z_]\w*::)*~?[A-Za-z_]\w*)[ \t]*\("
)
MAX_C_LINE = 240  # longer lines are data tables or generated code, not signatures
C_DEFINE = regex.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", regex.MULTILINE)
NOT_FUNCTIONS = frozenset(
    "if for while switch return sizeof catch else do case new delete throw decltype alignof "
    "static_assert typeid defined assert".split()
)
CLASS_KEYWORDS = frozenset({"class", "struct", "union", "enum", "interface", "trait", "object"})


def _keyword_definitions(path: str, text: str) -> Iterator[Definition]:
    starts = _line_starts(text)
    for match in KEYWORD_DEFINITION.finditer(text):
        keyword = match.group(1).split()[0]
        kind = DefKind.CLASS if keyword in CLASS_KEYWORDS else DefKind.FUNCTION
        if keyword in ("namespace", "type"):
            kind = DefKind.CONSTANT
        yield Definition(path, match.group(2), _line_of(starts, match.start(2)), kind)


def _c_definitions(path: str, text: str) -> Iterator[Definition]:
    """Classes, structs and function definitions (not declarations) of C, C++ and CUDA.

    A function is a name followed by a balanced parameter list and then a body: the next
    `{` comes before any `;`. `Class::method` is recorded as `Class.method`.
    """
    starts = _line_starts(text)
    for definition in _keyword_definitions(path, text):
        if definition.kind is DefKind.CLASS and _opens_body(text, starts, definition.line):
            yield definition
    for match in C_DEFINE.finditer(text):
        yield Definition(path, match.group(1), _line_of(starts, match.start(1)), DefKind.MACRO)
    for number, start in enumerate(starts, 1):
        end = starts[number] - 1 if number < len(starts) else len(text)
        if end - start > MAX_C_LINE or "(" not in text[start:end]:
            continue
        match = C_FUNCTION.match(text, start, end)
        if match is None:
            continue
        name = match.group(1)
        last = name.rsplit("::", 1)[-1].lstrip("~")
        if last in NOT_FUNCTIONS or last.isupper():  # control flow, macros such as TORCH_CHECK
            continue
        close = _balanced(text, match.end() - 1)
        if close < 0:
            continue
        rest = text[close : close + 400]
        brace, semicolon = rest.find("{"), rest.find(";")
        if brace < 0 or (0 <= semicolon < brace):
            continue
        qualname = name.replace("::", ".")
        kind = DefKind.METHOD if "." in qualname else DefKind.FUNCTION
        yield Definition(path, qualname, number, kind)


def _opens_body(text: str, starts: list[int], line: int) -> bool:
    """A `class X` line that goes on to a `{` before any `;` (not a forward declaration)."""
    rest = text[starts[line - 1] : starts[line - 1] + 400]
    brace, semicolon = rest.find("{"), rest.find(";")
    return brace >= 0 and not (0 <= semicolon < brace)


def _balanced(text: str, open_at: int) -> int:
    """Index just after the `)` matching the `(` at `open_at`, or -1 within 2,000 chars."""
    depth = 0
    for i in range(open_at, min(len(text), open_at + 2000)):
        char = text[i]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


NEWLINE = regex.compile("\n")
YAML_KEY = regex.compile(
    r"""^[ \t]*(?:-[ \t]+)?(["']?)([A-Za-z_][\w.-]*)\1[ \t]*:(?=[ \t]|$)""", regex.MULTILINE
)


def _yaml_keys(path: str, text: str) -> Iterator[Definition]:
    """Each mapping key of a YAML file, once, at its first line."""
    starts = _line_starts(text)
    seen: set[str] = set()
    for match in YAML_KEY.finditer(text):
        key = match.group(2)
        if key not in seen:
            seen.add(key)
            yield Definition(path, key, _line_of(starts, match.start(2)), DefKind.KEY)


def _line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in NEWLINE.finditer(text))]


def _line_of(starts: list[int], offset: int) -> int:
    """1-based line of a character offset."""
    return bisect.bisect_right(starts, offset)
