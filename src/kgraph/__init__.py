"""kgraph: a knowledge graph of pull-request review digests.

    import kgraph

    built = kgraph.build(["digests/"], "out")
    kgraph.open("out").query(name="hotspots")

`build`, `open` and `Build` are `kgraph.api`'s, imported when first used: `import kgraph`
loads nothing else, so it stays cheap, and the `kgraph` command sets its signal handlers
before anything heavy loads (`kgraph.__main__`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Build", "__version__", "build", "open"]

if TYPE_CHECKING:
    from kgraph.api import Build, build, open


def __getattr__(name: str) -> Any:
    if name in ("Build", "build", "open"):
        from kgraph import api

        return getattr(api, name)
    raise AttributeError(f"module 'kgraph' has no attribute {name!r}")
