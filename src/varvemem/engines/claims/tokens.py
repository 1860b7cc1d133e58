"""Normalising a text and its value-like tokens (:func:`normalise`, :func:`values`), the kinds
of value and their classes (:func:`kind_class`, :func:`kind_of`) and whether a text states a
value (:func:`holds`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from functools import lru_cache

from ...language.attributes import LIGHT
from ...language.segment import CJK as _CJK
from ...language.stopwords import ENGLISH
from ...text import index_terms

# -- normalisation ---------------------------------------------------------------------------
# The rules parse the same texts again and again (a memory is a candidate of many adds):
# they are pure functions of the text, so their results are kept.
CACHE_SIZE = 16_384
_PUNCT_MAP = str.maketrans({
    "。": ".", "、": ",", "，": ",", "；": ";", "：": ":", "！": "!", "？": "?",
    "「": '"', "」": '"', "『": '"', "』": '"', "“": '"', "”": '"', "‘": "'", "’": "'",
    "《": '"', "》": '"', "（": "(", "）": ")", "【": "[", "】": "]", "〜": "~", "～": "~",
    "—": "-", "–": "-", "…": "...", "·": ".",
})
_TRAILING = re.compile(r"[\s.,;:!?~\"')\]]+$")
_PARTICLE = re.compile(rf"(?<=[{_CJK}A-Za-z0-9])[吧呢啊呀哦喔嘛啦哈呗噢哟]+$")
# The spaces next to a CJK character or a punctuation mark (a plain "" replacement: a
# template such as r"\1" costs a Python call per match, and every CJK character matched).
_SPACE_NEAR = re.compile(rf"\s+(?=[{_CJK}.,;:!?()\[\]\"'])|(?<=[{_CJK}.,;:!?()\[\]\"'])\s+")


@lru_cache(maxsize=CACHE_SIZE)
def normalise(text: str) -> str:
    """``text`` as dedup compares it: width, case, punctuation variants, trailing punctuation
    and spacing do not matter; words, digits and inner punctuation do."""
    t = unicodedata.normalize("NFKC", text).translate(_PUNCT_MAP).lower()
    t = " ".join(t.split())
    t = _TRAILING.sub("", t)
    # A Chinese sentence-final particle adds a tone, not a meaning ("不发版吧", "端口上哦");
    # 吗 (a question) and 了 (done) do change it and stay.
    t = _TRAILING.sub("", _PARTICLE.sub("", t))
    return _SPACE_NEAR.sub("", t)


# -- values ------------------------------------------------------------------------------------
# Word edges that hold next to CJK text too (``\\b`` does not: Han characters are word
# characters, so "用KeyDB做" has no boundary around "KeyDB").
_B = r"(?<![A-Za-z0-9_])"
_E = r"(?![A-Za-z0-9_])"
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?"  # 12,000 but not "4023,990"
# The value kinds, first match wins, each with a gate: a pattern that every text the kind
# can match somewhere also matches (a digit for a number). ``values`` compiles the
# alternation of the kinds whose gate the text passes: a kind that cannot match anywhere
# changes no match of the others, and a big alternation tried at every position of every
# text was most of what parsing a text cost (0.5 ms of 0.7 for bench_scale's texts).
VALUE_KINDS: tuple[tuple[str, str, str], ...] = (
    ("url", r"https?://[^\s,，。;；]+", r"https?://"),
    ("email", r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", r"@"),
    ("date", r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}"
             r"|\d{4}年\d{1,2}月(?:\d{1,2}[日号])?|\d{1,2}月\d{1,2}[日号]", r"\d[-/.年月]\d"),
    ("time", r"\d{1,2}:\d{2}(?::\d{2})?(?:\s*-\s*\d{1,2}:\d{2}(?::\d{2})?)?"
             r"|(?<![a-z0-9])\d{1,2}\s?(?:am|pm)(?![a-z])|[上下中]午[一二三四五六七八九十\d]{1,3}点半?"
             r"|(?:早上|晚上)?[一二三四五六七八九十\d]{1,3}点半?(?![\w])", r"\d:\d|\d\s?[ap]m|点"),
    ("day", r"(?<![a-z])(?:mon|tues|wednes|thurs|fri|satur|sun)days?(?![a-z])"
            r"|(?:周|星期|礼拜)[一二三四五六日天]", r"day|[周期拜][一二三四五六日天]"),
    ("phone", r"(?<!\d)(?:\+\d{1,3}[ -])?\d{3,4}[ -]\d{3,4}[ -]\d{3,4}(?!\d)", r"\d[ -]\d"),
    ("amount", rf"[$€£¥]\s?{_DIGITS}|(?<!\d){_DIGITS}\s?(?:元|块|美元|usd|eur|rmb|cny)(?![a-z])",
     r"[$€£¥]|\d\s?(?:元|块|美元|usd|eur|rmb|cny)"),
    ("channel", r"(?<![\w&#])#[a-z][\w-]*", r"#"),
    ("ip", rf"{_B}\d{{1,3}}(?:\.\d{{1,3}}){{3}}(?::\d+)?{_E}", r"\d\.\d"),
    ("host", rf"{_B}[a-z0-9][\w-]*(?:\.[\w-]*[a-z0-9])+{_E}", r"[\w-]\.[\w-]"),
    ("id", rf"{_B}[a-z][a-z0-9]*(?:[-_/.][a-z0-9]+)+{_E}|{_B}[a-z]+\d[a-z0-9]*{_E}",
     r"[a-z0-9][-_/.][a-z0-9]|[a-z]\d"),
    ("number", rf"(?<![A-Za-z0-9_.]){_DIGITS}\s?(?:%|[a-z]{{1,3}}{_E})?", r"\d"),
)
VALUE_GATES = tuple(re.compile(gate, re.IGNORECASE) for _, _, gate in VALUE_KINDS)


@lru_cache(maxsize=1 << 12)  # one pattern per subset of the 12 kinds; a few dozen occur
def value_pattern(kinds: tuple[int, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?P<{VALUE_KINDS[i][0]}>{VALUE_KINDS[i][1]})" for i in kinds),
                      re.IGNORECASE)


def value_matches(t: str) -> Iterator[re.Match[str]]:
    """The matches, in order, of the alternation of every value kind on ``t``."""
    kinds = tuple(i for i, gate in enumerate(VALUE_GATES) if gate.search(t))
    return value_pattern(kinds).finditer(t) if kinds else iter(())
# Capitalised words (and acronyms) that are names when they do not open the sentence.
_NAME = re.compile(rf"{_B}[A-Z][A-Za-z0-9]*(?:['’]s)?(?:\s+[A-Z][A-Za-z0-9]*)*")
# A name that opens the sentence all the same: a word with an inner capital or digit
# ("RocketMQ", "KeyDB", "GitHub").
_INNER_CAPITAL = re.compile(r"^[A-Za-z][a-z0-9]*[A-Z0-9]")
# In a Chinese sentence a Latin word is a name or a term ("用 webpack 构建").
_LATIN_WORD = re.compile(rf"{_B}[A-Za-z][A-Za-z]+{_E}")
HAS_CJK = re.compile(rf"[{_CJK}]")
NOT_NAMES = frozenset(w.lower() for w in LIGHT)
LIGHT_TERMS = frozenset(t for w in LIGHT if w.isascii() for t in index_terms(w))


def _by_cjk(text: str, start: int, end: int) -> bool:
    """Whether a CJK character is next to ``text[start:end]``, a space apart at most."""
    before = text[max(0, start - 2): start].rstrip(" ")
    after = text[end: end + 2].lstrip(" ")
    return bool((before and HAS_CJK.match(before[-1])) or (after and HAS_CJK.match(after[0])))


# Chinese names after a copula or a giving verb ("是王芳", "给张伟", "找马超"), in "归X管" or
# before "负责" ("陈静负责..."): no dictionary, so only there.
_ZH_NAME = re.compile(
    rf"(?:是|为|给|叫|找|归|[:：]\s*)([{_CJK}]{{2,4}}?)(?:了|啦|呢|吧)?(?=$|[,.;:!?，。；：！？]|管)"
    # "宽带是电信的": whose it is, not how it is ("是很重要的", "是我们的")
    rf"|是((?!很|最|挺|太|非常|比较|特别|真|我|你|他|她|它|这|那|谁|什么|哪)[{_CJK}]{{2,3}}?)(?=的)"
    rf"|(?:^\s*|[;；:：,，]\s*)((?:(?!的|今天|昨天|明天|现在|目前)[{_CJK}]){{2,3}})(?=负责)")
_SENTENCE_START = re.compile(r"(?:^\s*|[.!?。！？]\s*|[:：;；]\s*)$")


@dataclass(frozen=True)
class Value:
    """One value-like token: its kind, its normalised text and where it is."""

    kind: str
    text: str
    start: int
    end: int


def _norm_value(kind: str, raw: str) -> str:
    v = unicodedata.normalize("NFKC", raw).lower().strip()
    if kind in ("number", "amount"):
        v = v.replace(",", "").replace(" ", "")
    if kind == "name":
        v = re.sub(r"['’]s$", "", v)
    return v


@lru_cache(maxsize=CACHE_SIZE)
def values(text: str) -> tuple[Value, ...]:
    """The value-like tokens of ``text`` in order (see the module's docstring)."""
    t = unicodedata.normalize("NFKC", text)
    found: list[Value] = []
    taken = bytearray(len(t) + 1)  # the characters a value holds already
    for m in value_matches(t):
        kind = m.lastgroup or "value"
        raw = m.group().rstrip()
        if kind == "number" and not any(c.isdigit() for c in raw):
            continue
        found.append(Value(kind, _norm_value(kind, raw), m.start(), m.start() + len(raw)))
        taken[m.start(): m.start() + len(raw)] = b"\x01" * len(raw)
    for m in _NAME.finditer(t):
        start, word = m.start(), m.group()
        if _SENTENCE_START.search(t[:start]) and not _INNER_CAPITAL.match(word):
            # The sentence's first word is capitalised anyway; what follows it may be a
            # name ("We Memcached ..." is not, "Ask Priya Nair" is: "Priya Nair").
            head = re.match(r"\S+\s+(?=[A-Z])", word)
            if head is None:
                continue
            start, word = start + head.end(), word[head.end():]
        if any(taken[start:m.end()]) or word == "I" or word.lower() in NOT_NAMES:
            continue  # "I", "Thanks" name nothing
        found.append(Value("name", _norm_value("name", word), start, m.end()))
        taken[start: m.end()] = b"\x01" * (m.end() - start)
    if HAS_CJK.search(t):
        for m in _LATIN_WORD.finditer(t):
            word = m.group().lower()
            if not any(taken[m.start():m.end()]) and word not in ENGLISH \
                    and word not in NOT_NAMES and _by_cjk(t, m.start(), m.end()):
                found.append(Value("name", m.group().lower(), m.start(), m.end()))
    for m in _ZH_NAME.finditer(t):
        group = next(g for g in (1, 2, 3) if m.group(g))
        s, e = m.span(group)
        if not any(taken[s:e]):
            found.append(Value("name", m.group(group), s, e))
    found.sort(key=lambda v: v.start)
    return tuple(found)


def value_set(text: str) -> list[str]:
    """The normalised values of ``text``, sorted (what the merge guard compares)."""
    return sorted(v.text for v in values(text))


# -- kinds of value ------------------------------------------------------------------------
MEASURES = frozenset({"date", "time", "amount", "number", "day", "phone"})
RECORDS = frozenset({"id", "host", "ip", "email", "url", "channel"})  # kinds that name one record
# Kinds of value that may fill the same slot: "stable-6" (id) and "rel-8.x" (host) are both
# branch names; a number is no name.
KIND_CLASS = {"id": "ref", "channel": "ref", "host": "ref", "ip": "ref", "url": "ref", "email": "ref",
              "name": "ref", "number": "number", "amount": "amount", "date": "date",
              "time": "time", "day": "date", "phone": "phone"}


def kind_class(kind: str) -> str:
    """The class of a value kind: the kinds one slot may hold ("ref" for names and ids)."""
    return KIND_CLASS.get(kind, kind)


def kind_of(value: str) -> str:
    """The kind of a normalised value or phrase (``name`` for words)."""
    vals = values(value)
    return vals[0].kind if len(vals) == 1 else "name"


def holds(text: str, value: str, stated: Collection[str] | None = None) -> bool:
    """Does ``text`` state ``value`` (a normalised value or phrase)? ``stated``: the values of
    ``text``, when known (:attr:`Statement.values`)."""
    if value in (stated if stated is not None else {v.text for v in values(text)}):
        return True
    norm = normalise(text)
    if not value or value not in norm:
        return False
    if re.search(rf"[{_CJK}]", value):
        return True
    return re.search(rf"(?<![a-z0-9_.-]){re.escape(value)}(?![a-z0-9_-])", norm) is not None
