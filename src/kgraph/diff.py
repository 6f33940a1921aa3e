"""What a new build added to an old one: the line a daily pipeline posts to chat.

Both builds are read from their `graph.json` (node-link JSON), so the diff needs nothing
but two output folders and knows no node kind beyond the few it reports: new PRs, new
shared-code links (`sharesCodeWith`, a pair counted once, with the code the two PRs share)
and new pattern applications (`appliesPattern` edges to any node, labelled by that node).
Ids are derived from content, so the same PR, file or pattern has the same id in both,
with one exception: a PR's id changes when a new digest gives its repository or number.
Such a PR is matched by the entries that describe it (an entry's id is its digest's name,
hash and line), and is neither new nor removed; its links and patterns are not new.

kgraph writes one record a line; such files are read line by line, keeping only the
records the diff needs, so diffing two 100k-entry builds does not load gigabytes of JSON.
Any other node-link JSON is read whole.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kgraph import outputs
from kgraph.errors import KgraphError
from kgraph.terminal import printable

SHARED = "sharesCodeWith"
APPLIES = "appliesPattern"
DESCRIBED = "describedBy"
TOUCHES = ("touchesFile", "mentionsSymbol")


class DiffError(KgraphError, ValueError):
    """An output folder cannot be read; the message names the file."""


@dataclass(slots=True)
class _Graph:
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (kind, label)
    shared: set[tuple[str, str]] = field(default_factory=set)  # pairs, smaller id first
    applies: set[tuple[str, str]] = field(default_factory=set)  # (PR, pattern)
    entries: dict[str, str] = field(default_factory=dict)  # entry -> the PR it describes
    kinds: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True, slots=True)
class GraphDiff:
    new_prs: list[tuple[str, str]]  # (id, title)
    removed_prs: list[tuple[str, str]]
    new_links: list[tuple[str, str, list[str]]]  # (PR, PR, labels of the code they share)
    new_patterns: list[tuple[str, str]]  # (PR id, pattern label)
    new_nodes: dict[str, int]  # kind -> how many more nodes of it
    labels: dict[str, str]  # id -> label, for every id above

    def headline(self) -> str:
        """One line: `kgraph: +3 PRs, +5 shared-code links, +2 patterns (…)`."""
        if not (self.new_prs or self.removed_prs or self.new_links or self.new_patterns):
            return "kgraph: nothing new"
        parts = [f"+{len(self.new_prs)} PRs"]
        if self.removed_prs:
            parts.append(f"-{len(self.removed_prs)} PRs")
        parts.append(f"+{len(self.new_links)} shared-code links")
        patterns = f"+{len(self.new_patterns)} patterns"
        if self.new_patterns:
            top = Counter(label for _, label in self.new_patterns).most_common(3)
            patterns += " (" + ", ".join(f"{label} ×{n}" for label, n in top) + ")"
        parts.append(patterns)
        return printable("kgraph: " + ", ".join(parts))

    def details(self) -> list[str]:
        lines: list[str] = []
        if self.new_prs:
            lines.append(f"New PRs ({len(self.new_prs)}):")
            lines.extend(f"  {pr_id}  {title}" for pr_id, title in self.new_prs)
        if self.removed_prs:
            lines.append(f"PRs no longer in the graph ({len(self.removed_prs)}):")
            lines.extend(f"  {pr_id}  {title}" for pr_id, title in self.removed_prs)
        if self.new_links:
            lines.append(f"New shared-code links ({len(self.new_links)}):")
            for a, b, via in self.new_links:
                shared = ", ".join(f"`{label}`" for label in via) or "code"
                lines.append(f"  {self.labels[a]}  <->  {self.labels[b]}  via {shared}")
        if self.new_patterns:
            lines.append(f"New pattern applications ({len(self.new_patterns)}):")
            lines.extend(f"  {label}: {self.labels[pr]}" for pr, label in self.new_patterns)
        if self.new_nodes:
            grown = ", ".join(f"{kind} +{n}" for kind, n in sorted(self.new_nodes.items()))
            lines.append(f"Nodes: {grown}")
        return [printable(line) for line in lines]

    def as_json(self) -> dict[str, object]:
        return {
            "headline": self.headline(),
            "newPullRequests": [{"id": i, "title": t} for i, t in self.new_prs],
            "removedPullRequests": [{"id": i, "title": t} for i, t in self.removed_prs],
            "newSharedCode": [{"a": a, "b": b, "via": via} for a, b, via in self.new_links],
            "newPatterns": [{"pr": pr, "pattern": label} for pr, label in self.new_patterns],
            "newNodes": self.new_nodes,
        }


def diff_outputs(old_dir: Path, new_dir: Path) -> GraphDiff:
    old_path, new_path = old_dir / "graph.json", new_dir / "graph.json"
    for folder, path in ((old_dir, old_path), (new_dir, new_path)):
        if outputs.stale(folder, path.name):
            raise DiffError(f"{path}:0: error: {outputs.STALE}")
    old, new = _read(old_path), _read(new_path)
    renamed = _renamed(old, new)
    kept = set(renamed.values())
    new_prs = sorted(
        (i, label)
        for i, (kind, label) in new.nodes.items()
        if kind == "PullRequest" and i not in old.nodes and i not in kept
    )
    removed = sorted(
        (i, label)
        for i, (kind, label) in old.nodes.items()
        if kind == "PullRequest" and i not in new.nodes and i not in renamed
    )

    def now(pr: str) -> str:
        return renamed.get(pr, pr)

    old_shared = {(min(now(a), now(b)), max(now(a), now(b))) for a, b in old.shared}
    pairs = sorted(new.shared - old_shared)
    via = _shared_code(new_path, pairs) if pairs else {}
    links = [(a, b, sorted(_label(new, e) for e in via.get((a, b), ()))) for a, b in pairs]
    old_applies = {(now(pr), pattern) for pr, pattern in old.applies}
    patterns = sorted((pr, _label(new, pattern)) for pr, pattern in new.applies - old_applies)
    grown = {k: n - old.kinds[k] for k, n in new.kinds.items() if n > old.kinds[k]}
    labels = {i: label for i, (_, label) in new.nodes.items()}
    labels.update({i: label for i, (_, label) in old.nodes.items() if i not in labels})
    return GraphDiff(new_prs, removed, links, patterns, grown, labels)


_KIND = re.compile(r'"kind": "([^"\\]*)"')
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
    one-record-a-line files they are counted without being parsed."""
    wanted = tuple(f'"relation": "{r}"' for r in edges)
    try:
        with path.open("r", encoding="utf-8") as handle:
            first = handle.readline()
            if first.startswith('{"directed"') and first.rstrip().endswith('"nodes": ['):
                section = "node"
                for number, line in enumerate(handle, start=2):
                    if line.startswith('"edges"'):
                        section = "edge"
                        continue
                    if not line.startswith("{"):
                        continue
                    if section == "node":
                        found = _KIND.search(line)
                        kind = found.group(1) if found else ""
                        if kind in _BULK:
                            yield section, kind, None
                            continue
                    elif not any(w in line for w in wanted):
                        continue
                    try:
                        record = json.loads(line.rstrip().rstrip(","))
                    except ValueError as err:
                        raise DiffError(f"{path}:{number}: error: invalid JSON ({err})") from None
                    yield section, str(record.get("kind", "")), record
                return
            handle.seek(0)
            document = json.load(handle)
    except OSError as err:
        raise DiffError(f"{path}:0: error: cannot read: {err.strerror}") from None
    except ValueError as err:
        raise DiffError(f"{path}:1: error: not node-link JSON ({err})") from None
    except RecursionError:
        raise DiffError(f"{path}:1: error: not node-link JSON (nested too deep)") from None
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
        raise DiffError(f"{path}:1: error: not node-link JSON (no 'nodes' list)")
    for node in document["nodes"]:
        yield "node", str(node.get("kind", "")), node
    for edge in document.get("edges") or document.get("links") or []:
        if edge.get("relation", edge.get("key")) in edges:
            yield "edge", "", edge


def _read(path: Path) -> _Graph:
    graph = _Graph()
    for section, kind, record in _records(path, (SHARED, APPLIES, DESCRIBED)):
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
        elif relation == APPLIES:
            graph.applies.add((source, target))
        elif relation == DESCRIBED:
            graph.entries[target] = source
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
