"""The words the rules read, one row per role and language.

A row is a role (what the words do in a statement), a language and its words. The rules do
not spell words out: they ask this table for a role's words, as a list (:func:`words`) or as
a regular expression's alternation (:func:`alternation`). Adding a Chinese change verb is one
word in the ``change`` row of ``zh``.

English verbs are written once, as their base form; :func:`inflect` makes the other forms
("migrate" gives "migrated", "migrates", "migrating"). An irregular form is written as a word
of its own. Phrases are matched with any whitespace between their words. Chinese words are
written once, in simplified characters; :func:`chinese_forms` adds their traditional forms
("换成" gives "換成", "下周" gives "下週": OpenCC's phrase tables).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Literal

import opencc

Lang = Literal["en", "zh"]
Role = Literal[
    "change", "replace", "negation", "filler", "update_cue", "role_verb", "hedge",
    "question_opener", "question_aux", "question_word", "question_particle", "abbreviation",
    "abbreviation_before_lower", "instead", "not_hedge",
]


@dataclass(frozen=True)
class Words:
    """The words of one ``role`` in one ``lang``. ``verbs``: English base forms, inflected."""

    role: Role
    lang: Lang
    words: tuple[str, ...]
    verbs: bool = False
    note: str = ""


LEXICON: tuple[Words, ...] = (
    # A change of value: "moved X to B", "从A迁到B". "went"/"gone" only in "from A to B".
    Words("change", "en", (
        "migrate", "move", "change", "upgrade", "downgrade", "rotate", "rename", "update",
        "relocate", "promote", "switch", "bump", "shift", "port", "transfer", "swap",
        "cut over"), verbs=True),
    Words("change", "zh", (
        "迁移到", "迁移至", "迁到", "迁至", "迁往", "搬到", "切换到", "切换为", "切到", "改为",
        "改成", "改用", "换成", "换为", "换到", "升级到", "升级为", "升到", "变成", "变为",
        "调整为", "调整到", "更新为", "更新到", "替换为", "替换成", "改到", "调到", "挪到",
        "推迟到", "延到", "延期到", "提前到", "扩容到", "扩到", "缩容到", "降到", "降级到", "涨到",
        "改由", "改去", "改在")),
    # "replaced A with B", "swapped A for B".
    Words("replace", "en", ("replace", "exchange", "trade", "swap"), verbs=True),
    # What says a value is gone: "no longer", "stopped", "不再", "下掉".
    Words("negation", "en", (
        "no longer", "isn't", "aren't", "don't", "doesn't", "didn't", "won't", "stopped", "quit",
        "retired", "dropped", "removed", "decommission", "decommissioned", "decommissioning",
        "phased out", "got rid of", "turned off", "switched off", "sunsetted", "sunsetting",
        "disabled", "ditched", "abandoned", "killed off", "moved off", "moved away from",
        "migrated off")),
    Words("negation", "zh", (
        "不再", "不用了", "已不", "不会再", "停用", "停掉", "去掉", "下掉", "废弃", "弃用", "移除",
        "下线", "撤掉", "砍掉", "关掉", "拿掉", "去除")),
    # Words that say when or how sure, not what: left out of a claim's frame.
    Words("filler", "en", (
        "now", "currently", "today", "yesterday", "tonight", "recently", "actually", "btw",
        "again", "instead", "still", "already", "from now on", "as of today", "these days",
        "this week", "this month", "anymore", "any more")),
    Words("filler", "zh", (
        "现在", "目前", "当前", "已经", "今天", "昨天", "最近", "其实", "从今天起", "从现在起",
        "了", "啦", "呢", "吧")),
    # A statement that says it changes something said before.
    Words("update_cue", "en", (
        "now", "no longer", "instead", "changed", "update", "updated", "replace", "replaced",
        "supersede", "supersedes", "deprecated", "from now on", "new rule", "moved to",
        "switched to", "anymore", "retired", "upgrade", "upgraded")),
    Words("update_cue", "zh", (
        "改为", "改成", "不再", "现在", "更新为", "已更新", "升级", "替换", "取代", "以后", "改用",
        "换成", "废弃", "改由", "改去", "改在", "换了", "调整为", "从下周起", "从下个月起")),
    # "Maria now leads the release instead of Tom": the verbs of a role someone holds.
    Words("role_verb", "en", (
        "lead", "own", "run", "handle", "manage", "host", "chair", "cover", "maintain",
        "approve", "take care of"), verbs=True),
    Words("role_verb", "en", (
        "led", "ran", "took care of", "is in charge of", "is responsible for",
        "are responsible for")),
    # "instead of A": the phrases that name what a value replaces.
    Words("instead", "en", ("instead of", "rather than", "in place of")),
    # A plan, a guess or a wish is no change yet: "we might move to Kafka next year".
    Words("hedge", "en", (
        "might", "maybe", "perhaps", "possibly", "probably", "considering",
        "thinking about", "thinking of", "plan to", "plans to", "planning to", "planned to",
        "hope to", "hoping to", "would like to", "proposal to", "proposed to",
        "proposing to", "if we", "eventually", "someday", "at some point", "not sure", "tbd",
        "tentatively")),
    # Words that hold a hedge's characters but say no plan: "不可能", "考虑到", "准备好".
    Words("not_hedge", "zh", ("不可能", "可能性", "考虑到", "准备好", "根据建议", "按建议")),
    Words("hedge", "zh", (
        "可能", "也许", "或许", "大概", "打算", "考虑", "计划把", "计划要", "计划在", "有计划",
        "想要", "准备", "如果", "要是", "提议", "建议", "有望", "说不定", "待定", "等以后", "将来")),
    # A sentence that asks: English openers, Chinese question words and final particles.
    Words("question_opener", "en", (
        "how", "why", "which", "who", "whom", "whose", "where", "is", "are", "can", "could",
        "should", "would", "any idea", "what's", "whats", "what is", "what are", "what was",
        "what were", "what do", "what does", "what did", "what time", "what day",
        "when is", "when are", "when was", "when does", "when do", "when did", "when will",
        "do you", "do we", "does anyone", "did you", "did we", "did anyone", "will you",
        "may i")),
    # An auxiliary opens a question when a subject follows it ("did we move ...", "was the
    # cache moved ..."), not in a note that drops its subject ("did the trick", "was down").
    Words("question_aux", "en", (
        "do", "does", "did", "was", "were", "will", "has", "have", "had", "shall", "is", "are",
        "can", "could", "should", "would")),
    Words("question_word", "zh", (
        "是不是", "有没有", "能不能", "会不会", "要不要", "可不可以", "怎么办", "为什么", "为啥",
        "如何", "哪个", "哪些", "哪里", "哪儿", "哪台", "哪位", "哪天", "哪家", "哪种", "哪条",
        "哪边", "什么时候", "是什么", "叫什么", "多少", "几点",
        "是否", "啥")),
    Words("question_particle", "zh", ("吗", "么", "呢", "嘛")),
    # A full stop after these does not end a sentence ...
    Words("abbreviation", "en", (
        "e.g", "i.e", "vs", "approx", "mr", "mrs", "ms", "dr", "fig", "dept", "inc", "ltd",
        "jr", "sr")),
    # ... nor after these when a lower-case word or a number follows ("no. 5", "etc. and").
    Words("abbreviation_before_lower", "en", ("etc", "st", "no", "min", "max", "est", "co")),
)

_VOWELS = "aeiou"


def inflect(verb: str) -> tuple[str, ...]:
    """A verb's forms: the base, -s, -ed and -ing, of its first word ("cut over" gives
    "cuts over" ...). A short verb ending consonant-vowel-consonant gets both the doubled and
    the plain consonant ("swapped", "transfered" and "transferred"): an extra form costs
    nothing, a missing one misses a sentence."""
    head, sep, tail = verb.partition(" ")
    forms = {head}
    if head.endswith("e"):
        forms |= {head + "d", head + "s", head[:-1] + "ing"}
    elif head.endswith("y") and len(head) > 2 and head[-2] not in _VOWELS:
        forms |= {head[:-1] + "ies", head[:-1] + "ied", head + "ing"}
    else:
        plural = head + "es" if head.endswith(("s", "sh", "ch", "x", "z")) else head + "s"
        forms |= {plural, head + "ed", head + "ing"}
        if len(head) >= 3 and head[-1] not in _VOWELS + "wxy" and head[-2] in _VOWELS \
                and head[-3] not in _VOWELS:
            forms |= {head + head[-1] + "ed", head + head[-1] + "ing"}
    return tuple(sorted(f + sep + tail for f in forms))


# Traditional Chinese in general, as written in Taiwan and in Hong Kong (they differ: 為, 爲).
_TRADITIONAL = ("s2t", "s2tw", "s2hk")


@cache
def _converter(config: str) -> opencc.OpenCC:
    return opencc.OpenCC(f"{config}.json")


@cache
def chinese_forms(word: str) -> tuple[str, ...]:
    """``word`` (simplified) and its traditional forms, "换成" gives ("换成", "換成")."""
    return tuple(dict.fromkeys([word, *(_converter(c).convert(word) for c in _TRADITIONAL)]))


def simplified(text: str) -> str:
    """``text`` in simplified characters (a traditional noun and its simplified one compare)."""
    return str(_converter("t2s").convert(text))


@cache
def words(role: Role, lang: Lang | None = None) -> tuple[str, ...]:
    """The words of ``role`` (in ``lang``, else in every language), verbs inflected, Chinese
    words in their traditional forms too, longest first (an alternation then prefers "no
    longer" to "no")."""
    out: dict[str, None] = {}
    for row in LEXICON:
        if row.role == role and lang in (None, row.lang):
            for w in row.words:
                forms = inflect(w) if row.verbs else \
                    chinese_forms(w) if row.lang == "zh" else (w,)
                out.update(dict.fromkeys(forms))
    return tuple(sorted(out, key=lambda w: (-len(w), w)))


def alternation(role: Role, lang: Lang | None = None, *, bounded: bool = True) -> str:
    """``(?:...)`` matching any word of ``role``; ``bounded``: Latin words only as whole
    words (Chinese has no spaces to bound them)."""
    return _alternation(words(role, lang), bounded)


def _alternation(ws: Iterable[str], bounded: bool) -> str:
    # Latin words share one pair of bounds: a lookaround per word makes the pattern slow.
    latin = [w for w in ws if w.isascii()] if bounded else []
    other = [w for w in ws if w not in latin]
    parts = [r"(?<![\w'])(?:" + "|".join(map(_phrase, latin)) + r")(?![\w'])"] if latin else []
    parts += map(_phrase, other)
    return "(?:" + "|".join(parts) + ")" if parts else "(?!)"


def _phrase(w: str) -> str:
    return r"\s+".join(re.escape(p) for p in w.split())
