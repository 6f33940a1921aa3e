"""Does a classifier learned from the labelled corpus beat the concept rules? Measured here.

The patterns issue welcomes statistical weighting (scikit-learn) "where it beats rules on the
check split". This script is that comparison, kept so that anyone can run it again when the
corpus grows; it chose what kgraph ships (`rules+ngrams`) and its default threshold. The
scorers, each judged at the threshold of best F1 on tune:

- `rules`: the concept rules alone (best confidence of an entry's mentions of a pattern);
- `rescore`: logistic regression over what the rules saw for each (entry, pattern): best and
  combined confidence, how many mentions, title or summary, cue or combination, how many
  patterns the entry shows, its language, and the pattern itself;
- `ngrams`: one logistic regression per pattern over character 1–3-grams of title and
  summary (TF-IDF, class-balanced; `kgraph.pattern_model`, trained by `pattern_ngrams.py`),
  the rules ignored;
- `rules+ngrams`: the two as independent evidence, 1 - (1 - rules)(1 - ngrams), the model
  alone finding a pattern the rules have no evidence of: what kgraph does
  (`kgraph.extract.patterns._weighed`);
- `rules·ngrams`: the same, for the patterns the rules found only.

By default every figure is 5-fold cross-validation over the tune corpora (the folds split
entries, never an entry's patterns): the threshold of best F1 there is
`kgraph.catalog.DEFAULT_PATTERN_THRESHOLD`. `--check` trains on all of tune, takes each
scorer's threshold from the cross-validation, and prints the check splits' figures only,
nothing per entry (check is measured, never read), and a last row `kgraph`: the shipped
recognizer, model file and default threshold, on check.

    pip install scikit-learn   # a measuring tool only: kgraph itself does not depend on it
    python bench/pattern_classifier.py [--check]

Deterministic: fixed folds, a deterministic solver, a sorted corpus.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from collections import defaultdict
from pathlib import Path

from pattern_ngrams import train as train_ngrams
from pattern_weights import ROOT, TUNE  # the tune corpora, never a check split

from kgraph.catalog import builtin_knowledge
from kgraph.extract.patterns import asserted, concept_support, confidence_of, extract_patterns
from kgraph.ingest import read_inputs
from kgraph.link import normalize_title
from kgraph.model import Field
from kgraph.pattern_model import parse_model

CHECK = (ROOT / "tests/data/patterns/check", ROOT / "tests/data/prose/check")
PATTERN_IDS = sorted(p.id for p in builtin_knowledge().patterns)
THRESHOLDS = [round(0.05 * i, 2) for i in range(2, 20)]
FEATURES = ("best", "combined", "mentions", "title", "cue", "combination", "share", "zh")


@dataclasses.dataclass(frozen=True)
class Labelled:
    """One entry: its text, the gold patterns, and what the rules found per pattern."""

    title: str
    text: str
    gold: frozenset[str]
    found: dict[str, dict[str, float]]  # pattern -> rule features
    shipped: frozenset[str]  # what kgraph applies, model and default threshold included
    support: frozenset[str]  # patterns one of whose combinations' concepts is stated


def corpus(folders: tuple[Path, ...]) -> list[Labelled]:
    # the rules alone, every piece of their evidence whatever its confidence
    knowledge = dataclasses.replace(builtin_knowledge(), pattern_threshold=0.0, pattern_model=None)
    shipped = builtin_knowledge()
    out = []
    for folder in folders:
        gold = {
            normalize_title(g["title"]): g
            for g in json.loads((folder / "gold.json").read_text("utf-8"))
        }
        for result in read_inputs(sorted(str(p) for p in folder.glob("*.txt"))):
            for entry in result.entries:
                g = gold.get(normalize_title(entry.title))
                if g is None:
                    continue
                by_pattern = defaultdict(list)
                for mention in extract_patterns(entry, knowledge):
                    by_pattern[mention.key].append(mention)
                found = {p: _rule_features(ms, len(by_pattern)) for p, ms in by_pattern.items()}
                zh = any("\u4e00" <= ch <= "\u9fff" for ch in entry.text)
                for features in found.values():
                    features["zh"] = float(zh)
                applied = frozenset(m.key for m in extract_patterns(entry, shipped))
                support = frozenset(concept_support(entry, knowledge, set(PATTERN_IDS)))
                gold_patterns = frozenset(g.get("patterns", []))
                out.append(
                    Labelled(entry.title, entry.text, gold_patterns, found, applied, support)
                )
    return out


def _rule_features(mentions: list, patterns_in_entry: int) -> dict[str, float]:
    confidences = [confidence_of(m) for m in mentions]
    missing = math.prod(1 - c for c in confidences)
    shown = [m.detail.partition(" ")[2] for m in mentions]
    return {
        "best": max(confidences),
        "combined": 1 - missing,
        "mentions": math.log1p(len(mentions)),
        "title": float(any(m.field is Field.TITLE for m in mentions)),
        "cue": float(any(s.startswith("cue:") for s in shown)),
        "combination": float(any(not s.startswith("cue:") for s in shown)),
        "share": 1 / patterns_in_entry,
    }


def scores(train: list[Labelled], test: list[Labelled], patterns: list[str]) -> dict[str, list]:
    """Each scorer's (entry index, pattern, score) on `test`, trained on `train`."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    out: dict[str, list] = {
        "rules": [],
        "rescore": [],
        "ngrams": [],
        "rules+ngrams": [],
        "rules·ngrams": [],
        "rules+ngrams|c": [],
    }

    def rows(entries: list[Labelled]) -> tuple[list, list, list]:
        keys, x, y = [], [], []
        for i, e in enumerate(entries):
            for p, f in sorted(e.found.items()):
                keys.append((i, p))
                x.append([f[n] for n in FEATURES] + [float(p == q) for q in patterns])
                y.append(int(p in e.gold))
        return keys, x, y

    _, x_train, y_train = rows(train)
    keys, x_test, _ = rows(test)
    model = LogisticRegression(C=1.0, max_iter=3000).fit(np.array(x_train), np.array(y_train))
    for (i, p), s in zip(keys, model.predict_proba(np.array(x_test))[:, 1], strict=True):
        out["rescore"].append((i, p, float(s)))
        out["rules"].append((i, p, test[i].found[p]["best"]))

    model = parse_model(json.dumps(train_ngrams(train, patterns)))  # as kgraph reads it
    for i, e in enumerate(test):
        for p, q in sorted(model.probabilities(asserted(e.title), asserted(e.text)).items()):
            out["ngrams"].append((i, p, q))
            r = e.found.get(p, {}).get("best", 0.0)
            out["rules+ngrams"].append((i, p, 1 - (1 - r) * (1 - q)))
            if p in e.found:
                out["rules·ngrams"].append((i, p, 1 - (1 - r) * (1 - q)))
            if p in e.found or p in e.support:
                out["rules+ngrams|c"].append((i, p, 1 - (1 - r) * (1 - q)))
    return out


def figures(entries: list[Labelled], scored: list, threshold: float) -> tuple[float, float, float]:
    gold = sum(len(e.gold) for e in entries)
    kept = [(i, p) for i, p, s in scored if s >= threshold]
    hit = sum(p in entries[i].gold for i, p in kept)
    precision = hit / len(kept) if kept else 1.0
    recall = hit / gold if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="train on tune, measure check")
    args = parser.parse_args()
    tune = corpus(TUNE)
    patterns = sorted({p.id for p in builtin_knowledge().patterns})
    if args.check:
        test = corpus(CHECK)
        pooled = scores(tune, test, patterns)
        validated = _cross_validated(tune, patterns)
        thresholds_from = {k: _best(tune, validated[k])[3] for k in pooled}
    else:
        test = tune
        pooled = _cross_validated(tune, patterns)
        thresholds_from = {}
    print(f"{'scorer':<14} {'threshold':>9} {'precision':>9} {'recall':>7} {'f1':>6}")
    for name, scored in pooled.items():
        if args.check:  # the threshold chosen on tune, as a user would
            t = thresholds_from[name]
            p, r, f = figures(test, scored, t)
        else:
            p, r, f, t = _best(test, scored)
        print(f"{name:<14} {t:>9.2f} {p:>9.3f} {r:>7.3f} {f:>6.3f}")
    if args.check:  # on tune the shipped model is in-sample: no figure of it there
        shipped = [(i, p, 1.0) for i, e in enumerate(test) for p in sorted(e.shipped)]
        p, r, f = figures(test, shipped, 1.0)
        threshold = builtin_knowledge().pattern_threshold
        print(f"{'kgraph':<14} {threshold:>9.2f} {p:>9.3f} {r:>7.3f} {f:>6.3f}")


def _cross_validated(tune: list[Labelled], patterns: list[str], folds: int = 5) -> dict[str, list]:
    pooled: dict[str, list] = defaultdict(list)
    for k in range(folds):
        test_index = [i for i in range(len(tune)) if i % folds == k]
        train = [e for i, e in enumerate(tune) if i % folds != k]
        for name, scored in scores(train, [tune[i] for i in test_index], patterns).items():
            pooled[name] += [(test_index[i], p, s) for i, p, s in scored]
    return pooled


def _best(entries: list[Labelled], scored: list) -> tuple[float, float, float, float]:
    """Precision, recall and F1 at the threshold of best F1, and that threshold."""
    return max(((*figures(entries, scored, t), t) for t in THRESHOLDS), key=lambda x: x[2])


if __name__ == "__main__":
    main()
