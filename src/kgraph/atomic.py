"""Atomic writes: a file is either its old self or wholly new, whatever stops the build.

Every file kgraph writes goes through here: the outputs, the report, the caches.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

from kgraph.interrupt import checkpoint, signals_held

Writer = Callable[[BinaryIO], object]
# Writes several files in one go, a handle each, and returns what it has to say of each:
# the RDF formats are written in one walk over the graph's subjects (`kgraph.export`).
GroupWriter = Callable[[Sequence[BinaryIO]], Sequence[object]]


def write_atomic(path: Path, data: bytes, durable: bool = True) -> None:
    """`durable=False` skips the flush to disk, for files that are only caches: one that a
    crash leaves damaged is read as a miss. A flush costs about 0.3 ms a file here, and a
    100k-entry build caches 6,000 digests."""
    write_all_atomic([(path, lambda out: out.write(data))], durable=durable)


@contextmanager
def folder_locked(folder: Path, waiting: Callable[[], object] = lambda: None) -> Iterator[None]:
    """One build at a time into `folder`: a second waits (after calling `waiting`) until
    the first is done. Two builds that wrote at once could leave the output index of one
    beside the files of the other, and the next build copied blocks from the wrong file.

    The lock is the folder's own (flock on it), so no file is left behind, and the kernel
    drops it when the process ends however it ends. A folder that cannot be made or opened
    is not locked: writing into it fails with its own message.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


_TEMPORARY = re.compile(r"^\.(.+)\.[^./]+\.tmp$")


def named_for(path: str) -> str:
    """The file a temporary file of `write_groups_atomic` stands for (`.graph.ttl.x1.tmp`
    is `graph.ttl`), for messages: a user knows the output, not its temporary name."""
    folder, _, name = path.rpartition("/")
    found = _TEMPORARY.match(name)
    return f"{folder}/{found.group(1)}" if found and folder else path


def write_sealed(path: Path, data: bytes) -> None:
    """A cache file, with a hash of its contents in front: `read_sealed` gives back only
    what was written. A cache that is damaged but still valid JSON (a title set to null, a
    line number made a string, a layout's coordinate edited) would otherwise be trusted and
    give a graph a clean build would not."""
    write_atomic(path, _seal(data) + b"\n" + data, durable=False)


def read_sealed(path: Path) -> bytes | None:
    """The contents `write_sealed` wrote, or None for a file that is absent or changed."""
    try:
        seal, _, data = path.read_bytes().partition(b"\n")
    except OSError:
        return None
    return data if seal == _seal(data) else None


def _seal(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).hexdigest().encode()


# Fills (temporary names, writer)s, and returns what each writer returned.
Filler = Callable[[Sequence[tuple[Sequence[str], GroupWriter]]], list[Sequence[object]]]


def write_all_atomic(files: Sequence[tuple[Path, Writer]], durable: bool = True) -> list[object]:
    """`write_groups_atomic` with a writer for each file."""
    groups = [((path,), _alone(write)) for path, write in files]
    return write_groups_atomic(groups, durable=durable)


def _alone(write: Writer) -> GroupWriter:
    return lambda handles: [write(handles[0])]


def write_groups_atomic(
    groups: Sequence[tuple[Sequence[Path], GroupWriter]],
    fill_all: Filler | None = None,
    durable: bool = True,
) -> list[object]:
    """Stream every file to a temporary name beside it, then rename them all into place.

    Until the renames, an error, Ctrl-C, SIGTERM or SIGKILL leaves every old file as it was
    (the temporary files are removed, except after SIGKILL: hidden `.NAME.*.tmp` files that
    nothing reads). SIGINT and SIGTERM are held while a temporary file is created and noted,
    and during the renames, so they never leave a stray file or a mix of old and new files;
    SIGKILL may leave a mix, but each file is whole. `fill_all` may fill the temporary
    files some other way than one group after the other (in processes, `kgraph.export`).
    Returns what the writers said of each file, in the order of the files.
    """
    temps: list[tuple[str, Path]] = []
    try:
        pending = []
        for paths, write in groups:
            names = []
            for path in paths:
                checkpoint()
                path.parent.mkdir(parents=True, exist_ok=True)
                with signals_held():
                    fd, tmp = tempfile.mkstemp(
                        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
                    )
                    temps.append((tmp, path))
                os.close(fd)
                names.append(tmp)
            pending.append((names, write))
        said = fill_all(pending) if fill_all else fill_each(pending, durable)
        checkpoint()
        with signals_held():
            for tmp, path in temps:
                os.replace(tmp, path)
        return [result for results in said for result in results]
    except BaseException:
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)
        raise


def fill_each(
    groups: Sequence[tuple[Sequence[str], GroupWriter]], durable: bool = True
) -> list[Sequence[object]]:
    results = []
    for names, write in groups:
        checkpoint()
        results.append(fill(names, write, durable))
    return results


def fill(names: Sequence[str], write: GroupWriter, durable: bool = True) -> Sequence[object]:
    """Write and flush to disk (unless not `durable`), with the permissions a plain `open`
    would give. The handles are opened by name, so a writer can tell a later one where its
    file is."""
    umask = os.umask(0)
    os.umask(umask)
    with ExitStack() as stack:
        handles = [stack.enter_context(open(name, "wb")) for name in names]
        for handle in handles:
            os.fchmod(handle.fileno(), 0o666 & ~umask)
        results = write(handles)
        if len(results) != len(handles):
            raise ValueError(f"{len(results)} results for {len(handles)} files")
        for handle in handles:
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
    return results
