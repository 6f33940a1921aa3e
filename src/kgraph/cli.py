"""The `kgraph` command line: click over `kgraph.api`, nothing else.

Each command parses its options, calls the function of the same name in `kgraph.api` with
them as keyword arguments of the same names, and prints what it returns. Failures kgraph
foresaw (`kgraph.errors.KgraphError`) are printed as their one-line message; anything else
is one line naming the command and the error (the traceback with `kgraph --debug`).

Exit codes (kgraph.errors): 0 built cleanly; 1 built, but an entry was skipped or an input
could not be read or an output written (with --strict: any warning); 2 usage error;
130/143 interrupted by SIGINT/SIGTERM (kgraph.interrupt). `query` and `push`: 0 done; 1 the
query, the server or the count check failed; 2 usage error (bad options, query syntax,
unknown named query, missing parameter, no graph in the folder). Any command: 1 on an
error kgraph did not foresee.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sys
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, NoReturn

import click

from kgraph import __version__, api, errors

# What a failed write to stdout or stderr says (`> /dev/full`, a closed pipe): the
# command's own output was lost, not one of its files.
_OUTPUT_ERRNOS = frozenset({errno.EPIPE, errno.ENOSPC, errno.EBADF, errno.EIO, errno.EDQUOT})
_MAX_SHOWN = 300  # characters of an unforeseen error's message on its line


def _located(message: str) -> bool:
    """Does the message start as a build's problems do, `FILE:LINE: error: …`? It is then
    shown as it is (editors jump to it); any other follows `kgraph: `."""
    first = message.partition("\n")[0]
    for marker in (": error: ", ": warning: "):
        head, found, _ = first.partition(marker)
        if found:
            place, _, line = head.rpartition(":")
            return bool(place) and line.isdigit()
    return False


def _unforeseen(ctx: click.Context, error: Exception) -> NoReturn:
    """One line for an error no code path foresaw, exit 1; `--debug` raises it instead."""
    if ctx.meta.get("kgraph.debug"):
        raise error
    if isinstance(error, OSError) and error.filename is None and error.errno in _OUTPUT_ERRNOS:
        line = f"kgraph: cannot write the output: {error.strerror or error}"
    else:
        command = ctx.info_name or "kgraph"
        said = " ".join(str(error).split())
        said = said[:_MAX_SHOWN] + ("…" if len(said) > _MAX_SHOWN else "")
        line = (
            f"kgraph: {command} failed: {type(error).__name__}"
            + (f": {said}" if said else "")
            + f" (unforeseen; `kgraph --debug {command} …` shows the traceback)"
        )
    _say(line, err=True)
    ctx.exit(errors.EXIT_PROBLEMS)


class _Command(click.Command):
    """A command whose every failure ends in one line on stderr and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except errors.KgraphError as error:
            if error.option:
                raise click.BadParameter(str(error), ctx=ctx, param_hint=error.option) from None
            said = str(error)
            _say(said if _located(said) else f"kgraph: {said}", err=True)
            ctx.exit(error.exit_code)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:  # SIGINT without the console script's handler (__main__)
            stop = errors.Interrupted(signal.SIGINT)
            _say(stop.message(), err=True)
            ctx.exit(stop.exit_code)
        except Exception as error:
            _unforeseen(ctx, error)


class _Group(click.Group):
    command_class = _Command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as error:  # in parsing a command's options, before it ran
            _unforeseen(ctx, error)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kgraph")
@click.option(
    "--debug",
    is_flag=True,
    help="Show the Python traceback of an error kgraph did not foresee, instead of one line.",
)
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Build a knowledge graph of pull-request reviews from review digests.

    Start with `kgraph build DIGESTS... -o OUT`; open OUT/graph.html, or query OUT/graph.ttl
    with SPARQL.
    """
    ctx.meta["kgraph.debug"] = debug


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
    type=click.Choice(api.INPUT_FORMATS),
    help="Read every input in this format instead of detecting it per file.",
)
@click.option(
    "--base",
    default=api.DEFAULT_BASE,
    show_default=True,
    help="Base IRI of the graph's nodes (PRs, files, symbols…).",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    type=click.Choice(api.OUTPUTS),
    help="Write only these outputs (repeatable); default: all.",
)
@click.option(
    "--share-limit",
    type=click.IntRange(min=2),
    default=api.DEFAULT_SHARE_LIMIT,
    show_default=True,
    help="Code touched by more PRs than this is a hub: no sharesCodeWith pairs.",
)
@click.option(
    "--provenance",
    type=click.Choice(api.PROVENANCES),
    default=api.DEFAULT_PROVENANCE,
    show_default=True,
    help="evidence: a kg:Mention node for each clause that shows a decision, pattern, topic "
    "or person; full: also for each file, symbol and issue an entry names (a larger graph).",
)
@click.option(
    "--catalog",
    "catalogs",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A SKOS file of design patterns or concepts that extends the built-in catalog "
    "(repeatable).",
)
@click.option(
    "--pattern-threshold",
    type=click.FloatRange(0.0, 1.0),
    default=api.DEFAULT_PATTERN_THRESHOLD,
    show_default=True,
    help="Apply a pattern when its evidence's confidence reaches this: lower finds more, "
    "higher is surer. The default maximises F1 on kgraph's tune corpus.",
)
@click.option(
    "--topics",
    "topics",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A SKOS file of topics and their aliases that extends the built-in table (repeatable).",
)
@click.option(
    "--html-max-nodes",
    type=click.IntRange(min=0),
    default=api.DEFAULT_MAX_NODES,
    show_default=True,
    help="Draw at most this many nodes in graph.html, shared code first; 0 draws all.",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="OWNER/REPO=PATH[@REV]",
    help="Resolve the files and symbols named in that repository's PRs against this checkout "
    "(a git repository, read at REV or HEAD, or a plain folder). Repeatable. The index is "
    "cached by commit in OUTPUT/.kgraph/. A git repository's history up to REV is read too: "
    "each PR is linked to the commit that merged it, and gets what that commit changed.",
)
@click.option(
    "--no-history",
    is_flag=True,
    help="Read --source git repositories at REV only, not their history: no commit links, "
    "and no coupling (coupling is counted over the history).",
)
@click.option(
    "--history-since",
    metavar="YYYY-MM-DD",
    help="Count a git --source's changes from this day on for coupling (default: all "
    "history up to REV).",
)
@click.option(
    "--no-renames",
    is_flag=True,
    help="Count a renamed file's changes under each name it had, as code-maat does; by "
    "default they count under its name at REV.",
)
@click.option(
    "--coupling-min-revs",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Keep a coupled pair when its files' mean revisions reach this (code-maat's -n).",
)
@click.option(
    "--coupling-min-shared-revs",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Keep a coupled pair when its files changed together this often (code-maat's -m).",
)
@click.option(
    "--coupling-min-degree",
    type=click.IntRange(min=0),
    default=30,
    show_default=True,
    help="Keep a coupled pair of at least this degree, in percent (code-maat's -i).",
)
@click.option(
    "--coupling-max-degree",
    type=click.IntRange(min=0),
    default=100,
    show_default=True,
    help="Keep a coupled pair of at most this degree, in percent (code-maat's -x).",
)
@click.option(
    "--coupling-max-changeset-size",
    type=click.IntRange(min=1),
    default=30,
    show_default=True,
    help="Leave out changes of more files than this from coupling (code-maat's -s).",
)
@click.option(
    "--function-coupling",
    is_flag=True,
    help="Count the coupling of functions too, in files with --function-coupling-min-revs "
    "revisions or more: it reads those files' diffs (vLLM's history: about 15 s, cached).",
)
@click.option(
    "--function-coupling-min-revs",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Count the functions of files that changed at least this often.",
)
@click.option(
    "--no-coupling",
    is_flag=True,
    help="Count no coupling: no kg:Coupling between files (the history is still read for "
    "commit links).",
)
@click.option("--strict", is_flag=True, help="Exit 1 on any warning, not only on lost entries.")
@click.option(
    "--report",
    "report",
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
    provenance: str,
    catalogs: tuple[Path, ...],
    pattern_threshold: float,
    topics: tuple[Path, ...],
    html_max_nodes: int,
    sources: tuple[str, ...],
    history_since: str | None,
    no_renames: bool,
    coupling_min_revs: int,
    coupling_min_shared_revs: int,
    coupling_min_degree: int,
    coupling_max_degree: int,
    coupling_max_changeset_size: int,
    function_coupling: bool,
    function_coupling_min_revs: int,
    no_coupling: bool,
    no_history: bool,
    strict: bool,
    report: Path | None,
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
    built = api.build(
        inputs,
        out_dir,
        input_format=input_format,
        base=base,
        only=only,
        share_limit=share_limit,
        provenance=provenance,
        catalogs=catalogs,
        pattern_threshold=pattern_threshold,
        topics=topics,
        html_max_nodes=html_max_nodes,
        sources=sources,
        coupling=None
        if no_coupling
        else api.CouplingOptions(
            min_revs=coupling_min_revs,
            min_shared_revs=coupling_min_shared_revs,
            min_degree=coupling_min_degree,
            max_degree=coupling_max_degree,
            max_changeset_size=coupling_max_changeset_size,
            follow_renames=not no_renames,
            since=history_since,
            functions=function_coupling,
            function_min_revs=function_coupling_min_revs,
        ),
        history=not no_history,
        strict=strict,
        report=report,
        jobs=jobs,
        cache=not no_cache,
        # A progress line only for a person watching: never in a pipeline's log.
        progress=sys.stderr if not quiet and sys.stderr.isatty() else None,
        waiting=lambda: click.echo(
            f"kgraph: waiting for another build into {out_dir} to end", err=True
        ),
    )
    # The report is written by now: a reader of stdout that went away cannot lose it.
    for problem in built.problems:
        _say(str(problem), err=True)
    if not quiet:
        _say(built.summary())
    if built.problems:
        _say(built.problem_count(), err=True)
    if built.report_error:
        _say(built.report_error, err=True)
    raise errors.BuildFinished(built.exit_code)


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
    """Say what NEW_DIR's build added to OLD_DIR's, and what went away: PRs, shared-code
    links, pattern applications, decisions and commit links.

    Both are `kgraph build` output folders (their graph.json is read). The first line is
    a one-line summary a pipeline can post to chat; details follow.
    """
    result = api.diff(old_dir, new_dir)
    if output_format == "json":
        click.echo(json.dumps(result.as_json(), ensure_ascii=False, indent=1))
        return
    click.echo(result.headline())
    for line in result.details():
        click.echo(line)


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
    rule of each kind. Then patterns one by one, and patterns at several confidence
    thresholds (build with --pattern-threshold 0 to see them all).
    """
    result = api.evaluate(graph, gold_path)
    click.echo(result.table())
    click.echo()
    click.echo(result.pattern_table())
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
    default=api.DEFAULT_MAX_NODES,
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
    page = api.draw(graph_dir, focus=focus, depth=depth, max_nodes=max_nodes, page=out_file)
    click.echo(f"wrote {page}")


def _password(user: str | None, password_env: str) -> str | None:
    """The password for --user, from the environment: never from the command line."""
    if user is None:
        return None
    password = os.environ.get(password_env)
    if password is None:
        raise errors.UsageError(
            f"--user {user} needs the password in the environment variable {password_env}"
        )
    return password


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
        default=api.DEFAULT_TIMEOUT,
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
    type=click.Choice(api.RESULT_FORMATS),
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
        click.echo(api.list_queries(), nl=False)
        return
    wanted = (["OUTPUT_DIR"] if not endpoint else []) + (["QUERY.rq"] if not name else [])
    # --show runs nothing, so it needs no OUTPUT_DIR (but does not mind one).
    optional = 1 if show and not endpoint else 0
    if not len(wanted) - optional <= len(paths) <= len(wanted):
        raise errors.UsageError(
            f"expected {' '.join(wanted) or 'no arguments'} (got {len(paths)}); "
            "see kgraph query --help"
        )
    if name:
        query = api.sparql(name=name, params=params)
    else:
        query = api.sparql(file=paths[-1], params=params)
    if show:
        click.echo(query.text, nl=not query.text.endswith("\n"))
        return
    if endpoint:
        password = _password(user, password_env)
        answer = api.ask_endpoint(
            endpoint, query, graphs=graphs, user=user, password=password, timeout=timeout
        )
    else:
        built = api.open(paths[0])
        answer = built.query(query, cache=not no_cache)
        if built.loaded == "memory" and not no_cache:
            click.echo(
                f"kgraph: cannot keep a store in {paths[0]}; the graph was loaded into "
                "memory for this query only",
                err=True,
            )
    click.echo(api.render(answer, output_format, query.columns), nl=False)


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
    default=api.DEFAULT_GRAPH,
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
    type=click.Choice(api.PUSH_PROTOCOLS),
    default="auto",
    show_default=True,
    help="auto: the Graph Store protocol when --store is given, falling back to SPARQL "
    "Update if the server refuses it there.",
)
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1),
    default=api.DEFAULT_CHUNK,
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
    report = api.push(
        out_dir,
        endpoint,
        store=store_url,
        update=update_url,
        graph=graph,
        replace=replace,
        per_digest=graph_per_digest,
        chunk_size=chunk_size,
        protocol=protocol,
        user=user,
        password=_password(user, password_env),
        timeout=timeout,
        progress=(lambda _: None) if quiet else (lambda m: click.echo(m, err=True)),
    )
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
        sys.exit(errors.EXIT_PROBLEMS)
