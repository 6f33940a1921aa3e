"""How a kgraph command ends when it cannot do its job: one family of errors, and exit codes.

A `KgraphError` is a failure kgraph foresaw. Its message names what failed (`FILE:LINE: …`,
an option, a server's address) and is shown as it is, by the CLI on one line of stderr,
and by Python to a library user; its class says the exit code. Each module defines its own
subclasses beside the code that raises them (`QueryError`, `DiffError`, `SourceError`…),
so this module imports nothing of kgraph's layers and every layer can use it. It also
gives the CLI the two ways a command ends that are not errors (`kgraph.interrupt`): a
stop by SIGINT or SIGTERM, and a finished build.

Anything else that escapes a command is a bug or a condition nobody foresaw: the CLI prints
one line naming the command and the error, and exits 1; `kgraph --debug` shows the
traceback instead.
"""

from __future__ import annotations

from kgraph.interrupt import BuildFinished, Interrupted

__all__ = [
    "EXIT_OK",
    "EXIT_PROBLEMS",
    "EXIT_USAGE",
    "BuildFinished",
    "Interrupted",
    "KgraphError",
    "UsageError",
]

EXIT_OK = 0  # done: built cleanly, answered, pushed and counted
EXIT_PROBLEMS = 1  # done in part, or not at all: an entry was skipped, a file or server failed
EXIT_USAGE = 2  # the command line was wrong (click's own code for usage errors)


class KgraphError(Exception):
    """A failure kgraph foresaw; the message names the file, option or server."""

    exit_code = EXIT_PROBLEMS
    option: str | None = None  # the command-line option the error is about, if one is


class UsageError(KgraphError):
    """The command was given something it cannot use: an option, a query, a folder
    without a graph. Exit code 2, as for click's own usage errors."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        if option is not None:
            self.option = option
