"""The `kgraph` command line: click over `kgraph.pipeline`, nothing else.

Exit codes: 0 built cleanly; 1 built, but an entry was skipped or an input could not be
read (with --strict: any warning); 2 usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kgraph import __version__, evaluate
from kgraph.catalog import CatalogError, load_knowledge
from kgraph.export import EXPORTERS, exporter_named, write_atomic
from kgraph.export.html import DEFAULT_MAX_NODES, HtmlOptions, render_json_file
from kgraph.export.subgraph import FocusError
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
    catalogs: tuple[Path, ...],
    topic_tables: tuple[Path, ...],
    html_max_nodes: int,
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
    if out_file is None:
        name = "focus-" + _slug("-".join(focus)) + ".html" if focus else "graph.html"
        out_file = graph_dir / name
    title = "kgraph: " + ", ".join(focus) if focus else "kgraph"
    options = HtmlOptions(title=title, max_nodes=max_nodes, focus=focus, depth=depth)
    try:
        page = render_json_file(source, options)
    except FocusError as error:
        raise click.BadParameter(str(error), param_hint="--focus") from error
    except (ValueError, KeyError, TypeError) as error:
        raise click.UsageError(f"{source}: not a kgraph graph.json ({error!r})") from error
    write_atomic(out_file, page.encode("utf-8"))
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
