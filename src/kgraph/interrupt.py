"""Ctrl-C and SIGTERM: stop where the program is, clean up, and say so in one line.

kgraph runs unattended in pipelines, where a build is stopped by SIGTERM as often as by
Ctrl-C. Both raise `Interrupted` at the point the program had reached, so `finally` blocks
and the temporary-file cleanup of `export.write_atomic` run; the console script turns it
into one line on stderr and the shell's exit code 128 + signal number, never a traceback.

Python runs a signal handler between any two bytecodes, even inside a `__del__` method
(the `regex` module's, while it compiles a pattern), where an exception is printed and
dropped. So the signal is also remembered, `checkpoint()` — called by the pipeline between
entries and before each write — raises it again, and the dropped one is not printed.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_held = False  # inside `signals_held`: remember a signal instead of raising it
_pending: list[int] = []  # the signals held back
_received: list[int] = []  # every signal raised so far, for `checkpoint`


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived. A BaseException, so that `except Exception` lets it pass
    and click does not turn it into its "Aborted!" message."""

    # What the stop left behind: a command that writes elsewhere than files says its own.
    aftermath = "no output file was left half-written"

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def message(self) -> str:
        name = signal.Signals(self.signum).name
        return f"kgraph: interrupted by {name}; {self.aftermath}"


class BuildFinished(SystemExit):
    """`kgraph build` has written and reported everything: the console script may end the
    process at once, without freeing the graph (`kgraph.__main__`). Anything else that
    catches it, click's test runner included, sees a plain `SystemExit` with the code."""

    code: int


def raise_on_signals() -> None:
    """From now on SIGINT and SIGTERM raise `Interrupted` (once: a second one kills)."""
    for signum in SIGNALS:
        signal.signal(signum, _handle)
    sys.unraisablehook = _unraisable


def _unraisable(unraisable: Any) -> None:
    """An `Interrupted` dropped inside `__del__` is raised again by `checkpoint`: no traceback."""
    if not isinstance(unraisable.exc_value, Interrupted):
        sys.__unraisablehook__(unraisable)


def _handle(signum: int, frame: FrameType | None) -> None:
    if _held:
        _pending.append(signum)
        return
    for other in SIGNALS:  # a second Ctrl-C while cleaning up ends the process at once
        signal.signal(other, signal.SIG_DFL)
    _received.append(signum)
    raise Interrupted(signum)


def leave_stops_to_parent() -> None:
    """In a worker process: ignore Ctrl-C (it reaches the whole process group) and die on
    SIGTERM; the parent catches both, stops its workers and cleans up."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def checkpoint() -> None:
    """Raise `Interrupted` again if a signal arrived and its exception was swallowed."""
    if _received:
        raise Interrupted(_received[0])


@contextmanager
def signals_held() -> Iterator[None]:
    """Delay SIGINT and SIGTERM to the end of the block (a few renames that belong together).

    Only signals handled by `raise_on_signals` are held; SIGKILL cannot be, which is why
    every file is still renamed into place whole.
    """
    global _held
    _held = True
    _pending.clear()
    try:
        yield
    finally:
        _held = False
        if _pending:
            _handle(_pending.pop(0), None)
