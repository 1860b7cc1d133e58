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


def combine(parts: ScoreBreakdown, profile: Profile) -> float:
    """A hit's score from its breakdown and ``profile``, in 0..1: the one formula every
    score of a search reproduces (``retrieval.default_profile`` and the profile's weights
    are settings; everything else is in ``parts``)::

        score = min(relevance x ttl_weight, ceiling)     learned profile, a judged hit
        score = min(base x time_factor, ceiling)         others, where base is
        base  = clamp(relevance_part x ttl_weight x quality)     multiplicative
              = clamp(sum of weight x component) x ttl_weight    weighted (and learned,
                                                                 a hit no judge read)

    The keyword component is S_kw, or the one imputed to a hit in another script than its
    query where higher (``parts.cross_keyword``, :mod:`.rerank`); ``relevance_part`` is
    ``relevance_semantic x max(0, 2 x semantic - 1) + (1 - relevance_semantic) x keyword``
    and ``quality`` is the importance when unset. ``time_factor`` (1 when unset) is
    :func:`time_factor`; a judged hit's learned score leaves it out (the time asked is one
    of the judge's features). ``ceiling`` (none when unset) is the score of a newer hit of the
    same claim that read-time conflict resolution put this one after."""
    if profile.mode == "learned" and parts.relevance is not None:
        base = parts.relevance * parts.ttl_weight
    else:
        base = _combine(parts, profile) * (1.0 if parts.time_factor is None
                                           else parts.time_factor)
    return base if parts.ceiling is None else min(base, parts.ceiling)


def formula(profile: Profile) -> str:
    """:func:`combine` under ``profile``, in words (the inspector shows it)."""
    tail = " x time factor, at most the ceiling (keyword: the larger of keyword and cross_keyword)"
    if profile.mode == "multiplicative":
        rs = profile.relevance_semantic
        return (f"multiplicative: (max(0, 2 x semantic - 1) x {rs:.2f} + keyword x {1 - rs:.2f})"
                f" x TTL weight x quality (importance without one){tail}")
    weighted = f"weighted sum of the components x TTL weight{tail}"
    if profile.mode == "learned":
        return ("learned: relevance x TTL weight, at most the ceiling (a hit no judge reads: "
                f"{weighted})")
    return weighted


def time_factor(time_match: float | None, weight: float) -> float | None:
    """What a time the query names multiplies a score by: ``1 - weight x (1 -
    time_match)`` (``retrieval.time_words.weight``); None when it names none."""
    return None if time_match is None else 1.0 - weight * (1.0 - time_match)


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
