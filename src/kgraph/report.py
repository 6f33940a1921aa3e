"""What a build went through, for pipelines: the exit code and the `--report` JSON file.

stderr is for people; a pipeline that must decide what to do about a skipped entry reads
the same problems here as data, with the counts that prove nothing disappeared:
`entriesRead == entriesInGraph + entriesSkipped`.
"""

from __future__ import annotations

import json

from kgraph import __version__
from kgraph.errors import EXIT_OK, EXIT_USAGE
from kgraph.errors import EXIT_PROBLEMS as EXIT_UNTRUSTED  # built, but an entry was skipped…
from kgraph.model import Severity
from kgraph.pipeline import BuildResult

__all__ = ["EXIT_OK", "EXIT_UNTRUSTED", "EXIT_USAGE", "exit_code", "render_report", "to_report"]

REPORT_VERSION = 1


def exit_code(result: BuildResult, strict: bool = False) -> int:
    """0 when the graph can be trusted; 1 when not, or, with `strict`, on any warning."""
    if not result.trusted or (strict and result.problems):
        return EXIT_UNTRUSTED
    return EXIT_OK


def summary_line(result: BuildResult) -> str:
    """The count that follows the problems on stderr."""
    errors = sum(1 for p in result.problems if p.severity is Severity.ERROR)
    warnings = len(result.problems) - errors
    line = f"kgraph: {len(result.problems)} problem(s) ({errors} error(s), {warnings} warning(s))"
    if result.entries_skipped:
        line += f", {result.entries_skipped} entries skipped"
    return line


def to_report(result: BuildResult, strict: bool = False) -> dict[str, object]:
    """Every problem as structured data, with the entry counts; no timings (deterministic)."""
    errors = sum(1 for p in result.problems if p.severity is Severity.ERROR)
    return {
        "kgraph": __version__,
        "reportVersion": REPORT_VERSION,
        "exitCode": exit_code(result, strict),
        "strict": strict,
        "summary": {
            "digests": len(result.digests),
            "entriesRead": result.entries_read,
            "entriesInGraph": result.entries_in_graph,
            "entriesSkipped": result.entries_skipped,
            "problems": len(result.problems),
            "errors": errors,
            "warnings": len(result.problems) - errors,
        },
        "outputs": [str(path) for path in result.outputs],
        # What the folder walks did not read: symbolic links, and kgraph's own outputs.
        "notRead": [{"path": p.path, "reason": p.reason} for p in result.passed],
        "problems": [
            {
                "file": p.source,
                "line": p.line,
                "severity": p.severity.value,
                "message": p.message,
                "skippedEntries": p.skipped_entries,
            }
            for p in result.problems
        ],
    }


def render_report(result: BuildResult, strict: bool = False) -> bytes:
    text = json.dumps(to_report(result, strict), ensure_ascii=False, indent=1) + "\n"
    return text.encode("utf-8", "backslashreplace")  # a stray surrogate never stops the report
