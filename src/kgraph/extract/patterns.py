"""Design patterns: which catalog patterns a review gives evidence for, where, and how surely.

Two kinds of evidence, from the title and the summary alike:

- a pattern's own cue (`kg:cue`, or a label as a phrase) matches: a phrase written for that
  pattern, confidence `CUE_WEIGHT`;
- a combination of concepts (`kgraph.extract.concepts`) occurs in one sentence, or in the
  title: *reject* with *invalid input* is fail-fast validation, whatever the words. Its
  confidence is the combination's `kg:weight`, less when the concepts sit in different
  clauses of the sentence (`SPREAD`).

The mention spans the clause (or clauses) around the evidence, so a reader sees the sentence
that shows the pattern. Its confidence (`kg:confidence` on the mention) is the best evidence of
each kind in that span, cue and concepts combined as independent evidence, and with the
learned model's probability for the whole entry (`kgraph.pattern_model`), a third kind; the
model can find a pattern the rules have half a combination of (`_weighed`). A mention below
the knowledge's `pattern_threshold` is dropped. A sentence that suggests ("建议对 X 增加一条断言",
"consider adding…", any 建议 whose clause is not about reading) gives advice for later, not
evidence, from its suggestion cue on; a cue whose match runs over a "不再" matches what the
change stops doing, and is not evidence either.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict

import regex

from kgraph.catalog import CUE_WEIGHT, DEFAULT_PATTERN_THRESHOLD, RULES_THRESHOLD, Knowledge
from kgraph.extract.concepts import (
    CLAUSE_BREAK,
    CONTRAST_EN,
    CONTRAST_ZH,
    REPLACED_EN,
    REPLACED_ZH,
    REPLACING,
    ConceptHit,
    find_concepts,
    negated,
    negation_starts,
)
from kgraph.extract.prose import Prose, compact, prose
from kgraph.ingest.text import quoted
from kgraph.model import Entry, Field, Incomplete, Kind, Mention
from kgraph.pattern_model import PatternModel

SUGGESTION = regex.compile(
    r"建议(?:先|补|对|增加|顺手|后续|同时跟进|再|收敛|统一|改为|改成|把|将|加|给|拆|合并|引入|去掉|删|也)|可考虑|可以考虑|考虑(?:把|在|将)|后续可|若要|若计划|请补|补测"
    # any other 建议 whose clause is not about reading (建议精读, 建议重点关注…: advice), the
    # reading word looked for within a bounded reach, so that the search stays linear
    r"|建议(?![^，,；;。：:]{0,40}(?:读|看|关注|了解|浏览|跳过|略过|扫))"
    r"|TODO|落地前|\bconsider\b|\bcould\b|\bfollow-?ups?\b|\bnext step"
    # a reviewer's request, or work wished for ("suggested adding a barrier", "asked for
    # parametrization", "it might be worth deduplicating", "should probably")
    r"|\bsuggest\w*|\basked for\b|\b(?:would|might) be (?:worth|good|nice|better)\b"
    r"|\bit'?d be (?:good|nice|worth)\b|\bshould probably\b|\bin a separate (?:PR|change)\b",
    regex.IGNORECASE,
)
# Work wished for, said after it ("a parametrized check … would be cheap to add later",
# 这条断言留到后续再补): the whole sentence is the suggestion.
SUGGESTED_BEFORE = regex.compile(
    r"\b(?:would|might|could) be (?:cheap|easy|simple|trivial|nice|good|worth) to add\b"
    r"|\b(?:to add|be added|added) later\b|留到后续|以后再(?:加|补)",
    regex.IGNORECASE,
)
# A cue whose match runs over a "no longer" ("非法值不再只打一条 warning 并回落") matches what
# the change stops doing. (A contrast inside a cue, "按层名身份而非 region 索引", is its point.)
NO_LONGER = regex.compile(r"不再|\bno longer\b", regex.IGNORECASE)
# A combination's concepts spread over clauses of a sentence are weaker evidence than in one.
APART_TRIES = 6  # hits tried per concept when one word shows several concepts
SPREAD = 0.9
# A pattern the model finds where the rules found no evidence needs this probability at
# least, whatever the threshold: below it the model itself says no (its regressions are
# class-balanced), and a build at threshold 0 would show every pattern it knows with support.
MODEL_ALONE_FLOOR = 0.5
MODEL = "model"  # what showed a pattern the model found: `model:<the supporting concept>`
# The model was fitted on whole reviews: summaries of 189 characters and more (less what
# `asserted` takes out), all but three of the 406 over 200. A sentence alone is not what it
# has learnt to read, and on one its TF-IDF vector rests on a handful of n-grams: a summary
# shorter than this gets the prior.
MODEL_MIN_CHARS = 200
# What the model says of an entry it does not read: the probability that takes the rules'
# own best threshold (0.55, bench/pattern_threshold.py without the model) to the default
# with it, so that the rules alone decide as they would without a model.
MODEL_PRIOR = round(1 - (1 - DEFAULT_PATTERN_THRESHOLD) / (1 - RULES_THRESHOLD), 4)
CONTRASTS = regex.compile(f"{CONTRAST_ZH.pattern}|{CONTRAST_EN.pattern}", regex.IGNORECASE)

Evidence = tuple[int, int, str, float]  # span start, end, what showed it, confidence


def extract_patterns(entry: Entry, knowledge: Knowledge) -> list[Mention]:
    """One mention per pattern and evidence span, in the title and in the summary; `detail`
    is the confidence and what showed it: `"0.80 cue:…"`, or the combination's name
    (`"0.60 fail-fast-validation--reject-invalid-input"`), then the model's say (`"(model
    0.42)"`, `"(model prior 0.33)"`); or, for a pattern the model found, `"0.74 model:reject"`
    (the concept that supports it)."""
    stopped: list[str] = []  # a user's cue stopped after its timeout: its evidence is missing
    title, text = _read(entry.title), _read(entry.text)
    found = [
        *_mentions(entry.title, title, Field.TITLE, knowledge, whole=True, stopped=stopped),
        *_mentions(entry.text, text, Field.TEXT, knowledge, whole=False, stopped=stopped),
    ]
    mentions = _weighed(entry, found, knowledge, (title[1], text[1]))
    if stopped:
        raise Incomplete(sorted(mentions), sorted(set(stopped)))
    return sorted(mentions)


def _read(text: str) -> tuple[Prose, list[tuple[int, int]]]:
    """A text's sentences and clauses, and its suggestions: what the rules and the model
    both leave out."""
    p = prose(text)
    return p, _suggestions(p) if text.strip() else []


def _weighed(
    entry: Entry,
    found: list[Mention],
    knowledge: Knowledge,
    suggested: tuple[list[tuple[int, int]], list[tuple[int, int]]],
) -> list[Mention]:
    """The rules' evidence with the model's probability (`kgraph.pattern_model`) as evidence
    of its own, and the patterns the model finds with half a combination's support; those
    that reach the threshold.

    Combined as independent evidence, 1 - (1 - rule)(1 - model): the model read the whole
    entry, the rule one clause. A pattern the rules found no evidence of needs the model's
    probability alone to reach the threshold (and `MODEL_ALONE_FLOOR`), and a stated concept
    of one of its combinations (`concept_support`): a bag of n-grams does not see that "并没有
    用 assert 钉死" denies what it says, the concept rules do. Its mention spans the clause of
    that concept which the model, reading each alone, finds most like the pattern.
    """
    threshold = knowledge.pattern_threshold
    model = knowledge.pattern_model
    if model is None:
        return [m for m in found if confidence_of(m) >= threshold]
    known = {p.id for p in knowledge.patterns}
    summary = asserted(entry.text, suggested[1])
    if len(summary) >= MODEL_MIN_CHARS:
        read, said = model.probabilities(asserted(entry.title, suggested[0]), summary), "model"
    else:  # too short for the model: it gives every pattern its prior
        read, said = dict.fromkeys(model.patterns, MODEL_PRIOR), "model prior"
    probability = {p: q for p, q in read.items() if p in known}
    kept = []
    for mention in found:
        q = probability.get(mention.key)
        if q is None:
            if confidence_of(mention) >= threshold:
                kept.append(mention)
            continue
        confidence = round(1.0 - (1.0 - confidence_of(mention)) * (1.0 - q), 2)
        if confidence >= threshold:  # most evidence is not: its detail is left unwritten
            shown_by = mention.detail.partition(" ")[2]
            kept.append(mention._replace(detail=f"{confidence:.2f} {shown_by} ({said} {q:.2f})"))
    by_rules = {m.key for m in found}
    wanted = {
        p
        for p, q in probability.items()
        if p not in by_rules and q >= max(threshold, MODEL_ALONE_FLOOR)
    }
    if wanted:
        for pattern_id, clauses in sorted(concept_support(entry, knowledge, wanted).items()):
            kept.append(_model_mention(entry, pattern_id, probability[pattern_id], clauses, model))
    return kept


def unread_by_model(confidence: float, knowledge: Knowledge) -> float:
    """The confidence of evidence the model does not read (a change's diff), with the
    model's prior: decided as without the model, on the threshold that assumes it."""
    if knowledge.pattern_model is None:
        return confidence
    return round(1.0 - (1.0 - confidence) * (1.0 - MODEL_PRIOR), 2)


def concept_support(
    entry: Entry, knowledge: Knowledge, wanted: set[str]
) -> dict[str, list[tuple[Field, int, int, str]]]:
    """For each of the `wanted` patterns, the clauses (title, or the summary's) where a concept
    of one of its combinations is stated, outside suggestions and not negated: half of a
    combination, what a pattern the model finds must have to show (field, span, concept)."""
    concepts_of: dict[str, set[str]] = defaultdict(set)
    for combination in knowledge.combinations:
        if combination.pattern in wanted:
            concepts_of[combination.pattern].update(combination.concepts)
    needed = {c for cs in concepts_of.values() for c in cs}
    out: dict[str, list[tuple[Field, int, int, str]]] = defaultdict(list)
    if not needed:
        return out
    for text, field, whole in ((entry.title, Field.TITLE, True), (entry.text, Field.TEXT, False)):
        if not text.strip():
            continue
        p = prose(text)
        suggested = _suggestions(p)
        for hit in find_concepts(text, knowledge, None, only=needed):
            if _inside(hit.start, suggested):
                continue
            start, end = (0, len(text)) if whole else _clause_around(p, hit.start, hit.end)
            for pattern_id, concepts in sorted(concepts_of.items()):
                if hit.concept in concepts:
                    out[pattern_id].append((field, start, end, hit.concept))
    return out


def _model_mention(
    entry: Entry,
    pattern_id: str,
    q: float,
    clauses: list[tuple[Field, int, int, str]],
    model: PatternModel,
) -> Mention:
    """A pattern the model finds, shown in the supporting clause it finds most like it."""
    unique = sorted(set(clauses))
    texts = [(entry.title if f is Field.TITLE else entry.text)[s:e] for f, s, e, _ in unique]
    field, start, end, concept = unique[model.strongest(pattern_id, map(asserted, texts))]
    text = entry.title if field is Field.TITLE else entry.text
    while start < end and text[start].isspace():
        start += 1
    detail = f"{q:.2f} {MODEL}:{concept}"
    return Mention(Kind.PATTERN, pattern_id, text[start:end], start, end, field, detail)


def asserted(text: str, suggested: list[tuple[int, int]] | None = None) -> str:
    """What a text says the change does, as the model reads it (and is trained on): the text
    less what the rules take no evidence from either. Out go suggestions, from a contrast to
    the end of its clause ("不再 X", "而不是 Y", "rather than Z", "并没有…") and the old side
    of a replacement; the pieces left are joined by spaces."""
    if not text.strip():
        return text
    cut = list(_suggestions(prose(text)) if suggested is None else suggested)
    for contrast in CONTRASTS.finditer(text):
        end = CLAUSE_BREAK.search(text, contrast.end())
        cut.append((contrast.start(), end.start() if end else len(text)))
    if REPLACING.search(text) is not None:
        cut += [m.span() for r in (REPLACED_ZH, REPLACED_EN) for m in r.finditer(text)]
    if not cut:
        return text
    pieces, at = [], 0
    for start, end in sorted(cut):
        if start > at:
            pieces.append(text[at:start])
        at = max(at, end)
    pieces.append(text[at:])
    return " ".join(pieces)


# Where a pattern's evidence comes from (kg:evidenceKind on its mention): the review's own
# words, or the change it reviews (a `raise` added where input enters, a new `parametrize`
# table). Every mention made here is "text"; evidence read from a commit's diff is "change",
# and says so in its detail (`"0.70 change:raise-added"`).
EVIDENCE_KINDS = ("text", "change")


def evidence_kind_of(mention: Mention) -> str:
    """Which of `EVIDENCE_KINDS` a pattern mention's evidence is."""
    shown_by = mention.detail.partition(" ")[2]
    return "change" if shown_by.startswith("change:") else "text"


def confidence_of(mention: Mention) -> float:
    """The confidence a pattern mention's `detail` records."""
    head = mention.detail.partition(" ")[0]
    try:
        return float(head)
    except ValueError:
        return CUE_WEIGHT


def _mentions(
    text: str,
    read: tuple[Prose, list[tuple[int, int]]],
    field: Field,
    knowledge: Knowledge,
    whole: bool,
    stopped: list[str],
) -> list[Mention]:
    """The rules' evidence, whatever its confidence; `read` is `_read(text)`; `whole`: the
    text is one unit (a title), not sentences of clauses."""
    if not text.strip():
        return []
    p, suggested = read
    cue_evidence = _cue_evidence(text, p, knowledge, suggested, whole, stopped)
    concept_evidence = _concept_evidence(text, p, knowledge, suggested, whole, stopped)
    mentions = []
    for pattern_id in sorted(cue_evidence.keys() | concept_evidence.keys()):
        for start, end, shown_by, confidence in _merged(
            cue_evidence.get(pattern_id, []), concept_evidence.get(pattern_id, [])
        ):
            if end > start:
                detail = f"{confidence:.2f} {shown_by}"
                mentions.append(
                    Mention(Kind.PATTERN, pattern_id, text[start:end], start, end, field, detail)
                )
    return mentions


def combination_evidence(entry: Entry, knowledge: Knowledge) -> set[str]:
    """The names of the combinations whose concepts occur together in the entry's title or
    in one sentence of its summary (outside suggestions): what `bench/pattern_weights.py`
    counts to learn their weights."""
    names: set[str] = set()
    for text, whole in ((entry.title, True), (entry.text, False)):
        if text.strip():
            p = prose(text)
            names |= {
                shown
                for found in _concept_evidence(
                    text, p, knowledge, _suggestions(p), whole, []
                ).values()
                for _, _, shown, _ in found
            }
    return names


def cue_evidence(entry: Entry, knowledge: Knowledge) -> set[str]:
    """The patterns whose own cues match the entry's title or summary (outside suggestions,
    not negated): what `bench/pattern_weights.py` counts to learn their kg:cueWeight."""
    found: set[str] = set()
    for text, whole in ((entry.title, True), (entry.text, False)):
        if text.strip():
            p = prose(text)
            found |= _cue_evidence(text, p, knowledge, _suggestions(p), whole, []).keys()
    return found


def _cue_evidence(
    text: str,
    p: Prose,
    knowledge: Knowledge,
    suggested: list[tuple[int, int]],
    whole: bool,
    stopped: list[str],
) -> dict[str, list[Evidence]]:
    """Pattern cues, tried on the text as written and on a copy with each code span
    shortened to "`c`", so that a long identifier between a cue's parts counts as one word.
    Only the cues whose literal text occurs are run (`kgraph.cues`), in catalog order."""
    short, origin = compact(text)
    evidence: dict[str, list[Evidence]] = defaultdict(list)
    weight_of = {p.id: p.cue_weight for p in knowledge.patterns}
    starts: list[int] | None = None
    for index in sorted(knowledge.cue_gate.candidates(text, short)):
        pattern_id, cue = knowledge.cues[index]
        try:
            spans = _spans(cue.pattern, text, cue.timeout)
            if short != text and cue.has_gaps:
                spans += [
                    (origin[a], origin[b - 1] + 1)
                    for a, b in _spans(cue.pattern, short, cue.timeout)
                ]
        except TimeoutError:  # only a user's cue has a timeout
            stopped.append(stopped_cue(cue.source, f"pattern {pattern_id}", cue.where, cue.timeout))
            continue
        if spans and starts is None:
            starts = negation_starts(text)
        for a, b in spans:
            if (
                not _inside(a, suggested)
                and not negated(text, a, starts)
                and NO_LONGER.search(text, a + 1, b) is None
            ):
                start, end = (0, len(text)) if whole else _clause_around(p, a, b)
                weight = weight_of.get(pattern_id, CUE_WEIGHT)
                evidence[pattern_id].append((start, end, "cue:" + text[a:b], weight))
    return evidence


def _concept_evidence(
    text: str,
    p: Prose,
    knowledge: Knowledge,
    suggested: list[tuple[int, int]],
    whole: bool,
    stopped: list[str],
) -> dict[str, list[Evidence]]:
    """Combinations whose concepts all occur in one sentence (or in the whole title)."""
    needed = _concepts_needed(text, knowledge)
    if not needed:
        return {}
    hits = [
        h
        for h in find_concepts(text, knowledge, stopped, only=needed)
        if not _inside(h.start, suggested)
    ]
    if not hits:
        return {}
    anywhere = {h.concept for h in hits}
    combinations = [c for c in knowledge.combinations if anywhere.issuperset(c.concepts)]
    if not combinations:
        return {}
    units = [(0, len(text))] if whole else list(p.sentences())
    evidence: dict[str, list[Evidence]] = defaultdict(list)
    starts = [h.start for h in hits]  # hits come in text order
    for unit_start, unit_end in units:
        in_unit = hits[bisect_left(starts, unit_start) : bisect_left(starts, unit_end)]
        if not in_unit:
            continue
        present = {h.concept for h in in_unit}
        for combination in combinations:
            if not present.issuperset(combination.concepts):
                continue
            used = [h for h in in_unit if h.concept in combination.concepts]
            if not _apart(used, combination.concepts):
                continue
            weight = combination.weight
            if not whole:
                start, end, clauses = _clauses_of(
                    p, unit_start, unit_end, used, combination.concepts
                )
                if clauses > 1:
                    weight *= SPREAD
            else:
                start, end = unit_start, unit_end
            shown_by = combination.name
            evidence[combination.pattern].append((start, end, shown_by, round(weight, 2)))
    return evidence


def _apart(hits: list[ConceptHit], concepts: tuple[str, ...]) -> bool:
    """Whether each concept has a hit of its own, none overlapping another's.

    One word is one piece of evidence: 占位 ("placeholder") is a cue of *sentinel* and of
    *means*, and must not alone complete sentinel + means. A concept with a hit that
    overlaps no other concept's hit is settled at once; the few left (their hits all
    overlap others') are searched, at most `APART_TRIES` hits each, so a text with
    thousands of hits stays linear.
    """
    by_concept: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for h in hits:
        spans = by_concept[h.concept]
        if (h.start, h.end) not in spans:
            spans.append((h.start, h.end))
    open_concepts = []
    for concept in concepts:
        others = [s for c, spans in by_concept.items() if c != concept for s in spans]
        mine = by_concept[concept]
        if not any(all((a, b) != (s, e) for a, b in others) for s, e in mine[:APART_TRIES]):
            open_concepts.append(mine[:APART_TRIES])
    return _assign(open_concepts, [])


def _assign(candidates: list[list[tuple[int, int]]], taken: list[tuple[int, int]]) -> bool:
    """Whether one span can be picked from each list, no two overlapping."""
    if not candidates:
        return True
    for s, e in candidates[0]:
        if all((a, b) != (s, e) for a, b in taken) and _assign(candidates[1:], [*taken, (s, e)]):
            return True
    return False


def _concepts_needed(text: str, knowledge: Knowledge) -> set[str]:
    """The concepts of the combinations that the concepts whose cues may match the text
    (`kgraph.cues`, a superset) could complete: only their cues need to run. When there are
    none, running the concept cues cannot show a pattern (a third of the texts of the
    generated corpus); a concept of no possible combination is a third of the cues run."""
    cue_concept = knowledge.concept_cues
    possible = {cue_concept[i][0] for i in knowledge.concept_gate.candidates(text)}
    return {
        concept
        for c in knowledge.combinations
        if possible.issuperset(c.concepts)
        for concept in c.concepts
    }


def _clauses_of(
    p: Prose,
    start: int,
    end: int,
    used: list[ConceptHit],
    concepts: tuple[str, ...],
) -> tuple[int, int, int]:
    """The narrowest run of the sentence's clauses that holds a hit of each concept (a
    sliding window over the hits in clause order): its span and how many clauses it covers."""
    clauses = p.clauses(start, end)
    if not clauses:
        return min(h.start for h in used), max(h.end for h in used), 1
    ends = [c.end for c in clauses]
    placed = sorted((min(bisect_right(ends, h.start), len(clauses) - 1), h.concept) for h in used)
    count: dict[str, int] = defaultdict(int)
    best = (placed[0][0], placed[-1][0])
    left = 0
    for clause, concept in placed:
        count[concept] += 1
        while len(count) == len(concepts):
            first = placed[left][0]
            if clause - first < best[1] - best[0]:
                best = (first, clause)
            count[placed[left][1]] -= 1
            if not count[placed[left][1]]:
                del count[placed[left][1]]
            left += 1
    i, j = best
    s, e = clauses[i].start, clauses[j].end
    while e > s + 1 and p.text[e - 1] in "。.!?！？;；":
        e -= 1
    return s, e, j - i + 1


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(s <= position < e for s, e in spans)


def stopped_cue(source: str, owner: str, where: str, timeout: float | None) -> str:
    """Why some evidence of an entry is missing: a user's cue ran past its timeout."""
    return (
        f"cue {quoted(source)} of {owner} ({where}) was stopped after {timeout:g} s on this "
        "entry, so its evidence here is missing: it backtracks catastrophically on this text"
    )


def _spans(pattern: regex.Pattern[str], text: str, timeout: float | None) -> list[tuple[int, int]]:
    """Non-empty matches; `search` first, as most cues do not occur in a given summary.
    Raises TimeoutError when one of them takes longer than `timeout` seconds (passed only
    when there is one: even `timeout=None` adds a third to a search's cost)."""
    if timeout is None:
        if pattern.search(text) is None:
            return []
        matches = pattern.finditer(text)
    else:
        if pattern.search(text, timeout=timeout) is None:
            return []
        matches = pattern.finditer(text, timeout=timeout)
    return [m.span() for m in matches if m.end() > m.start()]


def _merged(cues: list[Evidence], concepts: list[Evidence]) -> list[tuple[int, int, str, float]]:
    """Overlapping evidence of one pattern is one span. Its confidence combines the best cue
    and the best combination in it as independent evidence; what showed it is the strongest
    evidence (the first, among equals)."""
    tagged = [(s, e, "cue", shown, c) for s, e, shown, c in cues] + [
        (s, e, "combination", shown, c) for s, e, shown, c in concepts
    ]
    groups: list[list[tuple[int, int, str, str, float]]] = []
    group_end = -1
    for item in sorted(tagged):
        if groups and item[0] < group_end:
            groups[-1].append(item)
            group_end = max(group_end, item[1])
        else:
            groups.append([item])
            group_end = item[1]
    merged = []
    for group in groups:
        start, end = min(g[0] for g in group), max(g[1] for g in group)
        best: dict[str, float] = {}
        for _, _, kind, _, confidence in group:
            best[kind] = max(best.get(kind, 0.0), confidence)
        confidence = 1.0
        for value in best.values():
            confidence *= 1.0 - value
        strongest = max(group, key=lambda g: (g[4], -g[0]))
        merged.append((start, end, strongest[3], round(1.0 - confidence, 2)))
    return merged


def _suggestions(p: Prose) -> list[tuple[int, int]]:
    """From a suggestion cue to the end of its sentence; the whole sentence when the wish is
    said after what it wishes for."""
    spans = []
    for start, end in p.sentences():
        if SUGGESTED_BEFORE.search(p.masked, start, end) is not None:
            spans.append((start, end))
        elif (cue := SUGGESTION.search(p.masked, start, end)) is not None:
            spans.append((cue.start(), end))
    return spans


def _clause_around(p: Prose, start: int, end: int) -> tuple[int, int]:
    """The clause (or clauses) around a cue match, without the sentence's final stop."""
    for s, e in p.sentences():
        if s <= start < e:
            clauses = [c for c in p.clauses(s, e) if c.end > start and c.start < end]
            if clauses:
                start, end = min(clauses[0].start, start), max(clauses[-1].end, end)
            break
    while end > start + 1 and p.text[end - 1] in "。.!?！？;；":
        end -= 1
    return start, end
