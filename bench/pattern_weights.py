"""Learn each concept combination's kg:weight from the tune corpus: its smoothed precision.

A combination's weight is the confidence its evidence gives a pattern. Set by hand it is a
guess; here it is measured. For every tune entry (tests/data/patterns/tune,
tests/data/prose/tune, the shared seeds and dev; never a check split) each combination that
fires for a pattern counts once, as right when the gold labels the entry with that pattern;
when several combinations of one pattern fire, only those of the most concepts count (the
evidence that decides the confidence), so a general combination is not credited with the
cases a more specific one found.
Its weight is (right + 1) / (fired + 2), the precision with one right and one wrong guess
added (Laplace), so a combination seen twice cannot claim certainty; rounded to 0.05. A
combination that never fires keeps its weight. Deterministic: the same corpus and catalog
give the same weights.

    python bench/pattern_weights.py           # print the table
    python bench/pattern_weights.py --write   # and rewrite them in schemas/*.ttl

The patterns' own cues are weighed the same way, per pattern (kg:cueWeight in patterns.ttl).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from collections import defaultdict
from pathlib import Path

from kgraph.catalog import Combination, builtin_knowledge
from kgraph.extract.patterns import combination_evidence, cue_evidence
from kgraph.ingest import read_inputs
from kgraph.link import normalize_title

ROOT = Path(__file__).resolve().parent.parent
TUNE = (
    ROOT / "tests/data/patterns/tune",
    ROOT / "tests/data/prose/tune",
    ROOT.parent / "shared/seeds",
    ROOT.parent / "shared/dev",
)
CONCEPTS = ROOT / "schemas/concepts.ttl"
PATTERNS = ROOT / "schemas/patterns.ttl"


def counts() -> dict[str, list[int]]:
    """(right, fired) of each combination by name, over the tune entries."""
    knowledge = dataclasses.replace(builtin_knowledge(), pattern_threshold=0.0)
    named = {c.name: c for c in knowledge.combinations}
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for folder in TUNE:
        gold = {
            normalize_title(g["title"]): g
            for g in json.loads((folder / "gold.json").read_text("utf-8"))
        }
        files = sorted(str(p) for p in folder.glob("*.txt"))
        for result in read_inputs(files):
            for entry in result.entries:
                g = gold.get(normalize_title(entry.title))
                if g is None:
                    continue
                wanted = set(g.get("patterns", []))
                for pattern in sorted(cue_evidence(entry, knowledge)):
                    tally["cue:" + pattern][0] += pattern in wanted
                    tally["cue:" + pattern][1] += 1
                by_pattern: dict[str, list[Combination]] = defaultdict(list)
                for name in combination_evidence(entry, knowledge):
                    by_pattern[named[name].pattern].append(named[name])
                for pattern, fired in sorted(by_pattern.items()):
                    most = max(len(c.concepts) for c in fired)
                    for combination in fired:
                        if len(combination.concepts) == most:  # the most specific evidence
                            tally[combination.name][0] += pattern in wanted
                            tally[combination.name][1] += 1
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite schemas/concepts.ttl")
    args = parser.parse_args()
    tally = counts()
    text = CONCEPTS.read_text("utf-8")
    for combination in builtin_knowledge().combinations:
        right, fired = tally.get(combination.name, [0, 0])
        weight = _smoothed(right, fired) if fired else combination.weight
        print(
            f"{right:>4} / {fired:<4} {combination.weight:.2f} -> {weight:.2f}  {combination.name}"
        )
        head = rf"(kgc:{re.escape(combination.name)} a kg:ConceptCombination ;[^.]*?kg:weight \")"
        block = re.compile(head + r"[0-9.]+(\")", re.S)
        text = block.sub(rf"\g<1>{weight}\g<2>", text, count=1)
    catalog = PATTERNS.read_text("utf-8")
    for pattern in builtin_knowledge().patterns:
        right, fired = tally.get("cue:" + pattern.id, [0, 0])
        weight = _smoothed(right, fired) if fired else pattern.cue_weight
        print(
            f"{right:>4} / {fired:<4} {pattern.cue_weight:.2f} -> {weight:.2f}"
            f"  cues of {pattern.id}"
        )
        notation = f'skos:notation "{pattern.id}" ;'
        catalog = re.sub(
            rf'({re.escape(notation)})(\n    kg:cueWeight "[0-9.]+"\^\^xsd:decimal ;)?',
            rf'\g<1>\n    kg:cueWeight "{weight}"^^xsd:decimal ;',
            catalog,
            count=1,
        )
    if args.write:
        CONCEPTS.write_text(text, "utf-8")
        PATTERNS.write_text(catalog, "utf-8")


def _smoothed(right: int, fired: int) -> float:
    """(right + 1) / (fired + 2), rounded to 0.05."""
    return round(round((right + 1) / (fired + 2) * 20) / 20, 2)


if __name__ == "__main__":
    main()
