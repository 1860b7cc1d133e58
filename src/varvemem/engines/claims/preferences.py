"""Preferences: "S prefers A over B" (:func:`preference`) and a preference reversed by a later
one (:func:`reversed_preference`, :func:`reversal`)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ...text import index_terms
from .changes import STOP
from .frames import FILLER_EN, FILLER_ZH
from .tokens import CACHE_SIZE, normalise

# -- preferences: "A over B" ---------------------------------------------------------------------
_PREFER_EN = re.compile(
    r"^(?P<subj>.*?)\b(?:prefers?|preferred|favou?rs?|favou?red|would rather (?:use|have|take))"
    r"\s+(?P<a>.+?)\s+(?:over|to|rather than|instead of|more than)\s+(?P<b>.+?)" + STOP,
    re.IGNORECASE)
_LIKE_EN = re.compile(r"^(?P<subj>.*?)\blik(?:es?|ed)\s+(?P<a>.+?)\s+(?:better|more)\s+than\s+"
                      r"(?P<b>.+?)" + STOP, re.IGNORECASE)
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
    subj = FILLER_ZH.sub(" ", FILLER_EN.sub(" ", m["subj"]))
    return Preference(frozenset(index_terms(subj)), normalise(m["a"]), normalise(m["b"]))


def _same_choice(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (a in b or b in a)  # "喝茶" and "茶"


def reversed_preference(new_text: str, old_text: str) -> str | None:
    """Why ``new_text`` changes the preference ``old_text`` stated, or None: the same subject
    (or none named in either) now prefers the other of the two choices ("tabs over spaces",
    then "spaces over tabs"), or another choice over the same alternative."""
    return reversal(preference(new_text), preference(old_text))


def reversal(new: Preference | None, old: Preference | None) -> str | None:
    if new is None or old is None:
        return None
    if new.subject != old.subject and not (new.subject & old.subject):
        return None
    if _same_choice(new.liked, old.over) and _same_choice(new.over, old.liked):
        return "preference reversed"
    if _same_choice(new.over, old.over) and not _same_choice(new.liked, old.liked):
        return "another choice preferred over the same alternative"
    return None
