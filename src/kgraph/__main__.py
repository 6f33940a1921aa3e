"""`python -m kgraph` and the `kgraph` console script: signal handlers first, then the CLI.

The handlers are installed before the CLI's heavy imports, so that Ctrl-C or SIGTERM at any
moment after start-up ends the build with one line on stderr instead of a traceback.
"""

from __future__ import annotations

import sys

from kgraph.interrupt import Interrupted, raise_on_signals


def main() -> None:
    raise_on_signals()
    try:
        from kgraph.cli import cli  # imported here: loading it takes a while, under the handlers

        cli(prog_name="kgraph")
    except Interrupted as stop:
        sys.stderr.write(stop.message() + "\n")
        sys.exit(stop.exit_code)


if __name__ == "__main__":
    main()
