"""Reading advice: does the review say the PR deserves a close read, or a skim, and for whom?

Reviewers say it in endless words (建议精读, 值得逐行读一遍, 可以多看两眼, 对照着读一遍,
"worth a careful read", "close-read"; 略读即可, 整体可以快速过, 不必逐行细看, 扫一眼就够了,
了解思路即可, "safe to skim", "a quick pass"), so the phrases are built from two concepts
rather than listed: a *close* reading (细/逐行/仔细/精/对照 + 读/看, a recommended read-through
建议……读一遍 that is not quick, "careful", "read … line by line") and a *light* one
(扫/瞄/粗看/浏览/过一眼 + 即可/就够了, 略读, knowing the conclusion, "skim", "glance"). A
negated close reading (不必逐行细看, 没什么需要细看, "doesn't need a careful review") is a
light one; negations are tried first. "line by line" and "in detail" count only after a
reading verb: "the loop walks the list line by line" describes code, not the reader.

Advice is often scoped: "做调度的同学值得精读，其他人略读即可". Each phrase is read with its
clause: readers named before it make it advice for them (`detail="for:<readers>"`), as does
a condition on the reader in the clause before ("如果你在做调度，值得精读", "If you own the
scheduler, read this closely"); "其他人", "否则", "the rest", "otherwise" make it advice for
everyone else (`detail="others"`). The PR's one `kg:readingAdvice` is the advice for a general
reader: the one given to "the others" when there is one, else the first unscoped phrase, else
the first phrase.
"""

from __future__ import annotations

import regex

from kgraph.model import Entry, Kind, Mention

NEGATION = (
    r"(?:不必|无需|无须|不用|不需要|不太需要|没必要|不值得|不建议|用不着|没什么(?:需要|值得|好)"
    r"|没有(?:需要|值得|必要)|谈不上(?:需要)?)"
)
# Reading one part against another (对照着读一遍, 按表格对照代码读) is a close reading too.
CLOSE_ZH = (
    r"(?:(?:逐行|逐句|逐段|一行行|仔细|认真)(?:地)?(?:读|看|审|品|过)"
    r"|(?:细细|好好|反复|慢慢|细|精)(?:地)?(?:读|看|审|品))"
    r"(?!(?:下来|之下|会|才|就|可以发现|能发现|发现|取|入|写|出))"  # 仔细看会发现: a narrative;
    # 逐行读取配置: code reading data, not a reader
    r"|(?:逐项|逐条|逐字|逐个|一行一行|一条条|一点点|一帧一帧|一步一步|一句一句)(?:地)?(?:读|看|审|过|推|核对|比对|读懂)"
    r"|(?:认真|仔细)(?:地)?(?:核对|比对|推敲|审阅|审查|琢磨|对(?:一下|一遍))|盯着(?:看|读)"
    # tools and time of a slow reading (拿出放大镜来看, 把草稿纸备上, 留出一个下午啃一啃)
    r"|放大镜|显微镜|草稿纸|纸笔|细细琢磨|(?:下|花)(?:点|些)?(?:功夫|工夫)|啃(?:一啃|透|下来)"
    r"|留出[^，,。；;！!\n]{0,8}?(?:下午|上午|晚上|时间|半天|一天)|当作[^，,。；;！!\n]{0,8}?(?:论文|教材)"
    r"|(?:读|看)的时候[^，,。；;！!\n]{0,6}?放慢|放慢(?:速度|节奏)?(?:读|看)"
    r"|(?:跟着|拿纸笔)[^，,。；;！!\n]{0,10}?推(?:一遍|一下|导)|重点关注(?:对象|的(?:地方|部分))"
    r"|对照[^，,。；;！!\n]{0,12}?(?:读|看)|重点(?:读|看)|必读"
    r"|(?:读|看|吃)透|深入(?:地)?(?:研究|读|看|理解|审)"
    # a unit at a time (一个字一个字地看, 一段一段啃, 一行不落地看), taken apart (掰开揉碎)
    r"|(?:一个字一个字|一段一段|一块一块|一行不落|一行不漏|一个不落)(?:地)?(?:读|看|审|过|啃|核对|比对)"
    r"|一行一行[^，,。；;！!\n]{0,12}?(?:过一遍|看一遍|读一遍|核对|比对)|掰开揉碎"
)
# "Read it through" counts only when recommended, and not quickly (建议快速过一遍 is light).
RECOMMEND_ZH = (
    r"(?:建议|值得|推荐|最好)(?:(?!快|粗|略|扫|瞄|浏览|大致|简单|随便)[^，,。；;！!\n]){0,16}?"
    r"(?:通读|读(?:一遍|一下|完)|看一遍)"
)
LIGHT_ZH = (
    r"(?:快速|粗略|大致|简单|整体)?(?:扫|瞄|瞟|过|浏览|翻|看)(?:一眼|一遍|一下|两眼|一过|一翻)"
    r"[^，,。；;！!\n]{0,10}?(?:即可|就够了?|就行|就好|足矣)"
    r"|略读|略看|略过|粗看|速读|泛读|快速浏览|浏览即可|可快速过|快速过|快速扫|扫一下|扫一眼|扫过"
    r"|了解(?:一下)?(?:结论|新写法|思路|意图|背景|用法|即可|就(?:行|好|够))|知道结论|知道(?:就行|即可)"
    r"|几分钟就能看完|一目了然|一眼就能看(?:懂|明白|完)|心里有数|有个印象|走马观花|点到为止"
    r"|看个大概|过目即可|扫读|粗读|简单看看|大致看看|看看就行|随便看看|瞄一眼|一带而过|无需深究|不用深究"
    r"|(?:可以|可)跳过|不用细看|(?:看|读)(?:个|一下|一眼)?[^，,。；;！!\n]{0,8}?(?:标题|描述|结论|测试|摘要)就(?:够|行|足够|好)|不必花(?:太多|很多)?时间"
    r"|(?:不用|不必|无需|无须)(?:太)?(?:关心|在意|纠结|操心)(?:细节|实现)|(?:不用|不必|无需|无须)(?:深究|细究)"
    r"|走(?:个|一下|一遍)?过场|(?:翻|看|扫)(?:两下|几下)[^，,。；;！!\n]{0,6}?(?:就过|就行|就好|即可)"
    r"|(?:了解|知道|明白|看懂|理解|记住)[^，,。；;！!\n]{0,10}?(?:即可|就够了?|就行|就好)"
    r"|(?:可以|可)不看|不(?:用|必)(?:再)?看|不看也(?:行|可以|没关系)|翻翻|一扫而过|看看(?:即可|就好)"
    r"|一目十行|(?:划|刷)(?:一下|一划|一眼)?就(?:过|过去)|(?:扫|看)个大概"
)
SKIM_EN = (
    r"not worth a close read|no need to read (?:it )?(?:closely|carefully|line by line)"
    r"|(?:no need (?:to|for)|needn't|need not|(?:doesn't|does not|don't|do not) need(?: to)?"
    r"|nothing (?:here |in (?:it|this|the diff) )?(?:needs|requires|warrants|deserves)"
    r"|(?:doesn't|does not|don't|do not) (?:require|warrant|deserve)|nothing worth"
    r"|no reason to|(?:won't|will not|shouldn't|should not) need(?: to)?|not necessary to"
    r"|nothing (?:here |in (?:it|this|the diff) )?(?:that )?you (?:need|have|must)(?: to)?)"
    r"\s(?:[a-z]+\s){0,3}?"
    r"(?:close(?:ly)?|careful(?:ly)?|line by line|deep(?:ly)?|in detail|study|studying"
    r"|scrutini[sz]\w*)\b"
    # "the sampler now skims the top-64 logits": code that skims data, not a reader
    r"|\bskim(?:ming|med)?\b|(?<!\b(?:the|this|that|it|which|now)\b[^.;,\n]{0,30})\bskims\b"
    r"|\bskim-level\b|\bglance\b|\bskip (?:it|this)\b"
    r"|\bquick (?:look|pass|read|scan|once-over)\b|\bonce-over\b|\bread (?:it )?quickly\b"
    r"|\bshort and mechanical\b|\bis easy\b|\beasy to follow\b|\beasy read\b|\bbrief look\b"
    r"|\blight read\b|\bskimmable\b|\bat a glance\b|\bnothing (?:subtle|tricky|to study)\b"
    r"|\bnot much to see\b|\bquick review\b|\bmechanical change\b|\bcan be skipped\b"
    r"|\bsafe to (?:skip|ignore)\b|\bcan (?:safely )?skip\b|\bskip\b(?= unless)"
    r"|\beyeball\w*\b|\btl[ ;]?dr\b|\bskip[- ](?:read|through)\b|\bfine to skip\b"
    r"|\bread(?:ing)? the (?:title|description|summary|pr description|commit message)\b"
    r"|\bjust (?:need to )?(?:know|be aware)\b|\band move on\b|\bdon'?t bother\b"
    r"|\bwouldn'?t spend (?:much |any )?time\b"
    r"|\bno (?:deep[- ]dive|careful|close|deep|line-by-line|scrutiny)\b[^.;,\n]{0,20}?"
    r"\b(?:needed|required|necessary)\b"
    r"|\bno deep[- ]dive\b|\bbreez(?:e|ing) through\b|\bdon'?t sweat\b|\bno need to sweat\b"
    # a peek, a look measured in seconds, a title that says it all
    r"|\ba (?:quick )?peek\b|\b(?:\d+|ten|thirty|few)[- ]?sec(?:ond)?s? (?:look|glance|skim)\b"
    r"|\btitle (?:tells you|says) (?:it all|everything)\b"
    r"|\bnot (?:something|a (?:change|diff|pr)) that (?:calls for|needs|deserves)"
    r" a (?:deep|close|careful)"
)
CLOSE_EN = (
    r"worth (?:a )?(?:careful |close(?:ly)? |slow |full |proper )?read(?:ing)?"
    r"(?: closely| carefully| in full)?"
    r"|worth (?:a |the )?(?:careful |close |closer |proper |good |hard |second )?look"
    r"|read (?:it |this(?: one)? )?(?:closely|carefully|line by line|in full|end to end|slowly)"
    r"|\b(?:read(?:ing)?|review(?:ing)?|go(?:ing)? through|check(?:ing)?|look(?:ing)? at"
    r"|walk(?:ing)? through|step(?:ping)? through|trac(?:e|ing)|compar(?:e|ing)|diff(?:ing)?"
    r"|go(?:es|ing)? over)\b"
    r"[^.;,\n]{0,60}?"
    r"\b(?:line by line|in detail|in depth|closely|carefully|slowly|thoroughly|end to end"
    r"|side by side)\b|\brecommend(?:ed)? reading\b|\bdig (?:into|in)\b|\bdraw it out\b"
    r"|\bclose(?:r)?[- ](?:read|look|reading)\b"
    r"|\bcareful(?:ly)? (?:read|look|review)|recommended reading|must[- ]read"
    r"|deserves? (?:a )?(?:careful |close )?(?:look|read|attention)"
    r"|\bworth (?:your|the) (?:time|attention)\b"
    r"|\bworth studying\b|\bcareful review\b|\breview (?:it |this )?carefully\b|\btake your time\b"
    r"|\bstudy (?:it|this|how|the (?:diff|change|code|logic))\b|\bpay (?:close )?attention to\b"
    r"|\bworth digging into\b|\bgo through (?:it |this |the [a-z]+ )?carefully\b"
    r"|\b(?:careful|close|closer) (?:study|reading|scrutiny)\b"
    r"|\brequired reading\b|\bhighly recommended\b|\brecommended (?:for|to)\b|\bscrutin"
    # tools of a slow reading, and a review that must not be a formality
    r"|\bpore over\b|\bloupe\b|\bmagnifying glass\b|\bmicroscope\b|\bpencil in hand\b"
    r"|\bwith a pencil\b|\bpen and paper\b|\bexam material\b|\b(?:don'?t|do not) rubber-?stamp\b"
    r"|\b(?:pen|pencil) in hand\b|\bpatient read\b|\btrac(?:e|ing) every line\b"
    r"|\bsit with\b[^.;\n]{0,30}?\bline by line\b"
)
SKIM = rf"{NEGATION}[^，,。；;\n]{{0,10}}?(?:{CLOSE_ZH})|{LIGHT_ZH}|{SKIM_EN}"
CLOSE_READ = (
    rf"{CLOSE_ZH}|{RECOMMEND_ZH}|值得一(?:读|看)|值得(?:好好)?看看|值得对照|多看(?:两|几)眼|值得细看"
    rf"|值得(?:花(?:点|些)?时间|研究|琢磨|推敲|深究)|(?:建议|值得)重点关注|花(?:点|些)?时间(?:读|看)"
    rf"|推荐阅读|{CLOSE_EN}"
)
ADVICE = regex.compile(rf"(?P<skim>{SKIM})|(?P<close>{CLOSE_READ})", regex.IGNORECASE)
# What every advice phrase contains; ADVICE, whose alternatives are tried at every
# position, runs only on the clauses that hold one (a review has one or two).
ANCHOR = regex.compile(
    r"[读看扫瞄瞟览翻略细精逐审品]|过(?:一|目|[即，,。；;]|$)|速过|了解|了然|知道|几分钟|跳过|深究"
    r"|有数|印象|走马|点到|时间|研究|琢磨|推敲|即可|就够|就行|就好|关注"
    r"|skim|glance|skip|quick|read|look|mechanical|easy|need|once-over|ignore|attention|study"
    r"|careful|close|line by line|detail|depth|studying|review|time|nothing|not much|digging"
    r"|recommended|reading|scrutin|thorough|slowly|warrant|eyeball|tl[ ;]?dr|be aware|just know"
    r"|bother|spend (?:much |any )?time|breez"
    r"|deep[- ]dive|walk(?:ing)? through|step(?:ping)? through|trac(?:e|ing)\b|dig (?:in|into)\b"
    r"|draw it|side by side|end to end|核对|比对|推一|推导|盯|放慢|关心|在意|纠结|操心|重点"
    r"|放大镜|显微镜|草稿纸|纸笔|琢磨|功夫|工夫|啃|留出|论文|教材|过场|细究|两下|几下"
    r"|sweat|pore|loupe|magnif|microscope|pencil|pen and paper|exam|rubber"
    r"|一个字|一段一段|一块一块|一行|一个不落|掰开|一目|[划刷](?:一下|一划|一眼)?就|个大概|peek"
    r"|sec(?:ond)?s? (?:look|glance|skim)|title (?:tells|says)|calls for|patient|pen in"
    r"|go(?:es|ing)? over|sit with",
    regex.IGNORECASE,
)
CLAUSE = regex.compile(r"[^。；;！!？?，,\n]++")
# Readers named in the phrase's clause, before it.
CLAUSE_START = regex.compile(r"[。；;！!？?\n，,](?=[^。；;！!？?\n，,]*$)")
OTHERS = regex.compile(
    r"(?:其他人|其余人|其他同学|其余同学|其他读者|其余读者|别的同学|其他|其余|否则|不然|除此之外|除此以外)"
    r"(?!的?(?:部分|地方|改动|代码|文件|测试|内容|逻辑))"
    r"|\bthe rest\b|\bmost readers\b|\beveryone else\b|\beverybody else\b|\bothers\b"
    r"|\bother readers\b|\botherwise\b|\bif not\b|如果不是|要不是",
    regex.IGNORECASE,
)
ROLE_ZH = (
    r"(?:做|负责|关注|关心|维护|从事|研究|排查过|开发|接触|在做|熟悉|改过|动过|碰过|用到|打算|准备"
    r"|参与|写)"
)
READERS_ZH = regex.compile(
    rf"{ROLE_ZH}[^，,。；;\n]{{1,30}}?(?:的)?(?:同学|人|读者|工程师|开发者|维护者|贡献者|团队)"
    r"|[^，,。；;\n\s]{1,30}?(?:相关的?|方向的?|的)(?:同学|读者|工程师|开发者|维护者|贡献者|团队)"
)
READERS_EN = regex.compile(
    r"\b(?:anyone|people|those|engineers?|maintainers?|readers?|folks|reviewers?|owners?|authors?"
    r"|users?|contributors?|developers?)\s+"
    r"(?:who|working on|touching|maintaining|owning|running|of|that|on|in)\b[^.;!?\n,]{2,60}"
    r"|\bwhoever\s+\w+(?:[^.;!?\n,]|\.(?=\S)){2,60}?(?=\s+(?:should|must|needs?|can|will|wants?)\b|$)"
    r"|\bif you(?:'re| are)? (?:own|maintain|touch|work on|run|review|care about|deal with|call|use"
    r"|working on|touching|maintaining|debugging|debug|\w+ing)\b[^.;!?\n,]{2,60}"
    r"|\b(?:(?!(?:for|to|if)\s)[\w/+-]+\s+){1,3}(?:folks|people|maintainers|owners|developers|engineers|users|authors|callers|consumers|contributors)\b"
    r"|^\s*for\s+(?:[\w/+-]+\s+){0,3}(?:folks|people|maintainers|owners|developers|engineers"
    r"|users|authors|callers|consumers|contributors|reviewers|newcomers)\b",
    regex.IGNORECASE,
)
# A condition on the reader, in the clause before the advice: "如果你在做调度，值得精读".
CONDITION_ZH = regex.compile(
    rf"(?:如果|若|假如|要是|倘若)(?:你|您)?(?:是|正在|在)?{ROLE_ZH}[^，,。；;\n]{{1,30}}"
)
CONDITIONAL = ("如", "若", "假", "要", "倘", "对", "if", "for")
# A clause that is nothing but the readers ("关心采样正确性的人，请仔细对照旧实现看",
# "打算参与 V1 开发的，请把协议读懂").
AUDIENCE_CLAUSE_ZH = regex.compile(
    rf"{ROLE_ZH}[^，,。；;\n]{{1,30}}的(?:同学|人|读者|工程师|开发者|维护者|贡献者|团队)?"
)
# Instructions on reading ("a section on how reviewers should read kernel diffs carefully",
# "指导新贡献者如何逐模块精读") describe a document, not this PR's reader.
HOW_TO = regex.compile(
    r"如何|怎样|怎么|哪些[^，,。；;\n]{0,20}?(?:要|该|需要|值得)(?:细|精|仔细)?(?:读|看)"
    r"|阅读(?:顺序|路径|指南)|自己的|\bhow (?:to|\w+ (?:should|can|could|would|to))\b|\byour own\b"
    r"|\b(?:which|what)\b[^.;,\n]{0,60}?\bto(?:\s*$|\s+(?:read|skim|review|look)\b)",
    regex.IGNORECASE,
)
# The concept layer: a clause the phrases above miss is advice when it combines a reading
# (读/看/过一遍/了解, "read", "look", "pass", "know") with a manner (仔细/逐行/慢, "carefully",
# "line by line"; 快速/略/一眼, "quick", "skim") and an address to the reader (建议/值得/请,
# "worth", "should", or a verb that opens the clause: "Glance at the shim"), or says that a
# reading suffices (读个结论就行, "a skim is fine"), or negates one (不必/别, "no need",
# "don't"). These short lists carry to sentences nobody wrote a phrase for ("要一行一行抠",
# "needs careful eyes"); a narrative of how someone read (看得很仔细, "looked at this
# closely"), code that reads data (逐行读取) and future work stay out.
READ_CONCEPT = (
    r"读(?!取|入|出|到|写|数|回|操作|请求)|看(?!到|出|来|起来|作|成|似|待|护|板|门)|审|阅"
    r"|过(?:一|两|目|遍|$)|浏览|翻|扫|瞄|瞟|研究|琢磨|推敲|核对|比对|抠|推(?:一|导)|理解|了解|知道"
    r"|深究|关注|明白|跳过|略过|忽略"
    r"|\b(?:re)?read(?:ing|s)?\b|\breview(?:ing|s)?\b|\blook(?:ing|s)?\b"
    r"|\b(?:a|one|another|second|quick|light|careful|close|full|skim) pass\b"
    r"|\bgo(?:ing)? (?:over|through)\b|\b(?:walk|step)(?:ing)? through\b|\bskim\w*|\bscan\b"
    r"|\bglanc\w*|\bstud(?:y|ying)\b|\binspect\b|\beyes\b|\beyeball\w*|\battention\b"
    r"|\bonce-over\b|\bcheck(?:ing)?\b|\baudit\b|\bexamin\w*|\btrac(?:e|ing)\b|\bdig(?:ging)?\b"
    r"|\bscrutin\w*|\bknow\b|\bbe aware\b|\bskip(?:ping)?\b|\btl dr\b|\bdeep[- ]dive\b"
    r"|\bflip through\b"
)
CLOSE_CONCEPT = (
    r"仔细|认真|逐[行句段项条字个块]|一行一?行|一条一?条|一点点|细(?:细|致|心|看|读|审|品|抠|究)"
    r"|精(?:读|看|审)|慢|反复|好好|深入|彻底|从头到尾|一字一句|字斟句酌|重点|花(?:点|些|一些)?(?:时间|功夫)"
    r"|严格|小心|抠|推敲|琢磨|研读|研究|深究|对照|对着|跟着|盯|多看|专心|耐心|用心|每一行|每行"
    r"|\bcareful\w*|\bclose(?:ly|r)?\b|\bthorough\w*|\bdetail(?:ed)?\b|\bline[- ]by[- ]line\b"
    r"|\bslow\w*|\bdepth\b|\bdeep(?:ly)?\b|\bhard\b|\bevery line\b|\bword[- ]by[- ]word\b"
    r"|\bin full\b|\bend[- ]to[- ]end\b|\bproper(?:ly)?\b|\battentive\w*|\bmeticulous\w*"
    r"|\bscrutin\w*|\bfine[- ]tooth\w*|\bwith care\b|\btwice\b|\bsecond (?:look|pass|read)\b"
    r"|\bstud(?:y|ying)\b|\bdig(?:ging)?\b|\bdeep[- ]dive\b"
)
LIGHT_CONCEPT = (
    r"快速|很快|快(?=[读看过扫])|粗|略|大致|大概|大体|简单|随便|扫|一眼|两眼|匆匆|草草|浅|走马|翻翻|瞄|瞟|浏览"
    r"|了解|知道|有个印象|标题|结论|描述|摘要"
    r"|\bquick(?:ly)?\b|\bbrief(?:ly)?\b|\bfast\b|\blight(?:ly)?\b|\bcursory\b|\bskim\w*"
    r"|\bglanc\w*|\bsuperficial\w*|\brough(?:ly)?\b|\bonce-over\b|\bcasual(?:ly)?\b"
    r"|\bhigh[- ]level\b|\bskip\w*|\beyeball\w*|\bspeed[- ]read\w*|\bflip through\b|\bknow\b"
    r"|\bbe aware\b|\btl dr\b|\btitle\b|\bdescription\b"
)
ADDRESS_CONCEPT = (
    r"建议|值得|推荐|最好|应该|应当|务必|请|可以|可(?=[略快粗扫浏过跳看读])|需要|必须|一定要|要"
    r"|得(?![很太非多])|不妨"
    r"|\bworth\b|\brecommend\w*|\bshould\b|\bsuggest\w*|\bplease\b|\bmust\b|\bneeds?\b"
    r"|\bdeserves?\b|\bwarrants?\b|\bcan\b|\bjust\b|\bencourage\w*|\badvise\w*|\bi'?d\b"
    r"|\bgive\b|\btake a\b|\bfeel free\b|\bwant to\b|\bbetter\b|\bbest\b|\bonly need\b"
)
# That a reading is enough says it is a light one (看个结论就行, "a skim is fine").
SUFFICES_CONCEPT = (
    r"即可|就够|就行|就好|足矣|足够|就可以|为宜|够了|就成|就能|就明白|就懂|就清楚"
    r"|\benough\b|\bsuffices?\b|\bis all\b|\bplenty\b|\b(?:is|are|'s) fine\b|\bfine to\b"
    r"|\bok(?:ay)?\b|\bsafe to\b|\bthat'?s it\b|\band move on\b|\band approve\b"
)
NEGATED_CONCEPT = (
    rf"{NEGATION}|不要|别(?![的人处])|犯不着|大可不必|不须"
    r"|\bno need\b|\bneedn'?t\b|\bneed not\b|\b(?:don'?t|do not|doesn'?t|does not)\b"
    r"|\bnot worth\b|\bwouldn'?t\b|\bno reason\b|\bwon'?t need\b|\bwill not need\b"
    r"|\bnothing\b(?=\s+(?:here\s+|in\s+\w+\s+)?(?:is\s+)?"
    r"(?:worth|needs|requires|warrants|deserves|to))|\bno\b(?=[^.;,\n]{0,30}?"
    r"\b(?:needed|required|necessary)\b)"
)
# Don't skip it (别跳过, "don't skip") asks for a close reading.
NOT_SKIPPED = regex.compile(
    r"(?:不要|别|不能|不可)(?:跳过|略过|忽略)|\b(?:don'?t|do not|never) skip\b", regex.IGNORECASE
)
# How someone did read (看得很仔细, 细看之下, "looked at this closely").
NOT_A_READER = regex.compile(
    r"得(?:很|非常|比较|十分)|大家|作者|评审时|审的时候|讨论|[看读](?:之下|下来|会|才|就会)|发现"
    r"|\b(?:looked|took|reviewed|walked|went|checked|we|was|were|had|did)\b",
    regex.IGNORECASE,
)
# Work for later (后续建议仔细审查, "a follow-up should review"), which no phrase is either.
LATER = regex.compile(
    r"后续|将来|下一步|(?:之后|以后)再|\b(?:follow-?ups?|in the future|later on"
    r"|in a (?:later|future|separate|follow-up) (?:PR|change))\b",
    regex.IGNORECASE,
)
# A clause opened by the reading or its manner tells the reader to do it ("Glance at the
# shim", "快速过一下", "General audience: skim").
OPENERS = frozenset("just please so then simply only and".split())
# A clause's sentences: an English clause runs across full stops and dashes.
SENTENCES = regex.compile(r"(?:(?<=[.:：])\s++|(?<!\s)\s++(?:[—–]+|-)\s++|——)")


def _gated(concept: str) -> regex.Pattern[str]:
    """The concept, behind a look-ahead on the characters its words can start with.

    Every clause is searched for a reading, and the clauses that have one for the other
    concepts; the look-ahead lets a search skip most positions (1.7x faster on READ).
    It names the Chinese characters that open an alternative, and any English word start.
    """
    firsts = "".join(sorted(set(regex.findall(r"(?:^|\||\(\?:|\()(\p{Han})", concept))))
    return regex.compile(rf"(?=[{firsts}']|\b[a-zA-Z])(?:{concept})", regex.IGNORECASE)


READ = _gated(READ_CONCEPT)
CLOSE = _gated(CLOSE_CONCEPT)
LIGHT = _gated(LIGHT_CONCEPT)
ADDRESS = _gated(ADDRESS_CONCEPT)
SUFFICES = _gated(SUFFICES_CONCEPT)
NEGATED = regex.compile(NEGATED_CONCEPT, regex.IGNORECASE)
# A reading recommended with no manner is a close one (值得一读, "worth a read").
RECOMMENDED = regex.compile(
    r"值得|推荐|建议|\bworth\b|\brecommend\w*|\bdeserves?\b|\bmust[- ]read\b", regex.IGNORECASE
)
# What a negation must deny to be advice: a reading itself (不用看), not a check the code
# leaves out ("does not check the dtype").
READING = regex.compile(
    r"读|看|审|阅|深究|细究|\b(?:read(?:ing)?|review(?:ing)?|look(?:ing)?|stud(?:y|ying))\b",
    regex.IGNORECASE,
)
# A close phrase its clause denies just before (不值得花时间…, "Hardly warrants a careful
# review") is a light reading.
DENIED_BEFORE = regex.compile(
    rf"(?:{NEGATED_CONCEPT})[^，,。；;\n]{{0,12}}$|不$|\b(?:hardly|barely|scarcely)\b[^,.;\n]{{0,20}}$",
    regex.IGNORECASE,
)
# A close reading called needless just after ("Scrutinizing this would be overkill",
# 逐行看纯属多余) is a light one.
DENIED_AFTER = regex.compile(
    r"[^.;,，。；;！!\n]{0,20}?(?:\b(?:would be|is|'s|seems) (?:overkill|unnecessary|not needed)\b"
    r"|纯属多余|(?:就|是|有点|有些)多余|大可不必|没(?:有)?必要)",
    regex.IGNORECASE,
)
# Someone else's reading, told (被几位维护者逐行过了一遍, 作者对着旧实现仔细比对过): a
# passive or a named reader before the phrase, or the experiential 过 after it.
NARRATED_BEFORE = regex.compile(r"被|作者|评审(?:时|阶段|中|过程)|审的时候")
NARRATED_AFTER = regex.compile(r"过(?![一两目遍])|了一遍")
TL_DR = regex.compile(r"\bTL;DR\b", regex.IGNORECASE)
SENTENCE_END = regex.compile(r"(?<=[.])\s+")
CLAUSE_BEFORE = regex.compile(r"[^。；;！!？?\n，,]{2,40}[，,]\s*$")


def extract_advice(entry: Entry) -> list[Mention]:
    """Every advice phrase, the general reader's first (it has no `detail`).

    A clause no phrase matches is read through the concepts (`_described`)."""
    found: list[Mention] = []
    text = TL_DR.sub("TL DR", entry.text)  # one clause, not two; the offsets stay
    for clause in CLAUSE.finditer(text):
        readings = [
            ("skim" if m.group("skim") else "close-read", m.start(), m.end())
            for m in (
                ADVICE.finditer(text, clause.start(), clause.end())
                if ANCHOR.search(text, clause.start(), clause.end())
                else ()
            )
        ] or _described(text, clause.start(), clause.end())
        for key, start, end in readings:
            sentence = max((m.end() for m in SENTENCE_END.finditer(text, clause.start(), start)),
                           default=clause.start())  # fmt: skip
            if HOW_TO.search(text, sentence, start) or LATER.search(text, sentence, start):
                continue  # how one should read, in a document the PR adds; work for later
            if key == "close-read" and (
                NARRATED_BEFORE.search(text, sentence, start) or NARRATED_AFTER.match(text, end)
            ):
                continue  # how someone else read it
            if key == "close-read" and (
                DENIED_BEFORE.search(text, sentence, start) or DENIED_AFTER.match(text, end)
            ):
                key = "skim"
            found.append(
                Mention(
                    Kind.ADVICE, key, entry.text[start:end], start, end,
                    detail=_scope(text, start, end),
                )
            )  # fmt: skip
    if not found:
        return []
    general = next((m for m in found if m.detail == "others"), None) or next(
        (m for m in found if not m.detail.startswith("for:")), found[0]
    )
    scoped = [m for m in found if m.detail.startswith("for:")]
    return [general._replace(detail=""), *scoped]


def _described(text: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """The clause's advice from the concepts, when no phrase names it."""
    found: list[tuple[str, int, int]] = []
    for cut in (*SENTENCES.finditer(text, start, end), None):
        stop = cut.start() if cut else end
        if reading := _reading(text, start, stop):
            found.append(reading)
        start = cut.end() if cut else end
    return found


def _reading(text: str, start: int, end: int) -> tuple[str, int, int] | None:
    """A reading with a manner and an address, a reading that suffices, or a negated one."""
    if not (read := READ.search(text, start, end)):
        return None  # most clauses: no reading at all
    if NOT_A_READER.search(text, start, end) or LATER.search(text, start, end):
        return None
    if HOW_TO.search(text, start, end):
        return None  # how one should read, in a document the PR adds
    if skipped := NOT_SKIPPED.search(text, start, end):
        return ("close-read", *skipped.span())
    close = CLOSE.search(text, start, end)
    light = LIGHT.search(text, start, end)
    address = ADDRESS.search(text, start, end)
    suffices = SUFFICES.search(text, start, end)
    negated = NEGATED.search(text, start, end)
    concepts = [m for m in (read, close, light, address, suffices, negated) if m is not None]
    first = min(m.start() for m in concepts)
    span = (first, max(m.end() for m in concepts))
    if negated is not None:
        denied = close or READING.search(text, negated.end(), end)
        return ("skim", *span) if denied and negated.start() < denied.start() else None
    if close is not None and light is None:
        opens = _opens(text[start:first])
        return ("close-read", *span) if address or opens else None
    if light is None and suffices is None:
        recommended = RECOMMENDED.search(text, start, end)
        reading = READING.search(text, start, end)
        if recommended and reading and recommended.start() < reading.start():
            return ("close-read", *span)
    if light is not None or suffices is not None:
        opens = _opens(text[start:first])
        return ("skim", *span) if address or suffices or opens else None
    return None


def _opens(before: str) -> bool:
    """Whether the words before a clause's first concept leave it opening the clause."""
    words = before.strip()
    return words.lower() in OPENERS or not words or words.endswith((":", "："))


def _scope(text: str, start: int, end: int) -> str:
    """Whom the phrase at `start` addresses: "for:<readers>", "others" or "" (everyone)."""
    before = text[max(0, start - 60) : start]
    if cut := CLAUSE_START.search(before):
        earlier, before = before[: cut.end()], before[cut.end() :]
    else:
        earlier = ""
    if OTHERS.search(before):
        return "others"
    if readers := READERS_ZH.search(before) or READERS_EN.search(before):
        return "for:" + " ".join(readers.group(0).split())
    after = text[end : end + 60].split("\n", 1)[0]  # "worth a careful read for anyone who…"
    if (readers := READERS_EN.search(after)) and readers.start() <= 5:
        return "for:" + " ".join(readers.group(0).split())
    # The reader named by a condition in the clause just before ("If you own X, read…").
    if clause := CLAUSE_BEFORE.search(earlier):
        prior = SENTENCE_END.split(clause.group(0))[-1].strip(" ，,")
        named = CONDITION_ZH.search(prior) or READERS_ZH.search(prior) or READERS_EN.search(prior)
        if named and prior.lower().startswith(CONDITIONAL):
            return "for:" + " ".join(prior.split())
        if (audience := AUDIENCE_CLAUSE_ZH.fullmatch(prior)) is not None:
            return "for:" + " ".join(audience.group(0).split())
        if OTHERS.match(prior):  # "Otherwise the diff is repetitive, skip-read it."
            return "others"
    return ""
