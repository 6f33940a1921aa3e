"""Change coupling between functions: which functions change together, read cheaply.

File coupling says that `scheduler.py` and `kv_cache_manager.py` change together; function
coupling says which of their functions do. That needs the functions each change touched,
which the log does not list. Parsing both versions of every file of every change (what
`kgraph.history.changes` does for the few commits a review links to) costs two parses per
file per change. Instead this reads git's own hunk headers: with the diff drivers of
`attributes`, `git diff-tree -p` names the definition each hunk is in (`@@ -120,3 +120,4
@@ def schedule(self):`), as `git log -L :schedule:scheduler.py` finds it. One diff-tree
over the changes of the chosen files, and no blob parsed.

What a hunk counts for:

- the definition its header names, unless the hunk's first changed line sits at that
  definition's indentation or less (Python): a hunk that adds `def b` after `def a`, or
  module code after it, changes b or the module, not a;
- every definition whose own line (`def`, `class`, `fn`, `func`, `type`) is among its
  changed lines, in Python, Rust and Go. In C-like languages a changed line's `name(` is a
  call as often as a definition, so only the header counts there.

A unit is named `PATH` NUL `NAME` (`unit_name`; no git path holds a NUL), PATH being the
file's name at the newest change (renames followed as for files) and NAME the bare name git
shows: two methods of one name in one file (the `forward` of two classes) are one unit.
That is the price of not parsing.

Which files: those with at least `function_min_revs` revisions in the file coupling (a
function of a file that changed four times cannot reach the thresholds), in a language git
has a driver for. Which changes: those file coupling keeps (at most `max_changeset_size`
files). The units are then counted exactly as files are (`couple`): a change touching more
units than `max_changeset_size` is left out, which bounds the pairs one change adds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace

import regex

from kgraph.history import History
from kgraph.history.changesets import Changeset, FileChange
from kgraph.history.coupling import CouplingResult, couple, named_changes
from kgraph.history.log import FileDiff, hunk_lines

SEPARATOR = "\0"  # between a unit's file and its definition's name
WORKERS = min(4, os.cpu_count() or 1)  # git processes reading diffs side by side

# The languages `attributes` gives git a function-name driver for, by file suffix.
LANGUAGES = {
    ".py": "python", ".pyi": "python",
    ".c": "c", ".cc": "c", ".cpp": "c", ".cxx": "c", ".h": "c", ".hh": "c", ".hpp": "c",
    ".cu": "c", ".cuh": "c", ".java": "c", ".kt": "kotlin",
    ".rs": "rust", ".go": "go",
}  # fmt: skip

_IDENT = r"[A-Za-z_]\w*"
# A definition's line, per language: its indentation and its name.
DEFINITION_LINES = {
    "python": regex.compile(rf"^([ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+({_IDENT})"),
    "rust": regex.compile(
        rf"^([ \t]*)(?:pub(?:\([^)]*\))?[ \t]+)?(?:const[ \t]+)?(?:async[ \t]+)?"
        rf"(?:unsafe[ \t]+)?(?:extern[ \t]+\"[^\"]*\"[ \t]+)?"
        rf"(?:fn|struct|enum|trait)[ \t]+({_IDENT})"
    ),
    "go": regex.compile(rf"^()(?:func[ \t]+(?:\([^)]*\)[ \t]*)?|type[ \t]+)({_IDENT})"),
    "kotlin": regex.compile(
        rf"^([ \t]*)(?:\w+[ \t]+)*(?:fun|class|object|interface)[ \t]+(?:<[^>]*>[ \t]*)?"
        rf"(?:{_IDENT}\.)?({_IDENT})"
    ),
}
# C, C++, CUDA, Java headers: a type or the name before the first parenthesis.
_C_TYPE = regex.compile(
    rf"^([ \t]*)(?:\w+[ \t]+)*(?:class|struct|union|enum|interface)[ \t]+({_IDENT})"
)
_C_CALLABLE = regex.compile(rf"^([ \t]*)[^(=;]*?((?:{_IDENT}::)*~?{_IDENT})[ \t]*\(")
_C_KEYWORDS = frozenset({"if", "for", "while", "switch", "return", "sizeof", "catch", "do"})
# The languages whose changed lines show definitions reliably, with the words such a line
# holds: most changed lines hold none, and a substring test is far cheaper than the match.
ON_LINE = {
    "python": ("def", "class"),
    "rust": ("fn ", "struct ", "enum ", "trait "),
    "go": ("func ", "type "),
}


def unit_name(path: str, name: str) -> str:
    return f"{path}{SEPARATOR}{name}"


def split_unit(unit: str) -> tuple[str, str]:
    """A unit's file and definition name."""
    path, _, name = unit.partition(SEPARATOR)
    return path, name


def language_of(path: str) -> str | None:
    dot = path.rfind(".")
    return LANGUAGES.get(path[dot:].lower()) if dot > path.rfind("/") else None


def definition_of(language: str, line: str) -> tuple[int, str] | None:
    """The indentation and name of the definition `line` opens, in `language`."""
    if language == "c":
        found = _C_TYPE.match(line) or _C_CALLABLE.match(line)
        if found is None or found.group(2) in _C_KEYWORDS:
            return None
    else:
        found = DEFINITION_LINES[language].match(line)
        if found is None:
            return None
    return len(found.group(1).expandtabs(8)), found.group(2)


def units_of(language: str, diff: FileDiff) -> set[str]:
    """The names of the definitions `diff`'s hunks change (see the module's rules)."""
    found: set[str] = set()
    for context, removed, added in hunk_lines(diff):
        header = definition_of(language, context) if context else None
        changed = [text for _, text in (removed or added) if text.strip()]
        if header is not None:
            indent, name = header
            first = changed[0] if changed else ""
            if language != "python" or not first:
                found.add(name)
            elif len(first) - len(first.lstrip(" \t")) > indent or first[indent : indent + 1] in (
                ")",
                "]",
            ):
                found.add(name)  # deeper than the header: its body (or its signature's end)
        if (words := ON_LINE.get(language)) is not None:
            for _, text in (*removed, *added):
                if not any(w in text for w in words):
                    continue
                if (own := definition_of(language, text)) is not None:
                    found.add(own[1])
    return found


def function_changesets(
    history: History, files: CouplingResult, changesets: Sequence[Changeset]
) -> list[Changeset]:
    """Per change that file coupling keeps and that touches a chosen file, the units it
    changed (`unit_name`); newest first. The diffs are read now, in one pass."""
    options = files.options
    wanted = {
        name
        for name, revisions in files.revisions.items()
        if revisions >= options.function_min_revs and language_of(name) is not None
    }
    if not wanted:
        return []
    named, _ = named_changes(changesets, options.follow_renames)
    since, limit = options.since, options.max_changeset_size
    todo: list[tuple[Changeset, dict[str, str]]] = []
    spec: set[str] = set()
    for changeset, names in named:
        if since is not None and changeset.date[:10] < since:
            continue
        if len({n for _, n in names}) > limit:
            continue  # file coupling leaves it out too
        chosen = {path: name for path, name in names if name in wanted}
        if not chosen:
            continue
        todo.append((changeset, chosen))
        spec.update(chosen)
        # A renamed file's old path too, or the pathspec would hide the rename from git
        # and the whole file would show as added.
        spec.update(f.old_path for f in changeset.files if f.path in chosen and f.old_path)
    index = history.index
    positions = index.position_of
    pairs = [(c.sha, index.at(positions[c.sha]).first_parent) for c, _ in todo]
    found: list[Changeset] = []
    for (changeset, chosen), (_, diffs) in zip(
        todo, history.diffs(pairs, sorted(spec), workers=WORKERS), strict=True
    ):
        units: set[str] = set()
        for diff in diffs:
            name = chosen.get(diff.path) or (chosen.get(diff.old_path) if diff.old_path else None)
            language = language_of(diff.path)
            if name is None or language is None or diff.unread or diff.binary:
                continue
            units.update(unit_name(name, unit) for unit in units_of(language, diff))
        found.append(
            Changeset(changeset.sha, changeset.date, tuple(FileChange(u) for u in sorted(units)))
        )
    return found


def couple_functions(
    history: History, files: CouplingResult, changesets: Iterable[Changeset]
) -> CouplingResult:
    """The coupled pairs of functions, counted with the file coupling's options (its
    thresholds, window and trend) over `function_changesets`."""
    units = function_changesets(history, files, list(changesets))
    counted = couple(units, replace(files.options, follow_renames=False))  # named already
    return replace(counted, renamed=files.renamed, options=files.options)
