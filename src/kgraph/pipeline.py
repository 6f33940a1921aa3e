"""The whole build as one function: read → extract → link → export.

`run` is what `kgraph build` calls; it is importable and testable without click, and it
returns everything the CLI reports instead of printing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kgraph.export import EXPORTERS, Exporter, ExportInput, export_all
from kgraph.extract import EXTRACTORS, extract
from kgraph.graph import KnowledgeGraph
from kgraph.ingest import read_inputs
from kgraph.interrupt import checkpoint
from kgraph.limits import readable_part
from kgraph.link import ExtractedEntry, LinkOptions, digest_id, link
from kgraph.model import Digest, Problem, Severity
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
        edges = len(self.graph.edges)
        return (
            f"{len(self.digests)} digests, {self.entries_read} entries, "
            f"{c.get('PullRequest', 0)} PRs, {c.get('SourceFile', 0)} files, "
            f"{c.get('CodeSymbol', 0)} symbols, {c.get('Issue', 0)} issues, {edges} edges"
            f" in {self.seconds:.2f}s"
            + "".join(f"; {s.summary()}" for s in self.sources)
            + (f"; mentions {_resolution_counts(self.graph)}" if self.sources else "")
        )


def _resolution_counts(graph: KnowledgeGraph) -> str:
    """How the files and symbols the reviews name fared against the sources."""
    named = {e.target for e in graph.edges if e.relation in ("touchesFile", "mentionsSymbol")}
    counts = {"resolved": 0, "ambiguous": 0, "missing": 0}
    for node in named:
        status = graph.nodes[node].get("resolution")
        if isinstance(status, str):
            counts[status] += 1
    return ", ".join(f"{n} {status}" for status, n in counts.items())


def build_graph(
    inputs: Sequence[str], options: BuildOptions, sources: Sequence[SourceIndex] = ()
) -> tuple[KnowledgeGraph, list[Digest], int, int, list[Problem]]:
    digests: list[Digest] = []
    items: list[ExtractedEntry] = []
    problems: list[Problem] = []
    read = skipped = 0
    for result in read_inputs(inputs, options.input_format):
        problems.extend(result.problems)
        skipped += sum(p.skipped_entries for p in result.problems)
        read += len(result.entries) + sum(p.skipped_entries for p in result.problems)
        if result.digest is None:
            continue
        if any(digest_id(d) == digest_id(result.digest) for d in digests):
            problems.append(
                Problem(
                    result.digest.source,
                    1,
                    "the same digest was given twice; "
                    f"its {len(result.entries)} entries are read once",
                    Severity.WARNING,
                    len(result.entries),  # counted as skipped, so the report adds up
                )
            )
            read += len(result.entries)
            skipped += len(result.entries)
            continue
        digests.append(result.digest)
        for entry in result.entries:
            checkpoint()  # a stop whose exception a library swallowed (kgraph.interrupt)
            readable, cut = readable_part(entry)
            if cut is not None:
                problems.append(cut)
            mentions = extract(readable, EXTRACTORS, options.link.knowledge)
            items.append(ExtractedEntry(entry, result.digest, mentions))
    checkpoint()
    graph = link(items, digests, options.link, sources)
    return graph, digests, read, skipped, problems


def run(inputs: Sequence[str], out_dir: Path, options: BuildOptions | None = None) -> BuildResult:
    """Build and write the graph; source indexes are cached in `out_dir/.kgraph/`.

    Raises `kgraph.source.SourceError` when a `--source` cannot be read.
    """
    options = options or BuildOptions()
    started = time.perf_counter()
    loaded = [load_source(spec, out_dir) for spec in options.sources]
    graph, digests, read, skipped, problems = build_graph(
        inputs, options, [s.index for s in loaded]
    )
    checkpoint()
    try:
        export = ExportInput(graph, options.base, dict(options.export_options))
        outputs = export_all(export, out_dir, options.exporters)
    except OSError as err:  # a full disk, a read-only folder, -o naming a file's child
        where = err.filename if isinstance(err.filename, str) else str(out_dir)
        problems.append(
            Problem(where, 0, f"cannot write the outputs: {err.strerror or err}", Severity.ERROR)
        )
        outputs = []
    return BuildResult(
        graph, digests, read, skipped, problems, outputs, time.perf_counter() - started, loaded
    )
