"""Every pattern stated in words its cues were not written from.

The catalog's cues were tuned on the tune splits' phrasings; these sentences were written
from each pattern's and concept's definition alone, as an independent reviewer would put
them (synonyms, other constructions, code-ish phrasing), in the seeds' style: two Chinese and
two English per pattern that must be found, and two near misses that must not (a suggestion,
or a negation or a description of the bug without the fix). Never from a check split.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from checks import patterns_in
from kgraph.catalog import builtin_knowledge

KNOWLEDGE = builtin_knowledge()


@dataclass(frozen=True, slots=True)
class Paraphrases:
    """One pattern in new words: sentences that state it, and near misses that only sound alike."""

    match: tuple[str, ...]
    near: tuple[str, ...]


PARAPHRASES = {
    "single-source-of-truth": Paraphrases(
        match=(
            "两处各自维护的块大小表合并成一处，调度器和 worker 现在都读同一张表。",
            "原先 API 层和引擎各算一遍最大长度，现在只保留一份，由 `ModelConfig` 给出。",
            (
                "The duplicated tokenizer lookup is folded into one helper that both the server "
                "and the engine call."
            ),
            (
                "The chunk size is now owned by `SchedulerConfig`; the workers read it from there "
                "instead of recomputing it."
            ),
        ),
        near=(
            "建议把这两份超时定义合并成一处，目前调度器和 worker 仍各写一遍。",
            (
                "The server and the engine each compute the max length on their own, and the two "
                "values disagree."
            ),
        ),
    ),
    "explicit-state-machine": Paraphrases(
        match=(
            (
                "请求的生命周期改由 `RequestStatus` 状态机描述，`WAITING`、`RUNNING`、`FINISHED` "
                "之间的跳转都写在一个函数里。"
            ),
            "把 `is_loading` 和 `is_ready` 两个布尔量换成一个四值枚举，每个分支只处理一种状态。",
            (
                "The two booleans become a `LoadState` enum, and each branch now handles exactly "
                "one state."
            ),
            (
                "The connector now tracks an explicit phase (`PENDING`, `SENDING`, `DONE`) and "
                "every transition is written down."
            ),
        ),
        near=(
            "建议后续把这几个布尔标记改成状态机，现在的组合很难读。",
            (
                "The worker still juggles three boolean flags, and two of their combinations are "
                "impossible."
            ),
        ),
    ),
    "lazy-invalidation": Paraphrases(
        match=(
            "缓存条目不再在权重更新时逐个删除，而是在下次查找时比对版本号，过期的直接跳过。",
            "释放的前缀块不主动清理，等分配器再次拿到它时发现哈希对不上才回收。",
            (
                "Entries are not purged when the adapter is unloaded; a lookup that finds a stale "
                "generation simply ignores them."
            ),
            (
                "Instead of walking the cache on every update, stale blocks are detected and "
                "dropped the next time they are read."
            ),
        ),
        near=(
            "建议改成在读取时再判断是否过期，目前每次更新都会遍历整个缓存。",
            "The old code walks the whole cache and deletes every entry on each weight update.",
        ),
    ),
    "atomic-rollback": Paraphrases(
        match=(
            "注册第二个 LoRA 失败时，已经加载的第一个也会被卸载，整个操作要么都生效要么都不生效。",
            "写入中途出错就把已经落盘的分片全部删掉，再把原异常抛出去。",
            (
                "If loading any shard fails, the shards already placed on the GPU are released "
                "before the error propagates."
            ),
            (
                "A failure halfway through the swap undoes the earlier steps, so the pool is never "
                "left half-updated."
            ),
        ),
        near=(
            "建议在失败时把已分配的块归还，目前会泄漏。",
            (
                "When the second allocation fails, the first one is leaked and the pool stays "
                "half-updated."
            ),
        ),
    ),
    "decoupling": Paraphrases(
        match=(
            "预取线程数和解码并发度原来共用一个参数，现在拆成两个独立开关，调一个不影响另一个。",
            "日志级别不再跟着调试模式走，两者各自配置。",
            (
                "The KV transfer timeout and the request timeout are split into separate settings "
                "that can be tuned on their own."
            ),
            (
                "Sampling no longer depends on the scheduler's internal batch layout, so either "
                "can change without touching the other."
            ),
        ),
        near=(
            "建议把这两个超时拆开，目前改一个会连带另一个。",
            "The prefetch depth is still tied to the batch size, so raising one raises the other.",
        ),
    ),
    "backward-compatible-evolution": Paraphrases(
        match=(
            "新参数默认关闭，没有设置它的老部署行为和以前一样。",
            "旧的 `--served-model` 写法仍被接受，只是多打一条弃用提示，已有脚本无需修改。",
            (
                "Existing configs keep working: the new field defaults to the old behaviour when "
                "it is not set."
            ),
            (
                "The old keyword is still accepted and forwarded to the new one, so current "
                "callers see no change."
            ),
        ),
        near=(
            "建议给旧参数保留一个兼容别名，否则升级后老脚本会直接失败。",
            (
                "The old flag was removed outright, and scripts that still pass it now fail at "
                "start-up."
            ),
        ),
    ),
    "fail-fast-validation": Paraphrases(
        match=(
            "`max_tokens` 为负数时构造请求就抛 `ValueError`，而不是等到采样阶段才崩。",
            "配置里同时给了 `quantization` 和 `dtype=fp8` 会在启动时直接报错退出。",
            "A negative `top_k` now raises `ValueError` when the sampling params are built.",
            (
                "The loader refuses a checkpoint whose hidden size does not match the config, "
                "before any weights are copied."
            ),
        ),
        near=(
            "建议对负数的 `max_tokens` 在构造时直接报错，现在会一路跑到采样阶段。",
            "A negative `top_k` is quietly accepted and only blows up deep inside the sampler.",
        ),
    ),
    "validate-at-boundary": Paraphrases(
        match=(
            "图片尺寸的检查挪到了所有请求都要经过的预处理入口，内部代码不再重复判断。",
            "OpenAI 兼容层的请求模型负责校验 `logprobs` 的范围，后面的引擎直接信任它。",
            (
                "The shape check now lives at the entry point every request passes through, so no "
                "code path can skip it."
            ),
            (
                "Input validation happens once, when the request is deserialized, and the "
                "scheduler trusts what it receives."
            ),
        ),
        near=(
            "建议把这项检查放到所有请求都要经过的入口，目前离线路径会绕过它。",
            "The offline path skips the check entirely, so bad inputs reach the scheduler.",
        ),
    ),
    "lenient-config-parsing": Paraphrases(
        match=(
            "环境变量里的非法值会被忽略并记一条 warning，程序继续用默认值运行。",
            "配置文件里不认识的键只打告警后跳过，不会让整个服务起不来。",
            (
                "An unparseable value for the optional env var logs a warning and falls back to "
                "the default."
            ),
            (
                "Unknown keys in the extra config are ignored with a warning instead of failing "
                "the run."
            ),
        ),
        near=(
            "建议对不认识的键只打告警然后继续，目前会直接启动失败。",
            "An unknown key in the extra config makes the whole server refuse to start.",
        ),
    ),
    "sentinel-value": Paraphrases(
        match=(
            "`num_computed_tokens` 为 -1 表示这个请求还没被调度过，与 0 区分开。",
            "用 `None` 代表不限制长度，任何正数都是真实上限。",
            "A `seed` of `None` means no seed was given, distinct from an explicit 0.",
            "The slot id -1 is reserved to mark a padding position that no request owns.",
        ),
        near=(
            "建议用一个独立的布尔字段代替 -1 的特殊含义，目前很容易被误用。",
            "The count starts at 0 and goes up by one for every token.",
        ),
    ),
    "invariant-as-assertion": Paraphrases(
        match=(
            "调度器假设每个运行中的请求都已经分配了块，这个前提现在用 `assert` 钉住。",
            "新增的断言保证块表长度始终等于已计算 token 数除以块大小。",
            (
                "The assumption that the batch is sorted by length is now an `assert`, so a "
                "violation fails loudly."
            ),
            "The code asserts the invariant that a finished request holds no blocks.",
        ),
        near=(
            "建议把这个前提写成断言，目前违反时只会悄悄算错。",
            "The code quietly assumes the batch is sorted, and nothing checks it.",
        ),
    ),
    "parametrized-test-matrix": Paraphrases(
        match=(
            "测试用 `pytest.mark.parametrize` 覆盖 fp16、bf16 和 fp8 三种精度与两种块大小的组合。",
            "同一个测试函数对合法和非法输入各跑一遍，每种组合都显式列出。",
            "The test is parametrized over every combination of backend and block size.",
            (
                "One test body runs over a table of cases: chunked and unchunked prefill, with and "
                "without prefix caching."
            ),
        ),
        near=(
            "建议把这个测试参数化到所有精度上，目前只测了 fp16。",
            "There is a single test, and it only covers the fp16 case.",
        ),
    ),
    "deterministic-concurrency-test": Paraphrases(
        match=(
            (
                "测试里用 `threading.Event` 卡住第一个请求，等第二个请求进来再放行，"
                "竞态每次都能稳定复现。"
            ),
            "测试不再靠 `time.sleep` 碰运气，而是用 `asyncio.Event` 精确控制两个协程的先后。",
            (
                "The test holds the first step with an `asyncio.Event` and releases it only after "
                "the abort arrives, so the race reproduces every time."
            ),
            (
                "Instead of sleeping, the test uses a barrier to force the two workers to "
                "interleave in the buggy order."
            ),
        ),
        near=(
            "建议把测试里的 sleep 换成事件控制，目前偶尔会失败。",
            "The test sleeps for 100 ms and hopes the abort lands in between, so it is flaky.",
        ),
    ),
    "negative-control": Paraphrases(
        match=(
            "作者确认新测试在去掉修复后的旧代码上会失败，说明它确实能抓住这个 bug。",
            "同一个用例在修复之前的提交上必然报错，打上补丁后通过。",
            (
                "The new test was run against the code without the fix and fails there, so it "
                "really detects the bug."
            ),
            (
                "With the patch reverted the regression test fails, and with it applied the test "
                "passes."
            ),
        ),
        near=(
            "建议确认这个测试在修复前会失败，目前无法判断它能否抓住问题。",
            "这个测试并没有放到修复前的代码上验证过。",
        ),
    ),
    "extend-existing-api": Paraphrases(
        match=(
            "在现有的 `generate()` 上加了一个可选参数 `priority`，而不是另开一个接口。",
            "新需求通过给已有的 `SamplingParams` 增加一个字段满足，没有新增端点。",
            (
                "The PR adds an optional `timeout` keyword to the existing `add_request` instead "
                "of a new method."
            ),
            (
                "Rather than introducing a separate endpoint, the existing completions route gains "
                "one more field."
            ),
        ),
        near=(
            "建议在现有接口上加一个参数，而不是另开一个新端点。",
            (
                "The PR introduces a brand-new endpoint next to the old one, duplicating most of "
                "its code."
            ),
        ),
    ),
    "identity-over-position": Paraphrases(
        match=(
            "回调结果改为按请求 id 对应，而不是依赖返回列表的下标。",
            "worker 之间按逻辑 rank 寻址，不再用物理设备编号。",
            (
                "Outputs are now matched to requests by their id rather than by their index in the "
                "batch."
            ),
            (
                "The arguments are passed by keyword instead of by position, so reordering the "
                "signature cannot swap them."
            ),
        ),
        near=(
            "建议按请求 id 对应结果，目前仍依赖下标。",
            "Results are still matched by their index, so a reordered batch mixes them up.",
        ),
    ),
    "explicit-over-inferred-config": Paraphrases(
        match=(
            "用户显式指定的 `dtype` 总是优先，只有没设置时才从检查点推断。",
            "自动探测只填补用户留空的字段，已经手动设置的值保持原样。",
            (
                "A value the user passes explicitly always wins; the inferred default only applies "
                "when it is left unset."
            ),
            "Auto-detection only fills in `max_model_len` when the user did not set it.",
        ),
        near=(
            "建议让用户显式设置的值优先，目前会被自动推断覆盖。",
            "The inferred dtype overwrites whatever the user passed on the command line.",
        ),
    ),
    "config-inference": Paraphrases(
        match=(
            "KV 缓存精度从检查点的量化配置推断，用户不必再传一遍。",
            "根据 GPU 的计算能力自动决定是否启用 FP8 内核，并把结果写回配置。",
            (
                "The rope scaling is now derived from the model config instead of being passed a "
                "second time."
            ),
            "The attention backend is picked automatically from the hardware's compute capability.",
        ),
        near=(
            "建议从检查点推断精度，目前需要用户手动再传一遍。",
            (
                "Users have to pass the quantization method by hand even though the checkpoint "
                "already records it."
            ),
        ),
    ),
    "request-coalescing": Paraphrases(
        match=(
            "同一个模型的并发加载请求现在共享同一个 future，只真正下载一次。",
            "已有探测在进行中时，后来的调用直接等它的结果，不会再发起新的探测。",
            (
                "Concurrent requests for the same adapter now await one in-flight load instead of "
                "each starting their own."
            ),
            (
                "Identical lookups that arrive while a fetch is pending join that fetch and share "
                "its result."
            ),
        ),
        near=(
            "建议让并发请求共享同一次加载，目前每个请求都会各自下载一遍。",
            "Every concurrent request starts its own download of the same file.",
        ),
    ),
    "graceful-degradation": Paraphrases(
        match=(
            "FlashInfer 不可用时回退到原生 PyTorch 实现，服务照常启动，只记一条 warning。",
            "单个请求的解码出错只返回错误响应，不会把整个引擎打挂。",
            (
                "When the custom kernel fails to compile, the engine falls back to the reference "
                "implementation and keeps serving."
            ),
            (
                "A broken multimodal input now gets a 400 for that request instead of crashing the "
                "server."
            ),
        ),
        near=(
            "建议在内核编译失败时回退到参考实现，目前会直接崩溃。",
            "When the custom kernel fails to compile, the whole server crashes at start-up.",
        ),
    ),
    "scoped-state": Paraphrases(
        match=(
            "临时的采样覆盖只在这个上下文管理器期间有效，退出时随之清掉。",
            "每一步开始时重置这份缓存，它的生命周期只覆盖当前这一步。",
            (
                "The override is installed only for the duration of the `with` block and reset "
                "when the block exits."
            ),
            (
                "The scratch buffer lives exactly as long as the step and is cleared when the step "
                "ends."
            ),
        ),
        near=(
            "建议在每步结束时清掉这份缓存，目前它会一直留着。",
            "The temporary override is never cleared, so it leaks into every later request.",
        ),
    ),
    "copy-with-override": Paraphrases(
        match=(
            "用 `dataclasses.replace` 复制一份配置并只改写 `dtype`，原配置保持不变。",
            "先深拷贝采样参数，再在副本上覆盖 `max_tokens`，调用方传入的对象不被修改。",
            (
                "The draft config is built as a copy of the target's with two fields overridden, "
                "leaving the original untouched."
            ),
            "It calls `replace(params, temperature=0)` instead of mutating the caller's params.",
        ),
        near=(
            "建议先复制一份再改，目前直接修改了调用方传入的对象。",
            "The code mutates the caller's sampling params in place.",
        ),
    ),
    "plugin-registry": Paraphrases(
        match=(
            "各量化方法按名字登记在注册表里，加载时查表取出，取代原来的 if/elif 分支链。",
            "新后端只需在注册表里登记一行，不必改动分发代码。",
            (
                "Backends are registered by name and looked up at start-up, so a new one plugs in "
                "without touching the dispatcher."
            ),
            "The if/elif chain is replaced with a dict of handlers keyed by format name.",
        ),
        near=(
            "建议把这串 if/elif 换成按名字查的注册表。",
            "Adding a backend still means adding another branch to the if/elif chain.",
        ),
    ),
    "bounded-estimate": Paraphrases(
        match=(
            "预估的块数用 `min` 限制在池子的容量之内，不会高估到饿死其他请求。",
            "估算出的批大小夹在 1 和上限之间，再向下取整到块大小的倍数。",
            "The estimated token budget is clamped to the pool size so it can never overflow.",
            "The predicted length is capped at `max_model_len` and rounded up to a whole block.",
        ),
        near=(
            "建议对估算值取个上限，目前可能超过池子的容量。",
            "The estimate can exceed the pool size, which starves the other requests.",
        ),
    ),
    "partial-retry": Paraphrases(
        match=(
            "一批里只有失败的那几个请求会被重新提交，已成功的结果原样保留。",
            "加载中断后只重新拉取缺失的分片，已下载的部分不动。",
            (
                "When part of the batch fails, only the failed requests are resubmitted and the "
                "successful ones are kept."
            ),
            (
                "Only the missing blocks are recomputed after the transfer error; what already "
                "arrived is reused."
            ),
        ),
        near=(
            "建议只重试失败的请求，目前整批都会重跑。",
            "When one request in the batch fails, the whole batch is rerun from scratch.",
        ),
    ),
    "single-effect-path": Paraphrases(
        match=(
            "块的释放收拢到一个函数里，所有结束路径都经过它，既不会漏也不会释放两次。",
            "指标只在统一的收尾函数里记录一次，正常完成和中止都走这条路径。",
            (
                "Freeing the blocks now happens in exactly one function that every exit path goes "
                "through, so it can neither be skipped nor done twice."
            ),
            "All three finish paths now call `_finalize`, which releases the slot exactly once.",
        ),
        near=(
            "建议把释放逻辑收拢到一个函数里，目前中止路径会漏掉。",
            (
                "The abort path frees the blocks and the finish path frees them again, so they are "
                "released twice."
            ),
        ),
    ),
    "ordering-constraint": Paraphrases(
        match=(
            "必须先停掉后台线程再释放缓存，否则线程会访问已释放的内存。",
            "校验一定要在截断之前做，顺序反过来就会漏掉超长的输入。",
            (
                "The engine must drain pending aborts before it processes new outputs, otherwise a "
                "finished request can be revived."
            ),
            "Shutdown now stops the workers first and only then tears down the shared memory.",
        ),
        near=(
            "建议先停线程再释放缓存，目前两者的顺序不固定。",
            "The cache is freed while the background thread is still running, which crashes it.",
        ),
    ),
    "capability-on-type": Paraphrases(
        match=(
            "各注意力后端自己声明是否支持滑窗，调用方只管问，不再用 isinstance 逐个判断。",
            "平台类新增一个可覆盖的方法报告自身能力，调度器据此决定，而不是按平台名特判。",
            (
                "Each backend declares whether it supports cascade attention through a class "
                "method, and callers just ask it."
            ),
            (
                "The runner checks a `supports_mm` capability flag on the model class instead of "
                "listing model types."
            ),
        ),
        near=(
            "建议让各后端自己声明是否支持，而不是在调度器里用 isinstance 逐个判断。",
            "The scheduler still runs isinstance checks against every backend class.",
        ),
    ),
}


def test_paraphrases_cover_every_pattern_in_both_languages() -> None:
    assert sorted(PARAPHRASES) == sorted(p.id for p in KNOWLEDGE.patterns)
    for cases in PARAPHRASES.values():
        assert len(cases.match) == 4
        assert len(cases.near) == 2


@pytest.mark.parametrize(
    ("pattern_id", "sentence"),
    [(p, s) for p, cases in PARAPHRASES.items() for s in cases.match],
)
def test_paraphrases_apply_the_pattern(pattern_id: str, sentence: str) -> None:
    found = patterns_in(sentence)
    assert pattern_id in found, found
    assert KNOWLEDGE.pattern_threshold <= found[pattern_id] <= 1.0


@pytest.mark.parametrize(
    ("pattern_id", "sentence"),
    [(p, s) for p, cases in PARAPHRASES.items() for s in cases.near],
)
def test_paraphrases_near_misses_are_not_evidence(pattern_id: str, sentence: str) -> None:
    assert pattern_id not in patterns_in(sentence)
