"""Resolution: which file or definition of a real checkout a review's mention denotes.

A review writes `scheduler.py`, `touch` or `MambaManager.get_num_blocks_to_allocate`; the
checkout has five `scheduler.py` files and eleven `touch` methods. Each mention is matched
against the `SourceIndex` (a qualifier narrows first: `Class.method`, an inherited member,
`module.func`), and when several candidates remain the rest of the PR's review decides;
each rule in turn keeps the candidates that meet it, when any do:

- where the review puts it: "`policies/lru.py` 的 `evict()`" keeps the `evict` of that file;
  a call (`flush()`) keeps functions, methods and classes;
- a method and its overrides are one API (`CachePolicy.touch` and the `touch` of each
  policy subclass): the family is one candidate, named by its base definition;
- context: a member of a class or function the review names (`flush()` next to
  `AsyncLookupManager`); in a file the review names or another mention resolves to, the
  most pointed-to first; under a folder the review names (`vllm/v1/core/sched/`); in the
  folder of a resolved file; for a file, one that defines a name the review uses or imports
  a module it names (or is imported by a file it names);
- strength: a `def` or `class`, then a field or constant, then an attribute, YAML key or
  macro, then a parameter or local;
- code before tests; the language of the resolved files (else the checkout's main one);
  the repository's own package (`vllm/…`) before vendored copies.

One candidate left: "resolved". Several: "ambiguous", with the candidates. None:
"missing" (the review names what the code does not have, e.g. code the PR adds). Nothing
is merged by guesswork: an ambiguous mention keeps its own node.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TypeVar
from urllib.parse import quote

from kgraph.graph import KnowledgeGraph, Node, Value, node_id
from kgraph.model import Kind, Mention
from kgraph.source.definitions import (
    CALLABLE,
    MEMBER_KINDS,
    WEAK_TIER,
    Definition,
    DefKind,
    is_test,
    language,
    module_name,
)
from kgraph.source.index import SourceIndex

MAX_CANDIDATES = 20  # an ambiguous `__init__` links this many candidates, and counts all
T = TypeVar("T")


class Status(StrEnum):
    RESOLVED = "resolved"
    AMBIGUOUS = "ambiguous"
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class Resolution:
    """The outcome for one mention: one target, several candidates, or none.

    `paths` are full file paths (for a file mention: the file or its candidates; for a
    symbol: the files of its candidates); `definitions` are the symbol's definition or
    candidates, each the base definition of its override family. `total` and `home`
    depend on the name alone, never on the PR, so every PR agrees on them.
    """

    status: Status
    paths: tuple[str, ...] = ()
    definitions: tuple[Definition, ...] = ()
    total: int = 0  # files or definitions bearing the name, before any narrowing
    home: str | None = None  # the one file every definition of the name is in, if one

    @property
    def path(self) -> str | None:
        """The one file this mention is in or is, when there is exactly one."""
        return self.paths[0] if len(self.paths) == 1 else None


MISSING = Resolution(Status.MISSING)


@dataclass(frozen=True, slots=True)
class _Group:
    """An override family (or a single definition): `head` names it, `members` place it."""

    head: Definition
    members: tuple[Definition, ...]


@dataclass(frozen=True, slots=True)
class Context:
    """What the rest of a PR's review points to."""

    files: frozenset[str] = frozenset()  # full paths other mentions resolve to
    folders: tuple[str, ...] = ()  # folder spans as written, without the trailing "/"
    names: frozenset[str] = frozenset()  # every identifier segment of the symbols named
    modules: frozenset[str] = frozenset()  # Python modules of the context files
    keys: frozenset[str] = frozenset()  # symbols named, and their qualifiers (`A.f`, `A`)
    weights: Mapping[str, int] = field(default_factory=dict)  # file → mentions settled there


class Resolver:
    """Resolves the mentions of one repository's PRs against that repository's index."""

    def __init__(self, index: SourceIndex) -> None:
        self.index = index

    # --- candidates --------------------------------------------------------------------------

    def file_candidates(self, key: str) -> list[str]:
        """Files whose path is `key` (that one alone) or ends with `/key`."""
        key = key.strip("/")
        if key in self.index.file_set:
            return [key]
        base = key.rsplit("/", 1)[-1]
        return [p for p in self.index.by_basename.get(base, ()) if p.endswith("/" + key)]

    def symbol_candidates(self, key: str) -> list[Definition]:
        """Definitions a name denotes; a qualifier (`Class.method`, `module.func`,
        `req.req_pool_idx`) narrows to that class, its bases, or that module."""
        name = key.rsplit(".", 1)[-1]
        every = self.index.definitions(name)
        if "." not in key:
            return list(every)
        qualifier = key.rsplit(".", 1)[0]
        direct = [
            d
            for d in every
            if d.qualname == key
            or d.qualname.endswith("." + key)
            or f".{module_name(d.path)}.{d.qualname}".endswith("." + key)
        ]
        if direct:
            return direct
        owner = qualifier.rsplit(".", 1)[-1]
        inherited = self.index.ancestors(owner)
        if inherited:  # `CPUOffloadingWorker.shutdown` defined by a base class
            found = [d for d in every if d.owner.rsplit(".", 1)[-1] in inherited]
            if found:
                return found
        if owner[:1].islower():  # a variable: `req.req_pool_idx` is `Req.req_pool_idx`
            same = [d for d in every if d.owner.rsplit(".", 1)[-1].casefold() == owner.casefold()]
            return same or [d for d in every if d.kind in MEMBER_KINDS]
        return []

    # --- one PR ------------------------------------------------------------------------------

    def resolve(self, mentions: Iterable[Mention]) -> dict[Mention, Resolution]:
        """Resolve every file and symbol mention of one PR, using the others as context."""
        mentions = sorted(set(mentions))
        files = [m for m in mentions if m.kind is Kind.FILE]
        symbols = [m for m in mentions if m.kind is Kind.SYMBOL]
        folders = tuple(
            sorted({m.key.strip("/") for m in mentions if m.detail == "directory"} - {""})
        )
        file_options = {m.key: self.file_candidates(m.key) for m in files}
        home_of = {m: m.detail[3:] for m in symbols if m.detail.startswith("in:")}
        for home in home_of.values():
            file_options.setdefault(home, self.file_candidates(home))
        symbol_options = {m: self._groups(m, file_options.get(home_of.get(m, ""))) for m in symbols}
        named = {m.key: self.symbol_candidates(m.key) for m in symbols}
        names = frozenset(part for m in symbols for part in m.key.split("."))
        keys = frozenset(
            ".".join(parts[:n])
            for m in symbols
            if (parts := m.key.split("."))
            for n in range(1, len(parts) + 1)
        )

        def context(settled: Mapping[Mention, str], exclude: Mention | None) -> Context:
            weights = Counter(p for k, p in settled.items() if k != exclude)
            return Context(frozenset(weights), folders, names, _modules(weights), keys, weights)

        results: dict[Mention, Resolution] = {}
        settled: dict[Mention, str] = {}
        for _ in range(3):  # resolving one mention can settle another; stop when nothing moves
            for m in [*files, *symbols]:
                if m.kind is Kind.FILE:
                    results[m] = self._resolve_file(m.key, file_options[m.key], context(settled, m))
                else:
                    outcome = self._resolve_symbol(m.key, symbol_options[m], context(settled, m))
                    homes = {d.path for d in named[m.key]}
                    only = next(iter(homes)) if len(homes) == 1 else None
                    results[m] = replace(outcome, total=len(named[m.key]), home=only)
            now = {m: path for m, r in results.items() if (path := r.path) is not None}
            if now == settled:
                break
            settled = now
        for home in set(home_of.values()):
            results[home_mention(home)] = self._resolve_file(
                home, file_options[home], context(settled, None)
            )
        return results

    def _resolve_file(self, key: str, options: list[str], context: Context) -> Resolution:
        if not options:
            return MISSING
        total = len(options)
        if len(options) > 1:
            options = _narrow(
                options,
                [
                    lambda p: _under(p, context.folders),
                    lambda p: self.index.defines(p, context.names),
                    lambda p: self._related_by_import(p, context),
                    lambda p: any(_same_folder(p, f) for f in context.files if f != p),
                    lambda p: not is_test(p),
                    lambda p: self._in_package(p),
                ],
            )
        return _outcome(sorted(options), [], total)

    def _in_package(self, path: str) -> bool:
        """`path` is in the repository's own package (`vllm/…` of vllm-project/vllm,
        `python/sglang/…` of sgl-project/sglang), not in a vendored copy or an extra tool."""
        package = self.index.repo.rsplit("/", 1)[-1].replace("-", "_").casefold()
        head, _, rest = path.partition("/")
        if head in ("src", "python", "lib"):
            head = rest.partition("/")[0]
        return head.casefold() == package

    def _related_by_import(self, path: str, context: Context) -> bool:
        """`path` imports a module the review names, or a named file imports `path`."""
        mine = self.index.imports_of(path)
        if any(_within_module(name, module) for name in mine for module in context.modules):
            return True
        own = module_name(path)
        return any(
            _within_module(name, own) for f in context.files for name in self.index.imports_of(f)
        )

    def _groups(self, m: Mention, home_files: list[str] | None) -> list[_Group]:
        found = self.symbol_candidates(m.key)
        if home_files:
            homes = set(home_files)
            found = [d for d in found if d.path in homes] or found
        if m.surface.rstrip().endswith(")"):
            found = [d for d in found if d.kind in CALLABLE] or found
        return self._families(found)

    def _families(self, found: list[Definition]) -> list[_Group]:
        """Group a method with its overrides: members of classes where one is an ancestor of
        another. A family with one root is named by the root; otherwise nothing is grouped."""
        parent = list(range(len(found)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        owners = [
            d.owner.rsplit(".", 1)[-1] if d.kind in MEMBER_KINDS and d.owner else "" for d in found
        ]
        by_owner: dict[str, list[int]] = defaultdict(list)
        for i, owner in enumerate(owners):
            if owner:
                by_owner[owner].append(i)
        for i, owner in enumerate(owners):
            if not owner:
                continue
            for base in self.index.ancestors(owner):
                for j in by_owner.get(base, ()):
                    parent[root(i)] = root(j)
        families: dict[int, list[int]] = defaultdict(list)
        for i in range(len(found)):
            families[root(i)].append(i)
        groups = []
        for members in families.values():
            owner_set = {owners[i] for i in members}
            heads = [i for i in members if not (self.index.ancestors(owners[i]) & owner_set)]
            if len(members) > 1 and len(heads) == 1:
                groups.append(_Group(found[heads[0]], tuple(found[i] for i in members)))
            else:
                groups.extend(_Group(found[i], (found[i],)) for i in members)
        return sorted(groups, key=lambda g: (g.head.path, g.head.line, g.head.qualname))

    def _resolve_symbol(self, key: str, groups: list[_Group], context: Context) -> Resolution:
        if not groups:
            return MISSING
        keys = context.keys - {key}
        names = context.names - frozenset(key.split("."))
        groups = _narrow(
            groups,
            [
                lambda g: any(_owned_by(d, keys) for d in g.members),
                lambda g: any(d.owner.rsplit(".", 1)[-1] in names for d in g.members if d.owner),
                lambda g: any(d.path in context.files for d in g.members),
                lambda g: any(_under(d.path, context.folders) for d in g.members),
                lambda g: any(_same_folder(d.path, f) for d in g.members for f in context.files),
            ],
        )
        groups = _most(groups, lambda g: max(context.weights.get(d.path, 0) for d in g.members))
        if len(groups) > 1:
            best = min(g.head.tier for g in groups)
            groups = [g for g in groups if g.head.tier == best]
        languages = {language(f) for f in context.files} or {self.index.main_language}
        groups = _narrow(
            groups,
            [
                lambda g: not is_test(g.head.path),
                lambda g: language(g.head.path) in languages,
                lambda g: self._in_package(g.head.path),
            ],
        )
        heads = [g.head for g in groups]
        return _outcome(sorted({d.path for d in heads}), heads, 0)

    def alone(self, key: str) -> Resolution:
        """A symbol resolved without any context (the class of a `Class.name` mention)."""
        mention = Mention(Kind.SYMBOL, key, key, 0, 0)
        return self.resolve([mention])[mention]

    # --- links -------------------------------------------------------------------------------

    def url(self, path: str, line: int | None = None) -> str | None:
        """`https://github.com/OWNER/REPO/blob/COMMIT/PATH#LLINE`, when the commit is known."""
        if not self.index.commit:
            return None
        anchor = f"#L{line}" if line else ""
        return (
            f"https://github.com/{self.index.repo}/blob/{self.index.commit}/"
            f"{quote(path, safe='/-_.~')}{anchor}"
        )


def _outcome(paths: list[str], definitions: list[Definition], total: int) -> Resolution:
    count = len(definitions) if definitions else len(paths)
    status = Status.RESOLVED if count == 1 else Status.AMBIGUOUS
    if definitions:
        return Resolution(status, tuple(paths), tuple(definitions[:MAX_CANDIDATES]), total)
    return Resolution(status, tuple(paths[:MAX_CANDIDATES]), (), total)


def _narrow(options: list[T], rules: Sequence[Callable[[T], bool]]) -> list[T]:
    """Apply each preference in turn while more than one option is left; a rule that no
    option meets is skipped, so a preference never empties the list."""
    for rule in rules:
        if len(options) <= 1:
            break
        kept = [o for o in options if rule(o)]
        if kept:
            options = kept
    return options


def home_mention(path: str) -> Mention:
    """The file a review says a symbol is in ("`lru.py` 的 `evict()`"), as a mention."""
    return Mention(Kind.FILE, path, path, 0, 0)


def _modules(paths: Iterable[str]) -> frozenset[str]:
    return frozenset(module_name(p) for p in paths if p.endswith((".py", ".pyi")))


def _most(options: list[T], score: Callable[[T], int]) -> list[T]:
    """The options pointed to most (by other mentions), when any is pointed to at all."""
    if len(options) <= 1:
        return options
    scores = [score(o) for o in options]
    top = max(scores)
    return [o for o, s in zip(options, scores, strict=True) if s == top] if top else options


def _owned_by(definition: Definition, keys: Iterable[str]) -> bool:
    """`definition` is a member (or parameter) of a class or function the review names."""
    owner = definition.owner
    return bool(owner) and any(owner == k or owner.endswith("." + k) for k in keys)


def _under(path: str, folders: Iterable[str]) -> bool:
    return any(path.startswith(f + "/") or ("/" + f + "/") in "/" + path for f in folders)


def _same_folder(a: str, b: str) -> bool:
    return a.rsplit("/", 1)[0] == b.rsplit("/", 1)[0] if "/" in a and "/" in b else False


def _within_module(name: str, module: str) -> bool:
    return bool(module) and (name == module or name.startswith(module + "."))


def choose_repository(mentions: Iterable[Mention], resolvers: Mapping[str, Resolver]) -> str | None:
    """The repository among `resolvers` whose checkout a PR's mentions resolve in, if any.

    Evidence is what another repository would rarely have: a file path found there, a file
    name found exactly once, or a distinctive identifier (`_lookup_complete_chunks`, not
    `load`) defined there; 2 points when it resolves to one file or definition, 1 when to
    several. With one source (the digests are about that repository) one point is enough;
    with several, a repository needs 2 points and strictly more than every other.
    """
    keys = sorted({(m.kind, m.key) for m in mentions if m.kind in (Kind.FILE, Kind.SYMBOL)})
    scores: dict[str, int] = {}
    for repo, resolver in sorted(resolvers.items()):
        score = 0
        for kind, key in keys:
            if kind is Kind.FILE:
                found = resolver.file_candidates(key)
                score += 2 if len(found) == 1 else (1 if found and "/" in key else 0)
            elif distinctive(key):
                strong = [d for d in resolver.symbol_candidates(key) if d.tier < WEAK_TIER]
                score += 2 if len(strong) == 1 else (1 if strong else 0)
        scores[repo] = score
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if len(ranked) == 1:
        return ranked[0][0] if ranked[0][1] >= 1 else None
    if ranked and ranked[0][1] >= 2 and ranked[0][1] > ranked[1][1]:
        return ranked[0][0]
    return None


def distinctive(key: str) -> bool:
    """An identifier another repository would rarely define too (the linker's own rule)."""
    return len(key) >= 8 and (
        "_" in key.strip("_") or "." in key or any(c.isupper() for c in key[1:])
    )


# --- the graph ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scope:
    """Where resolved nodes go: the repository's id segments, its node and its resolver."""

    segments: tuple[str, ...]
    repo_id: str
    resolver: Resolver


def mentioned_file(graph: KnowledgeGraph, scope: Scope, key: str, found: Resolution) -> str:
    """The node a file mention denotes: the file itself when resolved, else the name as
    written (`scheduler.py`), marked ambiguous (with its candidates) or missing."""
    if found.status is Status.RESOLVED:
        return file_node(graph, scope, found.paths[0])
    attrs = _outcome_attrs(found)
    fid = graph.add(
        Node(
            node_id("file", *scope.segments, *key.split("/")),
            "SourceFile",
            key,
            (("path", key), *attrs),
        )
    )
    graph.link(fid, "inRepository", scope.repo_id)
    for path in found.paths if found.status is Status.AMBIGUOUS else ():
        graph.link(fid, "candidate", file_node(graph, scope, path))
    return fid


def mentioned_symbol(graph: KnowledgeGraph, scope: Scope, key: str, found: Resolution) -> str:
    """The node a symbol mention denotes: its definition when resolved, else the name as
    written, marked ambiguous (with its candidates, and the one file they all live in, if
    one) or missing. `Class.name` is a member of `Class`, itself resolved."""
    if found.status is Status.RESOLVED:
        return definition_node(graph, scope, found.definitions[0])
    name = key.rsplit(".", 1)[-1]
    sid = graph.add(
        Node(
            node_id("symbol", *scope.segments, key),
            "CodeSymbol",
            key,
            (("name", name), ("qualifiedName", key), ("isExternal", False), *_outcome_attrs(found)),
        )
    )
    graph.link(sid, "inRepository", scope.repo_id)
    for definition in found.definitions if found.status is Status.AMBIGUOUS else ():
        graph.link(sid, "candidate", definition_node(graph, scope, definition))
    if found.home:
        graph.link(sid, "definedIn", file_node(graph, scope, found.home))
    owner = key.rsplit(".", 1)[0] if "." in key else ""
    if owner and owner.rsplit(".", 1)[-1][:1].isupper():
        graph.link(
            sid, "memberOf", mentioned_symbol(graph, scope, owner, scope.resolver.alone(owner))
        )
    return sid


def _outcome_attrs(found: Resolution) -> tuple[tuple[str, Value], ...]:
    if found.status is Status.AMBIGUOUS:
        return (("resolution", found.status.value), ("candidateCount", found.total))
    return (("resolution", found.status.value),)


def file_node(graph: KnowledgeGraph, scope: Scope, path: str) -> str:
    """The node of a file that exists in the checkout, linked to its source."""
    attrs: list[tuple[str, Value]] = [("path", path), ("resolution", Status.RESOLVED.value)]
    if url := scope.resolver.url(path):
        attrs.append(("sourceUrl", url))
    fid = graph.add(
        Node(node_id("file", *scope.segments, *path.split("/")), "SourceFile", path, tuple(attrs))
    )
    graph.link(fid, "inRepository", scope.repo_id)
    return fid


def history_file_node(graph: KnowledgeGraph, scope: Scope, path: str) -> str:
    """The node of a file a history names: the checkout's when it has the file (resolved,
    as a mention's), else a plain path for one the history only remembers (deleted or
    renamed since)."""
    if path in scope.resolver.index.file_set:
        return file_node(graph, scope, path)
    fid = graph.add(
        Node(
            node_id("file", *scope.segments, *path.split("/")),
            "SourceFile",
            path,
            (("path", path),),
        )
    )
    graph.link(fid, "inRepository", scope.repo_id)
    return fid


def definition_node(graph: KnowledgeGraph, scope: Scope, definition: Definition) -> str:
    """The node of one definition: `symbol/OWNER/REPO/PATH/QUALNAME`, with its file, line,
    link and owning class.

    Resolved symbols are named by where they are defined, so two functions of the same
    name in two files never merge, and no written name (which has no `/`) can collide.
    """
    d = definition
    attrs: list[tuple[str, Value]] = [
        ("name", d.name),
        ("qualifiedName", d.qualname),
        ("isExternal", False),
        ("resolution", Status.RESOLVED.value),
        ("line", d.line),
    ]
    if url := scope.resolver.url(d.path, d.line):
        attrs.append(("sourceUrl", url))
    sid = graph.add(
        Node(
            node_id("symbol", *scope.segments, *d.path.split("/"), d.qualname),
            "CodeSymbol",
            d.qualname,
            tuple(attrs),
        )
    )
    graph.link(sid, "inRepository", scope.repo_id)
    graph.link(sid, "definedIn", file_node(graph, scope, d.path))
    owner = next(
        (
            o
            for o in scope.resolver.index.definitions(d.owner.rsplit(".", 1)[-1])
            if o.path == d.path and o.qualname == d.owner and o.kind is DefKind.CLASS
        ),
        None,
    )
    if owner is not None and d.kind is not DefKind.PARAMETER:
        graph.link(sid, "memberOf", definition_node(graph, scope, owner))
    return sid
