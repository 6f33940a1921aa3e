"""Audience: whom the review recommends the PR to, as written.

Reviews say it as "尤其是负责 KV Offload、CPU 缓存策略或调度器的工程师", "面向维护 sglang 内存池的
同学", "对 KV offload / SWA 相关贡献者推荐阅读" or "worth a close read if you touch X". The
mention is the description of the readers, without the words that introduce it.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

from kgraph.extract.prose import prose
from kgraph.model import Entry, Kind, Mention

READERS = r"(?:工程师|同学|开发者|贡献者|读者|维护者|研究者|团队|reviewer|人)"
ROLE_VERB = r"(?:负责|做|在做|关注|维护|从事|研究|排查过|使用|开发|参与|接触)"
INTRODUCER = r"(?:尤其是|尤其适合|尤其面向|尤其|特别是|面向|适合|推荐给|对于?)"
CLAUSE_CHARS = r"[^。；;，,！!？?\n]"
BLANK = r"[^\S\n]"  # a description of readers stays on its line
ZH = regex.compile(
    rf"(?:{INTRODUCER}{BLANK}*)?(?P<who>(?:{ROLE_VERB}{CLAUSE_CHARS}{{1,60}}?"
    rf"|{CLAUSE_CHARS}{{1,40}}?(?:相关|方向)的?){BLANK}*{READERS})"
)
# No ZH match holds one of these, so each piece between them is searched on its own.
CLAUSE_END = regex.compile(r"[。；;，,！!？?\n]")
EN = regex.compile(
    r"\b(?P<who>(?:anyone|engineers?|people|those|maintainers?|reviewers?|contributors?|readers?)\s+"
    r"(?:who|working on|maintaining|touching|that)\b[^.;!?\n]{3,80}"
    r"|if you (?:touch|maintain|own|work on|debug|review)\b[^.;!?\n]{3,80})",
    regex.IGNORECASE,
)
# What every ZH match contains: a reader word, and a role verb or 相关/方向. Clauses without
# both are not scanned: the lazy clause repeats make ZH cost tens of steps per position.
ZH_NEEDS = (regex.compile(READERS), regex.compile(rf"{ROLE_VERB}|相关|方向"))
# Words that may open the description without belonging to it (`match` anchors at `pos`).
LEADING = regex.compile(rf"(?:{INTRODUCER}|值得精读|建议精读|可快速浏览)\s*")


def extract_audience(entry: Entry) -> list[Mention]:
    masked = prose(entry.text).masked
    mentions = []
    for match in [*_zh_matches(masked), *EN.finditer(masked)]:
        start, end = match.span("who")
        while lead := LEADING.match(masked, start, end):
            if lead.end() == start:
                break
            start = lead.end()
        surface = entry.text[start:end].strip()
        if len(surface) < 4:
            continue
        start = entry.text.index(surface, start)
        mentions.append(
            Mention(Kind.AUDIENCE, " ".join(surface.split()), surface, start, start + len(surface))
        )
    return sorted(mentions)


def _zh_matches(masked: str) -> Iterator[regex.Match[str]]:
    """ZH's matches, searched only in the clauses that hold what every match needs."""
    start = 0
    for end in [*(m.start() for m in CLAUSE_END.finditer(masked)), len(masked)]:
        if end - start > 1 and all(need.search(masked, start, end) for need in ZH_NEEDS):
            yield from ZH.finditer(masked, start, end)
        start = end + 1
