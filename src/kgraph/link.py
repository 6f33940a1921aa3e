"""Entity resolution: from entries and their mentions to one linked graph.

The extractors see one entry at a time; only here do we know the whole corpus, so only
here can we decide that two digests describe the same PR, that `scheduler.py` is the
`vllm/v1/core/sched/scheduler.py` another review named, that `touch` is `CachePolicy.touch`,
and which PRs share code. Every rule merges only when the corpus leaves one candidate:
an ambiguous name stays its own node rather than being merged by guesswork.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from pathlib import PurePath

import regex

from kgraph import design
from kgraph.catalog import Knowledge, builtin_knowledge
from kgraph.commits import add_commits
from kgraph.graph import Date, Edge, KnowledgeGraph, Node, Value, merged, node_id
from kgraph.history import History
from kgraph.merges import Review, ReviewEntry
from kgraph.model import Digest, Entry, Kind, Mention
from kgraph.resolve import (
    Resolution,
    Resolver,
    Scope,
    Status,
    choose_repository,
    distinctive,
    home_mention,
    mentioned_file,
    mentioned_symbol,
)
from kgraph.source.index import SourceIndex

UNKNOWN_REPO = "_"  # the scope of PRs whose repository no digest names
EXTERNAL_SCOPE = "_external"
DEFAULT_PACKAGES: Mapping[str, str] = {"vllm": "vllm-project/vllm", "sglang": "sgl-project/sglang"}
SOURCE_ROOTS = ("python/", "src/", "lib/")
# Code touched by more PRs than this is a hub, not evidence that two PRs are related. On a
# Zipf-skewed corpus the pairs grow with the limit: at 100k entries, 20 gives about 10
# sharesCodeWith edges a PR, 200 gives 130 a PR (four times all other edges together).
DEFAULT_SHARE_LIMIT = 20

ENTITY_KINDS = frozenset({Kind.FILE, Kind.SYMBOL, Kind.EXTERNAL_SYMBOL, Kind.ISSUE})
RELATIONS: dict[Kind, str] = {
    Kind.FILE: "touchesFile",
    Kind.ISSUE: "references",
    Kind.SYMBOL: "mentionsSymbol",
    Kind.EXTERNAL_SYMBOL: "mentionsSymbol",
    **design.RELATIONS,
}


class Provenance(StrEnum):
    """Which mentions become `kg:Mention` nodes, the provenance of one span of one entry.

    `evidence` keeps those that are the evidence of a fact no other node shows: the clause
    that makes a decision, applies a pattern, gives a topic or names a person. A file, a
    symbol or an issue is named in the entry's own text, where queries and the page find
    it (`queries/who-touches.rq`), so their mentions, 60% of a large graph's triples, are
    kept only with `full`.
    """

    EVIDENCE = "evidence"
    FULL = "full"


PROVENANCE_KINDS: Mapping[Provenance, frozenset[Kind]] = {
    Provenance.EVIDENCE: frozenset(design.RELATIONS),
    Provenance.FULL: frozenset(RELATIONS),
}


@dataclass(frozen=True, slots=True)
class LinkOptions:
    packages: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_PACKAGES))
    share_limit: int = DEFAULT_SHARE_LIMIT
    knowledge: Knowledge = field(default_factory=builtin_knowledge)  # catalog and topic table
    provenance: Provenance = Provenance.EVIDENCE  # which mentions get a kg:Mention node


@dataclass(frozen=True, slots=True)
class ExtractedEntry:
    entry: Entry
    digest: Digest
    mentions: tuple[Mention, ...]


# Module-level, so that the regex audit of the tests finds them; `(?<!\s)` starts a tail
# only at the beginning of a blank run, keeping the search linear on long blank runs.
_NUMBER_TAIL = regex.compile(r"(?<!\s)\s*+\(#\d++\)\s*+$")
_BLANKS = regex.compile(r"\s+")


def normalize_title(title: str) -> str:
    """Titles compare equal across digests despite width, case, spacing and a `(#N)` tail."""
    text = unicodedata.normalize("NFKC", title)
    text = _NUMBER_TAIL.sub("", text)
    text = _BLANKS.sub(" ", text).strip().casefold()
    return text.rstrip("。.!！?？;；:：，, ")


def short_hash(text: str, length: int = 12) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def _file_name(source: str) -> str:
    """The name without its folders: a backslash separates folders only on Windows."""
    return PurePath(source).name or "stdin"


def digest_id(digest: Digest) -> str:
    return node_id("digest", f"{_file_name(digest.source)}-{digest.sha256[:8]}")


def entry_id(item: ExtractedEntry) -> str:
    return f"{digest_id(item.digest)}/{item.entry.line}".replace("digest/", "entry/", 1)


# --- repositories -----------------------------------------------------------------------------


def _repo_from_paths(mentions: Iterable[Mention], packages: Mapping[str, str]) -> str | None:
    """`vllm/v1/...` or `python/sglang/...` names its repository; conflicting paths name none."""
    found = {packages[head] for head in path_heads(mentions) if head in packages}
    return found.pop() if len(found) == 1 else None


def path_heads(mentions: Iterable[Mention]) -> set[str]:
    """The first folder of each path named, past `python/`, `src/` or `lib/`: a package."""
    heads = set()
    for mention in mentions:
        if mention.kind is Kind.FILE and "/" in mention.key:
            path = mention.key
            for root in SOURCE_ROOTS:
                path = path.removeprefix(root)
            heads.add(path.split("/", 1)[0])
    return heads


def _known_packages(items: Sequence[ExtractedEntry], options: LinkOptions) -> dict[str, str]:
    packages = dict(options.packages)
    for item in items:
        if item.entry.repo:
            packages.setdefault(item.entry.repo.split("/")[1], item.entry.repo)
    return packages


# --- pull requests ----------------------------------------------------------------------------


@dataclass(slots=True)
class PullRequest:
    repo: str | None
    number: int | None
    items: list[ExtractedEntry]
    repo_basis: str

    @property
    def id(self) -> str:
        scope = self.repo.split("/") if self.repo else [UNKNOWN_REPO]
        if self.number is not None:
            return node_id("pr", *scope, str(self.number))
        return node_id(
            "pr", *scope, "title-" + short_hash(normalize_title(self.items[0].entry.title))
        )


# How a PR's repository is known, best first.
_BASES = ("digest", "path", "source", "same-title", "shared-code", "unknown")


def _group_pull_requests(
    items: Sequence[ExtractedEntry], packages: Mapping[str, str]
) -> list[PullRequest]:
    """One PR per (repository, title, number) across all digests; `_merged_by_id`
    then joins those of one repository and number whatever their titles.

    An entry without a repository joins the PR of the same title when that title is known
    in exactly one repository under a number that does not contradict its own; likewise an
    entry without a number joins a numbered PR of the same title when there is exactly one.
    """
    by_title: dict[str, list[tuple[ExtractedEntry, str | None, str]]] = defaultdict(list)
    for item in items:
        entry = item.entry
        if entry.repo:
            repo, basis = entry.repo, "digest"
        elif inferred := _repo_from_paths(item.mentions, packages):
            repo, basis = inferred, "path"
        else:
            repo, basis = None, "unknown"
        by_title[normalize_title(entry.title)].append((item, repo, basis))

    prs: list[PullRequest] = []
    for title in sorted(by_title):
        group = by_title[title]
        by_repo: dict[str | None, list[tuple[ExtractedEntry, str]]] = defaultdict(list)
        for item, repo, basis in group:
            if repo is None:
                number = item.entry.number
                repos = {
                    r
                    for other, r, _ in group
                    if r and (number is None or other.entry.number in (None, number))
                }
                if len(repos) == 1:
                    repo, basis = repos.pop(), "same-title"
            by_repo[repo].append((item, basis))
        for repo in sorted(by_repo, key=lambda r: r or ""):
            members = by_repo[repo]
            numbers = sorted({m.entry.number for m, _ in members if m.entry.number is not None})
            by_number: dict[int | None, list[tuple[ExtractedEntry, str]]] = defaultdict(list)
            for item, basis in members:
                number = item.entry.number
                if number is None and len(numbers) == 1:
                    number = numbers[0]
                by_number[number].append((item, basis))
            for number in sorted(by_number, key=lambda n: -1 if n is None else n):
                chosen = sorted(
                    by_number[number], key=lambda mb: (mb[0].entry.source, mb[0].entry.line)
                )
                bases = {b for _, b in chosen}
                basis = min(bases, key=_BASES.index)
                prs.append(PullRequest(repo, number, [m for m, _ in chosen], basis))
    return prs


def _merged_by_id(prs: list[PullRequest]) -> list[PullRequest]:
    """PRs of one node id are one PR: those of one repository and number, though their
    digests titled them differently (a title edited between two days), and those a later
    step gave the repository of a PR of the same title. Two PRs without a repository and
    of one number are taken to be the same too, as their ids are. The PR is titled by its
    first entry, and keeps the place of the first of them."""
    merged: dict[str, PullRequest] = {}
    for pr in prs:
        if (first := merged.setdefault(pr.id, pr)) is not pr:
            first.items = sorted(
                first.items + pr.items, key=lambda item: (item.entry.source, item.entry.line)
            )
            first.repo_basis = min(first.repo_basis, pr.repo_basis, key=_BASES.index)
    return list(merged.values())


def _infer_repo_from_shared_code(prs: list[PullRequest]) -> None:
    """A PR with no repository gains one when its code names occur in exactly one repository.

    Requires a full path, or two distinctive symbols, so that `free` or `load` alone never
    moves a PR between repositories.
    """
    where = code_repositories(prs)
    for pr in prs:
        infer_repo_from(pr, where)


CodeKey = tuple[str, str]  # (a mention's kind, its key): a file or symbol name as written


def code_keys(pr: PullRequest) -> set[CodeKey]:
    """The files and symbols a PR's reviews name, as written."""
    return {
        (m.kind.value, m.key)
        for item in pr.items
        for m in item.mentions
        if m.kind is Kind.FILE or m.kind is Kind.SYMBOL
    }


def code_repositories(prs: Iterable[PullRequest]) -> dict[CodeKey, dict[str, int]]:
    """For each file and symbol name, the repositories of the PRs naming it, with how many
    of those PRs are of each; PRs without a repository count for none."""
    where: dict[CodeKey, dict[str, int]] = defaultdict(dict)
    for pr in prs:
        if pr.repo:
            for key in code_keys(pr):
                counts = where[key]
                counts[pr.repo] = counts.get(pr.repo, 0) + 1
    return where


def infer_repo_from(pr: PullRequest, where: Mapping[CodeKey, Mapping[str, int]]) -> None:
    """Give a PR without a repository the one its distinctive code names point to
    (`code_repositories`), when they point to one."""
    if pr.repo:
        return
    votes: dict[str, int] = defaultdict(int)
    for m in {m for item in pr.items for m in item.mentions}:
        if m.kind is not Kind.FILE and m.kind is not Kind.SYMBOL:
            continue
        repos = where.get((m.kind.value, m.key), {})
        if len(repos) == 1 and _distinctive(m):
            votes[next(iter(repos))] += 2 if m.kind is Kind.FILE and "/" in m.key else 1
    winners = [repo for repo, vote in votes.items() if vote >= 2]
    if len(winners) == 1:
        pr.repo, pr.repo_basis = winners[0], "shared-code"


def voting_keys(pr: PullRequest) -> set[CodeKey]:
    """The names a PR without a repository would take one from: its distinctive ones."""
    return {
        (m.kind.value, m.key)
        for item in pr.items
        for m in item.mentions
        if (m.kind is Kind.FILE or m.kind is Kind.SYMBOL) and _distinctive(m)
    }


def _distinctive(mention: Mention) -> bool:
    return (mention.kind is Kind.FILE and "/" in mention.key) or distinctive(mention.key)


def _infer_repo_from_source(prs: list[PullRequest], resolvers: Mapping[str, Resolver]) -> None:
    """A PR with no repository gains the one whose checkout its mentions resolve in."""
    for pr in prs:
        if pr.repo is None:
            mentions = [m for item in pr.items for m in item.mentions]
            if repo := choose_repository(mentions, resolvers):
                pr.repo, pr.repo_basis = repo, "source"


# --- files and symbols ------------------------------------------------------------------------


def _canonical_paths(paths: Iterable[str]) -> dict[str, str]:
    """Map each path to the one longer path of the same scope it abbreviates, if unique."""
    paths = set(paths)
    by_base: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        by_base[path.rsplit("/", 1)[-1]].append(path)
    canonical = {}
    for path in paths:
        candidates = [
            q for q in by_base[path.rsplit("/", 1)[-1]] if q != path and q.endswith("/" + path)
        ]
        maximal = [
            q for q in candidates if not any(o != q and o.endswith("/" + q) for o in candidates)
        ]
        canonical[path] = maximal[0] if len(maximal) == 1 else path
    return canonical


def _canonical_symbols(names: Iterable[str]) -> dict[str, str]:
    """`method` is `Class.method` (or `Class::method`) when exactly one class-qualified name
    in scope ends with it."""
    names = set(names)
    qualified: dict[str, list[str]] = defaultdict(list)
    for name in names:
        owner, last = owner_and_name(name)
        if owner and name[0].isupper():
            qualified[last].append(name)
    return {
        name: (
            qualified[name][0]
            if not owner_and_name(name)[0] and len(qualified.get(name, [])) == 1
            else name
        )
        for name in names
    }


_QUALIFIED = regex.compile(r"^(.+?)(?:\.|::)([^.:]++)$")


def owner_and_name(qualified: str) -> tuple[str, str]:
    """`("Class", "method")` for `Class.method` or `Class::method`; `("", name)` for a name."""
    found = _QUALIFIED.match(qualified)
    return (found.group(1), found.group(2)) if found else ("", qualified)


def _scope(repo: str | None) -> list[str]:
    return repo.split("/") if repo else [UNKNOWN_REPO]


# --- the graph --------------------------------------------------------------------------------


def link(
    items: Sequence[ExtractedEntry],
    digests: Sequence[Digest],
    options: LinkOptions | None = None,
    sources: Sequence[SourceIndex] = (),
    histories: Mapping[str, History] | None = None,
) -> KnowledgeGraph:
    """The linked graph; with `sources`, every file and symbol mention of a PR of those
    repositories is also resolved against the checkout (see `kgraph.resolve`); with
    `histories` (by repository), each of their PRs is linked to the commit that merged it
    and gets what it changed (see `kgraph.commits`)."""
    return link_corpus(items, digests, options or LinkOptions(), sources, histories=histories).graph


@dataclass(slots=True)
class Linked:
    """A linked corpus, and, when recorded, how it was linked: what the next build needs
    to link only what changed (`kgraph.delta`)."""

    graph: KnowledgeGraph
    packages: dict[str, str]
    pieces: list[PullRequest]  # each title's PRs, with the repository they had to vote with
    prs: list[PullRequest]
    book: FactBook
    shared: SharedCode


def link_corpus(
    items: Sequence[ExtractedEntry],
    digests: Sequence[Digest],
    options: LinkOptions,
    sources: Sequence[SourceIndex] = (),
    record: bool = False,
    histories: Mapping[str, History] | None = None,
) -> Linked:
    """`link`, keeping with `record` what each PR's making used (`FactBook`).

    Commit links (`histories`) are matched over all of a repository's PRs at once (one
    commit, one PR; a link only with a clear margin over the next candidate), so a build
    with a history is not recorded for the delta linker."""
    assert not (record and histories), "a build with a history links everything"
    packages = _known_packages(items, options)
    prs = _group_pull_requests(items, packages)
    resolvers = {index.repo: Resolver(index) for index in sources}
    _infer_repo_from_source(prs, resolvers)
    pieces = [PullRequest(pr.repo, pr.number, pr.items, pr.repo_basis) for pr in prs]
    _infer_repo_from_shared_code(prs)
    prs = _merged_by_id(prs)
    graph = KnowledgeGraph()
    for digest in digests:
        graph.add(digest_node(digest))
    paths_by_scope: dict[str | None, set[str]] = defaultdict(set)
    names_by_scope: dict[str | None, set[str]] = defaultdict(set)
    for pr in prs:
        paths, names = merged_names(pr, resolvers.get(pr.repo or ""))
        paths_by_scope[pr.repo] |= paths
        names_by_scope[pr.repo] |= names
    canonical_path = {scope: _canonical_paths(p) for scope, p in paths_by_scope.items()}
    canonical_name = {scope: _canonical_symbols(n) for scope, n in names_by_scope.items()}
    book = FactBook(record)
    context = PullRequestContext(options.knowledge, PROVENANCE_KINDS[options.provenance])
    resolutions: dict[str, Mapping[Mention, Resolution]] = {}
    for pr in prs:
        resolutions[pr.id] = add_pull_request(
            graph,
            pr,
            canonical_path.get(pr.repo, {}),
            canonical_name.get(pr.repo, {}),
            context,
            resolvers.get(pr.repo or ""),
            book,
        )
    changed: set[str] = set()
    if histories:
        with_history = [pr for pr in prs if pr.repo in histories]
        changed = add_commits(
            graph,
            [_review(pr) for pr in with_history],
            {pr.id: pr.repo or "" for pr in with_history},
            histories,
            resolvers,
            resolutions,
            options.knowledge,
        )
    shared = derive_shared_code(graph, options.share_limit, record, changed)
    return Linked(graph, packages, pieces if record else [], prs, book, shared)


def _review(pr: PullRequest) -> Review:
    """The PR as commit matching reads it."""
    return Review(
        pr.id,
        pr.number,
        tuple(
            ReviewEntry(i.entry.title, i.entry.text, i.entry.date or i.digest.date, i.mentions)
            for i in pr.items
        ),
    )


def digest_node(digest: Digest) -> Node:
    name = _file_name(digest.source)
    attrs: list[tuple[str, Value]] = [
        ("sourceName", name),
        ("format", digest.format),
        ("sha256", digest.sha256),
    ]
    if digest.date:
        attrs.append(("date", Date(digest.date)))
    return Node(digest_id(digest), "Digest", name, tuple(attrs))


def merged_names(pr: PullRequest, resolver: Resolver | None) -> tuple[set[str], set[str]]:
    """The file paths and symbol names of a PR that are merged by their spelling
    (`_canonical_paths`, `_canonical_symbols`): with a checkout, only those it lacks."""
    paths, names = set(), set()
    for item in pr.items:
        for m in item.mentions:
            if m.kind is Kind.FILE and not (resolver and resolver.file_candidates(m.key)):
                paths.add(m.key)
            elif m.kind is Kind.SYMBOL and not (resolver and resolver.symbol_candidates(m.key)):
                names.add(m.key)
    return paths, names


def canonical_paths(paths: Iterable[str]) -> dict[str, str]:
    return _canonical_paths(paths)


def canonical_symbols(names: Iterable[str]) -> dict[str, str]:
    return _canonical_symbols(names)


# A fact's key: what an entity's making depends on, (repository, kind, key, detail) of the
# mention that names it; ("repo", name) for a repository; with a checkout, where every
# mention is resolved in its PR's context, the PR and the mention's place in its making.
FactKey = tuple[str | int | None, ...]


@dataclass(frozen=True, slots=True)
class Facts:
    """What making one entity added: the entity (None for a mention that denotes none), the
    nodes and edges made, and the keys its making used besides (a symbol's home file)."""

    target: str | None
    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()
    requires: tuple[FactKey, ...] = ()


class FactBook:
    """The entities made so far, by the key of what they depend on: a corpus names the same
    symbol or file in many PRs, and without a checkout the entity depends on nothing else,
    so its nodes and edges, made once, need not be made again.

    Recording, it keeps each key's `Facts` and the keys each PR used: the next build can
    then take a PR out of the graph, and a node made of many PRs' facts is made again from
    those of the PRs left (`kgraph.delta`)."""

    def __init__(self, record: bool = False) -> None:
        self.record = record
        self.targets: dict[FactKey, str | None] = {}
        self.facts: dict[FactKey, Facts] = {}
        self.uses: dict[str, set[FactKey]] = {}  # by PR id

    def using(self, pr_id: str) -> set[FactKey] | None:
        if not self.record:
            return None
        return self.uses.setdefault(pr_id, set())

    def apply(
        self,
        graph: KnowledgeGraph,
        key: FactKey,
        make: Callable[[KnowledgeGraph], tuple[str | None, tuple[FactKey, ...]]],
        uses: set[FactKey] | None,
    ) -> str | None:
        """The entity of `key`, made into `graph` the first time it is met."""
        if not self.record:
            if (known := self.targets.get(key, _UNSEEN)) is not _UNSEEN:
                return known
            target, _ = make(graph)
            self.targets[key] = target
            return target
        if (facts := self.facts.get(key)) is None:
            made = KnowledgeGraph()
            target, requires = make(made)
            facts = Facts(target, tuple(made.nodes.values()), tuple(made.sorted_edges()), requires)
            self.facts[key] = facts
            apply_facts(graph, facts)
        if uses is not None:
            uses.add(key)
            uses.update(facts.requires)
        return facts.target


def apply_facts(graph: KnowledgeGraph, facts: Facts) -> None:
    for node in facts.nodes:
        graph.add(node)
    for edge in facts.edges:
        graph.link(*edge)


@dataclass(frozen=True, slots=True)
class PullRequestContext:
    """What a PR's nodes depend on besides its entries and the names merged in its scope."""

    knowledge: Knowledge
    kept: frozenset[Kind] = PROVENANCE_KINDS[Provenance.FULL]  # kinds that get Mention nodes


def add_pull_request(
    graph: KnowledgeGraph,
    pr: PullRequest,
    paths: Mapping[str, str],
    names: Mapping[str, str],
    context: PullRequestContext,
    resolver: Resolver | None = None,
    book: FactBook | None = None,
) -> Mapping[Mention, Resolution]:
    """The PR's node, its entries, and for each mention the entity it denotes, and a
    Mention node when its kind is `context.kept` (`Provenance`); returns how the checkout
    resolved its mentions (empty without one), which commit matching reads.

    The PR's own nodes (itself, its entries, their mentions) and edges go into `graph`;
    every other node, shared with other PRs, is made through `book` (`FactBook`).
    """
    book = book or FactBook()
    uses = book.using(pr.id)
    knowledge = context.knowledge
    first = pr.items[0].entry
    attrs: list[tuple[str, Value]] = [("title", first.title), ("repositoryBasis", pr.repo_basis)]
    if pr.number is not None:
        attrs.append(("number", pr.number))
    if urls := sorted({i.entry.url for i in pr.items if i.entry.url}):
        attrs.append(("url", urls[0]))
    # The general reader's advice; advice for named readers is a literal of its own.
    advice = [m.key for i in pr.items for m in i.mentions if m.kind is Kind.ADVICE and not m.detail]
    if advice:
        attrs.append(("readingAdvice", advice[0]))
    attrs += design.pr_literals(m for i in pr.items for m in i.mentions)
    pr_id = graph.add(Node(pr.id, "PullRequest", first.title, tuple(attrs)))
    if pr.repo:
        repo = pr.repo
        repo_id = book.apply(graph, ("repo", repo), lambda g: (_add_repository(g, repo), ()), uses)
        assert repo_id is not None
        graph.link(pr_id, "inRepository", repo_id)
    # With a checkout, a mention is resolved in the context of its PR's other mentions, so
    # each is its own fact, never remembered for another PR.
    resolved = resolver.resolve(m for i in pr.items for m in i.mentions) if resolver else {}
    calls = 0

    def denoted(m: Mention) -> str | None:
        nonlocal calls
        key: FactKey
        if resolver is None:
            key = (pr.repo, m.kind.value, m.key, m.detail)
        else:
            calls += 1
            key = (pr.id, calls)
        return book.apply(graph, key, lambda made: make(made, m), uses)

    def make(made: KnowledgeGraph, m: Mention) -> tuple[str | None, tuple[FactKey, ...]]:
        target = _entity_for(made, pr, m, paths, names, resolved, resolver) or (
            design.add_entity(made, _scope(pr.repo), m, knowledge)
        )
        if target is None or not m.detail.startswith("in:"):
            return target, ()
        found = resolved.get(m) if resolved else None  # a mention hashes in Python
        # "`lru.py` 的 `evict()`" says where a name is; with a checkout, only for a name
        # it lacks (an ambiguous one carries its candidates instead).
        if found is not None and found.status is not Status.MISSING:
            return target, ()
        home = home_mention(m.detail[3:])
        before = calls
        defined_in = denoted(home)
        if defined_in is None:
            return target, ()
        made.link(target, "definedIn", defined_in)
        key: FactKey = (pr.repo, home.kind.value, home.key, home.detail)
        return target, ((pr.id, before + 1) if resolver else key,)

    kept = context.kept
    for item in pr.items:
        entry = item.entry
        eid = entry_id(item)
        entry_attrs: list[tuple[str, Value]] = [
            ("line", entry.line),
            ("text", entry.text),
            ("title", entry.title),
        ]
        if date := entry.date or item.digest.date:
            entry_attrs.append(("date", Date(date)))
        graph.add(
            Node(eid, "Entry", f"{_file_name(entry.source)}:{entry.line}", tuple(entry_attrs))
        )
        graph.link(eid, "partOf", digest_id(item.digest))
        graph.link(pr_id, "describedBy", eid)
        mention_prefix = eid.replace("entry/", "mention/", 1)
        for m in item.mentions:
            target = denoted(m)
            if target is None:
                continue
            relation = RELATIONS.get(m.kind, "mentionsSymbol")
            graph.link(pr_id, relation, target)
            if m.kind not in kept:
                continue
            field = m.field.value
            mention_id = f"{mention_prefix}/{field}-{m.start}-{m.end}{design.mention_suffix(m)}"
            span = (("surface", m.surface), _pair("start", m.start), _pair("end", m.end))
            graph.add(
                Node(
                    mention_id,
                    "Mention",
                    m.surface,
                    (*span, _pair("field", field), *design.mention_attributes(m)),
                )
            )
            graph.link(mention_id, "inEntry", eid)
            graph.link(mention_id, "denotes", target)
    return resolved


def _add_repository(graph: KnowledgeGraph, repo: str) -> str:
    return graph.add(Node(_repo_id(repo), "Repository", repo))


_UNSEEN = "\0"  # no node id: ids are never empty
_NAMED = ("touchesFile", "mentionsSymbol")  # a PR's code, as its review names it
_CHANGED = ("changesFile", "changesSymbol")  # as its merge commit changed it


@lru_cache(maxsize=1024)
def _repo_id(repo: str) -> str:
    return node_id("repo", *repo.split("/"))


@lru_cache(maxsize=1 << 16, typed=True)
def _pair(name: str, value: Value) -> tuple[str, Value]:
    """One shared tuple for an attribute a million mentions repeat (`start` 12, `field`
    text): a tenth of a 100k-entry graph's memory went to such copies."""
    return name, value


def _entity_for(
    graph: KnowledgeGraph,
    pr: PullRequest,
    m: Mention,
    paths: Mapping[str, str],
    names: Mapping[str, str],
    resolved: Mapping[Mention, Resolution],
    resolver: Resolver | None,
) -> str | None:
    if m.kind not in ENTITY_KINDS:
        return None  # design knowledge: `design.add_entity`
    scope = _scope(pr.repo)
    repo_id = _repo_id(pr.repo) if pr.repo else None
    found = resolved.get(m) if resolved else None
    if found and resolver and repo_id and m.kind in (Kind.FILE, Kind.SYMBOL):
        where = Scope(tuple(scope), repo_id, resolver)
        if m.kind is Kind.FILE:
            return mentioned_file(graph, where, paths.get(m.key, m.key), found)
        return mentioned_symbol(graph, where, names.get(m.key, m.key), found)
    if m.kind is Kind.FILE:
        path = paths.get(m.key, m.key)
        fid = graph.add(
            Node(node_id("file", *scope, *path.split("/")), "SourceFile", path, (("path", path),))
        )
        if repo_id:
            graph.link(fid, "inRepository", repo_id)
        return fid
    if m.kind is Kind.SYMBOL:
        return _add_symbol(graph, scope, names.get(m.key, m.key), repo_id)
    if m.kind is Kind.EXTERNAL_SYMBOL:
        return graph.add(
            Node(
                node_id("symbol", EXTERNAL_SCOPE, m.key),
                "CodeSymbol",
                m.key,
                (
                    ("name", owner_and_name(m.key)[1]),
                    ("qualifiedName", m.key),
                    ("isExternal", True),
                ),
            )
        )
    if m.kind is Kind.ISSUE:
        repo = m.detail or pr.repo
        iid = graph.add(
            Node(
                node_id("issue", *_scope(repo), m.key),
                "Issue",
                f"#{m.key}",
                (("number", int(m.key)),),
            )
        )
        if repo and repo != pr.repo:
            graph.link(
                iid,
                "inRepository",
                graph.add(Node(node_id("repo", *repo.split("/")), "Repository", repo)),
            )
        elif repo_id:
            graph.link(iid, "inRepository", repo_id)
        return iid
    return None


def _add_symbol(
    graph: KnowledgeGraph, scope: list[str], qualified: str, repo_id: str | None
) -> str:
    owner, name = owner_and_name(qualified)
    sid = graph.add(
        Node(
            node_id("symbol", *scope, qualified),
            "CodeSymbol",
            qualified,
            (("name", name), ("qualifiedName", qualified), ("isExternal", False)),
        )
    )
    if repo_id:
        graph.link(sid, "inRepository", repo_id)
    if owner and owner_and_name(owner)[1][:1].isupper():
        graph.link(sid, "memberOf", _add_symbol(graph, scope, owner, repo_id))
    return sid


@dataclass(slots=True)
class SharedCode:
    """Which PRs touch each piece of internal code: directly (`direct`, their reviews name
    it) or a file through a symbol whose one home it is (`via`); kept, when recorded, with
    each PR's files touched that way (`derived`)."""

    direct: dict[str, set[str]]
    via: dict[str, set[str]]
    derived: dict[str, set[str]] = field(default_factory=dict)  # by PR id


def derive_shared_code(
    graph: KnowledgeGraph,
    share_limit: int,
    record: bool = False,
    changed: Collection[str] = frozenset(),
) -> SharedCode:
    """`sharesCodeWith` between PRs that touch a file or mention a repository symbol in common.

    The code of a PR linked to its commit (`changed`) is what the commit changed
    (`changesFile`, `changesSymbol`); that of any other PR is what its review names.

    A PR that names a symbol also touches the file the symbol is `definedIn`: three PRs that
    name three functions of one file share that file, and each gets a `touchesFile` edge to
    it, so that the file's `prCount`, its PRs in a query and on the page are the same PRs.
    Only a symbol with one home counts: a
    `forward` that reviews place in forty files says nothing about which one a PR touched,
    and spreading each of its PRs over all forty made this step quadratic in the corpus.
    A name the source says is ambiguous pairs no PRs (two reviews saying `forward` need not
    mean the same `forward`).
    Entities touched by more than `share_limit` PRs are hubs (every PR mentions `__init__`):
    they still link to all their PRs, but pairing all of them would add a quadratic number
    of edges that say nothing.
    """
    homes: dict[str, set[str]] = defaultdict(set)
    touches: list[Edge] = []  # one pass over the millions of edges, not two
    for edges in graph.edge_groups():
        for edge in edges:
            if edge.relation == "definedIn":
                homes[edge.source].add(edge.target)
            elif edge.relation in (_CHANGED if edge.source in changed else _NAMED):
                touches.append(edge)
    counts: dict[str, bool] = {}  # per entity: not external (a node's attributes are a scan)
    direct: dict[str, set[str]] = defaultdict(set)
    via: dict[str, set[str]] = defaultdict(set)
    for source, _, target in touches:
        if (internal := counts.get(target)) is None:
            internal = counts[target] = is_internal(graph.nodes[target])
        if internal:
            direct[target].add(source)
            home = homes.get(target, ())
            if len(home) == 1 and source not in changed:
                (file,) = home
                via[file].add(source)
    derived: dict[str, set[str]] = defaultdict(set)
    for file, prs in via.items():  # a repeat of an edge linked before goes when edges are read
        for pr in prs:
            graph.link(pr, "touchesFile", file)
            if record:
                derived[pr].add(file)
    for entity in direct.keys() | via.keys():
        prs = direct.get(entity, set()) | via.get(entity, set())
        node = graph.add(counted(graph.nodes[entity], len(prs)))
        if pairs_code(graph.nodes[node], len(prs), share_limit):
            ordered = sorted(prs)
            for i, a in enumerate(ordered):
                for b in ordered[i + 1 :]:
                    graph.link(a, "sharesCodeWith", b)
                    graph.link(b, "sharesCodeWith", a)
    return SharedCode(direct, via, derived)


def is_internal(node: Node) -> bool:
    """Code of a repository, which can be shared; not a builtin or a library's."""
    return node.get("isExternal") is not True


def counted(node: Node, prs: int) -> Node:
    """The node with its `prCount`, as `KnowledgeGraph.add` merges it."""
    return merged(node, Node(node.id, node.kind, node.label, (("prCount", prs),)))


def pairs_code(node: Node, prs: int, share_limit: int) -> bool:
    """Do the PRs touching this code share it (`sharesCodeWith`): at least two and no more
    than `share_limit` (a hub), and not a name the source says is ambiguous."""
    return 2 <= prs <= share_limit and node.get("resolution") != Status.AMBIGUOUS.value
