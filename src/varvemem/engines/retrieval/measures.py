"""What a search measures of one memory apart from its weighted score: its evidence of being
about the query at all (:func:`evidence`, the relevance floor's), its place in the time a
query names (:func:`time_match`), and BM25 over the archive, which has no full-text index
(:func:`archive_bm25`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from datetime import time as dtime

from ...model import TYPES, MemoryRecord
from ...text import date_terms, index_terms, term_set
from .. import timewords
from ..reports import HAPPENED
from ..rerank import script

# How much a query's terms found in a memory count towards its evidence, next to the cosine.
COVERAGE_WEIGHT = 0.4


def evidence(cosine: float | None, terms: set[str], memory: MemoryRecord,
             context_weight: float, time_match: float = 0.0, time_bonus: float = 0.0,
             time_weight: float = 0.0, subject: frozenset[str] | None = None,
             absent_factor: float = 1.0) -> float:
    """What says a memory is about the query at all (``retrieval.relevance_floor``): the
    query's cosine with it plus ``COVERAGE_WEIGHT`` x the share of the query's distinct terms
    (:func:`index_terms`, so stems and CJK bigrams) in its text, tags and keywords; a term
    found only in its context (neighbouring turns, its date in words) counts
    ``context_weight`` times, as in full-text search. BM25 and S_kw are relative (the best
    match scores 1 however weak it is); this share is not. When the query names a time,
    ``time_match`` (the memory's place in it) counts as ``time_weight`` found terms, and adds
    ``time_bonus`` x itself (``retrieval.time_words``). A memory that holds none of the
    query's ``subject`` words (:func:`claims.query_subject`) of its own script (Chinese when it
    has any, else Latin), and is not of the time the query names, keeps ``absent_factor`` of
    its cosine."""
    sim = max(0.0, cosine) if cosine is not None else 0.0
    if not terms:
        return sim + time_bonus * time_match
    own = term_set(" ".join([memory.content, *memory.tags, *memory.keywords]))
    around = term_set(" ".join([*memory.context_before, *memory.context_after,
                                date_terms(memory.created_at)])) - own
    if subject and absent_factor < 1 and not time_match:  # a time asked is a subject too
        # Only the words in the memory's script can be missing from it: a Chinese text (with
        # Latin ids in it) cannot hold an English question's words.
        cjk = any(script(t) == "cjk" for t in own)
        here = {t for t in subject if (script(t) == "cjk") == cjk}
        if here and not here & (own | around):
            sim *= absent_factor
    sim += time_bonus * time_match
    found = len(terms & own) + context_weight * len(terms & around) + time_weight * time_match
    return sim + COVERAGE_WEIGHT * found / (len(terms) + time_weight)


def time_match(window: timewords.TimeWindow, memory: MemoryRecord, margin_hours: float
               ) -> float:
    """Where ``memory`` stands in the time a query names (1 inside, 0 outside): a report of
    an event (:mod:`.reports`) by the days it happened, a turn, tool call or platform event
    by when it was said; a statement that reports no day by when it was said, or 1 when it
    names a weekday of the time asked (a schedule holds on its days: "what's on
    Wednesday?")."""
    if not TYPES[memory.memory_type].statement:
        return window.match(memory.created_at, margin_hours)
    days = memory.metadata.get(HAPPENED)
    try:
        first, last = (date.fromisoformat(str(d)) for d in (days or ()))
    except (TypeError, ValueError):  # no days (or not ours): of its weekdays, else when said
        if _weekdays(window) & timewords.weekdays(memory.content):
            return 1.0
        return window.match(memory.created_at, margin_hours)
    zone = window.start.tzinfo
    start = datetime.combine(first, dtime(), zone)
    end = datetime.combine(last + timedelta(days=1), dtime(), zone)
    if start < window.end and window.start < end:
        return 1.0
    return max(window.match(start, margin_hours), window.match(end - _INSTANT, margin_hours))


_INSTANT = timedelta(microseconds=1)


def _weekdays(window: timewords.TimeWindow) -> frozenset[int]:
    """The weekdays of a window of at most a week (a longer one names no weekday)."""
    days = (window.end - window.start).days
    if days > 7:
        return frozenset()
    return frozenset((window.start + timedelta(days=i)).weekday() for i in range(max(1, days)))


def archive_bm25(tokens: Sequence[str], records: Sequence[MemoryRecord], scale: float,
          k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """BM25 of ``records`` (their analysed text) for the archive, which has no full-text index;
    scaled so its best matches compare with the live index's (both are normalised later)."""
    docs = {r.memory_id: Counter(index_terms(r.content + " " + " ".join(r.tags)))
            for r in records}
    if not docs or not tokens:
        return {}
    avg = sum(sum(d.values()) for d in docs.values()) / len(docs) or 1.0
    idf = {t: math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
           for t in set(tokens) if (df := sum(1 for d in docs.values() if t in d))}
    out = {}
    for mid, tf in docs.items():
        size = sum(tf.values())
        score = 0.0
        for t, w in idf.items():
            if tf[t]:
                score += w * tf[t] * (k1 + 1) / (tf[t] + k1 * (1 - b + b * size / avg))
        if score > 0:
            out[mid] = score
    best = max(out.values(), default=0.0)
    return {k: v * scale / best for k, v in out.items()} if best else {}
