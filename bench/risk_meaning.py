"""Does a risk mean anything? How often a PR's untouched coupled partner changes soon after.

    python bench/risk_meaning.py GIT_DIR REV [--months 6] [--days 30] [--min-degree 50]

For every change of the last MONTHS months before REV (a PR: the first-parent log makes a
squash or a merge one change), its risks are the files coupled at MIN_DEGREE % or more to
a file it changed, which it did not change. The coupling is counted on the history before
those months only (code-maat's defaults, renames followed), so no risk knows the future.
A risk is *borne out* when another change touches the partner within DAYS days after.

The baseline asks the same of files that were not risks: for each risk, every file with
about as long a history (revisions before the months, in the same bin of width ×1.5) that
the PR did not change, and how many of those another change touched in the same DAYS days.
Both rates count only files that exist at REV.

Reviews are left out: this measures the history's side of `review-risks` on every change,
not only the reviewed ones, where the review's own names would remove some partners.
"""

from __future__ import annotations

import argparse
import bisect
import datetime
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from kgraph.history.changesets import read_changesets
from kgraph.history.coupling import CouplingOptions, couple
from kgraph.history.coupling import _named as named_changes  # the same rename following


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("git_dir")
    parser.add_argument("rev")
    parser.add_argument("--months", type=int, default=6)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--min-degree", type=int, default=50)
    parser.add_argument(
        "--graph",
        metavar="OUT",
        help="Measure the review-risks of a build with history instead (its linked PRs of "
        "the months, the review's names left out; the build's coupling is counted up to REV)",
    )
    args = parser.parse_args(argv)
    git_dir = Path(args.git_dir)
    changesets = read_changesets(git_dir, args.rev)  # newest first
    when = [datetime.datetime.fromisoformat(c.date) for c in changesets]
    end = max(when)
    start = end - datetime.timedelta(days=round(args.months * 30.44))
    window = datetime.timedelta(days=args.days)
    alive = set(
        subprocess.run(
            ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "--name-only", args.rev],
            capture_output=True,
            check=True,
        )
        .stdout.decode("utf-8", "surrogateescape")
        .split("\0")
    )

    # Every change named as at REV (renames followed), so that before and after agree.
    names, _ = named_changes(changesets, follow_renames=True)
    before = [cs for cs, t in zip(changesets, when, strict=True) if t < start]
    coupled = couple(before, CouplingOptions()) if before else None
    if coupled is None:
        sys.exit("no history before the months measured")
    # couple() renames onto the newest name of `before`; rename onto REV's names instead.
    later_name = _names_at_rev(changesets, when, start)
    partners: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for p in coupled.pairs:
        if p.degree >= args.min_degree:
            a, b = later_name.get(p.entity, p.entity), later_name.get(p.coupled, p.coupled)
            partners[a].append((b, p.degree))
            partners[b].append((a, p.degree))
    revisions_before: dict[str, int] = defaultdict(int)
    for (_, files), t in zip(names, when, strict=True):
        if t < start and len(files) <= 30:
            for f in files:
                revisions_before[f] += 1

    # The changes of the months in time order, to find what changed in the DAYS after one.
    timeline = sorted(
        (t, position, files)
        for position, ((_, files), t) in enumerate(zip(names, when, strict=True))
        if t >= start
    )
    times = [t for t, _, _ in timeline]

    def bin_of(revisions: int) -> int:
        return int(math.log(max(revisions, 1), 1.5))

    bin_of_file = {f: bin_of(r) for f, r in revisions_before.items() if f in alive}
    bin_size: dict[int, int] = defaultdict(int)
    for b in bin_of_file.values():
        bin_size[b] += 1

    reviewed = _reviewed_risks(Path(args.graph)) if args.graph else None

    prs = risks = borne = 0
    base_rates: list[float] = []
    for t, position, files in timeline:
        if t > end - window or (reviewed is None and len(files) > 30):
            continue
        found: dict[str, int] = {}
        if reviewed is not None:
            if changesets[position].sha not in reviewed:
                continue
            found = {p: d for p, d in reviewed[changesets[position].sha].items() if p in alive}
        else:
            for f in files:
                for partner, degree in partners.get(f, ()):
                    if partner not in files and partner in alive:
                        found[partner] = max(degree, found.get(partner, 0))
        prs += 1
        if not found:
            continue
        after: set[str] = set()
        for _, other, changed in timeline[
            bisect.bisect_left(times, t) : bisect.bisect_right(times, t + window)
        ]:
            if other != position:
                after.update(changed)
        excluded = set(files) | found.keys()
        hits: dict[int, int] = defaultdict(int)
        for f in after - excluded:
            if (b := bin_of_file.get(f)) is not None:
                hits[b] += 1
        left: dict[int, int] = dict(bin_size)
        for f in excluded:
            if (b := bin_of_file.get(f)) is not None:
                left[b] -= 1
        for partner in found:
            risks += 1
            borne += partner in after
            b = bin_of(revisions_before.get(partner, 0))
            if left.get(b, 0) > 0:
                base_rates.append(hits[b] / left[b])
    print(
        f"changes {start:%Y-%m-%d}..{end - window:%Y-%m-%d} (last {args.months} months, "
        f"leaving {args.days} days to look ahead): {prs:,}; coupling counted before "
        f"{start:%Y-%m-%d}: {len(coupled.pairs):,} pairs, "
        f"{sum(1 for p in coupled.pairs if p.degree >= args.min_degree):,} at {args.min_degree} %+"
    )
    if reviewed is not None:
        print(
            f"reviewed PRs linked to a commit of those months: {prs} (of {len(reviewed)} "
            f"linked PRs in {args.graph}); their risks are review-risks'"
        )
    print(f"risks: {risks:,} (untouched partners, {risks / max(prs, 1):.2f} per change)")
    print(
        f"risk borne out (partner changed by another change within {args.days} days): "
        f"{borne:,} of {risks:,} = {borne / max(risks, 1):.1%}"
    )
    print(
        f"baseline (files of the same history size, not changed by the PR, changed by "
        f"another change within {args.days} days): "
        f"{sum(base_rates) / max(len(base_rates), 1):.1%} (mean over {len(base_rates):,} risks' "
        "peer groups)"
    )


RISKS = """PREFIX kg: <https://w3id.org/kgraph/ns#>
SELECT ?sha ?partner ?degree WHERE {
  ?pr a kg:PullRequest ; kg:mergedAs/kg:sha ?sha ; kg:changesFile ?file .
  ?coupling a kg:Coupling ; kg:couplesFile ?file, ?other ; kg:degree ?degree .
  FILTER (?other != ?file && ?degree >= 50)
  FILTER NOT EXISTS { ?pr kg:changesFile ?other }
  FILTER NOT EXISTS { ?pr kg:touchesFile ?other }
  FILTER NOT EXISTS { ?pr kg:mentionsSymbol/kg:definedIn ?other }
  ?other kg:path ?partner .
}"""


def _reviewed_risks(out: Path) -> dict[str, dict[str, int]]:
    """Per linked PR's commit, its risks (partner → degree), as `review-risks` finds them."""
    import pyoxigraph as ox

    store = ox.Store()
    store.bulk_load(path=str(out / "graph.ttl"), format=ox.RdfFormat.TURTLE)
    found: dict[str, dict[str, int]] = defaultdict(dict)
    linked = store.query(
        "PREFIX kg: <https://w3id.org/kgraph/ns#> SELECT DISTINCT ?sha WHERE "
        "{ ?pr kg:mergedAs/kg:sha ?sha }"
    )
    for row in linked:
        found[row["sha"].value]  # every linked PR, with or without a risk
    for row in store.query(RISKS):
        risks = found[row["sha"].value]
        partner, degree = row["partner"].value, int(row["degree"].value)
        risks[partner] = max(degree, risks.get(partner, 0))
    return dict(found)


def _names_at_rev(changesets, when, start) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Each name the history before `start` ends with, mapped to its name at REV."""
    later: dict[str, str] = {}
    for changeset, t in zip(changesets, when, strict=True):
        if t < start:
            continue
        now = [(f, later.get(f.path, f.path)) for f in changeset.files]
        for f, name in now:
            if f.status in ("A", "R", "C"):
                later.pop(f.path, None)
            if f.status == "R" and f.old_path:
                later[f.old_path] = name
    return later


if __name__ == "__main__":
    main(sys.argv[1:])
