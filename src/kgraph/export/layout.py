"""Positions for the HTML graph, computed once in Python in bounded time.

A browser that simulates physics on thousands of nodes freezes for minutes, and networkx's
spring layout takes about as long past a few thousand nodes (its sparse solver loops over
nodes in Python). Review graphs have a shape we can use instead: most code entities are
touched by one PR and belong around it, and PRs that share no code form separate islands.
So only the *core* (PRs and what two or more of them touch) goes through a vectorised
force-directed pass, whose steps shrink as the core grows and which a warm start from the
shared-code view's layout shortens further; every other node sits on rings around its one
PR (or, without PRs, its one neighbour); and the islands are packed in rows, largest
first. The result is deterministic: a fixed seed, sorted inputs, rounded output.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from kgraph.atomic import read_sealed, write_sealed

if TYPE_CHECKING:  # numpy is imported where a layout is computed: a build without the
    import numpy as np  # page, or with a remembered layout, never loads it (0.2 s)

SPACING = 140.0  # ideal edge length in the page's pixels at zoom 1 (a label is ~120px wide)
RING = 100.0  # vertical radius of the first ring of leaves around their node
RING_STEP = 60.0  # distance between rings of leaves
LEAF_ARC = 90.0  # distance between neighbouring leaves on a ring
WIDE = 1.6  # a ring's width over its height
WORK_BUDGET = 1.5e8  # pairwise force evaluations per component, all iterations together
MAX_ITERATIONS = 200
MIN_ITERATIONS = 8
WARM_EFFORT = 0.35  # share of the force steps (and of the first step's length) after a warm start
GRAVITY = 2.5  # strength of the pull to an island's centre, divided by √nodes
CHUNK = 1024  # rows of the pairwise matrix computed at once (bounds memory)


def layout(
    nodes: Sequence[str],
    edges: Iterable[tuple[str, str]],
    warm: Mapping[str, tuple[float, float]] | None = None,
    anchors: Collection[str] = (),
) -> dict[str, tuple[int, int]]:
    """Integer (x, y) for every node; edges are undirected for layout purposes.

    `anchors` (the PRs) gather the nodes that touch only one of them on rings around
    themselves; without anchors, nodes of degree one orbit their neighbour. `warm` holds
    positions from an earlier layout of some of the same nodes (the page's shared-code
    view): islands that mostly appear there start from them and need fewer force steps.
    """
    adjacency: dict[str, set[str]] = {n: set() for n in nodes}
    for a, b in edges:
        if a != b and a in adjacency and b in adjacency:
            adjacency[a].add(b)
            adjacency[b].add(a)
    leaves = _satellites(adjacency, set(anchors)) if anchors else _leaves(adjacency)
    core = sorted(n for n in adjacency if n not in leaves)
    orbiting: dict[str, list[str]] = defaultdict(list)
    for leaf, parent in sorted(leaves.items()):
        orbiting[parent].append(leaf)
    islands = [
        _island(c, adjacency, orbiting, warm or {}) for c in _components(core, adjacency, leaves)
    ]
    placed = _pack(islands)
    return {n: (round(x), round(y)) for n, (x, y) in sorted(placed.items())}


Positions = dict[str, tuple[int, int]]
Layout = Callable[
    [
        Sequence[str],
        Sequence[tuple[str, str]],
        Mapping[str, tuple[float, float]] | None,
        Collection[str],
    ],
    Positions,
]


@dataclass
class Remembered:
    """The last build's layouts, by a hash of their inputs and of this module's code.

    A daily build that adds a digest seldom changes which nodes and edges the page draws,
    and the layout is the page's largest cost (2 s of its 5 s at 10k entries). It is a
    function of its inputs alone, so a remembered layout is the one `layout` would give.
    The file holds the layouts of the last build only; one that cannot be read is none.
    """

    path: Path | None = None  # None: neither read nor written (`--no-cache`)
    old: dict[str, Positions] = field(default_factory=dict)
    kept: dict[str, Positions] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path | None) -> Remembered:
        remembered = cls(path)
        try:
            data = read_sealed(path) if path is not None else None
            found = json.loads(data) if data is not None else {}
            remembered.old = {
                key: {node: (int(x), int(y)) for node, (x, y) in positions.items()}
                for key, positions in found.items()
            }
        except (OSError, ValueError, TypeError, AttributeError, RecursionError):
            pass  # none, or damaged: every layout is computed
        return remembered

    def layout(
        self,
        nodes: Sequence[str],
        edges: Sequence[tuple[str, str]],
        warm: Mapping[str, tuple[float, float]] | None = None,
        anchors: Collection[str] = (),
    ) -> Positions:
        inputs = [_code(), list(nodes), list(edges), sorted((warm or {}).items()), sorted(anchors)]
        key = hashlib.sha256(json.dumps(inputs).encode()).hexdigest()
        found = self.old.get(key)
        if found is None or found.keys() != set(nodes):  # a file edited by hand: not a layout
            found = layout(nodes, edges, warm, anchors)
        self.kept[key] = found
        return found

    def save(self) -> None:
        if self.path is not None:
            data = json.dumps(self.kept, sort_keys=True, separators=(",", ":")).encode()
            write_sealed(self.path, data)


@cache
def _code() -> str:
    """What else the positions depend on: this module's code, numpy's arithmetic and
    Python's."""
    from importlib.metadata import version

    numpy = version("numpy")
    return hashlib.sha256(
        Path(__file__).read_bytes() + f"\0{numpy}\0{sys.version_info[:2]}".encode()
    ).hexdigest()


def _leaves(adjacency: Mapping[str, set[str]]) -> dict[str, str]:
    """Nodes whose only neighbour has other neighbours: they orbit that neighbour."""
    leaves = {}
    for node, near in adjacency.items():
        if len(near) == 1:
            (parent,) = near
            if len(adjacency[parent]) > 1:
                leaves[node] = parent
    return leaves


def _satellites(adjacency: Mapping[str, set[str]], anchors: set[str]) -> dict[str, str]:
    """Nodes next to exactly one anchor orbit it, and so do nodes that reach anchors only
    through the satellites of one anchor (a class whose methods one PR names)."""
    satellites = {}
    for node, near in adjacency.items():
        if node not in anchors:
            owners = [o for o in near if o in anchors]
            if len(owners) == 1:
                satellites[node] = owners[0]
    for node, near in adjacency.items():
        if node in anchors or node in satellites or any(o in anchors for o in near):
            continue
        owners = sorted({satellites[o] for o in near if o in satellites})
        if len(owners) == 1:
            satellites[node] = owners[0]
    return satellites


def _components(
    core: Sequence[str], adjacency: Mapping[str, set[str]], leaves: Mapping[str, str]
) -> list[list[str]]:
    seen: set[str] = set()
    components = []
    for start in core:
        if start in seen:
            continue
        seen.add(start)
        stack, members = [start], []
        while stack:
            node = stack.pop()
            members.append(node)
            for other in adjacency[node]:
                if other not in seen and other not in leaves:
                    seen.add(other)
                    stack.append(other)
        components.append(sorted(members))
    components.sort(key=lambda c: (-len(c), c[0]))
    return components


def _island(
    component: list[str],
    adjacency: Mapping[str, set[str]],
    orbiting: Mapping[str, list[str]],
    warm: Mapping[str, tuple[float, float]],
) -> dict[str, tuple[float, float]]:
    """Lay out one connected core component, then hang its leaves around it."""
    import numpy as np

    radius = {n: _orbit_radius(len(orbiting.get(n, ()))) * (1 + WIDE) / 2 for n in component}
    core_pos = _force(component, adjacency, radius, warm)
    placed = dict(core_pos)
    centre = np.mean(np.array(list(core_pos.values())), axis=0)
    for parent in component:
        children = orbiting.get(parent)
        if not children:
            continue
        px, py = core_pos[parent]
        if len(component) > 1:  # start the rings on the side facing away from the centre
            turn = math.atan2(py - centre[1], px - centre[0])
        else:  # start straight up, and keep the sides of the node's label free
            count = min(len(children), _capacity(RING))
            turn = -math.pi / 2 + (math.pi / count if count % 4 == 0 else 0.0)
        for child, (r, angle) in zip(children, _rings(len(children)), strict=True):
            # Rings are wider than tall: labels sit under their nodes and are wide.
            x = px + WIDE * r * math.cos(turn + angle)
            placed[child] = (x, py + r * math.sin(turn + angle))
    return placed


def _rings(count: int) -> list[tuple[float, float]]:
    """(radius, angle) for `count` leaves on concentric rings, evenly spaced on each."""
    slots: list[tuple[float, float]] = []
    radius, ring = RING, 0
    while len(slots) < count:
        here = min(_capacity(radius), count - len(slots))
        offset = 0.5 * (ring % 2)  # stagger rings so that labels do not line up
        slots.extend((radius, 2 * math.pi * (k + offset) / here) for k in range(here))
        radius, ring = radius + RING_STEP, ring + 1
    return slots


def _capacity(radius: float) -> int:
    return max(6, int(2 * math.pi * radius * (1 + WIDE) / 2 / LEAF_ARC))


def _orbit_radius(count: int) -> float:
    """The radius of the outermost ring that `count` leaves need (0 without leaves)."""
    radius, room = 0.0, 0
    while room < count:
        radius = RING if radius == 0 else radius + RING_STEP
        room += _capacity(radius)
    return radius


def _force(
    component: list[str],
    adjacency: Mapping[str, set[str]],
    radius: Mapping[str, float],
    warm: Mapping[str, tuple[float, float]],
) -> dict[str, tuple[float, float]]:
    """Fruchterman-Reingold with node sizes, vectorised and capped in total work."""
    import numpy as np

    n = len(component)
    if n == 1:
        return {component[0]: (0.0, 0.0)}
    index = {node: i for i, node in enumerate(component)}
    pairs = np.array(
        sorted(
            (index[a], index[b])
            for a in component
            for b in adjacency[a]
            if b in index and index[a] < index[b]
        ),
        dtype=np.int64,
    ).reshape(-1, 2)
    a, b = pairs[:, 0], pairs[:, 1]
    half = np.array([(SPACING + radius[node]) / 2 for node in component], dtype=np.float32)
    rng = np.random.default_rng(7)
    side = SPACING * math.sqrt(n) * 1.5
    x, y = rng.uniform(-side / 2, side / 2, size=(2, n)).astype(np.float32)
    # Small islands settle in a few dozen steps; big ones get what the work budget allows.
    most = min(MAX_ITERATIONS, 30 + 3 * n)
    iterations = int(min(most, max(MIN_ITERATIONS, WORK_BUDGET / (n * n))))
    step = side / 8
    known = [i for i, node in enumerate(component) if node in warm]
    if n >= 20 and len(known) * 2 >= n:
        x, y = _warm_start(component, adjacency, warm, known, half, x, y)
        iterations = max(MIN_ITERATIONS, int(iterations * WARM_EFFORT))
        step *= WARM_EFFORT
    cooling = step / (iterations + 1)
    gravity = GRAVITY / math.sqrt(n)
    for _ in range(iterations):
        sx, sy = _repulsion(x, y, half)
        dx, dy = x[a] - x[b], y[a] - y[b]
        pull = np.sqrt(np.maximum(dx * dx + dy * dy, 1.0)) / (half[a] + half[b])
        px, py = dx * pull, dy * pull
        sx += np.bincount(b, px, n) - np.bincount(a, px, n)
        sy += np.bincount(b, py, n) - np.bincount(a, py, n)
        # A weak pull to the centre curls chains and keeps islands round, so they fit a screen.
        sx -= gravity * (x - x.mean())
        sy -= gravity * (y - y.mean())
        length = np.sqrt(np.maximum(sx * sx + sy * sy, 1e-9))
        scale = np.minimum(length, step) / length
        x += sx * scale
        y += sy * scale
        step -= cooling
    x -= x.mean()
    y -= y.mean()
    return {node: (float(x[i]), float(y[i])) for node, i in index.items()}


def _warm_start(
    component: list[str],
    adjacency: Mapping[str, set[str]],
    warm: Mapping[str, tuple[float, float]],
    known: list[int],
    half: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Start from the warm positions, stretched to this layout's node sizes; other nodes
    start at the mean of their placed neighbours (or where the random start put them)."""
    import numpy as np

    wx = np.array([warm[component[i]][0] for i in known], dtype=np.float32)
    wy = np.array([warm[component[i]][1] for i in known], dtype=np.float32)
    spread = float(np.sqrt(((wx - wx.mean()) ** 2 + (wy - wy.mean()) ** 2).mean())) or 1.0
    stretch = float(half.mean()) * 2 * math.sqrt(len(component)) / 2.5 / spread
    x, y = x.copy(), y.copy()
    x[known] = (wx - wx.mean()) * stretch
    y[known] = (wy - wy.mean()) * stretch
    placed = set(known)
    index = {node: i for i, node in enumerate(component)}
    for i, node in enumerate(component):
        if i not in placed:
            # Sorted: a float mean depends on the order it adds in, and a set's order on
            # the process's string hashes, which differ from one run to the next.
            near = sorted(index[o] for o in adjacency[node] if o in index and index[o] in placed)
            if near:
                x[i] = x[near].mean() + (x[i] % 37.0)
                y[i] = y[near].mean() + (y[i] % 37.0)
    return x, y


def _repulsion(x: np.ndarray, y: np.ndarray, half: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair pushes apart with ideal²/distance, in row chunks to bound memory."""
    import numpy as np

    n = len(x)
    sx = np.zeros(n, dtype=np.float32)
    sy = np.zeros(n, dtype=np.float32)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        dx = x[start:stop, None] - x[None, :]
        dy = y[start:stop, None] - y[None, :]
        dist2 = dx * dx
        dist2 += dy * dy
        np.maximum(dist2, 1.0, out=dist2)
        force = half[start:stop, None] + half[None, :]
        force *= force
        force /= dist2
        dx *= force
        dy *= force
        sx[start:stop] = dx.sum(axis=1)
        sy[start:stop] = dy.sum(axis=1)
    return sx, sy


def _pack(islands: list[dict[str, tuple[float, float]]]) -> dict[str, tuple[float, float]]:
    """Shelf-pack islands (largest first) into rows of about the square root of their area."""
    boxes = []
    for island in islands:
        xs = [x for x, _ in island.values()]
        ys = [y for _, y in island.values()]
        # Room for the labels, which are wider than the nodes and hang below them.
        width, height = max(xs) - min(xs) + 1.5 * SPACING, max(ys) - min(ys) + SPACING
        boxes.append((min(xs), min(ys), width, height))
    area = sum(w * h for _, _, w, h in boxes)
    row_width = max([math.sqrt(area) * 1.3, *(w for _, _, w, _ in boxes)])
    placed: dict[str, tuple[float, float]] = {}
    x = y = row_height = 0.0
    for island, (left, top, width, height) in zip(islands, boxes, strict=True):
        if x > 0 and x + width > row_width:
            x, y, row_height = 0.0, y + row_height, 0.0
        for node, (nx_, ny) in island.items():
            placed[node] = (nx_ - left + x, ny - top + y)
        x += width
        row_height = max(row_height, height)
    return placed
