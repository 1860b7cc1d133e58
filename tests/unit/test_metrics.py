"""The ranking metrics the benchmarks report."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from varvemem.benchmarks import metrics

ids = st.lists(st.sampled_from([f"D1:{i}" for i in range(12)]), unique=True, max_size=12)


def test_known_values() -> None:
    ranked = ["a", "b", "c", "d"]
    assert metrics.recall_at_k(ranked, ["b", "z"], 2) == 0.5
    assert metrics.recall_at_k(ranked, ["b", "z"], 1) == 0.0
    assert metrics.reciprocal_rank(ranked, ["c"]) == 1 / 3
    assert metrics.reciprocal_rank(ranked, ["z"]) == 0.0
    assert metrics.recall_all_at_k(ranked, ["a", "c"], 3) == 1.0
    assert metrics.recall_all_at_k(ranked, ["a", "d"], 3) == 0.0
    # one relevant at rank 2: DCG 1/log2(3), ideal 1
    assert math.isclose(metrics.ndcg_at_k(ranked, ["b"], 10), 1 / math.log2(3))
    # LongMemEval's DCG does not discount ranks 1 and 2
    assert metrics.ndcg_at_k(ranked, ["b"], 10, first_undiscounted=True) == 1.0


@given(ids, ids, st.integers(1, 15))
def test_figures_are_fractions_and_recall_grows_with_k(ranked: list[str], relevant: list[str],
                                                       k: int) -> None:
    for f in (metrics.recall_at_k, metrics.recall_all_at_k, metrics.ndcg_at_k):
        assert 0.0 <= f(ranked, relevant, k) <= 1.0 + 1e-9
    assert metrics.recall_at_k(ranked, relevant, k) <= metrics.recall_at_k(ranked, relevant,
                                                                           k + 1)
    assert 0.0 <= metrics.reciprocal_rank(ranked, relevant) <= 1.0


@given(ids, st.integers(1, 15))
def test_relevant_first_is_ideal(relevant: list[str], k: int) -> None:
    if relevant:
        assert math.isclose(metrics.ndcg_at_k([*relevant, "x"], relevant, k), 1.0)
        assert metrics.recall_at_k(relevant, relevant, len(relevant)) == 1.0
