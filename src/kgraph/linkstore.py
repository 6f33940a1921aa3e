"""The link store: the last build's graph and how it was linked, kept for the next build.

A daily build adds a few digests to thousands. To link only what they change
(`kgraph.delta`), the next build needs the last graph, subject by subject, and what
linking it decided for the whole corpus. `OUT/.kgraph/link/` holds:

- `records.bin`: for each subject, its node and edges (`graph.encode_subject`, the bytes
  its fingerprint hashes) and, for a PR or an entity, what the delta linker keeps of it
  (the facts each PR contributed to an entity, the PRs touching it: `kgraph.delta`).
  A build appends the records of the subjects it changed; a record no subject points to
  any more is garbage, and once it is most of the file the file is written afresh.
- `subjects.txt`, `records.index`, `records.hashes`, `records.fps`: the subjects in sorted
  order, where each one's record is, a hash of each record (a record that does not match
  is never read as a subject) and each subject's fingerprint (`export.reuse`).
- `state.bin`: the corpus-wide part: the digests and their entries, the packages, which
  repositories each code name is seen in, the names merged in each repository.
- `index.json`, written last: a key of everything linking depends on (kgraph's code, the
  options, the catalog, the sources), the subjects' count, and a hash of each file above
  but the records. Anything that does not match is ignored, never an error: the build
  links the whole corpus instead.

Marshal, format 2, as for fingerprints: it keeps types apart, depends on values only, and
reads and writes in C. These files are written by kgraph for kgraph, beside its outputs;
marshal, unlike pickle, runs no code when read.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import weakref
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import kgraph
from kgraph.atomic import write_all_atomic, write_atomic
from kgraph.graph import (
    Edge,
    KnowledgeGraph,
    Node,
    Value,
    decode_subject,
    encode_subject,
    tagged,
    untagged,
)

FOLDER = Path(".kgraph") / "link"
INDEX = "index.json"
STATE = "state.bin"
SUBJECTS = "subjects.txt"
RECORDS = "records.bin"
POSITIONS = "records.index"  # per subject: offset, length of its subject part, of its state
HASHES = "records.hashes"  # per subject: blake2b of its whole record
FINGERPRINTS = "records.fps"  # per subject: blake2b of its subject part (`export.reuse`)
SIZE = 16
FORMAT = 1

# The code linking depends on, besides the extraction's (`cache.EXTRACTION_CODE`).
LINK_CODE = (
    "link.py",
    "delta.py",
    "linkstore.py",
    "design.py",
    "resolve.py",
    "recognize.py",
    "coupled.py",
    "graph.py",
    "history",
)


@cache
def code_fingerprint() -> str:
    root = Path(kgraph.__file__).parent
    digest = hashlib.sha256(f"{kgraph.__version__}\0{FORMAT}\0".encode())
    for name in LINK_CODE:
        files = sorted((root / name).rglob("*.py")) if (root / name).is_dir() else [root / name]
        for path in files:
            relative = path.relative_to(root).as_posix()
            digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class Damaged(Exception):
    """A record or file of the store is not what its index says: link everything again."""


def node_tuple(node: Node | None) -> object:
    """A node as marshal writes it (its texts and dates as tagged tuples)."""
    if node is None:
        return None
    return (node.id, node.kind, node.label, tuple((k, tagged(v)) for k, v in node.attrs))


def node_from(raw: Any) -> Node | None:
    if raw is None:
        return None
    attrs: tuple[tuple[str, Value], ...] = tuple((k, untagged(v)) for k, v in raw[3])
    return Node(raw[0], raw[1], raw[2], attrs)


@dataclass(slots=True)
class Record:
    node: Node | None
    edges: list[Edge]
    state: Any  # what `kgraph.delta` keeps of the subject, or None
    subject: bytes  # `encode_subject` of node and edges
    extra: bytes  # marshal of `state`, b"" for None


def make_record(node_id: str, node: Node | None, edges: Sequence[Edge], state: Any) -> Record:
    subject = encode_subject(node_id, node, edges or None)
    extra = b"" if state is None else marshal.dumps(state, 2)
    return Record(node, list(edges), state, subject, extra)


class Previous:
    """The last build's store, read on demand: a subject's record is read when asked for."""

    def __init__(
        self,
        folder: Path,
        ids: list[str],
        positions: array,
        hashes: bytes,
        fps: bytes,
        state: dict[str, Any],
        fd: int,
        size: int,
    ) -> None:
        self.folder = folder
        self.ids = ids
        self.positions = positions  # 3 a subject: offset, length of each part
        self.hashes = hashes
        self.fps = fps
        self.state = state
        self.fd = fd
        self.size = size  # of records.bin as the index knows it

    def close(self) -> None:
        with suppress(OSError):
            os.close(self.fd)

    def index(self, node_id: str) -> int | None:
        at = bisect_left(self.ids, node_id)
        return at if at < len(self.ids) and self.ids[at] == node_id else None

    def record(self, node_id: str) -> Record | None:
        at = self.index(node_id)
        return None if at is None else self.record_at(at)

    def record_at(self, at: int) -> Record:
        offset, first, second = self.positions[3 * at : 3 * at + 3]
        data = os.pread(self.fd, first + second, offset)
        if (
            len(data) != first + second
            or hashlib.blake2b(data, digest_size=SIZE).digest()
            != self.hashes[at * SIZE : (at + 1) * SIZE]
        ):
            raise Damaged(f"the record of {self.ids[at]} is damaged")
        subject, extra = data[:first], data[first:]
        node_id, node, edges = decode_subject(subject)
        if node_id != self.ids[at]:
            raise Damaged(f"the record of {self.ids[at]} is another subject's")
        state = marshal.loads(extra) if extra else None
        return Record(node, edges or [], state, subject, extra)

    def range_of(self, prefix: str) -> range:
        """The indices of the subjects whose ids start with `prefix`."""
        start = bisect_left(self.ids, prefix)
        end = bisect_left(self.ids, prefix + "\U0010ffff", start)
        return range(start, end)


class LinkStore:
    """`OUT/.kgraph/link/`: see the module's docstring."""

    def __init__(self, out_dir: Path) -> None:
        self.folder = out_dir / FOLDER

    def load(self, key: str) -> Previous | None:
        """The last build's store, or None when there is none these options can trust."""
        folder = self.folder
        try:
            index = json.loads((folder / INDEX).read_text("utf-8"))
            if not isinstance(index, dict) or index.get("key") != key:
                return None
            hashes = index["sha256"]

            def read(name: str) -> bytes:
                data = (folder / name).read_bytes()
                if hashlib.sha256(data).hexdigest() != hashes[name]:
                    raise Damaged(name)
                return data

            count = int(index["subjects"])
            ids = read(SUBJECTS).decode("utf-8", "surrogatepass").split("\n")[:-1]
            positions = array("Q")
            positions.frombytes(read(POSITIONS))
            record_hashes, fps = read(HASHES), read(FINGERPRINTS)
            state = marshal.loads(read(STATE))
            if not (len(ids) == len(positions) // 3 == count) or len(record_hashes) != count * SIZE:
                return None
            if len(fps) != count * SIZE or not isinstance(state, dict):
                return None
            fd = os.open(folder / RECORDS, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except (OSError, ValueError, KeyError, TypeError, EOFError, Damaged):
            return None
        size = int(index.get("size", 0))
        if os.fstat(fd).st_size < size:
            os.close(fd)
            return None  # cut short since: its records are not all there
        return Previous(folder, ids, positions, record_hashes, fps, state, fd, size)

    def discard(self) -> None:
        with suppress(OSError):
            (self.folder / INDEX).unlink(missing_ok=True)

    def write(
        self,
        key: str,
        ids: Sequence[str],
        record: Callable[[str], Record],
        state: Mapping[str, Any],
    ) -> bytes:
        """Write every subject's record afresh, in the order of `ids`; returns their
        fingerprints (`export.reuse`), which the output index needs too."""
        self.discard()
        self.folder.mkdir(parents=True, exist_ok=True)
        positions = array("Q")
        hashes, fps = bytearray(), bytearray()
        blake2b = hashlib.blake2b
        offset = 0
        # A new file, renamed over the old: `record` may be reading the old one.
        temporary = self.folder / f".{RECORDS}.tmp"
        with _removed_on_error(temporary), open(temporary, "wb") as out:
            parts: list[bytes] = []
            pending = 0
            for node_id in ids:
                r = record(node_id)
                positions.extend((offset, len(r.subject), len(r.extra)))
                fps += blake2b(r.subject, digest_size=SIZE).digest()
                hashes += blake2b(r.subject + r.extra, digest_size=SIZE).digest()
                parts += (r.subject, r.extra)
                size = len(r.subject) + len(r.extra)
                offset += size
                pending += size
                if pending >= 1 << 20:
                    out.write(b"".join(parts))
                    parts.clear()
                    pending = 0
            out.write(b"".join(parts))
        os.replace(temporary, self.folder / RECORDS)
        self._index(key, ids, positions, bytes(hashes), bytes(fps), state, offset, offset)
        return bytes(fps)

    def update(
        self,
        key: str,
        previous: Previous,
        splice: Splice,
        records: Mapping[str, Record],
        state: Mapping[str, Any],
    ) -> bytes:
        """Append the records of the subjects `splice` says are new or changed, and index
        every subject; returns the fingerprints. When most of the file would be records no
        subject points to, the caller writes it afresh instead (`worth_rewriting`)."""
        self.discard()
        count = len(splice.ids)
        positions = array("Q", bytes(24 * count))
        hashes, fps = bytearray(SIZE * count), bytearray(SIZE * count)
        old_positions, old_hashes, old_fps = previous.positions, previous.hashes, previous.fps
        for new, old, length in splice.runs:
            positions[3 * new : 3 * (new + length)] = old_positions[3 * old : 3 * (old + length)]
            hashes[SIZE * new : SIZE * (new + length)] = old_hashes[
                SIZE * old : SIZE * (old + length)
            ]
            fps[SIZE * new : SIZE * (new + length)] = old_fps[SIZE * old : SIZE * (old + length)]
        blake2b = hashlib.blake2b
        with open(self.folder / RECORDS, "r+b") as out:
            out.truncate(previous.size)  # what a stopped build appended is not indexed
            out.seek(previous.size)
            offset = previous.size
            parts: list[bytes] = []
            for at in splice.fresh:
                r = records[splice.ids[at]]
                positions[3 * at : 3 * at + 3] = array("Q", (offset, len(r.subject), len(r.extra)))
                fps[SIZE * at : SIZE * (at + 1)] = blake2b(r.subject, digest_size=SIZE).digest()
                whole = blake2b(r.subject + r.extra, digest_size=SIZE).digest()
                hashes[SIZE * at : SIZE * (at + 1)] = whole
                parts += (r.subject, r.extra)
                offset += len(r.subject) + len(r.extra)
            out.write(b"".join(parts))
        live = sum(positions[1::3]) + sum(positions[2::3])
        fingerprints = bytes(fps)
        self._index(key, splice.ids, positions, bytes(hashes), fingerprints, state, offset, live)
        return fingerprints

    def _index(
        self,
        key: str,
        ids: Sequence[str],
        positions: array,
        hashes: bytes,
        fps: bytes,
        state: Mapping[str, Any],
        size: int,
        live: int,
    ) -> None:
        folder = self.folder
        blobs = {
            SUBJECTS: _lines(ids),
            POSITIONS: positions.tobytes(),
            HASHES: hashes,
            FINGERPRINTS: fps,
            STATE: marshal.dumps(dict(state), 2),
        }
        write_all_atomic(
            [(folder / name, _writer(data)) for name, data in blobs.items()], durable=False
        )
        index = {
            "key": key,
            "subjects": len(ids),
            "size": size,
            "live": live,
            "sha256": {name: hashlib.sha256(data).hexdigest() for name, data in blobs.items()},
        }
        write_atomic(folder / INDEX, json.dumps(index, sort_keys=True).encode(), durable=False)


def spliced_fingerprints(
    previous: Previous, splice: Splice, records: Mapping[str, Record]
) -> bytes:
    """The fingerprints of `splice`'s subjects, the old ones' kept (`LinkStore.update`
    gives the same while it writes)."""
    old, fps = previous.fps, bytearray(SIZE * len(splice.ids))
    for new, at, length in splice.runs:
        fps[SIZE * new : SIZE * (new + length)] = old[SIZE * at : SIZE * (at + length)]
    for at in splice.fresh:
        digest = hashlib.blake2b(records[splice.ids[at]].subject, digest_size=SIZE).digest()
        fps[SIZE * at : SIZE * (at + 1)] = digest
    return bytes(fps)


@contextmanager
def _removed_on_error(path: Path) -> Iterator[None]:
    try:
        yield
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def worth_rewriting(previous: Previous, appended: int) -> bool:
    """Would the records file, with `appended` bytes more, be mostly garbage?"""
    live = sum(previous.positions[1::3]) + sum(previous.positions[2::3])
    return previous.size + appended > 2 * live + (64 << 20)


def _writer(data: bytes) -> Callable[[Any], object]:
    return lambda out: out.write(data)


def _lines(ids: Iterable[str]) -> bytes:
    return "".join(f"{node_id}\n" for node_id in ids).encode("utf-8", "surrogatepass")


@dataclass(slots=True)
class Splice:
    """The new subjects from the old: `ids` in sorted order; `runs` of (new index, old
    index, length) of subjects kept as they were; `fresh`, the new indices of new or
    changed subjects."""

    ids: list[str]
    runs: list[tuple[int, int, int]] = field(default_factory=list)
    fresh: list[int] = field(default_factory=list)

    def matches(self) -> tuple[array, array]:
        """For each new subject, its old index (-1 for none), and the end of the run of
        subjects from it whose old ones followed each other too (`export.reuse.run_ends`),
        made a run at a time rather than a subject at a time. The runs are maximal: a
        removed or a fresh subject is between any two of them."""
        count = len(self.ids)
        found = array("q", [-1]) * count
        ends = array("q", range(1, count + 1))
        for new, old, length in self.runs:
            found[new : new + length] = array("q", range(old, old + length))
            ends[new : new + length] = array("q", [new + length]) * length
        return found, ends


def splice(
    old_ids: Sequence[str], gone: set[str], changed: set[str], added: Iterable[str]
) -> Splice:
    """The `Splice` of the old subjects once `gone` are removed, `changed` marked fresh and
    `added` (ids not among the old) inserted."""
    inserts: dict[int, list[str]] = {}
    for node_id in sorted(set(added)):
        inserts.setdefault(bisect_left(old_ids, node_id), []).append(node_id)
    marked: dict[int, bool] = {}  # old index -> gone (else changed)
    for node_id in gone | changed:
        at = bisect_left(old_ids, node_id)
        if at < len(old_ids) and old_ids[at] == node_id:
            marked[at] = node_id in gone
    result = Splice([])
    ids = result.ids
    cursor = 0
    for at in sorted(inserts.keys() | marked.keys()):
        if at > cursor:
            result.runs.append((len(ids), cursor, at - cursor))
            ids.extend(old_ids[cursor:at])
            cursor = at
        for node_id in inserts.get(at, ()):  # they sort before old_ids[at]
            result.fresh.append(len(ids))
            ids.append(node_id)
        if at in marked:
            if not marked[at]:
                result.fresh.append(len(ids))
                ids.append(old_ids[at])
            cursor = at + 1
    if cursor < len(old_ids):
        result.runs.append((len(ids), cursor, len(old_ids) - cursor))
        ids.extend(old_ids[cursor:])
    return result


class StoredGraph:
    """This build's graph as the last build's store and the subjects this build made
    again: what the exporters read, a subject at a time, without loading the graph.
    `whole()` loads it all (for the page, which lays out the whole graph)."""

    def __init__(
        self,
        previous: Previous,
        ids: Sequence[str],
        records: Mapping[str, Record],
        counts: Mapping[str, int],
        edges: int,
    ) -> None:
        self.previous = previous
        self.ids = ids
        self.records = records
        self._counts = dict(counts)
        self._edges = edges
        # The views share a reader and not this graph: no reference cycle, so the graph,
        # and with its reader the store's file (`Previous.close`), go when the last user
        # lets go (a build freezes what it made away from the cycle collector).
        reader = _Reader(previous, records, ids)
        weakref.finalize(reader, previous.close)
        self.record = reader.record
        self.nodes: Mapping[str, Node] = _Nodes(reader)
        self._out: Mapping[str, list[Edge]] = _OutEdges(reader)
        self._whole: KnowledgeGraph | None = None

    def out_edges(self) -> Mapping[str, list[Edge]]:
        return self._out

    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    def edge_count(self) -> int:
        return self._edges

    def edge_groups(self) -> Iterable[Sequence[Edge]]:
        return self.whole().edge_groups()

    def whole(self) -> KnowledgeGraph:
        if self._whole is None:
            graph = KnowledgeGraph()
            for node_id in self.ids:
                record = self.record(node_id)
                assert record is not None
                if record.node is not None:
                    graph.nodes[node_id] = record.node
                for edge in record.edges:
                    graph.link(*edge)
            self._whole = graph
        return self._whole


class _Reader:
    """A stored graph's records: this build's own, else the last build's store's."""

    def __init__(self, previous: Previous, records: Mapping[str, Record], ids: Sequence[str]):
        self.previous = previous
        self.records = records
        self.ids = ids

    def record(self, node_id: str) -> Record | None:
        found = self.records.get(node_id)
        if found is None:
            found = self.previous.record(node_id)
        return found


class _Nodes(Mapping[str, Node]):
    def __init__(self, graph: _Reader) -> None:
        self.graph = graph

    def __getitem__(self, node_id: str) -> Node:
        record = self.graph.record(node_id)
        if record is None or record.node is None:
            raise KeyError(node_id)
        return record.node

    def __iter__(self) -> Iterator[str]:
        return iter(self.graph.ids)

    def __len__(self) -> int:
        return len(self.graph.ids)


class _OutEdges(Mapping[str, list[Edge]]):
    def __init__(self, graph: _Reader) -> None:
        self.graph = graph

    def __getitem__(self, node_id: str) -> list[Edge]:
        record = self.graph.record(node_id)
        if record is None or not record.edges:
            raise KeyError(node_id)
        return record.edges

    def __iter__(self) -> Iterator[str]:
        return iter(self.graph.ids)

    def __len__(self) -> int:
        return len(self.graph.ids)
