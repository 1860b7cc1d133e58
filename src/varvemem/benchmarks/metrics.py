"""Ranking metrics over one ranked list of ids and a set of relevant ids (binary relevance)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """The fraction of ``relevant`` found in the top ``k`` (LoCoMo's turn-level recall)."""
    if not relevant:
        return 0.0
    top = set(ranked[:k])
    return sum(1 for r in relevant if r in top) / len(relevant)


def recall_all_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1 when every relevant id is in the top ``k``, else 0 (LongMemEval's recall_all@k)."""
    top = set(ranked[:k])
    return float(bool(relevant) and all(r in top for r in relevant))


def ndcg_at_k(ranked: Sequence[str], relevant: Collection[str], k: int,
              *, first_undiscounted: bool = False) -> float:
    """NDCG@k with gain 1 for a relevant id and every relevant id ranked first as the ideal.

    ``first_undiscounted`` uses LongMemEval's DCG (``rel_1 + sum_{i>=2} rel_i / log2(i)``), so
    that its ``ndcg_any`` figures compare with the official script's.
    """
    rel = set(relevant)
    if not rel:
        return 0.0

    def discount(i: int) -> float:  # i is the 0-based rank
        if first_undiscounted:
            return 1.0 if i == 0 else 1.0 / math.log2(i + 1)
        return 1.0 / math.log2(i + 2)

    dcg = sum(discount(i) for i, r in enumerate(ranked[:k]) if r in rel)
    ideal = sum(discount(i) for i in range(min(len(rel), k)))
    return dcg / ideal


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """1 / the rank of the first relevant id (0 when none is ranked)."""
    rel = set(relevant)
    for i, r in enumerate(ranked):
        if r in rel:
            return 1.0 / (i + 1)
    return 0.0


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
