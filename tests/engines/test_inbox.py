"""Webhook ingestion through the library: verification, the inbox, workers making memories
exactly once, importance by outcome, resolved alerts linked to firing ones; API keys;
deleting a user."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from typing import Any

import pytest
from tests.conftest import inbox_over, stores_of
from tests.fakes import raising

from varvemem import Memory
from varvemem._namespaces import Inbox
from varvemem.errors import (
    AuthError,
    NotFoundError,
    StorageError,
    ValidationError,
)
from varvemem.model import MemoryType

GH_SECRET = "gh-secret-123"
AM_TOKEN = "am-token-456"
SOURCES = {"webhooks": {"sources": {
    "gh": {"kind": "github", "tenant": "acme", "secret": GH_SECRET, "tags": ["repo-x"]},
    "am": {"kind": "alertmanager", "tenant": "acme", "verify": "token", "secret": AM_TOKEN},
    "ci": {"kind": "harness", "tenant": "acme", "verify": "token", "secret": "ci-token-789",
           "header": "X-Harness-Token"},
    "other": {"kind": "generic", "tenant": "globex", "secret": "generic-secret"},
}}, "server": {"max_body_bytes": 4096}}


def comment(body: str = "Please pin the base image by digest", cid: int = 9) -> bytes:
    return json.dumps({
        "action": "created",
        "issue": {"number": 12, "title": "Bump base image", "pull_request": {},
                  "html_url": "https://github.com/o/r/pull/12"},
        "comment": {"id": cid, "body": body, "user": {"login": "ann"},
                    "html_url": f"https://github.com/o/r/pull/12#c{cid}",
                    "created_at": "2025-12-31T10:00:00Z"},
        "repository": {"full_name": "o/r"}}).encode()


def gh_headers(body: bytes, delivery: str = "d-1", secret: str = GH_SECRET,
               event: str = "issue_comment") -> dict[str, str]:
    sig = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={sig}", "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery, "Content-Type": "application/json"}


def alerts(status: str) -> bytes:
    alert = {"status": status, "labels": {"alertname": "HighErrorRate", "severity": "critical",
                                          "service": "checkout"},
             "annotations": {"summary": "5xx above 5% on checkout"},
             "startsAt": "2025-12-31T08:00:00Z",
             "endsAt": "2025-12-31T08:30:00Z" if status == "resolved" else "0001-01-01T00:00:00Z",
             "fingerprint": "a1b2c3d4e5f60718"}
    return json.dumps({"version": "4", "status": status, "receiver": "varvemem",
                       "groupKey": "{}:{alertname=\"HighErrorRate\"}", "alerts": [alert]}).encode()


def harness(status: str, execution: str) -> bytes:
    return json.dumps({"eventData": {
        "accountIdentifier": "acct", "orgIdentifier": "default", "projectIdentifier": "shop",
        "pipelineIdentifier": "deploy", "pipelineName": "Deploy", "planExecutionId": execution,
        "eventType": "PipelineFailed" if status == "failed" else "PipelineSuccess",
        "nodeStatus": status, "errorMessage": "ImagePullBackOff on checkout-7f9" if
        status == "failed" else "", "executionUrl": f"https://harness.example/{execution}"}}).encode()


@pytest.fixture
def wmem(make_memory) -> Memory:
    return make_memory(**SOURCES)


def counting_inbox(mem: Memory) -> tuple[list[int], Inbox]:
    """``mem``'s inbox, and a list that grows by one per write transaction it opens."""
    opened: list[int] = []
    return opened, inbox_over(mem, lambda: opened.append(1))


def memories_of(mem: Memory, tenant: str = "acme", everything: bool = False) -> list[Any]:
    """The tenant's event memories: current ones, or (``everything``) superseded ones too."""
    return mem.get_all(tenant=tenant, types=["event"], limit=1000, include_superseded=everything)


def test_a_delivery_is_committed_then_one_memory_is_made(wmem: Memory) -> None:
    body = comment()
    receipt = wmem.inbox.receive("gh", body, gh_headers(body))
    assert receipt.event_id is not None and not receipt.duplicate and receipt.events == 1
    assert memories_of(wmem) == []  # nothing before a worker runs
    assert wmem.inbox.counts() == {"pending": 1}
    report = wmem.inbox.process(worker="w1")
    assert (report.claimed, report.done, report.failed) == (1, 1, 0)
    [rec] = memories_of(wmem)
    assert rec.memory_type is MemoryType.EVENT and "pin the base image" in rec.content
    assert rec.scope.tenant == "acme" and "repo-x" in rec.tags
    assert rec.metadata["webhook"] == {"source": "gh", "event_id": receipt.event_id,
                                       "delivery": "d-1"}
    assert rec.metadata["outcome"] == "comment"
    assert rec.importance == wmem.settings.webhooks.importance["comment"]
    [event] = wmem.inbox.events(tenant="acme")
    assert event.status == "done" and event.memory_ids == (rec.memory_id,)
    # The same delivery again: acknowledged as a duplicate, no second memory.
    again = wmem.inbox.receive("gh", body, gh_headers(body))
    assert again.duplicate and again.event_id == receipt.event_id
    assert wmem.inbox.process().claimed == 0
    assert len(memories_of(wmem)) == 1
    # Without a delivery id, the body's hash identifies a redelivery.
    headers = gh_headers(body)
    del headers["X-GitHub-Delivery"]
    first = wmem.inbox.receive("gh", body, headers)
    assert wmem.inbox.receive("gh", body, headers) == type(first)(
        event_id=first.event_id, duplicate=True, events=1)


@pytest.mark.parametrize(("source", "body", "headers", "error", "message"), [
    ("nope", b"{}", {}, NotFoundError, "no webhook source"),
    ("gh", comment(), {"X-GitHub-Event": "issue_comment"}, AuthError, "missing"),
    ("gh", comment(), gh_headers(comment(), secret="wrong-secret"), AuthError, "bad webhook"),
    ("gh", comment() + b" ", gh_headers(comment()), AuthError, "bad webhook"),  # body changed
    ("am", alerts("firing"), {"Authorization": "Bearer wrong"}, AuthError, "bad webhook"),
    ("gh", b"{not json", gh_headers(b"{not json"), ValidationError, "malformed JSON"),
    ("gh", b"\xff\xfe", gh_headers(b"\xff\xfe"), ValidationError, "not UTF-8"),
    ("gh", b"x" * 5000, gh_headers(b"x" * 5000), ValidationError, "max_body_bytes"),
    ("am", json.dumps({"version": "4", "alerts": "x"}).encode(),
     {"Authorization": f"Bearer {AM_TOKEN}"}, ValidationError, "alerts"),
])
def test_bad_deliveries_are_refused_and_store_nothing(wmem: Memory, source: str, body: bytes,
                                                      headers: dict[str, str], error: type,
                                                      message: str) -> None:
    with pytest.raises(error, match=message):
        wmem.inbox.receive(source, body, headers)
    assert wmem.inbox.counts() == {}


def test_ping_and_events_not_read_are_acknowledged_and_ignored(wmem: Memory) -> None:
    body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
    receipt = wmem.inbox.receive("gh", body, gh_headers(body, event="ping"))
    assert receipt.ignored and receipt.event_id is None and "ping" in (receipt.reason or "")
    for event in ("push", "deployment", "star"):
        receipt = wmem.inbox.receive("gh", comment(), gh_headers(comment(), event=event))
        assert receipt.ignored and "not remembered" in (receipt.reason or ""), receipt
    assert wmem.inbox.counts() == {}


def test_an_edit_supersedes_the_comment_and_a_deletion_forgets_it(wmem: Memory) -> None:
    def send(action: str, body: str, delivery: str) -> None:
        raw = json.loads(comment(body))
        raw["action"] = action
        data = json.dumps(raw).encode()
        assert wmem.inbox.receive("gh", data, gh_headers(data, delivery=delivery)).event_id

    send("created", "Pin the base image by digest", "d-1")
    assert wmem.inbox.process().done == 1
    [original] = memories_of(wmem)
    send("edited", "Pin the base image by tag and digest", "d-2")
    assert wmem.inbox.process().done == 1
    [edited] = memories_of(wmem)
    assert "by tag and digest" in edited.content and edited.source == original.source
    assert edited.metadata["revises"] == original.source
    old = wmem.get(original.memory_id, tenant="acme")
    assert old.valid_to is not None and old.superseded_by == edited.memory_id
    assert any(e.action == "supersede" for e in wmem.history(original.memory_id, tenant="acme"))
    send("deleted", "Pin the base image by tag and digest", "d-3")
    assert wmem.inbox.process().done == 1
    assert memories_of(wmem) == []  # forgotten: invalidated, not erased
    assert wmem.get(edited.memory_id, tenant="acme").valid_to is not None
    assert any(e.action == "supersede" and "deleted a comment" in e.reason
               for e in wmem.history(edited.memory_id, tenant="acme"))
    [event] = [e for e in wmem.inbox.events(tenant="acme") if e.delivery == "d-3"]
    assert event.status == "done" and event.memory_ids == ()


def test_an_edit_in_the_same_batch_as_its_original_still_supersedes_it(wmem: Memory) -> None:
    for action, text, delivery in (("created", "Use Redis 7", "e-1"), ("edited", "Use Redis 7.2", "e-2")):
        raw = json.loads(comment(text))
        raw["action"] = action
        data = json.dumps(raw).encode()
        wmem.inbox.receive("gh", data, gh_headers(data, delivery=delivery))
    assert wmem.inbox.process().done == 2
    [current] = memories_of(wmem)
    assert "Redis 7.2" in current.content


def test_a_repeat_alert_notification_is_acknowledged_and_makes_no_memory(wmem: Memory) -> None:
    token = {"Authorization": f"Bearer {AM_TOKEN}"}
    first = wmem.inbox.receive("am", alerts("firing"), token)
    assert first.event_id and not first.duplicate
    again = wmem.inbox.receive("am", alerts("firing"), token)  # repeat_interval later
    assert again.duplicate and again.event_id == first.event_id
    # The same alert state in a group whose other fields changed: a new event, no new memory.
    body = json.loads(alerts("firing"))
    body["truncatedAlerts"] = 3
    body["alerts"][0]["annotations"]["summary"] = "5xx above 6% on checkout"
    changed = wmem.inbox.receive("am", json.dumps(body).encode(), token)
    assert changed.event_id == first.event_id and changed.duplicate  # keyed by alert states
    body["alerts"].append({**body["alerts"][0], "fingerprint": "0000111122223333",
                           "labels": {"alertname": "Other"}})
    assert not wmem.inbox.receive("am", json.dumps(body).encode(), token).duplicate
    assert wmem.inbox.process().done == 2
    mems = memories_of(wmem)
    assert sorted(m.metadata["event"]["fingerprint"] for m in mems) == [
        "0000111122223333", "a1b2c3d4e5f60718"]
    other = next(m for m in mems if m.metadata["event"]["fingerprint"] == "0000111122223333")
    assert other.metadata["event"]["truncated_alerts"] == 3


def test_grafana_alerts_become_memories_and_resolved_links_to_firing(make_memory) -> None:
    wmem = make_memory(webhooks={"sources": {"gf": {
        "kind": "grafana", "tenant": "acme", "verify": "token", "secret": AM_TOKEN}}},
        update={"associate_threshold": 1.0})
    token = {"Authorization": f"Bearer {AM_TOKEN}"}
    for status in ("firing", "resolved"):
        body = json.loads(alerts(status))
        body["version"] = "1"
        body["alerts"][0]["valueString"] = "[ var='B' value=7.2 ]"
        assert wmem.inbox.receive("gf", json.dumps(body).encode(), token).event_id
    assert wmem.inbox.process().done == 2
    by_outcome = {r.metadata["outcome"]: r for r in memories_of(wmem, everything=True)}
    firing, resolved = by_outcome["firing"], by_outcome["resolved"]
    assert firing.related_memory_ids == [resolved.memory_id]
    assert "Value: [ var='B' value=7.2 ]" in firing.content and "grafana" in firing.tags


def test_a_url_token_source_names_the_query_parameter(make_memory) -> None:
    wmem = make_memory(webhooks={"sources": {"ci": {
        "kind": "harness", "tenant": "acme", "verify": "url_token", "secret": "ci-token-789"}}})
    with pytest.raises(AuthError, match=r"missing \?token= in the webhook URL"):
        wmem.inbox.receive("ci", harness("failed", "r1"), {})


def test_failures_and_firing_alerts_matter_more_and_resolved_links_to_firing(make_memory) -> None:
    # No association by similarity: the link below comes from the alert's fingerprint alone.
    wmem = make_memory(**SOURCES, update={"associate_threshold": 1.0})
    token = {"Authorization": f"Bearer {AM_TOKEN}"}
    wmem.inbox.receive("am", alerts("firing"), token)
    wmem.inbox.receive("ci", harness("failed", "run-1"), {"X-Harness-Token": "ci-token-789"})
    wmem.inbox.receive("ci", harness("success", "run-2"), {"X-Harness-Token": "ci-token-789"})
    wmem.inbox.process()
    wmem.inbox.receive("am", alerts("resolved"), token)
    assert wmem.inbox.process().done == 1
    by_outcome = {r.metadata["outcome"]: r for r in memories_of(wmem, everything=True)}
    assert set(by_outcome) == {"firing", "resolved", "failure", "success"}
    imp = {k: r.importance for k, r in by_outcome.items()}
    assert imp["failure"] > imp["success"] and imp["firing"] > imp["resolved"]
    firing, resolved = by_outcome["firing"], by_outcome["resolved"]
    assert resolved.memory_id in firing.related_memory_ids
    assert firing.memory_id in resolved.related_memory_ids
    assert any(e.action == "link" and "the same alert" in e.reason
               for e in wmem.history(firing.memory_id, tenant="acme"))
    assert "ImagePullBackOff" in by_outcome["failure"].content
    # The pass after it retired the failure (engines/states.py); what failed is still known.
    assert by_outcome["failure"].superseded_by == by_outcome["success"].memory_id
    hits = wmem.search("why did the deploy pipeline fail?", tenant="acme", top_k=3,
                       include_superseded=True)
    assert hits[0].memory.memory_id == by_outcome["failure"].memory_id


def test_a_malformed_event_in_the_inbox_fails_once_and_for_all(wmem: Memory) -> None:
    from varvemem.stores.base import InboxEvent

    stores_of(wmem).records.enqueue_event(InboxEvent(
        event_id=0, tenant="acme", source="gh", kind="github", delivery="bad", body="[1, 2]",
        headers={"x-github-event": "issue_comment"}, received_at=wmem.clock()))
    report = wmem.inbox.process()
    assert (report.failed, report.done) == (1, 0) and "event" in report.errors[0]
    [event] = wmem.inbox.events(tenant="acme", status="failed")
    assert event.error
    assert wmem.inbox.process().claimed == 0


def test_a_crashed_worker_s_events_are_made_once_after_the_lease(wmem: Memory, clock) -> None:
    for i in range(4):
        body = comment(f"comment number {i} about the cache layer", cid=100 + i)
        wmem.inbox.receive("gh", body, gh_headers(body, delivery=f"d{i}"))
    # Worker "dead" leased everything, then died before making anything.
    stores_of(wmem).records.claim_events("dead", 10, clock(), 60, 5)
    assert wmem.inbox.process(worker="w2").claimed == 0  # still leased
    clock.advance(seconds=61)
    report = wmem.inbox.process(worker="w2")
    assert report.done == 4
    assert len(memories_of(wmem)) == 4
    # The dead worker wakes up and tries to finish one: its lease is gone, nothing is written.
    with stores_of(wmem).transaction() as tx:
        assert not tx.complete_event(report.claimed, "dead", ["x"], clock())
    assert len(memories_of(wmem)) == 4


def test_a_lost_lease_rolls_back_the_memories(wmem: Memory, clock) -> None:
    body = comment()
    wmem.inbox.receive("gh", body, gh_headers(body))

    def slow_write() -> None:
        # Another worker takes the event over while this one is still working on it.
        clock.advance(seconds=120)
        stores_of(wmem).records.claim_events("thief", 10, clock(), 60, 5)

    report = inbox_over(wmem, slow_write).process(worker="slow")
    assert (report.lost, report.done) == (1, 0)
    assert memories_of(wmem) == []
    clock.advance(seconds=120)
    assert wmem.inbox.process(worker="next").done == 1
    assert len(memories_of(wmem)) == 1


def test_stop_gives_the_rest_of_the_batch_back(wmem: Memory) -> None:
    for i in range(3):
        body = comment(f"note {i}", cid=i)
        wmem.inbox.receive("gh", body, gh_headers(body, delivery=f"s{i}"))
    stop = threading.Event()
    stop.set()
    report = wmem.inbox.process(stop=stop)
    assert (report.claimed, report.done, report.retried) == (3, 0, 3)
    assert wmem.inbox.counts() == {"pending": 3}


def test_api_keys(wmem: Memory, clock) -> None:
    key, secret = wmem.keys.create("acme", "write", "ci", expires_days=1)
    assert secret.startswith(f"msk_{key.key_id}_") and secret not in repr(key)
    assert key.secret_hash != secret and len(key.secret_hash) == 64
    assert wmem.keys.authenticate(secret, "write").tenant == "acme"
    with pytest.raises(AuthError) as denied:
        wmem.keys.authenticate(secret, "admin")
    assert denied.value.forbidden
    for bad in (None, "", "Bearer x", secret[:-1] + ("A" if secret[-1] != "A" else "B"),
                f"msk_{'0' * 16}_{'x' * 43}"):
        with pytest.raises(AuthError) as refused:
            wmem.keys.authenticate(bad)
        assert not refused.value.forbidden
    clock.advance(days=2)
    with pytest.raises(AuthError, match="expired"):
        wmem.keys.authenticate(secret)
    _, other = wmem.keys.create("acme", "read")
    wmem.keys.revoke(other.split("_")[1])
    with pytest.raises(AuthError, match="revoked"):
        wmem.keys.authenticate(other)
    with pytest.raises(NotFoundError):
        wmem.keys.revoke("ffffffffffffffff")
    with pytest.raises(ValidationError, match="role"):
        wmem.keys.create("acme", "root")
    assert {k.role for k in wmem.keys.list("acme")} == {"write", "read"}


def test_logins_hold_in_every_process_and_end_in_all(make_memory, clock) -> None:
    """Two Memory objects on one home stand for two server processes."""
    one, two = make_memory(), make_memory()
    key, secret = one.keys.create("acme", "admin")
    token, session = one.keys.open_session(key, 60)
    seen = two.keys.session(token, 60)
    assert seen is not None and seen.key.key_id == key.key_id and seen.csrf == session.csrf
    assert two.keys.session("not-a-token", 60) is None
    clock.advance(minutes=59)
    assert one.keys.session(token, 60) is not None  # used: its idle clock starts again
    clock.advance(minutes=59)
    assert two.keys.session(token, 60) is not None
    two.keys.close_session(token)  # a logout in one process...
    assert one.keys.session(token, 60) is None  # ...ends it in the other
    token, _ = two.keys.open_session(key, 60)
    clock.advance(minutes=61)
    assert one.keys.session(token, 60) is None  # idle too long
    # A one-time link: taken once, whichever process tries; not after its minutes.
    link = one.keys.issue_link(secret)
    assert two.keys.redeem_link(link, 5) == key
    assert one.keys.redeem_link(link, 5) is None
    late = one.keys.issue_link(secret)
    clock.advance(minutes=6)
    assert two.keys.redeem_link(late, 5) is None
    with pytest.raises(AuthError):
        one.keys.issue_link(secret[:-1] + ("A" if secret[-1] != "A" else "B"))
    # A revoked key ends its sessions and links.
    token, _ = one.keys.open_session(key, 60)
    link = one.keys.issue_link(secret)
    two.keys.revoke(key.key_id)
    with pytest.raises(AuthError, match="revoked"):
        one.keys.session(token, 60)
    assert two.keys.session(token, 60) is None  # ended for good
    with pytest.raises(AuthError, match="revoked"):
        two.keys.redeem_link(link, 5)


def test_delete_user_removes_every_trace(make_memory, clock) -> None:
    mem = make_memory(lifecycle={"tiers": {"long_term": {"forget": "archive", "max_age_days": 1,
                                                          "min_importance": 0.0}}})
    mem.add("Ann prefers dark mode in every editor", user="ann", type="knowledge")
    mem.add_messages([{"role": "user", "content": "my laptop is a ThinkPad"}], user="ann",
                     session="ann-1")
    mem.sessions.save("ann-1", [{"role": "user", "content": "my laptop is a ThinkPad"}])
    mem.add("Bob prefers light mode", user="bob", type="knowledge")
    mem.add("Ann in another tenant", user="ann", tenant="globex")
    for _ in range(2):  # the session ends, then its turns age out of short-term
        clock.advance(days=30)
        mem.consolidate()
    assert mem.stats()["archived"] >= 2
    mem.add("Ann's current project is Atlas", user="ann")
    kept = mem.add_messages([{"role": "user", "content": "shared channel note"}], user="bob",
                            session="team")[0].memory_id
    mem.add_messages([{"role": "user", "content": "Ann's note in the team channel"}], user="ann",
                     session="team")
    mem.sessions.save("team", [{"role": "user", "content": "shared channel note"}])
    ann_id = mem.add("Ann's secret hobby is falconry", user="ann").memory_id
    report = mem.delete_user("ann")
    assert report.live >= 3 and report.archived >= 2 and report.session_files == 1
    # Her history keeps a bare delete entry, no content.
    [entry] = stores_of(mem).records.history("default", ann_id)
    assert entry.action == "delete" and entry.old is None and "falconry" not in str(entry)
    # A session with someone else's memories keeps its file; theirs stay.
    assert mem.sessions.load_session("team") and mem.get(kept)
    assert mem.search("Ann dark mode ThinkPad Atlas", include_archive=True, user="ann") == []
    assert mem.session_window("ann-1") == []
    assert mem.sessions.load_session("ann-1") == []
    assert [h.memory.content for h in mem.search("prefers mode", include_archive=True)
            if "prefers" in h.memory.content] == ["Bob prefers light mode"]
    # Another tenant's Ann is not this one.
    assert mem.search("Ann in another tenant", tenant="globex", include_archive=True)
    with pytest.raises(ValidationError):
        mem.delete_user("")



def test_a_batch_is_written_together_and_one_bad_event_holds_up_no_other(make_memory) -> None:
    wmem = make_memory(**SOURCES, update={"max_content_bytes": 400})
    for i, text in enumerate(["short note one", "x" * 1000, "short note two"]):
        body = comment(text, cid=i)
        wmem.inbox.receive("gh", body, gh_headers(body, delivery=f"g{i}"))
    transactions, inbox = counting_inbox(wmem)
    report = inbox.process()
    assert (report.claimed, report.done, report.failed) == (3, 2, 1)
    assert "max_content_bytes" in report.errors[0]
    assert sorted(r.content.split(": ", 1)[-1][:14] for r in memories_of(wmem)) == [
        "short note one", "short note two"]
    # The group was refused as a whole before any write, then each event went alone.
    assert len(transactions) == 2
    [failed] = wmem.inbox.events(tenant="acme", status="failed")
    assert "max_content_bytes" in (failed.error or "")


def test_good_events_share_one_transaction(wmem: Memory) -> None:
    for i in range(5):
        body = comment(f"remark {i} on the retry policy", cid=i)
        wmem.inbox.receive("gh", body, gh_headers(body, delivery=f"t{i}"))
    calls, inbox = counting_inbox(wmem)
    assert inbox.process().done == 5
    assert len(calls) == 1 and len(memories_of(wmem)) == 5


def test_an_outage_is_retried_later_not_failed_at_once(wmem: Memory, clock) -> None:
    body = comment()
    wmem.inbox.receive("gh", body, gh_headers(body))
    down = inbox_over(wmem, raising(StorageError("the store is away")))
    for _ in range(3):  # three polls in a row: one attempt, then it waits its retry time
        down.process()
    [event] = wmem.inbox.events(tenant="acme")
    assert (event.status, event.attempts) == ("pending", 1)
    clock.advance(seconds=wmem.settings.webhooks.retry_seconds + 1)
    assert wmem.inbox.process().done == 1
    assert len(memories_of(wmem)) == 1


def test_firing_and_resolved_in_one_batch_are_linked_once(make_memory) -> None:
    wmem = make_memory(**SOURCES, update={"associate_threshold": 1.0})
    token = {"Authorization": f"Bearer {AM_TOKEN}"}
    wmem.inbox.receive("am", alerts("firing"), token)
    wmem.inbox.receive("am", alerts("resolved"), token)
    assert wmem.inbox.process().done == 2
    by_outcome = {r.metadata["outcome"]: r for r in memories_of(wmem, everything=True)}
    firing, resolved = by_outcome["firing"], by_outcome["resolved"]
    assert firing.related_memory_ids == [resolved.memory_id]
    assert resolved.related_memory_ids == [firing.memory_id]
    links = [e for e in wmem.history(firing.memory_id, tenant="acme") if e.action == "link"]
    assert len(links) == 1


def test_an_event_with_nothing_left_to_remember_is_done(wmem: Memory) -> None:
    from varvemem.stores.base import InboxEvent

    stores_of(wmem).records.enqueue_event(InboxEvent(
        event_id=0, tenant="acme", source="gh", kind="github", delivery="p",
        body=json.dumps({"zen": "hi", "hook_id": 1}), headers={"x-github-event": "ping"},
        received_at=wmem.clock()))
    assert wmem.inbox.process().done == 1
    assert wmem.inbox.counts() == {"done": 1}


def test_the_inbox_job_drops_done_payloads_after_keep_done_days(wmem: Memory, clock) -> None:
    body = comment()
    wmem.inbox.receive("gh", body, gh_headers(body))
    assert wmem.inbox.process().done == 1
    clock.advance(days=wmem.settings.webhooks.keep_done_days - 1)
    [job] = wmem.consolidate(["inbox"]).jobs
    assert job.counts == {}  # nothing old enough yet
    clock.advance(days=2)
    assert wmem.consolidate(["inbox"]).jobs[0].counts == {"payloads_dropped": 1}
    [event] = wmem.inbox.events(tenant="acme")
    assert event.status == "done" and event.body == "" and event.memory_ids
    assert wmem.inbox.receive("gh", body, gh_headers(body)).duplicate  # still known
    assert len(memories_of(wmem)) == 1


def test_keep_done_days_none_keeps_every_payload(make_memory, clock) -> None:
    mem = make_memory(**{**SOURCES, "webhooks": {**SOURCES["webhooks"], "keep_done_days": None}})
    body = comment()
    mem.inbox.receive("gh", body, gh_headers(body))
    mem.inbox.process()
    clock.advance(days=3650)
    assert mem.consolidate(["inbox"]).jobs[0].counts == {}
    assert mem.inbox.events(tenant="acme")[0].body == body.decode()


def test_failed_events_are_retried_on_demand_once_the_cause_is_fixed(
        make_memory, clock) -> None:
    mem = make_memory(**{**SOURCES, "webhooks": {**SOURCES["webhooks"], "max_attempts": 1}})
    for i in range(2):
        body = comment(f"comment {i} on the retry path", cid=200 + i)
        mem.inbox.receive("gh", body, gh_headers(body, delivery=f"r{i}"))
    body = b'{"kind": "other tenant"}'
    mem.inbox.receive("other", body, {"X-Varvemem-Signature": "sha256=" + hmac.new(
        b"generic-secret", body, hashlib.sha256).hexdigest(), "Content-Type": "application/json"})

    down = inbox_over(mem, raising(StorageError("the store is away")))
    down.process()
    clock.advance(seconds=mem.settings.webhooks.retry_max_seconds + 1)
    down.process()  # out of attempts: failed for good
    failed = [e.event_id for e in mem.inbox.events(tenant="acme", status="failed")]
    assert len(failed) == 2
    assert [e.status for e in mem.inbox.events(tenant="globex")] == ["failed"]

    assert mem.inbox.retry([failed[0], 999_999], tenant="acme") == [failed[0]]
    assert mem.inbox.retry([failed[0]], tenant="acme") == []  # pending now, not failed
    assert mem.inbox.retry(tenant="acme") == [failed[1]]  # the rest of acme's, not globex's
    for event in mem.inbox.events(tenant="acme"):
        assert (event.status, event.attempts, event.error) == ("pending", 0, None)
    assert mem.inbox.process().done == 2
    assert len(memories_of(mem)) == 2
    assert [e.status for e in mem.inbox.events(tenant="globex")] == ["failed"]


def slow_inbox(mem: Memory, clock, seconds: float, thief: list[list[Any]]) -> Inbox:
    """``mem``'s inbox, each write taking ``seconds`` of the clock, after which a thief worker
    tries to lease everything."""

    def slow() -> None:
        clock.advance(seconds=seconds)
        thief.append(stores_of(mem).records.claim_events("thief", 10, clock(), 60, 5))

    return inbox_over(mem, slow)


def test_a_long_batch_renews_its_leases_group_by_group(make_memory, clock) -> None:
    mem = make_memory(**SOURCES, embedder={"batch_size": 1})  # one event per group
    lease = mem.settings.webhooks.lease_seconds
    for i in range(3):
        body = comment(f"comment {i} in a slow batch", cid=300 + i)
        mem.inbox.receive("gh", body, gh_headers(body, delivery=f"s{i}"))
    stolen: list[list[Any]] = []
    report = slow_inbox(mem, clock, 0.75 * lease, stolen).process(worker="w1")
    # 2.25 leases in all, yet each group renewed the rest: the thief never got one.
    assert (report.done, report.lost) == (3, 0) and stolen == [[], [], []]
    assert len(memories_of(mem)) == 3


def test_events_whose_lease_went_to_another_worker_are_left_to_it(
        make_memory, clock) -> None:
    mem = make_memory(**SOURCES, embedder={"batch_size": 1})
    for i in range(3):
        body = comment(f"comment {i} in a stalled batch", cid=400 + i)
        mem.inbox.receive("gh", body, gh_headers(body, delivery=f"t{i}"))
    stolen: list[list[Any]] = []
    report = slow_inbox(mem, clock, 2 * mem.settings.webhooks.lease_seconds,
                        stolen).process(worker="w1")
    # The first group stalled past the lease and the thief took all three: w1's write of the
    # first rolls back (its done mark needs the lease), and it leaves the other two alone.
    assert [len(s) for s in stolen] == [3]
    assert (report.done, report.lost) == (0, 3)
    assert memories_of(mem) == []
    clock.advance(seconds=61)
    assert mem.inbox.process(worker="w2").done == 3  # the thief died too: made once, here
    assert len(memories_of(mem)) == 3
