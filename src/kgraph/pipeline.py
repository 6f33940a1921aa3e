"""The whole build as one function: read → extract → link → export.

`run` is what `kgraph build` calls; it is importable and testable without click, and it
returns everything the CLI reports instead of printing.
"""

from __future__ import annotations

import gc
import hashlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from kgraph import delta, linkstore
from kgraph.atomic import folder_locked, named_for
from kgraph.cache import ExtractedDigest, ExtractionCache
from kgraph.cache import code_fingerprint as cache_code_fingerprint
from kgraph.corpus import Corpus, DigestReader, read_corpus
from kgraph.coupled import add_coupling, add_function_coupling
from kgraph.delta import DigestInput, DigestState, Relinked
from kgraph.export import EXPORTERS, Exporter, ExportInput, export_all, reuse
from kgraph.export.rdf import Subjects
from kgraph.graph import GraphView, KnowledgeGraph
from kgraph.graph import node_id as make_node_id
from kgraph.history import History, open_history
from kgraph.history.coupling import CouplingOptions
from kgraph.history.load import LoadedCoupling, load_coupling
from kgraph.history.log import HistoryError
from kgraph.ingest import LINK, OUTPUT, Passed, display_name
from kgraph.interrupt import checkpoint
from kgraph.link import ExtractedEntry, Linked, LinkOptions, link_corpus
from kgraph.linkstore import LinkStore, Previous, Record, StoredGraph, make_record
from kgraph.model import Digest, Problem, Severity
from kgraph.progress import Progress
from kgraph.recognize import settle_bare_names
from kgraph.resolve import Resolver
from kgraph.source import LoadedSource, SourceError, SourceIndex, SourceSpec, load_source
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
    written: Sequence[Path] = ()  # files besides the outputs the build writes (--report)
    coupling: CouplingOptions | None = field(default_factory=CouplingOptions)  # of git sources


@dataclass(slots=True)
class BuildResult:
    graph: GraphView  # a KnowledgeGraph, or read from the link store after a delta link
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
    passed: list[Passed] = field(default_factory=list)  # what the folder walks did not read
    couplings: list[LoadedCoupling] = field(default_factory=list)  # per git source
    relinked: int | None = None  # PRs linked again, when only what changed was linked
    refused: str | None = None  # why the last build's links could not be kept
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
            + (f"; {self.relinked} PRs linked again" if self.relinked is not None else "")
            + (f"; linked everything: {self.refused}" if self.refused else "")
            + (f"; {_share(self.copied)} of the output copied" if self.copied else "")
            + ")"
            + "".join(f"; {s.summary()}" for s in self.sources)
            + (f"; {not_read(self.passed)}" if self.passed else "")
            + (f"; mentions {_resolution_counts(self.graph.whole())}" if self.sources else "")
            + "".join(f"; {h.summary()}" for h in self.histories)
            + (f"; {commit_counts(self.graph, self.histories)}" if self.histories else "")
            + "".join(f"; {c.repo} {c.summary()}" for c in self.couplings)
        )


def _share(fraction: float) -> str:
    """A percentage that reads 100% only when it is: 99.96% of the output copied is not all."""
    return f"{fraction:.0%}" if fraction == 1 or fraction < 0.99 else f"{min(fraction, 0.999):.1%}"


def not_read(passed: Sequence[Passed], shown: int = 3) -> str:
    """What the folder walks did not read, said once: links, and kgraph's own outputs."""
    parts = []
    for reason, label in ((LINK, "symbolic link(s)"), (OUTPUT, "kgraph output(s)")):
        paths = [p.path for p in passed if p.reason == reason]
        if paths:
            more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
            parts.append(f"{len(paths)} {label} ({', '.join(paths[:shown])}{more})")
    return "not read: " + ", ".join(parts) + "; name one as an input to read it"


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


def commit_counts(graph: GraphView, histories: Sequence[History]) -> str:
    """How the PRs of the repositories with a history were linked to their commits, and
    how many PRs no digest or checkout gave a repository (those are matched to none)."""
    repos = {make_node_id("repo", *h.repo.split("/")) for h in histories}
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
    written: Sequence[Path] = (),
) -> tuple[KnowledgeGraph, list[Digest], int, int, list[Problem], tuple[int, int, list[Passed]]]:
    """The linked graph, the digests, entries read and skipped, the problems, and how many
    digests were read back from the cache, how many of the last build's are gone and what the
    folder walks did not read (links, and `written`: the build's own outputs); `stages`
    gets the seconds spent reading and linking."""
    progress = progress or Progress()
    stages = {} if stages is None else stages
    started = time.perf_counter()
    reader = DigestReader(options.input_format, options.link.knowledge, cache)
    read = _read(inputs, reader, {}, options.jobs, progress, written)
    reader.remembered.clear()
    checkpoint()
    progress.stage("linking")
    read_at = time.perf_counter()
    items = settle_bare_names(_items(read, reader), sources)
    linked = link_corpus(items, read.digests(), options.link, sources)
    stages["read"], stages["link"] = read_at - started, time.perf_counter() - read_at
    removed = read.corpus.finish(cache)
    return (
        linked.graph,
        read.digests(),
        read.read,
        read.skipped,
        read.problems,
        (read.cached, removed, read.corpus.passed),
    )


@dataclass(slots=True)
class _Read:
    """Every input read: the digests in input order (each once), the problems, counts."""

    corpus: Corpus
    inputs: list[DigestInput]
    problems: list[Problem]
    read: int = 0
    skipped: int = 0
    cached: int = 0

    def digests(self) -> list[Digest]:
        return [d.state.digest() for d in self.inputs]

    def release(self) -> None:
        """Let the extractions go, once linked: the graph holds what the outputs need."""
        for given in self.inputs:
            given.extracted = None
        self.corpus.extracted.clear()


def _read(
    inputs: Sequence[str],
    reader: DigestReader,
    known: Mapping[tuple[str, str], DigestState],
    jobs: int,
    progress: Progress,
    written: Sequence[Path] = (),
) -> _Read:
    """Read and extract every input but those the last build's link state knows
    (`known`, by file name and sha256), whose problems it keeps; no folder walk reads
    `written`."""
    corpus = read_corpus(inputs, reader, jobs, progress, written)
    read = _Read(corpus, [], corpus.problems)
    problems = read.problems
    seen: set[str] = set()
    for value, key, path in corpus.extracted:
        given: DigestInput | None
        if value.known:
            state = replace(known[(PurePath(path).name, value.sha256)], source=display_name(path))
            state.entries = list(state.entries)
            given = DigestInput(state, path)
            read_problems = state.problems(state.read_problems)
            entries = len(state.entries)
        else:
            result = value.result
            read_problems = list(result.problems)
            entries = len(result.entries)
            given = None
            if result.digest is not None:
                given = DigestInput(DigestState.of(value, key), path, value)
        problems.extend(read_problems)
        skipped = sum(p.skipped_entries for p in read_problems)
        read.skipped += skipped
        read.read += entries + skipped
        if given is None:
            continue
        if given.state.id in seen:
            problems.append(
                Problem(
                    given.state.source,
                    1,
                    f"the same digest was given twice; its {entries} entries are read once",
                    Severity.ERROR,  # as every skipped entry is, though the first copy's are in
                    entries,  # counted as skipped, so the report adds up
                )
            )
            read.skipped += entries
            continue
        seen.add(given.state.id)
        read.inputs.append(given)
        read.cached += value.cached
        problems.extend(given.state.problems(given.state.extract_problems))
    return read


def _extraction(given: DigestInput, reader: DigestReader) -> ExtractedDigest | None:
    """A digest's extraction: this build's, else the cache's, else read again."""
    if given.extracted is not None:
        return given.extracted
    if reader.cache is not None and (hit := reader.cache.load(given.state.key, given.state.source)):
        return hit
    value, _ = replace(reader, known=frozenset()).read_path(given.path)
    return value if value.sha256 == given.state.sha256 else None


def _items(read: _Read, reader: DigestReader) -> list[ExtractedEntry]:
    items: list[ExtractedEntry] = []
    for given in read.inputs:
        value = _extraction(given, reader)
        if value is None or value.result.digest is None:
            raise OSError(f"{given.state.source} changed while it was read")
        digest = value.result.digest
        items.extend(
            ExtractedEntry(entry, digest, mentions)
            for entry, mentions in zip(value.result.entries, value.mentions, strict=True)
        )
    return items


def link_key(options: BuildOptions, sources: Sequence[LoadedSource]) -> str:
    """Everything a build's linking depends on besides its digests: the link store of a
    build whose key differs is not used (`kgraph.linkstore`)."""
    link = options.link
    digest = hashlib.sha256()
    parts = [
        linkstore.code_fingerprint(),
        cache_code_fingerprint(),
        link.knowledge.fingerprint,
        options.input_format or "",
        str(link.share_limit),
        link.provenance.value,
        json.dumps(sorted(link.packages.items())),
        repr(options.coupling),  # the history's coupling is in the graph too
    ]
    for loaded in sources:
        index = loaded.index
        parts += [
            index.repo,
            index.commit or "",
            hashlib.sha256(index.to_json().encode()).hexdigest(),
        ]
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


def run(
    inputs: Sequence[str],
    out_dir: Path | None,
    options: BuildOptions | None = None,
    progress: Progress | None = None,
    waiting: Callable[[], object] = lambda: None,
) -> BuildResult:
    """Build and write the graph; source indexes and per-digest extractions are cached in
    `out_dir/.kgraph/`. A build into a folder another build is writing waits for it,
    after calling `waiting`. With `out_dir` None the graph is built in memory only:
    nothing is written, cached or read back.

    Raises `kgraph.source.SourceError` when a `--source` cannot be read.
    """
    options = options or BuildOptions()
    progress = progress or Progress()
    if out_dir is None:
        with _without_cycle_collection():
            return _run(inputs, None, options, progress)
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
    inputs: Sequence[str], out_dir: Path | None, options: BuildOptions, progress: Progress
) -> BuildResult:
    started = time.perf_counter()
    loaded = [load_source(spec, out_dir) for spec in options.sources]
    histories = [
        open_history(s.spec.repo, s.spec.path, s.git_dir, s.index.commit, out_dir)
        for s in loaded
        if options.history and s.git_dir is not None and s.index.commit
    ]
    cached_in = out_dir if options.cache else None  # None: in memory, or --no-cache
    cache = ExtractionCache(cached_in) if cached_in is not None else None
    # Commit links are matched over a repository's PRs together (`link.link_corpus`): a
    # build with a history links everything, and keeps no link store.
    store = LinkStore(cached_in) if cached_in is not None and not histories else None
    key = link_key(options, loaded) if store is not None else ""
    previous = store.load(key) if store is not None else None
    known: dict[tuple[str, str], DigestState] = {}
    if previous is not None:
        for row in previous.state["digests"]:
            state = DigestState.from_row(row)
            known[(PurePath(state.source).name, state.sha256)] = state
    reader = DigestReader(options.input_format, options.link.knowledge, cache, frozenset(known))
    written = (*([out_dir] if out_dir is not None else []), *options.written)
    read = _read(inputs, reader, known, options.jobs, progress, written)
    reader.remembered.clear()  # the linker's to free with the items
    stages: dict[str, float] = {"read": time.perf_counter() - started}
    checkpoint()
    linking = time.perf_counter()
    resolvers = {s.index.repo: Resolver(s.index) for s in loaded}
    couplings = _couple(loaded, histories, cached_in, options.coupling)
    relinked = None
    refused = None  # why the last build's link store could not be used
    if previous is not None:
        progress.stage("linking what changed")
        outcome = delta.relink(
            previous, read.inputs, options.link, resolvers, lambda d: _load(d, read, reader)
        )
        if isinstance(outcome, str):
            refused = outcome
        else:
            relinked = outcome
    linked = None
    if relinked is None:
        progress.stage("linking")
        sources = [s.index for s in loaded]
        raw = _items(read, reader)
        bare = delta.bare_names(raw) if store is not None else {}
        items = settle_bare_names(raw, sources)
        del raw
        by_repo = {h.repo: h for h in histories}
        linked = link_corpus(
            items, read.digests(), options.link, sources, store is not None, by_repo
        )
        del items
        for history in histories:
            history.save()
        for source, coupling in couplings:
            _add_coupling(linked, source, coupling)
    read.release()
    removed = read.corpus.finish(cache)
    built = time.perf_counter()
    stages["link"] = built - linking
    checkpoint()
    problems = [problem for source in loaded for problem in source.problems()] + read.problems
    problems += [problem for history in histories for problem in history.problems]
    if out_dir is None:  # in memory (kgraph.build without a folder): nothing to write
        assert linked is not None
        progress.clear()
        seconds = built - started
        return BuildResult(
            linked.graph, read.digests(), read.read, read.skipped, problems, [], seconds,
            loaded, read.cached, 0, stages, passed=read.corpus.passed, histories=histories,
        )  # fmt: skip
    graph: GraphView = KnowledgeGraph()  # until linked or read from the store
    try:
        if relinked is not None:
            assert previous is not None and store is not None
            graph, export = _relinked_export(out_dir, options, previous, store, key, relinked)
        else:
            assert linked is not None
            graph = linked.graph
            export = _linked_export(out_dir, options, linked, read, resolvers, store, key, bare)
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
        if store is not None:
            store.discard()
    finally:
        progress.clear()
        # A graph read from the last build's store reads it on demand after the build (the
        # summary, an API caller): the store closes with that graph, not here.
        if previous is not None and not (relinked is not None and isinstance(graph, StoredGraph)):
            previous.close()
    finished = time.perf_counter()
    stages["write"] = finished - built
    return BuildResult(
        graph,
        read.digests(),
        read.read,
        read.skipped,
        problems,
        outputs,
        finished - started,
        loaded,
        read.cached,
        removed,
        stages,
        copied,
        passed=read.corpus.passed,
        couplings=[coupling for _, coupling in couplings],
        relinked=relinked.relinked_prs if relinked is not None else None,
        refused=refused,
        histories=histories,
    )


def _couple(
    loaded: Sequence[LoadedSource],
    histories: Sequence[History],
    cache_dir: Path | None,
    options: CouplingOptions | None,
) -> list[tuple[LoadedSource, LoadedCoupling]]:
    """The coupling of every source whose history is read (a plain folder has none, and
    `--no-history` reads none): counted over the history's own log index, so that coupling
    reads no log of its own."""
    if options is None:
        return []
    by_repo = {h.repo: h for h in histories}
    found = []
    for source in loaded:
        if (history := by_repo.get(source.spec.repo)) is not None:
            try:
                found.append((source, load_coupling(history, cache_dir, options)))
            except HistoryError as error:
                raise SourceError(f"{source.spec.path}: {error}") from error
    return found


def _add_coupling(linked: Linked, source: LoadedSource, coupling: LoadedCoupling) -> None:
    """The history's coupling, as facts of their own: it depends on the source alone, so
    a build that links only what changed keeps it in the entities it reaches."""
    key = ("coupling", source.index.repo)
    uses = linked.book.using(f"coupling/{source.index.repo}")

    def make(graph: KnowledgeGraph) -> tuple[str | None, tuple[()]]:
        add_coupling(graph, source.index, coupling.result)
        if coupling.functions is not None:
            add_function_coupling(graph, source.index, coupling.functions)
        return None, ()

    linked.book.apply(linked.graph, key, make, uses)


def _load(state: DigestState, read: _Read, reader: DigestReader) -> ExtractedDigest | None:
    """A digest the delta linker needs: one of this build's, or one the last build had."""
    for given in read.inputs:
        if given.state.id == state.id and given.state.source == state.source:
            return _extraction(given, reader)
    if reader.cache is None:
        return None
    return reader.cache.load(state.key, state.source)


def _linked_export(
    out_dir: Path,
    options: BuildOptions,
    linked: Linked,
    read: _Read,
    resolvers: Mapping[str, Resolver],
    store: LinkStore | None,
    key: str,
    bare: Mapping[str, object],
) -> ExportInput:
    graph = linked.graph
    export = ExportInput(
        graph,
        options.base,
        dict(options.export_options),
        previous=reuse.load(out_dir, options.base) if options.cache else None,
        keep_index=options.cache,
        record=options.cache,
        layouts=out_dir / reuse.FOLDER / reuse.LAYOUTS if options.cache else None,
    )
    if store is not None:
        # The store's records are the bytes the fingerprints hash: one pass makes both.
        states = delta.subject_states(linked)
        state = delta.state_of(
            linked, read.inputs, resolvers, graph.counts(), graph.edge_count(), bare
        )
        nodes, out = graph.nodes, export.out_edges

        def record(node_id: str) -> Record:
            return make_record(
                node_id, nodes.get(node_id), out.get(node_id, ()), states.get(node_id)
            )

        try:
            vars(export)["fingerprints"] = store.write(key, export.subjects.ids, record, state)
        except OSError:  # a cache: the next build links everything, as without one
            store.discard()
    return export


def _relinked_export(
    out_dir: Path,
    options: BuildOptions,
    previous: Previous,
    store: LinkStore,
    key: str,
    relinked: Relinked,
) -> tuple[GraphView, ExportInput]:
    """The outputs of a build that linked only what changed: the store's subjects spliced
    with the changed ones, which alone are written; the rest is copied."""
    blake2b = hashlib.blake2b
    changed: dict[str, Record] = {}
    for node_id, record in relinked.records.items():
        at = previous.index(node_id)
        digest = blake2b(record.subject + record.extra, digest_size=linkstore.SIZE).digest()
        if at is None or previous.hashes[at * linkstore.SIZE : (at + 1) * linkstore.SIZE] != digest:
            changed[node_id] = record
    gone = {node_id for node_id in relinked.gone if previous.index(node_id) is not None}
    added = [node_id for node_id in changed if previous.index(node_id) is None]
    splice = linkstore.splice(previous.ids, gone, changed.keys() - set(added), added)
    state = relinked.state
    appended = sum(len(r.subject) + len(r.extra) for r in changed.values())
    try:
        if linkstore.worth_rewriting(previous, appended):
            fingerprints = store.write(
                key,
                splice.ids,
                lambda node_id: changed.get(node_id) or _old(previous, node_id),
                state,
            )
        else:
            fingerprints = store.update(key, previous, splice, changed, state)
    except OSError:  # a cache: the next build links everything, as without one
        store.discard()
        fingerprints = linkstore.spliced_fingerprints(previous, splice, changed)
    graph = StoredGraph(previous, splice.ids, changed, state["counts"], state["edges"])
    last = reuse.load(out_dir, options.base)
    export = ExportInput(
        graph,
        options.base,
        dict(options.export_options),
        previous=last,
        keep_index=True,
        record=True,
        layouts=out_dir / reuse.FOLDER / reuse.LAYOUTS,
    )
    vars(export)["subjects"] = Subjects(
        graph, options.base, graph.out_edges(), splice.ids, state["counts"].keys()
    )
    vars(export)["fingerprints"] = fingerprints
    if last is not None and last.fingerprints == previous.fps:
        # The outputs are those of the store's graph: what to copy follows from the splice,
        # with no walk over a million subjects to match them.
        vars(export)["matches"] = splice.matches()
    return graph, export


def _old(previous: Previous, node_id: str) -> Record:
    record = previous.record(node_id)
    assert record is not None
    return record
