"""The retrieval families: ``time_words`` ("what did I do yesterday": the memory of the
named day among others) and ``cross_language`` (a question in one language, its memory in
the other), with :func:`cross_bank` for the hand-written cross-language cases.
"""

from __future__ import annotations

import random

from .vocabulary import (
    ATTRS,
    SERVICES,
    Case,
)
from .vocabulary import fill as _fill
from .vocabulary import langs as _langs
from .vocabulary import values as _values

# --- time_words ----------------------------------------------------------------------------------

# The benchmark's "now" is Wednesday 2026-03-11, 10:00 UTC. Each time word names the days it
# covers (offsets before now, 0 = today) and the day its memory is written on.
TIME_WORDS_EN: list[tuple[str, int, set[int]]] = [
    ("yesterday", 1, {1}), ("two days ago", 2, {2}), ("the day before yesterday", 2, {2}),
    ("three days ago", 3, {3}), ("last week", 6, set(range(3, 10))),
    ("on 3 March", 8, {8}), ("on March 5", 6, {6}), ("last Monday", 9, {9}),
    ("four days ago", 4, {4}), ("on 27 February", 12, {12}),
]
TIME_WORDS_ZH: list[tuple[str, int, set[int]]] = [
    ("昨天", 1, {1}), ("前天", 2, {2}), ("三天前", 3, {3}), ("上周", 6, set(range(3, 10))),
    ("3月3日", 8, {8}), ("3月5号", 6, {6}), ("上周一", 9, {9}), ("四天前", 4, {4}),
    ("2月27日", 12, {12}), ("两天前", 2, {2}),
]
DONE_EN = [("fix", "fixed", "Spent the afternoon fixing the {t}."),
           ("review", "reviewed", "Reviewed the pull request for the {t} today."),
           ("deploy", "deployed", "Deployed the {t} to production."),
           ("debug", "debugged", "Debugged the {t} with the on-call team."),
           ("document", "documented", "Wrote the docs for the {t}.")]
DONE_ZH = [("修", "修了", "下午一直在修{t}。"), ("评审", "评审了", "今天评审了{t}的合并请求。"),
           ("上线", "上线了", "把{t}上线到生产了。"), ("排查", "排查了", "和值班同学一起排查了{t}。"),
           ("写文档", "写了文档", "给{t}写了文档。")]
THINGS_EN = ["login page", "billing export", "cache warm-up job", "search ranking", "CSV importer",
             "retry logic", "rate limiter", "PDF renderer", "signup form", "audit log",
             "payment webhook", "nightly backup"]
THINGS_ZH = ["登录页", "账单导出", "缓存预热任务", "搜索排序", "CSV 导入", "重试逻辑", "限流器",
             "PDF 渲染", "注册表单", "审计日志", "支付回调", "夜间备份"]
Q_TIME_EN = ["What did I {verb} {tw}?", "What did I work on {tw}?", "{TW}, what did I {verb}?"]
Q_TIME_ZH = ["{tw}我{verb}了什么？", "{tw}我做了什么？", "我{tw}{verb}了啥"]
DISTRACT_EN = ["Someone asked what happened {tw}; nobody remembered.",
               "Let's not repeat what went wrong {tw}, said the manager at the retro.",
               "Note to self: the coffee machine broke {tw} too."]
DISTRACT_ZH = ["有人问{tw}发生了什么，没人记得。", "经理在复盘会上说别再重复{tw}的错误。",
               "备忘：咖啡机{tw}也坏了。"]


def gen_time_words(rng: random.Random, n: int) -> list[Case]:
    out = []
    for i, lang in enumerate(_langs(n)):
        z = lang == "zh"
        words = TIME_WORDS_ZH if z else TIME_WORDS_EN
        tw, day, window = words[i // 2 % len(words)]
        verb, _past, tpl = rng.choice(DONE_ZH if z else DONE_EN)
        things = rng.sample(THINGS_ZH if z else THINGS_EN, 5)
        others = [d for d in range(0, 16) if d not in window]
        days = [day, *rng.sample(others, 3)]
        memories = [{"content": tpl.format(t=t), "days_ago": d} for t, d in zip(things, days)]
        distract_day = rng.choice([d for d in others if d not in days])
        distractor = rng.choice(DISTRACT_ZH if z else DISTRACT_EN).format(tw=tw)
        memories.append({"content": distractor, "days_ago": distract_day, "distractor": True})
        qt = rng.choice(Q_TIME_ZH if z else Q_TIME_EN)
        query = qt.format(verb=verb, tw=tw, TW=tw[:1].upper() + tw[1:])
        out.append({"family": "time_words", "lang": lang, "id": f"time_words-{i}",
                    "data": {"time_word": tw, "memories": memories, "target": 0,
                             "query": query}})
    return out


# --- cross_language ------------------------------------------------------------------------------

CROSS_STORE = 24  # memories per case: the top 5 is a fifth of the store


def cross_bank(rng: random.Random, k: int) -> list[str]:
    """``k`` service facts in both languages, one per (service, attribute): the store around
    a hand-written cross-language case (whose memory is about something else)."""
    combos = [(sv, a) for sv in SERVICES for a in ATTRS]
    out = []
    for (en, zh), attr in rng.sample(combos, k):
        lg = rng.choice(LANG_PAIR)
        out.append(_fill(rng.choice(attr[lg]), en if lg == "en" else zh,
                         _values(attr, rng, lg)[0]))
    return out


LANG_PAIR = ("en", "zh")


def gen_cross_language(rng: random.Random, n: int) -> list[Case]:
    """The question's language is the case's; the memory is in the other one, among
    ``CROSS_STORE - 1`` facts about other services and attributes in both languages (some
    about the same service)."""
    out = []
    for i, lang in enumerate(_langs(n)):
        stored = "zh" if lang == "en" else "en"
        (en, zh), attr = rng.choice(SERVICES), rng.choice(ATTRS)
        combos = [(sv, a) for sv in SERVICES for a in ATTRS
                  if not (sv[0] == en and a["key"] == attr["key"])]
        memories = [_fill(rng.choice(attr[stored]), en if stored == "en" else zh,
                          _values(attr, rng, stored)[0])]
        for (oen, ozh), oattr in rng.sample(combos, CROSS_STORE - 1):
            lg = rng.choice(LANG_PAIR)
            memories.append(_fill(rng.choice(oattr[lg]), oen if lg == "en" else ozh,
                                  _values(oattr, rng, lg)[0]))
        q = _fill(rng.choice(attr["q_" + lang]), en if lang == "en" else zh)
        out.append({"family": "cross_language", "lang": lang, "id": f"cross_language-{i}",
                    "data": {"memories": memories, "target": 0, "query": q}})
    return out
