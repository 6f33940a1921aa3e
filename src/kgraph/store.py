"""The build's graph as a query-ready pyoxigraph store, kept on disk beside the exports.

Parsing a large graph costs far more than querying it, so the first query of a build loads
`graph.nt` (else `graph.ttl`, else `graph.jsonld`) into an on-disk store in
`OUTPUT_DIR/.kgraph-store/`, and later queries open that store read-only. A stamp in the
store records the source file's name, size, modification time and SHA-256: a changed size
or time makes us hash the file, and only a changed hash (or another pyoxigraph version)
rebuilds the store. A rebuild loads into a temporary folder that is renamed into place, so
a concurrent query sees the old store or the new one, never half of one. An output folder
we cannot write to is loaded into memory instead, every time.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import pyoxigraph as ox

from kgraph import outputs
from kgraph.atomic import write_atomic
from kgraph.errors import KgraphError, UsageError

STORE_DIR = ".kgraph-store"
STAMP = "kgraph-stamp.json"
SOURCES: tuple[tuple[str, ox.RdfFormat], ...] = (
    ("graph.nt", ox.RdfFormat.N_TRIPLES),
    ("graph.ttl", ox.RdfFormat.TURTLE),
    ("graph.jsonld", ox.RdfFormat.JSON_LD),
)


class GraphNotFound(UsageError):
    """The folder holds no RDF export to query."""


class GraphUnreadable(KgraphError):
    """The RDF export does not parse: `FILE:LINE: message`."""


@dataclass(frozen=True, slots=True)
class Stamp:
    source: str
    size: int
    mtime_ns: int
    sha256: str
    engine: str  # the pyoxigraph version that wrote the store


@dataclass(frozen=True, slots=True)
class OpenedGraph:
    store: ox.Store
    source: Path
    how: str  # "cached" (store reused), "built" (store (re)built) or "memory" (not cached)


def graph_source(out_dir: Path) -> tuple[Path, ox.RdfFormat]:
    """The RDF export of a build folder that loads fastest, of the folder's last build."""
    if not out_dir.is_dir():
        raise GraphNotFound(f"{out_dir}: no such folder (run `kgraph build … -o {out_dir}`)")
    found = [(out_dir / name, f) for name, f in SOURCES if (out_dir / name).is_file()]
    for path, rdf_format in found:
        if not outputs.stale(out_dir, path.name):
            return path, rdf_format
    if found:
        raise GraphNotFound(f"{found[0][0]}: {outputs.STALE}")
    names = ", ".join(name for name, _ in SOURCES)
    raise GraphNotFound(f"{out_dir}: no graph to query ({names}); run `kgraph build` first")


def open_graph(out_dir: Path, cache: bool = True) -> OpenedGraph:
    source, rdf_format = graph_source(out_dir)
    if not cache:
        return OpenedGraph(_in_memory(source, rdf_format), source, "memory")
    store_dir = out_dir / STORE_DIR
    stat = source.stat()
    recorded = _read_stamp(store_dir)
    if recorded and recorded.engine == ox.__version__ and recorded.source == source.name:
        unchanged = (recorded.size, recorded.mtime_ns) == (stat.st_size, stat.st_mtime_ns)
        if unchanged and (store := _open_read_only(store_dir)):
            return OpenedGraph(store, source, "cached")
        digest = _sha256(source)
        if digest == recorded.sha256 and (store := _open_read_only(store_dir)):
            # Same bytes, new time (a rebuild that changed nothing): keep the store.
            _write_stamp(store_dir, _stamp(source, stat, digest))
            return OpenedGraph(store, source, "cached")
    try:
        _rebuild(store_dir, source, rdf_format)
    except OSError:  # a folder we may not write to, a full disk: answer all the same
        return OpenedGraph(_in_memory(source, rdf_format), source, "memory")
    store = _open_read_only(store_dir)
    if store is None:  # another process replaced it between our rename and our open
        return OpenedGraph(_in_memory(source, rdf_format), source, "memory")
    return OpenedGraph(store, source, "built")


def _in_memory(source: Path, rdf_format: ox.RdfFormat) -> ox.Store:
    store = ox.Store()
    _load(store, source, rdf_format)
    return store


def in_memory(data: bytes, rdf_format: ox.RdfFormat, source: str) -> ox.Store:
    """A store of a graph held as bytes (`kgraph.build` without a folder)."""
    store = ox.Store()
    try:
        store.bulk_load(input=data, format=rdf_format)
    except (SyntaxError, MemoryError) as error:
        raise unreadable(Path(source), error) from None
    return store


def _load(store: ox.Store, source: Path, rdf_format: ox.RdfFormat) -> None:
    try:
        store.bulk_load(path=str(source), format=rdf_format)
    except (SyntaxError, MemoryError) as error:
        raise unreadable(source, error) from None


def unreadable(source: Path, error: SyntaxError | MemoryError) -> GraphUnreadable:
    """What a parser's refusal means. pyoxigraph raises MemoryError for one token (a
    literal, an IRI) longer than its 16 MiB buffer: a graph an older kgraph wrote from an
    entry that the size limit now keeps out (`kgraph.limits`); rebuilding fixes it."""
    if isinstance(error, MemoryError):
        return GraphUnreadable(
            f"{source}:0: not loadable: a term is longer than pyoxigraph's 16 MiB limit "
            f"({error}); rebuild it with this kgraph, which skips entries that long"
        )
    return GraphUnreadable(f"{source}:{error.lineno or 0}: not valid RDF: {error.msg}")


def _open_read_only(store_dir: Path) -> ox.Store | None:
    try:
        return ox.Store.read_only(str(store_dir))
    except (OSError, RuntimeError):  # missing, or corrupt ("Corruption: …" from RocksDB)
        return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp(source: Path, stat: os.stat_result, digest: str) -> Stamp:
    """The stamp of a store loaded from `source` as `stat` found it, taken before the
    file was hashed and loaded: a build that replaces the file meanwhile leaves a stamp
    that the new file does not match, so the next query loads it (a stat taken after the
    load stamped the new file's size and time on the old graph, which was then kept)."""
    return Stamp(source.name, stat.st_size, stat.st_mtime_ns, digest, ox.__version__)


def _read_stamp(store_dir: Path) -> Stamp | None:
    try:
        return Stamp(**json.loads((store_dir / STAMP).read_text("utf-8")))
    except (OSError, ValueError, TypeError, RecursionError):
        return None


def _write_stamp(store_dir: Path, stamp: Stamp) -> None:
    """Atomically: a concurrent query reads the old stamp or the new one. Not flushed to
    disk: a stamp that a crash damaged reads as none, and the store is loaded again."""
    data = json.dumps(asdict(stamp), indent=1, sort_keys=True) + "\n"
    write_atomic(store_dir / STAMP, data.encode("utf-8"), durable=False)


def _rebuild(store_dir: Path, source: Path, rdf_format: ox.RdfFormat) -> None:
    parent = store_dir.parent
    building = Path(tempfile.mkdtemp(dir=parent, prefix=f"{STORE_DIR}.new-"))
    try:
        stat = source.stat()
        digest = _sha256(source)
        store = ox.Store(str(building))
        _load(store, source, rdf_format)
        store.flush()
        del store
        gc.collect()  # pyoxigraph closes the database when the object is freed
        _write_stamp(building, _stamp(source, stat, digest))
        old = Path(tempfile.mkdtemp(dir=parent, prefix=f"{STORE_DIR}.old-"))
        try:
            if store_dir.exists():
                os.replace(store_dir, old / "store")
            os.replace(building, store_dir)
        except OSError:
            pass  # another query put its fresh store in place first: use that one
        finally:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(building, ignore_errors=True)
