"""Negations: what a text says is no longer true (:func:`negation`: "no longer ...",
"stopped using ...", "不再..."), read clause by clause, and whether one that names no value
retires an older statement (:func:`negates`)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ...language.attributes import MODIFIERS
from ...language.lexicon import alternation
from ...language.segment import CJK as _CJK
from ...language.segment import is_hedged, sentences
from ...text import index_terms
from .frames import FILLER_EN, FILLER_ZH, content_terms
from .talk import is_question
from .tokens import CACHE_SIZE, HAS_CJK, LIGHT_TERMS, MEASURES, values

# -- negation ---------------------------------------------------------------------------------
_NEG_EN = re.compile(
    rf"\b(?:not\s+(?:\w+\s+){{0,3}}any\s?more|(?:is|are|was|were|do|does|did)\s+not)\b"
    rf"|{alternation('negation', 'en')}", re.IGNORECASE)
_NEG_ZH = re.compile(alternation("negation", "zh"))
# "已经不用 KeyDB 了", "不喝咖啡了": the words between 不 and 了 are what stopped.
_NEG_ZH_WRAP = re.compile(r"不(?P<x>[^,.;!?，。；！？]{1,20}?)了(?=$|[\s,.;!?，。；！？])")


@dataclass(frozen=True)
class Negation:
    """"X no longer uses A": the values it says are gone (``A``) and its other words."""

    values: tuple[str, ...]
    words: tuple[str, ...]
    rest: str  # the text without the negating words
    # The capitalised word opening the sentence as its subject ("Pulsar is no longer used"),
    # as an index term: a name that may be what is gone. "Take care and don't ..." has none.
    opener: str | None = None


@lru_cache(maxsize=CACHE_SIZE)
def negation(text: str) -> Negation | None:
    """What ``text`` says is no longer true ("no longer X", "stopped using X", "不再X",
    "X 已经下掉了"), or None."""
    for sentence in sentences(unicodedata.normalize("NFKC", text)):
        if not is_question(sentence) and not is_hedged(sentence) \
                and (found := _negation_in(sentence)) is not None:
            return found
    return None


def _negation_in(t: str) -> Negation | None:
    """The negation of one sentence: what is no longer true is said where "no longer" is."""
    m = _NEG_ZH.search(t) or _NEG_EN.search(t)
    if m:
        rest = _clause_before(t[: m.start()]) + " " + _clause(t[m.end():])
    elif w := _NEG_ZH_WRAP.search(t):
        rest = _clause_before(t[: w.start()]) + " " + w["x"] + " " + _clause(t[w.end():])
    else:
        return None
    gone = tuple(dict.fromkeys(v.text for v in values(rest) if v.kind not in MEASURES))
    opener = _OPENER.match(t)
    return Negation(gone, tuple(dict.fromkeys(
        index_terms(FILLER_ZH.sub(" ", FILLER_EN.sub(" ", rest))))), rest,
        next(iter(index_terms(opener[1])), None) if opener else None)


# What a negation denies ends with its clause: "I don't take the train anymore, I cycle".
_CLAUSE_MARK = r"[,;:，；：]|\s[-–—]\s"
_CLAUSE_END = re.compile(rf"\s*(?:{_CLAUSE_MARK}|\b(?:but|instead|so|now)\b)")


def _clause(text: str) -> str:
    """``text`` up to the end of its clause."""
    end = _CLAUSE_END.search(text)
    return text[: end.start()] if end else text


_CLAUSE_SPLIT = re.compile(_CLAUSE_MARK)


def _clause_before(text: str) -> str:
    """The clause ``text`` ends with ("Since March, billing"). Empty when a clause with
    content ends just before it ("最近膝盖不好，不去游泳了": what stopped is not the knee, and
    its subject is unsaid); clauses of fillers reach back to the one before ("The wiki, as
    of today, no longer ...")."""
    parts = _CLAUSE_SPLIT.split(text)
    fillers = False
    for i in range(len(parts) - 1, -1, -1):
        if content_terms(FILLER_ZH.sub(" ", FILLER_EN.sub(" ", parts[i]))):
            if i == len(parts) - 1 or fillers:
                return " ".join(parts[i:])
            return ""
        fillers = fillers or bool(parts[i].strip())
    return text


_OPENER = re.compile(r"^\W*(?:the\s+)?([A-Z][\w.-]*)\s+(?:is|are|was|were|has|have|had|will|"
                     r"isn't|aren't|wasn't|weren't|hasn't|haven't|won't|doesn't|don't|didn't|"
                     r"no longer|not|never)\b")


_MOD_TERMS = frozenset(t for w in MODIFIERS if w.isascii() for t in index_terms(w))
# A count and its measure word ("两杯", "三次", "两点") says how much or when, like MODIFIERS.
_MOD_ZH = re.compile("|".join(sorted((w for w in MODIFIERS if not w.isascii()), key=len,
                                     reverse=True))
                     + r"|[零〇一二两三四五六七八九十百千\d]+[次杯个点分号天周月年遍趟回集瓶碗根支]")
_CJK_RUN = re.compile(rf"[{_CJK}]+")


_FIRST_PERSON_ZH = re.compile(r"我们|咱们|我")
_THIRD_PERSON = re.compile(r"\b(?:he|she|they|his|her|their|him|them)\b|他|她|它", re.IGNORECASE)


def _third_persons(text: str) -> set[str]:
    return {m.group().lower() for m in _THIRD_PERSON.finditer(text)}


def _cjk_chars(text: str) -> str:
    """The CJK characters of ``text`` left once fillers, MODIFIERS and "我" are taken out."""
    return "".join(_CJK_RUN.findall(
        _MOD_ZH.sub(" ", _FIRST_PERSON_ZH.sub(" ", FILLER_ZH.sub(" ", text)))))


def negates(neg: Negation, old_text: str, extra_words: int) -> bool:
    """Does a negation that names no value retire ``old_text``? When ``old_text`` states
    what stopped and little else: every content word of the negation is in it (Chinese by
    character, since "不喝咖啡了" and "每天喝两杯咖啡" share no bigram but 咖啡), and what else it
    says is when, how often or how much (:data:`~varvemem.language.attributes.MODIFIERS`), but
    for at most ``extra_words`` words. "I no longer go swimming" retires "I go swimming
    every Tuesday morning", not "My sister goes swimming"."""
    want = {t for t in neg.words if not HAS_CJK.search(t)} - _MOD_TERMS - LIGHT_TERMS
    have = {t for t in index_terms(FILLER_EN.sub(" ", old_text))
            if not HAS_CJK.search(t) and not any(c.isdigit() for c in t)}  # "8:05": when
    have -= _MOD_TERMS | LIGHT_TERMS
    want_zh, have_zh = _cjk_chars(neg.rest), _cjk_chars(old_text)
    if not (want or want_zh) or not want <= have or not set(want_zh) <= set(have_zh):
        return False
    if _third_persons(old_text) - _third_persons(neg.rest):
        return False  # "he drinks coffee" is not "I", whose "I" and "我" go unsaid
    # A lone CJK character left over is a verb's complement or a particle ("再睡"), not a
    # word of its own; two or more may be a subject ("妹妹").
    rest_zh = sum(c not in want_zh for c in have_zh)
    return len(have - want) + (rest_zh if rest_zh > 1 else 0) <= extra_words


@lru_cache(maxsize=CACHE_SIZE)
def is_negated(text: str) -> bool:
    return bool(_NEG_ZH.search(text) or _NEG_EN.search(text) or _NEG_ZH_WRAP.search(text))
