"""How much each design signal of a diff says of the patterns a PR applies: the measure
behind `kgraph.commits.SIGNAL_PATTERNS`.

For every PR that a build with history linked to its merge commit and that gold labels,
the commit's diff is read with kgraph's own reader, its signals found
(`kgraph.history.signals`), and each signal's pattern compared with the gold patterns:
precision (of the PRs with the signal, the share whose gold has the pattern), the pattern's
base rate among the linked PRs, and recall. Run it on tune corpora only: the weights come
from here.

    kgraph build tests/data/patterns/tune -o /tmp/pt --source vllm-project/vllm=REPO@REV
    python bench/change_signals.py --repo REPO /tmp/pt tests/data/patterns/tune/gold.json \\
        [OUT GOLD ...] [-v]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

from kgraph.commits import SIGNAL_PATTERNS
from kgraph.history.log import read_diffs
from kgraph.history.signals import signals_of


def normalize(title: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", title).split()).casefold()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="the git directory")
    parser.add_argument("pairs", nargs="+", help="OUT GOLD, repeated")
    parser.add_argument("-v", "--verbose", action="store_true", help="every signal found")
    args = parser.parse_args()
    with_signal: Counter[str] = Counter()
    right: Counter[str] = Counter()
    base: Counter[str] = Counter()
    linked = 0
    for out, gold in zip(args.pairs[::2], args.pairs[1::2], strict=True):
        data = json.loads((Path(out) / "graph.json").read_text("utf-8"))
        nodes = {n["id"]: n for n in data["nodes"]}
        edges: dict[tuple[str, str], list[str]] = defaultdict(list)
        for e in data["edges"]:
            edges[(e["source"], e["relation"])].append(e["target"])
        by_title = {normalize(g["title"]): g for g in json.loads(Path(gold).read_text("utf-8"))}
        for pr in (n for n in data["nodes"] if n["kind"] == "PullRequest"):
            merged = edges[(pr["id"], "mergedAs")]
            titles = [pr["title"], *(nodes[e]["title"] for e in edges[(pr["id"], "describedBy")])]
            labelled = next(
                (by_title[normalize(t)] for t in titles if normalize(t) in by_title), None
            )
            if not merged or labelled is None:
                continue
            sha = nodes[merged[0]]["sha"]
            parent = subprocess.run(
                ["git", "--git-dir", str(args.repo), "rev-parse", f"{sha}^1"],
                capture_output=True, text=True, check=False,
            ).stdout.strip() or None  # fmt: skip
            diffs = [d for _, found in read_diffs(args.repo, [(sha, parent)], []) for d in found]
            signals = signals_of(diffs)
            linked += 1
            wanted = set(labelled.get("patterns", []))
            base.update(wanted)
            for kind in sorted({s.kind for s in signals}):
                pattern = SIGNAL_PATTERNS[kind][0]
                with_signal[kind] += 1
                right[kind] += pattern in wanted
            if args.verbose:
                for s in signals:
                    hit = "hit " if SIGNAL_PATTERNS[s.kind][0] in wanted else "miss"
                    print(f"  {s.kind:24} {hit} {labelled['title'][:40]} | {s.path}:{s.line}")
    print(f"{linked} linked PRs with gold")
    heading = ("signal", "pattern", "PRs", "right", "prec", "base", "recall")
    print("{:24} {:30} {:>4} {:>5} {:>5} {:>5} {:>6}".format(*heading))
    for kind, (pattern, weight) in SIGNAL_PATTERNS.items():
        n, hit = with_signal[kind], right[kind]
        print(
            f"{kind:24} {pattern:30} {n:4} {hit:5} {hit / max(n, 1):5.2f} "
            f"{base[pattern] / max(linked, 1):5.2f} {hit / max(base[pattern], 1):6.2f}"
            f"   (weight used {weight})"
        )


if __name__ == "__main__":
    main()
