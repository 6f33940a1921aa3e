"""SPARQL queries as users meet them: named queries, their parameters, and their answers.

A named query is a plain `.rq` file in the top-level `queries/` folder (installed as the
package `kgraph.queries`), so users can read it, copy it into any SPARQL client, or write
their own in the same shape. Its leading comment says what it answers and declares its
parameters; its body holds a parameter row, `VALUES (?a ?b) { (UNDEF UNDEF) }` (repeated
where a UNION branch needs it), that kgraph fills with RDF terms. Values are written as
N-Triples literals (escaped by pyoxigraph), never pasted into the query's syntax, so a
value cannot change the query. The same bound text runs on the embedded store and on a
remote endpoint.

Header grammar (lines starting with `#` before the first other line):

    # What the query answers, in prose (the first paragraph is its summary).
    # @param NAME TYPE  what the value means   (TYPE: string, integer or date)
    # @one-of NAME NAME ...                      (exactly one of these; others required)
    # @column NAME HEADING                       (column NAME's heading in table and CSV)

`@column` is for headings a SPARQL variable cannot spell (code-maat's `average-revs`);
TSV and JSON keep the variable names, as their W3C formats require.

For query authors: keep a parameter out of BIND (it stops pyoxigraph from starting at the
matching node) and out of STR() (Virtuoso 7 garbles non-ASCII text there).
"""

from __future__ import annotations

import datetime
import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pyoxigraph as ox
import regex

from kgraph.errors import KgraphError, UsageError
from kgraph.limits import MAX_NESTING, nesting
from kgraph.results import Answer, char_width, from_pyoxigraph
from kgraph.store import open_graph
from kgraph.vocab import NAMESPACES

PARAM_TYPES = ("string", "integer", "date")
_XSD_DATE = ox.NamedNode(NAMESPACES["xsd"] + "date")
# The parameter row: a VALUES block whose only row is UNDEF for every variable, on one line.
_PARAM_ROW = re.compile(r"VALUES\s*\(((?:\s*\?\w+)+)\s*\)\s*\{\s*\(((?:\s*UNDEF)+)\s*\)\s*\}")

# What is not the query's code: string literals (long ones first), IRIs (which hold `#`),
# and comments. A parameter row quoted in one of them is text, not a row to fill.
# An unclosed string runs to the end of its line (of the text, for a long one) instead of
# failing there: a failed match retried from every later quote made the search quadratic.
_NOT_CODE = regex.compile(
    r'"""(?:[^"\\]++|\\.|"(?!""))*+(?:"""|\\?$)'
    r"|'''(?:[^'\\]++|\\.|'(?!''))*+(?:'''|\\?$)"
    r'|"(?:[^"\\\n]++|\\.)*+(?:"|\\?(?=\n)|\\?$)'
    r"|'(?:[^'\\\n]++|\\.)*+(?:'|\\?(?=\n)|\\?$)"
    r'|<[^<>"{}|^`\\\s]*+>'
    r"|#[^\n]*+",
)


def _param_rows(text: str) -> list[re.Match[str]]:
    """The parameter rows of a query's code, not those in its comments or strings."""
    skipped = [m.span() for m in _NOT_CODE.finditer(text)]
    return [
        row
        for row in _PARAM_ROW.finditer(text)
        if not any(start <= row.start() < end for start, end in skipped)
    ]


class QueryError(UsageError):
    """A query that cannot be run as given: the message says what to change."""


class EvaluationError(KgraphError):
    """A well-formed query failed while running (the store, or the query's own errors)."""


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: str
    help: str


@dataclass(frozen=True, slots=True)
class NamedQuery:
    name: str
    source: str  # where the text came from, for messages: its path (queries/NAME.rq)
    text: str
    description: str
    params: tuple[Param, ...] = ()
    one_of: tuple[str, ...] = ()  # exactly one of these parameters must be given
    columns: tuple[tuple[str, str], ...] = ()  # (variable, heading) for table and CSV

    @property
    def summary(self) -> str:
        return self.description.split("\n\n", 1)[0].replace("\n", " ")

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def usage(self) -> str:
        """`symbol=… | file=…` style synopsis of the parameters."""
        required = [f"{p.name}=…" for p in self.params if p.name not in self.one_of]
        if self.one_of:
            required.append(" | ".join(f"{n}=…" for n in self.one_of))
        return " ".join(required)


def parse(text: str, name: str, source: str) -> NamedQuery:
    """Read a query's comment header; checks that it declares exactly its parameter row."""
    description: list[str] = []
    params: list[Param] = []
    one_of: tuple[str, ...] = ()
    columns: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped.startswith("#"):
            if stripped:
                break
            continue
        body = stripped[1:].strip()
        tag = body.split()[0] if body.startswith("@") else ""
        if tag == "@param":
            fields = body.split(None, 3)
            if len(fields) < 3 or fields[2] not in PARAM_TYPES:
                raise QueryError(
                    f"{source}:{number}: expected '@param NAME TYPE description' with TYPE "
                    f"one of {', '.join(PARAM_TYPES)}"
                )
            params.append(Param(fields[1], fields[2], fields[3] if len(fields) > 3 else ""))
        elif tag == "@one-of":
            one_of = tuple(body.split()[1:])
        elif tag == "@column":
            fields = body.split()
            if len(fields) != 3:
                raise QueryError(f"{source}:{number}: expected '@column NAME HEADING'")
            columns.append((fields[1], fields[2]))
        elif tag:
            raise QueryError(f"{source}:{number}: unknown header tag {tag}")
        else:
            description.append(body)
    names = [p.name for p in params]
    if unknown := [n for n in one_of if n not in names]:
        raise QueryError(f"{source}: @one-of names undeclared parameters: {', '.join(unknown)}")
    rows = _param_rows(text)
    if params and not rows:
        raise QueryError(
            f"{source}: a query with parameters needs a parameter row "
            "`VALUES (?a ?b) { (UNDEF UNDEF) }`"
        )
    for row in rows:
        variables = row.group(1).split()
        undefs = row.group(2).split()
        if sorted(v[1:] for v in variables) != sorted(names) or len(undefs) != len(variables):
            raise QueryError(
                f"{source}: the parameter row binds {' '.join(variables)} but the header "
                f"declares {' '.join('?' + n for n in names) or 'no parameters'}"
            )
    return NamedQuery(
        name,
        source,
        text,
        "\n".join(description).strip(),
        tuple(params),
        one_of,
        tuple(columns),
    )


def named_queries() -> dict[str, NamedQuery]:
    """Every query shipped in `queries/`, by name (the file name without `.rq`)."""
    found: dict[str, NamedQuery] = {}
    for item in resources.files("kgraph.queries").iterdir():
        if item.name.endswith(".rq"):
            name = item.name[: -len(".rq")]
            found[name] = parse(item.read_text("utf-8"), name, f"queries/{item.name}")
    return dict(sorted(found.items()))


def listing() -> str:
    """What `kgraph query --list` prints: each query, its synopsis, summary and parameters."""
    rows = []
    for named in named_queries().values():
        rows.append((named.name, named.usage(), named.summary))
        rows.extend(("", f"  {p.name} ({p.type})", p.help) for p in named.params)
    width = max(len(r[0]) for r in rows)
    usage = max(len(r[1]) for r in rows if r[0])
    lines = []
    for query_name, synopsis, text in rows:
        if query_name:
            lines.append(f"{query_name:<{width}}  {synopsis:<{usage}}  {text}")
        else:
            lines.append(f"{'':<{width}}  {synopsis}: {text}")
    return "\n".join(lines) + "\n"


def named_query(name: str) -> NamedQuery:
    available = named_queries()
    if name in available:
        return available[name]
    close = difflib.get_close_matches(name, list(available), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise QueryError(
        f"no named query {name!r}{hint}; available: {', '.join(available)}"
        " (see `kgraph query --list`)"
    )


def query_file(path: Path) -> NamedQuery:
    try:
        text = path.read_text("utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise QueryError(f"{path}: cannot read the query: {error}") from error
    return parse(text, path.stem, str(path))


def parse_params(pairs: Sequence[str]) -> dict[str, str]:
    """`k=v` strings (from `--param`) to a mapping; the value may contain `=`."""
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise QueryError(f"--param {pair!r}: expected NAME=VALUE")
        if key.strip() in params:
            raise QueryError(f"--param {key.strip()} is given twice")
        params[key.strip()] = value
    return params


def bind(query: NamedQuery, values: Mapping[str, str]) -> str:
    """The query's text with its parameter row filled in, checked against the header."""
    if not query.params:
        if values:
            raise QueryError(f"{query.source} declares no parameters; drop --param")
        return query.text
    declared = ", ".join(p.name for p in query.params)
    for key in values:
        if query.param(key) is None:
            raise QueryError(f"{query.source} has no parameter {key!r}; it takes: {declared}")
    missing = [p.name for p in query.params if p.name not in query.one_of and p.name not in values]
    if missing:
        raise QueryError(
            f"{query.source} needs parameter {missing[0]!r}: --param {missing[0]}=VALUE "
            f"({_param_help(query, missing[0])})"
        )
    if query.one_of and not any(n in values for n in query.one_of):
        raise QueryError(
            f"{query.source} needs one of the parameters {', '.join(query.one_of)}: "
            + "; ".join(f"--param {n}=VALUE ({_param_help(query, n)})" for n in query.one_of)
        )
    if len(given := [n for n in query.one_of if n in values]) > 1:
        raise QueryError(f"{query.source} takes only one of {', '.join(given)}; drop the others")
    terms = {
        p.name: "UNDEF" if p.name not in values else str(_term(p, values[p.name]))
        for p in query.params
    }

    text, filled, at = query.text, list[str](), 0
    for row in _param_rows(text):
        variables = row.group(1).split()
        bound = " ".join(terms[v[1:]] for v in variables)
        filled += [text[at : row.start()], f"VALUES ({' '.join(variables)}) {{ ({bound}) }}"]
        at = row.end()
    return "".join([*filled, text[at:]])


def _param_help(query: NamedQuery, name: str) -> str:
    param = query.param(name)
    return param.help if param and param.help else "see `kgraph query --list`"


def _term(param: Param, raw: str) -> ox.Literal:
    if param.type == "integer":
        try:
            return ox.Literal(int(raw.strip().removeprefix("#")))
        except ValueError:
            raise QueryError(f"parameter {param.name}: {raw!r} is not a whole number") from None
    if param.type == "date":
        try:
            day = datetime.date.fromisoformat(raw.strip())
        except ValueError:
            raise QueryError(
                f"parameter {param.name}: {raw!r} is not a date (YYYY-MM-DD)"
            ) from None
        return ox.Literal(day.isoformat(), datatype=_XSD_DATE)
    return ox.Literal(raw)


def check_syntax(text: str, source: str) -> str:
    """Parse the query (on an empty store) and return its form: SELECT, ASK or CONSTRUCT.

    A syntax error becomes `SOURCE:LINE:COLUMN: syntax error: …` with the offending line
    and a caret under the column pyoxigraph reports. A query nested deeper than
    `MAX_NESTING` is refused before parsing: pyoxigraph's parser recurses, and 5,000
    nested groups overflowed its stack (a segmentation fault).
    """
    depth, at = nesting(text, (m.span() for m in _NOT_CODE.finditer(text)))
    if depth > MAX_NESTING:
        line = text.count("\n", 0, at) + 1
        column = at - text.rfind("\n", 0, at)
        raise QueryError(
            f"{source}:{line}:{column}: the query nests {depth:,} levels of brackets, braces "
            f"and parentheses, and kgraph takes at most {MAX_NESTING}: this one is the "
            f"{MAX_NESTING + 1}th"
        )
    try:
        answer = ox.Store().query(text)
    except SyntaxError as error:
        raise QueryError(syntax_message(str(error), text, source)) from None
    if isinstance(answer, ox.QueryBoolean):
        return "ASK"
    if isinstance(answer, ox.QueryTriples):
        return "CONSTRUCT"
    return "SELECT"


_POSITION = re.compile(r"^error at (\d+):(\d+): ?(.*)$", re.S)
MAX_EXPECTED = 12  # tokens listed in "expected one of …"


def syntax_message(message: str, text: str, source: str) -> str:
    """`SOURCE:LINE:COLUMN: syntax error: …`, the line, and a caret under the column.

    The position is where pyoxigraph's parser gave up, which can be just after the mistake.
    """
    match = _POSITION.match(message)
    if not match:
        return f"{source}: syntax error: {message}"
    line, column = int(match.group(1)), int(match.group(2))
    lines = text.splitlines() or [""]
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()
    if line > len(lines):  # the parser reached the end of the text
        line, column = len(lines), len(lines[-1]) + 1
        detail = "the query ends too early; " + _expected(match.group(3))
    else:
        detail = _expected(match.group(3))
    code = lines[max(line, 1) - 1]
    if "Prefix not found" in detail:
        names = re.findall(r"([A-Za-z][\w.-]*)?:", code[: max(column - 1, 0)])
        undeclared = names[-1] if names else ""
        detail = f"undeclared prefix '{undeclared}:' (add PREFIX {undeclared}: <…>)"
    column = min(max(column, 1), len(code) + 1)
    # Under the column on a terminal: a tab stays a tab, a CJK character is two blanks.
    caret = "".join(c if c == "\t" else " " * char_width(c) for c in code[: column - 1]) + "^"
    return f"{source}:{line}:{column}: syntax error: {detail}\n  {code}\n  {caret}"


@dataclass(frozen=True, slots=True)
class LocalAnswer:
    answer: Answer
    how: str  # how the store was opened: "cached", "built" or "memory"


def run_local(out_dir: Path, text: str, source: str, cache: bool = True) -> LocalAnswer:
    """Check the query, then answer it from the build's graph (see `kgraph.store`)."""
    check_syntax(text, source)
    opened = open_graph(out_dir, cache)
    try:
        return LocalAnswer(from_pyoxigraph(opened.store.query(text)), opened.how)
    except (OSError, RuntimeError, ValueError) as error:
        raise EvaluationError(f"{source}: the query failed: {error}") from None


def _expected(detail: str) -> str:
    """pyoxigraph's "expected one of A, B, ['0'..='9']" without the character classes."""
    match = re.match(r"expected (?:one of )?(.*)$", detail, re.S)
    if not match:
        return detail
    items = _items(match.group(1))
    sentences = [i for i in items if " " in i and i[0] not in "\"'["]
    if sentences:  # a semantic check, not a token list
        return "; ".join(sentences)
    tokens = [i for i in items if not i.startswith("[")]
    if not tokens:
        return "unexpected character"
    shown = tokens[:MAX_EXPECTED] + (["…"] if len(tokens) > MAX_EXPECTED else [])
    return "expected " + ("one of " if len(tokens) > 1 else "") + ", ".join(shown)


def _items(listing: str) -> list[str]:
    """Split a comma-separated list whose items may be "quoted" or [bracketed]."""
    items: list[str] = []
    current: list[str] = []
    depth, quote, escaped = 0, "", False
    for char in listing:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    items.append("".join(current).strip())
    return [i for i in items if i]
