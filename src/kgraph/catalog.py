"""The design knowledge users tune: the pattern catalog and the topic alias table, as SKOS.

Both are Turtle files (`schemas/patterns.ttl`, `schemas/topics.ttl`) that users extend with
their own files (`--catalog`, `--topics`) without touching code. A pattern is a
`kg:DesignPattern` with a `skos:notation` (its id), labels, a definition and cues: regular
expressions (`kg:cue`) and phrases (`skos:prefLabel`, `skos:altLabel`) whose presence in a
summary is evidence of it. A topic is a `kg:Topic` with a `skos:prefLabel` and the
`skos:altLabel`s that are other names for it ("PD" for "P/D").
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.resources
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pyoxigraph as ox
import regex

from kgraph.cue_syntax import alternatives
from kgraph.cues import CueGate
from kgraph.errors import UsageError
from kgraph.graph import Text
from kgraph.ingest.text import quoted
from kgraph.limits import MAX_NESTING, nesting
from kgraph.pattern_model import PatternModel, parse_model
from kgraph.vocab import KG, NAMESPACES

SKOS = NAMESPACES["skos"]
RDF_TYPE = NAMESPACES["rdf"] + "type"
BUILTIN_PATTERNS = "patterns.ttl"
BUILTIN_CONCEPTS = "concepts.ttl"
BUILTIN_TOPICS = "topics.ttl"
BUILTIN_MODEL = "pattern-model.json"  # trained by bench/pattern_ngrams.py
# The confidence a pattern's evidence must reach to be applied, unless the build says
# otherwise (`--pattern-threshold`): the threshold that maximises F1 on the tune corpus
# (tests/data/patterns/tune, tests/data/prose/tune, the seeds and dev) in 5-fold
# cross-validation, as the shipped model's own tune figures are in-sample
# (`python bench/pattern_classifier.py`, its row `rules+ngrams|c`), among those that keep
# the seeds and dev at 0.9 precision and recall, as the patterns issue asks: 0.65 and 0.70
# differ by 0.0005 of F1 there, and at 0.65 dev's precision is 0.889.
DEFAULT_PATTERN_THRESHOLD = 0.7
# The same for the concept rules alone, without the model (its row `rules`).
RULES_THRESHOLD = 0.55
# The confidence a kg:cue match (a phrase written for one pattern) gives its pattern, unless
# the pattern says otherwise (kg:cueWeight, learned by bench/pattern_weights.py).
CUE_WEIGHT = 0.8


class CatalogError(UsageError, ValueError):
    """A catalog or topic file that cannot be used, as `FILE:LINE: message`."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}:{line}: error: {message}")
        self.source, self.line, self.message = source, line, message


@dataclass(frozen=True, slots=True)
class Cue:
    """One way a summary gives a pattern away: a regular expression, or a label as a phrase.

    The expression is compiled when first run: a build runs few of the catalog's 1,400
    expressions (`kgraph.cues` skips the rest), and compiling them all took a third of a
    second at every start. User catalogs are still compiled, and so checked, on loading.
    """

    expression: str  # the regular expression as compiled
    lang: str
    source: str  # as written in the catalog
    flags: int = regex.IGNORECASE | regex.V0
    # Seconds one match may take, for a user's cue (the built-in ones are audited by the
    # tests, and a timeout doubles a search's cost); and where the cue is written.
    timeout: float | None = None
    where: str = ""

    @property
    def pattern(self) -> regex.Pattern[str]:
        return _compiled(self.expression, self.flags)

    @property
    def has_gaps(self) -> bool:
        """Whether the cue allows some text between its parts (`[^，,；;。]{0,20}`)."""
        return "{" in self.source or "*" in self.source or "+" in self.source


@dataclass(frozen=True, slots=True)
class DesignPattern:
    id: str
    labels: tuple[Text, ...]
    definitions: tuple[Text, ...]
    alt_labels: tuple[Text, ...]
    cues: tuple[Cue, ...]  # kg:cue expressions, then labels as literal phrases
    examples: tuple[Text, ...]
    scheme: str  # the label of its skos:ConceptScheme
    cue_weight: float = 0.8  # the confidence a match of its own cues gives it (kg:cueWeight)

    def label(self, lang: str = "en") -> str:
        return next((t.text for t in self.labels if t.lang == lang), self.id)


@dataclass(frozen=True, slots=True)
class DesignConcept:
    """One idea reviews state in many words (*reject*, *invalid input*, *early*), shared by
    the patterns: recognised by its cues in Chinese, English and code spans."""

    id: str
    labels: tuple[Text, ...]
    definitions: tuple[Text, ...]
    cues: tuple[Cue, ...]
    examples: tuple[Text, ...]


@dataclass(frozen=True, slots=True)
class Combination:
    """Concepts whose cues all occur in one sentence or title give a pattern away, with a
    weight: the confidence that evidence gives the pattern."""

    name: str  # the local name of its IRI, for reports
    pattern: str  # a pattern id
    concepts: tuple[str, ...]  # concept ids
    weight: float


@dataclass(frozen=True, slots=True)
class Topic:
    label: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Knowledge:
    """Everything the design extractors and the linker read besides the digests."""

    patterns: tuple[DesignPattern, ...] = ()
    topics: tuple[Topic, ...] = ()
    topic_names: regex.Pattern[str] | None = None  # every label and alias, longest first
    topic_of: dict[str, str] = field(default_factory=dict)  # casefolded name -> label
    # Every pattern's cues in order, with the pattern's id; the gate's cue indexes.
    cues: tuple[tuple[str, Cue], ...] = ()
    # Which cues may match a text.
    cue_gate: CueGate = field(default_factory=CueGate)
    fingerprint: str = ""  # a hash of the catalog and topic files it was loaded from
    concepts: tuple[DesignConcept, ...] = ()
    combinations: tuple[Combination, ...] = ()
    # Every concept's cues in order, with the concept's id; the gate's cue indexes.
    concept_cues: tuple[tuple[str, Cue], ...] = ()
    concept_gate: CueGate = field(default_factory=CueGate)
    pattern_threshold: float = DEFAULT_PATTERN_THRESHOLD
    # The learned second opinion (`kgraph.pattern_model`), None for the rules alone.
    pattern_model: PatternModel | None = None

    def pattern(self, pattern_id: str) -> DesignPattern | None:
        return next((p for p in self.patterns if p.id == pattern_id), None)

    def topic(self, label: str) -> Topic | None:
        return next((t for t in self.topics if t.label == label), None)

    def canonical_topic(self, name: str) -> str:
        """The topic's label for any of its names; an unknown name is its own label."""
        return self.topic_of.get(_fold(name), name)


def load_knowledge(
    catalogs: Sequence[Path] = (),
    topics: Sequence[Path] = (),
    pattern_threshold: float = DEFAULT_PATTERN_THRESHOLD,
    pattern_model: bool = True,
) -> Knowledge:
    """The built-in catalog (patterns and concepts) and topic table, extended by the user's
    files in order; a pattern applies when its evidence reaches `pattern_threshold`.
    `pattern_model`: whether the built-in n-gram model weighs in (`kgraph.pattern_model`)."""
    if not 0.0 <= pattern_threshold <= 1.0:
        raise ValueError(f"the pattern threshold must be between 0 and 1, not {pattern_threshold}")
    builtin = [_builtin(BUILTIN_PATTERNS), _builtin(BUILTIN_CONCEPTS)]
    pattern_sources = [*builtin, *((str(p), _read(p)) for p in catalogs)]
    topic_sources = [_builtin(BUILTIN_TOPICS), *((str(p), _read(p)) for p in topics)]
    docs = [_parse(source, text) for source, text in pattern_sources]
    checked_from = len(builtin)  # the tests check the built-in files
    patterns = _load_patterns(docs, checked_from)
    concepts, combinations = _load_concepts(docs, {p.id for p in patterns}, checked_from)
    table = _load_topics(topic_sources)
    digest = hashlib.sha256()
    for source, text in (*pattern_sources, ("topics", ""), *topic_sources):
        digest.update(f"{len(source)}:{source}{len(text)}:{text}".encode("utf-8", "replace"))
    digest.update(f"threshold:{pattern_threshold!r}".encode())
    model = None
    if pattern_model:
        _, text = _builtin(BUILTIN_MODEL)
        digest.update(f"model:{len(text)}:{text}".encode())
        model = _builtin_model(text)
    return dataclasses.replace(
        _knowledge(patterns, table, concepts, combinations),
        fingerprint=digest.hexdigest(),
        pattern_threshold=pattern_threshold,
        pattern_model=model,
    )


@cache
def _builtin_model(text: str) -> PatternModel:
    """Parsed once a process: the file is 125 KiB of JSON."""
    return parse_model(text)


@cache
def builtin_knowledge() -> Knowledge:
    return load_knowledge()


def _builtin(name: str) -> tuple[str, str]:
    resource = importlib.resources.files("kgraph.schemas").joinpath(name)
    return f"schemas/{name}", resource.read_text("utf-8")


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8-sig")
    except FileNotFoundError:
        raise CatalogError(str(path), 0, "no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise CatalogError(str(path), 0, f"cannot read: {error}") from None


# --- reading SKOS -----------------------------------------------------------------------------

Term = ox.NamedNode | ox.BlankNode | ox.Literal


@dataclass(slots=True)
class _Document:
    source: str
    text: str
    subjects: dict[str, dict[str, list[Term]]]

    def line_of(self, needle: str) -> int:
        """The first line that holds `needle` as written in Turtle (1 when not found)."""
        written = needle.replace("\\", "\\\\").replace('"', '\\"')
        for candidate in (written, needle, written[:40]):
            for number, line in enumerate(self.text.splitlines(), 1):
                if candidate and candidate in line:
                    return number
        return 1

    def line_of_subject(self, subject: str) -> int:
        """The line where `subject` opens a description: `<iri>` or `prefix:name` first on it."""
        local = regex.escape(subject.rsplit("#", 1)[-1].rsplit("/", 1)[-1])
        written = regex.compile(rf"^\s*(?:<{regex.escape(subject)}>|[\w-]*:{local}(?![\w-]))")
        for number, line in enumerate(self.text.splitlines(), 1):
            if written.match(line):
                return number
        return 1

    def typed(self, class_iri: str) -> list[str]:
        return sorted(
            s
            for s, props in self.subjects.items()
            if any(
                isinstance(o, ox.NamedNode) and o.value == class_iri
                for o in props.get(RDF_TYPE, [])
            )
        )

    def texts(self, subject: str, predicate: str) -> list[Text]:
        return sorted(
            Text(o.value, o.language or "")
            for o in self.subjects[subject].get(predicate, [])
            if isinstance(o, ox.Literal)
        )


def _parse(source: str, text: str) -> _Document:
    try:
        quads = ox.parse(text.encode("utf-8"), format=ox.RdfFormat.TURTLE)
        subjects: dict[str, dict[str, list[Term]]] = {}
        for quad in quads:
            subject = quad.subject
            key = (
                subject.value if isinstance(subject, ox.NamedNode | ox.BlankNode) else str(subject)
            )
            predicate = quad.predicate.value
            obj = quad.object
            if isinstance(obj, ox.NamedNode | ox.BlankNode | ox.Literal):
                subjects.setdefault(key, {}).setdefault(predicate, []).append(obj)
    except SyntaxError as error:
        raise CatalogError(source, error.lineno or 1, f"not valid Turtle: {error.msg}") from None
    return _Document(source, text, subjects)


_CATALOG_CLASSES = ("DesignPattern", "DesignConcept", "ConceptCombination")


def _load_patterns(docs: Sequence[_Document], checked_from: int = 0) -> list[_PatternDraft]:
    """Drafts of every pattern; cues of the sources from `checked_from` on are compiled now,
    so that a bad expression in a user's file is reported with its line before the build."""
    drafts: dict[str, _PatternDraft] = {}
    for position, doc in enumerate(docs):
        source = doc.source
        schemes = {s: _scheme_label(doc, s) for s in doc.typed(SKOS + "ConceptScheme")}
        if not any(doc.typed(KG + name) for name in _CATALOG_CLASSES):
            raise CatalogError(
                source,
                1,
                "no kg:DesignPattern, kg:DesignConcept or kg:ConceptCombination in this file",
            )
        for subject in doc.typed(KG + "DesignPattern"):
            notations = [o.value for o in doc.subjects[subject].get(SKOS + "notation", [])]
            if len(notations) != 1 or not notations[0].strip():
                raise CatalogError(
                    source,
                    doc.line_of_subject(subject),
                    f"pattern <{subject}> needs exactly one skos:notation (its id)",
                )
            pattern_id = notations[0].strip()
            line = doc.line_of_subject(subject)
            draft = drafts.setdefault(pattern_id, _PatternDraft(pattern_id, (source, line)))
            in_scheme = [o.value for o in doc.subjects[subject].get(SKOS + "inScheme", [])]
            draft.scheme = draft.scheme or next(
                (schemes.get(s, s) for s in in_scheme), "kgraph design patterns"
            )
            for name, known in (("prefLabel", draft.labels), ("definition", draft.definitions)):
                for value in doc.texts(subject, SKOS + name):
                    if any(k.lang == value.lang != "" and k.text != value.text for k in known):
                        raise CatalogError(
                            source,
                            line,
                            f"pattern {pattern_id} has two skos:{name} in @{value.lang}",
                        )
                    known.append(value)
            for weight in doc.subjects[subject].get(KG + "cueWeight", []):
                draft.cue_weight = _weight(
                    doc, line, f"pattern {pattern_id}'s kg:cueWeight", weight
                )
            draft.alt_labels += doc.texts(subject, SKOS + "altLabel")
            draft.examples += doc.texts(subject, SKOS + "example")
            for cue in doc.texts(subject, KG + "cue"):
                draft.cues.append(_compile(doc, pattern_id, cue, position >= checked_from))
    for draft in drafts.values():  # a later file may label what an earlier one left bare
        if not any(t.text.strip() for t in draft.labels):
            raise CatalogError(*draft.where, f"pattern {draft.id} needs a skos:prefLabel")
    return [drafts[k] for k in sorted(drafts)]


def _load_concepts(
    docs: Sequence[_Document], pattern_ids: set[str], checked_from: int
) -> tuple[list[DesignConcept], list[Combination]]:
    """Every concept (a later file's concept of the same notation adds cues and labels) and
    every combination, checked: it signals a known pattern and requires known concepts."""
    drafts: dict[str, dict[str, list]] = {}
    id_of: dict[str, str] = {}  # concept IRI -> notation
    pattern_of: dict[str, str] = {}  # pattern IRI -> notation
    for doc in docs:
        for subject in doc.typed(KG + "DesignPattern"):
            notations = [o.value for o in doc.subjects[subject].get(SKOS + "notation", [])]
            pattern_of[subject] = notations[0].strip()
    for position, doc in enumerate(docs):
        for subject in doc.typed(KG + "DesignConcept"):
            notations = [o.value for o in doc.subjects[subject].get(SKOS + "notation", [])]
            if len(notations) != 1 or not notations[0].strip():
                raise CatalogError(
                    doc.source,
                    doc.line_of_subject(subject),
                    f"concept <{subject}> needs exactly one skos:notation (its id)",
                )
            concept_id = notations[0].strip()
            id_of[subject] = concept_id
            draft = drafts.setdefault(
                concept_id, {"labels": [], "definitions": [], "cues": [], "examples": []}
            )
            draft["labels"] += doc.texts(subject, SKOS + "prefLabel")
            draft["definitions"] += doc.texts(subject, SKOS + "definition")
            draft["examples"] += doc.texts(subject, SKOS + "example")
            for cue in doc.texts(subject, KG + "cue"):
                draft["cues"].append(_compile(doc, concept_id, cue, position >= checked_from))
    concepts = [
        DesignConcept(
            concept_id,
            tuple(_unique(d["labels"])),
            tuple(_unique(d["definitions"])),
            tuple(d["cues"]),
            tuple(_unique(d["examples"])),
        )
        for concept_id, d in sorted(drafts.items())
    ]
    combinations = []
    for doc in docs:
        for subject in doc.typed(KG + "ConceptCombination"):
            combinations.append(_combination(doc, subject, id_of, pattern_of, pattern_ids))
    return concepts, sorted(combinations, key=lambda c: (c.pattern, c.name))


def _combination(
    doc: _Document,
    subject: str,
    id_of: dict[str, str],
    pattern_of: dict[str, str],
    pattern_ids: set[str],
) -> Combination:
    props = doc.subjects[subject]
    line = doc.line_of_subject(subject)
    name = subject.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    signals = [o for o in props.get(KG + "signals", []) if isinstance(o, ox.NamedNode)]
    if len(signals) != 1:
        raise CatalogError(doc.source, line, f"combination {name} needs exactly one kg:signals")
    pattern = pattern_of.get(signals[0].value)
    if pattern is None or pattern not in pattern_ids:
        raise CatalogError(
            doc.source, line, f"combination {name} signals <{signals[0].value}>, not a pattern"
        )
    requires = [o.value for o in props.get(KG + "requires", []) if isinstance(o, ox.NamedNode)]
    unknown = [r for r in requires if r not in id_of]
    if not requires or unknown:
        what = f"an unknown concept <{unknown[0]}>" if unknown else "no kg:requires"
        raise CatalogError(doc.source, line, f"combination {name} has {what}")
    weights = props.get(KG + "weight", [])
    if len(weights) != 1:
        raise CatalogError(doc.source, line, f"combination {name} needs exactly one kg:weight")
    weight = _weight(doc, line, f"combination {name}'s kg:weight", weights[0])
    return Combination(name, pattern, tuple(sorted({id_of[r] for r in requires})), weight)


def _weight(doc: _Document, line: int, what: str, term: Term) -> float:
    """A confidence written in the catalog: a number from 0 to 1."""
    try:
        value = float(term.value) if isinstance(term, ox.Literal) else -1.0
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise CatalogError(doc.source, line, f"{what} must be a number from 0 to 1")
    return value


@dataclass(slots=True)
class _PatternDraft:
    id: str
    where: tuple[str, int]  # the file and line that first define it
    scheme: str = ""
    labels: list[Text] = field(default_factory=list)
    alt_labels: list[Text] = field(default_factory=list)
    definitions: list[Text] = field(default_factory=list)
    examples: list[Text] = field(default_factory=list)
    cues: list[Cue] = field(default_factory=list)
    cue_weight: float = CUE_WEIGHT

    def freeze(self) -> DesignPattern:
        phrases = [
            Cue(_phrase(t.text), t.lang, t.text, regex.IGNORECASE)
            for t in sorted(set(self.labels) | set(self.alt_labels))
            if t.text.strip()
        ]
        return DesignPattern(
            self.id,
            tuple(_unique(self.labels)),
            tuple(_unique(self.definitions)),
            tuple(_unique(self.alt_labels)),
            (*self.cues, *phrases),
            tuple(_unique(self.examples)),
            self.scheme,
            self.cue_weight,
        )


@cache
def _compiled(expression: str, flags: int) -> regex.Pattern[str]:
    return regex.compile(expression, flags)


_ESCAPE = regex.compile(r"\\.", regex.DOTALL)
# A user's cue may take this long on one summary before it is stopped (kgraph.extract.patterns),
# and a fifth of it on a 31-character probe when its catalog loads, twice (a busy machine may
# pause the process once): a linear cue takes microseconds there, `(a|aa)+$` seconds.
CUE_TIMEOUT = 0.5
_PROBE_TIMEOUT = CUE_TIMEOUT / 5
# The literal runs of an expression: what a probe repeats.
_LITERAL_RUN = regex.compile(r"[^\W_]{1,6}+")
_CLASS_ESCAPE = regex.compile(r"\\[pPxuU]\{[^}]*+\}|\\[xuU][0-9A-Fa-f]++|\\.")


def _compile(doc: _Document, pattern_id: str, cue: Text, check: bool) -> Cue:
    """The cue; with `check` (a user's file), compiled and probed now, so that a bad one is
    reported with its line before any digest is read.

    One nested deeper than `MAX_NESTING` is refused unread: `regex` compiles recursively
    and raised RecursionError on 1,000 nested groups. One that backtracks catastrophically
    on a probe, such as `(a|aa)+$` on thirty `a`s, is refused too: it would have run for
    ever on a 60-character summary. A probe cannot find every such cue, so each match of a
    user's cue also runs under `CUE_TIMEOUT`."""
    if not check:
        return Cue(cue.text, cue.lang, cue.text)
    where = f"{doc.source}:{doc.line_of(cue.text)}"
    compiled = Cue(cue.text, cue.lang, cue.text, timeout=CUE_TIMEOUT, where=where)
    depth, _ = nesting(cue.text, (m.span() for m in _ESCAPE.finditer(cue.text)))
    try:
        if depth > MAX_NESTING:
            raise regex.error(f"it nests {depth:,} levels of brackets, more than {MAX_NESTING}")
        pattern = compiled.pattern
    except (regex.error, RecursionError, OverflowError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise CatalogError(
            doc.source,
            doc.line_of(cue.text),
            f"cue of {pattern_id} is not a valid expression: {reason}",
        ) from None
    for probe in _probes(cue.text):
        if not _times_out(pattern, probe) or not _times_out(pattern, probe):
            continue
        raise CatalogError(
            doc.source,
            doc.line_of(cue.text),
            f"cue of {pattern_id} backtracks catastrophically: matching it on "
            f"{quoted(probe)} took over {_PROBE_TIMEOUT:g} s (a repeated group whose "
            "parts can match the same text in several ways, such as (a|aa)+$)",
        )
    return compiled


def _times_out(pattern: regex.Pattern[str], text: str) -> bool:
    try:
        pattern.search(text, timeout=_PROBE_TIMEOUT)
    except TimeoutError:
        return True
    return False


def _probes(expression: str) -> list[str]:
    """Texts that make a backtracking expression blow up: each run of literal letters
    (or CJK) it names, and a few characters its classes match, repeated thirty times,
    then a character that ends no match."""
    literal = _CLASS_ESCAPE.sub(" ", expression)
    runs = dict.fromkeys(m.group() for m in _LITERAL_RUN.finditer(literal))
    pieces = dict.fromkeys([c for run in runs for c in run] + list(runs) + ["a", "1", " "])
    return [piece * (30 // len(piece)) + end for piece in list(pieces)[:60] for end in "\x00!"]


def _phrase(text: str) -> str:
    """A label as a phrase: case and the spacing between words ignored; a Latin word is
    matched whole (CJK text has no spaces, so a CJK neighbour is no boundary problem)."""
    words = [regex.escape(w) for w in text.split()]
    body = r"[\s\-]*".join(words)
    return rf"(?<![A-Za-z0-9_]){body}(?![A-Za-z0-9_])"


def _scheme_label(doc: _Document, scheme: str) -> str:
    labels = doc.texts(scheme, SKOS + "prefLabel") or doc.texts(
        scheme, NAMESPACES["rdfs"] + "label"
    )
    english = [t.text for t in labels if t.lang in ("en", "")]
    return (english or [t.text for t in labels] or [scheme])[0]


def _load_topics(sources: Iterable[tuple[str, str]]) -> list[Topic]:
    """Topics by label; a later file adds aliases, and takes over an alias it redefines."""
    aliases: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for source, text in sources:
        doc = _parse(source, text)
        if not doc.typed(KG + "Topic"):
            raise CatalogError(source, 1, "no kg:Topic in this file")
        for subject in doc.typed(KG + "Topic"):
            labels = [
                t.text.strip() for t in doc.texts(subject, SKOS + "prefLabel") if t.text.strip()
            ]
            if len(set(labels)) != 1:
                raise CatalogError(
                    source,
                    doc.line_of_subject(subject),
                    f"topic <{subject}> needs exactly one skos:prefLabel",
                )
            label = owner.get(_fold(labels[0]), labels[0])
            aliases.setdefault(label, [])
            owner[_fold(label)] = label
            for alt in doc.texts(subject, SKOS + "altLabel"):
                name = alt.text.strip()
                if name and _fold(name) != _fold(label):
                    previous = owner.get(_fold(name))
                    if previous and previous != label and name in aliases.get(previous, []):
                        aliases[previous].remove(name)
                    owner[_fold(name)] = label
                    if name not in aliases[label]:
                        aliases[label].append(name)
    return [Topic(label, tuple(sorted(aliases[label]))) for label in sorted(aliases)]


def _knowledge(
    patterns: list[_PatternDraft],
    topics: list[Topic],
    concepts: Sequence[DesignConcept] = (),
    combinations: Sequence[Combination] = (),
) -> Knowledge:
    topic_of: dict[str, str] = {}
    names: list[str] = []
    for topic in topics:
        for name in (topic.label, *topic.aliases):
            topic_of[_fold(name)] = topic.label
            names.append(name)
    frozen = tuple(p.freeze() for p in patterns)
    cues = tuple((p.id, cue) for p in frozen for cue in p.cues)
    concept_cues = tuple((c.id, part) for c in concepts for cue in c.cues for part in _split(cue))
    return Knowledge(
        frozen,
        tuple(topics),
        _names_pattern(names) if names else None,
        topic_of,
        cues,
        CueGate.of([cue.expression for _, cue in cues]),
        concepts=tuple(concepts),
        combinations=tuple(combinations),
        concept_cues=concept_cues,
        concept_gate=CueGate.of([cue.expression for _, cue in concept_cues]),
    )


# A flag set for the whole expression, or a back-reference, ties its alternatives together.
_UNSPLITTABLE = regex.compile(r"\(\?[a-zA-Z]+\)|\\[1-9]|\(\?P=|\\g<")


def _split(cue: Cue) -> tuple[Cue, ...]:
    """A concept's cue as one cue per top-level alternative (`a|b|c`), each gated and run on
    its own.

    The gate (`kgraph.cues`) runs a cue when the text holds the literal of its most selective
    requirement; an alternation's requirement is any one of its branches' literals, so it ran
    on most texts, and `regex` searches an alternation position by position where it finds a
    single literal with a fast scan. Split, the concepts' cues ran 25 % faster on the bench
    corpus. A concept hit is a span of text, so an alternative's match that overlaps
    another's, which the alternation would have skipped, is a hit as good as the other.
    """
    if _UNSPLITTABLE.search(cue.expression):
        return (cue,)
    parts = alternatives(cue.expression)
    if len(parts) == 1:
        return (cue,)
    return tuple(dataclasses.replace(cue, expression=part) for part in parts)


def _names_pattern(names: list[str]) -> regex.Pattern[str]:
    """One alternation of every topic name, longest first; all-capital names match exactly
    (`PD`, `SWA`), others ignoring case and the spacing between words (`KV  offload`)."""
    parts = []
    for name in sorted(set(names), key=lambda n: (-len(n), n)):
        body = r"[\s\-]?".join(regex.escape(w) for w in name.split())
        exact = not any(c.islower() for c in name)
        parts.append(body if exact else f"(?i:{body})")
    # A slash joins a name to a path (`a/b.py`), except where the other side is not Latin:
    # `Mamba/线性注意力` pairs two names.
    return regex.compile(
        rf"(?<![A-Za-z0-9_.-])(?<![A-Za-z0-9_./-]/(?=[A-Za-z0-9]))(?:{'|'.join(parts)})"
        r"(?![A-Za-z0-9_-]|/[A-Za-z0-9_./-])"
    )


def _fold(name: str) -> str:
    return " ".join(name.split()).casefold()


def _unique(items: Iterable[Text]) -> list[Text]:
    return sorted(set(items))
