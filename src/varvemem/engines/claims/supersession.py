"""What the rules read of a statement (:class:`Statement`, :func:`statement`: the state a
change leaves, :func:`state_after`) and whether a new one supersedes an older one
(:func:`supersedes`, :func:`statement_supersedes`)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from .attribute_slots import Slots, same_slot, slots
from .changes import transition
from .frames import Claim, claim, same_claim
from .negations import is_negated
from .preferences import Preference, preference, reversal
from .talk import is_question
from .tokens import CACHE_SIZE, values
from .vocabulary import Lexicon


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
    why = reversal(new.preference, old.preference)
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
