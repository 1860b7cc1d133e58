"""The ranking math: TTL decay, recency, the weighted sum and the multiplicative mode."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from varvemem.engines import scoring
from varvemem.model import ScoreBreakdown, TTLMode
from varvemem.settings import Profile, Weights

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
ages = st.floats(min_value=0.0, max_value=10_000.0, allow_nan=False)


def test_ttl_modes() -> None:
    assert scoring.ttl_weight(TTLMode.OFF, 1000, 30, 0.05) == 1.0
    assert scoring.ttl_weight(TTLMode.HARD, 29.9, 30, 0.05) == 1.0
    assert scoring.ttl_weight(TTLMode.HARD, 30.1, 30, 0.05) == 0.0
    assert scoring.ttl_weight(TTLMode.LINEAR, 15, 30, 0.05) == pytest.approx(0.5)
    assert scoring.ttl_weight(TTLMode.LINEAR, 45, 30, 0.05) == 0.0
    # rate 0.05 halves in about 14 days (seed 2)
    assert scoring.ttl_weight(TTLMode.EXPONENTIAL, 14, None, 0.05) == pytest.approx(0.5, abs=0.01)


@given(st.sampled_from(list(TTLMode)), ages, st.floats(min_value=0.1, max_value=1000),
       st.floats(min_value=0.001, max_value=1.0))
def test_ttl_weight_in_unit_interval_and_non_increasing(mode, age, days, rate) -> None:
    w = scoring.ttl_weight(mode, age, days, rate)
    assert 0.0 <= w <= 1.0
    assert scoring.ttl_weight(mode, age + 1.0, days, rate) <= w


@given(ages, st.floats(min_value=0.0, max_value=5.0))
def test_recency_is_exp_decay(age, lam) -> None:
    assert scoring.recency(age, lam) == pytest.approx(math.exp(-lam * age))


def test_semantic_score_maps_cosine() -> None:
    assert scoring.semantic_score(1.0) == 1.0
    assert scoring.semantic_score(-1.0) == 0.0
    assert scoring.semantic_score(0.0) == 0.5


def parts_strategy():
    return st.builds(ScoreBreakdown, semantic=unit, keyword=unit, tag=unit, recency=unit,
                     importance=unit, reliability=unit, ttl_weight=unit,
                     quality=st.one_of(st.none(), unit))


@st.composite
def weights(draw) -> Weights:
    raw = [draw(st.floats(min_value=0.0, max_value=1.0)) for _ in range(6)]
    total = sum(raw) or 1.0
    vals = [r / total for r in raw] if sum(raw) else [1.0, 0, 0, 0, 0, 0]
    vals[-1] = max(0.0, 1.0 - sum(vals[:-1]))
    keys = ["semantic", "keyword", "tag", "recency", "importance", "reliability"]
    return Weights(**dict(zip(keys, vals)))


@given(parts_strategy(), weights())
def test_weighted_score_in_unit_interval_and_is_the_weighted_sum(parts, w) -> None:
    total = scoring.combine(parts, Profile(mode="weighted", weights=w))
    assert 0.0 <= total <= 1.0
    expected = (w.semantic * parts.semantic + w.keyword * parts.keyword + w.tag * parts.tag
                + w.recency * parts.recency + w.importance * parts.importance
                + w.reliability * parts.reliability) * parts.ttl_weight
    assert total == pytest.approx(min(1.0, expected), abs=1e-9)


@given(parts_strategy())
def test_a_weight_of_one_selects_one_component(parts) -> None:
    prof = Profile(weights=Weights(semantic=0, keyword=0, tag=1, recency=0, importance=0,
                                   reliability=0))
    assert scoring.combine(parts, prof) == pytest.approx(parts.tag * parts.ttl_weight)


@given(parts_strategy(), st.sampled_from(["semantic_keyword", "ttl", "quality"]))
def test_multiplicative_mode_zero_factor_drops(parts, which) -> None:
    prof = Profile(mode="multiplicative")
    if which == "semantic_keyword":
        parts = parts.model_copy(update={"semantic": 0.5, "keyword": 0.0})  # cosine 0, no words
    elif which == "ttl":
        parts = parts.model_copy(update={"ttl_weight": 0.0})
    else:
        parts = parts.model_copy(update={"quality": 0.0})
    assert scoring.combine(parts, prof) == 0.0


@given(parts_strategy())
def test_multiplicative_mode_in_unit_interval(parts) -> None:
    assert 0.0 <= scoring.combine(parts, Profile(mode="multiplicative")) <= 1.0


def test_multiplicative_uses_importance_when_no_quality_score() -> None:
    parts = ScoreBreakdown(semantic=1.0, keyword=1.0, importance=0.4, ttl_weight=1.0)
    assert scoring.combine(parts, Profile(mode="multiplicative")) == pytest.approx(0.4)
