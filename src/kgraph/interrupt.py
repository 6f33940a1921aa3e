"""Ctrl-C and SIGTERM: stop where the program is, clean up, and say so in one line.

kgraph runs unattended in pipelines, where a build is stopped by SIGTERM as often as by
Ctrl-C. Both raise `Interrupted` at the point the program had reached, so `finally` blocks
and the temporary-file cleanup of `export.write_atomic` run; the console script turns it
into one line on stderr and the shell's exit code 128 + signal number, never a traceback.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_held = False  # inside `signals_held`: remember a signal instead of raising it
_pending: list[int] = []  # the signals remembered


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived. A BaseException, so that `except Exception` lets it pass
    and click does not turn it into its "Aborted!" message."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def message(self) -> str:
        name = signal.Signals(self.signum).name
        return f"kgraph: interrupted by {name}; no output file was left half-written"


def raise_on_signals() -> None:
    """From now on SIGINT and SIGTERM raise `Interrupted` (once: a second one kills)."""
    for signum in SIGNALS:
        signal.signal(signum, _handle)


def _handle(signum: int, frame: FrameType | None) -> None:
    if _held:
        _pending.append(signum)
        return
    for other in SIGNALS:  # a second Ctrl-C while cleaning up ends the process at once
        signal.signal(other, signal.SIG_DFL)
    raise Interrupted(signum)


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
