"""Memory.why_not: why a memory is not among a search's hits, from the search's own decisions."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from varvemem import Memory, NotFoundError, ValidationError, Verdict
from varvemem.model import ScoreBreakdown


@pytest.fixture
def corpus(mem: Memory, clock) -> dict[str, str]:
    """A small store in English and Chinese; names -> ids."""
    ids: dict[str, str] = {}

    def add(name: str, content: str, **kw) -> None:
        ids[name] = mem.add(content, **kw).memory_id

    add("stg_old", "the staging cluster is eks-stg-1", type="knowledge")
    clock.advance(minutes=5)
    add("stg_new", "we moved staging from eks-stg-1 to eks-stg-2", type="knowledge")
    add("zh_old", "订单服务的数据库是 mysql-a", type="knowledge")
    clock.advance(minutes=5)
    add("zh_new", "订单服务的数据库从 mysql-a 迁到了 mysql-b", type="knowledge")
    add("gradle", "Payment CI took 38 minutes because the Gradle cache key changed", type="event",
        tags=["ci"], user="alice")
    add("cache_zh", "支付流水线的缓存键包含流水线序号，所以每次构建都没有命中缓存", type="event",
        user="bob")
    add("pull", "The order service pulls images with the regcred secret", type="knowledge",
        tags=["k8s"])
    add("banner", "the freeze banner shows until Friday", type="knowledge", ttl_mode="hard",
        ttl_days=1)
    add("turn", "I prefer dark mode in the dashboard", type="dialogue", session="s1")
    return ids


def test_a_returned_memory_gets_its_rank_and_score(mem: Memory, corpus: dict[str, str]) -> None:
    hits = mem.search("which cluster is staging?", top_k=5)
    why = mem.why_not(corpus["stg_new"], "which cluster is staging?", top_k=5)
    rank = [h.memory.memory_id for h in hits].index(corpus["stg_new"]) + 1
    assert why.verdict is Verdict.RETURNED and why.verdict == "returned"
    assert why.rank == rank and why.score == hits[rank - 1].score
    assert why.scores == hits[rank - 1].scores and why.last_returned is not None
    assert "vector" in why.channels and why.weights["semantic"] > 0


@pytest.mark.parametrize("old,new,query", [
    ("stg_old", "stg_new", "which cluster is staging?"),
    ("zh_old", "zh_new", "订单服务用的是哪个数据库"),
])
def test_a_superseded_memory_names_its_successor(mem: Memory, corpus: dict[str, str], old: str,
                                                 new: str, query: str) -> None:
    why = mem.why_not(corpus[old], query)
    assert why.verdict is Verdict.SUPERSEDED
    assert why.superseded_by == corpus[new] and why.chain == [corpus[new]]
    assert corpus[new] in why.reason
    # Asked for, it is there.
    assert mem.why_not(corpus[old], query, include_superseded=True).verdict in (
        Verdict.RETURNED, Verdict.RANKED_OUT)


def test_a_chain_of_supersessions_ends_at_the_current_memory(mem: Memory,
                                                             corpus: dict[str, str]) -> None:
    third = mem.add("we moved staging from eks-stg-2 to eks-stg-3", type="knowledge")
    assert corpus["stg_new"] in third.superseded
    why = mem.why_not(corpus["stg_old"], "staging cluster")
    assert why.chain == [corpus["stg_new"], third.memory_id]
    assert why.superseded_by == third.memory_id


@pytest.mark.parametrize("args,rule,words", [
    ({"tier": "short_term"}, "tier", "its tier is long_term, the search asks for tier short_term"),
    ({"type": "event"}, "type", "its type is knowledge"),
    ({"tags": ["ci"]}, "tags", "the search asks for one of ci"),
    ({"user": "alice"}, "user", "it has no user, the search asks for user alice"),
])
def test_a_filtered_memory_names_the_rule(mem: Memory, corpus: dict[str, str], args: dict,
                                          rule: str, words: str) -> None:
    rec = mem.get(corpus["pull"])
    if rule == "tier":
        assert rec.tier.value == "long_term"
    why = mem.why_not(corpus["pull"], "order service image pull secret", **args)
    assert why.verdict is Verdict.FILTERED and why.rule == rule
    assert words in why.reason and why.reason.startswith("filtered out: ")


def test_time_filters_and_as_of(mem: Memory, corpus: dict[str, str], clock) -> None:
    made = mem.get(corpus["gradle"]).created_at
    why = mem.why_not(corpus["gradle"], "Gradle cache", since=made + timedelta(hours=1))
    assert (why.verdict, why.rule) == (Verdict.FILTERED, "since")
    why = mem.why_not(corpus["gradle"], "Gradle cache", until=made)
    assert (why.verdict, why.rule) == (Verdict.FILTERED, "until")
    why = mem.why_not(corpus["gradle"], "Gradle cache", as_of=made - timedelta(hours=1))
    assert (why.verdict, why.rule) == (Verdict.FILTERED, "valid_from")
    # At a time before its successor, the old staging cluster was current.
    old = mem.get(corpus["stg_old"])
    assert mem.why_not(corpus["stg_old"], "staging cluster",
                       as_of=old.created_at + timedelta(minutes=1)).verdict is Verdict.RETURNED
    # Another user's memory, in Chinese.
    why = mem.why_not(corpus["cache_zh"], "支付流水线的缓存", user="alice")
    assert (why.verdict, why.rule) == (Verdict.FILTERED, "user")


def test_an_expired_memory(mem: Memory, corpus: dict[str, str], clock) -> None:
    assert mem.why_not(corpus["banner"], "freeze banner").verdict is Verdict.RETURNED
    clock.advance(days=2)
    why = mem.why_not(corpus["banner"], "freeze banner")
    assert why.verdict is Verdict.EXPIRED and "expired at" in why.reason


def test_an_archived_memory(mem: Memory, corpus: dict[str, str], clock) -> None:
    mem.close_session("s1")
    clock.advance(days=30)
    mem.consolidate(["forget"])
    assert mem.get(corpus["turn"]).tier.value == "archive"
    why = mem.why_not(corpus["turn"], "dark mode dashboard")
    assert (why.verdict, why.rule) == (Verdict.ARCHIVED, "include_archive")
    assert mem.why_not(corpus["turn"], "dark mode dashboard",
                       include_archive=True).verdict is Verdict.RETURNED


def test_a_nonsense_query_is_below_the_floor(mem: Memory, corpus: dict[str, str]) -> None:
    query = "zebra quokka marmalade harpsichord"
    assert mem.search(query) == []
    why = mem.why_not(corpus["pull"], query)
    assert why.verdict is Verdict.BELOW_FLOOR and why.rule == "relevance_floor"
    assert why.floor.applied and why.floor.evidence is not None
    assert why.floor.evidence < why.floor.floor and why.last_returned is None


def test_ranked_below_top_k(mem: Memory, corpus: dict[str, str]) -> None:
    query = "payment pipeline cache"
    hits = mem.search(query, top_k=1)
    assert hits
    other = next(i for i in (corpus["gradle"], corpus["cache_zh"])
                 if i != hits[0].memory.memory_id)
    why = mem.why_not(other, query, top_k=1)
    assert why.verdict is Verdict.RANKED_OUT and why.rank is not None and why.rank >= 2
    assert why.last_returned is not None and why.last_returned.score >= (why.score or 0.0)
    assert isinstance(why.scores, ScoreBreakdown)
    assert why.last_returned.memory.memory_id == hits[0].memory.memory_id


def test_another_tenants_memory_is_not_found(mem: Memory, corpus: dict[str, str]) -> None:
    with pytest.raises(NotFoundError):
        mem.why_not(corpus["pull"], "order service", tenant="other")
    with pytest.raises(NotFoundError):
        mem.why_not("mem_" + "0" * 32, "order service")
    with pytest.raises(ValidationError, match="query"):
        mem.why_not(corpus["pull"], "  ")
    with pytest.raises(ValidationError, match="tier"):
        mem.why_not(corpus["pull"], "order", tier="nowhere")


def test_why_not_records_no_retrieval(mem: Memory, corpus: dict[str, str]) -> None:
    before = mem.get(corpus["pull"]).retrieval_count
    mem.why_not(corpus["pull"], "order service image pull secret")
    assert mem.get(corpus["pull"]).retrieval_count == before


def test_the_verdict_agrees_with_search(mem: Memory, corpus: dict[str, str]) -> None:
    """For random queries and filters: returned exactly when search returns it, at the same
    rank and score."""
    words = ["staging", "cluster", "eks-stg-2", "订单", "数据库", "Gradle", "cache", "缓存",
             "流水线", "image", "secret", "banner", "dark mode", "Friday", "payment", "harpsichord"]
    rng = random.Random(7)
    for _ in range(12):
        query = " ".join(rng.sample(words, rng.randint(1, 3)))
        args = rng.choice([{}, {"top_k": 1}, {"top_k": 2}, {"type": "event"},
                           {"include_superseded": True}])
        hits = [h for h in mem.search(query, **args)]
        ids = [h.memory.memory_id for h in hits]
        for mid in corpus.values():
            why = mem.why_not(mid, query, **args)
            assert (why.verdict is Verdict.RETURNED) == (mid in ids), (query, args, mid, why)
            if mid in ids:
                hit = hits[ids.index(mid)]
                assert why.rank == ids.index(mid) + 1 and why.score == hit.score
