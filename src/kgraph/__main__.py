"""`python -m kgraph` and the `kgraph` console script: signal handlers first, then the CLI.

The handlers are installed before the CLI's heavy imports, so that Ctrl-C or SIGTERM at any
moment after start-up ends the build with one line on stderr instead of a traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import suppress

from kgraph.interrupt import SIGNALS, BuildFinished, Interrupted, raise_on_signals, signals_held


def main() -> None:
    raise_on_signals()
    try:
        with signals_held():  # loading compiles regexes in `__del__`-laden code: stop after it
            from kgraph.cli import cli

        cli(prog_name="kgraph")
    except Interrupted as stop:
        sys.stderr.write(stop.message() + "\n")
        sys.exit(stop.exit_code)
    except OSError as error:
        # Every command reports the files it cannot read or write; what is left is its own
        # output: an answer written to a full disk (`> /dev/full`) or a closed stream.
        with suppress(OSError, ValueError, AttributeError):
            sys.stderr.write(f"kgraph: cannot write the output: {error.strerror or error}\n")
        sys.exit(1)
    except BuildFinished as done:
        # Every output is written, renamed and reported. Freeing a large graph object by
        # object would only delay the exit (10 s at 100k entries), so the process ends here.
        _ignore_signals()
        for stream in (sys.stdout, sys.stderr):
            # A reader that went away, or a stream closed from the start (`>&-`, None):
            # the exit code counts.
            with suppress(OSError, ValueError, AttributeError):
                stream.flush()
        os._exit(done.code)
    finally:
        _ignore_signals()


def _ignore_signals() -> None:
    """The command is over and has said how it ended. Python restores the default handlers
    while it shuts down, so a signal now would kill the process and turn a finished
    build's exit code into death by signal."""
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


if __name__ == "__main__":
    main()
