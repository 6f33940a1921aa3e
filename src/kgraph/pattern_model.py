"""A learned second opinion on design patterns: character n-grams, weighed by the labelled corpus.

The concept rules (`kgraph.extract.patterns`) find a pattern's evidence in one clause: a cue,
or concepts that combine. A review says more than that clause: "退回", "warning_once",
"照常加载" around a weak *fallback* hit make graceful degradation likelier, and a reviewer
who never writes the words a cue knows still writes many of its neighbours. This model reads
the whole entry, as the character 1–3-grams of its title (twice: it is short and says the
most) and its summary, and gives each pattern it knows a probability: one logistic
regression per pattern over the entry's TF-IDF vector, trained by `bench/pattern_ngrams.py`
on the tune corpora only and shipped as `schemas/pattern-model.json`.

Character n-grams need no word segmentation, so Chinese and English are read alike. The text
is lower-cased, its whitespace collapsed to single spaces and one space put at each end; the
features are every substring of one to three characters of that. `grams` lists them for
training; `PatternModel.probabilities` counts only the model's own, with numpy: every
1-, 2- and 3-gram of the text as one integer key (21 bits a character), looked up in the
sorted keys of the vocabulary, about 0.05 ms a summary where a Python loop over the
n-grams took 0.5 ms. Deterministic: the same text gives the same probabilities.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

NGRAM_SIZES = (1, 2, 3)
_BITS = np.uint64(21)  # enough for any code point (U+10FFFF < 2**21)


def model_text(title: str, text: str) -> str:
    """What the model reads: the title twice, then the summary, lower-cased, whitespace
    collapsed to single spaces, one space at each end; a NUL is a space (see `_key`)."""
    words = f"{title}\n{title}\n{text}".replace("\x00", " ").lower().split()
    return " " + " ".join(words) + " "


def grams(document: str) -> list[str]:
    """The n-grams of `document` (a `model_text`): every substring of one to three
    characters but a lone space and those that run from one word into the next ("d w")."""
    return [
        g
        for n in NGRAM_SIZES
        for i in range(len(document) - n + 1)
        if (g := document[i : i + n]) != " " and not (n == 3 and g[1] == " " != g[0])
    ]


@dataclass(frozen=True, slots=True, eq=False)
class PatternModel:
    """Per pattern a logistic regression over the TF-IDF vector of an entry's n-grams."""

    patterns: tuple[str, ...]  # the pattern ids it knows, one column each
    vocabulary: tuple[str, ...]  # its n-grams, one row each
    idf: np.ndarray  # per n-gram
    coefficients: np.ndarray  # n-grams × patterns
    intercepts: np.ndarray  # per pattern
    keys: np.ndarray  # the n-grams' integer keys, sorted
    rows: np.ndarray  # the row of each sorted key

    def probabilities(self, title: str, text: str) -> dict[str, float]:
        """The probability of each pattern the model knows, for an entry."""
        logits = self._logits(model_text(title, text))
        return {p: _sigmoid(z) for p, z in zip(self.patterns, logits, strict=True)}

    def _logits(self, document: str) -> list[float]:
        found = self._rows_in(document)
        if not found.size:
            return [float(b) for b in self.intercepts]
        counted = np.bincount(found, minlength=self.idf.size)
        rows = np.flatnonzero(counted)
        weights = (1.0 + np.log(counted[rows])) * self.idf[rows]
        # `einsum`, not `@`: a matrix product goes to BLAS, whose threads (in every `-j`
        # reader forked from the build) spin on the shared CPUs, and whose summation order
        # may follow the thread count; einsum's own loop adds in a fixed order.
        norm = math.sqrt(float(np.einsum("i,i->", weights, weights))) or 1.0
        sums = np.einsum("i,ij->j", weights, self.coefficients[rows])
        return [float(z) for z in sums / norm + self.intercepts]

    def _rows_in(self, document: str) -> np.ndarray:
        """The vocabulary row of each n-gram occurrence in the document that it knows."""
        if not document or not self.keys.size:
            return np.zeros(0, dtype=np.intp)
        encoded = document.encode("utf-32-le", "surrogatepass")
        chars = np.frombuffer(encoded, dtype=np.uint32).astype(np.uint64)
        pairs = (chars[:-1] << _BITS) | chars[1:]
        triples = (pairs[:-1] << _BITS) | chars[2:]
        keys = np.concatenate((chars, pairs, triples))
        at = np.searchsorted(self.keys, keys)
        at[at == self.keys.size] = 0
        return self.rows[at[self.keys[at] == keys]]

    def strongest(self, pattern: str, units: Iterable[str]) -> int:
        """Which of the texts (the title, the sentences of a summary) the model, reading each
        alone, finds most like the pattern: where a pattern found by the model alone shows."""
        column = self.patterns.index(pattern)
        scored = [(self._logits(model_text("", unit))[column], -i) for i, unit in enumerate(units)]
        return -max(scored)[1] if scored else 0


def _key(gram: str) -> int:
    key = 0
    for ch in gram:
        key = (key << 21) | ord(ch)
    return key


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


class ModelError(ValueError):
    """A model file that cannot be read."""


def parse_model(text: str) -> PatternModel:
    """The model as `bench/pattern_ngrams.py` writes it: `{"idf": {gram: idf}, "patterns":
    {id: {"intercept": b, "coefficients": {gram: w}}}}`."""
    try:
        data = json.loads(text)
        idf = {str(g): float(v) for g, v in data["idf"].items()}
        learned = {
            str(p): (
                float(m["intercept"]),
                {str(g): float(w) for g, w in m["coefficients"].items()},
            )
            for p, m in data["patterns"].items()
        }
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ModelError(f"not a pattern model: {error}") from None
    vocabulary = tuple(sorted(idf))
    if any(not 1 <= len(g) <= max(NGRAM_SIZES) or "\x00" in g for g in vocabulary):
        raise ModelError("not a pattern model: an n-gram of an unexpected length or a NUL")
    row = {g: i for i, g in enumerate(vocabulary)}
    patterns = tuple(sorted(learned))
    coefficients = np.zeros((len(vocabulary), len(patterns)))
    for column, pattern in enumerate(patterns):
        for gram, weight in learned[pattern][1].items():
            if gram not in row:
                raise ModelError(f"not a pattern model: {gram!r} of {pattern} has no idf")
            coefficients[row[gram], column] = weight
    # 1-, 2- and 3-grams have distinct keys: `model_text` has no NUL, so a longer gram's
    # key is at least 2**21.
    keys = np.array([_key(g) for g in vocabulary], dtype=np.uint64)
    order = np.argsort(keys, kind="stable")
    return PatternModel(
        patterns=patterns,
        vocabulary=vocabulary,
        idf=np.array([idf[g] for g in vocabulary]),
        coefficients=coefficients,
        intercepts=np.array([learned[p][0] for p in patterns]),
        keys=keys[order],
        rows=order.astype(np.intp),
    )
