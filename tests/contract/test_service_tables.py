"""The service's tables on every store of record: API keys, the logins that stand for them (seen
by a second connection, as another server process sees them), and the webhook inbox (leases
that no two workers share, lease expiry after a crash, attempts, completion in the write's
transaction)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from varvemem.stores.base import ApiKey, InboxEvent, Login, RecordStore

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def _event(delivery: str, tenant: str = "acme", body: str = '{"a": 1}') -> InboxEvent:
    return InboxEvent(event_id=0, tenant=tenant, source="gh", kind="github", delivery=delivery,
                      body=body, headers={"x-github-event": "issue_comment"}, received_at=T0)


def test_keys_round_trip_and_revoke(store: RecordStore) -> None:
    key = ApiKey(key_id="0123456789abcdef", tenant="acme", role="write", name="ci",
                 secret_hash="ab" * 32, created_at=T0, expires_at=T0 + timedelta(days=1))
    store.put_key(key)
    assert store.get_key(key.key_id) == key
    assert store.get_key("ffffffffffffffff") is None
    assert [k.key_id for k in store.keys("acme")] == [key.key_id]
    assert store.keys("other") == []
    assert store.revoke_key(key.key_id, T0 + timedelta(hours=1))
    assert not store.revoke_key(key.key_id, T0 + timedelta(hours=2))  # once
    assert store.get_key(key.key_id).revoked_at == T0 + timedelta(hours=1)


def test_logins_are_shared_seen_dropped_once_and_pruned(
        open_store: Callable[[], RecordStore]) -> None:
    one, other = open_store(), open_store()  # two processes on one store
    session = Login("aa" * 32, "session", "0123456789abcdef", "csrf-1", T0, T0)
    link = Login("bb" * 32, "link", "0123456789abcdef", "", T0, T0)
    one.put_login(session)
    one.put_login(link)
    assert other.get_login(session.token_hash) == session
    assert other.get_login("cc" * 32) is None
    one.see_login(session.token_hash, T0 + timedelta(minutes=5))
    assert other.get_login(session.token_hash).seen_at == T0 + timedelta(minutes=5)
    assert other.drop_login(link.token_hash)
    assert not one.drop_login(link.token_hash)  # a link is taken once
    assert one.get_login(link.token_hash) is None
    one.put_login(link)
    assert one.prune_logins("session", T0 + timedelta(minutes=4)) == 0  # seen since
    assert one.prune_logins("link", T0 + timedelta(minutes=4)) == 1
    assert other.prune_logins("session", T0 + timedelta(minutes=6)) == 1
    assert one.get_login(session.token_hash) is None


def test_enqueue_is_idempotent_per_tenant_source_and_delivery(store: RecordStore) -> None:
    first, created = store.enqueue_event(_event("d1"))
    assert created
    again, created_again = store.enqueue_event(_event("d1", body='{"changed": true}'))
    assert (again, created_again) == (first, False)
    other_tenant, created_other = store.enqueue_event(_event("d1", tenant="other"))
    assert created_other and other_tenant != first
    [stored] = store.inbox("acme")
    assert stored.body == '{"a": 1}' and stored.status == "pending"
    assert stored.headers == {"x-github-event": "issue_comment"}
    assert store.inbox_counts() == {"pending": 2}
    store.enqueue_event(_event("d2", tenant="other"))
    assert store.inbox_counts("acme") == {"pending": 1}  # one tenant's, for GET /v1/status
    assert store.inbox_counts("other") == {"pending": 2}
    assert store.inbox_counts("nobody") == {}


def test_a_lease_is_held_by_one_worker_until_it_runs_out(store: RecordStore) -> None:
    ids = [store.enqueue_event(_event(f"d{i}"))[0] for i in range(5)]
    a = store.claim_events("a", 3, T0, 60, 5)
    assert [e.event_id for e in a] == ids[:3]
    assert all(e.status == "processing" and e.worker == "a" and e.attempts == 1 for e in a)
    b = store.claim_events("b", 10, T0 + timedelta(seconds=1), 60, 5)
    assert [e.event_id for e in b] == ids[3:]
    assert store.claim_events("c", 10, T0 + timedelta(seconds=59), 60, 5) == []
    # Worker a died: after its lease its events go to the next claimer, one attempt more.
    c = store.claim_events("c", 10, T0 + timedelta(seconds=61), 60, 5)
    assert [e.event_id for e in c] == ids[:3]
    assert all(e.attempts == 2 for e in c)


def test_completion_needs_the_lease(store: RecordStore) -> None:
    eid = store.enqueue_event(_event("d1"))[0]
    store.claim_events("a", 1, T0, 60, 5)
    store.claim_events("b", 1, T0 + timedelta(seconds=120), 60, 5)  # a's lease ran out
    with store.transaction() as tx:
        assert not tx.complete_event(eid, "a", ["m1"], T0)
    with store.transaction() as tx:
        assert tx.complete_event(eid, "b", ["m1", "m2"], T0 + timedelta(seconds=121))
    [done] = store.inbox()
    assert done.status == "done" and done.memory_ids == ("m1", "m2") and done.worker == "b"
    assert store.claim_events("c", 10, T0 + timedelta(days=1), 60, 5) == []


def test_a_rolled_back_write_leaves_the_event_leased(store: RecordStore) -> None:
    eid = store.enqueue_event(_event("d1"))[0]
    store.claim_events("a", 1, T0, 60, 5)
    try:
        with store.transaction() as tx:
            assert tx.complete_event(eid, "a", ["m1"], T0)
            raise RuntimeError("crash before commit")
    except RuntimeError:
        pass
    [event] = store.inbox()
    assert event.status == "processing" and event.memory_ids == ()


def test_release_retries_then_gives_up(store: RecordStore) -> None:
    eid = store.enqueue_event(_event("d1"))[0]
    now = T0
    for attempt in range(1, 3):
        [e] = store.claim_events("a", 1, now, 60, 2)
        assert e.attempts == attempt
        store.release_event(eid, "a", now, f"boom {attempt}", False)
        now += timedelta(seconds=1)
    assert store.claim_events("a", 1, now, 60, 2) == []  # out of attempts
    [failed] = store.inbox(status="failed")
    assert failed.event_id == eid and "boom 2" in failed.error and "gave up" in failed.error
    other = store.enqueue_event(_event("d2"))[0]
    store.claim_events("a", 1, now, 60, 5)
    store.release_event(other, "a", now, "malformed", True)
    assert store.inbox_counts() == {"failed": 2}


def test_concurrent_claimers_never_share_an_event(open_store: Callable[[], RecordStore]) -> None:
    """Two connections (two processes' worth) claiming at once: each event goes to one."""
    first = open_store()
    for i in range(60):
        first.enqueue_event(_event(f"d{i}"))
    stores = [first, open_store()]
    got: dict[str, list[int]] = {"w0": [], "w1": []}

    def work(name: str, s: RecordStore) -> None:
        while batch := s.claim_events(name, 4, T0, 60, 5):
            got[name].extend(e.event_id for e in batch)

    threads = [threading.Thread(target=work, args=(f"w{i}", s)) for i, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    claimed = got["w0"] + got["w1"]
    assert len(claimed) == 60 and len(set(claimed)) == 60


def test_a_released_event_waits_for_its_retry_time(store: RecordStore) -> None:
    eid = store.enqueue_event(_event("d1"))[0]
    store.claim_events("a", 1, T0, 60, 5)
    store.release_event(eid, "a", T0, "store away", False, T0 + timedelta(seconds=30))
    assert store.claim_events("b", 1, T0 + timedelta(seconds=29), 60, 5) == []
    [again] = store.claim_events("b", 1, T0 + timedelta(seconds=31), 60, 5)
    assert again.event_id == eid and again.attempts == 2 and again.error == "store away"


def test_a_redelivery_re_arms_a_failed_event(store: RecordStore) -> None:
    eid = store.enqueue_event(_event("d1"))[0]
    store.claim_events("a", 1, T0, 60, 5)
    store.release_event(eid, "a", T0, "embedder away too long", True)
    assert store.enqueue_event(_event("d1")) == (eid, True)
    [event] = store.inbox()
    assert (event.status, event.attempts, event.error) == ("pending", 0, None)
    store.claim_events("a", 1, T0, 60, 5)
    with store.transaction() as tx:
        assert tx.complete_event(eid, "a", ["m1"], T0)
    assert store.enqueue_event(_event("d1")) == (eid, False)  # done: a plain duplicate


def test_purge_history(store: RecordStore) -> None:
    from varvemem.model import HistoryEntry

    with store.transaction() as tx:
        for mid in ("m1", "m2"):
            tx.add_history(HistoryEntry(memory_id=mid, action="create", at=T0, actor="t",
                                        new={"content": "secret"}), "acme")
    with store.transaction() as tx:
        tx.purge_history("acme", "m1")
    assert store.history("acme", "m1") == []
    assert len(store.history("acme", "m2")) == 1


def test_prune_drops_old_done_payloads_and_keeps_the_row(store: RecordStore) -> None:
    ids = {d: store.enqueue_event(_event(d, tenant=t))[0]
           for d, t in (("old", "acme"), ("new", "acme"), ("other", "globex"),
                        ("waiting", "acme"), ("failed", "acme"))}
    store.claim_events("w", 10, T0, 60, 5)
    for d, at in (("old", T0), ("other", T0), ("new", T0 + timedelta(days=9))):
        with store.transaction() as tx:
            assert tx.complete_event(ids[d], "w", [f"m-{d}"], at)
    store.release_event(ids["waiting"], "w", T0, "away", False)
    store.release_event(ids["failed"], "w", T0, "malformed", True)
    cutoff = T0 + timedelta(days=7)

    assert store.prune_inbox(cutoff, tenant="acme") == 1  # another tenant's event is left
    assert store.prune_inbox(cutoff) == 1
    assert store.prune_inbox(cutoff) == 0  # nothing twice
    by_delivery = {e.delivery: e for e in store.inbox()}
    for d in ("old", "other"):
        assert by_delivery[d].body == "" and by_delivery[d].headers == {}
        assert by_delivery[d].status == "done" and by_delivery[d].memory_ids == (f"m-{d}",)
    for d in ("new", "waiting", "failed"):
        assert by_delivery[d].body == '{"a": 1}' and by_delivery[d].headers
    # The row is still there: a late redelivery is known, and not made again.
    assert store.enqueue_event(_event("old")) == (ids["old"], False)


def test_retry_re_arms_only_the_tenant_s_failed_events(store: RecordStore) -> None:
    ids = [store.enqueue_event(_event(f"d{i}", tenant=t))[0]
           for i, t in enumerate(("acme", "acme", "acme", "globex"))]
    store.claim_events("w", 10, T0, 60, 5)
    for eid in (ids[0], ids[1], ids[3]):
        store.release_event(eid, "w", T0, "malformed", True)
    assert store.retry_events("acme", []) == []
    assert store.retry_events("acme", [ids[1], ids[2], ids[3]]) == [ids[1]]
    assert store.retry_events("acme") == [ids[0]]
    by_id = {e.event_id: e for e in store.inbox()}
    assert [by_id[i].status for i in ids] == ["pending", "pending", "processing", "failed"]
    assert by_id[ids[0]].attempts == 0 and by_id[ids[0]].error is None
    assert [e.event_id for e in store.claim_events("w2", 10, T0, 60, 5)] == ids[:2]


def test_renewing_keeps_only_the_leases_still_held(store: RecordStore) -> None:
    ids = [store.enqueue_event(_event(f"d{i}"))[0] for i in range(3)]
    store.claim_events("a", 2, T0, 60, 5)
    assert store.renew_leases("a", [], T0) == set()
    assert store.renew_leases("a", ids, T0 + timedelta(seconds=150)) == set(ids[:2])
    # Renewed: not claimable after the first lease, claimable after the new one.
    assert [e.event_id for e in store.claim_events("b", 10, T0 + timedelta(seconds=90), 60, 5)] \
        == ids[2:]
    taken = store.claim_events("c", 10, T0 + timedelta(seconds=151), 60, 5)  # b's ran out too
    assert [e.event_id for e in taken] == ids
    assert store.renew_leases("a", ids, T0 + timedelta(seconds=500)) == set()  # c holds them
    assert {e.event_id: e.worker for e in store.inbox()}[ids[0]] == "c"
