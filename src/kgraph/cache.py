"""The extraction cache: what each digest gave, kept in the output folder between builds.

Reading and extracting is most of a build's work, and a daily pipeline adds a few digests
to thousands. `OUT/.kgraph/extract/` holds one JSON file per digest, named by a hash of
everything its extraction depends on: the file's bytes, the suffix of its name (which may
decide its format), `--format`, the pattern catalog and topic table, and kgraph's own
code. Not the file's folder or name: a pipeline that checks the same digests out into a
new folder every run finds every one of them here, and each is read back under the name
it has now. A changed digest or a new kgraph version gets a new name, so a stale result
is never read, and each file carries a hash of its contents, so a damaged one is never
trusted; `finish` removes the files no input uses any more, and `manifest.json` lists
the inputs of the last build with their hashes.

JSON, not pickle: the output folder may be shared, and loading it must not run code. A
file that cannot be read back is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePath

import kgraph
from kgraph.atomic import read_sealed, write_atomic, write_sealed
from kgraph.model import Digest, Entry, Field, Kind, Mention, Problem, ReadResult, Severity

FOLDER = Path(".kgraph") / "extract"
MANIFEST = "manifest.json"


@dataclass(frozen=True, slots=True)
class ExtractedDigest:
    """One input read and extracted: its entries, their mentions, and its problems."""

    result: ReadResult
    mentions: tuple[tuple[Mention, ...], ...] = ()  # one tuple per entry of `result`
    problems: tuple[Problem, ...] = ()  # extraction's own (an entry cut to the readable part)
    sha256: str = ""  # of the input's bytes
    cached: bool = False  # read back from an earlier build
    known: bool = False  # the last build's link state has it: neither read nor extracted


# The code a digest's extraction depends on: the readers, the extractors, and what they
# import (tests/test_incremental.py checks this list against their imports). A change to
# the linker or the exporters keeps the cache; one to any of these drops it.
EXTRACTION_CODE = (
    "ingest",
    "extract",
    "atomic.py",
    "cache.py",
    "catalog.py",
    "corpus.py",
    "cue_syntax.py",
    "cues.py",
    "errors.py",
    "graph.py",
    "interrupt.py",
    "limits.py",
    "model.py",
    "pattern_model.py",
    "progress.py",
    "vocab.py",
)


@cache
def code_fingerprint() -> str:
    """A hash of kgraph's version and of the code in `EXTRACTION_CODE`."""
    root = Path(kgraph.__file__).parent
    digest = hashlib.sha256(kgraph.__version__.encode())
    for name in EXTRACTION_CODE:
        files = sorted((root / name).rglob("*.py")) if (root / name).is_dir() else [root / name]
        for path in files:
            relative = path.relative_to(root).as_posix()
            digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(sha256: str, source: str, forced: str | None, knowledge_fingerprint: str) -> str:
    """The key of a digest's extraction: its bytes' hash and what reading them depends on.
    Of its name, only the suffix counts: format detection reads it (`.md`, `.jsonl`)."""
    suffix = PurePath(source).suffix.lower() if source != "-" else "-"
    digest = hashlib.sha256()
    for part in (code_fingerprint(), knowledge_fingerprint, forced or "", suffix, sha256):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


class ExtractionCache:
    """Per-digest extraction results under `out_dir/.kgraph/extract/`."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.folder = out_dir / FOLDER

    def load(self, key: str, source: str) -> ExtractedDigest | None:
        """The extraction stored under `key`, as read from a file named `source`."""
        if (data := read_sealed(self.folder / f"{key}.json")) is None:
            return None  # absent, or changed since it was written: extract again
        try:
            return _decode(json.loads(data.decode("utf-8", "surrogatepass")), source)
        except (ValueError, KeyError, TypeError, IndexError, RecursionError):
            return None  # written by a kgraph that wrote it otherwise

    def store(self, key: str, value: ExtractedDigest) -> None:
        data = _encode(value).encode("utf-8", "surrogatepass")
        with suppress(OSError):  # a cache that cannot be written only costs the next build time
            write_sealed(self.folder / f"{key}.json", data)

    def finish(self, inputs: list[tuple[str, str, str]]) -> int:
        """Write the manifest of (source, sha256, key) and drop results no input uses;
        returns how many inputs of the previous build are gone: a digest of the same name
        and bytes in another folder is the same input."""
        keep = {f"{key}.json" for _, _, key in inputs}
        removed = len(self.previous_inputs() - {_identity(s, sha) for s, sha, _ in inputs})
        try:
            for name in os.listdir(self.folder):
                if name.endswith(".json") and name not in keep:
                    (self.folder / name).unlink(missing_ok=True)
            manifest = [{"source": s, "sha256": sha, "key": key} for s, sha, key in inputs]
            document = {"kgraph": kgraph.__version__, "inputs": manifest}
            text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
            write_atomic(self.folder.parent / MANIFEST, text.encode("utf-8", "surrogatepass"))
        except OSError:
            pass
        return removed

    def previous_inputs(self) -> set[tuple[str, str]]:
        """The (file name, sha256) of each input of the last build."""
        try:
            document = json.loads((self.folder.parent / MANIFEST).read_bytes())
            inputs = document["inputs"]
            return {_identity(str(i["source"]), str(i["sha256"])) for i in inputs}
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return set()


def _identity(source: str, sha256: str) -> tuple[str, str]:
    return PurePath(source).name, sha256


def _encode(value: ExtractedDigest) -> str:
    """Everything but the file's name, which every entry, problem and the digest carry:
    `_decode` gives them the name of the file read now."""
    r = value.result
    document = {
        "digest": None if r.digest is None else _digest_row(r.digest),
        "entries": [_entry_row(e) for e in r.entries],
        "mentions": value.mentions,  # named tuples: arrays, their StrEnums strings
        "problems": [_problem_row(p) for p in r.problems],
        "extraction": [_problem_row(p) for p in value.problems],
        "sha256": value.sha256,
    }
    # Written with surrogatepass: a lone surrogate (from a JSON Lines escape) round-trips.
    return json.dumps(document, ensure_ascii=False)


# By value: a dictionary lookup, where calling the enum runs Python code (a million a build).
_KINDS = {kind.value: kind for kind in Kind}
_FIELDS = {field.value: field for field in Field}


def _decode(document: dict[str, object], source: str) -> ExtractedDigest:
    d = document["digest"]
    result = ReadResult(
        None if d is None else Digest(source, *d),  # type: ignore[misc]
        tuple(Entry(source, *row) for row in document["entries"]),  # type: ignore[attr-defined]
        tuple(_problem(source, row) for row in document["problems"]),  # type: ignore[attr-defined]
    )
    mentions = tuple(
        tuple(
            Mention(_KINDS[k], key, surface, start, end, _FIELDS[f], detail)
            for k, key, surface, start, end, f, detail in entry
        )
        for entry in document["mentions"]  # type: ignore[attr-defined]
    )
    if len(mentions) != len(result.entries):
        raise ValueError("mentions do not match the entries")
    # Every mention's span must still read as its surface: a file edited or damaged into
    # other valid JSON is a miss, not a wrong graph (wrong types fail here too).
    for entry, found in zip(result.entries, mentions, strict=True):
        for m in found:
            text = entry.title if m.field is Field.TITLE else entry.text
            if text[m.start : m.end] != m.surface:
                raise ValueError(f"mention {m.surface!r} does not match its entry")
    extraction = tuple(_problem(source, row) for row in document["extraction"])  # type: ignore[attr-defined]
    return ExtractedDigest(result, mentions, extraction, str(document["sha256"]), cached=True)


def _digest_row(d: Digest) -> list[object]:
    return [d.format, d.date, d.repo, d.sha256]


def _entry_row(e: Entry) -> list[object]:
    return [e.line, e.title, e.text, e.repo, e.date, e.url, e.number]


def _problem_row(p: Problem) -> list[object]:
    return [p.line, p.message, p.severity.value, p.skipped_entries]


def _problem(source: str, row: list[object]) -> Problem:
    line, message, severity, skipped = row
    return Problem(source, int(line), str(message), Severity(str(severity)), int(skipped))  # type: ignore[call-overload]
