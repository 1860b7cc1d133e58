"""Transitions: the change a text announces (:func:`transition`: "from A to B", "A -> B",
"replaced A with B", "moved (X) to B", "从A迁到B", "换成B" ...), as a :class:`Transition`."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ...language.lexicon import alternation
from ...language.segment import CJK as _CJK
from ...language.segment import is_hedged, sentences
from ...language.stopwords import ENGLISH
from ...text import index_terms
from .frames import FILLER_EN, FILLER_ZH
from .talk import is_question
from .tokens import CACHE_SIZE, NOT_NAMES, RECORDS, kind_class, kind_of, normalise, values

# -- transitions ---------------------------------------------------------------------------------
STOP = r"(?=$|[,.;:!?](?:\s|$)|[，。；：！？]|\s+(?:for|on|in|at|yesterday|today|last|this|because|since|" \
       r"and|but|so|after|before|during|now)\b)"
# The verbs of a change, inflected ("moved", not "movie"; "promoted", not "promotions"). "went"
# and "gone" only with "from A to B": "went to a car show" is a trip.
_CHANGE_EN = alternation("change", "en")
_REPLACE_EN = alternation("replace", "en")
_INSTEAD = alternation("instead", "en")
_EN_FROM_TO = re.compile(rf"\b(?:{_CHANGE_EN}|went|gone)\b(?P<subj>.*?)\bfrom\s+(?P<a>.+?)\s+(?:to|into)\s+"
                         rf"(?P<b>.+?){STOP}", re.IGNORECASE)
_EN_REPLACED = re.compile(rf"\b(?:{_REPLACE_EN})\s+(?P<a>.+?)\s+(?:with|by|for)\s+"
                          rf"(?P<b>.+?){STOP}",
                          re.IGNORECASE)
_EN_REPLACED_BY = re.compile(rf"(?P<a>\S+)\s+(?:was|is|has been|got)\s+replaced\s+by\s+"
                             rf"(?P<b>.+?){STOP}", re.IGNORECASE)
_EN_TO = re.compile(rf"\b{_CHANGE_EN}\b(?P<subj>.*?)\b(?:to|into|over to)\s+(?P<b>.+?){STOP}",
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
    words = tuple(dict.fromkeys(index_terms(FILLER_ZH.sub(" ", FILLER_EN.sub(" ", phrase)))))
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
        word[:1].isupper() and word != "I" and word.lower() not in NOT_NAMES)


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
    if m and all(m[g] != "I" and m[g].lower() not in NOT_NAMES | ENGLISH for g in "ab") \
            and kind_of(_value_of(m["a"])) == kind_of(_value_of(m["b"])) == "name":
        return _change(_value_of(m["a"]), _value_of(m["b"]), OPENER_RULE, m["subj"])
    m = _EN_TO.search(t)
    if m:
        return _change(None, _value_of(m["b"]), "moved to B", t[: m.start()], m["subj"])
    m = _ZH_TO.search(t) if zh_verb else None
    if m and m["subj"].strip():
        return _change(None, _value_at(t, m, "b"), "改为B", m["subj"])
    return None
