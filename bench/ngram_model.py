"""A learned second opinion on design patterns: character n-grams, weighed by the labelled corpus.

Measured here, not shipped yet (docs/eval.md, "a learned second opinion"). The concept rules
(`kgraph.extract.patterns`) find a pattern's evidence and its span; their confidence is what
the cues and combinations measured on the tune corpus. A review says more than the clause
that fired: "退回", "warning_once", "照常加载" around a weak *fallback* hit make graceful
degradation likelier. This model reads all of it, as character 1–3-grams of the title
(twice) and the summary, one logistic regression per pattern over their TF-IDF vector,
trained by `pattern_ngrams.py` on the tune corpora only. It proposes no pattern of its own:
`pattern_classifier.py` combines its probability with a pattern the rules found, as
independent evidence, and sets that against the rules alone.

Character n-grams need no word segmentation, so Chinese and English are read alike; the
n-grams are those of scikit-learn's `char_wb` analyzer (each word padded with spaces), made
here so that training and scoring see the same features and scoring needs no scikit-learn.
Deterministic: the same text gives the same probabilities.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field

import regex

NGRAM_SIZES = (1, 2, 3)
WHITESPACE = regex.compile(r"\s+")


def grams(text: str) -> list[str]:
    """The character n-grams of each word padded with a space on each side, lower-cased."""
    out: list[str] = []
    for word in WHITESPACE.split(text.lower()):
        if not word:
            continue
        padded = f" {word} "
        for n in NGRAM_SIZES:
            if len(padded) < n:
                break
            out.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return out


def document(title: str, text: str) -> str:
    """What the model reads: the title twice (it is short and says the most), then the summary."""
    return f"{title}\n{title}\n{text}"


@dataclass(frozen=True, slots=True)
class NgramModel:
    """Per pattern a logistic regression over the TF-IDF vector of an entry's n-grams."""

    idf: dict[str, float] = field(default_factory=dict)  # the vocabulary and its weights
    # n-gram -> ((pattern, coefficient), ...), only the non-zero coefficients
    coefficients: dict[str, tuple[tuple[str, float], ...]] = field(default_factory=dict)
    intercepts: dict[str, float] = field(default_factory=dict)  # the patterns it knows

    def probabilities(self, title: str, text: str, patterns: set[str]) -> dict[str, float]:
        """The model's probability of each of `patterns` it knows, for this entry."""
        wanted = patterns & self.intercepts.keys()
        if not wanted:
            return {}
        counts = Counter(g for g in grams(document(title, text)) if g in self.idf)
        weights = {g: (1.0 + math.log(n)) * self.idf[g] for g, n in counts.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        sums = dict.fromkeys(sorted(wanted), 0.0)
        for g in sorted(weights):
            for pattern, coefficient in self.coefficients.get(g, ()):
                if pattern in sums:
                    sums[pattern] += coefficient * weights[g] / norm
        return {p: _sigmoid(s + self.intercepts[p]) for p, s in sums.items()}


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def parse_model(text: str) -> NgramModel:
    """The model as `bench/pattern_ngrams.py` writes it: `{"idf": {gram: idf}, "patterns":
    {id: {"intercept": b, "coefficients": {gram: w}}}}`."""
    data = json.loads(text)
    by_gram: dict[str, list[tuple[str, float]]] = {}
    for pattern, model in sorted(data["patterns"].items()):
        for gram, coefficient in sorted(model["coefficients"].items()):
            by_gram.setdefault(gram, []).append((pattern, float(coefficient)))
    return NgramModel(
        idf={g: float(v) for g, v in data["idf"].items()},
        coefficients={g: tuple(v) for g, v in by_gram.items()},
        intercepts={p: float(m["intercept"]) for p, m in data["patterns"].items()},
    )
