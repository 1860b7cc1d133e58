"""Talk around a statement: a speaker's label, the names it addresses someone by, and whether
it asks (:func:`is_question`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...language.segment import is_question as segment_question
from ...language.segment import sentences


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


# -- questions -----------------------------------------------------------------------------
def is_question(text: str) -> bool:
    """A question (never a statement of fact that supersedes anything): its last sentence
    asks."""
    said = sentences(text)
    return bool(said) and segment_question(said[-1])
