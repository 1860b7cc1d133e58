"""The ranking math, pure functions: TTL decay (SPEC TTL-1), recency, the weighted sum (RET-2)
and seed 2's multiplicative ranking (L2-3)."""

from __future__ import annotations

import math
from datetime import datetime

from ..model import ScoreBreakdown, TTLMode
from ..settings import Profile

SECONDS_PER_DAY = 86_400.0


def age_days(created: datetime, now: datetime) -> float:
    """Age in days, never negative (a memory dated in the future counts as new)."""
    return max(0.0, (now - created).total_seconds() / SECONDS_PER_DAY)


def ttl_weight(mode: TTLMode, age: float, days: float | None, rate: float) -> float:
    """The TTL factor in 0..1.

    ``off``: 1. ``hard``: 1 until ``days`` then 0. ``linear``: max(0, 1 - age/days).
    ``exponential``: exp(-rate * age) (rate 0.05 halves in about 14 days).
    ``hard`` and ``linear`` without (positive) ``days`` never decay.
    """
    if mode is TTLMode.OFF:
        return 1.0
    if mode is TTLMode.EXPONENTIAL:
        return math.exp(-rate * age)
    if days is None or days <= 0:
        return 1.0
    if mode is TTLMode.HARD:
        return 1.0 if age <= days else 0.0
    return max(0.0, 1.0 - age / days)


def recency(age: float, lam: float) -> float:
    """S_rec = exp(-lambda * age_days)."""
    return math.exp(-lam * age)


def semantic_score(cosine: float) -> float:
    """S_sem = (cos + 1) / 2, clamped to 0..1."""
    return min(1.0, max(0.0, (cosine + 1.0) / 2.0))


def combine(parts: ScoreBreakdown, profile: Profile, time_weight: float = 0.0) -> float:
    """The final score of one hit under ``profile``, in 0..1. The keyword component is
    S_kw, or the one imputed to a hit in another script than its query where higher
    (``parts.cross_keyword``, :mod:`.rerank`). When the query names a time
    (``parts.time_match`` set), the score is multiplied by ``1 - time_weight x (1 -
    time_match)`` (``retrieval.time_words.weight``)."""
    factor = 1.0 if parts.time_match is None else 1.0 - time_weight * (1.0 - parts.time_match)
    return _combine(parts, profile) * factor


def _combine(parts: ScoreBreakdown, profile: Profile) -> float:
    keyword = max(parts.keyword, parts.cross_keyword or 0.0)
    if profile.mode == "multiplicative":
        # Relevance uses the cosine clipped at 0, not (cos+1)/2, so that an unrelated pair
        # really scores 0 here, as seed 2's matcher does.
        cosine = max(0.0, 2.0 * parts.semantic - 1.0)
        rel = profile.relevance_semantic * cosine + (1.0 - profile.relevance_semantic) * keyword
        quality = parts.quality if parts.quality is not None else parts.importance
        return _clamp(rel * parts.ttl_weight * quality)
    w = profile.weights
    total = (w.semantic * parts.semantic + w.keyword * keyword + w.tag * parts.tag
             + w.recency * parts.recency + w.importance * parts.importance
             + w.reliability * parts.reliability)
    return _clamp(total * parts.ttl_weight)


def _clamp(x: float) -> float:
    return min(1.0, max(0.0, x))
