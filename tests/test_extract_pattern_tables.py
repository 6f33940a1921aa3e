"""Every pattern of the catalog, one table each: sentences that apply it and must be found,
and near misses that must not be: a suggestion (建议…, a follow-up could…), "不再 X，而是 Y"
(or "原来的 X 改成 Y", where X is the pattern and only Y is done) and a negation (并没有 X,
no test does X).

The sentences are the tune splits', the seeds' and dev's where they state the pattern or a
near miss plainly (`patterns_evidence`, `pattern_near_misses` of their gold), else written in
their style; never from a check split.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from checks import patterns_in
from kgraph.catalog import builtin_knowledge

KNOWLEDGE = builtin_knowledge()
NEAR_MISS_KINDS = ("suggestion", "replaced", "negated")


@dataclass(frozen=True, slots=True)
class Cases:
    """One pattern's table: what applies it, and each kind of near miss."""

    match: tuple[str, ...]
    suggestion: tuple[str, ...]
    replaced: tuple[str, ...]  # 不再 X，而是 Y
    negated: tuple[str, ...]


CASES = {
    "atomic-rollback": Cases(
        match=(
            "任一步失败就 `os.unlink` 掉文件、关闭 fd 后原样抛出。",
            (
                "On any exception the method calls `llm_engine.abort_request` on everything "
                "added so far before re-raising the original error, so a failed batch leaves "
                "nothing behind in the engine."
            ),
        ),
        suggestion=("建议后续在加入失败时把已占的槽位全部还回去，再原样抛出。",),
        replaced=("失败时不再把已分配的块逐一归还后抛出，而是直接让请求进入等待队列。",),
        negated=("这里并没有在失败时把已占的槽位全部归还后再抛出。",),
    ),
    "backward-compatible-evolution": Cases(
        match=(
            "没有覆盖该方法的第三方连接器行为不变。",
            "Single-replica deployments keep their old id.",
        ),
        suggestion=("建议对老用户的启动参数保持兼容，避免升级后直接报错。",),
        replaced=("这里不再为老脚本保留旧写法的兼容，而是要求一律改用新参数。",),
        negated=("注意这里没有为旧字段保留任何转发或告警，老脚本会直接失败。",),
    ),
    "bounded-estimate": Cases(
        match=(
            "返回值一律不超过这个间隔，与截止时间、告警间隔之间也是取较小者。",
            (
                "The estimate is capped at the pool size, so admission never counts more blocks "
                "than exist."
            ),
        ),
        suggestion=("建议对估算值再取一次 `min`，让它不超过实际持有的块数。",),
        replaced=("预估值不再取上界，而是直接用请求声明的长度。",),
        negated=("TPU 实现目前仍原样返回，并没有真正截断估算值。",),
    ),
    "capability-on-type": Cases(
        match=(
            "能力由连接器类型自己声明，调度器不去枚举具体连接器。",
            (
                "The builder declares `supports_update_block_table`, and the runner only checks "
                "that flag."
            ),
        ),
        suggestion=("建议后续让各后端自己声明是否支持，而不是在调度器里判断。",),
        replaced=("这次不再让各后端自己声明是否支持，而是在调度器里写死一张名单。",),
        negated=("能力并不是由连接器类型自己声明的，调度器仍按名字逐个判断。",),
    ),
    "config-inference": Cases(
        match=(
            "检测到 NFS 且检查点总大小不超过可用内存的 90% 时自动启用预取。",
            (
                "The KV-cache dtype follows the checkpoint without the user passing "
                "`--kv-cache-dtype`."
            ),
        ),
        suggestion=("建议后续根据检查点的量化配置自动选定 KV 精度。",),
        replaced=("KV 精度不再根据检查点的量化配置自动推导，而是必须由用户显式传入。",),
        negated=("这里没有根据检查点自动推导 KV 精度，用户仍需手动传参。",),
    ),
    "copy-with-override": Cases(
        match=(
            "给草稿模型造一份临时的 `CacheConfig`，目标模型自己的配置对象原封不动。",
            (
                "It builds the result with `replace(...)` and the given overrides instead of "
                "assigning to the request, so the original params object stays untouched."
            ),
        ),
        suggestion=("建议先拷贝一份配置再改副本，别直接改调用方传进来的对象。",),
        replaced=("这里不再先拷贝一份参数再改副本，而是直接在原对象上改写字段。",),
        negated=("它并没有先复制一份配置，改动直接落在调用方的对象上。",),
    ),
    "decoupling": Cases(
        match=(
            "让 pin 状态与淘汰顺序解耦。",
            "把「放宽 store 掩码」与「不改变模型注意力窗口」两件事解耦。",
        ),
        suggestion=("建议后续把 pin 状态与淘汰顺序拆开，两者各管各的。",),
        replaced=("错误处理不再与指标字段解耦，而是直接读那个统计字段。",),
        negated=("这次并没有把两件事解耦，开关一改缓存目录仍会跟着变。",),
    ),
    "deterministic-concurrency-test": Cases(
        match=(
            "先后顺序完全由测试掌控，不靠 sleep 碰运气。",
            (
                "用例手动构造 `Future`，先拿到聚合后的 future，"
                "再调用 `set_result` 喂入两个 worker 的输出，全程不需要 sleep 或真实进程。"
            ),
        ),
        suggestion=("建议把这条用例改成用 `threading.Event` 控制先后，把时序钉死。",),
        replaced=("用例不再用 `threading.Event` 把时序钉死，而是靠 `asyncio.sleep` 制造间隔。",),
        negated=("No test reproduces the race.",),
    ),
    "explicit-over-inferred-config": Cases(
        match=(
            "用户写下的 false 总能压过默认值。",
            "An explicit `--kv-cache-memory` always wins.",
            "在 V1 且 `seed` 为 None 时把它置成 0；用户自己传了种子就原样保留。",
            "发现是 None 才生成 uuid，调用方自己给了 `engine_id` 则照用不误。",
            (
                "It uses the constants only when a key is missing or None; anything the caller "
                "passes is used as-is."
            ),
        ),
        suggestion=("建议让用户显式写下的值压过自动推导的默认值。",),
        replaced=("用户的显式设置不再压过推导值，而是一律取检查点里的值。",),
        negated=("用户显式设置的值并不能压过推导值，检查点里的配置总是生效。",),
    ),
    "explicit-state-machine": Cases(
        match=(
            "用三个具名状态替代「是否已加载」的布尔判断。",
            (
                "The PR replaces the `is_loading` boolean with an explicit state machine of "
                "three named states."
            ),
        ),
        suggestion=("建议后续用显式状态机替代这组布尔标记。",),
        replaced=("加载状态不再用显式状态机表示，而是退回两个布尔标记。",),
        negated=("修复只改 12 行源码，是小而典型的调度状态机 bug。",),
    ),
    "extend-existing-api": Cases(
        match=(
            "在既有的 `--speculative-config` JSON 里多认一个键。",
            (
                "No new loader entry point was added, the existing function simply learned one "
                "more argument."
            ),
        ),
        suggestion=("建议在现有的请求模型上新增一个可选字段，而不是另开一个接口。",),
        replaced=("这次不再在现有的请求模型上新增可选字段，而是另开了一个独立的端点。",),
        negated=("PR 并没有在现有的配置类上加字段，而是另起了一个配置类。",),
    ),
    "fail-fast-validation": Cases(
        match=(
            "空间问题在启动期就响亮地报出来。",
            (
                "It raises `VLLMValidationError` when both `structured_outputs` and "
                "`text.format` are set."
            ),
        ),
        suggestion=(
            "建议后续对负数超时也直接抛 `ValueError`。",
            "A follow-up could reject zero or negative values.",
        ),
        replaced=("这里不再在构造阶段遇到缺失配置时直接抛 `ValueError`，而是记一条日志后继续。",),
        negated=("Nothing checks whether tensor sizes actually fit in 32-bit indices.",),
    ),
    "graceful-degradation": Cases(
        match=(
            "任一方抛错只记日志并继续。",
            "The model keeps running with the ordinary unfused all-reduce.",
        ),
        suggestion=("建议在内核缺失时退回纯 torch 实现，让服务照常运行。",),
        replaced=("导入失败时不再退回纯 torch 实现继续服务，而是直接让进程退出。",),
        negated=("需要留意：表里没有的平台会直接 `KeyError`，没有回退到通用候选的分支。",),
    ),
    "identity-over-position": Cases(
        match=(
            "按名字绑定，不再依赖形参次序。",
            (
                "Note that the KV engine id uses the local rank while the instance id uses the "
                "global index."
            ),
        ),
        suggestion=("建议后续改为按层名身份路由，而不是按 region 索引。",),
        replaced=("缓存的身份从此不再随安装位置变化，而是由内容哈希决定。",),
        negated=("这里并没有按名字绑定实参，仍靠形参次序对位。",),
    ),
    "invariant-as-assertion": Cases(
        match=(
            "新增测试把「估算等于实测」写成断言。",
            (
                "Each of those call sites first asserts the field is populated, so a builder "
                "that forgets to fill it fails immediately."
            ),
        ),
        suggestion=(
            "建议后续在 `compile_factors` 旁加一条用例，把所有应被排除的变量列成清单逐一核对。",
        ),
        replaced=("原来的 `assert prompt_text is None` 改成了真正抛出的 `ValueError`。",),
        negated=("这一前提并没有用 `assert` 钉死，只写在注释里。",),
    ),
    "lazy-invalidation": Cases(
        match=(
            "反查时只认最新的那次映射，过时的映射在读取这一步被自然丢弃。",
            (
                "A stale plan is never deleted eagerly: `_load_plan` simply returns `None` when "
                "the schema or fingerprint does not match."
            ),
        ),
        suggestion=("建议后续在下次查找时识别出过期条目再顺手丢掉。",),
        replaced=("这是一次主动的全量清空，并不是在下次查找时才识别出过期嵌入再丢弃。",),
        negated=("过时的映射并没有在读取时被识别出来，旧条目会一直被命中。",),
    ),
    "lenient-config-parsing": Cases(
        match=(
            "配置或环境变量给了非法值时只打一条 warning 并回落到默认值，不会让启动失败。",
            "An unreadable file is logged as a warning and ignored rather than failing startup.",
        ),
        suggestion=("建议对非法值只打一条 warning 并回落到默认值。",),
        replaced=("非法值不再只打一条 warning 并回落到默认值，而是在启动时直接报错。",),
        negated=("过去多写或拼错的键会被 pydantic 直接丢弃。",),
    ),
    "negative-control": Cases(
        match=(
            "恢复单个函数到旧 commit 做负对照。",
            (
                "So the pre-fix code path fails deterministically while the new code never "
                "consults the probe."
            ),
        ),
        suggestion=("建议补一条负对照：把函数恢复到旧 commit，确认用例会失败。",),
        replaced=("这条用例不再放到修复前的代码上验证必然失败，而是只检查新代码的输出。",),
        negated=("PR 并没有验证这条用例放到修复前的代码上会失败。",),
    ),
    "ordering-constraint": Cases(
        match=(
            "缓存清理必须排在排空之后，否则仍在运行的请求会引用已被清掉的块。",
            (
                "Before writing again the worker calls `cuda_stream.wait_event` on it, so "
                '"consume, then overwrite" is enforced on the GPU timeline rather than assumed.'
            ),
        ),
        suggestion=("建议把缓存清理排在排空之后，否则仍在运行的请求会引用已被清掉的块。",),
        replaced=("缓存清理不再必须排在排空之后，而是与排空并行进行。",),
        negated=("这里并没有规定缓存清理必须排在排空之后，两者的先后取决于调度。",),
    ),
    "parametrized-test-matrix": Cases(
        match=(
            "在同步与异步调度下各跑一遍。",
            "The new test is parametrized over both cache layouts.",
        ),
        suggestion=("PR 没有新增测试，建议补一个按两种调度参数化的用例。",),
        replaced=("测试不再按同步与异步两种调度参数化，而是只跑默认配置。",),
        negated=("No test covers the new branch.",),
    ),
    "partial-retry": Cases(
        match=(
            "只对当前这一层重新提交，已经提交成功的层不受影响。",
            "已经落到主层的块就此保留，只有失败的那部分回到未命中，等下一次再晋升。",
        ),
        suggestion=("建议后续只重算加载失败的那些块，前面已成功的前缀照常复用。",),
        replaced=("加载失败后不再只重算失效的那些块，而是整条请求从头重新调度。",),
        negated=("这里并没有只重试失败的分片，一次失败就会让整批重新加载。",),
    ),
    "plugin-registry": Cases(
        match=(
            "在 `DATASET_MAPPING` 里按名字查到类。",
            "名字没注册时再读配置里的 `module_path`，用 `importlib.import_module` 导入同名类。",
        ),
        suggestion=("建议后续在注册表里按名字登记后端类路径，新平台只需加一行。",),
        replaced=("后端不再在注册表里按名字登记，而是在调度器里写死一串 if/elif。",),
        negated=("这里并没有注册表，新后端仍要改调度器代码。",),
    ),
    "request-coalescing": Cases(
        match=(
            "若同一引擎已有握手在进行，拿到的是同一个 future，不会再起一次。",
            "同一个 prefill 实例上的多个请求只发起一次 `receive_kv`，而不是每个请求各连一次。",
        ),
        suggestion=("建议后续让同一地址的并发查找共用同一个在途请求。",),
        replaced=("同一个键的并发查找不再共用同一个在途请求，而是各自发起一次。",),
        negated=(
            "注意这里没有加文件锁，并发编译本身仍会各自重复跑一遍，只是最后的写入不再互相踩踏。",
        ),
    ),
    "scoped-state": Cases(
        match=(
            "占位只在本轮调度尝试期间有效，尝试失败即随之清掉。",
            (
                "The config is installed for exactly the duration of the reset and taken away "
                "again when the block exits."
            ),
        ),
        suggestion=("建议把这份缓存的有效期限定在一次借用之内，退出时清空。",),
        replaced=("缓存不再只在一次借用期间有效，而是跨请求一直保留。",),
        negated=("这个标志位并没有随窗口失效被清除，下一轮仍会读到它。",),
    ),
    "sentinel-value": Cases(
        match=(
            "默认 `None` 表示“用户没表态”。",
            'Port `0` here means "let the kernel choose".',
        ),
        suggestion=("建议用 `None` 表示尚未设置，而不是默认填 0。",),
        replaced=("这个字段不再用 `None` 表示尚未设置，而是默认填 16。",),
        negated=("The field now defaults to 16 instead of a computed value.",),
    ),
    "single-effect-path": Cases(
        match=(
            "归还的动作只写在这一个函数里。",
            (
                "It routes it through a new `KVCacheManager.record_prefix_cache_stats()`, called "
                "once when the request is actually popped from the queue."
            ),
        ),
        suggestion=("建议把归还的动作只写在一个函数里，让所有路径都走到同一个收尾。",),
        replaced=("块的归还不再只写在一个函数里，而是由各个分支各自处理。",),
        negated=("归还的动作并没有收敛到一个函数里，三个分支仍各自释放。",),
    ),
    "single-source-of-truth": Cases(
        match=(
            "使准入与分配共用同一估算口径。",
            "The mapping now lives in one table.",
        ),
        suggestion=("建议把调度器和 worker 各自推导的超时值收敛为单一配置项。",),
        replaced=("这个值不再只在一处定义，而是由调度器和 worker 各自计算。",),
        negated=("这里并没有收敛为单一配置项，两边仍各自推导超时值。",),
    ),
    "validate-at-boundary": Cases(
        match=(
            "把检查放在所有请求必经的这一处。",
            "The check sits at the entry point every request passes through.",
        ),
        suggestion=(
            (
                "建议后续把同样的核对推广到 EAGLE 等其他草稿模型的加载路径，"
                "目前只覆盖了 DeepSeek MTP。"
            ),
        ),
        replaced=("检查不再放在所有请求都要经过的入口，而是挪到了调度器内部。",),
        negated=("这项检查并不是放在所有请求都要经过的入口，离线路径会绕过它。",),
    ),
}


def test_patterns_every_catalog_pattern_has_a_table_with_each_kind() -> None:
    assert sorted(CASES) == sorted(p.id for p in KNOWLEDGE.patterns)
    for cases in CASES.values():
        assert cases.match
        assert all(getattr(cases, kind) for kind in NEAR_MISS_KINDS)


@pytest.mark.parametrize(
    ("pattern_id", "sentence"),
    [(p, s) for p, cases in CASES.items() for s in cases.match],
)
def test_patterns_table_sentences_apply_the_pattern(pattern_id: str, sentence: str) -> None:
    found = patterns_in(sentence)
    assert pattern_id in found, found
    assert KNOWLEDGE.pattern_threshold <= found[pattern_id] <= 1.0


@pytest.mark.parametrize(
    ("pattern_id", "kind", "sentence"),
    [
        (p, kind, s)
        for p, cases in CASES.items()
        for kind in NEAR_MISS_KINDS
        for s in getattr(cases, kind)
    ],
)
def test_patterns_table_near_misses_are_not_evidence(
    pattern_id: str, kind: str, sentence: str
) -> None:
    assert pattern_id not in patterns_in(sentence)
