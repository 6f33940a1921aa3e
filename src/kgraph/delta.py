"""Linking only what changed: the daily build adds a few digests to thousands.

`kgraph.link` links a whole corpus; most of what a new digest changes is local to the
PRs it describes. This module takes the last build's graph and how it was linked
(`kgraph.linkstore`) and relinks only:

- the PRs the added, changed and removed digests describe: every title they name is
  grouped again (`link._group_pull_requests`), with every other title whose PRs merge
  with those by id (`link._merged_by_id`) or that took its repository from a code name
  whose repositories changed (`link.infer_repo_from`);
- the PRs naming a file or symbol that the new names make merge otherwise
  (`link._canonical_paths`, `_canonical_symbols`);
- the entities those PRs reach: each entity's node and edges are made of the facts
  (`link.Facts`) of the keys naming it, each fact counted by the PRs that used it, so that
  a PR taken out leaves the facts of the others;
- the shared code: each piece of code knows the PRs touching it, directly or through a
  symbol's one home, so `prCount` and `sharesCodeWith` are made again only where those
  PRs changed.

The result is the graph a clean build of the same inputs gives, byte for byte, which
`tests/test_delta.py` checks on generated corpora for additions, edits, removals and
renames. Where the shortcut cannot know that (the inputs were read in another order, a
new repository renames a package, the store is damaged) `relink` returns None and the
build links the whole corpus.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

from kgraph.cache import ExtractedDigest
from kgraph.graph import Edge, KnowledgeGraph, Node, merged, node_id
from kgraph.link import (
    PROVENANCE_KINDS,
    CodeKey,
    ExtractedEntry,
    FactBook,
    FactKey,
    Linked,
    LinkOptions,
    PullRequest,
    PullRequestContext,
    _group_pull_requests,
    _infer_repo_from_source,
    _merged_by_id,
    _scope,
    add_pull_request,
    canonical_paths,
    canonical_symbols,
    code_keys,
    code_repositories,
    counted,
    digest_id,
    digest_node,
    entry_id,
    infer_repo_from,
    is_internal,
    merged_names,
    normalize_title,
    owner_and_name,
    pairs_code,
    path_heads,
    voting_keys,
)
from kgraph.linkstore import Damaged, Previous, Record, make_record, node_from, node_tuple
from kgraph.model import Digest, Mention, Problem, Severity
from kgraph.recognize import candidates, is_backticked, settle_bare_names
from kgraph.resolve import Resolver

OWNED_KINDS = frozenset({"PullRequest", "Entry", "Mention"})  # made by one PR alone
TOUCHES = ("touchesFile", "mentionsSymbol")


class CannotRelink(Exception):
    """The last build's state cannot tell what changed: link the whole corpus."""


# --- the corpus-wide state ---------------------------------------------------------------------


@dataclass(slots=True)
class DigestState:
    """One digest of a build, as the next build needs to know it without reading it."""

    id: str
    source: str
    sha256: str
    key: str  # of its extraction in the cache
    format: str
    date: str | None
    repo: str | None
    entries: list[tuple[int, str, str | None, str]]  # (line, normalized title, repo, PR id)
    read_problems: list[tuple[int, str, str, int]]  # (line, message, severity, skipped)
    extract_problems: list[tuple[int, str, str, int]]

    def row(self) -> tuple[object, ...]:
        return (
            self.id,
            self.source,
            self.sha256,
            self.key,
            self.format,
            self.date,
            self.repo,
            tuple(self.entries),
            tuple(self.read_problems),
            tuple(self.extract_problems),
        )

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> DigestState:
        first = row[:7]
        return cls(
            first[0], first[1], first[2], first[3], first[4], first[5], first[6],
            list(row[7]), list(row[8]), list(row[9]),
        )  # fmt: skip

    def digest(self) -> Digest:
        return Digest(self.source, self.format, self.date, self.repo, self.sha256)

    def problems(self, rows: Iterable[tuple[int, str, str, int]]) -> list[Problem]:
        """Problems of its rows, named by the file it is read from now."""
        return [Problem(self.source, line, m, Severity(sev), skip) for line, m, sev, skip in rows]

    @classmethod
    def of(cls, value: ExtractedDigest, key: str) -> DigestState:
        """The state of a digest just read."""
        digest = value.result.digest
        assert digest is not None
        entries = [(e.line, normalize_title(e.title), e.repo, "") for e in value.result.entries]
        return cls(
            digest_id(digest),
            digest.source,
            digest.sha256,
            key,
            digest.format,
            digest.date,
            digest.repo,
            entries,
            problem_rows(value.result.problems),
            problem_rows(value.problems),
        )


def problem_rows(problems: Iterable[Problem]) -> list[tuple[int, str, str, int]]:
    return [(p.line, p.message, p.severity.value, p.skipped_entries) for p in problems]


@dataclass(slots=True)
class DigestInput:
    """A digest of this build: its state, and its extraction when it was read this time
    (None for one the last build had: it is read from the cache when a PR needs it)."""

    state: DigestState
    path: str  # as given, to read it again
    extracted: ExtractedDigest | None = None


def bare_names(items: Iterable[ExtractedEntry]) -> dict[str, Any]:
    """What settles the bare names of the corpus (`kgraph.recognize`): how many entries
    backtick each symbol, and the titles of the entries holding each bare candidate."""
    backticked: dict[str, int] = defaultdict(int)
    held: dict[str, dict[str, int]] = defaultdict(dict)
    for item in items:
        _count_bare(backticked, held, item.mentions, normalize_title(item.entry.title), 1)
    return {"backticked": dict(backticked), "candidates": dict(held)}


def _count_bare(
    backticked: dict[str, int],
    held: dict[str, dict[str, int]],
    mentions: Iterable[Mention],
    title: str,
    step: int,
) -> None:
    mentions = list(mentions)
    for key in {m.key for m in mentions if is_backticked(m)}:
        if (n := backticked.get(key, 0) + step) > 0:
            backticked[key] = n
        else:
            backticked.pop(key, None)
    _count(held, candidates(mentions), title, step)


def state_of(
    linked: Linked,
    digests: Sequence[DigestInput],
    resolvers: Mapping[str, Resolver],
    kinds: dict[str, int],
    edges: int,
    bare: Mapping[str, Any],
) -> dict[str, Any]:
    """The corpus-wide state of a clean link (see `kgraph.linkstore`); `bare` is
    `bare_names` of the entries as extracted, before their bare names were settled."""
    pr_of = {entry_id(item): pr.id for pr in linked.prs for item in pr.items}
    rows = []
    for d in digests:
        d.state.entries = [
            (line, title, repo, pr_of[f"{d.state.id}/{line}".replace("digest/", "entry/", 1)])
            for line, title, repo, _ in d.state.entries
        ]
        rows.append(d.state.row())
    where = code_repositories(linked.pieces)
    orphans: dict[CodeKey, dict[str, int]] = defaultdict(dict)
    for piece in linked.pieces:
        if not piece.repo:
            _count(orphans, voting_keys(piece), _title(piece), 1)
    heads: dict[str, dict[str, int]] = defaultdict(dict)
    for pr in linked.prs:
        for item in pr.items:
            if not item.entry.repo:
                _count(heads, path_heads(item.mentions), normalize_title(item.entry.title), 1)
    paths: dict[str | None, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    names: dict[str | None, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for pr in linked.prs:
        file_keys, symbol_keys = merged_names(pr, resolvers.get(pr.repo or ""))
        for path in file_keys:
            group = paths[pr.repo][_basename(path)]
            group[path] = group.get(path, 0) + 1
        for name in symbol_keys:
            group = names[pr.repo][owner_and_name(name)[1]]
            group[name] = group.get(name, 0) + 1
    return {
        "digests": rows,
        "packages": dict(linked.packages),
        "where": dict(where),
        "orphans": dict(orphans),
        "heads": dict(heads),
        "paths": {scope: dict(groups) for scope, groups in paths.items()},
        "names": {scope: dict(groups) for scope, groups in names.items()},
        "counts": dict(kinds),
        "edges": edges,
        **bare,
    }


def _count(table: dict[Any, dict[str, int]], keys: Iterable[Any], name: str, step: int) -> None:
    for key in keys:
        counts = table.setdefault(key, {})
        if (n := counts.get(name, 0) + step) > 0:
            counts[name] = n
        else:
            counts.pop(name, None)
            if not counts:
                del table[key]


def _title(pr: PullRequest) -> str:
    return normalize_title(pr.items[0].entry.title)


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


# --- what a clean link keeps of each subject ---------------------------------------------------


def subject_states(linked: Linked) -> dict[str, Any]:
    """For each PR and each entity, what `relink` needs of it next time (see `EntityState`
    and `_pr_state`)."""
    book, shared = linked.book, linked.shared
    users: dict[FactKey, int] = defaultdict(int)
    for used in book.uses.values():
        for key in used:
            users[key] += 1
    parts: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    ids_of: dict[FactKey, tuple[str, ...]] = {}
    for key, facts in book.facts.items():
        for entity, fragment, edges in _split(facts.nodes, facts.edges):
            parts[entity].append((key, node_tuple(fragment), edges, users[key]))
        ids_of[key] = tuple(sorted({n.id for n in facts.nodes} | {e.source for e in facts.edges}))
    states: dict[str, Any] = {}
    for entity, keyed in parts.items():
        states[entity] = (
            tuple(sorted(keyed, key=_key_order)),
            tuple(sorted(shared.direct.get(entity, ()))),
            tuple(sorted(shared.via.get(entity, ()))),
        )
    for pr in linked.prs:
        derived = shared.derived.get(pr.id, set())
        uses = [(key, ids_of[key]) for key in book.uses.get(pr.id, ())]
        own = {f for f in derived if pr.id in shared.direct.get(f, ())}
        states[pr.id] = pr_state(pr.repo, uses, derived, own)
    return states


def pr_state(
    repo: str | None,
    uses: Iterable[tuple[FactKey, Sequence[str]]],
    derived: Iterable[str],
    named: Iterable[str],
) -> tuple[Any, ...]:
    """A PR's: its repository, the keys it used with the entities each made, the files it
    touches through a symbol's one home, and which of those its reviews also name."""
    ordered = sorted(derived)
    named = set(named)
    return (
        repo,
        tuple(sorted(((k, tuple(ids)) for k, ids in uses), key=_key_order)),
        tuple(ordered),
        tuple(f for f in ordered if f not in named),
    )


def _key_order(item: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple("" if part is None else f"{type(part).__name__}:{part}" for part in item[0])


def _split(
    nodes: Iterable[Node], edges: Iterable[Edge]
) -> list[tuple[str, Node | None, tuple[str, ...]]]:
    """Facts per entity: its node (or None) and its edges, flat (relation, target, …)."""
    by_id: dict[str, tuple[Node | None, list[str]]] = {}
    for node in nodes:
        by_id[node.id] = (node, [])
    for edge in edges:
        by_id.setdefault(edge.source, (None, []))[1].extend((edge.relation, edge.target))
    return [(entity, node, tuple(flat)) for entity, (node, flat) in by_id.items()]


# --- relinking ---------------------------------------------------------------------------------


@dataclass(slots=True)
class EntityState:
    """An entity (a file, symbol, issue, decision… shared by PRs): the facts of each key
    naming it, with how many PRs used the key, and the PRs touching it."""

    keys: dict[FactKey, list[Any]]  # key -> [its node (or None), its edges flat, users]
    direct: set[str]
    via: set[str]
    old: Record | None = None  # as the last build left it

    @classmethod
    def of(cls, record: Record | None) -> EntityState:
        if record is None:
            return cls({}, set(), set())
        keys, direct, via = record.state
        parts = {key: [node_from(raw), tuple(flat), users] for key, raw, flat, users in keys}
        return cls(parts, set(direct), set(via), record)

    def fragments(self) -> Node | None:
        """The node its keys' facts make, as `KnowledgeGraph.add` merges them: the one
        part when all are equal, else all merged, in any order (`graph.merged`)."""
        found = {part[0] for part in self.keys.values() if part[0] is not None}
        if not found:
            return None
        return reduce(merged, found)

    def edges(self, entity: str) -> list[Edge]:
        found = {
            Edge(entity, flat[i], flat[i + 1])
            for _, flat, _ in self.keys.values()
            for i in range(0, len(flat), 2)
        }
        return sorted(found, key=lambda e: (e.relation, e.target))

    def touched(self) -> set[str]:
        return self.direct | self.via

    def state(self) -> tuple[Any, ...]:
        keyed = [
            (key, node_tuple(node), flat, users) for key, (node, flat, users) in self.keys.items()
        ]
        return (
            tuple(sorted(keyed, key=_key_order)),
            tuple(sorted(self.direct)),
            tuple(sorted(self.via)),
        )


def _homes(edges: Iterable[Edge]) -> str | None:
    """The one file a symbol is defined in, if one (`link.derive_shared_code`)."""
    found = {e.target for e in edges if e.relation == "definedIn"}
    return next(iter(found)) if len(found) == 1 else None


@dataclass(slots=True)
class Relinked:
    records: dict[str, Record]  # every subject made again, changed or not
    gone: set[str]  # subjects of the last graph that are no more
    state: dict[str, Any]
    relinked_prs: int = 0


@dataclass(slots=True)
class _Old:
    """A PR of the last graph: its record, and its state's parts."""

    id: str
    record: Record
    repo: str | None
    uses: tuple[tuple[FactKey, tuple[str, ...]], ...]
    derived: tuple[str, ...]
    derived_only: tuple[str, ...]

    def own_edges(self) -> list[Edge]:
        """Its edges as its facts made them: without pairs and touches through homes."""
        only = set(self.derived_only)
        return [
            e
            for e in self.record.edges
            if e.relation != "sharesCodeWith"
            and not (e.relation == "touchesFile" and e.target in only)
        ]


@dataclass(slots=True)
class _New:
    """A PR as this build makes it: its own nodes and edges, the keys it used."""

    pr: PullRequest
    nodes: dict[str, Node]
    edges: dict[str, list[Edge]]
    uses: set[FactKey]

    def own_edges(self) -> list[Edge]:
        return self.edges.get(self.pr.id, [])


class Relinker:
    """One run of `relink` (see the module docstring); each phase is a method."""

    def __init__(
        self,
        previous: Previous,
        digests: Sequence[DigestInput],
        options: LinkOptions,
        resolvers: Mapping[str, Resolver],
        load: Callable[[DigestState], ExtractedDigest | None],
    ) -> None:
        self.previous = previous
        self.state = previous.state
        self.digests = list(digests)
        self.options = options
        self.resolvers = resolvers
        self.indexes = [resolver.index for resolver in resolvers.values()]
        self.load = load
        self.entities: dict[str, EntityState] = {}
        self.extractions: dict[tuple[str, str], dict[int, ExtractedEntry]] = {}
        self.old_prs: dict[str, _Old] = {}

    # --- reading what is needed ------------------------------------------------------------

    def record(self, subject: str) -> Record | None:
        try:
            return self.previous.record(subject)
        except Damaged as error:
            raise CannotRelink(str(error)) from None

    def entity(self, subject: str) -> EntityState:
        if (found := self.entities.get(subject)) is None:
            record = self.record(subject)
            if record is not None and record.state is None:
                raise CannotRelink(f"{subject} has no linking state")
            found = self.entities[subject] = EntityState.of(record)
        return found

    def old_pr(self, pr_id: str) -> _Old:
        if (found := self.old_prs.get(pr_id)) is None:
            record = self.record(pr_id)
            if record is None or record.state is None:
                raise CannotRelink(f"{pr_id} is not in the last graph")
            repo, uses, derived, only = record.state
            found = self.old_prs[pr_id] = _Old(pr_id, record, repo, uses, derived, only)
        return found

    def entries_of(
        self, digest: DigestState, given: DigestInput | None
    ) -> dict[int, ExtractedEntry]:
        """A digest's entries by line, with their mentions, read from the cache for a digest
        this build did not read."""
        memo = (digest.id, digest.source)
        if (found := self.extractions.get(memo)) is None:
            value = given.extracted if given is not None and given.extracted else self.load(digest)
            if value is None or value.result.digest is None:
                raise CannotRelink(f"the extraction of {digest.source} is not in the cache")
            found = {
                entry.line: ExtractedEntry(entry, value.result.digest, mentions)
                for entry, mentions in zip(value.result.entries, value.mentions, strict=True)
            }
            self.extractions[memo] = found
        return found

    def items(
        self, titles: Iterable[str], table: Mapping[str, list[tuple[DigestState, int]]]
    ) -> list[ExtractedEntry]:
        """The entries of these titles, their bare names settled as this build's corpus
        settles them, or, given the last build's table, as the last build's did."""
        found = []
        for title in sorted(titles):
            for digest, line in table.get(title, ()):
                entries = self.entries_of(digest, self.inputs.get(digest.id))
                if line not in entries:
                    raise CannotRelink(f"{digest.source}:{line} is not in its extraction")
                found.append(entries[line])
        return self.settled(found, old=table is self.old_titles)

    def settled(self, items: Sequence[ExtractedEntry], old: bool) -> list[ExtractedEntry]:
        names = self.old_backticked if old else self.state["backticked"]
        return settle_bare_names(items, self.indexes, names)

    def pieces(
        self,
        titles: Iterable[str],
        table: Mapping[str, list[tuple[DigestState, int]]],
        packages: Mapping[str, str] | None = None,
    ) -> list[PullRequest]:
        """The PRs of these titles before their repositories are taken from shared code
        (with the packages of this build, unless told)."""
        pieces = _group_pull_requests(self.items(titles, table), packages or self.packages)
        _infer_repo_from_source(pieces, self.resolvers)
        return pieces

    # --- the run ----------------------------------------------------------------------------

    def run(self) -> Relinked:
        self._digests()
        self._titles()
        self._repositories()
        self._group()
        self._names()
        self._retract()
        self._add()
        self._shared_code()
        return self._result()

    def _digests(self) -> None:
        """Which digests are new, gone, kept; give up when the kept ones would now be read
        in another order, or a new repository renames a package."""
        self.old_rows = [DigestState.from_row(row) for row in self.state["digests"]]
        old_by_id = {d.id: d for d in self.old_rows}
        self.inputs = {d.state.id: d for d in self.digests}
        kept = [d for d in self.digests if d.extracted is None]
        for d in kept:
            if d.state.id not in old_by_id:
                raise CannotRelink(f"{d.state.source} is not in the last build")
        self.kept_ids = {d.state.id for d in kept}
        self.removed = [o for o in self.old_rows if o.id not in self.kept_ids]
        self.added = [d for d in self.digests if d.extracted is not None]
        before = sorted(kept, key=lambda d: old_by_id[d.state.id].source)
        after = sorted(kept, key=lambda d: d.state.source)
        if [d.state.id for d in before] != [d.state.id for d in after]:
            raise CannotRelink("the digests kept are read in another order")
        packages = dict(self.options.packages)
        for given in self.digests:
            for _, _, repo, _ in given.state.entries:
                if repo:
                    packages.setdefault(repo.split("/")[1], repo)
        self.packages = packages
        self.old_packages = self.state["packages"]

    def _titles(self) -> None:
        self.old_titles: dict[str, list[tuple[DigestState, int]]] = defaultdict(list)
        self.old_pr_of: dict[tuple[str, int], str] = {}
        self.titles_of_pr: dict[str, set[str]] = defaultdict(set)
        for row in self.old_rows:
            for line, title, _, pr in row.entries:
                self.old_titles[title].append((row, line))
                self.old_pr_of[(row.id, line)] = pr
                self.titles_of_pr[pr].add(title)
        self.new_titles: dict[str, list[tuple[DigestState, int]]] = defaultdict(list)
        for given in self.digests:
            for line, title, _, _ in given.state.entries:
                self.new_titles[title].append((given.state, line))
        self.affected = {t for row in self.removed for _, t, _, _ in row.entries}
        self.affected |= {t for given in self.added for _, t, _, _ in given.state.entries}
        self.changed_titles = set(self.affected)
        # A package named otherwise moves the entries whose paths start with it.
        heads = self.state["heads"]
        for name in self.packages.keys() | self.old_packages.keys():
            if self.packages.get(name) != self.old_packages.get(name):
                self.affected |= set(heads.get(name, ()))
        # A name backticked for the first or the last time settles every bare one.
        backticked, held = self.state["backticked"], self.state["candidates"]
        self.old_backticked = frozenset(backticked)
        for rows, step in ((self.removed, -1), ([d.state for d in self.added], 1)):
            for row in rows:
                entries = self.entries_of(row, self.inputs.get(row.id) if step > 0 else None)
                for line, title, repo, _ in row.entries:
                    mentions = entries[line].mentions
                    if not repo:
                        _count(heads, path_heads(mentions), title, step)
                    _count_bare(backticked, held, mentions, title, step)
        for key in self.old_backticked ^ backticked.keys():
            self.affected |= set(held.get(key, ()))

    def _repositories(self) -> None:
        """The repositories each code name is seen in, and the titles whose PRs vote with
        a name whose repositories changed."""
        where, orphans = self.state["where"], self.state["orphans"]
        before: dict[CodeKey, frozenset[str]] = {}
        # Titles a package now names otherwise vote again: theirs count as changed too.
        changed = self.affected
        for pieces, step in (
            (self.pieces(changed, self.old_titles, self.old_packages), -1),
            (self.pieces(changed, self.new_titles), 1),
        ):
            for piece in pieces:
                if piece.repo:
                    for key in code_keys(piece):
                        before.setdefault(key, frozenset(where.get(key, ())))
                        _count(where, [key], piece.repo, step)
                else:
                    _count(orphans, voting_keys(piece), _title(piece), step)
        for key, repos in before.items():
            if frozenset(where.get(key, ())) != repos:
                self.affected |= set(orphans.get(key, ()))
        self.where = where

    def _group(self) -> None:
        """Group the affected titles and every title their PRs share an id with, until no
        PR reaches outside them."""
        while True:
            pieces = self.pieces(self.affected, self.new_titles)
            for piece in pieces:
                infer_repo_from(piece, self.where)
            prs = _merged_by_id(pieces)
            old_ids = {
                self.old_pr_of[(d.id, line)]
                for title in self.affected
                for d, line in self.old_titles.get(title, ())
            }
            more = set()
            for pr_id in old_ids | {pr.id for pr in prs}:
                more |= self.titles_of_pr.get(pr_id, set())
            more -= self.affected
            if not more:
                break
            self.affected |= more
        self.new_prs = prs
        self.old_ids = old_ids

    def _names(self) -> None:
        """The file and symbol names merged in each repository: counted for the PRs made
        again, and every PR naming one that now merges otherwise is made again too."""
        counted_old: set[str] = set()
        counted_new: set[str] = set()
        snapshots: dict[tuple[str, Any, str], frozenset[str]] = {}
        while True:
            self._count_names(counted_old, counted_new, snapshots)
            changed = self._canonical_changes(snapshots)
            prs = (
                set().union(*(self.entity(target).direct for target in changed))
                if changed
                else set()
            )
            titles = set().union(*(self.titles_of_pr.get(p, set()) for p in prs)) - self.affected
            if not titles:
                return
            self.affected |= titles
            self._group()

    def _count_names(
        self,
        counted_old: set[str],
        counted_new: set[str],
        snapshots: dict[tuple[str, Any, str], frozenset[str]],
    ) -> None:
        tables = {"paths": self.state["paths"], "names": self.state["names"]}
        old_items: dict[str, list[ExtractedEntry]] = defaultdict(list)
        for title in self.affected:
            for d, line in self.old_titles.get(title, ()):
                pr_id = self.old_pr_of[(d.id, line)]
                if pr_id not in counted_old:
                    old_items[pr_id].append(self.entries_of(d, self.inputs.get(d.id))[line])
        for pr_id, items in old_items.items():
            old_items[pr_id] = self.settled(items, old=True)
        new = {pr.id: pr for pr in self.new_prs if pr.id not in counted_new}
        for pr_id, items in old_items.items():
            old = PullRequest(self.old_pr(pr_id).repo, None, items, "")
            counted_old.add(pr_id)
            made = new.get(pr_id)
            if (
                made is not None
                and made.repo == old.repo
                and self._names_of(made) == self._names_of(old)
            ):
                counted_new.add(pr_id)  # the same names in the same repository: no change
                del new[pr_id]
                continue
            self._count_pr(old, -1, tables, snapshots)
        for pr_id, pr in new.items():
            counted_new.add(pr_id)
            self._count_pr(pr, 1, tables, snapshots)

    def _names_of(self, pr: PullRequest) -> tuple[set[str], set[str]]:
        return merged_names(pr, self.resolvers.get(pr.repo or ""))

    def _count_pr(
        self,
        pr: PullRequest,
        step: int,
        tables: Mapping[str, Any],
        snapshots: dict[tuple[str, Any, str], frozenset[str]],
    ) -> None:
        files, symbols = self._names_of(pr)
        for table, keys, group_of in (
            ("paths", files, _basename),
            ("names", symbols, lambda name: owner_and_name(name)[1]),
        ):
            groups = tables[table].setdefault(pr.repo, {})
            for key in keys:
                group = group_of(key)
                snapshots.setdefault((table, pr.repo, group), frozenset(groups.get(group, ())))
                _count(groups, [group], key, step)
            if not groups:
                del tables[table][pr.repo]

    def _canonical_changes(self, snapshots: dict[tuple[str, Any, str], frozenset[str]]) -> set[str]:
        """The entities a name denoted that it no longer does: their PRs are made again."""
        changed: set[str] = set()
        for (table, scope, group), before in snapshots.items():
            after = frozenset(self.state[table].get(scope, {}).get(group, ()))
            if after == before:
                continue
            canonical = canonical_paths if table == "paths" else canonical_symbols
            old, new = canonical(before), canonical(after)
            for key in before & after:
                if old[key] != new[key]:
                    if table == "paths":
                        changed.add(node_id("file", *_scope(scope), *old[key].split("/")))
                    else:
                        changed.add(node_id("symbol", *_scope(scope), old[key]))
        for table, scope, group in list(snapshots):
            now = frozenset(self.state[table].get(scope, {}).get(group, ()))
            snapshots[(table, scope, group)] = now
        return {target for target in changed if self.record(target) is not None}

    def _retract(self) -> None:
        """Take the last build's versions of the PRs made again out of their entities."""
        self.gone: set[str] = {digest_node_id for digest_node_id in (d.id for d in self.removed)}
        for pr_id in self.old_ids:
            old = self.old_pr(pr_id)
            self.gone.add(pr_id)
            for edge in old.record.edges:
                if edge.relation == "describedBy":
                    self.gone.add(edge.target)
                    mentions = edge.target.replace("entry/", "mention/", 1) + "/"
                    self.gone.update(self.previous.ids[i] for i in self.previous.range_of(mentions))
            for key, ids in old.uses:
                for subject in ids:
                    part = self.entity(subject).keys.get(key)
                    if part is None:
                        raise CannotRelink(f"{pr_id} used a key {subject} does not know")
                    part[2] -= 1
                    if part[2] <= 0:
                        del self.entity(subject).keys[key]
            for edge in old.record.edges:
                if edge.relation in TOUCHES:
                    self.entity(edge.target).direct.discard(pr_id)
            for file in old.derived:
                self.entity(file).via.discard(pr_id)

    def _add(self) -> None:
        """Make the PRs again, each into a graph of its own, and add their facts."""
        context = PullRequestContext(
            self.options.knowledge, PROVENANCE_KINDS[self.options.provenance]
        )
        book = FactBook(record=True)
        self.made: dict[str, _New] = {}
        path_maps: dict[tuple[str | None, str], dict[str, str]] = {}
        name_maps: dict[tuple[str | None, str], dict[str, str]] = {}
        for pr in self.new_prs:
            resolver = self.resolvers.get(pr.repo or "")
            files, symbols = merged_names(pr, resolver)
            paths = {
                key: self._canonical(path_maps, "paths", pr.repo, _basename(key), canonical_paths)[
                    key
                ]
                for key in files
            }
            names = {
                key: self._canonical(
                    name_maps, "names", pr.repo, owner_and_name(key)[1], canonical_symbols
                )[key]
                for key in symbols
            }
            graph = KnowledgeGraph()
            add_pull_request(graph, pr, paths, names, context, resolver, book)
            out = graph.out_edges()
            nodes = {n.id: n for n in graph.nodes.values() if n.kind in OWNED_KINDS}
            edges = {subject: list(out.get(subject, ())) for subject in nodes}
            self.made[pr.id] = _New(pr, nodes, edges, book.uses.get(pr.id, set()))
        self.ids_of: dict[FactKey, tuple[str, ...]] = {}
        for made in self.made.values():
            for key in made.uses:
                facts = book.facts[key]
                if key not in self.ids_of:
                    self.ids_of[key] = tuple(
                        sorted({n.id for n in facts.nodes} | {e.source for e in facts.edges})
                    )
                for subject, fragment, flat in _split(facts.nodes, facts.edges):
                    entity = self.entity(subject)
                    if (part := entity.keys.get(key)) is None:
                        entity.keys[key] = [fragment, flat, 1]
                    elif part[0] != fragment or part[1] != flat:
                        raise CannotRelink(f"the facts of {subject} differ from the last build's")
                    else:
                        part[2] += 1

    def _canonical(
        self,
        maps: dict[tuple[str | None, str], dict[str, str]],
        table: str,
        scope: str | None,
        group: str,
        canonical: Callable[[Iterable[str]], dict[str, str]],
    ) -> dict[str, str]:
        if (found := maps.get((scope, group))) is None:
            found = maps[(scope, group)] = canonical(
                self.state[table].get(scope, {}).get(group, ())
            )
        return found

    def _shared_code(self) -> None:
        """The PRs touching each entity, its `prCount`, and the pairs that share code."""
        for pr_id, made in self.made.items():
            for edge in made.own_edges():
                if edge.relation in TOUCHES:
                    entity = self.entity(edge.target)
                    node = entity.fragments()
                    if node is not None and is_internal(node):
                        entity.direct.add(pr_id)
        # Symbols whose one home changed: each of their PRs touches another file now.
        rehomed: set[str] = set()
        for subject, entity in list(self.entities.items()):
            old_home = _homes(entity.old.edges) if entity.old is not None else None
            if old_home != _homes(entity.edges(subject)):
                rehomed |= entity.direct
        self.derived: dict[str, set[str]] = {}
        for pr_id in set(self.made) | rehomed:
            targets = self._touch_targets(pr_id, own=True)
            derived = set()
            for target in targets:
                entity = self.entity(target)
                node = entity.fragments()
                if (
                    node is not None
                    and is_internal(node)
                    and (home := _homes(entity.edges(target)))
                ):
                    derived.add(home)
            if pr_id not in self.made:
                for file in self.old_pr(pr_id).derived:
                    self.entity(file).via.discard(pr_id)
            for file in derived:
                self.entity(file).via.add(pr_id)
            self.derived[pr_id] = derived
        # The PRs whose pairs may have changed.
        limit = self.options.share_limit
        pairing: set[str] = set(self.made) | rehomed
        for entity in self.entities.values():
            old = entity.old
            old_touched = set(old.state[1]) | set(old.state[2]) if old is not None else set()
            new_touched = entity.touched()
            was = (
                bool(old_touched)
                and old is not None
                and old.node is not None
                and pairs_code(old.node, len(old_touched), limit)
            )
            node = entity.fragments()
            now = (
                bool(new_touched) and node is not None and pairs_code(node, len(new_touched), limit)
            )
            if was != now or (now and old_touched != new_touched):
                pairing |= old_touched | new_touched
        existing = set(self.made) | {p for p in pairing if p not in self.old_ids}
        self.pairing = {p for p in pairing if p in existing}

    def _touch_targets(self, pr_id: str, own: bool) -> list[str]:
        if pr_id in self.made:
            edges = self.made[pr_id].own_edges()
        else:
            old = self.old_pr(pr_id)
            edges = old.own_edges() if own else old.record.edges
        return [e.target for e in edges if e.relation in TOUCHES]

    def _pairs(self, pr_id: str) -> set[str]:
        limit = self.options.share_limit
        targets = set(self._touch_targets(pr_id, own=True)) | self.derived_of(pr_id)
        partners: set[str] = set()
        for target in targets:
            entity = self.entity(target)
            touched = entity.touched()
            node = entity.fragments()
            if (
                touched
                and node is not None
                and is_internal(node)
                and pairs_code(node, len(touched), limit)
            ):
                partners |= touched
        partners.discard(pr_id)
        return partners

    def derived_of(self, pr_id: str) -> set[str]:
        if pr_id in self.derived:
            return self.derived[pr_id]
        return set(self.old_pr(pr_id).derived)

    def _result(self) -> Relinked:
        records: dict[str, Record] = {}
        for pr_id in self.pairing | set(self.made) | set(self.derived):
            records[pr_id] = self._pr_record(pr_id)
        for made in self.made.values():
            for subject, node in made.nodes.items():
                if subject != made.pr.id:
                    records[subject] = make_record(subject, node, made.edges.get(subject, []), None)
        for subject, entity in self.entities.items():
            if not entity.keys:
                self.gone.add(subject)
                continue
            made_node = entity.fragments()
            touched = entity.touched()
            if made_node is not None and touched:
                made_node = counted(made_node, len(touched))
            records[subject] = make_record(
                subject, made_node, entity.edges(subject), entity.state()
            )
        for d in self.added:
            records[d.state.id] = make_record(d.state.id, digest_node(d.state.digest()), [], None)
        self.gone -= records.keys()
        return Relinked(records, self.gone, self._state(records), len(self.made))

    def _pr_record(self, pr_id: str) -> Record:
        derived = self.derived_of(pr_id)
        node: Node | None
        if pr_id in self.made:
            made = self.made[pr_id]
            node = made.nodes[pr_id]
            own = made.own_edges()
            repo = made.pr.repo
            uses = [(key, self.ids_of[key]) for key in made.uses]
        else:
            old = self.old_pr(pr_id)
            node = old.record.node
            own = old.own_edges()
            repo, uses = old.repo, list(old.uses)
        named = {e.target for e in own if e.relation == "touchesFile"}
        edges = set(own)
        edges |= {Edge(pr_id, "touchesFile", f) for f in derived}
        edges |= {Edge(pr_id, "sharesCodeWith", p) for p in self._pairs(pr_id)}
        ordered = sorted(edges, key=lambda e: (e.relation, e.target))
        return make_record(pr_id, node, ordered, pr_state(repo, uses, derived, named))

    def _state(self, records: Mapping[str, Record]) -> dict[str, Any]:
        state = self.state
        pr_of_entry = {entry_id(item): pr.id for pr in self.new_prs for item in pr.items}
        rows = []
        for d in self.digests:
            entries = []
            for line, title, repo, pr in d.state.entries:
                eid = f"{d.state.id}/{line}".replace("digest/", "entry/", 1)
                entries.append((line, title, repo, pr_of_entry.get(eid, pr)))
            d.state.entries = entries
            rows.append(d.state.row())
        state["digests"] = rows
        state["packages"] = self.packages
        counts: dict[str, int] = dict(state["counts"])
        edges = state["edges"]
        for subject in self.gone | records.keys():
            old = self.record(subject)
            if old is not None and old.node is not None:
                counts[old.node.kind] -= 1
            if old is not None:
                edges -= len(old.edges)
        for record in records.values():
            if record.node is not None:
                counts[record.node.kind] = counts.get(record.node.kind, 0) + 1
            edges += len(record.edges)
        state["counts"] = {kind: n for kind, n in sorted(counts.items()) if n}
        state["edges"] = edges
        return state


def relink(
    previous: Previous,
    digests: Sequence[DigestInput],
    options: LinkOptions,
    resolvers: Mapping[str, Resolver],
    load: Callable[[DigestState], ExtractedDigest | None],
) -> Relinked | str:
    """The subjects this build changes of the last graph, or why only a whole link can
    tell (`CannotRelink`)."""
    try:
        return Relinker(previous, digests, options, resolvers, load).run()
    except CannotRelink as why:
        return str(why)
