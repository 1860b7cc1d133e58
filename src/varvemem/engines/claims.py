"""Claims without an LLM: what a statement says, with its value-like parts masked.

Used by the update engine (dedup, the near-duplicate merge guard, supersession) and by the read
path (:mod:`.conflicts`). Everything here is deterministic and dictionary-free, in Chinese and
English.

* :func:`normalise` — the text dedup compares: NFKC (width), lower case, CJK punctuation as
  ASCII, no trailing punctuation, no spacing around punctuation or CJK characters.
* :func:`values` — the value-like tokens of a text. The tokenizer knows, in this order:
  URLs, e-mail addresses, dates (``2026-04-10``, ``4/10/2026``, ``2026年4月10日``, ``4月10日``),
  times and time ranges (``10:00-16:00``), amounts (``$12,000``, ``12000 元``), IPv4 addresses,
  dotted names (hosts, versions: ``db-1.internal``, ``v2.3.1``, ``m5.large``), identifiers
  (a letter-led token with a hyphen, underscore, slash or digit: ``eks-stg-3``, ``INV-1042``,
  ``v2``), numbers with an optional unit (``4gb``, ``600``, ``3.5%``), names (runs of
  capitalised Latin words not opening the sentence: ``Alice``, ``GitHub Actions``) and, in
  Chinese, a short run of 2-4 Han characters ending a clause after a copula or a giving verb
  (``是王芳``, ``给张伟``). Chinese names elsewhere are not recognised (no dictionary).
* :func:`claim` — a statement's frame (its words with each value replaced by its kind, filler
  words such as "now"/"现在"/"了" dropped) and its values; the first value counts as the
  claim's *subject* when it comes before the predicate: at most ``subject_span`` of the
  statement's content words precede it ("INV-1042 was paid on ...", "Ticket OPS-311 is
  assigned to ...", but not "The staging cluster is eks-stg-3"); a date, time, amount or
  number is a subject only when it opens the statement.
* :func:`same_claim` — two claims with an equal (or close) frame, the same value kinds, the
  same subject and different values: the newer states a new value of the same claim.
* :func:`slots` / :func:`same_slot` — what a statement says of what: the attribute its words
  (:mod:`varvemem.language.attributes`) or its value's shape name and the words of its subject; a
  new value of the same attribute of the same subject, however phrased ("API gateway ships
  from stable-11", "API gateway releases are cut from stable-6"), never of a ledger line
  (:func:`is_record`) nor of another environment. :func:`supersedes` tries frames, then slots,
  reading a stated change as the state it leaves (:func:`state_after`).
* :func:`transition` / :func:`negation` — "from A to B", "A -> B", "replaced A with B",
  "moved/switched/migrated (X) to B", "从A迁到B", "由A改为B", "换成B", "改成B", "迁到B";
  "no longer ...", "不再...".
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from ..language.attributes import (
    ATTRIBUTE_WORDS,
    GENERIC_HEADS,
    LIGHT,
    MODIFIERS,
    QUALIFIERS,
    VALUE_SHAPES,
)
from ..language.lexicon import alternation
from ..language.segment import CJK as _CJK
from ..language.segment import is_hedged, sentences
from ..language.segment import is_question as segment_question
from ..language.stopwords import ENGLISH
from ..text import index_terms
from ..text.analyzer import _cjk_segments
from .extract import EVENT_FIELDS

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
_VALUE_KINDS: tuple[tuple[str, str, str], ...] = (
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
_VALUE_GATES = tuple(re.compile(gate, re.IGNORECASE) for _, _, gate in _VALUE_KINDS)


@lru_cache(maxsize=1 << 12)  # one pattern per subset of the 12 kinds; a few dozen occur
def _value_pattern(kinds: tuple[int, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?P<{_VALUE_KINDS[i][0]}>{_VALUE_KINDS[i][1]})" for i in kinds),
                      re.IGNORECASE)


def _value_matches(t: str) -> Iterator[re.Match[str]]:
    """The matches, in order, of the alternation of every value kind on ``t``."""
    kinds = tuple(i for i, gate in enumerate(_VALUE_GATES) if gate.search(t))
    return _value_pattern(kinds).finditer(t) if kinds else iter(())
# Capitalised words (and acronyms) that are names when they do not open the sentence.
_NAME = re.compile(rf"{_B}[A-Z][A-Za-z0-9]*(?:['’]s)?(?:\s+[A-Z][A-Za-z0-9]*)*")
# A name that opens the sentence all the same: a word with an inner capital or digit
# ("RocketMQ", "KeyDB", "GitHub").
_INNER_CAPITAL = re.compile(r"^[A-Za-z][a-z0-9]*[A-Z0-9]")
# In a Chinese sentence a Latin word is a name or a term ("用 webpack 构建").
_LATIN_WORD = re.compile(rf"{_B}[A-Za-z][A-Za-z]+{_E}")
_HAS_CJK = re.compile(rf"[{_CJK}]")
_NOT_NAMES = frozenset(w.lower() for w in LIGHT)
_LIGHT_TERMS = frozenset(t for w in LIGHT if w.isascii() for t in index_terms(w))


def _by_cjk(text: str, start: int, end: int) -> bool:
    """Whether a CJK character is next to ``text[start:end]``, a space apart at most."""
    before = text[max(0, start - 2): start].rstrip(" ")
    after = text[end: end + 2].lstrip(" ")
    return bool((before and _HAS_CJK.match(before[-1])) or (after and _HAS_CJK.match(after[0])))


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
    for m in _value_matches(t):
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
        if any(taken[start:m.end()]) or word == "I" or word.lower() in _NOT_NAMES:
            continue  # "I", "Thanks" name nothing
        found.append(Value("name", _norm_value("name", word), start, m.end()))
        taken[start: m.end()] = b"\x01" * (m.end() - start)
    if _HAS_CJK.search(t):
        for m in _LATIN_WORD.finditer(t):
            word = m.group().lower()
            if not any(taken[m.start():m.end()]) and word not in ENGLISH \
                    and word not in _NOT_NAMES and _by_cjk(t, m.start(), m.end()):
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


# -- frames ------------------------------------------------------------------------------------
_FILLER_EN = re.compile(alternation("filler", "en"), re.IGNORECASE)
_FILLER_ZH = re.compile(alternation("filler", "zh"))
# When a statement became true is not part of its claim: "since Monday", "as of 2026-05-01",
# "starting next week", "自周一起", "从下周开始".
_WHEN = (r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|today|tomorrow|yesterday|tonight|"
         r"(?:last|this|next)\s+\w+|\d{4}-\d{1,2}-\d{1,2}|\w+\s+\d{1,2}(?:st|nd|rd|th)?")
_TEMPORAL = re.compile(
    rf"\b(?:since|as of|starting|effective|from)\s+(?:{_WHEN})\b"
    r"|(?:自|从)(?:今天|明天|昨天|本周|下周|上周|周[一二三四五六日天]|星期[一二三四五六日天]|"
    r"\d{1,2}月\d{1,2}[日号]|\d{4}-\d{1,2}-\d{1,2})(?:起|开始)", re.IGNORECASE)
_FILLER_LEAD = re.compile(r"^\s*(?:fyi|btw|by the way|oh|ok|okay|so|and|also|just|note)\b[\s,:]*",
                          re.IGNORECASE)


# A past event ("went", "was paid", "reviewed", "去过"): events add up rather than replace one
# another, so an event states a new value of a claim only about the same subject (an
# identifier such as "INV-1042 was paid on ..."). A participle after "is"/"are" is a state.
_EVENT = re.compile(
    r"\b(?:was|were|did|went|met|bought|ran|saw|had|made|got|took|gave|came|left|sent|wrote|"
    r"paid|told|said|found|won|lost|spent|flew|drove|ate|drank|read|began|visited)\b"
    r"|(?<!\bis )(?<!\bare )(?<!\bam )(?<!\bbe )(?<!\bbeen )(?<!\bget )(?<!\bgets )"
    r"\b(?!(?:need|speed|indeed|exceed|proceed|succeed|feed|seed|based|used|shared|"
    r"required|allowed|enabled|disabled|hosted|located|called|named|scheduled)\b)[a-z]{3,}ed\b"
    r"|[\u4e00-\u9fff](?:过|了)(?![\u4e00-\u9fff]*$)|去过|参加了|买了|见了|去了",
    re.IGNORECASE)


@dataclass(frozen=True)
class Claim:
    """A statement's frame (its words, values masked by kind) and its values."""

    frame: frozenset[str]
    kinds: tuple[str, ...]
    values: tuple[str, ...]
    subject: str | None  # the first value when it opens the statement
    words: int  # content words of the frame (placeholders excluded)
    tokens: frozenset[str] = field(default_factory=frozenset)  # index terms of the whole text
    event: bool = False  # a past event, not a state (see _EVENT)


def _masked(text: str, start: int = 0) -> str:
    """``text`` (from ``start`` on) with each value replaced by a placeholder of its kind."""
    t = unicodedata.normalize("NFKC", text)
    out, last = [], start
    for v in values(text):
        if v.start < start:
            continue
        out += [t[last:v.start], f" zz{v.kind}zz "]
        last = v.end
    out.append(t[last:])
    return "".join(out)


@lru_cache(maxsize=CACHE_SIZE)
def claim(text: str, subject_span: float = 0.5) -> Claim:
    """The claim ``text`` makes (see the module's docstring)."""
    text = _TEMPORAL.sub(" ", unicodedata.normalize("NFKC", text))
    while (lead := _FILLER_LEAD.sub("", text)) != text:
        text = lead
    vals = values(text)
    masked_text = _masked(text)
    masked = _FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", masked_text))
    frame = index_terms(masked)
    words = sum(1 for w in frame if not (w.startswith("zz") and w.endswith("zz")))
    subject = None
    if vals:
        t = unicodedata.normalize("NFKC", text)
        before = len(_content_terms(t[: vals[0].start]))
        after = len(_content_terms(_masked(t, vals[0].end)))
        # A date or a number is what is said of a subject, unless a counting word labels the
        # number ("turn 3", "fact number 2", "step 4", "第3步"): then it names the record.
        labelled = _labels(t, vals[0])
        named = vals[0].kind not in _MEASURES
        if before == 0 or labelled or (named and before <= subject_span * (before + after)):
            subject = vals[0].text
    return Claim(frozenset(frame), tuple(v.kind for v in vals), tuple(v.text for v in vals),
                 subject, words + (subject is not None), frozenset(index_terms(text)),
                 bool(_EVENT.search(" ".join(_FILLER_EN.sub(" ", masked_text).split()))))


def changed_value(new: Claim, old: Claim, names: bool = True) -> bool:
    """Does ``new`` state a value ``old`` does not, in place of one of the same class that
    ``old`` states ("eks-stg-3" for "eks-stg-2", "8 pm" for "7 pm")? With ``names`` off, a
    changed name does not count (people's talk is full of names)."""
    def changed(a: Claim, b: Claim) -> set[str]:
        return {kind_class(k) for k, v in zip(a.kinds, a.values)
                if v not in b.values and (names or k != "name")}
    return bool(changed(new, old) & changed(old, new))


_LABEL_BEFORE = re.compile(
    r"(?:\b(?:number|no|nr|num|turn|step|item|entry|part|line|row|round|page|chapter|section|"
    r"phase|stage|option|point|question|task|fact|note|rule|case|attempt|run|batch)\.?|#|第)\s*$",
    re.IGNORECASE)
_LABEL_AFTER = re.compile(r"^\s*(?:号|步|条|轮|项|章|节)")


def _labels(text: str, value: Value) -> bool:
    """Whether a counting word labels the number ``value`` (it names a thing, not a
    quantity)."""
    return value.kind == "number" and bool(
        _LABEL_BEFORE.search(text[: value.start]) or _LABEL_AFTER.match(text[value.end:]))


_CJK_RUN = re.compile(rf"[{_CJK}]+")
_MEASURES = frozenset({"date", "time", "amount", "number", "day", "phone"})
RECORDS = frozenset({"id", "host", "ip", "email", "url", "channel"})  # kinds that name one record


def _content_terms(text: str) -> list[str]:
    """The content words of a piece of text: no placeholders, no filler words; a CJK segment
    (between stop words) counts as a word per two characters (Chinese has no spaces: a
    segment may hold several words)."""
    t = _FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", text))
    cjk = [seg[i:i + 2] for run in _CJK_RUN.findall(t) for seg in _cjk_segments(run)
           for i in range(0, len(seg), 2)]
    latin = index_terms(_CJK_RUN.sub(" ", t))
    return [w for w in latin if not (w.startswith("zz") and w.endswith("zz"))] + cjk


def is_record(kinds: Sequence[str]) -> bool:
    """A ledger line (an invoice, a payment, a booking): several values, one of them a date
    or an amount. Two lines that differ in one value are two records, not an update."""
    return len(kinds) >= 3 and bool(set(kinds) & {"date", "amount"})


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def same_claim(new: Claim, old: Claim, overlap: float, min_words: int) -> str | None:
    """Why ``new`` states a new value of ``old``'s claim ("same claim, new value (frame)"), or
    None: frames equal or at least ``overlap`` alike (Jaccard of their words), at least
    ``min_words`` content words, the same kinds of value, the same subject, other values
    (of several values, at least one the same). Two past events ("went to the group on
    7 May", "on 20 May") are the same claim only about the same subject."""
    if not new.values or new.kinds != old.kinds or new.values == old.values:
        return None
    if is_record(new.kinds):
        return None  # ledger lines that differ in one value are two records
    if min(new.words, old.words) < min_words:
        return None
    if new.subject != old.subject:
        return None  # another subject
    if (new.event or old.event) and not (new.subject is not None and new.kinds[0] in RECORDS):
        return None  # two events add up, unless of one record ("INV-1042 was paid on ...")
    if len(new.values) > 1 and all(a != b for a, b in zip(new.values, old.values)) \
            and not set(new.kinds) <= {"day", "time", "date"}:
        return None  # every value differs: another record ("entry 7 for team-7"), not a
        # rescheduling ("every Tuesday at 3pm", then "every Thursday at 10am")
    if new.frame == old.frame:
        return "same claim, new value (frame)"
    # Light verbs say nothing ("uses Node 18", "runs on Node 20").
    a, b = new.frame - _LIGHT_TERMS, old.frame - _LIGHT_TERMS
    if a == b or jaccard(a, b) >= overlap:
        return "close claim, new value (frame)"
    return None


# -- slots: an attribute of a subject ------------------------------------------------------
# Kinds of value that may fill the same slot: "stable-6" (id) and "rel-8.x" (host) are both
# branch names; a number is no name.
_KIND_CLASS = {"id": "ref", "channel": "ref", "host": "ref", "ip": "ref", "url": "ref", "email": "ref",
               "name": "ref", "number": "number", "amount": "amount", "date": "date",
               "time": "time", "day": "date", "phone": "phone"}


def kind_class(kind: str) -> str:
    """The class of a value kind: the kinds one slot may hold ("ref" for names and ids)."""
    return _KIND_CLASS.get(kind, kind)


class Lexicon:
    """The attribute words (:mod:`varvemem.language.attributes`) compiled for :func:`slots`."""

    def __init__(self, table: Mapping[str, tuple[Sequence[str], Sequence[str]]],
                 light: Sequence[str], shapes: Mapping[str, str],
                 qualifiers: Sequence[str]) -> None:
        # What the lexicon was made of: stored statements (:mod:`.statements`) name it.
        self.fingerprint = hashlib.sha256(repr(
            (sorted((a, tuple(s), tuple(w)) for a, (s, w) in table.items()), tuple(light),
             sorted(shapes.items()), tuple(qualifiers))).encode()).digest()
        self.shapes = [(attr, re.compile(rx)) for attr, rx in shapes.items()]
        self.qualifiers = frozenset(t for w in qualifiers if not _HAS_CJK.search(w)
                                    for t in index_terms(w))
        self.zh_qualifiers = tuple(w for w in qualifiers if _HAS_CJK.search(w))
        self.strong: dict[str, str] = {}
        self.weak: dict[str, str] = {}
        zh: dict[str, tuple[str, bool] | None] = {}
        phrases: dict[str, tuple[str, bool]] = {}
        for attr, (strong, weak) in table.items():
            for words, into, is_strong in ((strong, self.strong, True), (weak, self.weak, False)):
                for w in words:
                    if _HAS_CJK.search(w):
                        zh.setdefault(w, (attr, is_strong))
                    elif re.search(r"[\s-]", w.strip()):  # "on call", "message queue"
                        phrases.setdefault(" ".join(re.split(r"[\s-]+", w.strip().lower())),
                                           (attr, is_strong))
                    else:
                        for stem in index_terms(w):
                            into.setdefault(stem, attr)
        self.light = frozenset(t for w in light if not _HAS_CJK.search(w)
                               for t in index_terms(w))
        for w in light:
            if _HAS_CJK.search(w):
                zh.setdefault(w, None)
        self._phrases = phrases
        self.phrase_pattern = re.compile(
            r"\b(?:" + "|".join(re.escape(p).replace(r"\ ", r"[\s-]+")
                                 for p in sorted(phrases, key=len, reverse=True)) + r")\b",
            re.IGNORECASE) if phrases else None
        self._zh = zh
        self.zh_pattern = re.compile("|".join(map(re.escape, sorted(zh, key=len, reverse=True)))) \
            if zh else None

    def zh_word(self, word: str) -> tuple[str, bool] | None:
        return self._zh.get(word)

    def phrase(self, words: str) -> tuple[str, bool] | None:
        return self._phrases.get(" ".join(re.split(r"[\s-]+", words.lower())))


    def implied(self, value: str) -> set[str]:
        """The attributes a value's shape implies (``VALUE_SHAPES``)."""
        return {attr for attr, rx in self.shapes if rx.match(value)}


AttributeTable = tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]


class _Words(Protocol):
    strong: list[str]
    weak: list[str]


def lexicon_for(words: Mapping[str, _Words]) -> Lexicon:
    """The lexicon with a settings table (``update.attribute_words``) on top."""
    return lexicon(tuple((name, tuple(w.strong), tuple(w.weak))
                         for name, w in sorted(words.items())))


@lru_cache(maxsize=8)
def lexicon(extra: AttributeTable = ()) -> Lexicon:
    """The lexicon of :mod:`varvemem.language.attributes`, with ``extra`` attributes (name,
    strong words, weak words: ``update.attribute_words``) added or replacing those of the same
    name; compiled once per table."""
    table = {**ATTRIBUTE_WORDS, **{name: (strong, weak) for name, strong, weak in extra}}
    return Lexicon(table, LIGHT, VALUE_SHAPES, QUALIFIERS)


@dataclass(frozen=True)
class Slots:
    """What a statement says of what: the attributes it names, the words of its subject
    (neither values, attribute words, light words nor fillers) and its values."""

    attributes: frozenset[str]
    subject_words: frozenset[str]
    values: tuple[tuple[str, str], ...]  # (kind, normalised text)
    record: bool  # a ledger line: several values, one a date or an amount
    subject: str | None  # a record's name opening it ("Ticket OPS-311 ..."), see claim()
    # Capitalised words opening the statement or following a colon, which may be names
    # ("Kenji owns ...", "owner: Sofia"): values() leaves them out.
    leads: tuple[str, ...] = ()
    qualifiers: frozenset[str] = frozenset()  # "production", "测试": see QUALIFIERS

    def leads_as_names(self) -> Slots:
        """These slots reading :attr:`leads` as names, not subject words."""
        return Slots(self.attributes, self.subject_words - set(self.leads),
                     (*(("name", w) for w in self.leads), *self.values), self.record,
                     self.subject, (), self.qualifiers)


_LEAD_WORD = re.compile(r"(?:^|[:：;；]\s*)([A-Z][a-z]+)\b(?!\s+[A-Z])")


# An event's frame ("[event] title: ...; message: ...", see extract.describe_event): its field
# names say nothing of its subject.
_EVENT_FRAME = re.compile(
    rf"^\[[^\]]{{1,40}}\]\s*(?:(?:{'|'.join(EVENT_FIELDS)}):\s)?"
    rf"|(?<=; )(?:{'|'.join(EVENT_FIELDS)}):\s", re.IGNORECASE)


@lru_cache(maxsize=CACHE_SIZE)
def slots(text: str, lex: Lexicon) -> Slots:
    """The slots of ``text`` (see :class:`Slots`)."""
    t = _TEMPORAL.sub(" ", unicodedata.normalize("NFKC", text))
    t = _EVENT_FRAME.sub(" ", t).strip()
    while (lead := _FILLER_LEAD.sub("", t)) != t:
        t = lead
    # A name that is also an attribute word ("RAM") is the attribute.
    vals = [v for v in values(t) if lex.phrase(v.text) is None and (
        v.kind != "name" or not t[v.start:v.end].isupper()
        or not (set(index_terms(v.text)) & (lex.strong.keys() | lex.weak.keys())))]
    out, last = [], 0
    for v in vals:
        out += [t[last:v.start], " "]
        last = v.end
    out.append(t[last:])
    rest = _FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", "".join(out)))
    strong: set[str] = set()
    weak: set[str] = set()
    words: set[str] = set()
    quals = {q for q in lex.zh_qualifiers if q in rest}

    def take(hit: tuple[str, bool] | None) -> str:
        if hit is not None:
            (strong if hit[1] else weak).add(hit[0])
        return " "

    if lex.phrase_pattern is not None:
        rest = lex.phrase_pattern.sub(lambda m: take(lex.phrase(m.group())), rest)
    if lex.zh_pattern is not None and _HAS_CJK.search(rest):
        rest = lex.zh_pattern.sub(lambda m: take(lex.zh_word(m.group())), rest)
    for run in _CJK_RUN.findall(rest):
        for seg in _cjk_segments(run):
            words.update([seg] if len(seg) == 1 else [seg[i:i + 2] for i in range(len(seg) - 1)])
    for term in index_terms(_CJK_RUN.sub(" ", rest)):
        if term in lex.strong:
            strong.add(lex.strong[term])
        elif term in lex.weak:
            weak.add(lex.weak[term])
        elif term not in lex.light and not term.isdigit():
            words.add(term)
            if term in lex.qualifiers:
                quals.add(term)
    # What the words name, and what the values' shapes say ("hosted in cn-beijing": a region).
    attributes = (strong or weak) | {a for v in vals for a in lex.implied(v.text)}
    record = is_record([v.kind for v in vals])
    # A record named before anything is said of it ("OPS-311 ...", "Ticket OPS-311 ...",
    # "发票 FP4553 ...", "#12 ..."): another name is another record.
    named = None
    if vals and (_labels(t, vals[0]) or (vals[0].kind in RECORDS
                                         and len(_content_terms(t[: vals[0].start])) <= 1)):
        named = vals[0].text
    leads = tuple(dict.fromkeys(
        w for m in _LEAD_WORD.finditer(t) for w in index_terms(m.group(1))[:1] if w in words))
    return Slots(frozenset(attributes), frozenset(words), tuple((v.kind, v.text) for v in vals),
                 record, named, leads, frozenset(quals))


_GENERIC = frozenset(t for w in GENERIC_HEADS for t in
                     ([w] if _HAS_CJK.search(w) else index_terms(w)))
_ASKING = re.compile(r"[谁哪啥吗么呢几怎]")


def query_subject(text: str, lex: Lexicon) -> frozenset[str]:
    """What a question asks about (index terms): its subject words without generic heads
    ("service", "服务") and the words of asking; its values too ("what runs on pg-3?"). Empty
    unless it has two terms or more: one word left beside the attribute ("Where is the
    on-call phone *kept*?") is a verb as often as a subject."""
    said = slots(text, lex)
    words = {w for w in said.subject_words if w not in _GENERIC and not _ASKING.search(w)}
    found = words | {t for _, v in said.values for t in index_terms(v)}
    return frozenset(found) if len(found) >= 2 else frozenset()


def same_slot(new: Slots, old: Slots, subject_overlap: float) -> str | None:
    """Why ``new`` gives a new value to the attribute ``old`` states of the same subject, or
    None: a shared attribute, subject words at least ``subject_overlap`` alike (Jaccard),
    one value changed for a value of the same class (two, when subject words name the
    subject), the rest the same, no ledger
    line and no other record named ("Ticket OPS-1 ..." vs "Ticket OPS-2 ..."). A capitalised
    first word is read as a subject word, else as a name ("Kenji owns the portal")."""
    # Only a statement with no value of its own may hold it in a capitalised word.
    for a in (new, new.leads_as_names()) if new.leads and not new.values else (new,):
        for b in (old, old.leads_as_names()) if old.leads and not old.values else (old,):
            why = _same_slot(a, b, subject_overlap)
            if why:
                return why
    return None


def _same_slot(new: Slots, old: Slots, subject_overlap: float) -> str | None:
    shared = new.attributes & old.attributes
    if not shared or new.record or old.record:
        return None
    if new.subject != old.subject and (new.subject is not None or old.subject is not None):
        return None
    if new.qualifiers != old.qualifiers:
        return None  # staging vs production: two subjects
    if jaccard(new.subject_words, old.subject_words) < subject_overlap:
        return None
    added = [v for v in new.values if v not in old.values]
    gone = [v for v in old.values if v not in new.values]
    if not added or len(added) != len(gone) or len(added) > 2:
        return None
    if len(added) == 2 and not new.subject_words:
        return None  # of two changed values, one may name the subject ("the EU/US cluster")
    if sorted(_KIND_CLASS.get(k, k) for k, _ in added) != \
            sorted(_KIND_CLASS.get(k, k) for k, _ in gone):
        return None
    return f"same {'/'.join(sorted(shared))} of the same subject, new value"


@dataclass(frozen=True)
class Statement:
    """What the rules read of a statement to compare it with another (:func:`supersedes`):
    whether it asks or denies, the preference it states, and the claim and slots of the
    state it leaves (:func:`state_after`). A pure function of its text, the lexicon and
    ``subject_span``; the update engine stores it with each memory
    (:mod:`.statements`), so that a candidate is not parsed again."""

    question: bool
    negated: bool
    preference: Preference | None
    claim: Claim
    slots: Slots
    plain: bool  # it states no change: the claim and slots are its text's own
    values: tuple[str, ...]  # the normalised values of its text (:func:`holds`)


@lru_cache(maxsize=CACHE_SIZE)
def statement(text: str, lex: Lexicon, subject_span: float = 0.5) -> Statement:
    """The :class:`Statement` of ``text``."""
    state = state_after(text)
    return Statement(is_question(text), is_negated(text), preference(text),
                     claim(state, subject_span), slots(state, lex), state == text,
                     tuple(dict.fromkeys(v.text for v in values(text))))


def supersedes(new_text: str, old_text: str, lex: Lexicon, *, frame_overlap: float,
               min_words: int, subject_span: float, subject_overlap: float,
               old_is_event: bool = False) -> str | None:
    """Why the statement ``new_text`` gives a new value to what ``old_text`` stated, or None
    (see :func:`statement_supersedes`)."""
    return statement_supersedes(
        statement(new_text, lex, subject_span), statement(old_text, lex, subject_span),
        frame_overlap=frame_overlap, min_words=min_words, subject_overlap=subject_overlap,
        old_is_event=old_is_event)


def statement_supersedes(new: Statement, old: Statement, *, frame_overlap: float,
                         min_words: int, subject_overlap: float,
                         old_is_event: bool = False) -> str | None:
    """Why ``new`` gives a new value to what ``old`` stated, or None: a reversed preference
    (:func:`reversed_preference`), else the same claim frame with a new value
    (:func:`same_claim`), else a new value of the same attribute of the same subject
    (:func:`same_slot`); a stated change is read as the state it leaves. An old platform
    event is compared only when neither text tells of a past occurrence (occurrences add
    up: "deployed v1.2", "deployed v1.3"); a state it reported may change ("retention: 14
    days", "30 days")."""
    why = _reversed(new.preference, old.preference)
    if why:
        return why
    if old_is_event and (new.claim.event or old.claim.event):
        return None
    why = same_claim(new.claim, old.claim, frame_overlap, min_words)
    return why or same_slot(new.slots, old.slots, subject_overlap)


def state_after(text: str) -> str:
    """The state a change leaves, as a plain statement: "the support hotline changed to
    555-0100" states "the support hotline: 555-0100", "客服热线改成了 400-820-1234" states
    "客服热线: 400-820-1234". A later "the support hotline is 555-0199" then gives a new value
    of the same claim, which the change's verb (and its past tense, read as an event) would
    otherwise hide. Other texts are returned as they are."""
    t = transition(text)
    if t is None or not t.phrase or (not values(t.new) and len(t.new.split()) > 3):
        return text
    # The value as written: a name keeps its capital ("cut over from Sofia to Ravi").
    written = unicodedata.normalize("NFKC", text)
    folded = written.casefold()
    at = folded.find(t.new.casefold()) if len(folded) == len(written) else -1
    new = written[at: at + len(t.new)] if at >= 0 else t.new
    return f"{t.phrase}: {new}"



def without_speaker(text: str, speakers: Sequence[str]) -> str:
    """``text`` without a leading "<speaker>:" label naming one of ``speakers``."""
    head, sep, rest = text.partition(":")
    if not sep:
        head, sep, rest = text.partition("：")
    if sep and head.strip().casefold() in {s.strip().casefold() for s in speakers}:
        return rest.strip()
    return text


# A name that addresses someone: "Thanks, Gina!", "Hey Mel,", "It isn't, Maria." Talk, not
# a value of what is said.
_VOCATIVE = re.compile(
    r"(?:(?<=^)|(?<=[.!?]\s))((?i:hey|hi|hello|thanks|thank you|sorry|yeah|yes|no|ok|okay|"
    r"dear|cheers|congrats|wow|cool|great|awesome|nice|sure|bye))[,!]?\s+[A-Z][a-z]+\b"
    r"|,\s*[A-Z][a-z]+(?=\s*[.!?](?:\s|$)|\s*$)")


def without_address(text: str) -> str:
    """``text`` without the names it addresses someone by (see ``_VOCATIVE``)."""
    return _VOCATIVE.sub(lambda m: m.group(1) or "", text)


# -- transitions and negation --------------------------------------------------------------
_STOP = r"(?=$|[,.;:!?](?:\s|$)|[，。；：！？]|\s+(?:for|on|in|at|yesterday|today|last|this|because|since|" \
        r"and|but|so|after|before|during|now)\b)"
# The verbs of a change, inflected ("moved", not "movie"; "promoted", not "promotions"). "went"
# and "gone" only with "from A to B": "went to a car show" is a trip.
_CHANGE_EN = alternation("change", "en")
_REPLACE_EN = alternation("replace", "en")
_INSTEAD = alternation("instead", "en")
_EN_FROM_TO = re.compile(rf"\b(?:{_CHANGE_EN}|went|gone)\b(?P<subj>.*?)\bfrom\s+(?P<a>.+?)\s+(?:to|into)\s+"
                         rf"(?P<b>.+?){_STOP}", re.IGNORECASE)
_EN_REPLACED = re.compile(rf"\b(?:{_REPLACE_EN})\s+(?P<a>.+?)\s+(?:with|by|for)\s+"
                          rf"(?P<b>.+?){_STOP}",
                          re.IGNORECASE)
_EN_REPLACED_BY = re.compile(rf"(?P<a>\S+)\s+(?:was|is|has been|got)\s+replaced\s+by\s+"
                             rf"(?P<b>.+?){_STOP}", re.IGNORECASE)
_EN_TO = re.compile(rf"\b{_CHANGE_EN}\b(?P<subj>.*?)\b(?:to|into|over to)\s+(?P<b>.+?){_STOP}",
                    re.IGNORECASE)
_EN_INSTEAD = re.compile(rf"(?P<b>[^\s,;:]+)\s*,?\s+(?:{_INSTEAD}|not)\s+"
                         r"(?P<a>[^\s,.;:!?]+)", re.IGNORECASE)
# "Maria now leads the release instead of Tom": a person opening the sentence stands in for
# the name after "instead of" when the sentence gives a role (leads, owns, runs ...); a verb
# of anything else does not ("Alice takes the bus instead of Uber": no name replaced).
_ROLE_VERBS = alternation("role_verb", "en")
OPENER_RULE = "B ... instead of A"  # of a role only; the old holder must name its subject
_EN_OPENER_INSTEAD = re.compile(
    rf"^\s*(?P<b>[A-Z][\w'-]*)\s+(?P<subj>(?:(?:now|currently|also)\s+)?(?:{_ROLE_VERBS})\s"
    rf"(?:(?!{_INSTEAD})[^,;:])+?)\s*,?\s+"
    rf"{_INSTEAD}\s+(?P<a>[A-Z][\w'-]*)\s*[.!]?\s*$")
_ARROW = re.compile(r"(?P<a>[^\s:：,，]+)\s*(?:->|→|=>|⇒|⟶)\s*(?P<b>[^\s,，。;；]+)")
_ZH_VERB = alternation("change", "zh")
_ZH_B = r"(?P<b>[^，。,;；！!？?\s了]+(?:\s+[A-Za-z][\w.-]*)*)"
_ZH_FROM = re.compile(rf"(?:从|由)\s*(?P<a>.+?)\s*{_ZH_VERB}\s*了?\s*{_ZH_B}")  # 迁到了B
_ZH_TO = re.compile(rf"(?P<subj>[^，。,;；！!？?]*?)\s*(?:已经|已|都|也)?\s*{_ZH_VERB}\s*了?\s*{_ZH_B}")
_ZH_VERB_RX = re.compile(_ZH_VERB)
_REPLACE_RX = re.compile(rf"\b(?:{_REPLACE_EN})\b", re.IGNORECASE)
_ARROWS = ("->", "→", "=>", "⇒", "⟶")
_INSTEAD_RX = re.compile(rf"\s(?:{_INSTEAD}|not)\s")
_TRIGGER = re.compile(rf"{_ZH_VERB}|\b{_CHANGE_EN}\b|\bfrom\b|\b(?:{_REPLACE_EN})\b|"
                      rf"{_INSTEAD}|"
                      r"->|→|=>|⇒|⟶", re.IGNORECASE)
_NEG_EN = re.compile(
    rf"\b(?:not\s+(?:\w+\s+){{0,3}}any\s?more|(?:is|are|was|were|do|does|did)\s+not)\b"
    rf"|{alternation('negation', 'en')}", re.IGNORECASE)
_NEG_ZH = re.compile(alternation("negation", "zh"))
# "已经不用 KeyDB 了", "不喝咖啡了": the words between 不 and 了 are what stopped.
_NEG_ZH_WRAP = re.compile(r"不(?P<x>[^,.;!?，。；！？]{1,20}?)了(?=$|[\s,.;!?，。；！？])")
_LEAD = re.compile(r"^\s*(?:btw|by the way|so|ok|okay|we|i|they|you|our team|the team|"
                   r"we've|we have|i've|i have|have|has|had|just|also|finally)\b\s*",
                   re.IGNORECASE)


@dataclass(frozen=True)
class Transition:
    """"X from A to B": the old value (when named), the new one, the subject's words and
    the text they come from (its :func:`slots` tell what attribute of what changed)."""

    old: str | None
    new: str
    subject: tuple[str, ...]
    rule: str
    phrase: str = ""


def _value_of(phrase: str) -> str:
    """A phrase's value: its one value-like token, else the phrase, normalised."""
    p = phrase.strip().strip("\"'“”‘’`")
    vals = values(p)
    if len(vals) == 1 and (vals[0].kind in RECORDS
                           or (vals[0].end - vals[0].start) >= len(p.strip()) * 0.5):
        return vals[0].text
    return normalise(re.sub(r"^(?:the|a|an)\s+", "", p, flags=re.IGNORECASE))


def _change(old: str | None, new: str, rule: str, *parts: str) -> Transition:
    phrase = " ".join(_LEAD.sub("", _LEAD.sub("", p)) for p in parts)
    words = tuple(dict.fromkeys(index_terms(_FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", phrase)))))
    return Transition(old, new, words, rule, " ".join(phrase.split()))


# What a change applies to, when it is said after it: "replaced A with B for the docs site".
_TAIL = re.compile(r"^\s*(?:for|of|in|on|at)\s+(?P<x>[^.;!?]+)", re.IGNORECASE)


def _value_at(text: str, m: re.Match[str], group: str) -> str:
    """The value ``m``'s group opens, whole ("换成了 139 3333 4444": the phone number, though
    the group stopped at a space), else the group's value."""
    start = m.start(group)
    for v in values(text):
        if v.start == start:
            return v.text
    return _value_of(m[group])


def _is_value(text: str, m: re.Match[str], group: str) -> bool:
    """Is ``m``'s group a value of ``text`` (read in its place), or a capitalised name?"""
    start, end = m.span(group)
    word = m[group]
    return any(v.start < end and v.end > start for v in values(text)) or (
        word[:1].isupper() and word != "I" and word.lower() not in _NOT_NAMES)


def _name_like(word: str) -> bool:
    """A capitalised word, or a short run of CJK characters ("钉钉", "飞书")."""
    return word[:1].isupper() or bool(re.fullmatch(rf"[{_CJK}]{{1,6}}", word))


def _tail(rest: str) -> str:
    m = _TAIL.match(rest)
    return m["x"] if m else ""


@lru_cache(maxsize=CACHE_SIZE)
def transition(text: str) -> Transition | None:
    """The change ``text`` announces, if one of its sentences is phrased as one (see the
    module's docstring): what a change applies to is said in its own sentence, not in the
    greeting before it ("Hey Mel! ... We moved to Denver")."""
    t = unicodedata.normalize("NFKC", text)
    if not _TRIGGER.search(t):  # every pattern below needs one of these words
        return None
    for sentence in sentences(t):
        if _TRIGGER.search(sentence) and not is_question(sentence) \
                and not is_hedged(sentence) and (found := _transition_in(sentence)) is not None:
            return found
    return None


def _transition_in(t: str) -> Transition | None:
    # Each pattern is tried only where its fixed words are: the lazy groups that open some
    # of them (_ZH_TO, _EN_INSTEAD) cost time quadratic in the sentence where they fail.
    low = t.lower()
    zh_verb = _ZH_VERB_RX.search(t) is not None
    m = _ZH_FROM.search(t) if zh_verb and ("从" in t or "由" in t) else None
    if m:
        return _change(_value_of(m["a"]), _value_at(t, m, "b"), "从A到B", t[: m.start()])
    m = _EN_FROM_TO.search(t)
    if m:
        return _change(_value_of(m["a"]), _value_of(m["b"]), "from A to B", t[: m.start()],
                       m["subj"])
    m = None
    if _REPLACE_RX.search(t):
        m = _EN_REPLACED.search(t)
        if m is None and "replaced" in low:
            m = _EN_REPLACED_BY.search(t)
    if m:
        return _change(_value_of(m["a"]), _value_of(m["b"]), "replaced A with B",
                       t[: m.start()], _tail(t[m.end():]))
    m = _ARROW.search(t) if any(a in t for a in _ARROWS) else None
    # "A -> B" of values or names; "settlement system -> database pg-4" is a statement.
    if m and (values(m["a"]) or values(m["b"]) or all(_name_like(m[g]) for g in "ab")):
        return _change(_value_of(m["a"]), _value_of(m["b"]), "A -> B", t[: m.start()],
                       _tail(t[m.end():]))
    m = _EN_INSTEAD.search(t) if _INSTEAD_RX.search(low) else None
    # "B instead of A", of two values ("gke-prod-7 instead of ack-hz-2", "Grace instead of
    # Nadia"); "not" only so.
    if m and m["a"].lower() != "the" and _is_value(t, m, "a") and _is_value(t, m, "b") \
            and kind_class(kind_of(_value_of(m["a"]))) == kind_class(kind_of(_value_of(m["b"]))):
        return _change(_value_of(m["a"]), _value_of(m["b"]), "B instead of A", t[: m.start()])
    m = _EN_OPENER_INSTEAD.search(t) if _INSTEAD_RX.search(low) else None
    if m and all(m[g] != "I" and m[g].lower() not in _NOT_NAMES | ENGLISH for g in "ab") \
            and kind_of(_value_of(m["a"])) == kind_of(_value_of(m["b"])) == "name":
        return _change(_value_of(m["a"]), _value_of(m["b"]), OPENER_RULE, m["subj"])
    m = _EN_TO.search(t)
    if m:
        return _change(None, _value_of(m["b"]), "moved to B", t[: m.start()], m["subj"])
    m = _ZH_TO.search(t) if zh_verb else None
    if m and m["subj"].strip():
        return _change(None, _value_at(t, m, "b"), "改为B", m["subj"])
    return None


# -- preferences: "A over B" ---------------------------------------------------------------------
_PREFER_EN = re.compile(
    r"^(?P<subj>.*?)\b(?:prefers?|preferred|favou?rs?|favou?red|would rather (?:use|have|take))"
    r"\s+(?P<a>.+?)\s+(?:over|to|rather than|instead of|more than)\s+(?P<b>.+?)" + _STOP,
    re.IGNORECASE)
_LIKE_EN = re.compile(r"^(?P<subj>.*?)\blik(?:es?|ed)\s+(?P<a>.+?)\s+(?:better|more)\s+than\s+"
                      r"(?P<b>.+?)" + _STOP, re.IGNORECASE)
_PREFER_ZH = re.compile(r"^(?P<subj>[^，。,;；]*?)(?:更喜欢|更偏好|更倾向于?|更爱|偏好|偏爱)"
                        r"(?P<a>[^，。,;；]+?)\s*[，,]?\s*(?:而不是|而非|胜过|多过)(?P<b>[^，。,;；！!？?]+)")
_RATHER_ZH = re.compile(r"^(?:比起|相比)(?P<b>[^，。,;；]+?)\s*[，,]?\s*(?P<subj>[^，。,;；]*?)更"
                        r"(?:喜欢|偏好|倾向于?|爱)(?P<a>[^，。,;；！!？?]+)")


@dataclass(frozen=True)
class Preference:
    """"S prefers A over B": the subject's index terms, the preferred and the other choice."""

    subject: frozenset[str]
    liked: str
    over: str


@lru_cache(maxsize=CACHE_SIZE)
def preference(text: str) -> Preference | None:
    """The preference ``text`` states between two choices, if it states one ("Alice prefers
    tabs over spaces", "likes tea better than coffee", "小王更喜欢喝茶而不是咖啡", "比起咖啡，
    小王更喜欢茶")."""
    t = unicodedata.normalize("NFKC", text).strip()
    m = _PREFER_EN.search(t) or _LIKE_EN.search(t) or _PREFER_ZH.search(t) \
        or _RATHER_ZH.search(t)
    if m is None or m["a"].lower() in ("not", "never"):  # "I prefer not to say"
        return None
    subj = _FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", m["subj"]))
    return Preference(frozenset(index_terms(subj)), normalise(m["a"]), normalise(m["b"]))


def _same_choice(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (a in b or b in a)  # "喝茶" and "茶"


def reversed_preference(new_text: str, old_text: str) -> str | None:
    """Why ``new_text`` changes the preference ``old_text`` stated, or None: the same subject
    (or none named in either) now prefers the other of the two choices ("tabs over spaces",
    then "spaces over tabs"), or another choice over the same alternative."""
    return _reversed(preference(new_text), preference(old_text))


def _reversed(new: Preference | None, old: Preference | None) -> str | None:
    if new is None or old is None:
        return None
    if new.subject != old.subject and not (new.subject & old.subject):
        return None
    if _same_choice(new.liked, old.over) and _same_choice(new.over, old.liked):
        return "preference reversed"
    if _same_choice(new.over, old.over) and not _same_choice(new.liked, old.liked):
        return "another choice preferred over the same alternative"
    return None

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
    gone = tuple(dict.fromkeys(v.text for v in values(rest) if v.kind not in _MEASURES))
    opener = _OPENER.match(t)
    return Negation(gone, tuple(dict.fromkeys(
        index_terms(_FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", rest))))), rest,
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
        if _content_terms(_FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", parts[i]))):
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
        _MOD_ZH.sub(" ", _FIRST_PERSON_ZH.sub(" ", _FILLER_ZH.sub(" ", text)))))


def negates(neg: Negation, old_text: str, extra_words: int) -> bool:
    """Does a negation that names no value retire ``old_text``? When ``old_text`` states
    what stopped and little else: every content word of the negation is in it (Chinese by
    character, since "不喝咖啡了" and "每天喝两杯咖啡" share no bigram but 咖啡), and what else it
    says is when, how often or how much (:data:`~varvemem.language.attributes.MODIFIERS`), but
    for at most ``extra_words`` words. "I no longer go swimming" retires "I go swimming
    every Tuesday morning", not "My sister goes swimming"."""
    want = {t for t in neg.words if not _HAS_CJK.search(t)} - _MOD_TERMS - _LIGHT_TERMS
    have = {t for t in index_terms(_FILLER_EN.sub(" ", old_text))
            if not _HAS_CJK.search(t) and not any(c.isdigit() for c in t)}  # "8:05": when
    have -= _MOD_TERMS | _LIGHT_TERMS
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


def kind_of(value: str) -> str:
    """The kind of a normalised value or phrase (``name`` for words)."""
    vals = values(value)
    return vals[0].kind if len(vals) == 1 else "name"


# -- questions -----------------------------------------------------------------------------
def is_question(text: str) -> bool:
    """A question (never a statement of fact that supersedes anything): its last sentence
    asks."""
    said = sentences(text)
    return bool(said) and segment_question(said[-1])
