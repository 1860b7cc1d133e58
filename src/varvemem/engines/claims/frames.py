"""A statement's claim frame (:func:`claim`: its words with each value masked by kind) and
whether two claims state new values of one claim (:func:`same_claim`); the filler and
time words the rules leave out, and a text's content words (:func:`content_terms`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from ...language.lexicon import alternation
from ...language.segment import CJK as _CJK
from ...text import index_terms
from ...text.analyzer import cjk_segments
from .tokens import CACHE_SIZE, LIGHT_TERMS, MEASURES, RECORDS, Value, kind_class, values

# -- frames ------------------------------------------------------------------------------------
FILLER_EN = re.compile(alternation("filler", "en"), re.IGNORECASE)
FILLER_ZH = re.compile(alternation("filler", "zh"))
# When a statement became true is not part of its claim: "since Monday", "as of 2026-05-01",
# "starting next week", "自周一起", "从下周开始".
_WHEN = (r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|today|tomorrow|yesterday|tonight|"
         r"(?:last|this|next)\s+\w+|\d{4}-\d{1,2}-\d{1,2}|\w+\s+\d{1,2}(?:st|nd|rd|th)?")
TEMPORAL = re.compile(
    rf"\b(?:since|as of|starting|effective|from)\s+(?:{_WHEN})\b"
    r"|(?:自|从)(?:今天|明天|昨天|本周|下周|上周|周[一二三四五六日天]|星期[一二三四五六日天]|"
    r"\d{1,2}月\d{1,2}[日号]|\d{4}-\d{1,2}-\d{1,2})(?:起|开始)", re.IGNORECASE)
FILLER_LEAD = re.compile(r"^\s*(?:fyi|btw|by the way|oh|ok|okay|so|and|also|just|note)\b[\s,:]*",
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
    text = TEMPORAL.sub(" ", unicodedata.normalize("NFKC", text))
    while (lead := FILLER_LEAD.sub("", text)) != text:
        text = lead
    vals = values(text)
    masked_text = _masked(text)
    masked = FILLER_ZH.sub(" ", FILLER_EN.sub(" ", masked_text))
    frame = index_terms(masked)
    words = sum(1 for w in frame if not (w.startswith("zz") and w.endswith("zz")))
    subject = None
    if vals:
        t = unicodedata.normalize("NFKC", text)
        before = len(content_terms(t[: vals[0].start]))
        after = len(content_terms(_masked(t, vals[0].end)))
        # A date or a number is what is said of a subject, unless a counting word labels the
        # number ("turn 3", "fact number 2", "step 4", "第3步"): then it names the record.
        labelled = labels(t, vals[0])
        named = vals[0].kind not in MEASURES
        if before == 0 or labelled or (named and before <= subject_span * (before + after)):
            subject = vals[0].text
    return Claim(frozenset(frame), tuple(v.kind for v in vals), tuple(v.text for v in vals),
                 subject, words + (subject is not None), frozenset(index_terms(text)),
                 bool(_EVENT.search(" ".join(FILLER_EN.sub(" ", masked_text).split()))))


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


def labels(text: str, value: Value) -> bool:
    """Whether a counting word labels the number ``value`` (it names a thing, not a
    quantity)."""
    return value.kind == "number" and bool(
        _LABEL_BEFORE.search(text[: value.start]) or _LABEL_AFTER.match(text[value.end:]))


CJK_RUN = re.compile(rf"[{_CJK}]+")


def content_terms(text: str) -> list[str]:
    """The content words of a piece of text: no placeholders, no filler words; a CJK segment
    (between stop words) counts as a word per two characters (Chinese has no spaces: a
    segment may hold several words)."""
    t = FILLER_ZH.sub(" ", FILLER_EN.sub(" ", text))
    cjk = [seg[i:i + 2] for run in CJK_RUN.findall(t) for seg in cjk_segments(run)
           for i in range(0, len(seg), 2)]
    latin = index_terms(CJK_RUN.sub(" ", t))
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
    a, b = new.frame - LIGHT_TERMS, old.frame - LIGHT_TERMS
    if a == b or jaccard(a, b) >= overlap:
        return "close claim, new value (frame)"
    return None
