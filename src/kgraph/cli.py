"""The `kgraph` command line: click over `kgraph.pipeline`, nothing else.

Exit codes: 0 built cleanly; 1 built, but an entry was skipped or an input could not be
read (with --strict: any warning); 2 usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kgraph import __version__
from kgraph.export import EXPORTERS, exporter_named
from kgraph.ingest import FORMATS
from kgraph.link import LinkOptions
from kgraph.pipeline import BuildOptions, run
from kgraph.source import SourceError, SourceSpec
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
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="OWNER/REPO=PATH[@REV]",
    callback=lambda _ctx, _param, values: _source_specs(values),
    help="Resolve the files and symbols named in that repository's PRs against this checkout "
    "(a git repository, read at REV or HEAD, or a plain folder). Repeatable. The index is "
    "cached by commit in OUTPUT/.kgraph/.",
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
    sources: tuple[SourceSpec, ...],
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
        sources=sources,
    )
    try:
        result = run(list(inputs), out_dir, options)
    except SourceError as error:
        raise click.BadParameter(str(error), param_hint="--source") from error
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
