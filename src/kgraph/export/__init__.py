"""Exporters: one per output file, one registry, and atomic writes.

Every exporter streams its file into an open binary handle, subject by subject, so a large
graph is never held as text; all of them walk the subjects in one order, and exporters that
share a writer (the RDF formats) are written in one walk. Files are written to temporary
names and renamed together, so a build killed at any moment leaves the previous outputs
intact.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, cast

from kgraph.atomic import Filler, GroupWriter, fill, write_groups_atomic
from kgraph.export import html, json_graph, rdf, reuse
from kgraph.graph import Edge, KnowledgeGraph
from kgraph.interrupt import leave_stops_to_parent, signals_held
from kgraph.progress import Progress


@dataclass
class ExportInput:
    graph: KnowledgeGraph
    base: str
    options: dict[str, object] = field(default_factory=dict)
    previous: reuse.Previous | None = None  # the last build's outputs, to copy blocks from
    keep_index: bool = False  # fingerprint the subjects, to index the outputs for next time

    @cached_property
    def out_edges(self) -> Mapping[str, list[Edge]]:
        """Each source's edges, sorted: the graph's adjacency, built once for every writer."""
        return self.graph.out_edges()

    @cached_property
    def subjects(self) -> rdf.Subjects:
        return rdf.Subjects(self.graph, self.base, self.out_edges)

    @cached_property
    def fingerprints(self) -> bytes:
        if self.previous is None and not self.keep_index:
            return b""
        return reuse.fingerprints(self.graph, self.subjects.ids, self.out_edges)

    @cached_property
    def matches(self) -> tuple[Sequence[int], Sequence[int]]:
        """Each subject's old index (-1 for none), and where its run of copyable subjects
        ends."""
        if self.previous is None:
            return (), ()
        matches = self.previous.matches(self.subjects.ids, self.fingerprints)
        return matches, reuse.run_ends(matches)

    def block_file(
        self, out: BinaryIO, filename: str, separated: bool, part: reuse.Part | None = None
    ) -> reuse.BlockFile:
        old = self.previous.file(filename) if self.previous is not None else None
        matches, run_ends = self.matches if old else ((), ())
        return reuse.BlockFile(out, old, matches, run_ends, separated, part)


def _rdf(x: ExportInput, outs: Mapping[str, reuse.BlockFile]) -> None:
    rdf.write_rdf(x.subjects, outs.get("turtle"), outs.get("ntriples"), outs.get("jsonld"))


def _json(x: ExportInput, outs: Mapping[str, reuse.BlockFile]) -> None:
    json_graph.write_json(x.graph, x.subjects, outs["json"])


def _html(x: ExportInput, outs: Mapping[str, reuse.BlockFile]) -> None:
    outs["html"].write(html.to_html(x.graph, html.options_from(x.options)))


@dataclass(frozen=True, slots=True)
class Exporter:
    name: str
    filename: str
    description: str
    # Writes the files of the exporters it is given, by name. Exporters that share it are
    # written together: the RDF formats in one walk over the subjects.
    write: Callable[[ExportInput, Mapping[str, reuse.BlockFile]], None]
    separated: bool = False  # its blocks start with a separator that depends on their place
    blocks: bool = True  # written a block per subject, which the next build may copy


EXPORTERS: tuple[Exporter, ...] = (
    Exporter("turtle", "graph.ttl", "RDF Turtle", _rdf),
    Exporter("ntriples", "graph.nt", "RDF N-Triples", _rdf),
    Exporter(
        "jsonld",
        "graph.jsonld",
        "JSON-LD with a @context, one subject a line",
        _rdf,
        separated=True,
    ),
    Exporter(
        "json", "graph.json", "node-link JSON for pipelines (networkx)", _json, separated=True
    ),
    Exporter("html", "graph.html", "interactive, offline HTML graph", _html, blocks=False),
)


def exporter_named(name: str) -> Exporter:
    for exporter in EXPORTERS:
        if exporter.name == name:
            return exporter
    raise KeyError(name)


def export_all(
    inputs: ExportInput,
    out_dir: Path,
    exporters: Sequence[Exporter] = EXPORTERS,
    progress: Progress | None = None,
    jobs: int = 1,
) -> Exported:
    """Write every output together: a failure leaves all the old ones.

    With `jobs` > 1 the files are written in that many forked processes, which share the
    graph with this one (`_in_processes`).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    if not any(e.blocks for e in exporters):  # the page alone: no block to copy or index
        inputs.previous, inputs.keep_index = None, False
    if inputs.keep_index:
        reuse.discard(out_dir)  # the outputs are about to change under it
    groups = _grouped(exporters)
    ordered = [e for group in groups for e in group]
    progress = progress or Progress()
    fill_all = None
    if jobs > 1:
        names = ", ".join(e.filename for e in ordered)
        progress.stage(f"writing {names} in {jobs} processes")
        progress = Progress()  # the workers draw nothing
        fill_all = _in_processes(inputs, groups, jobs)
    try:
        written = write_groups_atomic(
            [
                ([out_dir / e.filename for e in group], _bound(group, inputs, progress))
                for group in groups
            ],
            fill_all,
        )
    finally:
        if inputs.previous is not None:
            inputs.previous.close()
    results = [(e.filename, w) for e, w in zip(ordered, written, strict=True)]
    if inputs.keep_index:
        indexed = [(name, w) for name, w in results if isinstance(w, reuse.Written) and w.offsets]
        reuse.save(out_dir, inputs.base, inputs.subjects.ids, inputs.fingerprints, indexed)
    return Exported(
        [out_dir / e.filename for e in exporters],
        {name: w for name, w in results if isinstance(w, reuse.Written)},
    )


def _grouped(exporters: Sequence[Exporter]) -> list[list[Exporter]]:
    """The exporters, those that share a writer together (the RDF formats are written in
    one walk), in the order each group first appears."""
    shared: dict[object, list[Exporter]] = {}
    for exporter in exporters:
        shared.setdefault(exporter.write, []).append(exporter)
    return list(shared.values())


@dataclass(frozen=True, slots=True)
class Exported:
    paths: list[Path]
    files: dict[str, reuse.Written]  # by file name: its size and how much was copied

    @property
    def copied(self) -> float:
        """The share of the bytes written that were copied from the last build's files."""
        size = sum(w.size for w in self.files.values())
        return sum(w.copied for w in self.files.values()) / size if size else 0.0


def _bound(group: Sequence[Exporter], inputs: ExportInput, progress: Progress) -> GroupWriter:
    def write(handles: Sequence[BinaryIO]) -> list[reuse.Written]:
        progress.stage("writing " + ", ".join(e.filename for e in group))
        outs = {
            e.name: inputs.block_file(handle, e.filename, e.separated)
            for e, handle in zip(group, handles, strict=True)
        }
        group[0].write(inputs, outs)
        return [out.close() for out in outs.values()]

    return write


# --- in processes -----------------------------------------------------------------------------
# Each file of blocks is written in parts, a range of subjects each, and the parts are
# joined. Files written whole, one a process, kept a `-j 2` build waiting on its longest
# file (the RDF walk), and a process that writes Turtle, N-Triples and JSON-LD in one walk
# makes each subject's triples once, where a process per file made them once per file.

PARTS_PER_JOB = 4  # more parts than processes, so that they end together


class WholeTask(NamedTuple):
    group: int  # a group of files without blocks (the HTML page): written whole


class PartTask(NamedTuple):
    group: int
    part: int  # index into the parts of the subjects


class FingerprintTask(NamedTuple):
    start: int
    stop: int


Task = WholeTask | PartTask | FingerprintTask


class JoinTask(NamedTuple):
    group: int
    file: int  # index into the group's files
    parts: list[reuse.PartWritten]


@dataclass(frozen=True, slots=True)
class _Shared:
    """What the forked workers inherit. Writers are closures, which cannot be pickled;
    `fork` hands them over as they are."""

    inputs: ExportInput
    groups: Sequence[Sequence[Exporter]]
    files: Sequence[tuple[Sequence[str], GroupWriter]]  # temporary names of the outputs
    parts: Sequence[reuse.Part]
    part_files: Sequence[Sequence[Sequence[str]]]  # by group, part and file


_shared: _Shared | None = None


def _in_processes(inputs: ExportInput, groups: Sequence[Sequence[Exporter]], jobs: int) -> Filler:
    def fill_all(files: Sequence[tuple[Sequence[str], GroupWriter]]) -> list[Sequence[object]]:
        if inputs.previous is not None and "fingerprints" not in vars(inputs):
            # Needed before any block is written: what to copy depends on them.
            vars(inputs)["fingerprints"] = _joined(
                _map(_Shared(inputs, (), (), (), ()), _fingerprint_tasks(inputs, jobs), jobs)
            )
        _ = inputs.matches  # made once here, and shared with the workers by fork
        parts = subject_parts(inputs, jobs * PARTS_PER_JOB)
        blocks = [g for g, group in enumerate(groups) if group[0].blocks]
        with _part_files(files, blocks, len(parts)) as part_files:
            shared = _Shared(inputs, groups, files, parts, part_files)
            tasks: list[Task] = [WholeTask(g) for g in range(len(groups)) if g not in blocks]
            tasks += [PartTask(g, k) for k in range(len(parts)) for g in blocks]
            if inputs.keep_index and "fingerprints" not in vars(inputs):
                tasks += _fingerprint_tasks(inputs, jobs)
            # Named tuples of equal fields are equal: results are told apart by type.
            said: dict[int, list[Sequence[Any]]] = {g: [] for g in range(len(groups))}
            prints = []
            for task, result in zip(tasks, _map(shared, tasks, jobs), strict=True):
                if isinstance(task, FingerprintTask):
                    prints.append(result)
                else:
                    said[task.group].append(_said(result))  # a part after the one before
            joins = [
                JoinTask(g, f, [part[f] for part in said[g]])
                for g in blocks
                for f in range(len(groups[g]))
            ]
            joined = iter(_map(shared, joins, jobs))
        if prints:
            vars(inputs)["fingerprints"] = _joined(prints)
        return [
            [next(joined) for _ in groups[g]] if g in blocks else said[g][0]
            for g in range(len(groups))
        ]

    return fill_all


def subject_parts(inputs: ExportInput, count: int) -> list[reuse.Part]:
    """The subjects cut into up to `count` ranges. A section's first block has no separator
    before it, so the first range holds every section's first block: those of the first
    node and of the first source of an edge (a subject has a block in every section unless
    it has no node, or no edge)."""
    ids, nodes, out_edges = inputs.subjects.ids, inputs.graph.nodes, inputs.out_edges
    first_node = next((i for i, s in enumerate(ids) if s in nodes), 0)
    first_edge = next((i for i, s in enumerate(ids) if out_edges.get(s)), 0)
    after, total = max(first_node, first_edge) + 1, len(ids)
    if total <= after:
        return [reuse.Part(0, total)]
    cuts = sorted({0, total, *(after + (total - after) * i // count for i in range(1, count))})
    return [reuse.Part(a, b) for a, b in pairwise(cuts)]


def _said(result: object) -> Sequence[Any]:
    """What a writer said of each of its files."""
    return cast("Sequence[Any]", result)


def _fingerprint_tasks(inputs: ExportInput, jobs: int) -> list[Task]:
    count = len(inputs.subjects.ids)
    return [FingerprintTask(count * i // jobs, count * (i + 1) // jobs) for i in range(jobs)]


def _joined(parts: Sequence[object]) -> bytes:
    """The subjects' fingerprints from those of their parts, in order."""
    return b"".join(cast("list[bytes]", parts))


@contextmanager
def _part_files(
    files: Sequence[tuple[Sequence[str], GroupWriter]], blocks: Sequence[int], parts: int
) -> Iterator[list[list[list[str]]]]:
    """Temporary files for each part of each file of blocks, beside the file, removed
    once the files are joined, or the build stops."""
    made: list[list[list[str]]] = [[] for _ in files]
    created: list[str] = []
    try:
        for g in blocks:
            for k in range(parts):
                names = []
                for name in files[g][0]:
                    path = Path(name)
                    with signals_held():
                        fd, part = tempfile.mkstemp(
                            dir=path.parent, prefix=f"{path.name}.{k}.", suffix=".tmp"
                        )
                        created.append(part)
                    os.close(fd)
                    names.append(part)
                made[g].append(names)
        yield made
    finally:
        for name in created:
            Path(name).unlink(missing_ok=True)


def _map(shared: _Shared, tasks: Sequence[Task | JoinTask], jobs: int) -> list[object]:
    """Each task's result, in order, from `jobs` forked processes."""
    global _shared
    _shared = shared
    context = multiprocessing.get_context("fork")
    pool = context.Pool(min(jobs, len(tasks)), initializer=leave_stops_to_parent)
    try:
        done = pool.map(_run_task, tasks, chunksize=1)
        pool.close()
        return done
    finally:
        pool.terminate()
        pool.join()
        _shared = None


def _run_task(task: Task | JoinTask) -> object:
    assert _shared is not None
    inputs = _shared.inputs
    if isinstance(task, FingerprintTask):
        ids = inputs.subjects.ids[task.start : task.stop]
        return reuse.fingerprints(inputs.graph, ids, inputs.out_edges)
    if isinstance(task, WholeTask):
        return fill(*_shared.files[task.group])
    if isinstance(task, PartTask):
        return fill(_shared.part_files[task.group][task.part], _part_writer(task), durable=False)
    assert isinstance(task, JoinTask)
    return _join(task)


def _part_writer(task: PartTask) -> GroupWriter:
    assert _shared is not None
    inputs, group, part = _shared.inputs, _shared.groups[task.group], _shared.parts[task.part]

    def write(handles: Sequence[BinaryIO]) -> list[reuse.PartWritten]:
        outs = {
            e.name: inputs.block_file(handle, e.filename, e.separated, part)
            for e, handle in zip(group, handles, strict=True)
        }
        group[0].write(inputs, outs)
        return [out.close_part() for out in outs.values()]

    return write


def _join(task: JoinTask) -> reuse.Written:
    assert _shared is not None
    exporter = _shared.groups[task.group][task.file]
    previous = _shared.inputs.previous
    old = previous.file(exporter.filename) if previous is not None else None
    names = [part[task.file] for part in _shared.part_files[task.group]]
    with ExitStack() as stack:
        fds = [os.open(name, os.O_RDONLY) for name in names]
        for fd in fds:
            stack.callback(os.close, fd)
        parts = list(zip(fds, task.parts, strict=True))
        target = _shared.files[task.group][0][task.file]
        (written,) = fill([target], lambda handles: [reuse.join_parts(handles[0], parts, old)])
    return cast(reuse.Written, written)
