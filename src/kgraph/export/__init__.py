"""Exporters: one per output file, one registry, and atomic writes.

Every exporter streams its file into an open binary handle, subject by subject, so a large
graph is never held as text; all of them walk the subjects in one order, and exporters that
share a writer (the RDF formats) are written in one walk. Files are written to temporary
names and renamed together, so a build killed at any moment leaves the previous outputs
intact.
"""

from __future__ import annotations

import hashlib
import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from io import BytesIO
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, BinaryIO, cast

from kgraph import outputs
from kgraph.atomic import Filler, GroupWriter, fill, write_groups_atomic
from kgraph.export import html, json_graph, layout, rdf, reuse
from kgraph.graph import Edge, GraphView
from kgraph.interrupt import leave_stops_to_parent, signals_held
from kgraph.progress import Progress


@dataclass
class ExportInput:
    graph: GraphView  # a `KnowledgeGraph`, or read from the link store (`linkstore`)
    base: str
    options: dict[str, object] = field(default_factory=dict)
    previous: reuse.Previous | None = None  # the last build's outputs, to copy blocks from
    keep_index: bool = False  # fingerprint the subjects, to index the outputs for next time
    record: bool = False  # note which graph each output describes (`kgraph.outputs`)
    layouts: Path | None = None  # where the page's layouts are kept for the next build

    @cached_property
    def out_edges(self) -> Mapping[str, Sequence[Edge]]:
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

    def block_file(self, out: BinaryIO, filename: str, separated: bool) -> reuse.BlockFile:
        old = self.previous.file(filename) if self.previous is not None else None
        matches, run_ends = self.matches if old else ((), ())
        return reuse.BlockFile(out, old, matches, run_ends, separated)


def _rdf(x: ExportInput, outs: Mapping[str, reuse.BlockFile]) -> None:
    rdf.write_rdf(x.subjects, outs.get("turtle"), outs.get("ntriples"), outs.get("jsonld"))


def _json(x: ExportInput, outs: Mapping[str, reuse.BlockFile]) -> None:
    json_graph.write_json(x.graph, x.subjects, outs["json"])


def _html(x: ExportInput, outs: Mapping[str, reuse.BlockFile]) -> None:
    remembered = layout.Remembered.load(x.layouts)
    graph = x.graph.whole()  # the page lays out the whole graph
    outs["html"].write(html.to_html(graph, html.options_from(x.options), remembered.layout))
    remembered.save()


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


def to_bytes(graph: GraphView, base: str, name: str) -> bytes:
    """One output, as the file `export_all` would write, in memory (`kgraph.build` without
    a folder gives its graph to pyoxigraph, rdflib and networkx this way)."""
    exporter = exporter_named(name)
    buffer = BytesIO()
    out = reuse.BlockFile(buffer, separated=exporter.separated)
    exporter.write(ExportInput(graph, base), {name: out})
    out.close()
    return buffer.getvalue()


def export_all(
    inputs: ExportInput,
    out_dir: Path,
    exporters: Sequence[Exporter] = EXPORTERS,
    progress: Progress | None = None,
    jobs: int = 1,
) -> Exported:
    """Write every output together: a failure leaves all the old ones.

    With `jobs` > 1 the files are written in that many forked processes, which share the
    graph with this one; the subjects are fingerprinted in as many parts, beside them.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    if not any(e.blocks for e in exporters):  # the page alone: no block to copy or index
        inputs.previous, inputs.keep_index = None, False
    if inputs.keep_index:
        reuse.discard(out_dir)  # the outputs are about to change under it
    groups = _grouped(exporters, jobs)
    ordered = [e for group in groups for e in group]
    progress = progress or Progress()
    fill_all = None
    if jobs > 1 and len(groups) > 1:
        names = ", ".join(e.filename for e in ordered)
        progress.stage(f"writing {names} in {min(jobs, len(groups))} processes")
        progress = Progress()  # the workers draw nothing
        if inputs.previous is not None and "fingerprints" not in vars(inputs):
            # Needed before any block is written: what to copy depends on them.
            parts = _in_pool(inputs, (), _parts(len(inputs.subjects.ids), jobs), jobs)
            vars(inputs)["fingerprints"] = _joined(parts)  # as the cached property would
        _ = inputs.matches  # made once here, and shared with the workers by fork
        fill_all = _in_processes(inputs, jobs)
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
        _record(inputs, out_dir, exporters),
    )


def _record(inputs: ExportInput, out_dir: Path, exporters: Sequence[Exporter]) -> list[str]:
    """The output files this build left that describe another graph (`kgraph.outputs`)."""
    kept = [e.filename for e in EXPORTERS if e not in exporters and (out_dir / e.filename).exists()]
    if not inputs.record:
        outputs.forget(out_dir)
        return []
    # The page alone indexes nothing, so its subjects are fingerprinted here.
    fingerprints = inputs.fingerprints or reuse.fingerprints(
        inputs.graph, inputs.subjects.ids, inputs.out_edges
    )
    graph = hashlib.blake2b(inputs.base.encode("utf-8", "surrogatepass"), digest_size=16)
    ids, step = inputs.subjects.ids, 1 << 16
    for start in range(0, len(ids), step):
        graph.update("\n".join(ids[start : start + step]).encode("utf-8", "surrogatepass") + b"\n")
    graph.update(fingerprints)
    return outputs.record(out_dir, graph.hexdigest(), [e.filename for e in exporters], kept)


def _grouped(exporters: Sequence[Exporter], jobs: int) -> list[list[Exporter]]:
    """The exporters, those that share a writer together, in the order each group first
    appears. With more than one job, a group is cut in as many parts as there are jobs
    (at most): in one walk, the RDF formats were the one long task of a `-j 2` build and
    the other process sat idle for the last third of it. In two walks (Turtle, then
    N-Triples and JSON-LD) the processes end together: 100k entries were exported in
    50 s, against 61 s in one walk and 55 s in a walk per file. Cutting the subjects
    instead, every file written in parts that are then joined, made each subject's
    triples once but took longer at 100k (46–56 s against 41–47 s): joining copied the
    4.8 GB of files once more, on the same two CPUs."""
    shared: dict[object, list[Exporter]] = {}
    for exporter in exporters:
        shared.setdefault(exporter.write, []).append(exporter)
    groups = []
    for group in shared.values():
        parts = min(jobs, len(group))
        groups += [
            group[len(group) * i // parts : len(group) * (i + 1) // parts] for i in range(parts)
        ]
    return groups


@dataclass(frozen=True, slots=True)
class Exported:
    paths: list[Path]
    files: dict[str, reuse.Written]  # by file name: its size and how much was copied
    stale: list[str] = field(default_factory=list)  # files left that describe another graph

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


# What the forked workers inherit: (inputs, temporary files, the next task to claim). A
# module global, as writers are closures, which cannot be pickled; `fork` hands them over
# as they are.
_pending: tuple[ExportInput, Sequence[tuple[Sequence[str], GroupWriter]], Any] | None = None

# A task of the pool: the index of a group of files to write, or a slice of the subjects
# to fingerprint.
Task = int | slice


def _in_processes(inputs: ExportInput, jobs: int) -> Filler:
    def fill_all(groups: Sequence[tuple[Sequence[str], GroupWriter]]) -> list[Sequence[object]]:
        tasks: list[Task] = list(range(len(groups)))
        if inputs.keep_index and "fingerprints" not in vars(inputs):
            # In parts after the files, so that they even out the workers' loads.
            tasks += _parts(len(inputs.subjects.ids), jobs)
        done = _in_pool(inputs, groups, tasks, jobs)
        if parts := [d for t, d in zip(tasks, done, strict=True) if isinstance(t, slice)]:
            vars(inputs)["fingerprints"] = _joined(parts)
        return [
            cast("Sequence[object]", d)
            for t, d in zip(tasks, done, strict=True)
            if isinstance(t, int)
        ]

    return fill_all


def _parts(count: int, parts: int) -> list[slice]:
    return [slice(count * i // parts, count * (i + 1) // parts) for i in range(parts)]


def _joined(parts: Sequence[object]) -> bytes:
    """The subjects' fingerprints from those of their parts, in order."""
    return b"".join(cast("list[bytes]", parts))


def _in_pool(
    inputs: ExportInput,
    groups: Sequence[tuple[Sequence[str], GroupWriter]],
    tasks: Sequence[Task],
    jobs: int,
) -> list[object]:
    """Each task's result, in order, from `jobs` processes: this one and `jobs - 1` forked
    workers, each claiming the next task left until none is.

    This process works rather than waits: a forked worker copies every page of the graph
    it reads (reading an object writes its reference count), so each worker costs about
    the graph's memory again, and the one this saves was a third of a `-j 2` build's.
    Each worker sends its results down a pipe of its own, so a worker that dies (the
    kernel's out-of-memory killer picks large processes) is an error at once: with
    `multiprocessing.Pool` its task was lost and the build waited forever.
    """
    global _pending
    context = multiprocessing.get_context("fork")
    _pending = (inputs, groups, context.Value("q", 0))
    workers: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []
    try:
        with signals_held():  # a stop comes after each worker forked is noted, to be killed
            for _ in range(min(jobs, len(tasks)) - 1):
                receive, send = context.Pipe(duplex=False)
                started = context.Process(target=_work, args=(tasks, send), daemon=True)
                started.start()
                send.close()  # the worker's end, in the worker alone: its death closes it
                workers.append((started, receive))
        done = dict(_claim_tasks(tasks))
        for worker, receive in workers:
            try:
                finished, said = receive.recv()
            except EOFError:
                worker.join()
                raise OSError(
                    f"a writer process died (exit code {worker.exitcode}), perhaps killed "
                    "for want of memory; try fewer --jobs"
                ) from None
            if not finished:
                raise said
            done.update(said)
        return [done[index] for index in range(len(tasks))]
    finally:
        for worker, receive in workers:
            if worker.is_alive():  # after an error or a stop: its files are not wanted
                worker.kill()
            worker.join()
            receive.close()
        _pending = None


def _work(tasks: Sequence[Task], send: Connection) -> None:
    """A forked worker: claim tasks until none is left, then send what they gave, or the
    error that stopped them."""
    leave_stops_to_parent()
    try:
        said: object = (True, _claim_tasks(tasks))
    except Exception as error:
        said = (False, error)
    send.send(said)
    send.close()


def _claim_tasks(tasks: Sequence[Task]) -> list[tuple[int, object]]:
    """Run the tasks nobody has claimed yet, one at a time, until none is left; a failure
    leaves none to the others, and is raised."""
    assert _pending is not None
    inputs, groups, claimed = _pending
    done: list[tuple[int, object]] = []
    while True:
        with claimed.get_lock():
            index = claimed.value
            claimed.value = index + 1
        if index >= len(tasks):
            return done
        try:
            done.append((index, _run_task(inputs, groups, tasks[index])))
        except BaseException:
            with claimed.get_lock():
                claimed.value = len(tasks)
            raise


def _run_task(
    inputs: ExportInput, groups: Sequence[tuple[Sequence[str], GroupWriter]], task: Task
) -> object:
    if isinstance(task, slice):
        ids = inputs.subjects.ids[task]
        return reuse.fingerprints(inputs.graph, ids, inputs.out_edges)
    return fill(*groups[task])
