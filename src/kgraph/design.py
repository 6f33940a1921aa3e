"""Design knowledge in the graph: decision, pattern, topic and person nodes, and PR literals.

The linker calls `add_entity` for every design mention of a PR and `pr_literals` once per PR;
everything that decides how design knowledge looks in the graph lives here, so `link.py`
only routes mentions. Decisions are scoped by repository (the same words in two
repositories are two decisions); patterns, topics and people are global.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from kgraph.catalog import Knowledge
from kgraph.extract.patterns import confidence_of, evidence_kind_of
from kgraph.graph import KnowledgeGraph, Node, Value, node_id
from kgraph.model import Kind, Mention

RELATIONS: dict[Kind, str] = {
    Kind.DECISION: "makesDecision",
    Kind.PATTERN: "appliesPattern",
    Kind.TOPIC: "hasTopic",
    Kind.PERSON: "involves",
}
LITERALS: dict[Kind, str] = {Kind.AUDIENCE: "recommendedFor", Kind.FOLLOW_UP: "followUp"}
# Advice a review gives named readers ("做调度的同学值得精读"), beside the general one.
SCOPED_ADVICE = {"close-read": "closeReadFor", "skim": "skimFor"}


def add_entity(
    graph: KnowledgeGraph, scope: list[str], mention: Mention, knowledge: Knowledge
) -> str | None:
    """The node a design mention denotes (created on first use), or None for other kinds."""
    if mention.kind is Kind.DECISION:
        attrs: tuple[tuple[str, Value], ...] = ()
        if mention.detail:
            attrs = (("rejectedAlternative", mention.detail),)
        return graph.add(
            Node(
                node_id("decision", *scope, _digest(" ".join(mention.key.split()).casefold())),
                "DesignDecision",
                mention.key,
                attrs,
            )
        )
    if mention.kind is Kind.PATTERN:
        return add_pattern(graph, mention.key, knowledge)
    if mention.kind is Kind.TOPIC:
        topic = knowledge.topic(mention.key)
        aliases = topic.aliases if topic else ()
        return graph.add(
            Node(
                node_id("topic", mention.key.casefold()),
                "Topic",
                mention.key,
                tuple(("altLabel", a) for a in aliases),
            )
        )
    if mention.kind is Kind.PERSON:
        return graph.add(Node(node_id("person", mention.key.casefold()), "Person", mention.key))
    return None


def add_pattern(graph: KnowledgeGraph, pattern_id: str, knowledge: Knowledge) -> str:
    pattern = knowledge.pattern(pattern_id)
    attrs: list[tuple[str, Value]] = [("notation", pattern_id)]
    label = pattern_id
    if pattern is not None:
        label = pattern.label("en")
        attrs += [("prefLabel", t) for t in pattern.labels]
        attrs += [("altLabel", t) for t in pattern.alt_labels]
        attrs += [("definition", t) for t in pattern.definitions]
    pid = graph.add(Node(node_id("pattern", pattern_id), "DesignPattern", label, tuple(attrs)))
    scheme = pattern.scheme if pattern is not None else "kgraph design patterns"
    sid = graph.add(
        Node(node_id("catalog", scheme), "PatternCatalog", scheme, (("prefLabel", scheme),))
    )
    graph.link(pid, "inScheme", sid)
    return pid


def pr_literals(mentions: Iterable[Mention]) -> list[tuple[str, Value]]:
    """`recommendedFor`, `followUp`, `closeReadFor` and `skimFor` literals of a PR, as written,
    without repeats."""
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, Value]] = []
    for m in mentions:
        name, value = LITERALS.get(m.kind), m.key
        if m.kind is Kind.ADVICE and m.detail.startswith("for:"):
            name, value = SCOPED_ADVICE[m.key], m.detail.removeprefix("for:")
        if name and (name, value) not in seen:
            seen.add((name, value))
            out.append((name, value))
    return out


def mention_suffix(mention: Mention) -> str:
    """Tells apart design mentions of one span: a clause can evidence two patterns."""
    if mention.kind is Kind.PATTERN:
        return "/" + node_id("pattern", mention.key).replace("/", "-")
    if mention.kind in RELATIONS:
        return "/" + mention.kind.value
    return ""


def mention_attributes(mention: Mention) -> tuple[tuple[str, Value], ...]:
    """What a mention node says beyond its span: the role a review gives a person, how a
    code name was recognised, how sure a pattern's evidence is and where it comes from."""
    if mention.kind is Kind.PERSON and mention.detail:
        return (("role", mention.detail),)
    if mention.kind in CODE_KINDS:
        return (("recognizedBy", recognized_by(mention)),)
    if mention.kind is Kind.PATTERN:
        return (
            ("confidence", confidence_of(mention)),
            ("evidenceKind", evidence_kind_of(mention)),
        )
    return ()


CODE_KINDS = frozenset({Kind.FILE, Kind.SYMBOL, Kind.EXTERNAL_SYMBOL})


def recognized_by(mention: Mention) -> str:
    """How a file or symbol mention was recognised: "backtick", or for a bare name what
    made it code: its "shape", the "corpus" backticking it elsewhere, or the "source"."""
    if mention.detail.startswith("bare"):
        return mention.detail.rpartition(":")[2] if ":" in mention.detail else "shape"
    return "backtick"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
