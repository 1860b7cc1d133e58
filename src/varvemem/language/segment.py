"""One segmenter for every engine: sentences, clauses, questions, hedges and scripts.

A sentence ends at 。！？, at ! or ? before a space, at a line break, and at a full stop
before a space unless it closes an abbreviation ("e.g.", :mod:`.lexicon`) or a list number
("Steps: 1. drain the node"); "v1.2" and "pg-1.internal" have no space after their dots.
A clause ends at , ; : (either width) and at a spaced dash.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .lexicon import alternation, words

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_HAS_CJK = re.compile(f"[{CJK}]")
_HAS_LATIN = re.compile(r"[A-Za-z]")
# "!" and "?" end a sentence before a space or, once NFKC made "！" ASCII, a CJK character.
_BOUNDARY = re.compile(rf"(?<=[。！？])\s*|(?<=[!?])(?:\s+|(?=[{CJK}]))|(?<=\.)\s+|\n+")
_ABBREVIATIONS = frozenset(words("abbreviation", "en"))
_BEFORE_LOWER = frozenset(words("abbreviation_before_lower", "en"))
_LOWER_NEXT = re.compile(r"\s*[a-z0-9]")
# A list number: a number of one or two digits opening the text, a line or a list.
_LIST_NUMBER = re.compile(r"(?:^|[\n:：;；]|[.!?]\s)\s*\d{1,2}$")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_SEMICOLON = re.compile(r"(?<=[;；])\s*")
_CLAUSE = re.compile(r"\s*(?:[,;:，；：、]|\s[-–—]\s)\s*")
_SUBJECT = (r"(?:we|you|they|i|he|she|it|anyone|anybody|someone|somebody|everyone|the|this|"
            r"that|these|those|our|your|my|his|her|their)\b")
# A heading colon ("Why: the token had expired") makes a label, not a question.
_QUESTION_EN = re.compile(
    rf"^\W*(?:{alternation('question_opener', 'en')}|{alternation('question_aux', 'en')}"
    rf"\s+{_SUBJECT}(?!\s+trick\b))(?![^:]*:(?:\s|$))", re.IGNORECASE)
_QUESTION_ZH = re.compile(
    rf"[？?]\s*$|{alternation('question_particle', 'zh')}\s*[。.！!]?\s*$|"
    rf"{alternation('question_word', 'zh')}|(?<!知道)(?<!明白)(?<!学会)怎么(?!样都)")
_HEDGE = re.compile(alternation("hedge"), re.IGNORECASE)
_NOT_HEDGE = re.compile(alternation("not_hedge"), re.IGNORECASE)


def _ends_sentence(text: str, at: int, after: int) -> bool:
    """Does the full stop or mark just before ``at`` end a sentence (the next one starting at
    ``after``)?"""
    if text[at - 1] != ".":
        return True
    head = text[: at - 1]
    if _LIST_NUMBER.search(head):
        return False
    word = _WORD_BEFORE.search(head)
    if word is None:
        return True
    w = word[1].lower()
    return w not in _ABBREVIATIONS and not (
        w in _BEFORE_LOWER and _LOWER_NEXT.match(text, after) is not None)


@lru_cache(maxsize=16_384)
def sentences(text: str, *, semicolons: bool = False) -> tuple[str, ...]:
    """The sentences of ``text``, stripped, empty ones left out; ``semicolons``: a ";" ends
    one too (a note's "restarted the pod; errors gone" is two statements)."""
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        if m.start() == 0 or m.start() == start or not (
                "\n" in m.group() or _ends_sentence(text, m.start(), m.end())):
            continue
        out.append(text[start: m.start()])
        start = m.end()
    out.append(text[start:])
    if semicolons:
        out = [p for s in out for p in _SEMICOLON.split(s)]
    return tuple(s for s in (p.strip() for p in out) if s)


def clauses(sentence: str) -> tuple[str, ...]:
    """The clauses of one sentence, stripped, empty ones left out."""
    return tuple(c for c in (p.strip() for p in _CLAUSE.split(sentence)) if c)


@lru_cache(maxsize=16_384)
def is_question(sentence: str) -> bool:
    """Does the sentence ask (English or Chinese)?"""
    s = sentence.strip()
    return bool(_QUESTION_EN.search(s) or _QUESTION_ZH.search(s))


@lru_cache(maxsize=16_384)
def is_hedged(sentence: str) -> bool:
    """Does the sentence say a plan, a guess or a wish ("we might move to ...", "打算换成 ...")
    rather than what holds?"""
    return _HEDGE.search(_NOT_HEDGE.sub(" ", sentence)) is not None


def scripts(text: str) -> frozenset[str]:
    """The scripts ``text`` is written in: ``cjk``, ``latin`` or both."""
    found = set()
    if _HAS_CJK.search(text):
        found.add("cjk")
    if _HAS_LATIN.search(text):
        found.add("latin")
    return frozenset(found)


def has_cjk(text: str) -> bool:
    return _HAS_CJK.search(text) is not None
