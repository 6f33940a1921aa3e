"""Reading advice: does the review say the PR deserves a close read, or a skim, and for whom?

Reviewers say it in endless words (建议精读, 值得逐行读一遍, 可以多看两眼, "worth a careful
read"; 略读即可, 整体可以快速过, 不必逐行细看, 扫一眼就够了, "safe to skim"), so the phrases
are built from two concepts rather than listed: a *close* reading (细/逐行/仔细/精 + 读/看,
"careful", "line by line") and a *light* one (扫/瞄/粗看/浏览/过一眼 + 即可/就够了, 略读,
"skim", "glance"). A negated close reading (不必逐行细看, "no need to read closely") is a
light one; negations are tried first.

Advice is often scoped: "做调度的同学值得精读，其他人略读即可". Each phrase is read with its
clause: readers named before it make it advice for them (`detail="for:<readers>"`), "其他人",
"the rest" make it advice for everyone else (`detail="others"`). The PR's one
`kg:readingAdvice` is the advice for a general reader: the one given to "the others" when
there is one, else the first unscoped phrase, else the first phrase.
"""

from __future__ import annotations

import regex

from kgraph.model import Entry, Kind, Mention

NEGATION = r"(?:不必|无需|无须|不用|不需要|没必要|不值得|不建议|用不着)"
CLOSE_ZH = r"(?:逐行|逐句|仔细|认真|细细|细|精)(?:地)?(?:读|看|审|品)"
LIGHT_ZH = (
    r"(?:快速|粗略|大致|简单|整体)?(?:扫|瞄|瞟|过|浏览|翻|看)(?:一眼|一遍|一下|两眼|一过)"
    r"[^，,。；;！!\n]{0,10}?(?:即可|就够了?|就行|就好|足矣)"
    r"|略读|略看|略过|粗看|速读|快速浏览|浏览即可|可快速过|快速过|快速扫|扫一下|扫一眼"
    r"|了解(?:一下)?(?:结论|新写法|即可)|知道结论|几分钟就能看完|一目了然"
    r"|看个大概|过目即可|扫读|粗读|简单看看|看看就行|随便看看|瞄一眼|一带而过|无需深究|不用深究"
    r"|(?:可以|可)跳过|不用细看|看(?:标题|描述|结论)就(?:够|行)"
)
SKIM_EN = (
    r"not worth a close read|no need to read (?:it )?(?:closely|carefully|line by line)"
    r"|\bskim(?:ming|med)?\b|\bskim-level\b|\bglance\b|\bskip (?:it|this)\b|\bquick (?:look|pass)\b"
    r"|\bquick read\b|\bshort and mechanical\b|\bis easy\b|\beasy to follow\b"
    r"|\blight read\b|\bskimmable\b|\bat a glance\b|\bnothing subtle\b|\bnot much to see\b"
    r"|\bquick review\b|\bmechanical change\b|\bcan be skipped\b"
)
CLOSE_EN = (
    r"worth (?:a )?(?:careful |close(?:ly)? |slow )?read(?:ing)?(?: closely| carefully)?"
    r"|read (?:it |this(?: one)? )?(?:closely|carefully|line by line)|\bline by line\b"
    r"|\bclose read\b|\bcareful (?:read|look)\b|recommended reading|must[- ]read"
    r"|deserves? a (?:careful |close )?look|\bworth (?:your|the) time\b|\bin detail\b"
    r"|\bworth studying\b|\bcareful review\b|\btake your time\b|\bread (?:it )?slowly\b"
)
SKIM = rf"{NEGATION}[^，,。；;\n]{{0,6}}?{CLOSE_ZH}|{LIGHT_ZH}|{SKIM_EN}"
CLOSE_READ = rf"{CLOSE_ZH}|值得一读|值得对照|多看(?:两|几)眼|值得细看|推荐阅读|{CLOSE_EN}"
ADVICE = regex.compile(rf"(?P<skim>{SKIM})|(?P<close>{CLOSE_READ})", regex.IGNORECASE)
# What every advice phrase contains; ADVICE, whose alternatives are tried at every
# position, runs only on the clauses that hold one (a review has one or two).
ANCHOR = regex.compile(
    r"[读看扫瞄瞟览翻略细精逐]|过(?:一|目|[即，,。；;]|$)|速过|了解|了然|知道|几分钟|跳过|深究"
    r"|skim|glance|skip|quick|read|look|mechanical|easy"
    r"|careful|close|line by line|detail|studying|review|time|nothing|not much",
    regex.IGNORECASE,
)
CLAUSE = regex.compile(r"[^。；;！!？?，,\n]++")
# Readers named in the phrase's clause, before it.
CLAUSE_START = regex.compile(r"[。；;！!？?\n，,](?=[^。；;！!？?\n，,]*$)")
OTHERS = regex.compile(
    r"(?:其他人|其余人|其他同学|其余同学|其他读者|其余读者|其他|其余)(?!部分|地方|改动|代码)"
    r"|\bthe rest\b|\bmost readers\b|\beveryone else\b|\bothers\b",
    regex.IGNORECASE,
)
READERS_ZH = regex.compile(
    r"(?:做|负责|关注|关心|维护|从事|研究|排查过|开发|接触|在做|熟悉)[^，,。；;\n]{1,30}?"
    r"(?:的)?(?:同学|人|读者|工程师|开发者|维护者|贡献者|团队)"
    r"|[^，,。；;\n\s]{1,30}?(?:相关)?的(?:同学|读者|工程师|开发者|维护者|贡献者|团队)"
)
READERS_EN = regex.compile(
    r"\b(?:anyone|people|those|engineers?|maintainers?|readers?|folks|reviewers?)\s+"
    r"(?:who|working on|touching|maintaining|owning|running|of|that)\b[^.;!?\n,]{2,60}"
    r"|\bif you (?:own|maintain|touch|work on|run|review)\b[^.;!?\n,]{2,60}",
    regex.IGNORECASE,
)


def extract_advice(entry: Entry) -> list[Mention]:
    """Every advice phrase, the general reader's first (it has no `detail`)."""
    found: list[Mention] = []
    text = entry.text
    clauses = (c for c in CLAUSE.finditer(text) if ANCHOR.search(text, c.start(), c.end()))
    for match in (m for c in clauses for m in ADVICE.finditer(text, c.start(), c.end())):
        key = "skim" if match.group("skim") else "close-read"
        found.append(
            Mention(
                Kind.ADVICE, key, match.group(0), match.start(), match.end(),
                detail=_scope(entry.text, match.start(), match.end()),
            )
        )  # fmt: skip
    if not found:
        return []
    general = next((m for m in found if m.detail == "others"), None) or next(
        (m for m in found if not m.detail.startswith("for:")), found[0]
    )
    scoped = [m for m in found if m.detail.startswith("for:")]
    return [general._replace(detail=""), *scoped]


def _scope(text: str, start: int, end: int) -> str:
    """Whom the phrase at `start` addresses: "for:<readers>", "others" or "" (everyone)."""
    before = text[max(0, start - 60) : start]
    if cut := CLAUSE_START.search(before):
        before = before[cut.end() :]
    if OTHERS.search(before):
        return "others"
    if readers := READERS_ZH.search(before) or READERS_EN.search(before):
        return "for:" + " ".join(readers.group(0).split())
    after = text[end : end + 60].split("\n", 1)[0]  # "worth a careful read for anyone who…"
    if (readers := READERS_EN.search(after)) and readers.start() <= 5:
        return "for:" + " ".join(readers.group(0).split())
    return ""
