"""The coupling of one git `--source`, as a build reads it: cached by repository and commit.

Two files in `OUT/.kgraph/`:

- `changesets-OWNER-REPO-COMMIT.json`: the first-parent log's changed file names up to
  COMMIT, read once per commit (the log is what takes time: two seconds on vLLM);
- `coupling-OWNER-REPO-COMMIT-OPTIONS.json`: the pairs those options keep and each file's
  revisions, so that a build at the same commit with the same options reads neither git
  nor the changesets.

A damaged or older cache file is read again from git, never trusted.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from kgraph.atomic import write_atomic
from kgraph.history.changesets import CHANGESETS_VERSION, Changeset, read_changesets
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
    how: str = ""  # "pairs cached", "log cached" or "log read"

    def summary(self) -> str:
        r = self.result
        renames = f"{r.renamed:,} renames followed" if r.options.follow_renames else "no renames"
        return (
            f"coupling: {len(r.pairs):,} pairs over {r.changesets:,} changes "
            f"({r.too_large:,} too large), {renames}, {self.how} in {self.seconds:.1f}s"
        )


def load_coupling(
    repo: str, git_dir: Path, commit: str, cache_dir: Path | None, options: CouplingOptions
) -> LoadedCoupling:
    started = time.perf_counter()
    safe = repo.replace("/", "-")
    folder = cache_dir / CACHE_FOLDER if cache_dir is not None else None
    pairs_path = folder / f"coupling-{safe}-{commit}-{options.key()}.json" if folder else None
    log_path = folder / f"changesets-{safe}-{commit}.json" if folder else None
    if (found := _read_result(pairs_path, repo, commit, options)) is not None:
        return LoadedCoupling(
            repo, commit, found, True, time.perf_counter() - started, "pairs cached"
        )
    changesets = _read_changesets(log_path, repo, commit)
    how = "log cached"
    if changesets is None:
        changesets = read_changesets(git_dir, commit)
        how = "log read"
        if log_path is not None:
            document = {
                "kgraphChangesets": CHANGESETS_VERSION,
                "repo": repo,
                "commit": commit,
                "changesets": [c.to_json() for c in changesets],
            }
            write_atomic(log_path, _dumps(document), durable=False)
    result = couple(changesets, options)
    if pairs_path is not None:
        write_atomic(pairs_path, _dumps(_result_json(repo, commit, result)), durable=False)
    return LoadedCoupling(repo, commit, result, False, time.perf_counter() - started, how)


def _read_changesets(path: Path | None, repo: str, commit: str) -> list[Changeset] | None:
    document = _read_json(path)
    if (document.get("kgraphChangesets"), document.get("repo"), document.get("commit")) != (
        CHANGESETS_VERSION,
        repo,
        commit,
    ):
        return None
    try:
        return [Changeset.from_json(c) for c in document["changesets"]]
    except (KeyError, TypeError, ValueError):
        return None


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
