"""Follow-ups and risks: what the review says should happen next, or could go wrong.

A sentence is a follow-up when it holds a cue such as 后续可跟进, 若要投产，建议先…, 可考虑,
建议补…, 留意/注意, 务必, 有待验证, TODO, "follow-up", "consider". The literal kept is the
sentence from the clause that holds the first cue.
"""

from __future__ import annotations

import regex

from kgraph.extract.prose import prose
from kgraph.model import Entry, Kind, Mention

CUE = regex.compile(
    r"后续|跟进|若要投产|投产前|落地前|可考虑|可以考虑|考虑(?:把|在|将)|建议(?:先|补|对|增加|顺手|后续|同时)"
    r"|请补|补测|有待|待验证|需验证|需要验证|留意|(?<!不)注意(?!力)|务必|风险|隐患|TODO"
    r"|\bfollow-?ups?\b|\bconsider\b|\bshould also\b|\bremains? to\b|\brisks?\b|\bcaveat\b"
    r"|\bwatch out\b",
    regex.IGNORECASE,
)


def extract_follow_ups(entry: Entry) -> list[Mention]:
    p = prose(entry.text)
    mentions = []
    for start, end in p.sentences():
        cue = CUE.search(p.masked, start, end)
        if cue is None:
            continue
        clauses = p.clauses(start, end)
        first = next(c.start for c in clauses if c.end > cue.start())
        # keep a condition that introduces the advice: "若要投产，建议先…"
        before = [c for c in clauses if c.end <= first]
        if before and regex.match(
            r"若|如果|if\b", p.masked[before[-1].start : before[-1].end], regex.IGNORECASE
        ):
            first = before[-1].start
        surface = entry.text[first:end]
        mentions.append(Mention(Kind.FOLLOW_UP, " ".join(surface.split()), surface, first, end))
    return mentions
