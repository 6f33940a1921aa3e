"""The `kgraph` command line: click over `kgraph.pipeline`, nothing else.

Exit codes (kgraph.report): 0 built cleanly; 1 built, but an entry was skipped or an input
could not be read or an output written (with --strict: any warning); 2 usage error;
130/143 interrupted by SIGINT/SIGTERM (kgraph.interrupt).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import click

from kgraph import __version__, evaluate
from kgraph.catalog import CatalogError, load_knowledge
from kgraph.export import EXPORTERS, exporter_named, write_atomic
from kgraph.ingest import FORMATS
from kgraph.interrupt import Interrupted
from kgraph.iri import is_absolute_iri
from kgraph.link import LinkOptions
from kgraph.pipeline import BuildOptions, run
from kgraph.report import EXIT_UNTRUSTED, EXIT_USAGE, exit_code, render_report, summary_line
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
    default=LinkOptions().share_limit,
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
@click.option("--strict", is_flag=True, help="Exit 1 on any warning, not only on lost entries.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write every problem, with the entry counts, to this JSON file.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but problems.")
def build(
    inputs: tuple[str, ...],
    out_dir: Path,
    input_format: str | None,
    base: str,
    only: tuple[str, ...],
    share_limit: int,
    catalogs: tuple[Path, ...],
    topic_tables: tuple[Path, ...],
    strict: bool,
    report_path: Path | None,
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
    )
    try:
        result = run(list(inputs), out_dir, options)
    except KeyboardInterrupt:  # SIGINT without the console script's handler (kgraph.__main__)
        stop = Interrupted(signal.SIGINT)
        click.echo(stop.message(), err=True)
        sys.exit(stop.exit_code)
    for problem in result.problems:
        click.echo(str(problem), err=True)
    if not quiet:
        click.echo(result.summary())
    if result.problems:
        click.echo(summary_line(result), err=True)
    code = exit_code(result, strict)
    if report_path is not None:
        try:
            write_atomic(report_path, render_report(result, strict))
        except OSError as err:
            click.echo(f"{report_path}:0: error: cannot write the report: {err.strerror}", err=True)
            code = EXIT_UNTRUSTED
    sys.exit(code)


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
