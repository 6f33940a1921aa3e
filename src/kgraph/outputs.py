"""Which files of an output folder describe its last build.

`--only json` rewrites graph.json and leaves the other files as an earlier build wrote
them: their graph may be another one. `OUT/.kgraph/outputs.json` names the last build's
graph (a hash of every subject's fingerprint, `kgraph.export.reuse`) and, for each output
file, the graph it was written from; the build warns of a file it left that describes
another graph, and the commands that read a folder (`query`, `push`, `eval`, `diff`,
`html`) take only files of its last graph. A build with `--no-cache` keeps no record and
removes the last one: what is in the folder is then the user's to know.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

from kgraph.atomic import write_atomic

RECORD = Path(".kgraph") / "outputs.json"
STALE = (
    "left from an earlier build of this folder, whose graph was another (its last build "
    "wrote other files, with --only); build this file again"
)


def record(out_dir: Path, graph: str, written: Iterable[str], kept: Iterable[str]) -> list[str]:
    """Note that `written` describe `graph`, and `kept` (files this build left) what they
    described before; returns those of `kept` that describe another graph, or no known one."""
    before = _read(out_dir)
    files = {name: before[1].get(name, "") for name in kept} if before else dict.fromkeys(kept, "")
    stale = sorted(name for name, described in files.items() if described != graph)
    files.update(dict.fromkeys(written, graph))
    _write(out_dir, graph, files)
    return stale


def redrawn(out_dir: Path, name: str, source: str) -> None:
    """`name` was made again from `source` (`kgraph html` draws the page from graph.json):
    it describes the graph `source` does now."""
    found = _read(out_dir)
    if found is None or source not in found[1]:
        return
    graph, files = found
    files[name] = files[source]
    _write(out_dir, graph, files)


def forget(out_dir: Path) -> None:
    """No record: nothing is taken for stale. Best effort, as a cache is."""
    with suppress(OSError):
        (out_dir / RECORD).unlink(missing_ok=True)


def stale(out_dir: Path, name: str) -> bool:
    """Does `name` describe a graph other than the folder's last build's, as far as known?"""
    found = _read(out_dir)
    return found is not None and found[1].get(name) != found[0]


def _write(out_dir: Path, graph: str, files: dict[str, str]) -> None:
    document = {"graph": graph, "files": dict(sorted(files.items()))}
    try:
        write_atomic(out_dir / RECORD, (json.dumps(document, indent=1) + "\n").encode())
    except OSError:  # a read-only .kgraph: the outputs are written all the same
        forget(out_dir)


def _read(out_dir: Path) -> tuple[str, dict[str, str]] | None:
    try:
        document = json.loads((out_dir / RECORD).read_bytes())
        files = {str(k): str(v) for k, v in document["files"].items()}
        return str(document["graph"]), files
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
