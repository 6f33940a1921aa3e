"""Design signals in a commit's diff (`kgraph.history.signals`): each signal on changed lines
as `git diff -U0` gives them, with the near-misses that must not count (a moved line, a
test's own asserts, an error that is the program's state, a new function's defaults)."""

from __future__ import annotations

from collections.abc import Sequence

from kgraph.history.log import FileDiff
from kgraph.history.signals import Signal, signals_of


def diff(path: str, added: Sequence[str], removed: Sequence[str] = (), start: int = 10) -> FileDiff:
    return FileDiff(
        path,
        path,
        added=[(start + i, text) for i, text in enumerate(added)],
        removed=[(start + i, text) for i, text in enumerate(removed)],
    )


def kinds(*diffs: FileDiff) -> list[tuple[str, str, int]]:
    return [(s.kind, s.path, s.line) for s in signals_of(diffs)]


def test_signals_guard_raise_is_a_new_check_that_rejects_input() -> None:
    guard = [
        "        if not 0 < port < 65536:",
        '            raise ValueError(f"data_parallel_rpc_port must be 1-65535, got {port}")',
    ]
    assert kinds(diff("vllm/config/parallel.py", guard)) == [
        ("guard-raise", "vllm/config/parallel.py", 11)
    ]
    typed = ["    if not isinstance(x, float):", '        raise TypeError(f"{x=} needs a float")']
    assert kinds(diff("vllm/models/voxtral.py", typed))[0][0] == "guard-raise"
    custom = ["    if side not in SIDES:", "        raise VLLMValidationError(side)"]
    assert kinds(diff("vllm/renderers/params.py", custom))[0][0] == "guard-raise"


def test_signals_guard_raise_near_misses() -> None:
    state = ["        if self._closed:", '            raise RuntimeError("engine is closed")']
    assert kinds(diff("vllm/engine/core.py", state)) == []  # the program's state, not input
    gap = ["    if timeout:", '        raise NotImplementedError("timeout")']
    assert kinds(diff("vllm/executor.py", gap)) == []
    in_test = ["    if bad:", "        raise ValueError('x')"]
    assert kinds(diff("tests/test_config.py", in_test)) == []
    moved = diff("vllm/cli/serve.py", in_test, removed=in_test, start=100)
    assert kinds(moved) == []  # the same lines left elsewhere: moved, not new
    under_old_if = diff("vllm/config.py", ['        raise ValueError("now rejected")'])
    assert kinds(under_old_if) == []  # no new check above it
    not_python = diff("csrc/ops.cu", ["  if (n < 0)", '    throw std::invalid_argument("n");'])
    assert kinds(not_python) == []


def test_signals_assert_added_outside_tests_only() -> None:
    source = diff("vllm/v1/core/block_pool.py", ["        assert block.ref_cnt >= 0, block"])
    assert kinds(source) == [("assert-added", "vllm/v1/core/block_pool.py", 10)]
    assert kinds(diff("tests/v1/core/test_block_pool.py", ["    assert pool.free == 3"])) == []
    assert kinds(diff("vllm/utils/asserts.py", ["    assert_equal(a, b)"])) == []
    again = ["        assert block.ref_cnt >= 0, block"]
    assert kinds(diff("vllm/v1/core/block_pool.py", again, removed=again)) == []


def test_signals_parametrize_added_in_tests_only() -> None:
    table = ['@pytest.mark.parametrize("port", [-1, 0, 65536])', "def test_bad_port(port):"]
    assert kinds(diff("tests/test_config.py", table)) == [
        ("parametrize-added", "tests/test_config.py", 10)
    ]
    assert kinds(diff("vllm/testing/utils.py", ["@pytest.mark.parametrize('x', [1])"])) == [
        ("parametrize-added", "vllm/testing/utils.py", 10)  # a testing package is tests too
    ]
    assert kinds(diff("vllm/config.py", ["# see @pytest.mark.parametrize below"])) == []


def test_signals_default_parameter_added_to_an_existing_function() -> None:
    old = ["    def allocate(self, request, num_tokens):"]
    new = ["    def allocate(self, request, num_tokens, delay_cache_blocks: bool = False):"]
    path = "vllm/v1/core/kv_cache_manager.py"
    assert kinds(diff(path, new, removed=old)) == [("default-parameter-added", path, 10)]
    multi_old = ["def get_open_port(", "    host: str,", ") -> int:"]
    multi_new = ["def get_open_port(", "    host: str,", "    retries: int = 3,", ") -> int:"]
    assert kinds(diff("vllm/utils/net.py", multi_new, removed=multi_old))[0][0] == (
        "default-parameter-added"
    )


def test_signals_default_parameter_near_misses() -> None:
    path = "vllm/v1/core/kv_cache_manager.py"
    required = ["    def allocate(self, request, num_tokens, delay):"]
    old = ["    def allocate(self, request, num_tokens):"]
    assert kinds(diff(path, required, removed=old)) == []  # callers must change
    brand_new = ["    def release(self, request, force: bool = False):"]
    assert kinds(diff(path, brand_new)) == []  # no old signature: a new function
    keyword_only = ["    def allocate(self, request, num_tokens, *, lazy=False):"]
    assert kinds(diff(path, keyword_only, removed=old))[0][0] == "default-parameter-added"
    renamed = ["    def allocate(self, req, num_tokens):"]
    assert kinds(diff(path, renamed, removed=old)) == []  # `req` has no default


def test_signals_bounded_and_round_trip() -> None:
    many = [line for i in range(10) for line in (f"    if x{i}:", f"        raise ValueError({i})")]
    found = signals_of([diff("vllm/config.py", many)])
    assert len(found) == 3  # evidence, not an inventory
    assert all(Signal.from_json(s.to_json()) == s for s in found)
    long = ["    if x:", "        raise ValueError('" + "x" * 500 + "')"]
    assert len(signals_of([diff("vllm/config.py", long)])[0].text) == 160
    unread = FileDiff("vllm/big.py", "vllm/big.py", added=[(1, "assert x")], unread=True)
    assert signals_of([unread]) == ()
