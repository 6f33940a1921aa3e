"""The coupling of one git `--source`, as a build reads it: cached by repository and commit.

The changes come from the source's `History` (its log index, itself cached by repository
and commit); with `CouplingOptions.functions`, the coupling of functions too
(`kgraph.history.functions`), which reads diffs and is what makes the cache worth having.
The pairs a set of options keeps, with each file's revisions, are kept in
`OUT/.kgraph/coupling-OWNER-REPO-COMMIT-OPTIONS.json`, so that a build at the same commit
with the same options neither loads the log index nor counts again. A damaged or older
cache file is counted again, never trusted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from kgraph.atomic import write_atomic
from kgraph.history import History
from kgraph.history.cachefile import dumps, read_document
from kgraph.history.changesets import changesets_of
from kgraph.history.coupling import Coupling, CouplingOptions, CouplingResult, couple
from kgraph.history.functions import couple_functions

CACHE_FOLDER = ".kgraph"
COUPLING_VERSION = 2  # (2: function coupling) bump when pairs are counted or stored differently


@dataclass(frozen=True, slots=True)
class LoadedCoupling:
    """A source's coupling and how it was obtained, for the build's summary."""

    repo: str
    commit: str
    result: CouplingResult
    cached: bool  # the pairs came from the cache
    seconds: float
    how: str = ""  # "pairs cached" or "counted"
    functions: CouplingResult | None = None  # with CouplingOptions.functions

    def summary(self) -> str:
        r = self.result
        renames = f"{r.renamed:,} renames followed" if r.options.follow_renames else "no renames"
        functions = ""
        if (f := self.functions) is not None:
            functions = f", {len(f.pairs):,} function pairs over {f.changesets:,} changes"
        return (
            f"coupling: {len(r.pairs):,} pairs over {r.changesets:,} changes "
            f"({r.too_large:,} too large), {renames}{functions}, {self.how} in "
            f"{self.seconds:.1f}s"
        )


def load_coupling(
    history: History, cache_dir: Path | None, options: CouplingOptions
) -> LoadedCoupling:
    started = time.perf_counter()
    repo, commit = history.repo, history.commit
    safe = repo.replace("/", "-")
    folder = cache_dir / CACHE_FOLDER if cache_dir is not None else None
    pairs_path = folder / f"coupling-{safe}-{commit}-{options.key()}.json" if folder else None
    document = read_document(pairs_path)
    if (found := _read_result(document, repo, commit, options)) is not None:
        functions = _read_result(document.get("functions"), repo, commit, options)
        if functions is not None or not options.functions:
            seconds = time.perf_counter() - started
            return LoadedCoupling(repo, commit, found, True, seconds, "pairs cached", functions)
    changesets = changesets_of(history.index)
    result = couple(changesets, options)
    functions = couple_functions(history, result, changesets) if options.functions else None
    if pairs_path is not None:
        stored = _result_json(repo, commit, result)
        if functions is not None:
            stored["functions"] = _result_json(repo, commit, functions)
        write_atomic(pairs_path, dumps(stored), durable=False)
    seconds = time.perf_counter() - started
    return LoadedCoupling(repo, commit, result, False, seconds, "counted", functions)


def _result_json(repo: str, commit: str, result: CouplingResult) -> dict[str, object]:
    return {
        "kgraphCoupling": COUPLING_VERSION,
        "repo": repo,
        "commit": commit,
        "options": result.options.key(),
        "changesets": result.changesets,
        "tooLarge": result.too_large,
        "renamed": result.renamed,
        "revisions": dict(result.revisions),
        "pairs": [
            [
                p.entity,
                p.coupled,
                p.shared_revisions,
                p.entity_revisions,
                p.coupled_revisions,
                p.trend,
            ]
            for p in result.pairs
        ],
    }


def _read_result(
    document: object, repo: str, commit: str, options: CouplingOptions
) -> CouplingResult | None:
    if not isinstance(document, dict):
        return None
    expected = (COUPLING_VERSION, repo, commit, options.key())
    found = tuple(document.get(k) for k in ("kgraphCoupling", "repo", "commit", "options"))
    if found != expected:
        return None
    try:
        pairs = tuple(
            Coupling(a, b, int(s), int(ra), int(rb), t) for a, b, s, ra, rb, t in document["pairs"]
        )
        return CouplingResult(
            pairs,
            {str(k): int(v) for k, v in document["revisions"].items()},
            int(document["changesets"]),
            int(document["tooLarge"]),
            int(document["renamed"]),
            options,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
