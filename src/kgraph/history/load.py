"""The coupling of one git `--source`, as a build reads it: cached by repository and commit.

The changes come from the source's `History` (its log index, itself cached by repository
and commit). The pairs a set of options keeps, with each file's revisions, are kept in
`OUT/.kgraph/coupling-OWNER-REPO-COMMIT-OPTIONS.json`, so that a build at the same commit
with the same options neither loads the log index nor counts again. A damaged or older
cache file is counted again, never trusted.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from kgraph.atomic import write_atomic
from kgraph.history import History
from kgraph.history.changesets import changesets_of
from kgraph.history.coupling import Coupling, CouplingOptions, CouplingResult, couple

CACHE_FOLDER = ".kgraph"
COUPLING_VERSION = 1  # bump when pairs are counted or stored differently


@dataclass(frozen=True, slots=True)
class LoadedCoupling:
    """A source's coupling and how it was obtained, for the build's summary."""

    repo: str
    commit: str
    result: CouplingResult
    cached: bool  # the pairs came from the cache
    seconds: float
    how: str = ""  # "pairs cached" or "counted"

    def summary(self) -> str:
        r = self.result
        renames = f"{r.renamed:,} renames followed" if r.options.follow_renames else "no renames"
        return (
            f"coupling: {len(r.pairs):,} pairs over {r.changesets:,} changes "
            f"({r.too_large:,} too large), {renames}, {self.how} in {self.seconds:.1f}s"
        )


def load_coupling(
    history: History, cache_dir: Path | None, options: CouplingOptions
) -> LoadedCoupling:
    started = time.perf_counter()
    repo, commit = history.repo, history.commit
    safe = repo.replace("/", "-")
    folder = cache_dir / CACHE_FOLDER if cache_dir is not None else None
    pairs_path = folder / f"coupling-{safe}-{commit}-{options.key()}.json" if folder else None
    if (found := _read_result(pairs_path, repo, commit, options)) is not None:
        seconds = time.perf_counter() - started
        return LoadedCoupling(repo, commit, found, True, seconds, "pairs cached")
    result = couple(changesets_of(history.index), options)
    if pairs_path is not None:
        write_atomic(pairs_path, _dumps(_result_json(repo, commit, result)), durable=False)
    return LoadedCoupling(repo, commit, result, False, time.perf_counter() - started, "counted")


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
    path: Path | None, repo: str, commit: str, options: CouplingOptions
) -> CouplingResult | None:
    document = _read_json(path)
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


def _read_json(path: Path | None) -> dict:
    if path is None or not path.is_file():
        return {}
    try:
        document = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _dumps(document: object) -> bytes:
    """ASCII JSON: a path git gave as undecodable bytes (kept as lone surrogates) survives."""
    return (json.dumps(document, separators=(",", ":")) + "\n").encode("ascii")
