"""`python -m kgraph` and the `kgraph` console script: signal handlers first, then the CLI.

The handlers are installed before the CLI's heavy imports, so that Ctrl-C or SIGTERM at any
moment after start-up ends the build with one line on stderr instead of a traceback.
"""

from __future__ import annotations

import signal
import sys

from kgraph.interrupt import SIGNALS, Interrupted, raise_on_signals, signals_held


def main() -> None:
    raise_on_signals()
    try:
        with signals_held():  # loading compiles regexes in `__del__`-laden code: stop after it
            from kgraph.cli import cli

        cli(prog_name="kgraph")
    except Interrupted as stop:
        sys.stderr.write(stop.message() + "\n")
        sys.exit(stop.exit_code)
    finally:
        # The command is over and has said how it ended. Python restores the default
        # handlers while it shuts down, so a signal now would kill the process and turn a
        # finished build's exit code into death by signal.
        for signum in SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


if __name__ == "__main__":
    main()
