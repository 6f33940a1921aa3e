"""The `kgraph` command line: click over `kgraph.pipeline`, nothing else.

Exit codes (kgraph.report): 0 built cleanly; 1 built, but an entry was skipped or an input
could not be read or an output written (with --strict: any warning); 2 usage error;
130/143 interrupted by SIGINT/SIGTERM (kgraph.interrupt). `query` and `push`: 0 done; 1 the
query, the server or the count check failed; 2 usage error (bad options, query syntax,
unknown named query, missing parameter, no graph in the folder).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import click

from kgraph import __version__, evaluate, outputs, remote, results
from kgraph import push as pushing
from kgraph import query as queries
from kgraph.atomic import write_atomic
from kgraph.catalog import CatalogError, load_knowledge
from kgraph.diff import DiffError, diff_outputs
from kgraph.export import EXPORTERS, exporter_named
from kgraph.export.html import DEFAULT_MAX_NODES, HtmlOptions, render_json_file
from kgraph.export.subgraph import FocusError
from kgraph.ingest import FORMATS
from kgraph.interrupt import BuildFinished, Interrupted
from kgraph.iri import is_absolute_iri
from kgraph.link import DEFAULT_SHARE_LIMIT, LinkOptions
from kgraph.pipeline import BuildOptions, run
from kgraph.progress import Progress
from kgraph.report import EXIT_UNTRUSTED, EXIT_USAGE, exit_code, render_report, summary_line
from kgraph.source import SourceError, SourceSpec
from kgraph.store import GraphNotFound, GraphUnreadable
from kgraph.vocab import DEFAULT_BASE


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kgraph")
def cli() -> None:
    """Build a knowledge graph of pull-request reviews from review digests.

    Start with `kgraph build DIGESTS... -o OUT`; open OUT/graph.html, or query OUT/graph.ttl
    with SPARQL.
    """


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("output"),
    show_default=True,
    help="Folder for the graph files.",
)
@click.option(
    "--format",
    "input_format",
    type=click.Choice([f.name for f in FORMATS]),
    help="Read every input in this format instead of detecting it per file.",
)
@click.option(
    "--base",
    default=DEFAULT_BASE,
    show_default=True,
    help="Base IRI of the graph's nodes (PRs, files, symbols…).",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    type=click.Choice([e.name for e in EXPORTERS]),
    help="Write only these outputs (repeatable); default: all.",
)
@click.option(
    "--share-limit",
    type=click.IntRange(min=2),
    default=DEFAULT_SHARE_LIMIT,
    show_default=True,
    help="Code touched by more PRs than this is a hub: no sharesCodeWith pairs.",
)
@click.option(
    "--catalog",
    "catalogs",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A SKOS file of design patterns that extends the built-in catalog (repeatable).",
)
@click.option(
    "--topics",
    "topic_tables",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A SKOS file of topics and their aliases that extends the built-in table (repeatable).",
)
@click.option(
    "--html-max-nodes",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_NODES,
    show_default=True,
    help="Draw at most this many nodes in graph.html, shared code first; 0 draws all.",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="OWNER/REPO=PATH[@REV]",
    callback=lambda _ctx, _param, values: _source_specs(values),
    help="Resolve the files and symbols named in that repository's PRs against this checkout "
    "(a git repository, read at REV or HEAD, or a plain folder). Repeatable. The index is "
    "cached by commit in OUTPUT/.kgraph/. A git repository's history up to REV is read too: "
    "each PR is linked to the commit that merged it, and gets what that commit changed.",
)
@click.option(
    "--no-history",
    is_flag=True,
    help="Read --source git repositories at REV only, not their history: no commit links.",
)
@click.option("--strict", is_flag=True, help="Exit 1 on any warning, not only on lost entries.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write every problem, with the entry counts, to this JSON file.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Read and extract digests, and write the outputs, in this many processes; the "
    "output does not depend on it. Each writer process beyond the first holds about the "
    "graph's memory again.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Build from scratch: neither read nor update the extraction cache, output index "
    "and page layouts in OUTPUT/.kgraph/.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but problems, and no progress.")
def build(
    inputs: tuple[str, ...],
    out_dir: Path,
    input_format: str | None,
    base: str,
    only: tuple[str, ...],
    share_limit: int,
    catalogs: tuple[Path, ...],
    topic_tables: tuple[Path, ...],
    html_max_nodes: int,
    sources: tuple[SourceSpec, ...],
    no_history: bool,
    strict: bool,
    report_path: Path | None,
    jobs: int,
    no_cache: bool,
    quiet: bool,
) -> None:
    """Read digests and write the graph as Turtle, N-Triples, JSON-LD, JSON and HTML.

    INPUTS are digest files, folders (read recursively), glob patterns, or - for stdin.
    Every problem is printed as FILE:LINE: severity: message on stderr, then a count.
    Exit 0: built cleanly; 1: an entry was skipped, or an input could not be read or an
    output written (with --strict: any warning); 2: usage error.
    """
    if not base.endswith(("/", "#")):
        raise click.BadParameter("must end with '/' or '#'", param_hint="--base")
    if not is_absolute_iri(base + "x"):
        raise click.BadParameter("must be an absolute IRI", param_hint="--base")
    if report_path is not None and _inside_outputs(report_path, out_dir):
        raise click.BadParameter(
            f"{report_path} is a file kgraph writes in {out_dir}", param_hint="--report"
        )
    exporters = [exporter_named(n) for n in only] if only else list(EXPORTERS)
    try:
        knowledge = load_knowledge(catalogs, topic_tables)
    except CatalogError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_USAGE)
    options = BuildOptions(
        base=base,
        input_format=input_format,
        link=LinkOptions(share_limit=share_limit, knowledge=knowledge),
        exporters=exporters,
        export_options={"html_max_nodes": html_max_nodes},
        sources=sources,
        history=not no_history,
        jobs=jobs,
        cache=not no_cache,
    )
    # A progress line only for a person watching: never in a pipeline's log.
    progress = Progress(sys.stderr if not quiet and sys.stderr.isatty() else None)
    try:
        result = run(
            list(inputs),
            out_dir,
            options,
            progress,
            lambda: click.echo(
                f"kgraph: waiting for another build into {out_dir} to end", err=True
            ),
        )
    except SourceError as error:
        raise click.BadParameter(str(error), param_hint="--source") from error
    except KeyboardInterrupt:  # SIGINT without the console script's handler (kgraph.__main__)
        stop = Interrupted(signal.SIGINT)
        click.echo(stop.message(), err=True)
        sys.exit(stop.exit_code)
    code = exit_code(result, strict)
    unwritten = None
    if report_path is not None:  # first: a reader of stdout that went away must not lose it
        try:
            write_atomic(report_path, render_report(result, strict))
        except OSError as err:
            unwritten = f"{report_path}:0: error: cannot write the report: {err.strerror}"
            code = EXIT_UNTRUSTED
    for problem in result.problems:
        _say(str(problem), err=True)
    if not quiet:
        _say(result.summary())
    if result.problems:
        _say(summary_line(result), err=True)
    if unwritten:
        _say(unwritten, err=True)
    raise BuildFinished(code)


def _say(text: str, err: bool = False) -> None:
    """A line of a build's account: a closed pipe, a closed stream or a full disk loses
    the line, never the build, its report or its exit code."""
    with suppress(OSError, ValueError):
        click.echo(text, err=err)


@cli.command()
@click.argument("old_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("new_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: a headline for chat, then details; json: one object for pipelines.",
)
def diff(old_dir: Path, new_dir: Path, output_format: str) -> None:
    """Say what NEW_DIR's build added to OLD_DIR's: new PRs, shared-code links, patterns.

    Both are `kgraph build` output folders (their graph.json is read). The first line is
    a one-line summary a pipeline can post to chat; details follow.
    """
    try:
        result = diff_outputs(old_dir, new_dir)
    except DiffError as err:
        click.echo(str(err), err=True)
        sys.exit(EXIT_UNTRUSTED)
    if output_format == "json":
        click.echo(json.dumps(result.as_json(), ensure_ascii=False, indent=1))
        return
    click.echo(result.headline())
    for line in result.details():
        click.echo(line)


def _inside_outputs(path: Path, out_dir: Path, page: bool = False) -> bool:
    """Would writing `path` replace an export (the page too, unless `page`), or anything in
    the build's own folder?"""
    path, out_dir = path.resolve(), out_dir.resolve()
    names = {e.filename for e in EXPORTERS if not (page and e.name == "html")}
    return (path.parent == out_dir and path.name in names) or (out_dir / ".kgraph") in path.parents


@cli.command("eval")
@click.argument("graph", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--gold",
    "gold_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Gold entries as JSON, in the schema of shared/seeds/gold.json.",
)
@click.option("-v", "--verbose", is_flag=True, help="Also list every miss (-) and extra (+).")
def eval_command(graph: Path, gold_path: Path, verbose: bool) -> None:
    """Print precision and recall of a built graph against gold, kind by kind.

    GRAPH is a `kgraph build` output folder (graph.json is read, else graph.ttl) or one of
    those files. Gold entries are matched to PRs by title; the README gives the matching
    rule of each kind.
    """
    try:
        result = evaluate.run(gold_path, graph)
    except evaluate.EvalError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_UNTRUSTED)
    click.echo(result.table())
    if verbose:
        for d in result.differences:
            click.echo(f"{'-' if d.missing else '+'} {d.entry} {d.kind}: {d.value}")


@cli.command()
@click.argument(
    "graph_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), metavar="OUTPUT_DIR"
)
@click.option(
    "--focus",
    multiple=True,
    metavar="NAME",
    help="Draw only what lies around this name: a symbol, file path, PR title or #number "
    "(repeatable).",
)
@click.option(
    "--depth",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Steps from the --focus nodes: 1 is their PRs, 2 also the PRs' other code.",
)
@click.option(
    "--max-nodes",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_NODES,
    show_default=True,
    help="Draw at most this many nodes, most relevant first; 0 draws all.",
)
@click.option(
    "-o",
    "--output",
    "out_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Page to write; default OUTPUT_DIR/graph.html, or OUTPUT_DIR/focus-NAME.html.",
)
def html(
    graph_dir: Path, focus: tuple[str, ...], depth: int, max_nodes: int, out_file: Path | None
) -> None:
    """Draw the HTML page again from OUTPUT_DIR/graph.json, whole or around --focus names.

    For a graph too big to read at once: `kgraph html output --focus _sliding_window_lookup`
    writes a page of that symbol, its PRs and their other code.
    """
    source = graph_dir / "graph.json"
    if not source.is_file():
        raise click.UsageError(f"{source}: no graph.json here; run `kgraph build` first")
    if outputs.stale(graph_dir, source.name):
        raise click.UsageError(f"{source}: {outputs.STALE}")
    if out_file is None:
        name = "focus-" + _slug("-".join(focus)) + ".html" if focus else "graph.html"
        out_file = graph_dir / name
    elif _inside_outputs(out_file, graph_dir, page=True):
        raise click.BadParameter(
            f"{out_file} is a file kgraph build wrote in {graph_dir}", param_hint="--output"
        )
    title = "kgraph: " + ", ".join(focus) if focus else "kgraph"
    options = HtmlOptions(title=title, max_nodes=max_nodes, focus=focus, depth=depth)
    try:
        page = render_json_file(source, options)
    except FocusError as error:
        raise click.BadParameter(str(error), param_hint="--focus") from error
    except (ValueError, KeyError, TypeError) as error:
        raise click.UsageError(f"{source}: not a kgraph graph.json ({error!r})") from error
    write_atomic(out_file, page.encode("utf-8"))
    if out_file.resolve() == (graph_dir / "graph.html").resolve():
        outputs.redrawn(graph_dir, out_file.name, source.name)
    click.echo(f"wrote {out_file}")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)[:80] or "focus"


def _source_specs(values: tuple[str, ...]) -> tuple[SourceSpec, ...]:
    specs: list[SourceSpec] = []
    for value in values:
        try:
            spec = SourceSpec.parse(value)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--source") from error
        if not spec.path.is_dir():
            raise click.BadParameter(f"{spec.path}: no such folder", param_hint="--source")
        if any(s.repo == spec.repo for s in specs):
            raise click.BadParameter(f"{spec.repo} is given twice", param_hint="--source")
        specs.append(spec)
    return tuple(specs)


def _fail(message: str, code: int) -> None:
    click.echo(f"kgraph: {message}", err=True)
    sys.exit(code)


def _server(user: str | None, password_env: str, timeout: float) -> remote.Server:
    password = None
    if user is not None:
        password = os.environ.get(password_env)
        if password is None:
            _fail(
                f"--user {user} needs the password in the environment variable {password_env}",
                EXIT_USAGE,
            )
    return remote.Server(user, password, timeout)


_auth_options = [
    click.option("--user", help="User name for the server (Basic or Digest authentication)."),
    click.option(
        "--password-env",
        default="KGRAPH_PASSWORD",
        show_default=True,
        metavar="VAR",
        help="Environment variable that holds the password for --user.",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0.1),
        default=60.0,
        show_default=True,
        help="Seconds to wait for each HTTP request.",
    ),
]


def _with_auth(command: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(_auth_options):
        command = option(command)
    return command


@cli.command("query")
@click.argument(
    "paths", nargs=-1, type=click.Path(path_type=Path), metavar="[OUTPUT_DIR] [QUERY.rq]"
)
@click.option("-n", "--name", help="Run the named query NAME (see --list).")
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A parameter of the query (repeatable).",
)
@click.option(
    "-f",
    "--format",
    "output_format",
    type=click.Choice(results.FORMATS),
    default="table",
    show_default=True,
    help="table for people; csv, tsv, json: the W3C SPARQL results formats; "
    "turtle, ntriples: for CONSTRUCT.",
)
@click.option("--list", "list_queries", is_flag=True, help="List the named queries and exit.")
@click.option("--show", is_flag=True, help="Print the query with its parameters filled in.")
@click.option(
    "--endpoint", metavar="URL", help="Ask this SPARQL endpoint instead of OUTPUT_DIR's graph."
)
@click.option(
    "--graph",
    "graphs",
    multiple=True,
    metavar="IRI",
    help="With --endpoint: query these graphs (repeatable; default: the server's default).",
)
@click.option("--no-cache", is_flag=True, help="Load the graph into memory; keep no store.")
@_with_auth
def query_command(
    paths: tuple[Path, ...],
    name: str | None,
    params: tuple[str, ...],
    output_format: str,
    list_queries: bool,
    show: bool,
    endpoint: str | None,
    graphs: tuple[str, ...],
    no_cache: bool,
    user: str | None,
    password_env: str,
    timeout: float,
) -> None:
    """Answer a SPARQL query from a build's graph, or from a SPARQL endpoint.

    \b
    kgraph query OUTPUT_DIR QUERY.rq
    kgraph query OUTPUT_DIR --name who-touches --param symbol=_is_current
    kgraph query --endpoint URL --name hotspots
    kgraph query --list

    The first query of a build loads its graph into OUTPUT_DIR/.kgraph-store; later
    queries reuse it until the graph changes. SELECT, ASK and CONSTRUCT all work.
    Exit codes: 0 answered; 1 the query or the server failed; 2 usage or syntax error.
    """
    if list_queries:
        click.echo(queries.listing(), nl=False)
        return
    wanted = (["OUTPUT_DIR"] if not endpoint else []) + (["QUERY.rq"] if not name else [])
    # --show runs nothing, so it needs no OUTPUT_DIR (but does not mind one).
    optional = 1 if show and not endpoint else 0
    if not len(wanted) - optional <= len(paths) <= len(wanted):
        _fail(
            f"expected {' '.join(wanted) or 'no arguments'} (got {len(paths)}); "
            "see kgraph query --help",
            EXIT_USAGE,
        )
    try:
        chosen = queries.named_query(name) if name else queries.query_file(paths[-1])
        text = queries.bind(chosen, queries.parse_params(params))
        if show:
            click.echo(text, nl=not text.endswith("\n"))
            return
        if endpoint:
            answer = remote.query(
                _server(user, password_env, timeout), endpoint, text, graphs, chosen.source
            )
        else:
            local = queries.run_local(paths[0], text, chosen.source, cache=not no_cache)
            if local.how == "memory" and not no_cache:
                click.echo(
                    f"kgraph: cannot keep a store in {paths[0]}; the graph was loaded into "
                    "memory for this query only",
                    err=True,
                )
            answer = local.answer
        click.echo(results.render(answer, output_format), nl=False)
    except (queries.QueryError, GraphNotFound, results.FormatError) as error:
        _fail(str(error), EXIT_USAGE)
    except (queries.EvaluationError, remote.RemoteError, GraphUnreadable) as error:
        _fail(str(error), EXIT_UNTRUSTED)


@cli.command("push")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path), metavar="OUTPUT_DIR")
@click.option(
    "--endpoint",
    required=True,
    metavar="URL",
    help="The store's SPARQL endpoint: the triple count is checked there, and SPARQL "
    "Update goes there unless --update says otherwise.",
)
@click.option(
    "--store",
    "store_url",
    metavar="URL",
    help="The store's Graph Store protocol endpoint; without it, kgraph uses SPARQL Update.",
)
@click.option("--update", "update_url", metavar="URL", help="The store's SPARQL Update endpoint.")
@click.option(
    "--graph",
    default=pushing.DEFAULT_GRAPH,
    show_default=True,
    metavar="IRI",
    help="Named graph to load into (with --graph-per-digest: for facts no digest owns).",
)
@click.option("--replace", is_flag=True, help="Replace the graph's contents instead of adding.")
@click.option(
    "--graph-per-digest",
    is_flag=True,
    help="Put each digest's facts in a named graph of its own (the digest's IRI).",
)
@click.option(
    "--protocol",
    type=click.Choice(pushing.PROTOCOLS),
    default="auto",
    show_default=True,
    help="auto: the Graph Store protocol when --store is given, falling back to SPARQL "
    "Update if the server refuses it there.",
)
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1),
    default=pushing.DEFAULT_CHUNK,
    show_default=True,
    help="Triples per request.",
)
@_with_auth
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but problems.")
def push_command(
    out_dir: Path,
    endpoint: str,
    store_url: str | None,
    update_url: str | None,
    graph: str,
    replace: bool,
    graph_per_digest: bool,
    protocol: str,
    chunk_size: int,
    user: str | None,
    password_env: str,
    timeout: float,
    quiet: bool,
) -> None:
    """Load a build's graph into a triple store over HTTP, then check the triple count.

    \b
    kgraph push out --endpoint http://127.0.0.1:7878/query \\
                    --store http://127.0.0.1:7878/store --replace

    Sends the graph in chunks over the SPARQL 1.1 Graph Store HTTP Protocol (--store),
    or as SPARQL Update; then counts the triples on --endpoint and exits 1 if any are
    missing. The password for --user is read from an environment variable, never from
    the command line.
    """
    target = pushing.Target(endpoint, store_url, update_url)
    options = pushing.PushOptions(graph, replace, graph_per_digest, chunk_size, protocol)
    progress = (lambda _: None) if quiet else (lambda m: click.echo(m, err=True))
    try:
        report = pushing.push(
            out_dir, target, _server(user, password_env, timeout), options, progress
        )
    except Interrupted as stop:
        stop.aftermath = (
            "the store may hold part of the graph: push again to complete it "
            "(with --replace to drop what this push left)"
        )
        raise
    except (GraphNotFound, ValueError) as error:
        _fail(str(error), EXIT_USAGE)
    except remote.RemoteError as error:
        _fail(f"push failed: {error}", EXIT_UNTRUSTED)
    except GraphUnreadable as error:
        _fail(str(error), EXIT_UNTRUSTED)
    for problem in report.problems:
        click.echo(f"kgraph: {problem}", err=True)
    if not quiet:
        counted = sum(g.counted for g in report.graphs)
        click.echo(
            f"pushed {report.triples} triples to {len(report.graphs)} graph(s) over "
            f"{'the Graph Store protocol' if report.protocol == 'graph-store' else 'SPARQL Update'}"
            f" in {report.requests} request(s); the store counts {counted}"
            + (f" ({report.union} distinct)" if report.union is not None else "")
            + f" in {report.seconds:.2f}s"
            + (
                f"; dropped {len(report.dropped)} graph(s) of digests no longer in the build"
                if report.dropped
                else ""
            )
        )
    if not report.verified:
        sys.exit(EXIT_UNTRUSTED)
