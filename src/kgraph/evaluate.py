"""`kgraph eval`: precision and recall of a built graph against a gold file.

The gold file is a JSON list of entries in the schema of `../shared/seeds/gold.json`; each
gold entry is matched to the PR whose title (or the title of one of its entries) is the same
after normalisation. Then, per kind, extracted values are matched one-to-one to gold values:

- files: an extracted path matches when it equals the written path or ends with "/" + it;
- symbols (`symbols` and `external_symbols`): a qualified name matches when it equals the
  written name or ends with "." + it;
- issues: equal numbers; patterns: equal ids; people: equal handles, ignoring case;
- topics: equal after both names are folded to their topic through the graph's aliases
  (`PD` and `P/D` are one topic), ignoring case;
- decisions: text overlap — both texts are split into tokens (each CJK character, each
  run of letters or digits, case-folded; quote marks, backticks and punctuation dropped)
  and a pair matches when the shared tokens cover at least half of each text;
  pairs are taken best overlap first;
- advice: the PR's `kg:readingAdvice` equals the gold `reading_advice`;
- commits: the commit a PR is `kg:mergedAs` merged the gold `pr_number` (its subject ends
  in `(#N)` or reads `Merge pull request #N`); only gold entries of a repository whose
  history the graph holds (it has a `kg:Commit` of it) count, so a build without that
  history is not charged for links it could not make;
- PRs: a gold entry is found when a PR has its title.

Two views of the same values are reported beside them:

- files by how the review wrote them, `files·backtick` and `files·bare`: a file is
  backticked when its entry's text has it (or its basename's path tail) in a code span; a
  gold file uses the gold's `files_written`, else its `spans`;
- `decisions·sentence`: a decision counts where its sentence holds one. Each decision, found
  or gold (its `decisions_detail` sentence when given), is mapped to the sentence of the
  PR's entries that holds it; the sentences are then matched exactly. Span boundaries are a
  matter of taste; whether the review's sentence states a decision is not;
- `topics·title`: the gold topics written in their entry's title, against the topics
  found (which are read from titles): what title reading reaches, where a gold lists the
  components its summary names too. A gold entry's `title_topics`, when given, are its
  title's topics labelled on their own (a corpus whose `topics` follow another convention).

Patterns are also scored one by one (`Evaluation.pattern_table`: gold, found, matched,
precision and recall of each pattern id) and at several confidence thresholds
(`THRESHOLDS`): a PR applies a pattern at threshold t when one of its pattern mentions has
`kg:confidence` ≥ t, so a graph built with a low `--pattern-threshold` shows what a higher one
would keep. A threshold below the build's own cannot add what the build left out.

Precision is matched extracted values over extracted values, recall matched gold values
over gold values, both summed over all entries (micro-averaged). Values extracted for PRs
that no gold entry describes count against precision.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox

from kgraph import jsonfile, outputs
from kgraph.errors import KgraphError
from kgraph.export import json_graph
from kgraph.extract.code import CODE_SPAN
from kgraph.extract.prose import overlap, prose
from kgraph.jsonfile import JsonFileError
from kgraph.link import normalize_title
from kgraph.vocab import NAMESPACES

KINDS = (
    "prs",
    "files",
    "files·backtick",
    "files·bare",
    "symbols",
    "issues",
    "decisions",
    "decisions·sentence",
    "patterns",
    "topics",
    "topics·title",
    "people",
    "advice",
    "commits",
)
_MERGED_NUMBER = re.compile(r"\(#([0-9]+)\)\s*$|^Merge pull request #([0-9]+) ")
DECISION_OVERLAP = 0.5
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


class EvalError(KgraphError, ValueError):
    """A gold file or graph that cannot be evaluated, as `FILE:LINE: message`."""


@dataclass(frozen=True, slots=True)
class Score:
    kind: str
    gold: int
    found: int
    matched_gold: int
    matched_found: int

    @property
    def precision(self) -> float:
        return self.matched_found / self.found if self.found else 1.0

    @property
    def recall(self) -> float:
        return self.matched_gold / self.gold if self.gold else 1.0


@dataclass(frozen=True, slots=True)
class Difference:
    """One gold value the graph misses (`missing`) or one extracted value gold lacks."""

    entry: str  # the gold entry's id, or the PR's title when no gold entry describes it
    kind: str
    value: str
    missing: bool


@dataclass(frozen=True, slots=True)
class Evaluation:
    scores: tuple[Score, ...]
    differences: tuple[Difference, ...]
    by_pattern: tuple[Score, ...] = ()  # one per pattern id in gold or found; kind is the id
    at_threshold: tuple[tuple[float, Score], ...] = ()  # patterns kept at each threshold

    def score(self, kind: str) -> Score:
        return next(s for s in self.scores if s.kind == kind)

    def table(self) -> str:
        lines = [
            f"{'kind':<18} {'gold':>5} {'found':>6} {'matched':>8} {'precision':>10} {'recall':>7}"
        ]
        for s in self.scores:
            lines.append(
                f"{s.kind:<18} {s.gold:>5} {s.found:>6} {s.matched_gold:>8} "
                f"{s.precision:>10.3f} {s.recall:>7.3f}"
            )
        return "\n".join(lines)

    def pattern_table(self) -> str:
        """Patterns one by one, most often in gold first, then patterns at each threshold."""
        lines = [
            f"{'pattern':<32} {'gold':>5} {'found':>6} {'matched':>8} "
            f"{'precision':>10} {'recall':>7}"
        ]
        for s in sorted(self.by_pattern, key=lambda s: (-s.gold, -s.found, s.kind)):
            lines.append(
                f"{s.kind:<32} {s.gold:>5} {s.found:>6} {s.matched_gold:>8} "
                f"{s.precision:>10.3f} {s.recall:>7.3f}"
            )
        lines.append("")
        lines.append(
            f"{'threshold':<10} {'found':>6} {'matched':>8} {'precision':>10} "
            f"{'recall':>7} {'f1':>6}"
        )
        for threshold, s in self.at_threshold:
            f1 = (
                2 * s.precision * s.recall / (s.precision + s.recall) if s.found and s.gold else 0.0
            )
            lines.append(
                f"{threshold:<10.2f} {s.found:>6} {s.matched_found:>8} {s.precision:>10.3f} "
                f"{s.recall:>7.3f} {f1:>6.3f}"
            )
        return "\n".join(lines)


# --- the graph as evaluation sees it ----------------------------------------------------------


@dataclass(slots=True)
class PullRequestView:
    title: str
    titles: set[str] = field(default_factory=set)
    values: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    texts: list[str] = field(default_factory=list)  # its entries' titles and summaries
    # The best kg:confidence of each applied pattern's mentions (1.0 when none is given).
    pattern_confidence: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class GraphView:
    prs: list[PullRequestView]
    topic_of: dict[str, str]  # a topic's folded label or alias -> its folded label
    histories: set[str] = field(default_factory=set)  # repositories with a kg:Commit


def read_graph(path: Path) -> GraphView:
    """A built graph from `graph.json`, or from Turtle when that is what `path` names."""
    if path.is_dir():
        found = [path / name for name in ("graph.json", "graph.ttl") if (path / name).exists()]
        if not found:
            raise EvalError(f"{path}:0: error: no graph.json or graph.ttl in this folder")
        current = [p for p in found if not outputs.stale(path, p.name)]
        if not current:
            raise EvalError(f"{found[0]}:0: error: {outputs.STALE}")
        path = current[0]
    if not path.exists():
        raise EvalError(f"{path}:0: error: no such file")
    if path.suffix == ".json":
        nodes, edges = _from_json(path)
    else:
        nodes, edges = _from_turtle(path)
    return _view(nodes, edges)


Nodes = dict[str, dict[str, list[object]]]
Edges = list[tuple[str, str, str]]


def _from_json(path: Path) -> tuple[Nodes, Edges]:
    try:
        data = json_graph.read_document(path)
    except JsonFileError as error:
        raise EvalError(str(error)) from None
    nodes: Nodes = {}
    for node in data["nodes"]:
        attrs = {k: v if isinstance(v, list) else [v] for k, v in node.items()}
        attrs["kind"] = [node["kind"]]
        nodes[node["id"]] = attrs
    edges = [(e["source"], e["relation"], e["target"]) for e in data["edges"]]
    return nodes, edges


def _from_turtle(path: Path) -> tuple[Nodes, Edges]:
    nodes: Nodes = defaultdict(lambda: defaultdict(list))
    edges: Edges = []
    try:
        for triple in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE):
            subject, predicate, obj = triple.subject, triple.predicate.value, triple.object
            name = _local(predicate)
            if name == "type" and isinstance(obj, ox.NamedNode):
                if obj.value.startswith(NAMESPACES["skos"]):
                    continue
                name, value = "kind", _local(obj.value)
                nodes[subject.value][name].append(value)
            elif isinstance(obj, ox.Literal):
                nodes[subject.value][name].append(obj.value)
            else:
                edges.append((subject.value, name, obj.value))
    except SyntaxError as error:
        raise EvalError(f"{path}:{error.lineno or 1}: error: not Turtle: {error.msg}") from None
    return {k: dict(v) for k, v in nodes.items()}, edges


def _local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _view(nodes: Nodes, edges: Edges) -> GraphView:
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for source, relation, target in edges:
        out[(source, relation)].append(target)
    mentions_of: dict[str, list[str]] = defaultdict(list)  # entry -> its mentions
    evidence_of: dict[str, list[str]] = defaultdict(list)  # commit -> its change evidence
    for source, relation, target in edges:
        if relation == "inEntry":
            mentions_of[target].append(source)
        elif relation == "inCommit":
            evidence_of[target].append(source)

    def first(node: str, name: str) -> str:
        values = nodes.get(node, {}).get(name, [])
        return _text(values[0]) if values else ""

    topic_of: dict[str, str] = {}
    for node_id, attrs in nodes.items():
        if "Topic" in attrs.get("kind", []):
            label = first(node_id, "label").casefold()
            for name in [label, *(_text(a) for a in attrs.get("altLabel", []))]:
                topic_of[name.casefold()] = label

    prs: list[PullRequestView] = []
    for node_id, attrs in sorted(nodes.items()):
        if "PullRequest" not in attrs.get("kind", []):
            continue
        pr = PullRequestView(first(node_id, "title"))
        pr.titles = {normalize_title(pr.title)} | {
            normalize_title(first(e, "title")) for e in out[(node_id, "describedBy")]
        }
        targets = {relation: out[(node_id, relation)] for relation in _RELATIONS.values()}
        pr.values["files"] = [first(t, "path") for t in targets["touchesFile"]]
        pr.values["symbols"] = [first(t, "qualifiedName") for t in targets["mentionsSymbol"]]
        pr.values["issues"] = [first(t, "number") for t in targets["references"]]
        pr.values["decisions"] = [first(t, "label") for t in targets["makesDecision"]]
        pr.values["patterns"] = [first(t, "notation") for t in targets["appliesPattern"]]
        pr.values["topics"] = [first(t, "label") for t in targets["hasTopic"]]
        pr.values["topics·title"] = pr.values["topics"]  # topics are read from titles
        pr.values["people"] = [first(t, "label") for t in targets["involves"]]
        pr.values["advice"] = [_text(v) for v in attrs.get("readingAdvice", [])][:1]
        entries = sorted(out[(node_id, "describedBy")])
        notation = {t: first(t, "notation") for t in targets["appliesPattern"]}
        evidence = [m for e in entries for m in mentions_of[e]] + [
            x for commit in out[(node_id, "mergedAs")] for x in evidence_of[commit]
        ]
        for mention in evidence:  # a review's mentions, and its commit's change evidence
            for target in out[(mention, "denotes")] + out[(mention, "evidenceOf")]:
                if target in notation:
                    scores = nodes.get(mention, {}).get("confidence", [])
                    value = max((float(str(v)) for v in scores), default=1.0)
                    known = pr.pattern_confidence.get(notation[target], 0.0)
                    pr.pattern_confidence[notation[target]] = max(known, value)
        pr.texts = [first(e, name) for e in entries for name in ("title", "text")]
        spans = _code_spans(pr.texts)
        for path in pr.values["files"]:
            pr.values["files·" + _written(path, spans)].append(path)
        pr.values["decisions·sentence"] = [
            s for d in pr.values["decisions"] if (s := _sentence_of(d, pr.texts))
        ]
        pr.values["commits"] = [
            _merged_number(first(t, "title")) for t in out[(node_id, "mergedAs")]
        ]
        prs.append(pr)
    histories = {
        first(repo, "label")
        for node_id, attrs in nodes.items()
        if "Commit" in attrs.get("kind", [])
        for repo in out[(node_id, "inRepository")]
    }
    return GraphView(prs, topic_of, histories)


def _merged_number(subject: str) -> str:
    """The PR a commit merged, by its subject; the subject itself when it names none."""
    found = _MERGED_NUMBER.search(subject)
    return (found.group(1) or found.group(2)) if found else f"(no PR number) {subject}"


_RELATIONS = {
    "files": "touchesFile",
    "symbols": "mentionsSymbol",
    "issues": "references",
    "decisions": "makesDecision",
    "patterns": "appliesPattern",
    "topics": "hasTopic",
    "people": "involves",
}


def _code_spans(texts: Iterable[str]) -> set[str]:
    return {m.group(1).strip().removeprefix("./") for t in texts for m in CODE_SPAN.finditer(t)}


def _written(path: str, spans: set[str]) -> str:
    """ "backtick" when a code span names the file: its path, or a tail of it."""
    parts = path.split("/")
    tails = {"/".join(parts[i:]) for i in range(len(parts))}
    return "backtick" if tails & spans else "bare"


def _sentence_of(text: str, texts: Sequence[str]) -> str:
    """The sentence of `texts` that holds `text` (or overlaps it most, at least half), with
    its blanks folded; "" when none does."""
    folded = " ".join(text.split())
    best, best_score = "", DECISION_OVERLAP
    for whole in texts:
        p = prose(whole)
        for start, end in p.sentences():
            sentence = " ".join(whole[start:end].split())
            if folded and folded in sentence:
                return sentence
            if sentence and (score := overlap(folded, sentence)) >= best_score:
                best, best_score = sentence, score
    return best


def _text(value: object) -> str:
    if isinstance(value, dict):  # a language-tagged literal in graph.json
        return str(value.get("text", ""))
    return str(value)


# --- gold -------------------------------------------------------------------------------------


# The gold fields read as lists, and the types their items may have.
_GOLD_LISTS: dict[str, tuple[type, ...]] = {
    "files": (str,),
    "symbols": (str,),
    "external_symbols": (str,),
    "issues": (str, int),
    "decisions": (str,),
    "patterns": (str,),
    "topics": (str,),
    "title_topics": (str,),
    "persons": (str,),
}


def read_gold(path: Path) -> list[dict]:
    try:
        data, text = jsonfile.load(path)
    except JsonFileError as error:
        raise EvalError(str(error)) from None
    if not isinstance(data, list) or not all(isinstance(g, dict) and "title" in g for g in data):
        raise EvalError(f"{path}:1: error: expected a list of entries, each with a title")
    for index, g in enumerate(data):
        if problem := _gold_entry_problem(g):
            line = _element_lines(text)[index]
            raise EvalError(f"{path}:{line}: error: gold entry {index + 1}: {problem}")
    return data


def _gold_entry_problem(g: dict) -> str | None:
    """What makes a gold entry unreadable: a string read one character at a time is as
    wrong as a crash, so every field is checked before any is used."""
    if not isinstance(g["title"], str):
        return '"title" is not a string'
    for name, types in _GOLD_LISTS.items():
        value = g.get(name, [])
        if not isinstance(value, list) or not all(
            isinstance(v, types) and not isinstance(v, bool) for v in value
        ):
            return f'"{name}" is not a list of {" or ".join(t.__name__ for t in types)}'
    if not isinstance(g.get("reading_advice"), str | None):
        return '"reading_advice" is not a string'
    number = g.get("pr_number")
    if number is not None and (isinstance(number, bool) or not isinstance(number, int)):
        return '"pr_number" is not an integer'
    return None


_BETWEEN_ELEMENTS = re.compile(r"[ \t\n\r,]*")


def _element_lines(text: str) -> list[int]:
    """The line each element of a JSON array starts on, for messages."""
    decoder, lines = json.JSONDecoder(), list[int]()
    at = text.index("[") + 1
    while True:
        gap = _BETWEEN_ELEMENTS.match(text, at)
        assert gap is not None  # it matches the empty string
        at = gap.end()
        if at >= len(text) or text[at] == "]":
            return lines
        lines.append(text.count("\n", 0, at) + 1)
        at = decoder.raw_decode(text, at)[1]


def _gold_values(
    g: dict, kind: str, pr: PullRequestView | None = None, histories: Collection[str] = ()
) -> list[str]:
    if kind == "commits":
        repo = g.get("repo_verified") or g.get("repo")
        number = g.get("pr_number")
        return [str(number)] if number is not None and repo in histories else []
    if kind in ("files·backtick", "files·bare"):
        written = g.get("files_written")
        written = written if isinstance(written, dict) else {}
        spans = {
            str(s.get("normalized") or s.get("text"))
            for s in g.get("spans", [])
            if isinstance(s, dict) and s.get("class") == "file"
        }
        form = kind.split("·")[1]
        return [
            f
            for f in map(str, g.get("files", []))
            if written.get(f, "backtick" if f in spans else "bare") == form
        ]
    if kind == "decisions·sentence":
        if pr is None:
            return []
        details = {
            d.get("text"): d.get("sentence")
            for d in g.get("decisions_detail", [])
            if isinstance(d, dict)
        }
        return [
            s
            for d in map(str, g.get("decisions", []))
            if (s := _sentence_of(details.get(d) or d, pr.texts) or _sentence_of(d, pr.texts))
        ]
    if kind == "topics·title":
        if "title_topics" in g:
            return list(map(str, g["title_topics"]))
        title = " ".join(str(g.get("title", "")).split()).casefold()
        return [t for t in map(str, g.get("topics", [])) if " ".join(t.split()).casefold() in title]
    if kind == "symbols":
        return [*g.get("symbols", []), *g.get("external_symbols", [])]
    if kind == "people":
        return list(g.get("persons", []))
    if kind == "advice":
        return [g["reading_advice"]] if g.get("reading_advice") else []
    return [str(v) for v in g.get(kind, [])]


# --- matching ---------------------------------------------------------------------------------

Matcher = Callable[[str, str], float]  # a score; 0 for no match


def _matchers(view: GraphView) -> dict[str, Matcher]:
    def topic(name: str) -> str:
        folded = " ".join(name.split()).casefold()
        return view.topic_of.get(folded, folded)

    def exact(extracted: str, gold: str) -> float:
        return float(extracted == gold)

    def decision(extracted: str, gold: str) -> float:
        score = overlap(extracted, gold)
        return score if score >= DECISION_OVERLAP else 0.0

    def file(extracted: str, gold: str) -> float:
        return float(extracted == gold or extracted.endswith("/" + gold))

    return {
        "files": file,
        "files·backtick": file,
        "files·bare": file,
        "decisions·sentence": exact,
        "symbols": lambda x, g: float(x == g or x.endswith(("." + g, "::" + g))),
        "issues": exact,
        "decisions": decision,
        "patterns": exact,
        "topics": lambda x, g: float(topic(x) == topic(g)),
        "topics·title": lambda x, g: float(topic(x) == topic(g)),
        "people": lambda x, g: float(x.casefold() == g.casefold()),
        "advice": exact,
        "commits": exact,
    }


def _pair(
    extracted: Sequence[str], gold: Sequence[str], match: Matcher
) -> tuple[set[int], set[int]]:
    """One-to-one matching, best score first: (matched extracted, matched gold) indices."""
    scored = sorted(
        ((match(x, g), -i, -j, i, j) for i, x in enumerate(extracted) for j, g in enumerate(gold)),
        reverse=True,
    )
    used_x: set[int] = set()
    used_g: set[int] = set()
    for score, _, _, i, j in scored:
        if score > 0 and i not in used_x and j not in used_g:
            used_x.add(i)
            used_g.add(j)
    return used_x, used_g


def evaluate(gold: Sequence[dict], view: GraphView) -> Evaluation:
    by_title: dict[str, PullRequestView] = {}
    for candidate in view.prs:
        for title in sorted(candidate.titles):
            by_title.setdefault(title, candidate)
    matchers = _matchers(view)
    counts = {kind: [0, 0, 0, 0] for kind in KINDS}  # gold, found, matched gold, matched found
    differences: list[Difference] = []
    seen: set[int] = set()
    for index, g in enumerate(gold):
        entry = str(g.get("id", index + 1))
        pr = by_title.get(normalize_title(g["title"]))
        if pr is not None and id(pr) in seen:
            pr = None  # two gold entries for one PR: the second is not found
        counts["prs"][0] += 1
        if pr is None:
            differences.append(Difference(entry, "prs", g["title"], True))
        else:
            counts["prs"][2] += 1
            seen.add(id(pr))
        for kind in KINDS[1:]:
            got = _unique(pr.values[kind]) if pr is not None else []
            wanted = _unique(_gold_values(g, kind, pr, view.histories))  # a name twice is one
            _count(counts[kind], entry, kind, got, wanted, matchers[kind], differences)
    for pr in view.prs:  # PRs no gold entry describes: all they hold is unasked for
        counts["prs"][1] += 1
        if id(pr) in seen:
            counts["prs"][3] += 1
            continue
        differences.append(Difference(pr.title, "prs", pr.title, False))
        for kind in KINDS[1:]:
            _count(
                counts[kind],
                pr.title,
                kind,
                _unique(pr.values[kind]),
                [],
                matchers[kind],
                differences,
            )
    scores = tuple(Score(kind, *counts[kind]) for kind in KINDS)
    pairs = [
        (by_title.get(normalize_title(g["title"])), g) for g in gold
    ]  # the first gold entry of a PR is the one matched above
    matched: list[tuple[PullRequestView | None, dict | None]] = []
    taken: set[int] = set()
    for pr, g in pairs:
        if pr is not None and id(pr) in taken:
            pr = None
        if pr is not None:
            taken.add(id(pr))
        matched.append((pr, g))
    matched += [(pr, None) for pr in view.prs if id(pr) not in taken]
    return Evaluation(scores, tuple(differences), _by_pattern(matched), _at_thresholds(matched))


def _pattern_sets(
    matched: Sequence[tuple[PullRequestView | None, dict | None]], threshold: float
) -> list[tuple[set[str], set[str]]]:
    """(found, gold) pattern ids of each PR, found ones at `threshold` or above."""
    out = []
    for pr, g in matched:
        found = set()
        if pr is not None:
            found = {
                p for p in pr.values["patterns"] if pr.pattern_confidence.get(p, 1.0) >= threshold
            }
        wanted = {p for p in (g or {}).get("patterns", []) if p}
        out.append((found, wanted))
    return out


def _by_pattern(
    matched: Sequence[tuple[PullRequestView | None, dict | None]],
) -> tuple[Score, ...]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for found, wanted in _pattern_sets(matched, 0.0):
        for p in wanted:
            counts[p][0] += 1
        for p in found:
            counts[p][1] += 1
        for p in found & wanted:
            counts[p][2] += 1
    return tuple(Score(p, g, f, m, m) for p, (g, f, m) in sorted(counts.items()))


def _at_thresholds(
    matched: Sequence[tuple[PullRequestView | None, dict | None]],
) -> tuple[tuple[float, Score], ...]:
    out = []
    for threshold in THRESHOLDS:
        sets = _pattern_sets(matched, threshold)
        gold = sum(len(w) for _, w in sets)
        found = sum(len(f) for f, _ in sets)
        hit = sum(len(f & w) for f, w in sets)
        out.append((threshold, Score("patterns", gold, found, hit, hit)))
    return tuple(out)


def _count(
    tally: list[int],
    entry: str,
    kind: str,
    got: Sequence[str],
    wanted: Sequence[str],
    match: Matcher,
    differences: list[Difference],
) -> None:
    used_x, used_g = _pair(got, wanted, match)
    tally[0] += len(wanted)
    tally[1] += len(got)
    tally[2] += len(used_g)
    tally[3] += len(used_x)
    differences.extend(
        Difference(entry, kind, w, True) for j, w in enumerate(wanted) if j not in used_g
    )
    differences.extend(
        Difference(entry, kind, x, False) for i, x in enumerate(got) if i not in used_x
    )


def _unique(values: Iterable[str]) -> list[str]:
    return sorted({v for v in values if v})


def run(gold_path: Path, graph_path: Path) -> Evaluation:
    return evaluate(read_gold(gold_path), read_graph(graph_path))
