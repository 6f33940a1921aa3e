"""The digest formats kgraph reads, one small parser each, and their registry.

Each format knows how to recognise itself from a file's text (`sniff`) and how to turn
that text into entries (`parse`). Parsers never raise on bad content: they return what
they could read and a `Problem` for everything else.
"""

from __future__ import annotations

import datetime
import json
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import regex

from kgraph.ingest.text import quoted, split_lines
from kgraph.ingest.titles import Unit, group, looks_like_title
from kgraph.model import Digest, Entry, Problem, ReadResult, Severity

DATE = regex.compile(r"^\s*(\d{4}-\d{2}-\d{2})\s*$")
REPO = regex.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
TAG_VIEW_HEADER = regex.compile(
    r"^\s*([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)\s*[·•|-]\s*(?:标签视图|tag view)\s*$",
    regex.IGNORECASE,
)
# PR numbers have at most 9 digits: int() of a 5,000-digit "number" would raise.
PULL_URL = regex.compile(r"https?://github\.com/([\w.-]+/[\w.-]+)/pull/(\d{1,9})(?!\d)")
TITLE_NUMBER = regex.compile(r"\(#(\d{1,9})\)\s*$|\s#(\d{1,9})\s*$")
MAX_NUMBER = 999_999_999


@dataclass(frozen=True, slots=True)
class InputFormat:
    name: str
    description: str
    sniff: Callable[[str, str], bool]  # (file name, text) -> does this format fit?
    parse: Callable[[str, str, str], ReadResult]  # (text, source, sha256) -> entries


def _first_line(text: str) -> str:
    for line in split_lines(text):
        if line.strip():
            return line.strip()
    return ""


def _date(text: str, label: str, source: str, line: int, problems: list[Problem]) -> str | None:
    """`text` as an ISO date, or None and a warning. The shape is not enough: 2026-02-30 names
    no day, and one xsd:date literal of it makes the whole graph ill-typed."""
    if shape := DATE.match(text):
        try:
            return datetime.date.fromisoformat(shape.group(1)).isoformat()
        except ValueError:
            reason = "not a calendar date"
    else:
        reason = "not YYYY-MM-DD"
    problems.append(Problem(source, line, f"ignored {label} {quoted(text)}: {reason}"))
    return None


def _pr_number(
    digits: str, where: str, source: str, line: int, problems: list[Problem]
) -> int | None:
    """A PR number read from a title or a URL. No PR is #0: a 0 there is a typo or a
    placeholder, reported and ignored as a JSON Lines "number": 0 is."""
    if number := int(digits):
        return number
    problems.append(
        Problem(source, line, f"ignored PR number {quoted(digits)} in the {where}: not a PR number")
    )
    return None


def _title_number(title: str, source: str, line: int, problems: list[Problem]) -> int | None:
    """The number of a title that ends in "(#N)" or " #N"."""
    if match := TITLE_NUMBER.search(title):
        return _pr_number(match.group(1) or match.group(2), "title", source, line, problems)
    return None


def _pull_request(
    title: str,
    url: str | None,
    repo: tuple[str | None, str],
    number: int | None,
    source: str,
    line: int,
    problems: list[Problem],
) -> tuple[str | None, int | None]:
    """The PR's repository and number, from a URL, a `repo` given as (value, what gave it), a
    "number" field and the title.

    A pull URL links to the PR itself, so it outranks what the digest declares, and a
    "number" field outranks the title; where they disagree, the stronger is used and a
    warning names what it overrode. GitHub ignores the case of owner and repository names.
    """
    pull = PULL_URL.search(url) if url else None
    claims = [  # (number, what gave it), strongest first
        (_pr_number(pull.group(2), "URL", source, line, problems) if pull else None, "the URL"),
        (number, '"number"'),
        (_title_number(title, source, line, problems), "the title"),
    ]
    found = [(n, said) for n, said in claims if n is not None]
    for n, said in found[1:]:
        if n != found[0][0]:
            message = f"PR number {found[0][0]} from {found[0][1]} is used, not {n} from {said}"
            problems.append(Problem(source, line, message))
    declared, said = repo
    linked = pull.group(1) if pull else None
    if linked and declared and declared.lower() != linked.lower():
        message = (
            f"PR repository {quoted(linked)} from the URL is used, not {quoted(declared)} "
            f"from {said}"
        )
        problems.append(Problem(source, line, message))
        declared = linked
    return declared or linked, found[0][0] if found else None


def _entries(
    blocks_source: str,
    sha: str,
    fmt: str,
    units: list[Unit],
    date: str | None,
    repo: str | None,
    problems: list[Problem],
) -> ReadResult:
    blocks, found = group(units, blocks_source)
    problems.extend(found)
    entries = tuple(
        Entry(
            blocks_source,
            b.line,
            b.title,
            b.summary,
            repo,
            date,
            None,
            _title_number(b.title, blocks_source, b.line, problems),
        )
        for b in blocks
    )
    if not entries:
        problems.append(Problem(blocks_source, 1, "no entries found"))
    return ReadResult(Digest(blocks_source, fmt, date, repo, sha), entries, tuple(problems))


# --- daily digest: a date line, then title lines each followed by summary lines --------------


def _sniff_daily(name: str, text: str) -> bool:
    return bool(DATE.match(_first_line(text)))


def _parse_daily(text: str, source: str, sha: str) -> ReadResult:
    lines = split_lines(text)
    start = next(i for i, line in enumerate(lines) if line.strip())
    problems: list[Problem] = []
    header = DATE.match(lines[start])
    date = _date(lines[start], "date", source, start + 1, problems) if header else None
    first = start + 1 if header else start
    units = [Unit(i + 1, line) for i, line in enumerate(lines) if i >= first and line.strip()]
    return _entries(source, sha, "daily", units, date, None, problems)


# --- tag view: "owner/repo · 标签视图", then blank-separated title and summary blocks ----------


def _sniff_tag_view(name: str, text: str) -> bool:
    return bool(TAG_VIEW_HEADER.match(_first_line(text)))


def _paragraphs(lines: list[str], start: int) -> list[Unit]:
    units: list[Unit] = []
    current: list[str] = []
    first = 0
    for i in range(start, len(lines)):
        if lines[i].strip():
            if not current:
                first = i + 1
            current.append(lines[i].strip())
        elif current:
            units.append(Unit(first, "\n".join(current)))
            current = []
    if current:
        units.append(Unit(first, "\n".join(current)))
    return units


def _titled_blocks(units: list[Unit]) -> list[Unit]:
    """Blocks that hold a title line and its summary lines, with no blank line between
    them, split into the two: some tag views write every entry so. A block is split when
    its first line looks like a title and no title before it waits for its summary (then
    the block is that summary, which may well open with a short line: "值得精读")."""
    found: list[Unit] = []
    waiting = False  # the last unit is a title whose summary has not come yet
    for unit in units:
        head, _, rest = unit.text.partition("\n")
        if rest and not waiting and looks_like_title(head):
            found += [Unit(unit.line, head), Unit(unit.line + 1, rest)]
            waiting = False
        else:
            found.append(unit)
            waiting = looks_like_title(unit.text)
    return found


def _parse_tag_view(text: str, source: str, sha: str) -> ReadResult:
    lines = split_lines(text)
    start = next(i for i, line in enumerate(lines) if line.strip())
    header = TAG_VIEW_HEADER.match(lines[start])
    repo = header.group(1) if header else None
    first = start + 1 if header else start
    units = _titled_blocks(_paragraphs(lines, first))
    return _entries(source, sha, "tag-view", units, None, repo, [])


# --- Markdown: optional front matter or "# repo/date" line, then "## title" sections --------

# Every pattern here is linear: possessive runs, and no lazy group before an optional tail
# (`(.*?)\s*#*\s*$` took seconds on an 8,000-character heading). Trailing "#"s and the
# "[title](url)" form are taken apart in Python instead.
_FRONT_KEY = regex.compile(r"^(\w++)\s*+:(.*+)$")
_MD_HEADING = regex.compile(r"^##(?:\s++(.*+))?$")  # "## " is "##" once trailing blanks go
_MD_LINKED_NUMBER = regex.compile(r"\[#(\d{1,9})\]\(([^\s()\[\]]++)\)")  # "title ([#1](url))"
_MD_FENCE = regex.compile(r"^ {0,3}+(`{3,}+|~{3,}+)(.*+)$")  # the run, then the info string
_HEADER_WORDS = regex.compile(r"[\s·•|,]++")


def _heading_title(text: str) -> str:
    """A heading's text without the optional closing run of "#" (CommonMark: "## a ##")."""
    text = text.strip()
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1].isspace()):
        return bare.rstrip()
    return text


def _link_title(title: str) -> tuple[str, str] | None:
    """`[text](url)` as a whole heading gives (text, url); the last `](` splits them."""
    if not (title.startswith("[") and title.endswith(")")):
        return None
    cut = title.rfind("](", 0, len(title) - 1)
    text, url = title[1:cut], title[cut + 2 : -1]
    if cut < 2 or not url or any(c.isspace() for c in url):
        return None
    return text, url


def _headings(lines: list[str], start: int, source: str, problems: list[Problem]) -> dict[int, str]:
    """The `## ` headings from line index `start` on, by index, with their raw text.

    A summary may quote Markdown in a fenced code block (``` or ~~~, CommonMark's rules): a
    `## ` line there is text of that summary, not a new entry. A fence never closed runs to
    the end of the file; when that hides a heading, a warning says where the fence opened.
    """
    headings: dict[int, str] = {}
    fence: tuple[int, str] | None = None  # (index, opening run) of the open code block
    hidden = False
    for j in range(start, len(lines)):
        mark = _MD_FENCE.match(lines[j])
        if fence is not None:
            if mark and mark.group(1).startswith(fence[1]) and not mark.group(2).strip():
                fence = None
            else:
                hidden = hidden or bool(_MD_HEADING.match(lines[j]))
        elif mark and not (mark.group(1)[0] == "`" and "`" in mark.group(2)):
            fence, hidden = (j, mark.group(1)), False
        elif heading := _MD_HEADING.match(lines[j]):
            headings[j] = heading.group(1) or ""
    if fence is not None and hidden:
        problems.append(
            Problem(
                source,
                fence[0] + 1,
                f"code fence {quoted(fence[1])} is never closed; the '## ' headings after it "
                "are read as its text",
            )
        )
    return headings


def _sniff_markdown(name: str, text: str) -> bool:
    if name.lower().endswith((".md", ".markdown")):
        return True
    first = _first_line(text)
    return first == "---" or first.startswith("#")


def _parse_markdown(text: str, source: str, sha: str) -> ReadResult:
    lines = split_lines(text)
    meta: dict[str, tuple[str, int]] = {}  # key -> (value, line)
    problems: list[Problem] = []
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and lines[i].strip() == "---":
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "---"), None)
        if end is None:
            problems.append(Problem(source, i + 1, "front matter is not closed by '---'"))
        else:
            for j in range(i + 1, end):
                if match := _FRONT_KEY.match(lines[j]):
                    meta[match.group(1).lower()] = (match.group(2).strip().strip("\"'"), j + 1)
            i = end + 1
    headings = _headings(lines, i, source, problems)
    for j in range(i, min(headings, default=len(lines))):
        line = lines[j].strip()
        if line.startswith("# "):
            for word in _HEADER_WORDS.split(line[2:]):
                if DATE.match(word):
                    meta.setdefault("date", (word, j + 1))
                elif REPO.match(word):
                    meta.setdefault("repo", (word, j + 1))
    given_date, date_line = meta.get("date", ("", 0))
    date = _date(given_date, "date", source, date_line, problems) if given_date else None
    given_repo = meta.get("repo", ("", 0))[0]
    repo = given_repo if REPO.match(given_repo) else None
    entries: list[Entry] = []
    heading: tuple[int, str] | None = None
    body: list[str] = []

    def close() -> None:
        if heading is None:
            return
        line_no, title = heading
        url = None
        if linked := _link_title(title):
            title, url = linked
        elif match := _MD_LINKED_NUMBER.search(title):
            url = match.group(2)
            title = title[: match.start()] + f"#{match.group(1)}" + title[match.end() :]
        summary = "\n".join(body).strip()
        if not title.strip():
            problems.append(
                Problem(source, line_no, "empty '## ' title; entry skipped", Severity.ERROR, 1)
            )
            return
        if not summary:
            problems.append(Problem(source, line_no, f"title without a summary: {quoted(title)}"))
        pr_repo, number = _pull_request(
            title, url, (repo, "the digest"), None, source, line_no, problems
        )
        entries.append(Entry(source, line_no, title, summary, pr_repo, date, url, number))

    for j in range(i, len(lines)):
        if j in headings:
            close()
            heading, body = (j + 1, _heading_title(headings[j])), []
        elif heading is not None:
            body.append(lines[j].strip())
    close()
    if not entries and heading is None:
        problems.append(Problem(source, 1, "no entries found (expected '## title' sections)"))
    return ReadResult(Digest(source, "markdown", date, repo, sha), tuple(entries), tuple(problems))


# --- JSON Lines: {"title", "summary", "repo"?, "date"?, "url"?, "number"?} per line -----------

_SURROGATE = regex.compile(r"[\ud800-\udfff]")


def _sniff_jsonl(name: str, text: str) -> bool:
    return name.lower().endswith((".jsonl", ".ndjson")) or _first_line(text).startswith("{")


def _clean(value: object, field: str, source: str, line: int, problems: list[Problem]) -> str:
    """JSON escapes can spell what no UTF-8 file holds: lone surrogates and NUL."""
    text = str(value)
    if _SURROGATE.search(text):
        problems.append(Problem(source, line, f"lone surrogate in {field!r} replaced by U+FFFD"))
        text = _SURROGATE.sub("\ufffd", text)
    if "\x00" in text:
        problems.append(Problem(source, line, f"NUL characters removed from {field!r}"))
        text = text.replace("\x00", "")
    return text


def _keeping_last(repeated: list[list[str]]) -> Callable[[list[tuple[str, object]]], dict]:
    """An `object_pairs_hook` that builds each object as `json` does (the last value of a
    key wins) and appends to `repeated` the keys it held twice. The last object built is
    the line's own (json builds the inner ones first): a digest that gives two titles
    should be told which one was kept."""

    def build(pairs: list[tuple[str, object]]) -> dict:
        record = dict(pairs)
        twice = []
        if len(record) != len(pairs):
            twice = [key for key, n in Counter(key for key, _ in pairs).items() if n > 1]
        repeated.append(twice)
        return record

    return build


def _not_text(field: str, value: object) -> str:
    """Why a field is no title or summary: absent, empty, or not a string at all."""
    if value is None:
        return f'missing "{field}"'
    if isinstance(value, str):
        return f'empty "{field}"'
    kind = {bool: "true or false", int: "a number", float: "a number", list: "a list"}
    return f'"{field}" must be a string, not {kind.get(type(value), "an object")}'


def _parse_jsonl(text: str, source: str, sha: str) -> ReadResult:
    entries: list[Entry] = []
    problems: list[Problem] = []
    for i, raw in enumerate(split_lines(text), start=1):
        if not raw.strip():
            continue
        repeated: list[list[str]] = []
        try:
            record = json.loads(raw, object_pairs_hook=_keeping_last(repeated))
        except json.JSONDecodeError as err:
            problems.append(
                Problem(
                    source,
                    i,
                    f"invalid JSON ({err.msg} at column {err.colno}); entry skipped",
                    Severity.ERROR,
                    1,
                )
            )
            continue
        except (ValueError, RecursionError) as err:  # 5,000 nested brackets, a huge integer
            reason = "nested too deeply" if isinstance(err, RecursionError) else str(err)
            problems.append(
                Problem(source, i, f"unreadable JSON ({reason}); entry skipped", Severity.ERROR, 1)
            )
            continue
        if not isinstance(record, dict):
            problems.append(
                Problem(source, i, "not a JSON object; entry skipped", Severity.ERROR, 1)
            )
            continue
        if repeated[-1]:
            keys = ", ".join(f'"{k}"' for k in repeated[-1])
            problems.append(Problem(source, i, f"{keys} given twice; the last value is used"))
        title, summary = record.get("title"), record.get("summary")
        if isinstance(title, str):  # cleaned first: a title of NULs is no title
            title = _clean(title, "title", source, i, problems).strip()
        if not isinstance(title, str) or not title:
            problems.append(
                Problem(source, i, f"{_not_text('title', title)}; entry skipped", Severity.ERROR, 1)
            )
            continue
        if not isinstance(summary, str):
            problems.append(Problem(source, i, _not_text("summary", summary), Severity.WARNING))
            summary = ""
        repo = record.get("repo")
        if repo is not None and not (isinstance(repo, str) and REPO.match(repo)):
            problems.append(
                Problem(source, i, f'ignored "repo" {quoted(str(repo))}: not owner/name')
            )
            repo = None
        date = record.get("date")
        if date is not None:
            date = _date(str(date), '"date"', source, i, problems)
        url = record.get("url")
        url = _clean(url, "url", source, i, problems) if isinstance(url, str) else None
        number = record.get("number")
        if (
            isinstance(number, bool)
            or not isinstance(number, int | float | type(None))
            or (isinstance(number, float) and (not math.isfinite(number) or number != int(number)))
            or (number is not None and not 0 < number <= MAX_NUMBER)
        ):
            problems.append(
                Problem(source, i, f'ignored "number" {quoted(str(number))}: not a PR number')
            )
            number = None
        summary = _clean(summary, "summary", source, i, problems).strip()
        repo, number = _pull_request(
            title,
            url,
            (repo, '"repo"'),
            int(number) if number is not None else None,
            source,
            i,
            problems,
        )
        entries.append(Entry(source, i, title, summary, repo, date, url, number))
    if not entries and not problems:
        problems.append(Problem(source, 1, "no entries found"))
    dates = {e.date for e in entries if e.date}
    repos = {e.repo for e in entries if e.repo}
    digest = Digest(
        source,
        "jsonl",
        dates.pop() if len(dates) == 1 else None,
        repos.pop() if len(repos) == 1 else None,
        sha,
    )
    return ReadResult(digest, tuple(entries), tuple(problems))


FORMATS: tuple[InputFormat, ...] = (
    InputFormat(
        "jsonl", 'JSON Lines, one {"title", "summary", …} object a line', _sniff_jsonl, _parse_jsonl
    ),
    InputFormat(
        "daily",
        "daily digest: a YYYY-MM-DD line, then title and summary lines",
        _sniff_daily,
        _parse_daily,
    ),
    InputFormat(
        "tag-view",
        "tag view: an 'owner/repo · 标签视图' line, then blank-separated title and summary blocks",
        _sniff_tag_view,
        _parse_tag_view,
    ),
    InputFormat(
        "markdown",
        "Markdown: optional front matter, then '## title' sections",
        _sniff_markdown,
        _parse_markdown,
    ),
)


def format_named(name: str) -> InputFormat:
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt
    raise KeyError(name)
