"""What every record store must do, whatever the backend: transactions, filters, full text,
tags, history, and the change feed that keeps a vector index rebuildable."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from varvemem.model import HistoryEntry, MemoryRecord, MemoryType, Scope, SearchFilter, Tier
from varvemem.stores.base import RecordStore

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def rec(mid: str, content: str, *, tenant: str = "default", user: str | None = None,
        mtype: MemoryType = MemoryType.KNOWLEDGE, tags: list[str] | None = None,
        created: datetime = T0, tier: Tier = Tier.LONG_TERM, **kw) -> MemoryRecord:
    return MemoryRecord(memory_id=mid, content=content, memory_type=mtype, tier=tier,
                        scope=Scope(tenant=tenant, user=user), tags=tags or [], created_at=created,
                        updated_at=created, valid_from=created, content_hash=f"h-{content}", **kw)


def vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=8).astype(np.float32)
    return v / np.linalg.norm(v)


def put(store: RecordStore, *records: MemoryRecord) -> None:
    with store.transaction() as tx:
        for i, r in enumerate(records):
            tx.insert(r, vec(i))


def test_insert_get_roundtrip(store: RecordStore) -> None:
    r = rec("m1", "helm chart values", tags=["helm"], metadata={"k": [1, 2]}, importance=0.8)
    put(store, r)
    got = store.get("default", "m1", with_embedding=True)
    assert got is not None
    assert got.model_dump(exclude={"embedding"}) == r.model_dump(exclude={"embedding"})
    assert got.embedding == pytest.approx(vec(0).tolist(), abs=1e-3)  # f16 by default


def test_vectors_keep_the_format_they_were_stored_in(open_store: Callable[..., RecordStore]
                                                      ) -> None:
    """``store.record_vector_dtype``: f32 exactly, f16 in half the bytes; a store holding
    both (a home written before f16) reads each back, in records and in the change feed."""
    before = open_store(vector_dtype="f32")
    put(before, rec("m32", "stored as float32"))
    after = open_store(vector_dtype="f16")
    with after.transaction() as tx:
        tx.insert(rec("m16", "stored as float16"), vec(1))
    want = {"m32": vec(0), "m16": vec(1).astype(np.float16).astype(np.float32)}
    assert not np.array_equal(want["m16"], vec(1))  # the rounding is there to see
    for store in (before, after):
        for mid, v in want.items():
            got = store.get("default", mid, with_embedding=True)
            assert got is not None and got.embedding == v.tolist()
        fed = {m: a for m, a, _ in store.vector_changes(0).upserts}
        assert fed.keys() == want.keys()
        for mid, v in want.items():
            assert fed[mid].dtype == np.float32 and np.array_equal(fed[mid], v)


@pytest.mark.parametrize("scan", [False, True])
def test_stored_vectors_fill_rows_in_the_order_asked(open_store: Callable[..., RecordStore],
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     scan: bool) -> None:
    """What a local index whose graph file holds no vectors reads back when it opens: any
    tenant, either stored format, cast to the array's dtype; missing and empty ids skipped.
    Many ids are read as pages of the table (``scan``), a few as lists of ids."""
    import varvemem.stores._sql as sql

    if scan:
        monkeypatch.setattr(sql, "VECTOR_SCAN_FROM", 1)
        monkeypatch.setattr(sql, "VECTOR_SCAN_PAGE", 2)
    put(open_store(vector_dtype="f32"), rec("m32", "stored as float32"))
    store = open_store(vector_dtype="f16")
    with store.transaction() as tx:
        tx.insert(rec("m16", "stored as float16", tenant="acme"), vec(1))
        tx.insert(rec("bare", "no vector"), None)
    ids = ["m16", "", "missing", "bare", "m32"]
    for dtype in (np.float16, np.float32):
        out = np.full((len(ids), 8), 7, dtype)
        found = store.stored_vectors(ids, out)
        assert found.tolist() == [True, False, False, False, True]
        assert np.array_equal(out[0], vec(1).astype(np.float16).astype(dtype))
        assert np.array_equal(out[4], vec(0).astype(dtype))
        assert (out[1:4] == 7).all()  # rows not found are left as they were


def test_contents_reads_texts_of_one_tenant(store: RecordStore) -> None:
    put(store, rec("m1", "helm chart values"), rec("m2", "发布窗口在周四"),
        rec("m3", "other tenant's text", tenant="acme"))
    assert store.contents("default", ["m1", "m2", "m3", "missing"]) == {
        "m1": "helm chart values", "m2": "发布窗口在周四"}
    assert store.contents("acme", ["m1", "m3"]) == {"m3": "other tenant's text"}
    assert store.contents("default", []) == {}


def test_statements_are_stored_with_the_record_and_read_by_tenant(store: RecordStore) -> None:
    with store.transaction() as tx:
        tx.insert(rec("m1", "the gateway runs on port 8080"), vec(1), b'k1\x00\xff\x9c')
        tx.insert(rec("m2", "发布窗口在周四"), vec(2))  # none stored: parsed when needed
        tx.insert(rec("m3", "the gateway runs on port 9090", tenant="acme"), vec(3),
                  b'k3\x00\xff\x9c')
    assert store.statements("default", ["m1", "m2", "m3", "missing"]) == {"m1": b'k1\x00\xff\x9c'}
    assert store.statements("acme", ["m1", "m3"]) == {"m3": b'k3\x00\xff\x9c'}
    assert store.statements("default", []) == {}
    # A new text: the statement of the old one (and its words) goes with it.
    with store.transaction() as tx:
        tx.update(rec("m1", "the gateway runs on port 9443"), fields=["content"])
        tx.update(rec("m3", "the gateway runs on port 9090", tenant="acme", importance=0.9),
                  fields=["importance"])
    assert store.statements("default", ["m1"]) == {}
    assert store.statements("acme", ["m3"]) == {"m3": b'k3\x00\xff\x9c'}


def test_set_statements_writes_the_statement_alone(store: RecordStore) -> None:
    """A statement written back (parsed again by newer rules) changes nothing else: no
    change for the vector index, no history, the record and the other tenant as they were."""
    put(store, rec("m1", "the gateway runs on port 8080"),
        rec("m2", "the gateway runs on port 8080", tenant="acme"))
    before = store.get("default", "m1")
    seq = store.vector_seq()
    with store.transaction() as tx:
        tx.set_statements("default", {"m1": b'k1b\x00\xff\x9c', "m2": b'k2\x00\xff\x9c',
                                      "missing": b'k9\x00\xff\x9c'})
    assert store.statements("default", ["m1", "m2"]) == {"m1": b'k1b\x00\xff\x9c'}
    assert store.statements("acme", ["m2"]) == {}
    assert store.get("default", "m1") == before
    assert store.history("default", "m1") == []
    changes = store.vector_changes(seq)
    assert changes.upserts == [] and changes.removals == []


def test_failed_transaction_leaves_nothing(store: RecordStore) -> None:
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.insert(rec("m1", "first"), vec(1))
        tx.add_history(HistoryEntry(memory_id="m1", action="create", at=T0, actor="t"),
                       "default")
        raise RuntimeError("crash mid-write")
    assert store.get("default", "m1") is None
    assert store.history("default", "m1") == []
    assert store.keyword_search(["first"], SearchFilter(), T0, 10) == []
    assert store.vector_changes(0).upserts == []


def test_tenants_are_isolated(store: RecordStore) -> None:
    put(store, rec("a", "secret plan", tenant="acme"), rec("b", "secret plan", tenant="other"))
    assert store.get("acme", "b") is None
    assert [m for m, _ in store.keyword_search(["secret"], SearchFilter(tenant="acme"), T0,
                                               10)] == ["a"]
    assert store.history("acme", "b") == []
    assert store.filter(["a", "b"], SearchFilter(tenant="acme"), T0)[0].memory_id == "a"
    assert len(store.filter(["a", "b"], SearchFilter(tenant="acme"), T0)) == 1


def test_keyword_search_ranks_by_bm25_in_chinese_and_english(store: RecordStore) -> None:
    put(store, rec("en1", "the image pull secret was in the wrong namespace"),
        rec("en2", "cache key fix for the payment pipeline"),
        rec("zh1", "镜像拉取凭证放错了命名空间"), rec("zh2", "流水线缓存修复"))
    from varvemem.text import analyse

    hits = store.keyword_search(analyse("image pull secret namespace"), SearchFilter(), T0, 10)
    assert hits[0][0] == "en1" and hits[0][1] > 0
    hits = store.keyword_search(analyse("镜像凭证"), SearchFilter(), T0, 10)
    assert [h[0] for h in hits] == ["zh1"]


def test_filters(store: RecordStore) -> None:
    put(store,
        rec("old", "deploy notes", created=T0 - timedelta(days=30), user="u1"),
        rec("new", "deploy notes again", created=T0, user="u2", mtype=MemoryType.EVENT,
            tags=["ci"]),
        rec("gone", "deploy notes expired", expires_at=T0 - timedelta(days=1)),
        rec("sup", "deploy notes superseded", valid_to=T0 - timedelta(days=2),
            superseded_by="new", created=T0 - timedelta(days=10)))
    ids = ["old", "new", "gone", "sup"]

    def f(**kw) -> set[str]:
        return {r.memory_id for r in store.filter(ids, SearchFilter(**kw), T0)}

    assert f() == {"old", "new"}
    assert f(user="u1") == {"old"}
    assert f(types=[MemoryType.EVENT]) == {"new"}
    assert f(tags=["ci"]) == {"new"}
    assert f(created_after=T0 - timedelta(days=1)) == {"new"}
    assert f(include_expired=True) == {"old", "new", "gone"}
    assert f(include_superseded=True) == {"old", "new", "sup"}
    # as of 5 days ago the superseded one was still valid, the new one did not exist yet
    assert f(as_of=T0 - timedelta(days=5)) == {"old", "sup"}
    assert f(tiers=[Tier.ARCHIVE]) == set()


def test_tag_search_and_known_tags(store: RecordStore) -> None:
    put(store, rec("a", "x", tags=["helm", "k8s"]), rec("b", "y", tags=["helm"]),
        rec("c", "z", tags=["ci"]))
    hits = store.tag_search(["helm", "k8s"], SearchFilter(), T0, 10)
    assert hits[0] == ("a", 2) and ("b", 1) in hits
    assert store.known_tags("default", ["ci", "nope", "helm"]) == ["ci", "helm"]


def test_update_reindexes_text_and_tags(store: RecordStore) -> None:
    r = rec("a", "old words", tags=["t1"])
    put(store, r)
    r.content, r.tags = "fresh words", ["t2"]
    with store.transaction() as tx:
        tx.update(r)
    assert store.keyword_search(["old"], SearchFilter(), T0, 5) == []
    assert store.keyword_search(["fresh"], SearchFilter(), T0, 5)[0][0] == "a"
    assert store.tag_search(["t1"], SearchFilter(), T0, 5) == []
    # a narrow update touches only the named fields
    r.related_memory_ids = ["b"]
    r.content = "not written"
    with store.transaction() as tx:
        tx.update(r, fields=["related_memory_ids"])
    got = store.get("default", "a")
    assert got is not None and got.related_memory_ids == ["b"] and got.content == "fresh words"


def test_history_in_order(store: RecordStore) -> None:
    put(store, rec("a", "x"))
    with store.transaction() as tx:
        for action in ("create", "update", "supersede"):
            tx.add_history(HistoryEntry(memory_id="a", action=action, at=T0, actor="t",
                                        reason=action, old={"v": 1}, new={"v": 2}), "default")
    assert [h.action for h in store.history("default", "a")] == ["create", "update", "supersede"]


def test_change_feed_for_vector_catch_up(store: RecordStore) -> None:
    put(store, rec("a", "x"), rec("b", "y"))
    first = store.vector_changes(0)
    assert {u[0] for u in first.upserts} == {"a", "b"}
    with store.transaction() as tx:
        tx.delete("default", "a")
    later = store.vector_changes(first.seq)
    assert later.upserts == [] and later.removals == ["a"]
    assert later.seq > first.seq
    assert store.vector_seq() == later.seq
    b = store.get("default", "b")
    assert b is not None
    b.related_memory_ids = ["x"]
    with store.transaction() as tx:  # not something the index keeps: not in the feed
        tx.update(b, fields=["related_memory_ids"])
    assert store.vector_changes(later.seq).upserts == []
    b.valid_to, b.superseded_by = T0, "x"
    with store.transaction() as tx:  # validity is: the index must hear of it
        tx.update(b, fields=["valid_to", "superseded_by"])
    (mid, _, attrs), = store.vector_changes(later.seq).upserts
    assert mid == "b" and attrs.valid is False


def test_retrieval_counters(store: RecordStore) -> None:
    put(store, rec("a", "x"))
    store.record_retrieval("default", ["a"], T0 + timedelta(hours=1))
    store.record_retrieval("default", ["a"], T0 + timedelta(hours=2))
    got = store.get("default", "a")
    assert got is not None and got.retrieval_count == 2
    assert got.last_retrieved_at == T0 + timedelta(hours=2)


def test_stats_and_iteration(store: RecordStore) -> None:
    put(store, rec("a", "x"), rec("b", "y", mtype=MemoryType.EVENT))
    st = store.stats("default")
    assert st["memories"] == 2 and st["by_type"] == {"event": 1, "knowledge": 1}
    assert [r.memory_id for r in store.iter_records()] == ["a", "b"]


def test_keyword_search_leaves_out_terms_most_memories_contain(store: RecordStore) -> None:
    put(store, *[rec(f"c{i}", f"common note {i}") for i in range(20)],
        rec("r", "common rare finding"))
    everything = store.keyword_search(["common", "rare"], SearchFilter(), T0, 50)
    assert len(everything) == 21 and everything[0][0] == "r"
    selective = store.keyword_search(["common", "rare"], SearchFilter(), T0, 50, max_docs=10)
    assert [m for m, _ in selective] == ["r"]
    # When every term is common, the rarest one is still searched.
    assert len(store.keyword_search(["common"], SearchFilter(), T0, 50, max_docs=10)) == 21


def test_tag_search_reads_the_newest_memories_of_a_tag(store: RecordStore) -> None:
    put(store, *[rec(f"t{i:02d}", f"tagged {i}", tags=["deploy"],
                     created=T0 + timedelta(minutes=i)) for i in range(50)])
    assert store.tag_search(["deploy"], SearchFilter(), T0 + timedelta(days=1), 1) == \
        [("t49", 1)]
    assert len(store.tag_search(["deploy"], SearchFilter(), T0 + timedelta(days=1), 5)) == 5


def test_recent_in_session(store: RecordStore) -> None:
    s1 = Scope(user="u", session="s1")
    put(store, *[MemoryRecord(memory_id=f"d{i}", content=f"turn {i}",
                              memory_type=MemoryType.DIALOGUE, tier=Tier.SHORT_TERM, scope=s1,
                              created_at=T0 + timedelta(seconds=i), updated_at=T0,
                              valid_from=T0, context_before=[f"turn {i - 1}"])
                 for i in range(4)],
        rec("other", "turn elsewhere", user="u"))
    recent = store.recent_in_session(s1, MemoryType.DIALOGUE, 2)
    assert [r.memory_id for r in recent] == ["d3", "d2"]
    assert recent[0].context_before == ["turn 2"]
    assert store.recent_in_session(Scope(user="u"), MemoryType.DIALOGUE, 2) == []


def test_select_for_lifecycle_jobs(store: RecordStore) -> None:
    from varvemem.stores.base import Selection

    day = timedelta(days=1)
    put(store,
        rec("a", "alpha", importance=0.8, tier=Tier.SHORT_TERM, mtype=MemoryType.DIALOGUE),
        rec("b", "beta", importance=0.4, tier=Tier.SHORT_TERM, mtype=MemoryType.DIALOGUE,
            tier_since=T0 + 5 * day),
        rec("c", "gamma", importance=0.9, expires_at=T0 + day, retrieval_count=3,
            scored_retrievals=1),
        rec("d", "delta", tenant="other", importance=0.9, metadata={"experience_id": "x"}),
        rec("e", "epsilon", importance=0.9, valid_to=T0 + day, last_retrieved_at=T0 + 9 * day))

    def ids(**kw) -> list[str]:
        return [r.memory_id for r in store.select(Selection(**kw), 100)]

    assert ids() == ["a", "b", "c", "d"]
    assert ids(current_only=False) == ["a", "b", "c", "d", "e"]
    assert ids(tiers=[Tier.SHORT_TERM], importance_above=0.5) == ["a"]
    assert ids(importance_below=0.5) == ["b"]
    assert ids(tenant="other") == ["d"]
    assert ids(types=[MemoryType.DIALOGUE]) == ["a", "b"]
    assert ids(exclude_types=[MemoryType.DIALOGUE]) == ["c", "d"]
    assert ids(in_tier_before=T0 + 2 * day) == ["a", "c", "d"]  # b entered its tier on day 5
    assert ids(idle_before=T0 + 2 * day, current_only=False) == ["a", "c", "d"]
    assert ids(expired_at=T0 + day) == ["c"] and ids(expired_at=T0) == []
    assert ids(unscored_retrievals=True) == ["c"]
    assert ids(decay_due_before=T0 + 2 * day, current_only=False) == ["a", "c", "d"]
    assert ids(not_abstracted=True) == ["a", "b", "c"]
    assert [r.memory_id for r in store.select(Selection(), 2, after="a")] == ["b", "c"]
    assert store.tenants() == ["default", "other"]
    # any_of: at least one of several criteria (each job's own), in one walk.
    either = [Selection(tiers=[Tier.SHORT_TERM], importance_above=0.5),
              Selection(expired_at=T0 + day), Selection(tenant="other")]
    assert ids(any_of=either) == ["a", "c", "d"]
    assert ids(tenant="default", any_of=either) == ["a", "c"]
    assert ids(any_of=[Selection(current_only=False, idle_before=T0 + 10 * day)],
               current_only=False, importance_above=0.85) == ["c", "d", "e"]
    everyone = store.select(Selection(current_only=False), 100)
    for sel in (Selection(any_of=either), Selection(tenant="default", any_of=either)):
        assert [r.memory_id for r in everyone if sel.matches(r)] == \
            [r.memory_id for r in store.select(sel, 100)]


def test_select_means_what_matches_does(store: RecordStore) -> None:
    """A lifecycle selection picks in the store what ``Selection.matches`` (its clauses read in
    Python) picks in memory: missing values, empty lists, negations and ``any_of`` included."""
    from varvemem.stores.base import Selection

    day = timedelta(days=1)
    kinds = [MemoryType.DIALOGUE, MemoryType.KNOWLEDGE, MemoryType.EVENT]
    tiers = [Tier.ACTIVE, Tier.SHORT_TERM, Tier.MID_TERM, Tier.LONG_TERM]

    def at(i: int, cycle: int, on: bool) -> datetime | None:
        return T0 + (i % cycle) * day if on else None

    records = []
    for i in range(24):  # each field cycling at its own pace: varied combinations
        r = rec(f"m{i:02}", f"memory {i}", user=(None, "u1", "u2")[i % 3], mtype=kinds[i % 3],
                tier=tiers[i % 4], created=T0 + (i % 3) * day,
                importance=(0.2, 0.5, 0.8)[(i // 2) % 3], tier_since=at(i, 7, i % 2 == 1),
                last_retrieved_at=at(i, 6, (i // 2) % 2 == 1),
                decayed_at=at(i, 5, (i // 3) % 2 == 1), expires_at=at(i, 4, (i // 4) % 2 == 1),
                retrieval_count=i % 3, scored_retrievals=(i // 3) % 3,
                metadata=({}, {"experience_id": "x"}, {"other": 1},
                          {"experience_id": None})[(i // 4) % 4],
                valid_to=T0 + 9 * day if i % 4 == 1 else None,
                superseded_by=("m01" if i % 8 == 1 else "m02") if i % 4 == 1 else None)
        scope = Scope(tenant="other" if i % 5 == 4 else "default", user=r.scope.user,
                      session=(None, "s1")[(i // 2) % 2])
        records.append(r.model_copy(update={"scope": scope}))
    put(store, *records)
    everyone = sorted(store.iter_records(), key=lambda r: r.memory_id)
    forget = [Selection(tiers=[Tier.SHORT_TERM], expired_at=T0 + day),
              Selection(tiers=[Tier.SHORT_TERM], in_tier_before=T0 + 2 * day),
              Selection(tiers=[Tier.MID_TERM], idle_before=T0 + 3 * day),
              Selection(tiers=[Tier.LONG_TERM], importance_below=0.3)]
    spread = [
        Selection(), Selection(current_only=False),
        Selection(tenant="default", tiers=[Tier.SHORT_TERM, Tier.MID_TERM]),
        Selection(tiers=[]), Selection(types=[]), Selection(exclude_types=[]),
        Selection(exclude_types=[MemoryType.DIALOGUE, MemoryType.EVENT], current_only=False),
        Selection(types=[MemoryType.KNOWLEDGE], importance_above=0.4),
        Selection(importance_below=0.6, in_tier_before=T0 + 3 * day),
        Selection(idle_before=T0 + 2 * day, current_only=False),
        Selection(expired_at=T0 + 2 * day), Selection(unscored_retrievals=True),
        Selection(decay_due_before=T0 + 3 * day), Selection(decay_due_before=T0 + 5 * day),
        Selection(not_abstracted=True, current_only=False),
        Selection(session=("default", "s1")), Selection(tenant="default", user="u1"),
        Selection(tenant="default", current_only=False, superseded_by=["m01"]),
        Selection(current_only=False, superseded_by=[]),
        Selection(tenant="default", current_only=False, any_of=forget),
        Selection(any_of=[Selection(current_only=False), Selection(tiers=[])]),
        Selection(any_of=[Selection(tiers=[]), Selection(types=[])]),
        Selection(current_only=False, any_of=[
            Selection(exclude_types=[MemoryType.EVENT], any_of=[
                Selection(unscored_retrievals=True), Selection(not_abstracted=True)]),
            Selection(tenant="other", current_only=False)]),
    ]
    picked = []
    for sel in spread:
        want = [r.memory_id for r in everyone if sel.matches(r)]
        assert [r.memory_id for r in store.select(sel, 100)] == want, sel
        picked.append(tuple(want))
    assert len(set(picked)) > len(spread) * 3 // 4  # the spread tells the records apart


def test_sessions_open_touch_and_end(store: RecordStore) -> None:
    with store.transaction() as tx:
        tx.touch_session("default", "s1", T0)
        tx.touch_session("default", "s2", T0 + timedelta(minutes=20))
        tx.touch_session("other", "s1", T0)
        tx.touch_session("default", "s1", T0 + timedelta(minutes=5))
    idle = store.sessions(idle_before=T0 + timedelta(minutes=10))
    # Started at the first touch, even when touched again later.
    assert sorted((s.tenant, s.session, s.started_at) for s in idle) == [
        ("default", "s1", T0), ("other", "s1", T0)]
    with store.transaction() as tx:
        tx.end_session("default", "s1", T0 + timedelta(hours=1), "idle")
    assert [s.session for s in store.sessions("default")] == ["s2"]
    ended = next(s for s in store.sessions("default", open_only=False) if s.session == "s1")
    assert ended.end_reason == "idle" and ended.ended_at == T0 + timedelta(hours=1)
    with store.transaction() as tx:  # activity re-opens it
        tx.touch_session("default", "s1", T0 + timedelta(hours=2))
    assert {s.session for s in store.sessions("default")} == {"s1", "s2"}


def test_archive_references_leave_the_live_tables(store: RecordStore) -> None:
    put(store, rec("a", "helm chart values", tags=["helm"]), rec("b", "other text"))
    seq = store.vector_seq()
    with store.transaction() as tx:
        tx.archive("default", "a", "default/obj-1.jsonl.gz", "long_term", T0)
    assert store.get("default", "a") is None
    assert store.keyword_search(["helm"], SearchFilter(), T0, 10) == []
    assert store.tag_search(["helm"], SearchFilter(), T0, 10) == []
    assert store.vector_changes(seq).removals == ["a"]
    [ref] = store.archived("default")
    assert (ref.memory_id, ref.object, ref.from_tier) == ("a", "default/obj-1.jsonl.gz",
                                                          "long_term")
    assert store.archived("other") == [] and store.archived("default", ["b"]) == []
    assert store.stats("default")["by_tier"]["archive"] == 1
    with store.transaction() as tx:
        tx.unarchive("default", "a")
    assert store.archived("default") == []


def test_retrieval_counts_never_wait_for_a_writer(store: RecordStore, open_store) -> None:
    """A search's usage counters never wait for a writer: SQLite keeps them pending while
    another connection holds the write lock, PostgreSQL while a writer holds the row; they
    are written by the next retrieval that finds the way free."""
    import time

    put(store, rec("a", "alpha"))
    other = open_store()
    with other.transaction() as tx:  # another writer holds the lock, and the row
        a = other.get("default", "a")
        assert a is not None
        a.importance = 0.7
        tx.update(a, fields=["importance"])
        started = time.monotonic()
        store.record_retrieval("default", ["a"], T0)  # returns at once, kept pending
        store.record_retrieval("default", ["a"], T0 + timedelta(hours=1))
        assert time.monotonic() - started < 2
    got = store.get("default", "a")
    assert got is not None and got.retrieval_count == 0 and got.importance == 0.7
    store.record_retrieval("default", ["a"], T0 + timedelta(minutes=5))  # writes the pending
    got = store.get("default", "a")
    assert got is not None and got.retrieval_count == 3
    assert got.last_retrieved_at == T0 + timedelta(hours=1)


def test_nothing_shows_before_it_exists(store: RecordStore) -> None:
    """Without ``as_of`` the point in time is ``now``: a memory created later is not there yet
    (a replayed clock, or a memory dated ahead)."""
    later = T0 + timedelta(days=3)
    put(store, rec("early", "rollout checklist", tags=["deploy"]),
        rec("late", "rollout checklist revised", tags=["deploy"], created=later))
    ids = ["early", "late"]
    for now, want in ((T0 + timedelta(days=1), ["early"]), (later, ["early", "late"])):
        assert sorted(r.memory_id for r in store.filter(ids, SearchFilter(), now)) == want
        assert sorted(m for m, _ in store.keyword_search(["rollout"], SearchFilter(), now,
                                                          10)) == want
        assert sorted(m for m, _ in store.tag_search(["deploy"], SearchFilter(), now, 10)) == want
    # as_of still decides when given, whatever now is
    assert {r.memory_id for r in store.filter(ids, SearchFilter(as_of=later), T0)} == set(ids)
    assert [r.memory_id for r in store.filter(ids, SearchFilter(as_of=T0), later)] == ["early"]


def test_recent_in_session_until(store: RecordStore) -> None:
    s1 = Scope(session="s1")
    put(store, *[MemoryRecord(memory_id=f"d{i}", content=f"turn {i}",
                              memory_type=MemoryType.DIALOGUE, tier=Tier.ACTIVE, scope=s1,
                              created_at=T0 + timedelta(minutes=i), updated_at=T0,
                              valid_from=T0 + timedelta(minutes=i)) for i in range(5)])
    recent = store.recent_in_session(s1, MemoryType.DIALOGUE, 2,
                                     until=T0 + timedelta(minutes=2))
    assert [r.memory_id for r in recent] == ["d2", "d1"]
    assert [r.memory_id for r in store.recent_in_session(s1, MemoryType.DIALOGUE, 2)] == [
        "d4", "d3"]
