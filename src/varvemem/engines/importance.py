"""What a memory is, read from its words (zh and en): the named signals behind its importance.

A signal is a kind of content worth keeping: a failure, its resolution or cause, the change
that fixed it, a procedure, a command or configuration, a decision, a rule, the description
of a format or interface, a confirmation, a request to remember. Each is a row of
:data:`SIGNALS` (its patterns, and whether a question or a negated sentence still counts);
its weight is the setting ``update.importance_signals[name]``. The rules read the text
sentence by sentence, so "did that fix it?" or "still not fixed" is no resolution, and a
turn that is only thanks or an acknowledgement carries no signal at all.

:func:`signals` is monotone: a sentence added to a text never takes a signal away, so
importance never falls when something worth keeping is said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import get_args

from ..language.segment import is_question, sentences
from ..settings import ImportanceSignal


@dataclass(frozen=True)
class Signal:
    """One kind of content: ``en`` (Latin script, digits and symbols) and ``zh`` (Chinese)
    mark it in a sentence, each read only when the sentence has its script; ``min_hits``
    matches are
    needed over the text's sentences (a procedure needs two steps). ``in_questions``: a
    question still shows it (a failure asked about is still a failure; "can you remember
    that?" is still a request). ``negatable``: a negated or conditional sentence does not
    show it ("didn't fix it", "if that works")."""

    meaning: str
    en: re.Pattern[str]
    zh: re.Pattern[str] | None = None
    min_hits: int = 1
    in_questions: bool = False
    negatable: bool = False


# Which patterns a sentence needs: the Latin-script ones also hold digits and symbols
# (numbered steps, commands, status codes), so any of those wakes them.
_LATIN = re.compile(r"[a-z0-9`$/=]")
_HAN = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
_CLAUSE = re.compile(
    r"[,，、]|\s*\b(?:but|however|though|although|yet)\b|(?:但是?|不过|可是|结果)")
# "not fixed", "didn't help", "still failing", "if that works": a sentence that says a
# resolution did not (or may not) happen.
_NEGATED = re.compile(
    r"\b(not|never|no longer|didn'?t|doesn'?t|don'?t|isn'?t|wasn'?t|won'?t|can'?t|cannot|"
    r"couldn'?t|hasn'?t|haven'?t|still|no luck|nothing)\b.{0,30}\b(fix|resolv|solv|work|help|"
    r"sort|good|fine|better|normal|stable|green|pass|success|did it)|\b(if|whether|unless|"
    r"in case|hopefully|maybe|might|try|trying|let'?s see)\b|"
    r"没(有)?(解决|修好|好|生效|成功|用)|还是(不行|没|报错|失败|老样子)|仍然|依然|不管用|没用|"
    r"如果|要是|万一|试试|看看(能不能|是否)")
# Standing on its own, a turn of thanks or acknowledgement says nothing to keep.
_TRIVIAL = re.compile(
    r"^\W*((ok(ay)?|k|sure|yes|yep|yeah|no|nope|thanks?( you)?( (so|very) much)?|thx|ty|cheers|"
    r"great|cool|nice|perfect|awesome|got it|understood|noted|roger|sounds good|will do|"
    r"good|fine|lol|hi|hello|hey|bye|np|no problem|you'?re welcome|"
    r"好的?|好了|好吧|嗯+|哦+|谢谢(你|啦)?|多谢|感谢|收到|明白(了)?|知道了|了解|可以|行|没问题|辛苦了|"
    r"你好|再见|拜拜|哈+)\W*)+$")

SIGNALS: dict[ImportanceSignal, Signal] = {
    "failure": Signal(
        "something went wrong: an error, a crash, an outage, a symptom",
        en=re.compile(
            r"\b(fail(ed|ure|ures|s|ing)?|errors?|exceptions?|crash\w*|outages?|incidents?|"
            r"broken|broke|backoff|firing|time[sd]? ?outs?|timed out|timing out|"
            r"lag(s|ging)?|stale|denied|unauthori[sz]ed|"
            r"forbidden|refused|exhausted|oom\w*|leak(s|ing)?|stuck|hangs?|hanging|"
            r"(is|are|was|were|went|goes) down|unreachable|unavailable|not working|"
            r"doesn'?t work|won'?t start|can'?t|cannot|slow(er|ness)?|5xx|"
            r"[45]\d\d (errors?|responses?|status)|(http|status) [45]\d\d|panic\w*|"
            r"regression|flaky|bugs?|no data|missing|empty|blank|not showing|disappeared|"
            r"reject(s|ed|ing)?)\b"),
        zh=re.compile(
            r"失败|错误|故障|报错|告警|异常|崩溃|超时|挂了|卡住|卡死|不通|宕机|无法|不能用|打不开|"
            r"变慢|很慢|泄漏|不可用|出错|看不懂|搞不定|不行|没数据|丢了|积压|堵塞|阻塞|满了|磁盘满|空间不足|"
            r"延迟高|丢消息|[45]\d\d ?(报错|错误)"),
        in_questions=True),
    "resolution": Signal(
        "the problem went away: fixed, solved, working again",
        en=re.compile(
            r"\b(fix(ed|es)?|resolved?|solved|solves|solution|sorted( it)?( out)?|"
            r"worked around|workaround|that did it|did the trick|does the trick|"
            r"(works?|working|runs?|running|up|back|fine|ok|okay|green|healthy|stable|normal|"
            r"responding|loading|passing) (\w+ )?(again|now)|back to normal|back up|"
            r"went away|(is|are|was|were) gone|gone now|"
            r"no more (\w+ )?(errors?|timeouts?|crash\w*|alerts?|failures?)|"
            r"(stopped|stops) (failing|crashing|erroring|timing out)|recovered|"
            r"(everything|all|it) (\w+ )?(works|worked|ran|runs|is fine|was fine|went through|"
            r"is green|was green|passed|passes)|what (finally )?worked|"
            r"the (trick|fix|solution|workaround)( \w+){0,6} (is|was) to|"
            r"(?!(fail|crash|die|time|restart|reboot|happen|occur|spik|drop|stopp|reject|deni|"
            r"refus|lagg|stall|freez|block|exhaust|throttl|kill|evict|error|report|start|"
            r"broke|hang|leak|flak)\w*)\w+ed (in |up |back |out )?again|came back|clears? up|"
            r"cleared up)\b"),
        zh=re.compile(
            r"搞定|解决|修复|修好|好了(?![，,\s]*(谢|吗|没))|恢复(正常)?|正常了|不再(报错|超时|失败|出现)|"
            r"(没|不)再(出现|报|发生|挂|卡|超时|失败)|再也没|消失了|消了|降下来了|好多了|生效了|跑通了|能用了|"
            r"可以用了|就行了?|就可以了|(办法|方法|诀窍|窍门|解法)是"),
        negatable=True),
    "cause": Signal(
        "why it happened: the root cause",
        en=re.compile(
            r"\b(root cause|the cause|caused by|because( of)?|due to|turn(ed|s) out|the culprit|"
            r"the (problem|issue|reason) (was|is)|it'?s because|comes from|came from|"
            r"traced (it )?to)\b|\bit was \w+( \w+)?\s*[:—]"),
        zh=re.compile(
            r"原因|根因|是因为|由于|问题出在|导致|罪魁祸首|原来是|发现是|查到是|查出来是"),
        negatable=True),
    "change": Signal(
        "what was changed to fix it",
        en=re.compile(
            r"\b(restart(ed|ing)?|reboot(ed|ing)?|roll(ed|ing)? back|revert(ed|ing)?|"
            r"rais(ed|ing)|bump(ed|ing)|increas(ed|ing)|lower(ed|ing)|reduc(ed|ing)|"
            r"doubl(ed|ing)|(set|changed?|changing|switch(ed|ing)?) \w+( \w+)? (to|from)|"
            r"replac(ed|ing)|upgrad(ed|ing)|downgrad(ed|ing)|pinn(ed|ing)|clear(ed|ing)|"
            r"flush(ed|ing)|purg(ed|ing)|reinstall(ed|ing)?|rebuil(t|ding)|redeploy(ed|ing)?|"
            r"re-?ran|rotat(ed|ing)|add(ed|ing) \w+|remov(ed|ing)|enabl(ed|ing)|"
            r"disabl(ed|ing)|patch(ed|ing)|tweak(ed|ing)|adjust(ed|ing)|scal(ed|ing) (up|out)|"
            r"swapp(ed|ing)|switching|mov(ed|ing) \w+ to|migrat(ed|ing)|tun(ed|ing)|capp(ed|ing)|"
            r"limit(ed|ing)|cach(ed|ing)|index(ed|ing)|split(ting)?|refactor(ed|ing)?)\b"),
        zh=re.compile(
            r"调到|调大|调小|调高|调低|改成|改为|改了|换成|换了|重启了|回滚|升级|降级|清理|清空|"
            r"删掉|删除了|加上|加了|补上|补了|装了|安装了|配了|配置了|开启了|打开了|关闭了|关掉|"
            r"重装|重新部署|扩容|从 ?\S+ ?(调|改|换|升)"),
        negatable=True),
    "procedure": Signal(
        "how to do it, step by step",
        en=re.compile(
            r"\b(first(ly)?|then|next|after that|afterwards|finally|lastly|"
            r"step \d+|\d+[.)] \w+|once (that|it)'?s? done)\b|:[^.:]*,[^.]*,"),
        zh=re.compile(
            r"(?<![优原首])先(?!生)|然后|(?<![不再])再(?![见次])|接着|最后|第[一二三四五1-9]步|"
            r"步骤|流程|[:：][^。:：]*[，、][^。]*[，、]"),
        min_hits=2),
    "command": Signal(
        "a command, a configuration key or a file to edit",
        en=re.compile(
            r"`[^`]+`|\$ \w|(^|\s)--?[a-z][\w-]+|\b\w+\.(ya?ml|json|toml|conf|cfg|ini|env|"
            r"properties|sh|py)\b|\b[a-z_][\w.]*=\S+|\b(kubectl|helm|docker|git|"
            r"systemctl|journalctl|npm|pip|yarn|terraform|ansible|curl|ssh|psql|mysql|"
            r"redis-cli|aws|gcloud|sudo|apt(-get)?|brew|mvn|gradle)\s+[\w./-]+|"
            r"\bmake (?!(sure|it|a|an|the|sense|this|that|them|us|me|you|do|time|up|way)\b)[a-z][\w-]*|"
            r"\b[a-z]+ctl\b|\b[a-z]+(_[a-z0-9]+)+\b|(/[\w.-]+){2,}")),
    "decision": Signal(
        "a choice made",
        en=re.compile(
            r"\b(decided|decision|we('ll| will)? go with|go(es|ing)? with|settled on|"
            r"agreed|picked|chose|opted for|let'?s (use|go with|pick|stick with)|"
            r"stick(ing)? with|standardi[sz](e|ed|ing) on|we('ll| will) use|conclusion|verdict|"
            r"(use|using) \w+( \w+)? instead)\b"),
        zh=re.compile(
            r"(?<!搞)定了|决定|选定|选了|就用|统一|采用|改用|结论|敲定|拍板|最终(选|用|定)|"
            r"用 ?\S+ ?[，,] ?不用|逐步下线")),
    "rule": Signal(
        "a rule to follow from now on",
        en=re.compile(
            r"\b(from now on|from here on|going forward|from today|henceforth|must(n'?t)?|"
            r"(everyone|everybody|every \w+|all \w+) (has|have|need|needs) to|"
            r"(has|have) to be (approved|reviewed|signed|run|done|tested|tagged|checked)|"
            r"required|requires?|mandatory|not allowed|forbidden|prohibited|policy|"
            r"needs? .{0,40}\b(approval|sign-?off|review|ticket)|"
            r"(never|don'?t ever|do not) (ever )?(deploy|run|push|merge|commit|delete|drop|use|"
            r"restart|touch|skip|change|edit|expose|share|store|hardcode|force|release|go|"
            r"put|check in|leave|log|print|paste)|"
            r"no (\w+ ){1,3}(on|after|before|during|outside) (fridays?|weekends?|holidays?|"
            r"nights?|mondays?|tuesdays?|wednesdays?|thursdays?|saturdays?|sundays?|\d|"
            r"prod\w*|main|master|release)|, ever\b|only \w+ (may|can)|"
            r"always (run|use|check|ask|tag|deploy|test|backup|back up))\b"),
        zh=re.compile(
            r"以后(都|一律|必须|要|统一|不要|别|禁止|不准)|今后|从现在(起|开始)|从今天(起|开始)|"
            r"必须|禁止|不允许|不得|不准|一律|都要|都得|(每周|每天|每月|每次|每个).{0,15}(要|必须|得|需要)|"
            r"需要.{0,12}(审批|批准|同意|评审|签字)|规定|规范|原则上")),
    "description": Signal(
        "what a thing is: a format, a schema, an endpoint",
        en=re.compile(
            r"\b(formats?|formatted|schema|fields?|columns?|endpoints?|listens on|port \d+|"
            r"urls?|headers?|payload|delimited|separated|json( lines)?|jsonl|csv|tsv|yaml|"
            r"protobuf|avro|parquet|xml|base64|utf-8|hmac[\w-]*|sha-?\d+|encoded|encrypted|"
            r"signed with|algorithm|key-value|structure|(lands?|landed|stored|saved|written|"
            r"kept|archived) (in|to|under|at)|lives (at|in|under)|is (at|served at|hosted at)|"
            r"(publishes|emits|produces|writes|sends|returns|responds with) .{0,60}\b"
            r"(on|to|as|in) (the )?(topic|queue|stream|channel|bucket|table)|"
            r"(on|to) (the )?topic \S+|"
            r"located (at|in)|the (path|directory|folder|bucket|table|topic|queue) (is|for)|"
            r"(error|exit|status|return) codes?|(code|status|flag|value|field) \S+ means|"
            r"\d+ (means|stands for)|one (line|row|record|message) per)\b"),
        zh=re.compile(
            r"错误码|返回码|状态码|\d+ ?(表示|代表)|格式|字段|([\d一二三四五六七八九十几两]|多)列|列名|"
            r"分隔|端点|接口地址|端口|地址是|表结构|结构是|签名|算法|编码|加密|(存放|保存|放|存|落)在|"
            r"路径是|位于")),
    "confirmation": Signal(
        "a confirmation that something worked",
        en=re.compile(
            r"\b(that worked|it works|works( now| fine| great)?|worked|confirmed|verified|"
            r"tested|passes|passed|succeeded|successful(ly)?|good now|fine now|ok now|"
            r"all good now|looks good now|all done|done now|(it|that)'?s done|all set|"
            r"deployed)\b|^\W*done\b"),
        zh=re.compile(
            r"验证(过|通过)|测试通过|确认(过|了)|没问题了|成功了|通过了|现在(可以|正常)了|"
            r"已经(可以|好)了"),
        negatable=True),
    "remember": Signal(
        "a request to remember",
        en=re.compile(
            r"\b((?<!n't )(?<!not )(?<!never )(?<!cannot )(?<!nobody )(?<!no one )"
            r"remember(ed|s)?|don'?t forget|never forget|keep (this|that|it)? ?in mind|"
            r"note (that|this|it)|take note|make a note|note for|note to self|"
            r"for (the )?next time|(?<!see you )next time|for the future|in (the )?future|"
            r"future reference|for later|write (this|that|it) down|important|fyi|heads[- ]up|"
            r"lesson( learned)?|gotcha|pro tip|worth knowing|good to know|reminder)\b"),
        zh=re.compile(
            r"记住|记一下|提醒(一下|大家|各位)|(?<!已)记下(?!了)|(?<![没不])(?<!没人)(?<!谁)记得|别忘|不要忘|下次(?!见)|以后都这么|以后照|备忘|重要|"
            r"注意|留个底|吸取教训|教训是|经验是"),
        in_questions=True),
}
assert set(SIGNALS) == set(get_args(ImportanceSignal)), "every settings signal has a rule"


def is_trivial(text: str) -> bool:
    """Only thanks, greetings or acknowledgements ("ok thanks", "好的，谢谢")."""
    return bool(_TRIVIAL.match(text.strip().lower()))


def sentence_signals(sentence: str) -> dict[ImportanceSignal, int]:
    """How many times each signal shows in one sentence (questions and negations applied)."""
    return dict(_sentence_signals(sentence.lower()))


# The patterns are written in lower case and read lower-cased text (faster than re.I); the
# same texts come back (a write scores a turn, the outcome rule and abstraction read it).
@lru_cache(maxsize=4096)
def _sentence_signals(low: str) -> tuple[tuple[ImportanceSignal, int], ...]:
    if is_trivial(low):
        return ()
    asks = is_question(low)
    # "the restart didn't help, but raising the pool fixed it": negation is read per clause.
    plain = " ".join(c for c in _CLAUSE.split(low) if c and not _NEGATED.search(c))
    latin, han = bool(_LATIN.search(low)), bool(_HAN.search(low))
    out: list[tuple[ImportanceSignal, int]] = []
    for name, sig in SIGNALS.items():
        if asks and not sig.in_questions:
            continue
        text = plain if sig.negatable else low
        patterns = [p for p, on in ((sig.en, latin), (sig.zh, han)) if on and p is not None]
        # Only a signal needing several hits counts them; the rest stop at the first.
        if sig.min_hits > 1:
            hits = sum(len(p.findall(text)) for p in patterns)
        else:
            hits = int(any(p.search(text) for p in patterns))
        if hits:
            out.append((name, hits))
    return tuple(out)


def signals(text: str) -> list[ImportanceSignal]:
    """The signals ``text`` shows, in :data:`SIGNALS` order."""
    return list(_signals(text))


@lru_cache(maxsize=4096)
def _signals(text: str) -> tuple[ImportanceSignal, ...]:
    counts: dict[ImportanceSignal, int] = {}
    for s in sentences(text, semicolons=True):
        for name, n in _sentence_signals(s.lower()):
            counts[name] = counts.get(name, 0) + n
    return tuple(n for n, sig in SIGNALS.items() if counts.get(n, 0) >= sig.min_hits)


def weigh(base: float, seen: Iterable[ImportanceSignal], weights: dict[ImportanceSignal, float]
          ) -> float:
    """``base`` plus the weight of each signal, in 0.05..1."""
    return round(min(1.0, max(0.05, base + sum(weights.get(n, 0.0) for n in seen))), 4)
