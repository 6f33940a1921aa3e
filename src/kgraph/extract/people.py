"""People: GitHub users a review names, with their role when the review states it.

`@name` is always a handle. A bare name counts only where the review says who it is: next
to a role word (作者 X, X 作为共同作者, reviewer X, X co-authored, reviewed by X) or as a
participant of the review ("review 中 X 与作者…"). The role is normalised to author,
co-author, reviewer or maintainer.
"""

from __future__ import annotations

import regex

from kgraph.extract.prose import prose
from kgraph.model import Entry, Field, Kind, Mention

HANDLE = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"
# Role words: nouns name a role ("reviewer X", "X 作为共同作者"); verbs say what someone did
# ("X co-authored", "reviewed by X"), so a verb is never followed by the handle directly.
ROLE_NOUNS = {
    "co-author": r"共同作者|合著者|合作者|co-?authors?",
    "author": r"作者|authors?",
    "reviewer": r"审阅者|审稿人|评审人?|reviewers?",
    "maintainer": r"维护者|maintainers?",
}
ROLE_VERBS = {
    "co-author": r"co-?authored",
    "author": r"authored|wrote|written",
    "reviewer": r"reviewed|approved",
    "maintainer": r"maintained",
}


def _roles(words: dict[str, str], suffix: str) -> str:
    return "|".join(f"(?P<{k.replace('-', '_')}{suffix}>{v})" for k, v in words.items())


AT_HANDLE = regex.compile(rf"(?<![\w@.])@(?P<handle>{HANDLE})(?![\w@])")
_ANY_ROLE = regex.compile("|".join([*ROLE_NOUNS.values(), *ROLE_VERBS.values()]), regex.IGNORECASE)
# Each with what every match of it contains, looked for first: the patterns try a handle at
# every word, and most summaries name no role at all.
BARE = (
    # 作者 X, reviewer X, reviewed by X
    (
        _ANY_ROLE,
        regex.compile(
            rf"(?:(?:{_roles(ROLE_NOUNS, '')})\s*+(?:是|为|:|：)?"
            rf"|(?:{_roles(ROLE_VERBS, '_v')})\s++by)"
            rf"\s*+@?(?<![A-Za-z0-9-])(?P<handle>{HANDLE})(?![\w@])",
            regex.IGNORECASE,
        ),
    ),
    # X 作为共同作者, X co-authored, X (reviewer)
    (
        _ANY_ROLE,
        regex.compile(
            rf"(?<![\w@.])@?(?P<handle>{HANDLE})(?![\w-])\s*+(?:作为|是|担任|[(（])?\s*+"
            rf"(?:{_roles(ROLE_NOUNS, '')}|{_roles(ROLE_VERBS, '_v')})(?![A-Za-z])",
            regex.IGNORECASE,
        ),
    ),
    # review 中 X 与作者…: a participant of the review
    (
        regex.compile(r"review|评审|审阅", regex.IGNORECASE),
        regex.compile(
            rf"(?:review|评审|审阅)\s*(?:中|里|时)\s*@?(?P<handle>{HANDLE})(?P<reviewer>)",
            regex.IGNORECASE,
        ),
    ),
)
NOT_HANDLES = frozenset(
    """a an the this that these those it its he she they them his her their we you i me my our
    and or of in on at to by for from with as is are was were be been being has have had do does
    did not no so but if then than also who whom which what when where why how all any each
    both one two new old pr prs review reviews reviewer reviewers author authors code commit
    patch change changes fix test tests issue issues team people user users maintainer
    maintainers final shape version original""".split()
)


def extract_people(entry: Entry) -> list[Mention]:
    """Handles with `detail` = the role, or "" when the text does not say."""
    masked = prose(entry.text).masked
    found: dict[str, Mention] = {}
    for match in AT_HANDLE.finditer(masked):
        _add(found, entry.text, match, _role_near(masked, match.start(), match.end()))
    for needed, pattern in BARE:
        if not needed.search(masked):
            continue
        for match in pattern.finditer(masked):
            if masked[max(0, match.start("handle") - 1)] == "@":
                continue  # an @handle, read above with its exact span
            if _plural_role(match):
                continue  # "structured-output maintainers", "authors should…": a group
            _add(found, entry.text, match, _role_of(match))
    return sorted(found.values())


def _add(found: dict[str, Mention], text: str, match: regex.Match[str], role: str) -> None:
    handle = match.group("handle")
    if handle.casefold() in NOT_HANDLES or handle.isdigit() or handle.endswith("-"):
        return
    start, end = match.span("handle")
    if text[start - 1 : start] == "@":
        start -= 1
    mention = Mention(Kind.PERSON, handle, text[start:end], start, end, Field.TEXT, role)
    old = found.get(handle.casefold())
    if old is None or (not old.detail and role):
        found[handle.casefold()] = mention


def _role_of(match: regex.Match[str]) -> str:
    groups = match.groupdict()
    for role in ROLE_NOUNS:
        name = role.replace("-", "_")
        if groups.get(name) is not None or groups.get(name + "_v") is not None:
            return role
    return ""


def _plural_role(match: regex.Match[str]) -> bool:
    """Whether the role noun next to a bare name is an English plural, which names a group
    ("KV connector authors should read this"), not the user beside it."""
    groups = match.groupdict()
    for role in ROLE_NOUNS:
        word = groups.get(role.replace("-", "_"))
        if word and word.isascii() and word[-1] in "sS":
            return True
    return False


NEAR = 12  # characters either side of an @handle where its role may be written
LONGEST_ROLE_WORD = 11  # "maintainers", "co-authored"


def _role_near(masked: str, start: int, end: int) -> str:
    """A role word near the handle; a Latin word the window's edge cuts is read whole, so
    that "Maintainers: @alice" is not read as "aintainers"."""
    left, right = max(0, start - NEAR), min(len(masked), end + NEAR)
    stop = max(0, left - LONGEST_ROLE_WORD)
    while left > stop and _latin(masked[left - 1]):
        left -= 1
    stop = min(len(masked), right + LONGEST_ROLE_WORD)
    while right < stop and _latin(masked[right]):
        right += 1
    window = masked[left:start] + " " + masked[end:right]
    for role in ROLE_NOUNS:
        if regex.search(f"{ROLE_NOUNS[role]}|{ROLE_VERBS[role]}", window, regex.IGNORECASE):
            return role
    return ""


def _latin(char: str) -> bool:
    return char.isascii() and (char.isalpha() or char == "-")
