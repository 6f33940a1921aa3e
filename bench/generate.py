"""A seeded corpus of synthetic review digests, shaped like the real ones, for scale work.

The benchmark and the scale tests need digests by the thousand, and real ones come seven
to fourteen entries a day. This module writes as many as asked, in both plain-text
styles kgraph reads (daily digests and per-repository tag views), in Chinese and English,
with the traits that make a corpus expensive or tricky at scale:

- realistic lengths (about 600 bytes an entry) and code-span density (five to twelve
  backticked spans an entry: files, classes, methods, functions, standard-library names,
  expressions, flags, environment variables);
- several repositories, each with its own package root, so paths name their repository;
- a skewed (Zipf) choice of symbols and files, so a few are named by thousands of PRs,
  many by a handful, most by one: the shape that makes shared-code pairs explode;
- PRs that appear in several digests (a daily digest and a later tag view, or a follow-up),
  with or without a `(#N)` in the title;
- issue references, pull URLs, reviewers' handles and reading advice.

Every sentence comes from the templates and vocabularies below, never from the seeds.
The same seed and entry count always give the same bytes (no set iteration, no hash
randomisation, no clock): `python bench/generate.py OUT --entries 10000 --seed 1`.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import random
import shutil
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

# --- vocabularies -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RepoSpec:
    name: str  # owner/name
    root: str  # package root: every full path starts with it, so it names the repository
    weight: float  # share of the corpus' PRs
    first_number: int  # PR numbers start here and grow
    size: int  # vocabulary scale: how many files and symbols the code base has


REPOS = (
    RepoSpec("vllm-project/vllm", "vllm", 0.42, 41000, 6000),
    RepoSpec("sgl-project/sglang", "python/sglang", 0.28, 15000, 4000),
    RepoSpec("tensorloom/loomserve", "loomserve", 0.12, 2100, 1500),
    RepoSpec("quarry-labs/quarry-rt", "quarry_rt", 0.10, 800, 1200),
    RepoSpec("fernhill/kvstash", "kvstash", 0.08, 300, 800),
)

NOUNS = (
    "cache block pool sched offload kv lookup window token prefix radix tree spec decode "
    "prefill mamba lora adapter router worker engine core queue batch request stream buffer "
    "region shm rpc port tier policy eviction recency handler connector transfer job config "
    "parser grammar sampler logits kernel grid layout page segment stride zeroer metrics stats "
    "tracker slot chunk draft expert layer rank group mesh plan profile snapshot manifest "
    "session tenant quota lease epoch cursor ledger shard replica fence barrier watermark"
).split()
VERBS = (
    "get set compute update resolve validate free alloc release drain flush check ensure apply "
    "build init reset prepare schedule evict touch bind align register load store merge split "
    "pin unpin probe collect finalize commit rollback reserve admit reject route dispatch"
).split()
CLASS_SUFFIXES = (
    "Manager Pool Scheduler Connector Worker Handler Factory Cache Allocator Tracker Config "
    "Spec Server Runner Processor Router Buffer Region Queue Planner Registry Ledger"
).split()
DIRS = (
    "core sched worker engine executor distributed kv_offload kv_transfer mem_cache attention "
    "backends layers model_executor spec_decode structured_output lora entrypoints utils "
    "disaggregation managers ops quantization multimodal sampling metrics compilation runtime"
).split()
TEST_DIRS = ("tests", "tests/v1", "test/registered", "tests/unit")

EXTERNAL = (
    "dataclasses.replace threading.Event threading.Lock min() max() len() isinstance() "
    "monkeypatch functools.partial os.ftruncate importlib.import_module asyncio.Queue "
    "contextlib.suppress pytest.mark.parametrize sorted() weakref.ref collections.deque "
    "time.monotonic itertools.chain tmp_path caplog heapq.heappush"
).split()
ENV_PREFIXES = ("VLLM", "SGLANG", "CUDA", "NCCL")
FLAG_WORDS = ("enable", "disable", "max", "num", "use", "force", "allow")
COMMANDS = ("pytest {test} -k {word}", "python -m {root}.bench --{word}", "git bisect run")
HANDLES = (
    "ivo-lin mkaz tessa-r juno42 hwang-dev p-oyelaran qzhou srinath-k "
    "alba-m dmitri-v kenta-s noor-h rlopez yfang"
).split()

AREAS_ZH = (
    "KV 卸载", "调度器", "前缀缓存", "投机解码", "分布式通信", "LoRA 加载", "结构化输出",
    "量化内核", "多模态编码", "PD 分离", "内存池", "专家并行", "注意力后端", "模型加载",
    "采样器", "启动流程",
)  # fmt: skip
AREAS_EN = (
    "KV offload", "the scheduler", "prefix caching", "speculative decoding", "collectives",
    "LoRA loading", "structured output", "quantised kernels", "multimodal encoders",
    "disaggregated serving", "the memory pool", "expert parallelism", "attention backends",
    "model loading", "the sampler", "start-up",
)  # fmt: skip
CONCEPTS_ZH = (
    "所有权", "生命周期", "状态推进", "回收顺序", "失败语义", "缓存口径", "重试边界",
    "并发时序", "配置优先级", "索引映射", "容量估算", "幂等性", "唤醒通知", "版本兼容",
)  # fmt: skip
CONCEPTS_EN = (
    "ownership", "lifetime", "state transitions", "release order", "failure semantics",
    "accounting", "retry bounds", "ordering under concurrency", "config precedence",
    "index mapping", "capacity estimates", "idempotence", "wake-up signalling",
)  # fmt: skip
PROBLEMS_ZH = (
    "会在高并发下重复释放槽位", "导致淘汰顺序与访问顺序不一致", "让等待中的请求永久卡住",
    "在配置缺省时静默退化", "把已经过期的作业当成在途", "在 rank 0 上被当成未设置",
    "每轮调度都多算一个块", "关停时泄漏共享内存", "使两个 worker 抢到同一个端口",
    "让日志刷屏却不报错",
)  # fmt: skip
PROBLEMS_EN = (
    "could free the same slot twice under load", "evicted blocks out of access order",
    "left waiting requests stuck forever", "silently degraded when the option was unset",
    "treated stale jobs as in flight", "read rank 0 as unset", "over-counted one block per step",
    "leaked shared memory on shutdown", "let two workers race for one port",
)  # fmt: skip
EFFECTS_ZH = (
    "把状态推进收拢到唯一入口", "失败时立即抛错并归还资源", "让两条路径共用同一份估算",
    "把隐式约定写成断言", "把回收时机挪到所有方向都停下之后", "让缺省值只在未填写时生效",
)  # fmt: skip
EFFECTS_EN = (
    "funnels every state change through one entry point",
    "fails loudly and returns the resources first", "makes both paths share one estimate",
    "turns an implicit rule into an assertion", "releases only after both directions stop",
    "lets the default apply only when nothing was given",
)  # fmt: skip
PRINCIPLES_ZH = (
    "没准备好就明确说没准备好", "所有权跟着对象走", "用显式状态机替代布尔标记",
    "单一事实来源", "校验放在所有请求必经的一处", "扩展既有接口而非另起一套",
    "懒失效加原子回滚", "用户写了什么就用什么",
)  # fmt: skip
PRINCIPLES_EN = (
    "say not-ready plainly instead of serving half an answer", "ownership follows the object",
    "an explicit state machine instead of boolean flags", "a single source of truth",
    "validate once where every request passes", "extend the existing API, do not add another",
    "lazy invalidation with atomic rollback", "use what the user wrote",
)  # fmt: skip
TITLE_VERBS_ZH = ("修复", "重构", "新增", "拆分", "收拢", "下沉", "校验", "加速", "简化", "回退")
TITLE_TAILS_ZH = (
    "避免重复释放", "修正淘汰顺序", "消除竞态", "减少一次拷贝", "支持按请求配置",
    "启动期即失败", "不再泄漏", "统一估算口径", "兼容旧配置", "补齐回归测试",
)  # fmt: skip
TITLE_VERBS_EN = ("Fix", "Refactor", "Add", "Split", "Move", "Validate", "Speed up", "Simplify")
TITLE_TAILS_EN = (
    "to avoid a double free", "in eviction order", "under concurrent lookups", "without a copy",
    "per request", "at start-up", "on shutdown", "for hybrid models", "behind a flag",
)  # fmt: skip

ZH_SENTENCES = (
    "`{method}` 原来在 `{func}` 里直接处理，{problem}。",
    "修复集中在 `{file}`：`{cls}` 新增 `{func}`，{effect}。",
    "核心决策是「{principle}」，这比到处打补丁更不容易漏。",
    "`{base}` 的 `{func}()` 与 `{func2}()` 现在共用同一份{concept}判断。",
    "测试用 `{ext}` 把{concept}钉死成确定性断言，位于 `{test}`。",
    "注意 `{expr}` 这一写法：它决定了边界情况下的{concept}。",
    "与 #{issue} 的改动相互配合，建议一起看。",
    "背景见 https://github.com/{repo}/pull/{issue} 。",
    "review 中 {person} 指出 `{cls}` 的{concept}还缺一条测试。",
    "若你负责{area}，建议顺手检查 `{method}` 的调用方。",
    "`{cls}.{verb}_{noun}` 现在先调用 `{func}` 再更新 `{attr}`，{effect}。",
    "旧实现靠 `{flag}` 开关兜底，本 PR 删掉了这条分支，{effect}。",
    "复现方式是设置 `{env}` 后运行 `{command}`，修复前必现。",
    "`{file}` 中 `{func}`、`{func2}` 两处的{concept}被统一，读起来清楚得多。",
    "这一改动只动了 `{base}` 的十几行，却牵涉整个{area}的{concept}。",
    "用 `{expr}` 而非 `{literal}` 表达未设置，{effect}。",
    "后续可以考虑让 `{cls2}` 也走同一条路径，目前仍由 `{method}` 单独处理。",
)
ZH_LEADS = (
    "值得精读。",
    "建议精读，尤其是维护{area}的同学。",
    "可快速浏览。",
    "不值得精读，可快速浏览。",
    "值得精读，改动虽小却牵涉{area}的{concept}。",
    "建议精读，面向关注{area}的工程师。",
)
ZH_LIST_LEAD = "建议精读，{area}方向的工程师更应细看："
EN_SENTENCES = (
    "`{method}` used to handle this inline in `{func}`, which {problem}.",
    "The fix lives in `{file}`: `{cls}` gains `{func}`, which {effect}.",
    'The key decision is "{principle}", which is harder to get wrong than scattered patches.',
    "`{func}()` and `{func2}()` in `{base}` now share one check for {concept}.",
    "The test uses `{ext}` to pin {concept} down as a deterministic assertion in `{test}`.",
    "Note `{expr}`: it decides {concept} at the boundary.",
    "Pairs with #{issue}; read them together.",
    "Background in https://github.com/{repo}/pull/{issue} .",
    "In review, {person} asked for one more test of {concept} in `{cls}`.",
    "If you own {area}, check the callers of `{method}` as well.",
    "`{cls}.{verb}_{noun}` now calls `{func}` before updating `{attr}`; it {effect}.",
    "The old code fell back on `{flag}`; this PR drops that branch and {effect}.",
    "To reproduce, set `{env}` and run `{command}`; it fails every time before the fix.",
    "Using `{expr}` rather than `{literal}` for unset values {effect}.",
)
EN_LEADS = (
    "Worth a close read.",
    "Worth a close read if you maintain {area}.",
    "Skim.",
    "Skim; the interesting part is the test.",
)


# --- code vocabulary per repository -----------------------------------------------------------


def _camel(words: list[str]) -> str:
    return "".join(w.upper() if w in ("kv", "shm", "rpc") else w.capitalize() for w in words)


class Zipf:
    """Draw from a list with probability proportional to 1 / rank**s: a few items dominate."""

    def __init__(self, items: list[str], s: float = 1.05) -> None:
        self.items = items
        weights = [1.0 / (rank**s) for rank in range(1, len(items) + 1)]
        self.cumulative = list(itertools.accumulate(weights))

    def draw(self, rng: random.Random) -> str:
        point = rng.random() * self.cumulative[-1]
        return self.items[bisect.bisect_right(self.cumulative, point)]


@dataclass
class CodeBase:
    """The names one repository's reviews can mention, each list in Zipf rank order."""

    spec: RepoSpec
    files: Zipf
    classes: Zipf
    functions: Zipf
    methods: Zipf
    tests: list[str]


def _unique(rng: random.Random, count: int, make) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    attempts = 0
    while len(out) < count and attempts < count * 20:
        attempts += 1
        name = make()
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def _code_base(spec: RepoSpec, rng: random.Random) -> CodeBase:
    size = spec.size

    def make_file() -> str:
        depth = rng.randint(1, 3)
        parts = [spec.root, *rng.sample(DIRS, depth)]
        module = "_".join(rng.sample(NOUNS, rng.choice((1, 1, 2))))
        return "/".join(parts) + f"/{module}.py"

    def make_class() -> str:
        return _camel(rng.sample(NOUNS, rng.randint(1, 2))) + rng.choice(CLASS_SUFFIXES)

    def make_function() -> str:
        name = rng.choice(VERBS) + "_" + "_".join(rng.sample(NOUNS, rng.randint(1, 3)))
        return ("_" if rng.random() < 0.3 else "") + name

    files = _unique(rng, size // 2, make_file)
    classes = _unique(rng, size // 3, make_class)
    functions = _unique(rng, size, make_function)
    methods = _unique(rng, size, lambda: f"{rng.choice(classes)}.{rng.choice(functions)}")
    tests = [
        f"{rng.choice(TEST_DIRS)}/{f.rsplit('/', 2)[-2]}/test_{f.rsplit('/', 1)[-1]}"
        for f in files[: max(10, len(files) // 10)]
    ]
    return CodeBase(spec, Zipf(files), Zipf(classes), Zipf(functions), Zipf(methods), tests)


# --- pull requests and their entries ----------------------------------------------------------


@dataclass
class PullRequest:
    repo: CodeBase
    number: int
    english: bool
    title: str
    seed: int  # its summary is drawn from this seed, so a repeat can say the same again
    numbered_title: bool
    reviews: int = 0
    extra: dict[str, str] = field(default_factory=dict)


def _slots(pr: PullRequest, rng: random.Random) -> dict[str, str]:
    code = pr.repo
    file = code.files.draw(rng)
    cls = code.classes.draw(rng)
    func = code.functions.draw(rng)
    var = rng.choice(NOUNS) + "_" + rng.choice(NOUNS)
    exprs = (
        f"{var} is None",
        f"{var} >= {rng.randint(1, 64)}",
        f"len({var}) + 1",
        f"{var} * {rng.choice(NOUNS)}_size",
        ">=",
        "2**31 - 1",
    )
    english = pr.english
    return {
        "file": file,
        "base": file.rsplit("/", 1)[-1] if rng.random() < 0.5 else file,
        "cls": cls,
        "cls2": code.classes.draw(rng),
        "func": func,
        "func2": code.functions.draw(rng),
        "method": code.methods.draw(rng),
        "verb": rng.choice(VERBS),
        "noun": rng.choice(NOUNS),
        "attr": "_" + var,
        "ext": rng.choice(EXTERNAL),
        "expr": rng.choice(exprs),
        "literal": rng.choice(("0", "None", "-1", "False")),
        "flag": f"--{rng.choice(FLAG_WORDS)}-{rng.choice(NOUNS)}-{rng.choice(NOUNS)}",
        "env": f"{rng.choice(ENV_PREFIXES)}_{rng.choice(NOUNS).upper()}_{var.upper()}=1",
        "command": rng.choice(COMMANDS).format(
            test=rng.choice(code.tests), word=rng.choice(NOUNS), root=code.spec.root
        ),
        "test": rng.choice(code.tests),
        "issue": str(rng.randint(code.spec.first_number // 2, code.spec.first_number + 9000)),
        "repo": code.spec.name,
        "person": rng.choice(HANDLES),
        "area": rng.choice(AREAS_EN if english else AREAS_ZH),
        "concept": rng.choice(CONCEPTS_EN if english else CONCEPTS_ZH),
        "problem": rng.choice(PROBLEMS_EN if english else PROBLEMS_ZH),
        "effect": rng.choice(EFFECTS_EN if english else EFFECTS_ZH),
        "principle": rng.choice(PRINCIPLES_EN if english else PRINCIPLES_ZH),
    }


def _summary(pr: PullRequest, variant: int) -> list[str]:
    """The review as lines: usually one, sometimes a lead line ending in `：` and `- ` items."""
    rng = random.Random(pr.seed * 7919 + variant)
    sentences = EN_SENTENCES if pr.english else ZH_SENTENCES
    lead = rng.choice(EN_LEADS if pr.english else ZH_LEADS).format(**_slots(pr, rng))
    body = [rng.choice(sentences).format(**_slots(pr, rng)) for _ in range(rng.randint(3, 7))]
    if not pr.english and rng.random() < 0.12:
        return [ZH_LIST_LEAD.format(**_slots(pr, rng)), *(f"- {s}" for s in body)]
    return [(" " if pr.english else "").join([lead, *body])]


def _title(pr_rng: random.Random, code: CodeBase, english: bool) -> str:
    subject = _subject(pr_rng, code)
    if english:
        return f"{pr_rng.choice(TITLE_VERBS_EN)} {subject} {pr_rng.choice(TITLE_TAILS_EN)}"
    area = pr_rng.choice(AREAS_ZH)
    return f"{pr_rng.choice(TITLE_VERBS_ZH)} {area}中的 {subject}，{pr_rng.choice(TITLE_TAILS_ZH)}"


def _subject(rng: random.Random, code: CodeBase) -> str:
    """A bare identifier for a title: titles name code without backticks."""
    pick = rng.random()
    if pick < 0.4:
        return code.classes.draw(rng)
    if pick < 0.8:
        return code.functions.draw(rng).lstrip("_")
    return code.files.draw(rng).rsplit("/", 1)[-1]


# --- digests ----------------------------------------------------------------------------------


@dataclass
class Corpus:
    files: list[Path]
    entries: int
    pull_requests: int
    bytes: int


class _Writer:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.codebases = [_code_base(spec, random.Random(f"{seed}:{spec.name}")) for spec in REPOS]
        self.weights = list(itertools.accumulate(spec.weight for spec in REPOS))
        self.next_number = {spec.name: spec.first_number for spec in REPOS}
        self.prs: list[PullRequest] = []
        self.titles: set[str] = set()

    def _repo(self) -> CodeBase:
        point = self.rng.random() * self.weights[-1]
        return self.codebases[bisect.bisect_right(self.weights, point)]

    def new_pr(self, code: CodeBase) -> PullRequest:
        rng = self.rng
        number = self.next_number[code.spec.name] + rng.randint(1, 6)
        self.next_number[code.spec.name] = number
        english = rng.random() < 0.16
        for _ in range(20):
            title = _title(rng, code, english)
            if title.casefold() not in self.titles:
                break
        else:
            title = f"{title} (#{number})"
        self.titles.add(title.casefold())
        numbered = rng.random() < 0.15
        pr = PullRequest(code, number, english, title, rng.getrandbits(32), numbered)
        self.prs.append(pr)
        return pr

    def pick(self, repo: CodeBase | None) -> tuple[PullRequest, int]:
        """A PR for the next entry and the summary variant: mostly new, sometimes a repeat."""
        rng = self.rng
        if self.prs and rng.random() < 0.2:
            recent = self.prs[-3000:]
            for _ in range(8):
                pr = rng.choice(recent)
                if repo is None or pr.repo is repo:
                    pr.reviews += 1
                    return pr, (0 if rng.random() < 0.7 else pr.reviews)
        return self.new_pr(repo or self._repo()), 0

    def title_of(self, pr: PullRequest) -> str:
        suffix = f" (#{pr.number})" if pr.numbered_title and "(#" not in pr.title else ""
        return pr.title + suffix


def generate(out_dir: Path, entries: int, seed: int = 0) -> Corpus:
    """Write `entries` entries of digests into `out_dir` (emptied first); same input, same bytes."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    writer = _Writer(seed)
    rng = writer.rng
    day = date(2024, 1, 1)
    written = 0
    files: list[Path] = []
    total_bytes = 0
    while written < entries:
        if rng.random() < 0.35:
            repo = writer._repo()
            count = min(entries - written, rng.randint(6, 30))
            name = f"tag-view/{repo.spec.name.replace('/', '_')}_{len(files):06d}.txt"
            text = _tag_view(writer, repo, count)
        else:
            count = min(entries - written, rng.randint(6, 24))
            name = f"daily/{day.year}/{day.isoformat()}.txt"
            text = _daily(writer, day, count)
            day += timedelta(days=1)
        path = out_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        files.append(path)
        total_bytes += len(data)
        written += count
    return Corpus(files, written, len(writer.prs), total_bytes)


def _daily(writer: _Writer, day: date, count: int) -> str:
    lines = [day.isoformat()]
    for _ in range(count):
        pr, variant = writer.pick(None)
        lines.append(writer.title_of(pr))
        lines.extend(_summary(pr, variant))
    return "\n".join(lines) + "\n"


def _tag_view(writer: _Writer, repo: CodeBase, count: int) -> str:
    blocks = [f"{repo.spec.name} · {'tag view' if writer.rng.random() < 0.1 else '标签视图'}"]
    for _ in range(count):
        pr, variant = writer.pick(repo)
        blocks.append(writer.title_of(pr))
        blocks.append(" ".join(_summary(pr, variant)))
    return "\n\n".join(blocks) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to (re)create")
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    corpus = generate(args.out, args.entries, args.seed)
    print(
        f"{len(corpus.files)} digests, {corpus.entries} entries, {corpus.pull_requests} PRs, "
        f"{corpus.bytes / 1e6:.1f} MB in {args.out}"
    )


if __name__ == "__main__":
    main()
