"""The attribute words (:mod:`varvemem.language.attributes`) compiled for the slots rules:
:class:`Lexicon`, and :func:`lexicon` / :func:`lexicon_for` that build one per table."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Protocol

from ...language.attributes import ATTRIBUTE_WORDS, LIGHT, QUALIFIERS, VALUE_SHAPES
from ...text import index_terms
from .tokens import HAS_CJK


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
        self.qualifiers = frozenset(t for w in qualifiers if not HAS_CJK.search(w)
                                    for t in index_terms(w))
        self.zh_qualifiers = tuple(w for w in qualifiers if HAS_CJK.search(w))
        self.strong: dict[str, str] = {}
        self.weak: dict[str, str] = {}
        zh: dict[str, tuple[str, bool] | None] = {}
        phrases: dict[str, tuple[str, bool]] = {}
        for attr, (strong, weak) in table.items():
            for words, into, is_strong in ((strong, self.strong, True), (weak, self.weak, False)):
                for w in words:
                    if HAS_CJK.search(w):
                        zh.setdefault(w, (attr, is_strong))
                    elif re.search(r"[\s-]", w.strip()):  # "on call", "message queue"
                        phrases.setdefault(" ".join(re.split(r"[\s-]+", w.strip().lower())),
                                           (attr, is_strong))
                    else:
                        for stem in index_terms(w):
                            into.setdefault(stem, attr)
        self.light = frozenset(t for w in light if not HAS_CJK.search(w)
                               for t in index_terms(w))
        for w in light:
            if HAS_CJK.search(w):
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
