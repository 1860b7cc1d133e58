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
* :func:`transition` / :func:`negation` — "from A to B", "A -> B", "replaced A with B",
  "moved/switched/migrated (X) to B", "从A迁到B", "由A改为B", "换成B", "改成B", "迁到B";
  "no longer ...", "不再...".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

from ..text import index_terms
from ..text.analyzer import _cjk_segments

# -- normalisation ---------------------------------------------------------------------------
# The rules parse the same texts again and again (a memory is a candidate of many adds):
# they are pure functions of the text, so their results are kept.
_CACHE = 16_384
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_PUNCT_MAP = str.maketrans({
    "。": ".", "、": ",", "，": ",", "；": ";", "：": ":", "！": "!", "？": "?",
    "「": '"', "」": '"', "『": '"', "』": '"', "“": '"', "”": '"', "‘": "'", "’": "'",
    "《": '"', "》": '"', "（": "(", "）": ")", "【": "[", "】": "]", "〜": "~", "～": "~",
    "—": "-", "–": "-", "…": "...", "·": ".",
})
_TRAILING = re.compile(r"[\s.,;:!?~\"')\]]+$")
_SPACE_NEAR = re.compile(rf"\s*([{_CJK}]|[.,;:!?()\[\]\"'])\s*")


def normalise(text: str) -> str:
    """``text`` as dedup compares it: width, case, punctuation variants, trailing punctuation
    and spacing do not matter; words, digits and inner punctuation do."""
    t = unicodedata.normalize("NFKC", text).translate(_PUNCT_MAP).lower()
    t = " ".join(t.split())
    t = _TRAILING.sub("", t)
    return _SPACE_NEAR.sub(r"\1", t)


# -- values ------------------------------------------------------------------------------------
_VALUE = re.compile(
    r"(?P<url>https?://[^\s,，。;；]+)"
    r"|(?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?P<date>\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}"
    r"|\d{4}年\d{1,2}月(?:\d{1,2}[日号])?|\d{1,2}月\d{1,2}[日号])"
    r"|(?P<time>\d{1,2}:\d{2}(?::\d{2})?(?:\s*-\s*\d{1,2}:\d{2}(?::\d{2})?)?)"
    r"|(?P<amount>[$€£¥]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:元|块|美元|usd|eur|rmb|cny)"
    r"(?![a-z]))"
    r"|(?P<ip>\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b)"
    r"|(?P<host>\b[a-z0-9][\w-]*(?:\.[\w-]*[a-z0-9])+\b)"
    r"|(?P<id>\b[a-z][a-z0-9]*(?:[-_/][a-z0-9]+)+\b|\b[a-z]+\d[a-z0-9]*\b)"
    r"|(?P<number>(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:%|[a-z]{1,3}\b)?)",
    re.IGNORECASE)
# Capitalised words (and acronyms) that are names when they do not open the sentence.
_NAME = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:['’]s)?(?:\s+[A-Z][A-Za-z0-9]*)*")
_ZH_NAME = re.compile(rf"(?:是|为|给|叫)([{_CJK}]{{2,4}}?)(?:了|啦|呢|吧)?(?=$|[,.;:!?，。；：！？])")
_SENTENCE_START = re.compile(r"(?:^|[.!?。！？]\s*|[:：]\s*)$")


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


@lru_cache(maxsize=_CACHE)
def values(text: str) -> tuple[Value, ...]:
    """The value-like tokens of ``text`` in order (see the module's docstring)."""
    t = unicodedata.normalize("NFKC", text)
    found: list[Value] = []
    taken = [False] * (len(t) + 1)
    for m in _VALUE.finditer(t):
        kind = m.lastgroup or "value"
        raw = m.group().rstrip()
        if kind == "number" and not any(c.isdigit() for c in raw):
            continue
        found.append(Value(kind, _norm_value(kind, raw), m.start(), m.start() + len(raw)))
        for i in range(m.start(), m.start() + len(raw)):
            taken[i] = True
    for m in _NAME.finditer(t):
        if any(taken[m.start():m.end()]) or _SENTENCE_START.search(t[: m.start()]):
            continue
        found.append(Value("name", _norm_value("name", m.group()), m.start(), m.end()))
    for m in _ZH_NAME.finditer(t):
        s, e = m.span(1)
        if not any(taken[s:e]):
            found.append(Value("name", m.group(1), s, e))
    found.sort(key=lambda v: v.start)
    return tuple(found)


def value_set(text: str) -> list[str]:
    """The normalised values of ``text``, sorted (what the merge guard compares)."""
    return sorted(v.text for v in values(text))


# -- frames ------------------------------------------------------------------------------------
_FILLER_EN = re.compile(
    r"\b(now|currently|today|yesterday|tonight|recently|actually|btw|again|instead|still|"
    r"already|from now on|as of today|these days|anymore|any more)\b", re.IGNORECASE)
_FILLER_ZH = re.compile(r"现在|目前|当前|已经|今天|昨天|最近|其实|从今天起|从现在起|了|啦|呢|吧")
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


def _masked(text: str) -> str:
    t = unicodedata.normalize("NFKC", text)
    out, last = [], 0
    for v in values(text):
        out += [t[last:v.start], f" zz{v.kind}zz "]
        last = v.end
    out.append(t[last:])
    return "".join(out)


@lru_cache(maxsize=_CACHE)
def claim(text: str, subject_span: float = 0.5) -> Claim:
    """The claim ``text`` makes (see the module's docstring)."""
    text = _TEMPORAL.sub(" ", unicodedata.normalize("NFKC", text))
    while (lead := _FILLER_LEAD.sub("", text)) != text:
        text = lead
    vals = values(text)
    masked = _FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", _masked(text)))
    frame = index_terms(masked)
    words = sum(1 for w in frame if not (w.startswith("zz") and w.endswith("zz")))
    subject = None
    if vals:
        t = unicodedata.normalize("NFKC", text)
        before = len(_content_terms(t[: vals[0].start]))
        after = len(_content_terms(_masked(t[vals[0].end:])))
        # A date or a number is what is said of a subject, unless a counting word labels the
        # number ("turn 3", "fact number 2", "step 4", "第3步"): then it names the record.
        labelled = _labels(t, vals[0])
        named = vals[0].kind not in _MEASURES
        if before == 0 or labelled or (named and before <= subject_span * (before + after)):
            subject = vals[0].text
    return Claim(frozenset(frame), tuple(v.kind for v in vals), tuple(v.text for v in vals),
                 subject, words + (subject is not None), frozenset(index_terms(text)),
                 bool(_EVENT.search(" ".join(_FILLER_EN.sub(" ", _masked(text)).split()))))


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
_MEASURES = frozenset({"date", "time", "amount", "number"})
RECORDS = frozenset({"id", "host", "ip", "email", "url"})  # kinds that name one record


def _content_terms(text: str) -> list[str]:
    """The content words of a piece of text: no placeholders, no filler words; a CJK segment
    (between stop words) counts as one word, not as its bigrams."""
    t = _FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", text))
    cjk = [seg for run in _CJK_RUN.findall(t) for seg in _cjk_segments(run)]
    latin = index_terms(_CJK_RUN.sub(" ", t))
    return [w for w in latin if not (w.startswith("zz") and w.endswith("zz"))] + cjk


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
    if min(new.words, old.words) < min_words:
        return None
    if new.subject != old.subject:
        return None  # another subject
    if (new.event or old.event) and not (new.subject is not None and new.kinds[0] in RECORDS):
        return None  # two events add up, unless of one record ("INV-1042 was paid on ...")
    if len(new.values) > 1 and all(a != b for a, b in zip(new.values, old.values)):
        return None  # every value differs: another record ("entry 7 for team-7")
    if new.frame == old.frame:
        return "same claim, new value (frame)"
    if jaccard(new.frame, old.frame) >= overlap:
        return "close claim, new value (frame)"
    return None


# -- transitions and negation --------------------------------------------------------------
_STOP = r"(?=$|[,.;:!?](?:\s|$)|[，。；：！？]|\s+(?:for|on|in|at|yesterday|today|last|this|because|since|" \
        r"and|but|so|after|before|during|now)\b)"
_CHANGE_EN = r"(?:migrat\w*|mov\w*|switch\w*|chang\w*|upgrad\w*|downgrad\w*|bump\w*|went|gone|" \
             r"transferr?\w*|swapp?\w*|rotat\w*|renam\w*|shift\w*|updat\w*|relocat\w*|" \
             r"promot\w*|cut\s+over|ported|port\w*)"
_EN_FROM_TO = re.compile(rf"\b{_CHANGE_EN}\b(?P<subj>.*?)\bfrom\s+(?P<a>.+?)\s+(?:to|into)\s+"
                         rf"(?P<b>.+?){_STOP}", re.IGNORECASE)
_EN_REPLACED = re.compile(rf"\b(?:replac|swapp?|exchang|trad)\w*\s+(?P<a>.+?)\s+(?:with|by|for)\s+"
                          rf"(?P<b>.+?){_STOP}",
                          re.IGNORECASE)
_EN_REPLACED_BY = re.compile(rf"(?P<a>\S+)\s+(?:was|is|has been|got)\s+replaced\s+by\s+"
                             rf"(?P<b>.+?){_STOP}", re.IGNORECASE)
_EN_TO = re.compile(rf"\b{_CHANGE_EN}\b(?P<subj>.*?)\b(?:to|into|over to)\s+(?P<b>.+?){_STOP}",
                    re.IGNORECASE)
_ARROW = re.compile(r"(?P<a>[^\s:：,，]+)\s*(?:->|→|=>|⇒|⟶)\s*(?P<b>[^\s,，。;；]+)")
_ZH_VERB = r"(?:迁移到|迁移至|迁到|迁至|迁往|搬到|切换到|切换为|切到|改为|改成|改用|换成|换为|换到|" \
           r"升级到|升级为|升到|变成|变为|调整为|调整到|更新为|更新到|替换为|替换成)"
_ZH_B = r"(?P<b>[^，。,;；！!？?\s了]+(?:\s+[A-Za-z][\w.-]*)*)"
_ZH_FROM = re.compile(rf"(?:从|由)\s*(?P<a>.+?)\s*{_ZH_VERB}\s*了?\s*{_ZH_B}")  # 迁到了B
_ZH_TO = re.compile(rf"(?P<subj>[^，。,;；！!？?]*?)\s*(?:已经|已|都|也)?\s*{_ZH_VERB}\s*了?\s*{_ZH_B}")
_TRIGGER = re.compile(rf"{_ZH_VERB}|\b{_CHANGE_EN}\b|\bfrom\b|\b(?:replac|swapp?|exchang|trad)\w*|"
                      r"->|→|=>|⇒|⟶", re.IGNORECASE)
_NEG_EN = re.compile(r"\b(?:no longer|not\s+\w+\s+any\s?more|is not|isn't|are not|aren't)\b",
                     re.IGNORECASE)
_NEG_ZH = re.compile(r"不再|不用了|已不|不会再")
_LEAD = re.compile(r"^\s*(?:btw|by the way|so|ok|okay|we|i|they|you|our team|the team|"
                   r"we've|we have|i've|i have|have|has|had|just|also|finally)\b\s*",
                   re.IGNORECASE)


@dataclass(frozen=True)
class Transition:
    """"X from A to B": the old value (when named), the new one and the subject's words."""

    old: str | None
    new: str
    subject: tuple[str, ...]
    rule: str


def _value_of(phrase: str) -> str:
    """A phrase's value: its one value-like token, else the phrase, normalised."""
    p = phrase.strip().strip("\"'“”‘’`")
    vals = values(p)
    if len(vals) == 1 and (vals[0].kind in RECORDS
                           or (vals[0].end - vals[0].start) >= len(p.strip()) * 0.5):
        return vals[0].text
    return normalise(re.sub(r"^(?:the|a|an)\s+", "", p, flags=re.IGNORECASE))


def _subject(*parts: str) -> tuple[str, ...]:
    words = " ".join(_LEAD.sub("", _LEAD.sub("", p)) for p in parts)
    return tuple(dict.fromkeys(index_terms(_FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", words)))))


@lru_cache(maxsize=_CACHE)
def transition(text: str) -> Transition | None:
    """The change ``text`` announces, if it is phrased as one (see the module's docstring)."""
    t = unicodedata.normalize("NFKC", text)
    if not _TRIGGER.search(t):  # every pattern below needs one of these words
        return None
    m = _ZH_FROM.search(t)
    if m:
        return Transition(_value_of(m["a"]), _value_of(m["b"]), _subject(t[: m.start()]),
                          "从A到B")
    m = _EN_FROM_TO.search(t)
    if m:
        return Transition(_value_of(m["a"]), _value_of(m["b"]),
                          _subject(t[: m.start()], m["subj"]), "from A to B")
    m = _EN_REPLACED.search(t) or _EN_REPLACED_BY.search(t)
    if m:
        return Transition(_value_of(m["a"]), _value_of(m["b"]), _subject(t[: m.start()]),
                          "replaced A with B")
    m = _ARROW.search(t)
    if m:
        return Transition(_value_of(m["a"]), _value_of(m["b"]), _subject(t[: m.start()]),
                          "A -> B")
    m = _EN_TO.search(t)
    if m:
        return Transition(None, _value_of(m["b"]), _subject(t[: m.start()], m["subj"]),
                          "moved to B")
    m = _ZH_TO.search(t)
    if m and m["subj"].strip():
        return Transition(None, _value_of(m["b"]), _subject(m["subj"]), "改为B")
    return None


@lru_cache(maxsize=_CACHE)
def negation(text: str) -> tuple[str, ...] | None:
    """The words ``text`` says are no longer true ("no longer X", "不再X"), or None."""
    t = unicodedata.normalize("NFKC", text)
    m = _NEG_ZH.search(t) or _NEG_EN.search(t)
    if not m:
        return None
    rest = t[: m.start()] + " " + t[m.end():]
    return tuple(dict.fromkeys(index_terms(_FILLER_ZH.sub(" ", _FILLER_EN.sub(" ", rest)))))


def is_negated(text: str) -> bool:
    return bool(_NEG_ZH.search(text) or _NEG_EN.search(text))


def holds(text: str, value: str) -> bool:
    """Does ``text`` state ``value`` (a normalised value or phrase)?"""
    if value in {v.text for v in values(text)}:
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
_QUESTION = re.compile(
    r"[?？]\s*$|^\s*(?:what|which|where|who|whom|whose|when|why|how|is|are|was|were|do|does|"
    r"did|can|could|should|would|will|shall|may|have|has)\b|(?:吗|么|呢|嘛)\s*[?？]?\s*$|"
    r"什么|哪里|哪个|哪儿|哪些|几点|多少|怎么|如何|是否|为什么|有没有|是不是",
    re.IGNORECASE)


@lru_cache(maxsize=_CACHE)
def is_question(text: str) -> bool:
    """A question (never a statement of fact that supersedes anything)."""
    return bool(_QUESTION.search(text.strip()))
