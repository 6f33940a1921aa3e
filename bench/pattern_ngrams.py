"""Train the n-gram model of `ngram_model.py` on the tune corpora (and write it as JSON).

One logistic regression per pattern (class-balanced, C = 10) over the TF-IDF vectors of the
entries' character n-grams (`kgraph.pattern_model.grams`, those of two or more entries). To keep
the file small and the scoring fast, each pattern keeps the `KEEP` n-grams of largest
weight; the vocabulary is their union, and each regression is fitted again on its own
n-grams of the vector normalised over that union, as `kgraph.pattern_model` scores it. Tune corpora
only (the patterns and prose tune halves, the seeds, dev); never a check split.

    pip install scikit-learn   # a measuring tool: kgraph does not depend on it
    python bench/pattern_ngrams.py               # print the size of the model
    python bench/pattern_ngrams.py --write FILE  # and write it to FILE

Deterministic: sorted corpus, sorted vocabulary, the lbfgs solver, weights rounded to 1e-4.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kgraph.catalog import builtin_knowledge
from kgraph.extract.patterns import asserted
from kgraph.pattern_model import grams, model_text

KEEP = 200  # n-grams kept per pattern
C = 10.0
MIN_ENTRIES = 2  # a pattern needs this many labelled entries to be learned


def train(entries: list, patterns: list[str]) -> dict:
    """The model as JSON-ready data, from entries with `.title`, `.text` and `.gold`."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    texts = [model_text(asserted(e.title), asserted(e.text)) for e in entries]
    learned = [p for p in patterns if sum(p in e.gold for e in entries) >= MIN_ENTRIES]
    labels = {p: np.array([p in e.gold for e in entries]) for p in learned}

    def regression() -> LogisticRegression:
        return LogisticRegression(C=C, max_iter=5000, class_weight="balanced")

    full = TfidfVectorizer(analyzer=grams, min_df=2, sublinear_tf=True)
    x = full.fit_transform(texts)
    names = [str(n) for n in full.get_feature_names_out()]
    kept: dict[str, list[str]] = {}
    for p in learned:
        weights = regression().fit(x, labels[p]).coef_[0]
        order = sorted(range(len(names)), key=lambda i: (-abs(weights[i]), names[i]))
        kept[p] = sorted(names[i] for i in order[:KEEP])
    # The vector is normalised over the union, as kgraph scores it; each pattern is fitted
    # again on its own n-grams' columns of it.
    vocabulary = sorted({g for grams_of in kept.values() for g in grams_of})
    union = TfidfVectorizer(analyzer=grams, sublinear_tf=True, vocabulary=vocabulary)
    x = union.fit_transform(texts)
    column = {g: i for i, g in enumerate(vocabulary)}
    out_patterns = {}
    for p in learned:
        columns = [column[g] for g in kept[p]]
        model = regression().fit(x[:, columns], labels[p])
        out_patterns[p] = {
            "intercept": round(float(model.intercept_[0]), 4),
            "coefficients": {
                g: round(float(w), 4)
                for g, w in zip(kept[p], model.coef_[0], strict=True)
                if round(float(w), 4) != 0.0
            },
        }
    idf = {g: round(float(v), 4) for g, v in zip(vocabulary, union.idf_, strict=True)}
    return {"idf": idf, "patterns": out_patterns}


def main() -> None:
    from pattern_classifier import TUNE, corpus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="FILE", help="write the model as JSON")
    args = parser.parse_args()
    patterns = sorted(p.id for p in builtin_knowledge().patterns)
    model = train(corpus(TUNE), patterns)
    text = json.dumps(model, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    coefficients = sum(len(m["coefficients"]) for m in model["patterns"].values())
    print(
        f"{len(model['patterns'])} patterns, {len(model['idf'])} n-grams, "
        f"{coefficients} coefficients, {len(text.encode()) / 1024:.0f} KiB"
    )
    if args.write:
        args.write.write_text(text, "utf-8")


if __name__ == "__main__":
    main()
