"""Design decisions: what a review says the PR chose, and what it chose against.

A review states a decision in a few recognisable forms:

- a contrast: `X 而非 Y`, `X 而不是 Y`, `用 X 替代 Y`, `X，比 Y 更…`, `X rather than Y`,
  `X instead of Y` (Y is kept as the rejected alternative);
- a quoted statement that the review presents as a decision: after a cue ("核心决策是「…」",
  "The design choice is to "…""), before one ("“状态作用域”设计"), in a sentence about
  decisions, with a contrast of its own («…，而不是…»), or long enough to state a position;
- a numbered list introduced as decisions: `一是…；二是…`, `(1) … (2) …`, `(a) … (b) …`;
- a sentence that describes what the change chose, with no quote or contrast to mark it:
  "现在改为在 X 处统一处理…", "把 Y 交给 Z", "两个字段同时出现时以 reasoning 为准",
  "The fix now validates at …", "moves the check into … so that …" (`_described`). It is
  read only in a digest whose reviews seldom quote their decisions
  (`settle_described`): a reviewer who quotes decisions has said which they are, and the
  rest of the summary explains them. A sentence that advises the reader how to read the PR
  ("Skim, unless you maintain the recipes, in which case update them now") is addressed to
  the reader, not a decision.

Quoted text that is not a decision — a reading order, an error message, the name of a
state, something the review warns against («不要「顺手统一」») — stays out. The `key` of a
mention is the decision as written without its quote marks; `detail` the rejected
alternative.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise

import regex

from kgraph.extract.advice import ANCHOR as ADVICE_ANCHOR
from kgraph.extract.advice import extract_advice
from kgraph.extract.prose import PAIRED_QUOTES, Prose, Quote, Span, overlap, prose, tokens
from kgraph.model import Entry, Field, Kind, Mention

# Contrast markers. 替代/取代/代替 state a decision only as `用 X 替代 Y`.
CONTRAST = regex.compile(
    r"而非|而不是|\brather than\b|\binstead of\b"
    r"|(?<=(?:用|以|改用)[^，,；;。]{1,40})(?:替代|取代|代替)",
    regex.IGNORECASE,
)
# `「X」，而不是 Y` and `X，比 Y 更稳妥`: a contrast that opens the clause after the decision.
CONTRAST_AT_START = regex.compile(
    r"(?:而非|而不是|rather than|instead of)\s*(?P<rejected>.*)|比(?P<worse>[^，,；;。]{1,40}?)更",
    regex.IGNORECASE | regex.DOTALL,
)
# What every CONTRAST and CONTRAST_AT_START match contains.
ANY_CONTRAST = regex.compile(
    r"而非|而不是|rather than|instead of|替代|取代|代替|比", regex.IGNORECASE
)
# Inside a quote, "no longer" and "not" also make the quote a stance rather than a name.
QUOTE_CONTRAST = regex.compile(
    r"而非|而不是|不再|rather than|instead of|\bnot\b|\bnever\b", regex.IGNORECASE
)
# A sentence about decisions; and cues right before or after a quote.
DECISION_SENTENCE = regex.compile(r"决策|取舍|\bdecisions?\b|\bdesign choices?\b", regex.IGNORECASE)
CUE_BEFORE = regex.compile(
    r"(?:决策|设计上|设计|做法|原则|规则|约束|判断|选择|取舍|思路|约定)(?:是|为|上是|就是)?\s*+[:：]?\s*+$"
    r"|(?:decision|design choice|choice|rule|principle|approach|guideline)s?\b[^.;:]{0,30}$",
    regex.IGNORECASE,
)
# `\G`: used with `match` at a quote's end; anchored, a search stays linear on long blanks.
CUE_AFTER = regex.compile(
    r"\G\s*(?:的|这一|这个)?[^，,；;。]{0,6}?(?:设计|原则|约定|思路|做法|决策)", regex.IGNORECASE
)
# Words before a quote (in its clause) that make it something other than a decision;
# 按 and 即 only right before it.
NOT_A_DECISION = regex.compile(
    r"不要|不应|避免|为什么|理解|表示|区分|标记"
    r"|\bmeans?\b|\berror\b|\bmessage\b|\bcalled\b|\bnamed\b|\blabel",
    regex.IGNORECASE,
)
NOT_A_DECISION_RIGHT_BEFORE = frozenset("按即")
# Sentences about the old code or a suggestion do not state the PR's decision.
OLD_OR_SUGGESTED = regex.compile(
    r"过去|原来|原先|以前|此前|旧代码|旧逻辑|可考虑|可以考虑|考虑把|建议把|建议将"
    r"|\bused to\b|\bpreviously\b|\bformerly\b|\bconsider\b|\bcould\b|\bshould\b",
    regex.IGNORECASE,
)

# Numbered items: 一是/二是, (1)/(2), (a)/(b), ①/②. The list must be introduced as decisions.
ITEM_MARKER = regex.compile(
    r"(?<=^|[\s：:；;，,。])(?:(?P<zh>[一二三四五六七八九十])是"
    r"|[(（](?P<num>[1-9])[)）]|[(（](?P<abc>[a-h])[)）]|(?P<circled>[①-⑨]))"
)
LIST_INTRODUCTION = regex.compile(r"决策|取舍|decisions?|design choices?", regex.IGNORECASE)
# A clause that explains, motivates or qualifies the item rather than stating it.
EXPLANATION = regex.compile(
    r"^(?:从而|以便|以免|以及|使得?|这是|这|它(?!决定)|其|因为|因此|所以|理由|避免|防止|目的|"
    r"代价|即|对应|阅读|建议|为什么|理解|也|并|否则|具体|例如|比如|是|但|不过|如何|"
    r"so\b|which\b|this\b|that\b|because\b|to avoid\b|but\b|e\.g\.)",
    regex.IGNORECASE,
)
CONTINUATION = regex.compile(r"并(?:且)?(?:以|通过|用|把|将|让)")
ACTION = regex.compile(r"^(?:用|把|将|以|通过|让|改用|改为)")
TEST_ITEM = regex.compile(
    r"\G\s*(?:(?:新增|新的|对应的?)?(?:测试|单测|用例)|tests?\b)", regex.IGNORECASE
)
LEADING_FILLER = regex.compile(
    r"^(?:(?:也|并且?|同时|顺带|而且|另外|(?:and|also|which|so)\b)\s*)+", regex.IGNORECASE
)
TRAILING_PARENTHESIS = regex.compile(r"(?<!\s)\s*+[（(][^（）()]*+[)）]\s*+$")
TERM_TOKENS = 4  # a quote this short is a term inside a decision, not the decision
STATEMENT_TOKENS = 15  # a quote this long states a position even without a cue


# A described decision. The sentence that opens with the change ("修复把…", "本 PR 给…",
# "The fix appends…") states what it chose; elsewhere a choice verb must say so
# ("改为", "统一由", "以 X 为准", "不再", "now", "so that", "instead of").
CHANGE_LEAD = regex.compile(
    r"^(?:[-*•]\s*)?(?:[^，,。]{0,40}?的修复(?:是|只有)|修复(?:后|就是|只有[^，,：:]{0,6}[：:，,]?|很直接[：:，,]?)?|本\s*PR|这个\s*PR|该\s*PR|PR\s|此次|这次|"
    r"改动(?:后|是)|新(?:的)?(?:逻辑|代码|实现|写法)|现在|如今|做法是|取舍是|这里的取舍|设计上|"
    r"(?:the|this) (?:fix|pr|change|patch)\b|the new (?:code|logic|version)\b|this adds\b|now\b|"
    r"in other words\b)",
    regex.IGNORECASE,
)
# A sentence whose subject is code and whose verb is a change ("encoder_cache_manager.py 给
# `EncoderCacheManager` 加了…", "`rejection_kernel` now short-circuits…"): a decision unless it
# is about the old code.
CODE_SUBJECT = regex.compile(
    r"^(?:[-*•]\s*)?(?:in [^,，]{1,60}[,，]\s*)?"
    r"(?:[\w./-]+\.(?:py|rs|cu|cuh|cpp|cc|h|hpp|go|ts|js)|`[^`]{1,80}`|[A-Z][A-Za-z0-9_]+(?:\.\w+)*"
    r"|the (?:method|helper|function|class|kernel|scheduler|worker|engine|loader|parser|validator))"
    r"[^，,。.;；]{0,40}?"
    r"(?:新增|加了|添加|增加|改为|改成|删掉|删除|去掉|不再|现在|直接|统一|把|让|给|补上|拆成|包出|写成"
    r"|\b(?:now )?(?:adds?|gets?|drops?|short-circuits?|clamps?|raises?|routes?|moves?|replaces?"
    r"|skips?|validates?|rejects?|keeps?|clones?|takes?|splits?|owns?|caches?)\b)",
    regex.IGNORECASE,
)
NO_CHANGE = regex.compile(
    r"^[^，,；;]{0,12}(?:没有|没带|未|不涉及|no |does not|doesn't|did not)", regex.IGNORECASE
)
CHOICE = regex.compile(
    r"改为|改成|改用|改由|改走|换成|统一(?:由|为|交给|走|用|改|到|放在)|收敛(?:到|为|成)"
    r"|只在|仅在|只有[^，,；;。]{1,30}?才|不再|以[^，,；;。]{1,20}?为准|交给|交由"
    r"|挪(?:进|到|入)|移(?:到|进|入)|并入|并进|合并(?:到|进)|一律|取舍"
    r"|\bnow\b|\bso that\b|\bmoves? (?:the |this |it )?\w+ (?:into|to|out of)\b"
    r"|\bin one place\b|\bgoes back to\b|\binstead\b|\brather than\b",
    regex.IGNORECASE,
)
# Sentences that are not the PR's decision: a suggestion, the tests, the old code or bug,
# an explanation of its cost or cause.
# A suggestion, or a change made in passing (顺便, 跟着), is not the PR's decision.
SUGGESTION = regex.compile(
    r"建议|后续|可以考虑|值得[^，,；;。]{0,6}(?:跟进|量|补)|如果还有|(?:以后|将来)(?:要|再)"
    r"|还没(?:有)?(?:真正)?落地"
    r"|顺便|顺带|也一起|跟着|同步改|\bin passing\b|\balong the way\b|\balso renames?\b"
    r"|\bfollow[- ]up\b|\bwould\b|\bshould\b|\bcould\b|\bconsider\b",
    regex.IGNORECASE,
)
NOT_DESCRIBED = regex.compile(
    r"过去|原来|原先|原本|以前|此前|之前|旧代码|旧逻辑|原代码|问题(?:来自|在于|是)|本来|代价|原因|注释"
    r"|\bused to\b|\bpreviously\b|\bbefore this\b|\bbreaks?\b|\bbug\b|\bfailed\b|\bcrash",
    regex.IGNORECASE,
)
ABOUT_TESTS = regex.compile(
    r"^(?:[-*•]\s*)?(?:新增的?\s*)?"
    r"(?:测试|用例|单测|(?:the |a |new |that |this |these )*tests?\b|[\w/]*test_\w+|`?tests/|`test_"
    r"|no test|there is no)",
    regex.IGNORECASE,
)
DESCRIBED_MIN_TOKENS = 6
# A summary states one or two decisions; the rest of it explains them. The strongest
# described sentence is kept, and a second one only when it too opens with the change.
MAX_DESCRIBED = 2
# Marks a described decision until its digest's style is known (`settle_described`).
DESCRIBED = "\0described"
# A digest with at least this share of entries quoting a decision marks its decisions by
# quoting them; measured: the quoting digests of seeds and dev quote in 31-75 % of their
# entries, plain-prose digests in 0-20 %.
QUOTING_SHARE = 0.25
QUOTE_OPENERS = frozenset("「『“‘\"'")


@dataclass(frozen=True, slots=True, order=True)
class Candidate:
    start: int
    end: int
    rejected: str = ""


def extract_decisions(entry: Entry) -> list[Mention]:
    """Decisions of the summary, then those of the title that the summary does not repeat."""
    body = _mentions(entry.text, Field.TEXT)
    body_keys = sorted({b.key for b in body})
    repeated: dict[str, bool] = {}  # per distinct title key: a long title repeats itself
    title = []
    for m in _mentions(entry.title, Field.TITLE):
        if m.key not in repeated:
            repeated[m.key] = any(overlap(m.key, key) >= 0.5 for key in body_keys)
        if not repeated[m.key]:
            title.append(m)
    return body + title


def _mentions(text: str, field: Field) -> list[Mention]:
    p = prose(text)
    found: list[Candidate] = []
    marked: set[tuple[int, int]] = set()  # the sentences that state a decision already
    for start, end in p.sentences():
        if stated := _in_sentence(p, start, end):
            found.extend(stated)
            marked.add((start, end))
    if field is Field.TEXT and not _any_quoted(p, found):
        described = [
            (d, start, end)
            for start, end in p.sentences()
            if (start, end) not in marked and (d := _described(p, start, end)) is not None
        ]
        ranked = sorted(d for d, start, end in described if not _advises(text[start:end]))
        found.extend(
            c
            for i, (strength, c) in enumerate(ranked)
            if i == 0 or (i < MAX_DESCRIBED and strength <= 1)
        )
    mentions: list[Mention] = []
    for c in _outermost(found):
        start, end = _trim(p.text, c.start, c.end)
        if end - start < 2 or not tokens(p.text[start:end]):
            continue
        surface = p.text[start:end]
        mentions.append(
            Mention(
                Kind.DECISION, " ".join(surface.split()), surface, start, end, field, c.rejected
            )
        )
    return mentions


def _advises(sentence: str) -> bool:
    """Whether the sentence tells the reader how to read the PR (then it is no decision)."""
    return ADVICE_ANCHOR.search(sentence) is not None and bool(
        extract_advice(Entry("", 0, "", sentence))
    )


def _any_quoted(p: Prose, candidates: Sequence[Candidate]) -> bool:
    """Whether the review marked one of these decisions by quoting it: some quote starting at
    or before a candidate reaches past its end. By bisection over the quotes' starts and the
    furthest end so far; a scan of every quote per candidate was quadratic."""
    spans = sorted((q.inner_start, q.inner_end) for q in p.quotes)
    starts = [start for start, _ in spans]
    reach = list(accumulate((end for _, end in spans), max))
    for c in candidates:
        i = bisect_right(starts, c.start) - 1
        if i >= 0 and reach[i] >= c.end:
            return True
    return False


def _described(p: Prose, start: int, end: int) -> tuple[int, Candidate] | None:
    """The clause of a sentence that says what the change chose, with how strongly the
    sentence says so (0: it opens with the change, 1: a choice verb, 2: code doing
    something new), or None."""
    sentence = p.masked[start:end].strip()
    if len(tokens(sentence)) < DESCRIBED_MIN_TOKENS + 2:
        return None  # "修复分两层。" announces what follows
    if (
        SUGGESTION.search(sentence)
        or ABOUT_TESTS.match(p.text[start:end].strip())
        or NO_CHANGE.match(sentence)
    ):
        return None
    if CHANGE_LEAD.match(sentence):
        strength = 0
    elif NOT_DESCRIBED.search(sentence):
        return None
    elif CHOICE.search(sentence):
        strength = 1
    elif CODE_SUBJECT.match(sentence):
        strength = 2
    else:
        return None
    clauses = p.clauses(start, end)
    for i, clause in enumerate(clauses):
        if strength != 1 or CHOICE.search(p.masked, clause.start, clause.end):
            last = clause.end
            for following in clauses[i + 1 :]:  # a short clause takes the next ones along
                if len(tokens(p.text[clause.start : last])) >= DESCRIBED_MIN_TOKENS:
                    break
                last = following.end
            return strength, Candidate(clause.start, last, DESCRIBED)
    return None


def settle_described(
    texts: Sequence[str], mentions: Sequence[tuple[Mention, ...]]
) -> list[tuple[Mention, ...]]:
    """Each entry's mentions with its described decisions kept, when the digest (the
    entries with these `texts`) mostly describes its decisions, or dropped."""
    quoting = sum(
        any(
            m.kind is Kind.DECISION
            and m.detail != DESCRIBED
            and m.start > 0
            and (m.field is Field.TEXT and text[m.start - 1] in QUOTE_OPENERS)
            for m in found
        )
        for text, found in zip(texts, mentions, strict=True)
    )
    drop = quoting >= QUOTING_SHARE * len(texts)
    settled = []
    for found in mentions:
        if not any(m.detail == DESCRIBED for m in found):
            settled.append(found)
            continue
        kept = (
            m._replace(detail="") if m.detail == DESCRIBED else m
            for m in found
            if not (drop and m.detail == DESCRIBED)
        )
        settled.append(tuple(sorted(kept)))
    return settled


def _in_sentence(p: Prose, start: int, end: int) -> list[Candidate]:
    if not (
        p.quotes_in(start, end)
        or ANY_CONTRAST.search(p.masked, start, end)
        or ITEM_MARKER.search(p.masked, start, end)
    ):
        return []  # every decision is a quote, a contrast or a list item
    found: list[Candidate] = []
    items = _decision_items(p, start, end)
    for item in items:
        found.extend(_from_item(p, item))
    in_items = sorted((i.marker, i.end) for i in items)

    def free(position: int) -> bool:  # by bisection: a scan per clause was quadratic
        index = bisect_right(in_items, position, key=lambda span: span[0]) - 1
        return not any(a <= position < b for a, b in in_items[max(0, index - 1) : index + 1])

    sentence = p.masked[start:end]
    decision_sentence = bool(DECISION_SENTENCE.search(sentence))
    # The first old-or-suggested cue, searched once: the clauses after it are about old code.
    old_or_suggested = OLD_OR_SUGGESTED.search(sentence)
    old_end = start + old_or_suggested.end() if old_or_suggested else None
    clauses = p.clauses(start, end)
    stated_before = False
    for clause in clauses:
        if not free(clause.start):
            continue
        stated = _from_clause(p, clause, start, decision_sentence, False, old_end)
        if not stated and stated_before and CONTINUATION.match(p.masked, clause.start, clause.end):
            stated = [Candidate(clause.start, clause.end)]  # "「X」，并以 Y 兼容 Z"
        found.extend(stated)
        stated_before = bool(stated)
    # `「X」，而不是 Y`: a contrast opening a clause belongs to the clause before it.
    for before, after in pairwise(clauses):
        lead = CONTRAST_AT_START.match(p.masked, after.start, after.end)
        if not lead or not free(after.start) or old_or_suggested:
            continue
        worse = lead.span("worse") if lead.group("worse") else (lead.start("rejected"), after.end)
        rejected = _unquoted(p.text[worse[0] : worse[1]])
        quote = _last_quote(p, before)
        if quote is not None:
            found.append(Candidate(quote.inner_start, quote.inner_end, rejected))
        else:
            found.append(Candidate(before.start, after.end, rejected))
    return found


def _from_clause(
    p: Prose,
    clause: Span,
    sentence_start: int,
    decision_sentence: bool,
    in_list: bool,
    old_end: int | None,
) -> list[Candidate]:
    """A contrast, and the decision quotes, of one clause. `old_end` is where the sentence's
    first old-or-suggested cue ends (None: it has none)."""
    found: list[Candidate] = []
    negation = NOT_A_DECISION.search(p.masked, clause.start, clause.end)
    quotes = [
        q for q in p.quotes_in(clause.start, clause.end) if _not_negated(p, clause, q, negation)
    ]
    contrast = _contrast(p, clause)
    if contrast is not None:
        quoted = any(q.inner_start <= contrast.start() < q.inner_end for q in quotes)
        if in_list or quoted or old_end is None or old_end > clause.end:
            found.append(_contrast_decision(p, clause, contrast, quotes))
            # other quotes the review marks as decisions: '"A 而非 B" + "C"的设计'
            found.extend(
                Candidate(q.inner_start, q.inner_end)
                for q in quotes
                if _cued(p, q, sentence_start) and not _inside(q, found[0])
            )
        return found
    decisive = [q for q in quotes if in_list or _decisive(p, q, sentence_start, decision_sentence)]
    if decisive:
        found.append(_quote_decision(p, clause, decisive, sentence_start))
    return found


def _inside(q: Quote, c: Candidate) -> bool:
    return c.start <= q.inner_start and q.inner_end <= c.end


def _contrast(p: Prose, clause: Span) -> regex.Match[str] | None:
    """The clause's first contrast marker; one opening the clause belongs to the clause before."""
    for match in CONTRAST.finditer(p.masked, clause.start, clause.end):
        if match.start() != clause.start:
            return match
    return None


def _contrast_decision(
    p: Prose, clause: Span, marker: regex.Match[str], quotes: list[Quote]
) -> Candidate:
    """`X 而非 Y`: the quote holding the contrast, a stated quote in X, or the whole segment."""
    holder = next((q for q in quotes if q.inner_start <= marker.start() < q.inner_end), None)
    if holder is not None:
        return Candidate(
            holder.inner_start, holder.inner_end, _rejected(p, marker, holder.inner_end)
        )
    left, right = p.enclosing(marker.start())
    start, end = max(left, clause.start), min(right, clause.end)
    if (left, right) != (0, len(p.text)):  # a contrast inside brackets: its 、-segment
        for piece in p.clauses(left, right, split_enumeration=True):
            if piece.start <= marker.start() < piece.end:
                start, end = piece.start, piece.end
    stated = [
        q
        for q in quotes
        if start <= q.start and q.end <= marker.start() and len(tokens(_inner(p, q))) > TERM_TOKENS
    ]
    if len(stated) == 1:
        return Candidate(stated[0].inner_start, stated[0].inner_end, _rejected(p, marker, end))
    return Candidate(start, end, _rejected(p, marker, end))


def _rejected(p: Prose, marker: regex.Match[str], end: int) -> str:
    return _unquoted(p.text[marker.end() : end])


def _unquoted(text: str) -> str:
    """Without edge blanks and punctuation, and without quote marks around the whole."""
    text = text.strip().rstrip("。.,，;；:：")
    for opener, closer in (*PAIRED_QUOTES.items(), ('"', '"'), ("'", "'")):
        if len(text) > 2 and text[0] == opener and text[-1] == closer:
            inner = text[1:-1]
            if opener not in inner and closer not in inner:
                return inner
    return text


def _quote_decision(p: Prose, clause: Span, quotes: list[Quote], sentence_start: int) -> Candidate:
    """One stated quote is the decision; several, or a short term inside a clause
    («把「估算等于实测」写成断言»), make the clause the decision."""
    if len(quotes) == 1:
        (q,) = quotes
        before = p.masked[clause.start : q.start]
        term = len(tokens(_inner(p, q))) <= TERM_TOKENS or regex.search(r"(?:把|将|从)\s*$", before)
        if (
            not term
            or (q.start, q.end) == (clause.start, clause.end)
            or _cued(p, q, sentence_start)
        ):
            return Candidate(q.inner_start, q.inner_end)
    return Candidate(clause.start, clause.end)


def _decisive(p: Prose, q: Quote, sentence_start: int, decision_sentence: bool) -> bool:
    inner = _inner(p, q)
    size = len(tokens(inner))
    if (QUOTE_CONTRAST.search(inner) and size > TERM_TOKENS) or size >= STATEMENT_TOKENS:
        return True
    return _cued(p, q, sentence_start) or decision_sentence


def _cued(p: Prose, q: Quote, sentence_start: int) -> bool:
    """A decision cue right before the quote ("决策是「") or right after it ("」的设计")."""
    if CUE_BEFORE.search(p.masked[max(sentence_start, q.start - 40) : q.start]):
        return True
    return bool(CUE_AFTER.match(p.masked, q.end, min(len(p.text), q.end + 12)))


def _not_negated(p: Prose, clause: Span, q: Quote, negation: regex.Match[str] | None) -> bool:
    """No negating word between the clause's start and the quote. `negation` is the clause's
    first one, searched once: a search per quote made a long clause of quotes quadratic."""
    if negation is not None and negation.end() <= q.start:
        return False
    before = q.start
    while before > clause.start and p.masked[before - 1].isspace():
        before -= 1
    return not (before > clause.start and p.masked[before - 1] in NOT_A_DECISION_RIGHT_BEFORE)


@dataclass(frozen=True, slots=True, order=True)
class Item:
    marker: int
    start: int  # after the marker
    end: int


def _decision_items(p: Prose, start: int, end: int) -> list[Item]:
    """Items of a numbered list (two or more markers of one style) introduced as decisions."""
    markers = [m for m in ITEM_MARKER.finditer(p.masked, start, end) if p.depth[m.start()] == 0]
    if len(markers) < 2:
        return []
    style = markers[0].lastgroup
    markers = [m for m in markers if m.lastgroup == style]
    introduction = p.masked[max(0, markers[0].start() - 80) : markers[0].start()]
    if len(markers) < 2 or not LIST_INTRODUCTION.search(introduction.rsplit("\n", 1)[-1]):
        return []
    return [
        Item(m.start(), m.end(), markers[i + 1].start() if i + 1 < len(markers) else end)
        for i, m in enumerate(markers)
    ]


def _from_item(p: Prose, item: Item) -> list[Candidate]:
    """An item's decisions: its contrasts and stated quotes, else its leading statement
    (after a `label——`), continued by clauses that start with an action (用/把/通过…)."""
    found: list[Candidate] = []
    opening = True
    previous_described = False
    test_item = bool(TEST_ITEM.match(p.masked, item.start, item.end))
    for clause in p.clauses(item.start, item.end):
        if clause.separator == "——" and opening:
            continue  # a label: "闭区间语义——…"
        head = p.masked[clause.start : clause.end]
        explained = bool(EXPLANATION.match(head))
        stated = [] if explained else _from_clause(p, clause, item.start, True, True, None)
        if stated:
            found.extend(stated)
            previous_described = False
        elif opening and not explained and not test_item:
            found.append(Candidate(clause.start, clause.end))
            previous_described = True
        elif previous_described and ACTION.match(head):
            found.append(Candidate(clause.start, clause.end))
        else:
            previous_described = False
        opening = False
    return found


def _last_quote(p: Prose, clause: Span) -> Quote | None:
    quotes = p.quotes_in(clause.start, clause.end)
    if quotes and p.text[quotes[-1].end : clause.end].strip() == "":
        return quotes[-1]
    return None


def _inner(p: Prose, q: Quote) -> str:
    return p.text[q.inner_start : q.inner_end]


def _outermost(candidates: list[Candidate]) -> list[Candidate]:
    """Drop a candidate inside another; of identical spans keep one with a rejected
    alternative (the order is total, so the choice never depends on hashing)."""
    ordered = sorted(set(candidates), key=lambda c: (c.start, -c.end, c.rejected == "", c.rejected))
    kept: list[Candidate] = []
    reach = -1  # every kept candidate starts at or before `c`: `c` is inside one iff it ends
    for c in ordered:  # by the furthest kept end (a scan of `kept` was quadratic)
        if c.end <= reach:
            continue
        kept.append(c)
        reach = c.end
    return kept


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Without leading fillers (也, 并, and…), a trailing parenthesis or punctuation."""
    segment = text[start:end]
    if lead := LEADING_FILLER.match(segment):
        start += lead.end()
    segment = text[start:end]
    if (tail := TRAILING_PARENTHESIS.search(segment)) and tail.start() > 0:
        end = start + tail.start()
    while end > start and text[end - 1] in " \t。.,，;；:：、":
        end -= 1
    while start < end and text[start] in " \t":
        start += 1
    return start, end
