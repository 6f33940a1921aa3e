"""Reusing the last build's output files, subject by subject.

A daily build adds a digest to thousands: the linker runs again, but almost every subject
comes out with the same triples as yesterday, and writing them was most of the time left
(11 million triples at 100k entries). So each output file is written as one block of
bytes per subject, in the sorted order every format shares, and `OUT/.kgraph/output/`
keeps, beside the outputs, each subject's id and fingerprint (a hash of its node and its
edges) and where each block starts in each file. The next build into the same folder
copies the block of every subject whose fingerprint has not changed from the old file
(runs of them at once, in the kernel where it can), and serialises only the others.

A copied block is the bytes a fresh write would give: every format writes a subject
without looking at its neighbours, apart from the separator before it, and a block is
never copied into or out of the first place of its section. The index is keyed by
kgraph's version, the export code and the base IRI, and each old file by its size,
modification time and inode; anything that does not match is ignored, never an error.
`tests/test_reuse.py` compares reused outputs with clean builds, on random graph changes too.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from io import BytesIO
from pathlib import Path
from stat import S_ISREG
from typing import BinaryIO

import kgraph
from kgraph.atomic import write_all_atomic, write_atomic
from kgraph.graph import Edge, GraphView, encode_subject

FOLDER = Path(".kgraph") / "output"
INDEX = "index.json"
FINGERPRINTS = "fingerprints.bin"
SUBJECTS = "subjects.txt"
LAYOUTS = "layouts.json"  # the HTML page's (`kgraph.export.layout.Remembered`)
SIZE = 16  # bytes of a fingerprint

# The code the bytes of a subject's block depend on, besides the graph.
EXPORT_CODE = (
    "export/rdf.py",
    "export/json_graph.py",
    "export/reuse.py",
    "export/jsonenc.py",
    "graph.py",
    "iri.py",
    "vocab.py",
)


@cache
def index_key(base: str) -> str:
    root = Path(kgraph.__file__).parent
    python = "{}.{}".format(*sys.version_info[:2])  # marshal's format 2 is fixed; to be safe
    digest = hashlib.sha256(f"{kgraph.__version__}\0{python}\0{sys.byteorder}\0{base}\0".encode())
    for name in EXPORT_CODE:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    return digest.hexdigest()


def fingerprints(
    graph: GraphView, ids: Sequence[str], out_edges: Mapping[str, Sequence[Edge]]
) -> bytes:
    """One hash per subject of everything its blocks are made of (`encode_subject`), in
    the order of `ids`. Marshal took 0.7 s where JSON took 1.0 s for the 135k subjects of
    10k entries."""
    nodes = graph.nodes
    blake2b = hashlib.blake2b
    hashes = bytearray()  # not a million bytes objects: they would take 50 MB more
    for node_id in ids:
        data = encode_subject(node_id, nodes.get(node_id), out_edges.get(node_id))
        hashes += blake2b(data, digest_size=SIZE).digest()
    return bytes(hashes)


@dataclass(frozen=True)
class OldFile:
    """One output of the last build, kept open, with where each subject's block was."""

    fd: int
    offsets: Mapping[str, array]  # per section: N+1 positions for the last build's N subjects


@dataclass
class Previous:
    """The last build's index: its subjects with their fingerprints, and its files."""

    fingerprints: bytes  # SIZE bytes a subject, in the last build's order
    read_subjects: Callable[[], bytes]  # their ids, a line each, read when matching
    files: dict[str, OldFile]

    def file(self, filename: str) -> OldFile | None:
        return self.files.get(filename)

    def close(self) -> None:
        """Close the old files, once the new ones are written."""
        for old in self.files.values():
            os.close(old.fd)
        self.files = {}

    def matches(self, ids: Sequence[str], fingerprints: bytes) -> array:
        """For each new subject, the index of the old one with the same id and fingerprint,
        or -1. Both lists are sorted, so they are walked side by side: no table of a
        million fingerprints is held beside the graph."""
        found = array("q", [-1]) * len(ids)
        try:
            subjects = self.read_subjects()
        except (OSError, ValueError):
            return found  # damaged since the index was loaded: nothing is copied
        old_fingerprints, size = self.fingerprints, SIZE
        new, count = 0, len(ids)
        for old, line in enumerate(BytesIO(subjects)):
            old_id = line[:-1].decode("utf-8", "surrogatepass")
            while new < count and ids[new] < old_id:
                new += 1
            if new == count:
                break
            if ids[new] == old_id:
                at, here = old * size, new * size
                if old_fingerprints[at : at + size] == fingerprints[here : here + size]:
                    found[new] = old
                new += 1
        return found


def run_ends(matches: Sequence[int]) -> array:
    """For each subject, the end of the run of subjects from it on whose old ones followed
    each other too: what one copy can take."""
    ends = array("q", bytes(8 * len(matches)))
    end = len(matches)
    for index in range(len(matches) - 1, -1, -1):
        if index + 1 < len(matches) and matches[index + 1] != matches[index] + 1:
            end = index + 1
        ends[index] = end
    return ends


def load(out_dir: Path, base: str) -> Previous | None:
    """The last build's index, or None when there is none that these outputs can trust."""
    folder = out_dir / FOLDER
    try:
        index = json.loads((folder / INDEX).read_text("utf-8"))
        if not isinstance(index, dict) or index.get("key") != index_key(base):
            return None
        blob = _checked(folder, index["sha256"])
        raw = blob(FINGERPRINTS)
        count = len(raw) // SIZE
        if len(raw) != count * SIZE or count != index["subjects"]:
            return None
        files = {}
        for filename, meta in index["files"].items():
            try:
                old = _old_file(out_dir, blob, filename, meta, count)
            except (OSError, ValueError, KeyError, TypeError, IndexError):
                continue  # this file is written afresh; the others may still be copied from
            if old is not None:
                files[filename] = old
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    return Previous(raw, lambda: blob(SUBJECTS), files) if files else None


def _checked(folder: Path, hashes: dict[str, str]) -> Callable[[str], bytes]:
    """A reader of the index's files that fails unless a file has the hash noted for it:
    a damaged or half-copied `.kgraph` folder is not read as positions."""

    def read(name: str) -> bytes:
        if Path(name).name != name or name not in hashes:
            raise ValueError(f"not in the index: {name}")
        data = (folder / name).read_bytes()
        if hashlib.sha256(data).hexdigest() != hashes[name]:
            raise ValueError(f"changed since it was written: {name}")
        return data

    return read


def _old_file(
    out_dir: Path, blob: Callable[[str], bytes], filename: str, meta: dict, count: int
) -> OldFile | None:
    if Path(filename).name != filename:
        return None
    offsets = {}
    for section in meta["sections"]:
        positions = array("Q")
        positions.frombytes(blob(f"{filename}.{section}.offsets"))
        if len(positions) != count + 1 or positions[-1] > meta["stat"][0]:
            return None
        offsets[section] = positions
    path = out_dir / filename
    if not S_ISREG(os.stat(path).st_mode):
        return None  # a FIFO or device put there would block or never end
    # Kept open for the build: the new file replaces this one by name, not this inode.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    stat = os.fstat(fd)
    if [stat.st_size, stat.st_mtime_ns, stat.st_ino] != meta["stat"] or not S_ISREG(stat.st_mode):
        os.close(fd)
        return None  # rewritten or edited since: its blocks are not where the index says
    return OldFile(fd, offsets)


def _read_range(fd: int, start: int, end: int) -> bytes:
    data = os.pread(fd, end - start, start)
    if len(data) != end - start:
        raise OSError(f"a file kgraph is reading was cut short (at {start + len(data)})")
    return data


def copy_range(source: int, start: int, end: int, out: BinaryIO) -> None:
    """Copy bytes from one file to the end of another, in the kernel where it can."""
    out.flush()
    target = out.fileno()
    try:
        while start < end:
            done = os.copy_file_range(source, target, end - start, start)
            if done <= 0:
                raise OSError("copy_file_range copied nothing")
            start += done
    except (AttributeError, OSError):  # not on this system or between these file systems
        while start < end:
            step = min(end, start + (16 << 20))
            os.write(target, _read_range(source, start, step))
            start = step
    out.seek(0, os.SEEK_END)  # the buffered writer's idea of its position, made true


@dataclass
class Written:
    """What a writer reports of the file it wrote: each section's block positions."""

    offsets: dict[str, array] = field(default_factory=dict)
    size: int = 0  # bytes
    copied: int = 0  # bytes copied from the last build's file


class BlockFile:
    """An output file written as blocks, one per subject and section, that copies a block
    from the old file when the subject's fingerprint is unchanged, and notes where each
    block starts. Text is encoded and written in large chunks, and neighbouring copies are
    joined into one."""

    LIMIT = 1 << 20

    def __init__(
        self,
        out: BinaryIO,
        old: OldFile | None = None,
        matches: Sequence[int] = (),  # `Previous.matches`
        run_ends: Sequence[int] = (),  # `run_ends(matches)`
        separated: bool = False,
    ) -> None:
        self.out = out
        self.separated = separated  # a block starts with a separator its place decides
        self.matches = matches
        self.run_ends = run_ends
        self.old = old
        self.position = 0
        self.parts: list[bytes] = []
        self.size = 0
        self.pending: tuple[int, int] | None = None  # an old range still to copy
        self.written = Written()
        self._section: array | None = None
        self._old_section: array | None = None

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        if self.pending is not None:
            self._copy_pending()
        self.parts.append(data)
        self.size += len(data)
        self.position += len(data)
        if self.size >= self.LIMIT:
            self.flush()

    def section(self, name: str) -> None:
        """Start a section: a run of blocks, one per subject, in the shared order."""
        self._section = self.written.offsets[name] = array("Q")
        self._old_section = self.old.offsets.get(name) if self.old is not None else None

    @property
    def at_start(self) -> bool:
        """Nothing was written in this section yet: the next block is its first."""
        section = self._section
        return section is not None and (not section or self.position == section[0])

    def _copyable(self, index: int) -> tuple[int, int] | None:
        """Where subject `index`'s unchanged block is in the old file, if it can be copied."""
        old = self._old_section
        if old is None or (self.separated and self.at_start):
            return None  # nothing to copy from, or the section's first block
        at = self.matches[index]
        if at < 0:
            return None
        start, end = old[at], old[at + 1]
        if start == end or (self.separated and start == old[0]):
            return None  # no block there, or one with a first block's separator
        return start, end

    def fresh(self, count: int) -> Iterator[int]:
        """The subjects of this section, of `count`, whose blocks the writer must write, in
        order; a block is started at each, and the blocks between them are copied.

        A run of unchanged subjects that followed each other in the old file too (most
        of them, on a daily rebuild) is copied as one range, with no step per subject."""
        index = 0
        while index < count:
            after = self._copy_run(index)
            if after > index:
                index = after
                continue
            self._start(index)
            yield index
            index += 1

    def _start(self, index: int) -> None:
        """Start the block of subject `index`, which the writer writes."""
        assert self._section is not None and len(self._section) == index
        self._section.append(self.position)

    def _copy_run(self, index: int) -> int:
        """Copy subject `index`'s block, and those after it that followed it in the old
        file too; returns the subject after them (`index` when nothing could be copied)."""
        found = self._copyable(index)
        if found is None:
            return index
        start, at = found[0], self.matches[index]
        after = self.run_ends[index]
        old, section = self._old_section, self._section
        assert old is not None and section is not None
        end = old[at + after - index]
        shift = self.position - start
        section.extend([position + shift for position in old[at : at + after - index]])
        if self.pending is not None and self.pending[1] == start:
            self.pending = (self.pending[0], end)
        else:
            if self.pending is not None:
                self._copy_pending()
            self.pending = (start, end)
        self.position += end - start
        self.written.copied += end - start
        return after

    def end_section(self) -> None:
        assert self._section is not None
        self._section.append(self.position)
        self._section = self._old_section = None

    def _copy_pending(self) -> None:
        assert self.pending is not None and self.old is not None
        start, end = self.pending
        self.pending = None
        self.flush()
        copy_range(self.old.fd, start, end, self.out)

    def flush(self) -> None:
        if self.parts:
            self.out.write(b"".join(self.parts))
            self.parts.clear()
            self.size = 0

    def close(self) -> Written:
        if self.pending is not None:
            self._copy_pending()
        self.flush()
        self.written.size = self.position
        return self.written


def save(
    out_dir: Path,
    base: str,
    ids: Sequence[str],
    fingerprints: bytes,
    written: Iterable[tuple[str, Written]],
) -> None:
    """Index the outputs just put in place. The old index goes first, so a build stopped
    half-way through saving leaves none rather than one that points into other files."""
    folder = out_dir / FOLDER
    (folder / INDEX).unlink(missing_ok=True)
    if any("\n" in node_id for node_id in ids):
        return  # no id has one (they are IRI paths), but the index would misread it
    files: dict[str, object] = {}
    blobs: dict[str, Callable[[], Iterator[bytes | memoryview]]] = {
        FINGERPRINTS: _one(fingerprints),
        SUBJECTS: lambda: _lines(ids),
    }
    for filename, result in written:
        stat = os.stat(out_dir / filename)
        files[filename] = {
            "stat": [stat.st_size, stat.st_mtime_ns, stat.st_ino],
            "sections": sorted(result.offsets),
        }
        for section, positions in result.offsets.items():
            # Its bytes in place: a copy of every file's offsets at once took 50 MB at 100k
            # entries, when the build is at its largest.
            blobs[f"{filename}.{section}.offsets"] = _one(memoryview(positions).cast("B"))
    for stale in folder.glob("*.offsets") if folder.is_dir() else ():
        if stale.name not in blobs:
            stale.unlink()
    hashes: dict[str, str] = {}
    # Not flushed to disk: what a crash damages fails its hash, and the outputs are written
    # afresh rather than copied.
    write_all_atomic(
        [(folder / name, _hashed(chunks, name, hashes)) for name, chunks in blobs.items()],
        durable=False,
    )
    index = {
        "key": index_key(base),
        "subjects": len(ids),
        "files": files,
        "sha256": dict(sorted(hashes.items())),
    }
    write_atomic(folder / INDEX, json.dumps(index, sort_keys=True).encode(), durable=False)


def _one(data: bytes | memoryview) -> Callable[[], Iterator[bytes | memoryview]]:
    return lambda: iter([data])


def _lines(ids: Sequence[str], step: int = 1 << 16) -> Iterator[bytes]:
    """The ids a line each, encoded a slice at a time rather than as one large string."""
    for start in range(0, len(ids), step):
        text = "".join([f"{node_id}\n" for node_id in ids[start : start + step]])
        yield text.encode("utf-8", "surrogatepass")


def _hashed(
    chunks: Callable[[], Iterator[bytes | memoryview]], name: str, hashes: dict[str, str]
) -> Callable[[BinaryIO], object]:
    def write(out: BinaryIO) -> None:
        digest = hashlib.sha256()
        for chunk in chunks():
            digest.update(chunk)
            out.write(chunk)
        hashes[name] = digest.hexdigest()

    return write


def discard(out_dir: Path) -> None:
    (out_dir / FOLDER / INDEX).unlink(missing_ok=True)
