"""kgraph as a library, and the one entrance the `kgraph` command uses too.

    import kgraph

    built = kgraph.build(["digests/"], "out")     # writes out/graph.ttl, .nt, .json, .html…
    built.query(name="hotspots")                   # SPARQL on the embedded pyoxigraph store
    graph = kgraph.open("out").rdflib()            # an rdflib.Graph
    network = kgraph.open("out").networkx()        # a networkx.MultiDiGraph
    kgraph.build(["digests/"]).networkx()          # out=None: built in memory, nothing written

Every command is one function here, taking the command's options as keyword arguments of
the same names (`--share-limit` is `share_limit`, `--no-cache` is `cache=False`):
`build`, `open(...).query`, `ask_endpoint`, `diff`, `evaluate`, `draw` and `push`. The CLI
(`kgraph.cli`) parses options, calls these, and prints; nothing here prints or exits.
Foreseen failures raise `kgraph.errors.KgraphError` (exit 1) or `UsageError` (exit 2),
whose message names the file, option or server.

kgraph writes its RDF itself, far faster than rdflib would; rdflib and networkx are the
bridge to the user's own code, imported only when `.rdflib()` or `.networkx()` is called.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import pyoxigraph as ox

from kgraph import evaluate as evaluation
from kgraph import outputs, remote, results
from kgraph import push as pushing
from kgraph import query as queries
from kgraph.atomic import write_atomic
from kgraph.catalog import DEFAULT_PATTERN_THRESHOLD, load_knowledge
from kgraph.diff import GraphDiff, diff_outputs
from kgraph.errors import EXIT_OK, EXIT_PROBLEMS, UsageError
from kgraph.export import EXPORTERS, exporter_named, to_bytes
from kgraph.export.html import DEFAULT_MAX_NODES, HtmlOptions, render_json_file
from kgraph.history.coupling import CouplingOptions
from kgraph.ingest import FORMATS
from kgraph.interrupt import Interrupted
from kgraph.iri import is_absolute_iri
from kgraph.jsonfile import JsonFileError
from kgraph.link import DEFAULT_SHARE_LIMIT, LinkOptions, Provenance
from kgraph.model import Problem
from kgraph.pipeline import BuildOptions, BuildResult, run
from kgraph.progress import Progress
from kgraph.report import exit_code, render_report, summary_line
from kgraph.results import Answer
from kgraph.source import SourceSpec
from kgraph.store import GraphNotFound, GraphUnreadable, in_memory, open_graph
from kgraph.vocab import DEFAULT_BASE, NAMESPACES

if TYPE_CHECKING:
    import networkx
    import rdflib

__all__ = [
    "DEFAULT_BASE",
    "DEFAULT_CHUNK",
    "DEFAULT_GRAPH",
    "DEFAULT_MAX_NODES",
    "DEFAULT_PROVENANCE",
    "DEFAULT_SHARE_LIMIT",
    "DEFAULT_TIMEOUT",
    "INPUT_FORMATS",
    "OUTPUTS",
    "PROVENANCES",
    "PUSH_PROTOCOLS",
    "RESULT_FORMATS",
    "Build",
    "CouplingOptions",
    "Sparql",
    "ask_endpoint",
    "build",
    "diff",
    "draw",
    "evaluate",
    "list_queries",
    "open",
    "push",
    "render",
    "sparql",
]

# The choices and defaults of the options, for the CLI's --help and for callers.
INPUT_FORMATS: tuple[str, ...] = tuple(f.name for f in FORMATS)
OUTPUTS: tuple[str, ...] = tuple(e.name for e in EXPORTERS)  # what `only` may name
PROVENANCES: tuple[str, ...] = tuple(p.value for p in Provenance)  # which Mentions are kept
DEFAULT_PROVENANCE = Provenance.EVIDENCE.value
RESULT_FORMATS: tuple[str, ...] = results.FORMATS
PUSH_PROTOCOLS: tuple[str, ...] = pushing.PROTOCOLS
DEFAULT_GRAPH = pushing.DEFAULT_GRAPH
DEFAULT_CHUNK = pushing.DEFAULT_CHUNK
DEFAULT_TIMEOUT = 60.0  # seconds per HTTP request

_XSD_STRING = NAMESPACES["xsd"] + "string"
_LANG_STRING = NAMESPACES["rdf"] + "langString"
_IN_MEMORY = "<in memory>"  # the "file" of a graph built without a folder, in messages


@dataclass(frozen=True, slots=True)
class Sparql:
    """A query ready to run: its text with the parameters filled in, and where it came
    from (a named query's `queries/NAME.rq`, a file, or `<query>`), for messages."""

    text: str
    source: str
    columns: tuple[tuple[str, str], ...] = ()  # its `@column` headings: (variable, heading)


class Build:
    """A built graph: in a folder (`open`, or `build` with `out`), or in memory (`build`
    without `out`). Ask it with `.query()`, or take it into rdflib or networkx.

    After `build`, `result` holds what the build went through (its problems and counts,
    `kgraph.pipeline.BuildResult`) and `exit_code` what the CLI exits with; after `open`,
    `result` is None.
    """

    def __init__(
        self,
        out: Path | None,
        result: BuildResult | None = None,
        strict: bool = False,
        report_error: str | None = None,
        base: str = DEFAULT_BASE,
    ) -> None:
        self.out = out
        self.result = result
        self.base = base  # of the node IRIs, for a graph in memory
        self.strict = strict
        self.report_error = report_error  # the --report file could not be written: why
        self.loaded = ""  # how the last query found its store: cached, built or memory
        self._store: ox.Store | None = None  # of a graph in memory, once loaded

    def __repr__(self) -> str:
        where = str(self.out) if self.out is not None else "in memory"
        return f"<kgraph.Build {where}>"

    @property
    def problems(self) -> list[Problem]:
        return list(self.result.problems) if self.result is not None else []

    @property
    def exit_code(self) -> int:
        """0 when the graph can be trusted; 1 when an entry was skipped, an input could not
        be read or an output (the report too) written, or with `strict` on any warning."""
        if self.result is None:
            return EXIT_OK
        return EXIT_PROBLEMS if self.report_error else exit_code(self.result, self.strict)

    def summary(self) -> str:
        """The build's one-line summary: digests, entries, PRs, files… and timings."""
        return self.result.summary() if self.result is not None else repr(self)

    def problem_count(self) -> str:
        """The line that follows the problems: how many, of which severity, skipped entries."""
        return summary_line(self.result) if self.result is not None else ""

    # -- asking the graph -------------------------------------------------------------

    def query(
        self,
        text: str | Sparql | None = None,
        *,
        name: str | None = None,
        params: Mapping[str, str] | Sequence[str] = (),
        cache: bool = True,
    ) -> Answer:
        """Answer a SPARQL query (its text, or a named query with `name`) from this graph,
        on the embedded pyoxigraph store: `results.Solutions` (`.variables`, `.rows` of
        pyoxigraph terms) for SELECT, `Boolean` for ASK, `Triples` for CONSTRUCT.

        A folder's first query loads its graph into `OUT/.kgraph-store`, which later ones
        reuse (`kgraph.store`); `cache=False` loads it into memory for this query only.
        """
        query = text if isinstance(text, Sparql) else sparql(text, name=name, params=params)
        if self.out is not None:
            local = queries.run_local(self.out, query.text, query.source, cache=cache)
            self.loaded = local.how
            return local.answer
        queries.check_syntax(query.text, query.source)
        store = self.store()
        try:
            return results.from_pyoxigraph(store.query(query.text))
        except (OSError, RuntimeError, ValueError) as error:
            raise queries.EvaluationError(f"{query.source}: the query failed: {error}") from None

    def store(self) -> ox.Store:
        """The graph in a pyoxigraph `Store`: a folder's on-disk store, opened read-only,
        or a graph in memory loaded once."""
        if self.out is not None:
            opened = open_graph(self.out)
            self.loaded = opened.how
            return opened.store
        if self._store is None:
            self._store = in_memory(self._file("ntriples"), ox.RdfFormat.N_TRIPLES, _IN_MEMORY)
        self.loaded = "memory"
        return self._store

    def rdflib(self, per_digest: bool = False) -> rdflib.Graph:
        """The graph as an `rdflib.Graph`; with `per_digest`, an `rdflib.Dataset` with each
        digest's facts in a named graph of its own (the digest's IRI), as `kgraph push
        --graph-per-digest` loads them, and the facts no digest owns in `DEFAULT_GRAPH`."""
        import rdflib

        triples = self._triples()
        if not per_digest:
            graph = rdflib.Graph()
            for prefix, namespace in NAMESPACES.items():
                graph.bind(prefix, namespace)
            for t in triples:
                graph.add((_term(t.subject), _term(t.predicate), _term(t.object)))
            return graph
        dataset = rdflib.Dataset()
        for prefix, namespace in NAMESPACES.items():
            dataset.bind(prefix, namespace)
        for iri, members in pushing.partition(triples, DEFAULT_GRAPH).items():
            named = dataset.graph(rdflib.URIRef(iri))
            for t in members:
                named.add((_term(t.subject), _term(t.predicate), _term(t.object)))
        return dataset

    def networkx(self) -> networkx.MultiDiGraph:
        """The graph as a `networkx.MultiDiGraph`, from its node-link JSON (`graph.json`):
        nodes by id with their kind, label and attributes; edges keyed by relation."""
        import networkx

        try:
            data = json.loads(self._file("json"))
        except (ValueError, RecursionError) as error:
            raise GraphUnreadable(f"{self._path('graph.json')}:0: not JSON: {error}") from None
        if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
            raise GraphUnreadable(f"{self._path('graph.json')}:1: not node-link JSON")
        graph: networkx.MultiDiGraph = networkx.node_link_graph(
            data, directed=True, multigraph=True, edges="edges"
        )
        return graph

    def _triples(self) -> list[ox.Triple]:
        if self.out is not None:
            return pushing.read_triples(self.out)
        try:
            parsed = ox.parse(input=self._file("ntriples"), format=ox.RdfFormat.N_TRIPLES)
            return [q.triple for q in parsed]
        except (SyntaxError, MemoryError) as error:  # not from kgraph's own writer, but said
            raise GraphUnreadable(f"{_IN_MEMORY}: {error}") from None

    def _path(self, name: str) -> str:
        return str(self.out / name) if self.out is not None else _IN_MEMORY

    def _file(self, name: str) -> bytes:
        """An output's bytes: the folder's file (of its last build), or made in memory."""
        if self.out is None:
            assert self.result is not None
            return to_bytes(self.result.graph, self.base, name)
        path = self.out / exporter_named(name).filename
        if not path.is_file():
            raise GraphNotFound(f"{path}: no such file; run `kgraph build … -o {self.out}`")
        if outputs.stale(self.out, path.name):
            raise GraphNotFound(f"{path}: {outputs.STALE}")
        try:
            return path.read_bytes()
        except OSError as error:
            raise GraphUnreadable(f"{path}:0: cannot read: {error.strerror}") from None


def _term(term: Any) -> Any:
    """A pyoxigraph term as rdflib's: a plain string stays plain (no xsd:string)."""
    import rdflib

    if isinstance(term, ox.NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return rdflib.BNode(term.value)
    if term.language:
        return rdflib.Literal(term.value, lang=term.language)
    datatype = term.datatype.value
    if datatype in (_XSD_STRING, _LANG_STRING):
        return rdflib.Literal(term.value)
    return rdflib.Literal(term.value, datatype=rdflib.URIRef(datatype))


def build(
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None = None,
    *,
    input_format: str | None = None,
    base: str = DEFAULT_BASE,
    only: Sequence[str] = (),
    share_limit: int = DEFAULT_SHARE_LIMIT,
    provenance: str = DEFAULT_PROVENANCE,
    catalogs: Sequence[str | os.PathLike[str]] = (),
    topics: Sequence[str | os.PathLike[str]] = (),
    pattern_threshold: float = DEFAULT_PATTERN_THRESHOLD,
    html_max_nodes: int = DEFAULT_MAX_NODES,
    sources: Sequence[str | SourceSpec] = (),
    history: bool = True,
    coupling: CouplingOptions | None = CouplingOptions(),  # noqa: B008 (frozen, shared)
    strict: bool = False,
    report: str | os.PathLike[str] | None = None,
    jobs: int = 1,
    cache: bool = True,
    progress: TextIO | None = None,
    waiting: Callable[[], object] = lambda: None,
) -> Build:
    """Read digests and build their graph: into the folder `out` (every output, or those
    `only` names), or in memory when `out` is None.

    `inputs` are digest files, folders (read recursively), glob patterns, or "-" for
    stdin. `sources` are `OWNER/REPO=PATH[@REV]` checkouts to resolve mentions against;
    with `history`, a git source's history up to REV is read too, and each of its PRs is
    linked to the commit that merged it (`kgraph.commits`); `coupling` says how to count
    the change coupling of a git source's history (None: not at all), counted over the
    history `history` reads (without it, there is none).
    `report` is a JSON file of every problem; `progress` a stream for a progress line; a
    build into a folder another build is writing waits for it, after calling `waiting`.
    Bad input is not an exception: the build skips it and says so in `.problems`, and
    `.exit_code` is 1. Options that cannot be used raise `kgraph.errors.UsageError`.
    """
    names = [os.fspath(inputs)] if isinstance(inputs, str | os.PathLike) else list(inputs)
    folder = Path(out) if out is not None else None
    report_path = Path(report) if report is not None else None
    if not base.endswith(("/", "#")):
        raise UsageError("must end with '/' or '#'", option="--base")
    if not is_absolute_iri(base + "x"):
        raise UsageError("must be an absolute IRI", option="--base")
    if input_format is not None and input_format not in INPUT_FORMATS:
        raise UsageError(f"{input_format!r}: one of {', '.join(INPUT_FORMATS)}", option="--format")
    if provenance not in PROVENANCES:
        raise UsageError(f"{provenance!r}: one of {', '.join(PROVENANCES)}", option="--provenance")
    if unknown := [name for name in only if name not in OUTPUTS]:
        raise UsageError(f"{unknown[0]!r}: one of {', '.join(OUTPUTS)}", option="--only")
    if report_path is not None and folder is not None and _inside_outputs(report_path, folder):
        raise UsageError(f"{report_path} is a file kgraph writes in {folder}", option="--report")
    specs = _source_specs(sources)
    if coupling is not None and coupling.since is not None:
        try:
            datetime.date.fromisoformat(coupling.since)
        except ValueError:
            raise UsageError(
                f"{coupling.since!r}: expected a day, YYYY-MM-DD", option="--history-since"
            ) from None
    if not 0.0 <= pattern_threshold <= 1.0:
        raise UsageError(f"{pattern_threshold}: from 0 to 1", option="--pattern-threshold")
    knowledge = load_knowledge(
        [Path(p) for p in catalogs], [Path(p) for p in topics], pattern_threshold
    )
    options = BuildOptions(
        base=base,
        input_format=input_format,
        link=LinkOptions(
            share_limit=share_limit, knowledge=knowledge, provenance=Provenance(provenance)
        ),
        exporters=[exporter_named(n) for n in only] if only else list(EXPORTERS),
        export_options={"html_max_nodes": html_max_nodes},
        sources=specs,
        history=history,
        jobs=jobs,
        cache=cache,
        written=(report_path,) if report_path is not None else (),
        coupling=coupling,
    )
    result = run([os.fspath(n) for n in names], folder, options, Progress(progress), waiting)
    report_error = None
    if report_path is not None:
        try:
            write_atomic(report_path, render_report(result, strict))
        except OSError as err:
            report_error = f"{report_path}:0: error: cannot write the report: {err.strerror}"
    return Build(folder, result, strict, report_error, base)


def open(out: str | os.PathLike[str]) -> Build:
    """The graph a build wrote into the folder `out`."""
    folder = Path(out)
    if not folder.is_dir():
        raise GraphNotFound(f"{folder}: no such folder (run `kgraph build … -o {folder}`)")
    return Build(folder)


def _source_specs(values: Sequence[str | SourceSpec]) -> tuple[SourceSpec, ...]:
    specs: list[SourceSpec] = []
    for value in values:
        try:
            spec = value if isinstance(value, SourceSpec) else SourceSpec.parse(value)
        except ValueError as error:
            raise UsageError(str(error), option="--source") from None
        if not spec.path.is_dir():
            raise UsageError(f"{spec.path}: no such folder", option="--source")
        if any(s.repo == spec.repo for s in specs):
            raise UsageError(f"{spec.repo} is given twice", option="--source")
        specs.append(spec)
    return tuple(specs)


def _inside_outputs(path: Path, out_dir: Path, page: bool = False) -> bool:
    """Would writing `path` replace an export (the page too, unless `page`), or anything in
    the build's own folder?"""
    path, out_dir = path.resolve(), out_dir.resolve()
    names = {e.filename for e in EXPORTERS if not (page and e.name == "html")}
    return (path.parent == out_dir and path.name in names) or (out_dir / ".kgraph") in path.parents


# -- queries --------------------------------------------------------------------------


def sparql(
    text: str | None = None,
    *,
    name: str | None = None,
    file: str | os.PathLike[str] | None = None,
    params: Mapping[str, str] | Sequence[str] = (),
) -> Sparql:
    """A query from its text, a named query (`name`, see `list_queries`) or a `.rq` file,
    with its parameters filled in: `params` maps names to values, or is `NAME=VALUE`
    strings as `--param` takes them. Raises `UsageError` for a missing, unknown or
    ill-typed parameter or an unknown name."""
    if sum(x is not None for x in (text, name, file)) != 1:
        raise UsageError("give one of: the query's text, a named query, a query file")
    if name is not None:
        chosen = queries.named_query(name)
    elif file is not None:
        chosen = queries.query_file(Path(file))
    else:
        assert text is not None
        chosen = queries.parse(text, "query", "<query>")
    values = (
        dict(params)
        if isinstance(params, Mapping)
        else queries.parse_params([params] if isinstance(params, str) else params)
    )
    return Sparql(queries.bind(chosen, values), chosen.source, chosen.columns)


def list_queries() -> str:
    """Every named query, its parameters and what it answers (`kgraph query --list`)."""
    return queries.listing()


def ask_endpoint(
    endpoint: str,
    query: Sparql,
    *,
    graphs: Sequence[str] = (),
    user: str | None = None,
    password: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Answer:
    """Answer a query from a SPARQL endpoint instead of a build's graph."""
    with remote.Server(user, password, timeout).session() as session:
        return remote.query(session, endpoint, query.text, graphs, query.source)


def render(
    answer: Answer, output_format: str = "table", columns: Sequence[tuple[str, str]] = ()
) -> str:
    """An answer as text: a table for people, or csv, tsv, json, turtle, ntriples.

    `columns` (a query's `@column` headings, `Sparql.columns`) head a table's or CSV's
    columns; TSV and JSON keep the variables, as their W3C formats require."""
    if columns and isinstance(answer, results.Solutions) and output_format in ("table", "csv"):
        headings = dict(columns)
        answer = results.Solutions(tuple(headings.get(v, v) for v in answer.variables), answer.rows)
    return results.render(answer, output_format)


# -- the other commands ---------------------------------------------------------------


def diff(old: str | os.PathLike[str], new: str | os.PathLike[str]) -> GraphDiff:
    """What the build in `new` added to, and removed from, the build in `old`."""
    return diff_outputs(Path(old), Path(new))


def evaluate(graph: str | os.PathLike[str], gold: str | os.PathLike[str]) -> evaluation.Evaluation:
    """Precision and recall of a built graph (a folder, graph.json or graph.ttl) against
    gold entries (JSON, in the schema of shared/seeds/gold.json), kind by kind."""
    return evaluation.run(Path(gold), Path(graph))


def draw(
    out: str | os.PathLike[str],
    *,
    focus: Sequence[str] = (),
    depth: int = 2,
    max_nodes: int = DEFAULT_MAX_NODES,
    page: str | os.PathLike[str] | None = None,
) -> Path:
    """Draw the HTML page again from `out/graph.json`, whole or around the `focus` names;
    returns the page written: `page`, else `out/graph.html` or `out/focus-NAME.html`."""
    folder = Path(out)
    source = folder / "graph.json"
    if not source.is_file():
        raise UsageError(f"{source}: no graph.json here; run `kgraph build` first")
    if outputs.stale(folder, source.name):
        raise UsageError(f"{source}: {outputs.STALE}")
    if page is None:
        name = "focus-" + _slug("-".join(focus)) + ".html" if focus else "graph.html"
        target = folder / name
    else:
        target = Path(page)
        if _inside_outputs(target, folder, page=True):
            raise UsageError(f"{target} is a file kgraph build wrote in {folder}", "--output")
    title = "kgraph: " + ", ".join(focus) if focus else "kgraph"
    options = HtmlOptions(title=title, max_nodes=max_nodes, focus=tuple(focus), depth=depth)
    try:
        text = render_json_file(source, options)
    except JsonFileError as error:  # not JSON, too deep, or not graph.json's shape
        reason = error.reason.removeprefix("not a kgraph graph.json: ")
        raise GraphUnreadable(
            f"{source}: not a kgraph graph.json (line {error.line}: {reason})"
        ) from None
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        if isinstance(error, UsageError):  # a --focus that matches nothing
            raise
        raise GraphUnreadable(f"{source}: not a kgraph graph.json ({error})") from None
    write_atomic(target, text.encode("utf-8"))
    if target.resolve() == (folder / "graph.html").resolve():
        outputs.redrawn(folder, target.name, source.name)
    return target


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)[:80] or "focus"


def push(
    out: str | os.PathLike[str],
    endpoint: str,
    *,
    store: str | None = None,
    update: str | None = None,
    graph: str = DEFAULT_GRAPH,
    replace: bool = False,
    per_digest: bool = False,
    chunk_size: int = DEFAULT_CHUNK,
    protocol: str = "auto",
    user: str | None = None,
    password: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Callable[[str], None] = lambda _: None,
) -> pushing.PushReport:
    """Load the build in `out` into a triple store over HTTP (`kgraph.push`), then count
    what the store holds; `.verified` is False when triples are missing there."""
    target = pushing.Target(endpoint, store, update)
    options = pushing.PushOptions(graph, replace, per_digest, chunk_size, protocol)
    try:
        return pushing.push(
            Path(out), target, remote.Server(user, password, timeout), options, progress
        )
    except Interrupted as stop:
        stop.aftermath = (
            (
                "a --replace push swaps the new graph in only at its end, so the store "
                "holds the old one (over the Graph Store protocol alone, part of the new "
                "one): push again to complete it"
            )
            if replace
            else "the store may hold part of the graph: push again to complete it "
            "(with --replace to drop what this push left)"
        )
        raise
    except remote.RemoteError as error:
        raise remote.RemoteError(f"push failed: {error}", error.status) from None
    except ValueError as error:  # an option that is not an IRI, a protocol without --store
        raise UsageError(str(error)) from None
