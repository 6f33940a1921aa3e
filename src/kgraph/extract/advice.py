"""Reading advice: does the review say the PR deserves a close read, or a skim?"""

from __future__ import annotations

import regex

from kgraph.model import Entry, Kind, Mention

# Negations come first in each alternation so that "不值得精读" is not read as "值得精读".
SKIM = (
    r"不值得精读|无需精读|不必精读|不建议精读|可快速浏览|快速浏览即可|快速浏览|可略读|略读|"
    r"not worth a close read|\bskim(?:ming)?\b|\bskip it\b|quick look is enough"
)
CLOSE_READ = (
    r"建议精读|值得精读|推荐精读|值得细读|建议细读|值得一读|"
    r"worth (?:a )?close(?:ly)? read(?:ing)?|worth reading closely|read (?:it )?closely|"
    r"\bclose read\b|recommended reading|must[- ]read"
)
ADVICE = regex.compile(rf"(?P<skim>{SKIM})|(?P<close>{CLOSE_READ})", regex.IGNORECASE)


def extract_advice(entry: Entry) -> list[Mention]:
    """The first advice phrase decides: reviews open with their verdict."""
    match = ADVICE.search(entry.text)
    if match is None:
        return []
    key = "skim" if match.group("skim") else "close-read"
    return [Mention(Kind.ADVICE, key, match.group(0), match.start(), match.end())]
