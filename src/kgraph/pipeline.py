"""The whole build as one function: read → extract → link → export.

`run` is what `kgraph build` calls; it is importable and testable without click, and it
returns everything the CLI reports instead of printing.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kgraph.atomic import folder_locked, named_for
from kgraph.cache import ExtractionCache
from kgraph.corpus import DigestReader, read_corpus
from kgraph.export import EXPORTERS, Exporter, ExportInput, export_all, reuse
from kgraph.graph import KnowledgeGraph, node_id
from kgraph.history import History, open_history
from kgraph.interrupt import checkpoint
from kgraph.link import ExtractedEntry, LinkOptions, digest_id, link
from kgraph.model import Digest, Problem, Severity
from kgraph.progress import Progress
from kgraph.recognize import settle_bare_names
from kgraph.source import LoadedSource, SourceIndex, SourceSpec, load_source
from kgraph.vocab import DEFAULT_BASE


@dataclass(frozen=True, slots=True)
class BuildOptions:
    base: str = DEFAULT_BASE
    input_format: str | None = None
    link: LinkOptions = field(default_factory=LinkOptions)
    exporters: Sequence[Exporter] = EXPORTERS
    export_options: Mapping[str, object] = field(default_factory=dict)  # e.g. html_max_nodes
    sources: Sequence[SourceSpec] = ()  # checkouts to resolve mentions against
    history: bool = True  # read a git source's history: link PRs to their commits
    jobs: int = 1  # processes that read and extract digests, and write the outputs
    cache: bool = True  # reuse and keep per-digest extraction results in OUT/.kgraph/


@dataclass(slots=True)
class BuildResult:
    graph: KnowledgeGraph
    digests: list[Digest]
    entries_read: int
    entries_skipped: int
    problems: list[Problem]
    outputs: list[Path]
    seconds: float
    sources: list[LoadedSource] = field(default_factory=list)
    cached_digests: int = 0  # read back from an earlier build's extraction cache
    removed_digests: int = 0  # inputs of the last build into the same folder, gone now
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage
    copied: float = 0.0  # share of the output bytes copied from the last build's files
    histories: list[History] = field(default_factory=list)  # of the git sources

    @property
    def entries_in_graph(self) -> int:
        return self.graph.counts().get("Entry", 0)

    @property
    def clean(self) -> bool:
        return not self.problems

    @property
    def trusted(self) -> bool:
        """False when an entry was skipped, or an input could not be read or an output written."""
        return self.entries_skipped == 0 and not any(
            p.severity is Severity.ERROR for p in self.problems
        )

    def summary(self) -> str:
        c = self.graph.counts()
        edges = self.graph.edge_count()
        return (
            f"{len(self.digests)} digests, {self.entries_read} entries, "
            f"{c.get('PullRequest', 0)} PRs, {c.get('SourceFile', 0)} files, "
            f"{c.get('CodeSymbol', 0)} symbols, {c.get('Issue', 0)} issues, {edges} edges"
            f" in {self.seconds:.2f}s ({self.entries_read / max(self.seconds, 1e-9):,.0f} entries/s"
            + "".join(f"; {stage} {seconds:.1f}s" for stage, seconds in self.stages.items())
            + (
                f"; {len(self.digests) - self.cached_digests} digests extracted, "
                f"{self.cached_digests} unchanged, {self.removed_digests} removed"
                if self.cached_digests or self.removed_digests
                else ""
            )
            + (f"; {_share(self.copied)} of the output copied" if self.copied else "")
            + ")"
            + "".join(f"; {s.summary()}" for s in self.sources)
            + (f"; mentions {_resolution_counts(self.graph)}" if self.sources else "")
            + "".join(f"; {h.summary()}" for h in self.histories)
            + (f"; {commit_counts(self.graph, self.histories)}" if self.histories else "")
        )


def _share(fraction: float) -> str:
    """A percentage that reads 100% only when it is: 99.96% of the output copied is not all."""
    return f"{fraction:.0%}" if fraction == 1 or fraction < 0.99 else f"{min(fraction, 0.999):.1%}"


def _resolution_counts(graph: KnowledgeGraph) -> str:
    """How the files and symbols the reviews name fared against the sources."""
    named = {
        e.target
        for edges in graph.edge_groups()
        for e in edges
        if e.relation in ("touchesFile", "mentionsSymbol")
    }
    counts = {"resolved": 0, "ambiguous": 0, "missing": 0}
    for node in named:
        status = graph.nodes[node].get("resolution")
        if isinstance(status, str):
            counts[status] += 1
    return ", ".join(f"{n} {status}" for status, n in counts.items())


def commit_counts(graph: KnowledgeGraph, histories: Sequence[History]) -> str:
    """How the PRs of the repositories with a history were linked to their commits, and
    how many PRs no digest or checkout gave a repository (those are matched to none)."""
    repos = {node_id("repo", *h.repo.split("/")) for h in histories}
    out = graph.out_edges()
    counts = {"number": 0, "content": 0, "candidates": 0, "none": 0, "nowhere": 0}
    for node in graph.nodes.values():
        if node.kind != "PullRequest":
            continue
        relations = {e.relation: e.target for e in out.get(node.id, ())}
        if relations.get("inRepository") not in repos:
            counts["nowhere"] += "inRepository" not in relations
        elif "mergedAs" in relations:
            counts["number" if node.get("mergeBasis") == "number" else "content"] += 1
        else:
            counts["candidates" if "candidateCommit" in relations else "none"] += 1
    linked = counts["number"] + counts["content"]
    unlinked = counts["candidates"] + counts["none"]
    return (
        f"commits: {linked} PRs linked ({counts['number']} by number, {counts['content']} by "
        f"content), {unlinked} unlinked ({counts['candidates']} with candidate commits)"
        + (f", {counts['nowhere']} of no known repository" if counts["nowhere"] else "")
    )


def build_graph(
    inputs: Sequence[str],
    options: BuildOptions,
    sources: Sequence[SourceIndex] = (),
    cache: ExtractionCache | None = None,
    progress: Progress | None = None,
    stages: dict[str, float] | None = None,
    histories: Sequence[History] = (),
) -> tuple[KnowledgeGraph, list[Digest], int, int, list[Problem], tuple[int, int]]:
    """The linked graph, the digests, entries read and skipped, the problems, and how many
    digests were read back from the cache and how many of the last build's are gone;
    `stages` gets the seconds spent reading and linking (and matching commits, with
    `histories`)."""
    progress = progress or Progress()
    stages = {} if stages is None else stages
    started = time.perf_counter()
    reader = DigestReader(options.input_format, options.link.knowledge, cache)
    corpus = read_corpus(inputs, reader, options.jobs, progress)
    problems = corpus.problems
    digests: list[Digest] = []
    seen: set[str] = set()
    items: list[ExtractedEntry] = []
    read = skipped = cached = 0
    for value in corpus.extracted:
        result = value.result
        problems.extend(result.problems)
        skipped += sum(p.skipped_entries for p in result.problems)
        read += len(result.entries) + sum(p.skipped_entries for p in result.problems)
        if result.digest is None:
            continue
        if digest_id(result.digest) in seen:
            problems.append(
                Problem(
                    result.digest.source,
                    1,
                    "the same digest was given twice; "
                    f"its {len(result.entries)} entries are read once",
                    Severity.ERROR,  # as every skipped entry is, though the first copy's are in
                    len(result.entries),  # counted as skipped, so the report adds up
                )
            )
            skipped += len(result.entries)
            continue
        seen.add(digest_id(result.digest))
        digests.append(result.digest)
        cached += value.cached
        problems.extend(value.problems)
        items.extend(
            ExtractedEntry(entry, result.digest, mentions)
            for entry, mentions in zip(result.entries, value.mentions, strict=True)
        )
    checkpoint()
    progress.stage("linking")
    read_at = time.perf_counter()
    by_repo = {h.repo: h for h in histories}
    graph = link(settle_bare_names(items, sources), digests, options.link, sources, by_repo)
    stages["read"], stages["link"] = read_at - started, time.perf_counter() - read_at
    for history in histories:
        history.save()
        problems.extend(history.problems)
    return graph, digests, read, skipped, problems, (cached, corpus.removed)


def run(
    inputs: Sequence[str],
    out_dir: Path,
    options: BuildOptions | None = None,
    progress: Progress | None = None,
    waiting: Callable[[], object] = lambda: None,
) -> BuildResult:
    """Build and write the graph; source indexes and per-digest extractions are cached in
    `out_dir/.kgraph/`. A build into a folder another build is writing waits for it,
    after calling `waiting`.

    Raises `kgraph.source.SourceError` when a `--source` cannot be read.
    """
    options = options or BuildOptions()
    progress = progress or Progress()
    with folder_locked(out_dir, waiting), _without_cycle_collection():
        return _run(inputs, out_dir, options, progress)


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """Python's cycle collector re-scans every live container each time enough new ones
    were made; a build makes millions of tuples that form no cycles, so the scans cost more
    the larger the graph (link took 16x the time for 10x the entries). What the build made
    is then frozen, out of the collector's sight: otherwise its first pass after the build
    would scan them all (6 s at 100k entries). They are freed as usual once unreferenced."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _run(
    inputs: Sequence[str], out_dir: Path, options: BuildOptions, progress: Progress
) -> BuildResult:
    started = time.perf_counter()
    loaded = [load_source(spec, out_dir) for spec in options.sources]
    histories = [
        open_history(s.spec.repo, s.spec.path, s.git_dir, s.index.commit, out_dir)
        for s in loaded
        if options.history and s.git_dir is not None and s.index.commit
    ]
    cache = ExtractionCache(out_dir) if options.cache else None
    stages: dict[str, float] = {}
    graph, digests, read, skipped, problems, (cached, removed) = build_graph(
        inputs, options, [s.index for s in loaded], cache, progress, stages, histories
    )
    built = time.perf_counter()
    checkpoint()
    try:
        export = ExportInput(
            graph,
            options.base,
            dict(options.export_options),
            previous=reuse.load(out_dir, options.base) if options.cache else None,
            keep_index=options.cache,
            record=options.cache,
            layouts=out_dir / reuse.FOLDER / reuse.LAYOUTS if options.cache else None,
        )
        exported = export_all(export, out_dir, options.exporters, progress, options.jobs)
        outputs, copied = exported.paths, exported.copied
        problems.extend(
            Problem(
                str(out_dir / name),
                0,
                "left from an earlier build, whose graph was another: this build wrote only "
                "the files --only named; rebuild this one too, or remove it",
            )
            for name in exported.stale
        )
    except OSError as err:  # a full disk, a read-only folder, -o naming a file's child
        where = named_for(err.filename) if isinstance(err.filename, str) else str(out_dir)
        problems.append(
            Problem(where, 0, f"cannot write the outputs: {err.strerror or err}", Severity.ERROR)
        )
        outputs, copied = [], 0.0
    finally:
        progress.clear()
    finished = time.perf_counter()
    stages["write"] = finished - built
    return BuildResult(
        graph,
        digests,
        read,
        skipped,
        problems,
        outputs,
        finished - started,
        loaded,
        cached,
        removed,
        stages,
        copied,
        histories,
    )
