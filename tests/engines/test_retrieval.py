"""The retrieval engine: hybrid channels, filters, the re-rank and its breakdown, TTL, context."""

from __future__ import annotations

from datetime import timedelta

import pytest

from varvemem import ConfigError, Memory, Settings, ValidationError
from varvemem.engines import scoring
from varvemem.text import estimate_tokens

FACTS = [
    ("The order service pulls images with the regcred secret in namespace order", "knowledge"),
    ("Payment CI took 38 minutes because the Gradle cache key changed on every run", "event"),
    ("Inventory logs are pipe-separated: timestamp | level | module | key=value | msg", "knowledge"),
    ("订单服务的镜像拉取凭证放在 values.yaml 的 imagePullSecrets 下", "knowledge"),
    ("支付流水线的缓存键包含流水线序号，所以每次构建都没有命中缓存", "event"),
    ("Ticket OPS-1182 tracked the order pull-secret fix", "dialogue"),
]


@pytest.fixture
def filled(mem: Memory) -> Memory:
    mem.add_many([{"content": c, "type": t, "user": "u1" if i % 2 else "u2"}
                  for i, (c, t) in enumerate(FACTS)])
    return mem


@pytest.mark.parametrize("query,expected", [
    # Two memories tell it, in English and in Chinese: either answers (the Chinese one is
    # closer in meaning, and across scripts the English one's shared words do not count).
    ("why was the payment pipeline so slow?", "Gradle cache|缓存键"),
    ("what does an inventory log line look like", "pipe-separated"),
    ("订单服务的镜像凭证放在哪里", "imagePullSecrets"),
    ("支付流水线为什么没有命中缓存", "缓存键"),
    ("OPS-1182", "OPS-1182"),
])
def test_finds_the_right_memory_in_english_and_chinese(filled: Memory, query: str,
                                                      expected: str) -> None:
    best = filled.search(query, top_k=3)[0].memory.content
    assert any(alt in best for alt in expected.split("|"))


def test_every_hit_carries_its_components_and_the_weighted_score(filled: Memory) -> None:
    hits = filled.search("order image pull secret", top_k=10, profile="default")
    assert hits and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    prof = filled.settings.retrieval.profile("default")
    for h in hits:
        parts = h.scores.model_dump(exclude={"quality", "conflict", "contributions", "bias"})
        assert all(0.0 <= v <= 1.0 for v in parts.values() if v is not None)
        assert h.score == pytest.approx(scoring.combine(h.scores, prof))
        assert h.channels and set(h.channels) <= {"vector", "keyword", "tag"}
    best = hits[0]
    assert best.scores.keyword == 1.0 and "keyword" in best.channels


def test_keyword_only_match_is_found_through_the_keyword_channel(filled: Memory) -> None:
    hit = filled.search("OPS-1182", top_k=1)[0]
    assert "keyword" in hit.channels and hit.scores.keyword == 1.0


def test_tags_restrict_and_score(mem: Memory) -> None:
    mem.add("restart the pod with kubectl rollout restart", tags=["k8s-ops"])
    mem.add("restart the build with the rerun button", tags=["ci-ops"])
    hits = mem.search("how do I restart it", tags=["k8s-ops"])
    assert [h.memory.tags[0] for h in hits] == ["k8s-ops"]
    assert hits[0].scores.tag == 1.0 and "tag" in hits[0].channels


def test_query_tags_extracted_when_none_given(mem: Memory) -> None:
    mem.add("the helm chart for order pins the image tag", tags=["helm"])
    hit = mem.search("helm chart image tag")[0]
    assert hit.scores.tag == 1.0


def test_scope_type_tier_and_time_filters(filled: Memory, clock) -> None:
    def found(query: str, **flt: str) -> set[str]:
        return {h.memory.content for h in filled.search(query, min_relevance=0.0, **flt)}

    # The store is small enough for every memory to be a candidate: each filter keeps exactly
    # the memories it names (not merely "nothing that fails it", which an empty result passes).
    assert found("cache") == {c for c, _ in FACTS}
    assert found("cache", user="u1") == {FACTS[1][0], FACTS[3][0], FACTS[5][0]}
    assert found("cache", type="event") == {FACTS[1][0], FACTS[4][0]}
    assert found("logs", tier="long_term") == {FACTS[0][0], FACTS[2][0], FACTS[3][0]}
    t1 = clock.advance(days=2)
    late = filled.add("a late note about the cache").memory_id
    assert [h.memory.memory_id for h in filled.search("cache", since=t1,
                                                      min_relevance=0.0)] == [late]
    assert late not in [h.memory.memory_id for h in filled.search("cache", until=t1,
                                                                  min_relevance=0.0)]
    assert filled.search("cache", tenant="someone-else") == []
    with pytest.raises(ValidationError, match=r"unknown tier"):
        filled.search("x", tier="attic")
    with pytest.raises(ValidationError, match=r"empty"):
        filled.search("  ")


def test_retrieval_updates_usage(filled: Memory, clock) -> None:
    now = clock.advance(hours=1)
    hit = filled.search("payment pipeline Gradle cache", top_k=1)[0]
    rec = filled.get(hit.memory.memory_id)
    assert rec.retrieval_count == 1 and rec.last_retrieved_at == now


def test_recency_decays_with_age(mem: Memory, clock) -> None:
    rid = mem.add("the release train leaves on Thursdays").memory_id
    fresh = mem.search("release train")[0].scores.recency
    clock.advance(days=100)
    old = next(h for h in mem.search("release train") if h.memory.memory_id == rid)
    assert old.scores.recency == pytest.approx(fresh * scoring.recency(100,
                                               mem.settings.retrieval.recency_lambda), rel=1e-3)


def test_hard_ttl_removes_and_linear_ttl_decays(mem: Memory, clock) -> None:
    hard = mem.add("the freeze banner shows until Friday", ttl_mode="hard", ttl_days=3).memory_id
    lin = mem.add("the freeze exception list is in the wiki", ttl_mode="linear",
                  ttl_days=10).memory_id
    clock.advance(days=5)
    hits = {h.memory.memory_id: h for h in mem.search("freeze")}
    assert hard not in hits
    assert hits[lin].scores.ttl_weight == pytest.approx(0.5, abs=1e-6)


def test_multiplicative_profile_drops_zero_quality(mem: Memory) -> None:
    good = mem.add("How do I create a ticket? Use the New Ticket button.", type="qa",
                   question="How do I create a ticket?", answer="Use the New Ticket button.",
                   score=0.9).memory_id
    unrated = mem.add("How do I close a ticket? Use the Close button.", type="qa",
                      question="How do I close a ticket?", answer="Use the Close button.",
                      score=0.0).memory_id
    hits = mem.search("how to create a ticket", profile="faq")
    ids = [h.memory.memory_id for h in hits]
    assert good in ids and unrated not in ids
    assert hits[0].scores.quality == 0.9


def test_context_is_markdown_within_budget(filled: Memory) -> None:
    text = filled.context("order image pull secret", max_tokens=400)
    assert text.startswith("## Relevant memories\n") and "- " in text
    assert estimate_tokens(text) <= 400
    small = filled.context("order image pull secret", max_tokens=40)
    assert estimate_tokens(small) <= 40
    assert small.count("\n- ") < text.count("\n- ")
    assert "镜像" in filled.context("镜像拉取凭证", max_tokens=400)
    with pytest.raises(ValidationError):
        filled.context("x", max_tokens=2)


def test_search_finds_nothing_in_an_empty_store(mem: Memory) -> None:
    assert mem.search("anything at all") == []
    assert mem.context("anything") == ""


def test_point_in_time_after_timestamps(mem: Memory, clock) -> None:
    t0 = clock.now
    mem.add("the on-call phone is +1 555 0100")
    clock.advance(days=3)
    assert mem.search("on-call phone", as_of=t0 - timedelta(days=1)) == []
    assert len(mem.search("on-call phone", as_of=t0 + timedelta(days=1))) == 1


def test_a_clock_set_back_hides_later_memories_and_the_vector_channel_still_fills(
        make_memory, clock) -> None:
    """The vector index does not know when a memory began: the store drops later ones and the
    channel searches deeper until it has its candidates again."""
    mem = make_memory(retrieval={"candidates_per_channel": 3})
    start = clock.now
    early = mem.add("Card payments are settled by the ledger job overnight").memory_id
    clock.advance(days=30)
    names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
             "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"]
    mem.add_many([f"Service {n} retries card payments after a gateway timeout" for n in names],
                 type="event")
    query = "which service retries card payments"
    assert early not in [h.memory.memory_id for h in mem.search(query, top_k=3)]
    clock.now = start + timedelta(days=1)
    hits = mem.search(query, top_k=3)
    assert [h.memory.memory_id for h in hits] == [early]
    assert "vector" in hits[0].channels  # found past the 3 later ones the index ranks first
    assert len(mem.search(query, top_k=3, as_of=start + timedelta(days=31))) == 3


ONLY = dict.fromkeys(("semantic", "keyword", "tag", "recency", "importance", "reliability"), 0.0)


def test_a_custom_profile_ranks_by_its_own_weights(make_memory) -> None:
    """A profile defined in settings re-ranks by its weights: all on importance, the important
    memory wins over the one the text matches better, and each score is its importance."""
    mem = make_memory(retrieval={"profiles": {
        "by_importance": {"weights": {**ONLY, "importance": 1.0}},
        "by_keyword": {"weights": {**ONLY, "keyword": 1.0}, "min_score": 0.5}}})
    vital = mem.add("Deploys to production need a second approver", importance=0.9).memory_id
    wordy = mem.add("The deploy freeze for the order service starts on Friday: no deploys to "
                    "the order service until Monday", importance=0.1).memory_id
    query = "deploy freeze for the order service"

    def ranked(profile: str | None) -> list[str]:
        return [h.memory.memory_id for h in mem.search(query, profile=profile,
                                                         min_relevance=0.0)]

    assert ranked(None) == [wordy, vital]  # the default mix: the text match wins
    assert ranked("default") == [wordy, vital]
    hits = mem.search(query, profile="by_importance", min_relevance=0.0)
    assert [h.memory.memory_id for h in hits] == [vital, wordy]
    assert [h.score for h in hits] == [pytest.approx(0.9), pytest.approx(0.1)]
    # All on keyword with a floor: only the memory holding the query's words is left.
    kw = mem.search(query, profile="by_keyword", min_relevance=0.0)
    assert [h.memory.memory_id for h in kw] == [wordy]
    assert kw[0].score == pytest.approx(kw[0].scores.keyword) and kw[0].score >= 0.5


def test_a_custom_default_profile_is_used_when_none_is_named(make_memory) -> None:
    mem = make_memory(retrieval={"default_profile": "by_importance", "profiles": {
        "by_importance": {"weights": {**ONLY, "importance": 1.0}}}})
    vital = mem.add("Deploys to production need a second approver", importance=0.9).memory_id
    wordy = mem.add("The deploy freeze for the order service starts on Friday",
                    importance=0.1).memory_id
    hits = mem.search("deploy freeze for the order service", min_relevance=0.0)
    assert [h.memory.memory_id for h in hits] == [vital, wordy]
    assert [h.memory.memory_id for h in mem.search("deploy freeze for the order service",
                                                     profile="default",
                                                     min_relevance=0.0)] == [wordy, vital]


def test_an_unknown_profile_is_refused(make_memory) -> None:
    mem = make_memory(retrieval={"profiles": {"mine": {"mode": "multiplicative"}}})
    mem.add("the release train leaves on Thursdays")
    with pytest.raises(ValidationError,
                       match=r"unknown retrieval profile 'yours' \(known: default, faq, learned, "
                             r"mine\)"):
        mem.search("release train", profile="yours")
    assert len(mem.search("release train", profile="mine")) == 1
    with pytest.raises(ConfigError, match=r"unknown retrieval profile 'nope'"):
        Settings.load(home=mem.settings.home, retrieval={"default_profile": "nope"})
    with pytest.raises(ConfigError, match=r"weights must sum to 1"):
        Settings.load(home=mem.settings.home,
                      retrieval={"profiles": {"bad": {"weights": {**ONLY, "keyword": 0.5}}}})


# -- the relevance floor (retrieval.relevance_floor) --------------------------------------------
@pytest.mark.parametrize("query", [
    "what is a good recipe for banana pancakes?",
    "who painted the Mona Lisa?",
    "how far is Mars from the Sun?",
    "怎么包饺子？",
    "海豚是哺乳动物吗？",
    "哪个城市的火锅最辣？",
])
def test_an_unrelated_query_finds_nothing(filled: Memory, query: str) -> None:
    """The store holds nothing about it: no hit, no context, and ask says so (no padding)."""
    assert filled.search(query) == []
    assert filled.context(query) == ""
    assert "no memory matches" in filled.ask(query).answer


@pytest.mark.parametrize("query,expected", [
    ("which secret pulls the order images?", "regcred"),
    ("where are the inventory logs' fields separated?", "pipe-separated"),
    ("订单服务镜像的拉取凭证在哪", "imagePullSecrets"),
    ("支付构建为什么总是没有缓存", "缓存键"),
])
def test_a_related_query_passes_the_floor_and_says_why(filled: Memory, query: str,
                                                       expected: str) -> None:
    hits = filled.search(query, top_k=3)
    assert hits and expected in hits[0].memory.content
    best = max(h.scores.evidence or 0.0 for h in hits)
    assert best >= filled._engines.retrieval.relevance_floor() > 0
    assert hits[0].to_json()["scores"]["evidence"] == pytest.approx(hits[0].scores.evidence,
                                                                    abs=1e-6)


def test_the_floor_is_a_setting(make_memory) -> None:
    mem = make_memory(retrieval={"relevance_floor": 0, "relevance": "floor"})
    mem.add("The order service pulls images with the regcred secret")
    assert mem.search("who painted the Mona Lisa?")  # floor and judge off: the old padding
    mem.settings.retrieval.relevance = "learned"
    assert mem.search("who painted the Mona Lisa?") == []  # the judge alone: nothing
    mem.settings.retrieval.relevance_floor = 1.5
    # Under the floor only a statement judged relevant enough for it comes back
    # (retrieval.min_relevance_under_floor); at 1, nothing does.
    hits = mem.search("which secret does the order service use?")
    assert [h.memory.content for h in hits] == ["The order service pulls images with the "
                                                "regcred secret"]
    assert hits[0].scores.relevance is not None and hits[0].scores.relevance >= \
        mem._engines.retrieval.relevance_judges()["statement"].under_floor  # type: ignore[index]
    mem.settings.retrieval.min_relevance_under_floor = 1.0
    assert mem.search("which secret does the order service use?") == []
    mem.settings.retrieval.relevance = "floor"  # the floor alone: all or nothing
    mem.settings.retrieval.min_relevance_under_floor = None
    assert mem.search("which secret does the order service use?") == []
    with pytest.raises(ConfigError, match="relevance_floor"):
        Settings.load(home="/tmp/unused-home", retrieval={"relevance_floor": -1})
    assert Settings.load(home="/tmp/unused-home").retrieval.relevance_floor is None


@pytest.mark.parametrize("name", ["usem3", "use", "USE"])
def test_the_measured_floor_is_the_embedders_whatever_name_selects_it(make_memory,
                                                                      name: str) -> None:
    # The floor lives with the embedder in its registry: an alias gets it too.
    assert make_memory(embedder={"name": name})._engines.retrieval.relevance_floor() == 0.34


@pytest.mark.parametrize("query,other,asked", [
    ("食堂菜单机器人用哪个端口？", "推荐服务的端口是 5000", "食堂菜单机器人的端口是 7070"),
    ("工牌打印服务跑在哪个数据库上？", "支付服务跑在 mysql-3 上", "工牌打印服务跑在 pg-9 上"),
])
def test_the_same_attribute_of_another_subject_is_no_evidence(make_memory, query: str,
                                                              other: str, asked: str) -> None:
    """A question about a subject the store does not name gets nothing, though another
    subject's memory shares its attribute and its phrasing; once the subject is stored, it
    is found."""
    mem = make_memory()
    mem.add(other)
    assert mem.search(query) == []
    loose = make_memory(retrieval={"absent_subject_factor": 1.0})
    loose.add(other)
    assert loose.search(query)  # the factor off: the other subject's memory was served
    mem.add(asked)
    hits = mem.search(query)
    assert hits and hits[0].memory.content == asked


# -- the context budget (context.window_tokens x window_share - question - prompt) -------------
def test_the_context_budget_follows_the_window(make_memory) -> None:
    mem = make_memory(context={"window_tokens": 1000, "window_share": 0.5})
    question = "what does the order service need to pull images?"
    assert mem.context_budget(question) == 500 - estimate_tokens(question)
    assert mem.context_budget(question, prompt="Answer briefly.") == \
        500 - estimate_tokens(question) - estimate_tokens("Answer briefly.")
    assert mem.context_budget(question, max_tokens=64) == 64  # an explicit override
    with pytest.raises(ValidationError):
        mem.context_budget(question, max_tokens=8)
    mem.settings.context.max_tokens = 300
    assert mem.context_budget(question) == 300
    mem.settings.context.max_tokens = None
    huge = "word " * 2000
    assert mem.context_budget(huge) == 0  # the question fills the window
    defaults = Settings.load(home="/tmp/unused-home").context
    assert (defaults.window_tokens, defaults.window_share, defaults.max_tokens) == (2500, 0.8,
                                                                                     None)


def test_the_context_is_cut_to_the_window(make_memory) -> None:
    mem = make_memory(context={"window_tokens": 200, "window_share": 0.8})
    mem.add_many([{"content": f"Deploy step {i} for the order service: run the migration "
                   f"job {i} and then restart the pods of batch {i}"} for i in range(40)])
    question = "how do I deploy the order service?"
    text = mem.context(question, top_k=40)
    assert text.startswith("## Relevant memories") and \
        estimate_tokens(text) <= 160 - estimate_tokens(question)
    wide = mem.context(question, top_k=40, max_tokens=1500)
    assert wide.count("\n- ") > text.count("\n- ")
    with pytest.raises(ConfigError, match="window_share"):
        Settings.load(home="/tmp/unused-home", context={"window_share": 1.5})


def test_a_search_with_record_false_looks_without_touching(filled: Memory, clock) -> None:
    clock.advance(hours=1)
    hits = filled.search("payment pipeline Gradle cache", top_k=3, record=False)
    assert hits
    for h in hits:
        rec = filled.get(h.memory.memory_id)
        assert rec.retrieval_count == 0 and rec.last_retrieved_at is None
    assert [h.memory.memory_id for h in filled.search("payment pipeline Gradle cache",
                                                      top_k=3)] == [
        h.memory.memory_id for h in hits]
    with pytest.raises(ValidationError, match="record must be True or False"):
        filled.search("cache", record="no")  # type: ignore[arg-type]
