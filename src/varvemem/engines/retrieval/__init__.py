"""The retrieval engine (SPEC RET-1..4, TTL-1, L2-3): hybrid candidates, filters, a re-rank by a
named profile, and a context packed within a token budget.

The search itself is :mod:`.engine`'s; what it returns of its ranking (relevance, the floor,
conflicts) is :mod:`.selection`'s; the evidence, time match and archive BM25 of one memory
are :mod:`.measures`'. This package re-exports them."""

from __future__ import annotations

from .engine import RetrievalEngine
from .measures import COVERAGE_WEIGHT, evidence, time_match
from .selection import RELEVANCE_WINDOW, HitSelection, Ranking

__all__ = ["COVERAGE_WEIGHT", "RELEVANCE_WINDOW", "HitSelection", "Ranking", "RetrievalEngine",
           "evidence", "time_match"]
