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

The rules are split by concern, and this package re-exports them: :mod:`.tokens`
(normalising, values and their kinds), :mod:`.talk` (speakers, addresses, questions),
:mod:`.frames` (claims), :mod:`.vocabulary` (the :class:`Lexicon`), :mod:`.attribute_slots`
(slots), :mod:`.changes` (transitions), :mod:`.negations`, :mod:`.preferences` and
:mod:`.supersession` (the :class:`Statement` and whether one supersedes another).
"""

from __future__ import annotations

from ...language.segment import sentences
from .attribute_slots import Slots, query_subject, same_slot, slots
from .changes import OPENER_RULE, Transition, transition
from .frames import Claim, changed_value, claim, is_record, jaccard, same_claim
from .negations import Negation, is_negated, negates, negation
from .preferences import Preference, preference, reversed_preference
from .supersession import Statement, state_after, statement, statement_supersedes, supersedes
from .talk import is_question, without_address, without_speaker
from .tokens import (
    CACHE_SIZE,
    RECORDS,
    VALUE_GATES,
    VALUE_KINDS,
    Value,
    holds,
    kind_class,
    kind_of,
    normalise,
    value_matches,
    value_pattern,
    value_set,
    values,
)
from .vocabulary import AttributeTable, Lexicon, lexicon, lexicon_for

__all__ = [
    "CACHE_SIZE",
    "OPENER_RULE",
    "RECORDS",
    "VALUE_GATES",
    "VALUE_KINDS",
    "AttributeTable",
    "Claim",
    "Lexicon",
    "Negation",
    "Preference",
    "Slots",
    "Statement",
    "Transition",
    "Value",
    "changed_value",
    "claim",
    "holds",
    "is_negated",
    "is_question",
    "is_record",
    "jaccard",
    "kind_class",
    "kind_of",
    "lexicon",
    "lexicon_for",
    "negates",
    "negation",
    "normalise",
    "preference",
    "query_subject",
    "reversed_preference",
    "same_claim",
    "same_slot",
    "sentences",
    "slots",
    "state_after",
    "statement",
    "statement_supersedes",
    "supersedes",
    "transition",
    "value_matches",
    "value_pattern",
    "value_set",
    "values",
    "without_address",
    "without_speaker",
]
