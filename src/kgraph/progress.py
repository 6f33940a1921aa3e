"""A progress line on stderr for long builds, drawn only where someone is watching.

`kgraph build` runs unattended in pipelines, where a redrawn line is noise in the log; the
CLI turns progress on only when stderr is a terminal and `--quiet` is not given. A
disabled `Progress` costs a method call.
"""

from __future__ import annotations

import time
from typing import TextIO

BAR = 24


class Progress:
    def __init__(self, stream: TextIO | None = None, interval: float = 0.1) -> None:
        self.stream = stream  # None: draw nothing
        self.interval = interval
        self.label = ""
        self.unit = ""
        self.total = 0
        self.done = 0
        self.started = self.drawn = 0.0

    def stage(self, label: str, total: int = 0, unit: str = "") -> None:
        """Start a stage; with `total`, a bar that `advance` fills."""
        self.label, self.total, self.unit, self.done = label, total, unit, 0
        self.started = time.perf_counter()
        self._draw(force=True)

    def advance(self, count: int = 1) -> None:
        self.done += count
        self._draw(force=self.done == self.total)

    def clear(self) -> None:
        if self.stream is not None:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def _draw(self, force: bool = False) -> None:
        if self.stream is None:
            return
        now = time.perf_counter()
        if not force and now - self.drawn < self.interval:
            return
        self.drawn = now
        line = f"kgraph: {self.label}"
        if self.total:
            filled = BAR * self.done // self.total
            bar = "#" * filled + "-" * (BAR - filled)
            line += f" [{bar}] {self.done:,}/{self.total:,} {self.unit}"
        line += f" {now - self.started:.1f}s"
        self.stream.write("\r\x1b[K" + line)
        self.stream.flush()
