"""Every score a search returns is one documented formula of its breakdown
(:func:`varvemem.engines.scoring.combine`): the profile's weights, the TTL weight, the time
factor of a time asked, the learned relevance and the ceiling a newer conflicting hit puts on
an older one are all in ``SearchHit.scores`` (issue 40 item 6)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import Clock

from varvemem import Memory
from varvemem.embeddings.usem3 import USEEmbedder
from varvemem.engines import scoring
from varvemem.model import HIT_SCORE_KEYS, ScoreBreakdown
from varvemem.settings import Settings

# Told over ten days, in both languages: standing facts, a value that changes without a cue
# (so the write path keeps both and the read side orders them), events that report a day,
# and turns of talk.
_STORY: list[tuple[str, str]] = [
    ("knowledge", "The payments queue is rabbit-q-2"),
    ("knowledge", "报表服务的端口是 8081"),
    ("dialogue", "I think the gym opens at 7 on Saturdays, not sure though"),
    ("event", "Yesterday we rolled back the checkout API after the 502s"),
    ("knowledge", "Mei's phone number is 07700 900456"),
    ("knowledge", "The payments queue is rabbit-q-5"),
    ("knowledge", "报表服务的端口是 9091"),
    ("event", "昨天晚上数据库主从切换了一次，报表服务中断了十分钟"),
    ("knowledge", "The dentist moved to the clinic on Baker Street"),
    ("dialogue", "周六健身房早上八点开门"),
]

_WORDS = ["payments", "queue", "报表服务", "端口", "gym", "Saturday", "健身房", "checkout",
          "rollback", "Mei", "phone", "dentist", "数据库", "切换", "what", "is", "the", "哪个"]
_TIMES = ["", "yesterday", "last week", "昨天", "上周", "on Saturday"]


@pytest.fixture(scope="module")
def told(tmp_path_factory: pytest.TempPathFactory, embedder: USEEmbedder) -> Iterator[Memory]:
    clock = Clock(datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc))
    # The claim rules alone on the write path: the changed values stay for the read side.
    mem = Memory(settings=Settings.load(home=tmp_path_factory.mktemp("formula"),
                                        update={"supersede_rules": ["cue"], "judge": "rules"}),
                 embedder=embedder, clock=clock)
    for kind, text in _STORY:
        mem.add(text, type=kind, session="s1" if kind == "dialogue" else None)
        clock.advance(days=1)
    yield mem
    mem.close()


def _assert_formula(mem: Memory, query: str, profile: str, **kw: object) -> int:
    prof = mem.settings.retrieval.profile(profile)
    hits = mem.search(query, profile=profile, record=False, **kw)  # type: ignore[arg-type]
    for h in hits:
        assert h.score == scoring.combine(h.scores, prof), (query, h.memory.content)
        # The JSON a client reads rounds to six places and still adds up.
        parts = ScoreBreakdown(**h.to_json()["scores"])
        assert scoring.combine(parts, prof) == pytest.approx(h.score, abs=1e-5)
    return len(hits)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4),
       when=st.sampled_from(_TIMES),
       profile=st.sampled_from(["default", "learned", "faq"]),
       top_k=st.integers(1, 12),
       min_relevance=st.sampled_from([None, 0.0, 0.3]))
def test_every_score_is_the_formula_of_its_breakdown(told: Memory, words: list[str], when: str,
                                                     profile: str, top_k: int,
                                                     min_relevance: float | None) -> None:
    _assert_formula(told, " ".join([*words, when]).strip(), profile, top_k=top_k,
                    min_relevance=min_relevance)


def test_the_named_factors_are_in_the_breakdown(told: Memory) -> None:
    # A changed value read beside the old one: the older is capped at the newer's score.
    hits = told.search("payments queue", top_k=10, min_relevance=0)
    older = next(h for h in hits if "rabbit-q-2" in h.memory.content)
    newer = next(h for h in hits if "rabbit-q-5" in h.memory.content)
    assert older.scores.ceiling == newer.score and older.score <= newer.score
    assert newer.scores.ceiling is None
    # A time asked multiplies by its factor, named beside its match.
    timed = told.search("what happened to checkout yesterday", top_k=10, min_relevance=0)
    weight = told.settings.retrieval.time_words.weight
    for h in timed:
        assert h.scores.time_match is not None
        assert h.scores.time_factor == 1.0 - weight * (1.0 - h.scores.time_match)
    assert _assert_formula(told, "what happened to checkout yesterday", "default") >= 1
    assert all(h.scores.time_factor is None for h in told.search("payments queue"))


def test_the_formula_in_words_names_every_factor() -> None:
    s = Settings()
    for name in ("default", "learned", "faq"):
        text = scoring.formula(s.retrieval.profile(name))
        assert "TTL weight" in text and "ceiling" in text
    assert "relevance" in scoring.formula(s.retrieval.profile("learned"))
    assert "time factor" in scoring.formula(s.retrieval.profile("default"))


def test_a_breakdown_without_factors_is_the_plain_weighted_sum() -> None:
    prof = Settings().retrieval.profile("default")
    parts = ScoreBreakdown(semantic=0.8, keyword=0.5, recency=0.9, importance=0.5,
                           reliability=0.7, ttl_weight=0.9)
    w = prof.weights
    plain = (w.semantic * 0.8 + w.keyword * 0.5 + w.recency * 0.9 + w.importance * 0.5
             + w.reliability * 0.7) * 0.9
    assert scoring.combine(parts, prof) == pytest.approx(plain)
    assert scoring.combine(parts.model_copy(update={"time_factor": 0.5}), prof) == \
        pytest.approx(plain * 0.5)
    assert scoring.combine(parts.model_copy(update={"ceiling": 0.1}), prof) == 0.1
    assert scoring.time_factor(None, 0.5) is None
    assert scoring.time_factor(1.0, 0.5) == 1.0
    assert scoring.time_factor(0.0, 0.5) == 0.5


def test_a_hit_json_and_the_rest_model_carry_every_component(told: Memory) -> None:
    from varvemem.server.schemas import HitScores

    hits = told.search("payments queue", top_k=10, min_relevance=0)
    older = next(h for h in hits if "rabbit-q-2" in h.memory.content)
    got = older.to_json()["scores"]
    assert {"ceiling", "relevance", "semantic", "ttl_weight"} <= set(got)
    assert HitScores(**got).model_dump(exclude_none=True) == got
    numbers = {k for k, v in older.scores.model_dump().items()
               if isinstance(v, float) and k != "bias"}
    assert numbers <= set(got) == {k for k in HIT_SCORE_KEYS if k in got}
