"""`python -m kgraph` is the `kgraph` command."""

from kgraph.cli import cli

cli(prog_name="kgraph")
