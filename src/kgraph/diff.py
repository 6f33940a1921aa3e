"""What a new build added to an old one and what went away: the lines a daily pipeline
posts to chat.

Both builds are read from their `graph.json` (node-link JSON), so the diff needs nothing
but two output folders and knows no node kind beyond the few it reports, both ways: PRs,
shared-code links (`sharesCodeWith`, a pair counted once, with the code the two PRs share
in the build that has it), and the facts of `REPORTED`: pattern applications, decisions
and commit links, each a relation from a PR to a node labelled in the graph. A relation
added to the graph is reported by adding one line to `REPORTED`.
Ids are derived from content, so the same PR, file or pattern has the same id in both,
with one exception: a PR's id changes when a new digest gives its repository or number.
Such a PR is matched by the entries that describe it (an entry's id is its digest's name,
hash and line), and is neither new nor removed; its links and facts are neither.

kgraph writes one record a line; such files are read line by line, keeping only the
records the diff needs, so diffing two 100k-entry builds does not load gigabytes of JSON.
Any other node-link JSON is read whole.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from kgraph import jsonfile, outputs
from kgraph.errors import KgraphError
from kgraph.jsonfile import JsonFileError
from kgraph.terminal import printable

SHARED = "sharesCodeWith"
DESCRIBED = "describedBy"
TOUCHES = ("touchesFile", "mentionsSymbol")


@dataclass(frozen=True, slots=True)
class Reported:
    """A relation from a PR whose edges the diff lists, labelled by their target."""

    relation: str
    key: str  # singular, for JSON: {"pr": …, "pattern": …}, and newPatterns/removedPatterns
    plural: str  # in the headline: "+2 patterns"
    title: str  # of the details' sections: "New pattern applications"
    always: bool = False  # in the headline even when nothing changed
    tally: bool = False  # the headline names the three most added: "(SSOT ×2, …)"


REPORTED: tuple[Reported, ...] = (
    Reported("appliesPattern", "pattern", "patterns", "pattern applications", True, True),
    Reported("makesDecision", "decision", "decisions", "decisions"),
    # A PR's merge commit, from the history of a --source repository (kg:mergedAs).
    Reported("mergedAs", "commit", "commit links", "commit links"),
)


class DiffError(KgraphError, ValueError):
    """An output folder cannot be read; the message names the file."""


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Change(Generic[T]):
    """What one kind of fact gained and lost, each list sorted."""

    added: list[T] = field(default_factory=list)
    removed: list[T] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed)


@dataclass(slots=True)
class _Graph:
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (kind, label)
    shared: set[tuple[str, str]] = field(default_factory=set)  # pairs, smaller id first
    facts: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # relation -> edges
    entries: dict[str, str] = field(default_factory=dict)  # entry -> the PR it describes
    kinds: Counter[str] = field(default_factory=Counter)


Link = tuple[str, str, list[str]]  # (PR, PR, labels of the code they share)


@dataclass(frozen=True, slots=True)
class GraphDiff:
    prs: Change[tuple[str, str]]  # (id, title)
    links: Change[Link]
    facts: dict[str, Change[tuple[str, str]]]  # by REPORTED key: (PR id, target's label)
    nodes: dict[str, int]  # kind -> how many more (or, negative, fewer) nodes of it
    labels: dict[str, str]  # id -> label, for every id above

    def headline(self) -> str:
        """One line: `kgraph: +3 PRs, +5 shared-code links, -1 shared-code links, +2
        patterns (…)`; a removal only when there is one, a kind not `always` shown only
        when it changed."""
        if not (self.prs or self.links or any(self.facts.values())):
            return "kgraph: nothing new"
        parts = _counts(self.prs, "PRs") + _counts(self.links, "shared-code links")
        for kind in REPORTED:
            change = self.facts[kind.key]
            if change or kind.always:
                top = Counter(lb for _, lb in change.added).most_common(3) if kind.tally else []
                shown = " (" + ", ".join(f"{label} ×{n}" for label, n in top) + ")" if top else ""
                parts += _counts(change, kind.plural, shown)
        return printable("kgraph: " + ", ".join(parts))

    def details(self) -> list[str]:
        lines: list[str] = []

        def section(title: str, items: list[str]) -> None:
            if items:
                lines.append(f"{title} ({len(items)}):")
                lines.extend(f"  {item}" for item in items)

        section("New PRs", [f"{pr_id}  {title}" for pr_id, title in self.prs.added])
        section("PRs no longer in the graph", [f"{i}  {t}" for i, t in self.prs.removed])
        section("New shared-code links", [self._link(link) for link in self.links.added])
        section(
            "Shared-code links no longer in the graph",
            [self._link(link) for link in self.links.removed],
        )
        for kind in REPORTED:
            change = self.facts[kind.key]
            section(f"New {kind.title}", [f"{lb}: {self.labels[pr]}" for pr, lb in change.added])
            section(
                f"{kind.title.capitalize()} no longer in the graph",
                [f"{lb}: {self.labels[pr]}" for pr, lb in change.removed],
            )
        if self.nodes:
            changed = ", ".join(f"{kind} {n:+d}" for kind, n in sorted(self.nodes.items()))
            lines.append(f"Nodes: {changed}")
        return [printable(line) for line in lines]

    def _link(self, link: Link) -> str:
        a, b, via = link
        shared = ", ".join(f"`{label}`" for label in via) or "code"
        return f"{self.labels[a]}  <->  {self.labels[b]}  via {shared}"

    def as_json(self) -> dict[str, object]:
        document: dict[str, object] = {
            "headline": self.headline(),
            "newPullRequests": [{"id": i, "title": t} for i, t in self.prs.added],
            "removedPullRequests": [{"id": i, "title": t} for i, t in self.prs.removed],
            "newSharedCode": [{"a": a, "b": b, "via": via} for a, b, via in self.links.added],
            "removedSharedCode": [{"a": a, "b": b, "via": via} for a, b, via in self.links.removed],
        }
        for kind in REPORTED:
            change, name = self.facts[kind.key], kind.key.capitalize() + "s"
            document["new" + name] = [{"pr": pr, kind.key: lb} for pr, lb in change.added]
            document["removed" + name] = [{"pr": pr, kind.key: lb} for pr, lb in change.removed]
        document["newNodes"] = {k: n for k, n in self.nodes.items() if n > 0}
        document["removedNodes"] = {k: -n for k, n in self.nodes.items() if n < 0}
        return document


def _counts(change: Change, plural: str, shown: str = "") -> list[str]:
    return [f"+{len(change.added)} {plural}{shown}"] + (
        [f"-{len(change.removed)} {plural}"] if change.removed else []
    )


def diff_outputs(old_dir: Path, new_dir: Path) -> GraphDiff:
    old_path, new_path = old_dir / "graph.json", new_dir / "graph.json"
    for folder, path in ((old_dir, old_path), (new_dir, new_path)):
        if outputs.stale(folder, path.name):
            raise DiffError(f"{path}:0: error: {outputs.STALE}")
    old, new = _read(old_path), _read(new_path)
    renamed = _renamed(old, new)
    kept = set(renamed.values())
    prs = Change(
        sorted(
            (i, label)
            for i, (kind, label) in new.nodes.items()
            if kind == "PullRequest" and i not in old.nodes and i not in kept
        ),
        sorted(
            (i, label)
            for i, (kind, label) in old.nodes.items()
            if kind == "PullRequest" and i not in new.nodes and i not in renamed
        ),
    )

    def now(pr: str) -> str:
        return renamed.get(pr, pr)

    # Old pairs under today's ids, each with the pair it was in the old graph.
    old_shared = {(min(now(a), now(b)), max(now(a), now(b))): (a, b) for a, b in old.shared}
    added = sorted(new.shared - old_shared.keys())
    removed = sorted(old_shared.keys() - new.shared)
    links = Change(
        _with_code(new, new_path, {pair: pair for pair in added}),
        _with_code(old, old_path, {pair: old_shared[pair] for pair in removed}),
    )
    facts: dict[str, Change[tuple[str, str]]] = {}
    for kind in REPORTED:
        before = {(now(pr), target): target for pr, target in old.facts[kind.relation]}
        after = new.facts[kind.relation]
        facts[kind.key] = Change(
            sorted((pr, _label(new, target)) for pr, target in after - before.keys()),
            sorted((pr, _label(old, target)) for pr, target in before.keys() - after),
        )
    kinds = old.kinds.keys() | new.kinds.keys()
    nodes = {k: new.kinds[k] - old.kinds[k] for k in sorted(kinds) if new.kinds[k] != old.kinds[k]}
    labels = {i: label for i, (_, label) in new.nodes.items()}
    labels.update({i: label for i, (_, label) in old.nodes.items() if i not in labels})
    labels.update(
        {new_id: labels[old_id] for old_id, new_id in renamed.items() if old_id in labels}
    )
    return GraphDiff(prs, links, facts, nodes, labels)


def _with_code(
    graph: _Graph, path: Path, pairs: dict[tuple[str, str], tuple[str, str]]
) -> list[Link]:
    """Each pair (as reported) with the labels of the code its PRs share in `graph`, where
    the pair is the value (the ids it has there)."""
    if not pairs:
        return []
    via = _shared_code(path, list(pairs.values()))
    return [
        (a, b, sorted(_label(graph, e) for e in via.get(pairs[(a, b)], ())))
        for a, b in sorted(pairs)
    ]


_KIND = re.compile(rb'"kind": "([^"\\]*)"')
_BULK = ("Mention", "Entry")  # never reported: counted, not parsed


def _renamed(old: _Graph, new: _Graph) -> dict[str, str]:
    """Old PR id -> new PR id, for each PR of the old build that is gone under its id and
    whose entries all describe one PR of the new build."""
    gone: dict[str, set[str]] = {}
    for entry, pr in old.entries.items():
        if pr not in new.nodes:
            gone.setdefault(pr, set()).add(new.entries.get(entry, ""))
    return {pr: found.pop() for pr, found in gone.items() if len(found) == 1 and "" not in found}


def _label(graph: _Graph, node_id: str) -> str:
    return graph.nodes[node_id][1] if node_id in graph.nodes else node_id


def _records(path: Path, edges: tuple[str, ...]) -> Iterator[tuple[str, str, dict | None]]:
    """(section, kind, record) for every node, and for every edge whose relation is in
    `edges`, of a node-link JSON file. Bulk nodes come with `record=None`: on kgraph's
    one-record-a-line files they are counted without being parsed. Every record handed
    on has what `_read` takes from it (a node its "id", an edge its ends); anything else
    is a `DiffError` at its line."""
    wanted = tuple(f'"relation": "{r}"'.encode() for r in edges)
    try:
        with path.open("rb") as handle:
            first = handle.readline()
            if first.startswith(b'{"directed"') and first.rstrip().endswith(b'"nodes": ['):
                section = "node"
                for number, line in enumerate(handle, start=2):
                    if line.startswith(b'"edges"'):
                        section = "edge"
                        continue
                    if not line.startswith(b"{"):
                        continue
                    if section == "node":
                        found = _KIND.search(line)
                        kind = found.group(1).decode("utf-8", "replace") if found else ""
                        if kind in _BULK:
                            yield section, kind, None
                            continue
                    elif not any(w in line for w in wanted):
                        continue
                    record = _line_record(path, number, line.rstrip().rstrip(b","), section)
                    yield section, str(record.get("kind", "")), record
                return
            handle.seek(0)
            data = handle.read()
    except OSError as err:
        raise DiffError(f"{path}:0: error: cannot read: {err.strerror}") from None
    try:
        document = jsonfile.parse(data, str(path))
    except JsonFileError as error:
        raise DiffError(
            f"{path}:{error.line}: error: not node-link JSON ({error.reason})"
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
        raise DiffError(f"{path}:1: error: not node-link JSON (no 'nodes' list)")
    for node in document["nodes"]:
        _check(path, 1, node, "node")
        yield "node", str(node.get("kind", "")), node
    for edge in document.get("edges") or document.get("links") or []:
        _check(path, 1, edge, "edge")
        if edge.get("relation", edge.get("key")) in edges:
            yield "edge", "", edge


def _line_record(path: Path, number: int, line: bytes, section: str) -> dict:
    """The record on line `number` of a one-record-a-line graph.json."""
    try:
        record = jsonfile.parse(line, str(path))
    except JsonFileError as error:
        raise DiffError(f"{path}:{number}: error: {error.reason}") from None
    return _check(path, number, record, section)


_SCALAR = (str, int, float)


def _check(path: Path, line: int, record: object, section: str) -> dict:
    """`record` when it is a node with an "id" or an edge with a "source" and a "target"."""
    keys = ("id",) if section == "node" else ("source", "target")
    if not isinstance(record, dict) or not all(
        isinstance(record.get(k), _SCALAR) and not isinstance(record.get(k), bool) for k in keys
    ):
        named = " and ".join(f"'{k}'" for k in keys)
        raise DiffError(f"{path}:{line}: error: not node-link JSON (a {section} without {named})")
    return record


def _read(path: Path) -> _Graph:
    graph = _Graph(facts={kind.relation: set() for kind in REPORTED})
    relations = (SHARED, DESCRIBED, *graph.facts)
    for section, kind, record in _records(path, relations):
        if section == "node":
            graph.kinds[kind] += 1
            if record is not None:
                graph.nodes[str(record["id"])] = (kind, str(record.get("label", record["id"])))
            continue
        assert record is not None
        relation = record.get("relation", record.get("key"))
        source, target = str(record["source"]), str(record["target"])
        if relation == SHARED:
            graph.shared.add((min(source, target), max(source, target)))
        elif relation == DESCRIBED:
            graph.entries[target] = source
        elif relation in graph.facts:
            graph.facts[relation].add((source, target))
    return graph


def _shared_code(path: Path, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], set[str]]:
    """For each new pair, the files and symbols both PRs touch (a second, filtered pass)."""
    wanted = {pr for pair in pairs for pr in pair}
    touched: dict[str, set[str]] = {}
    for section, _, record in _records(path, TOUCHES):
        if section == "edge" and record is not None:
            source = str(record["source"])
            if source in wanted:
                touched.setdefault(source, set()).add(str(record["target"]))
    return {(a, b): touched.get(a, set()) & touched.get(b, set()) for a, b in pairs}
