"""The benchmark's own checks, which run before any build."""

from __future__ import annotations

import pytest
from bench import build


def test_bench_refuses_to_start_without_the_disk_it_needs(tmp_path) -> None:
    """A 100k-entry run needs about 10 GB; one that cannot have it stops at once, saying
    so, rather than an hour later on "No space left on device"."""
    with pytest.raises(SystemExit, match=r"GB free; 10,000,000,000 entries need about"):
        build.main(["--sizes", "10000000000", "--work", str(tmp_path)])
    assert list(tmp_path.iterdir()) == []  # no corpus was generated
