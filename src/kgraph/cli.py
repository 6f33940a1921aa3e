"""The `kgraph` command line: click over `kgraph.pipeline`, nothing else.

Exit codes: 0 built cleanly; 1 built, but an entry was skipped or an input could not be
read (with --strict: any warning); 2 usage error. `query` and `push`: 0 done; 1 the
query, the server or the count check failed; 2 usage error (bad options, query syntax,
unknown named query, missing parameter, no graph in the folder).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import click

from kgraph import __version__, remote, results
from kgraph import push as pushing
from kgraph import query as queries
from kgraph.export import EXPORTERS, exporter_named
from kgraph.ingest import FORMATS
from kgraph.link import LinkOptions
from kgraph.pipeline import BuildOptions, run
from kgraph.store import GraphNotFound, GraphUnreadable
from kgraph.vocab import DEFAULT_BASE

EXIT_OK, EXIT_UNTRUSTED, EXIT_USAGE = 0, 1, 2


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
    default=LinkOptions().share_limit,
    show_default=True,
    help="Code touched by more PRs than this is a hub: no sharesCodeWith pairs.",
)
@click.option("--strict", is_flag=True, help="Exit 1 on any warning, not only on lost entries.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but problems.")
def build(
    inputs: tuple[str, ...],
    out_dir: Path,
    input_format: str | None,
    base: str,
    only: tuple[str, ...],
    share_limit: int,
    strict: bool,
    quiet: bool,
) -> None:
    """Read digests and write the graph as Turtle, N-Triples, JSON-LD, JSON and HTML.

    INPUTS are digest files, folders (read recursively), glob patterns, or - for stdin.
    Every problem is printed as FILE:LINE: message on stderr.
    """
    if not base.endswith(("/", "#")):
        raise click.BadParameter("must end with '/' or '#'", param_hint="--base")
    exporters = [exporter_named(n) for n in only] if only else list(EXPORTERS)
    options = BuildOptions(
        base=base,
        input_format=input_format,
        link=LinkOptions(share_limit=share_limit),
        exporters=exporters,
    )
    try:
        result = run(list(inputs), out_dir, options)
    except KeyboardInterrupt:
        click.echo("kgraph: interrupted; previous outputs left as they were", err=True)
        sys.exit(130)
    for problem in result.problems:
        click.echo(str(problem), err=True)
    if not quiet:
        click.echo(result.summary())
    if result.problems:
        skipped = f", {result.entries_skipped} entries skipped" if result.entries_skipped else ""
        click.echo(f"kgraph: {len(result.problems)} problem(s){skipped}", err=True)
    if not result.trusted or (strict and result.problems):
        sys.exit(EXIT_UNTRUSTED)


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
        )
    if not report.verified:
        sys.exit(EXIT_UNTRUSTED)
