"""The REST API end to end: a real uvicorn server on loopback, real HTTP (httpx), every
endpoint, tenancy, and each kind of bad input answered with the right 4xx and a JSON body."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from tests.conftest import stores_of

from varvemem import Memory, Settings
from varvemem.server import create_app

GH_SECRET = "gh-secret-123"
AM_TOKEN = "am-token-456"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    memory: Memory
    admin: str  # tenant acme
    writer: str  # tenant acme
    reader: str  # tenant acme
    other: str  # tenant globex, admin

    def client(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def start_server(home: Path, embedder: Any, clock: Any = None, **overrides: Any
                 ) -> tuple[uvicorn.Server, threading.Thread, str, Memory]:
    settings = Settings.load(home=home, **{
        "webhooks": {"sources": {
            "gh": {"kind": "github", "tenant": "acme", "secret": GH_SECRET},
            "am": {"kind": "alertmanager", "tenant": "acme", "verify": "token",
                   "secret": AM_TOKEN},
            "ci": {"kind": "harness", "tenant": "acme", "verify": "url_token",
                   "secret": "harness-token-1"}},
            "poll_seconds": 0.05},
        "server": {"max_body_bytes": 64 * 1024}, **overrides})
    mem = Memory(settings=settings, embedder=embedder, clock=clock)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(memory=mem), host="127.0.0.1", port=port,
                                           log_config=None, access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    return server, thread, f"http://127.0.0.1:{port}", mem


@contextlib.contextmanager
def serving(home: Path, embedder: Any, clock: Any = None) -> Iterator[Server]:
    """A running server with four keys (see :class:`Server`), stopped on exit."""
    server, thread, url, mem = start_server(home, embedder, clock)
    keys = [mem.keys.create(t, r)[1] for t, r in
            (("acme", "admin"), ("acme", "write"), ("acme", "read"), ("globex", "admin"))]
    try:
        yield Server(url, mem, *keys)
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture
def srv(tmp_path: Path, embedder: Any) -> Iterator[Server]:
    with serving(tmp_path / "home", embedder) as running:
        yield running


@pytest.fixture
def srv_at_fixed_time(tmp_path: Path, embedder: Any, clock: Any) -> Iterator[Server]:
    """A server whose clock stands still: scores that age with time (recency) are equal in
    two rounds of the same searches, however long apart they run."""
    with serving(tmp_path / "home", embedder, clock) as running:
        yield running


def ok(resp: httpx.Response, status: int = 200) -> Any:
    assert resp.status_code == status, resp.text
    return resp.json() if resp.content else None


def refused(resp: httpx.Response, status: int, kind: str | None = None) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()["error"]
    assert body["message"]
    if kind:
        assert body["type"] == kind, body
    return body


def wait_for(predicate: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_api_documents_itself_and_reports_health(srv: Server) -> None:
    with srv.client(None) as c:
        schema = ok(c.get("/openapi.json"))
        assert {"/v1/memories", "/v1/search", "/v1/context", "/v1/ask", "/v1/webhooks/{source}",
                "/v1/sessions/{session}/turns", "/v1/documents", "/v1/users/{user}"} <= set(
            schema["paths"])
        assert "HTTPBearer" in schema["components"]["securitySchemes"]
        assert ok(c.get("/healthz")) == {"status": "ok"}
        assert ok(c.get("/readyz")) == {"status": "ready"}  # no counts: it needs no key


def test_memories_search_context_and_history(srv: Server) -> None:
    with srv.client(srv.writer) as c:
        first = ok(c.post("/v1/memories", json={"content": "The staging cluster is eks-stg-2",
                                                "tags": ["infra"], "user": "ann"}), 201)
        assert first["status"] == "created" and first["steps"]["classify"] == "rules"
        mid = first["memory_id"]
        batch = ok(c.post("/v1/memories/batch", json={"items": [
            {"content": f"Deploy note {i}: the canary runs for {i * 5} minutes"}
            for i in range(1, 6)]}), 201)
        assert len(batch["results"]) == 5
        rec = ok(c.get(f"/v1/memories/{mid}"))
        assert rec["content"] == "The staging cluster is eks-stg-2" and "embedding" not in rec
        changed = ok(c.patch(f"/v1/memories/{mid}", json={"content": "The staging cluster is "
                                                          "eks-stg-3", "reason": "migrated"}))
        assert changed["content"].endswith("eks-stg-3")
        history = ok(c.get(f"/v1/memories/{mid}/history"))["items"]
        assert [e["action"] for e in history][:2] == ["create", "update"]
        assert history[1]["reason"] == "migrated"
        assert ok(c.post(f"/v1/memories/{mid}/feedback", json={"helpful": True}))["importance"] \
            > rec["importance"]
        hits = ok(c.post("/v1/search", json={"query": "which cluster is staging?", "top_k": 3}))
        top = hits["hits"][0]
        assert top["memory_id"] == mid and set(top["scores"]) >= {"semantic", "keyword"}
        assert ok(c.post("/v1/search", json={"query": "staging", "tags": ["nope"]}))["hits"] == []
        ctx = ok(c.post("/v1/context", json={"query": "staging cluster", "max_tokens": 200}))
        assert "eks-stg-3" in ctx["context"]
        # Pages: by id, the last id as `after`, no `next` on the last page.
        seen, after = [], ""
        while True:
            page = ok(c.get("/v1/memories", params={"limit": 2, "after": after}))
            seen += [m["memory_id"] for m in page["items"]]
            if not page["next"]:
                break
            after = page["next"]
        assert len(seen) == 6 == len(set(seen)) and seen == sorted(seen)
        assert [m["content"] for m in ok(c.get("/v1/memories", params={"user": "ann"}))["items"]] \
            == ["The staging cluster is eks-stg-3"]
        assert c.delete(f"/v1/memories/{mid}").status_code == 204
        refused(c.get(f"/v1/memories/{mid}"), 404, "not_found")
        stats = ok(c.get("/v1/stats"))
        assert stats["current"] == 5 and "home" not in stats


def test_sessions_documents_ask_and_consolidate(srv: Server) -> None:
    with srv.client(srv.admin) as c:
        turns = ok(c.post("/v1/sessions/s-1/turns", json={"messages": [
            {"role": "user", "content": "Our registry is registry.acme.io", "user": "ann"},
            {"role": "assistant", "content": "Noted: registry.acme.io", "user": "ann"}]}), 201)
        assert len(turns["results"]) == 2
        window = ok(c.get("/v1/sessions/s-1"))["items"]
        assert [m["content"] for m in window] == ["Our registry is registry.acme.io",
                                                 "Noted: registry.acme.io"]
        assert ok(c.post("/v1/sessions/s-1/close"))["moved"] == 2
        doc = "# Runbook\n\n## Rollback\n\nRun `helm rollback checkout 0` then check the canary.\n"
        first = ok(c.post("/v1/documents", json={"source": "runbook.md", "text": doc}))
        assert len(first["added"]) == 1
        again = ok(c.post("/v1/documents", json={"source": "runbook.md",
                                                 "text": doc + "\n## Scale\n\nUse HPA.\n"}))
        assert again["kept"] == 1 and len(again["added"]) == 1
        assert ok(c.post("/v1/ask", json={"question": "hi"}))["route"] == "skip"
        srv.memory.save_qa("How do I roll back checkout?", "helm rollback checkout 0",
                           score=0.9, tenant="acme")
        asked = ok(c.post("/v1/ask", json={"question": "How do I roll back checkout?"}))
        assert asked["route"] == "reuse" and asked["answer"] == "helm rollback checkout 0"
        report = ok(c.post("/v1/consolidate", json={"jobs": ["sessions", "rescore"]}))
        assert [j["name"] for j in report["jobs"]] == ["sessions", "rescore"]


def test_deleting_a_user_says_what_went_where(srv: Server) -> None:
    with srv.client(srv.writer) as c:
        for text in ("Zed's pager number is 5550134", "Zed's laptop is a T14"):
            ok(c.post("/v1/memories", json={"content": text, "user": "zed"}), 201)
    with srv.client(srv.other) as c:  # another tenant's zed is not this one
        kept = ok(c.post("/v1/memories", json={"content": "globex zed", "user": "zed"}), 201)
    with srv.client(srv.admin) as c:
        body = ok(c.delete("/v1/users/zed"))
        assert body["user"] == "zed" and body["deleted"]["live"] == 2, body
        assert set(body["deleted"]) >= {"archived", "derived", "rederived", "history", "inbox",
                                        "session_files", "session_turns", "cached_answers"}
        assert ok(c.post("/v1/search", json={"query": "Zed pager laptop"}))["hits"] == []
    with srv.client(srv.other) as c:
        assert ok(c.get(f"/v1/memories/{kept['memory_id']}"))["content"] == "globex zed"


def test_keys_roles_and_tenants(srv: Server) -> None:
    with srv.client(srv.writer) as c:
        mid = ok(c.post("/v1/memories", json={"content": "acme's secret plan"}), 201)["memory_id"]
    with srv.client(None) as c:
        refused(c.get("/v1/stats"), 401, "unauthorized")
        assert c.get("/v1/stats").headers["www-authenticate"] == "Bearer"
    for bad in ("nope", "msk_0123456789abcdef_" + "x" * 43, srv.writer[:-2] + "zz"):
        with srv.client(bad) as c:
            refused(c.get("/v1/stats"), 401, "unauthorized")
    with srv.client(srv.reader) as c:
        assert ok(c.get(f"/v1/memories/{mid}"))["content"] == "acme's secret plan"
        refused(c.post("/v1/memories", json={"content": "x"}), 403, "forbidden")
        refused(c.delete(f"/v1/memories/{mid}"), 403, "forbidden")
    with srv.client(srv.writer) as c:
        refused(c.post("/v1/consolidate", json={}), 403, "forbidden")
        refused(c.delete("/v1/users/ann"), 403, "forbidden")
    # Another tenant reaches nothing of it: tests/reliability/test_cross_tenant.py.
    srv.memory.keys.revoke(srv.reader.split("_")[1])
    with srv.client(srv.reader) as c:
        assert "revoked" in refused(c.get("/v1/stats"), 401)["message"]


def test_an_expired_key_is_refused(tmp_path: Path, embedder: Any, clock_factory: Any) -> None:
    clock = clock_factory()
    server, thread, url, mem = start_server(tmp_path / "home", embedder, clock)
    try:
        key = mem.keys.create("acme", "read", expires_days=1)[1]
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as c:
            ok(c.get("/v1/stats"))
            clock.advance(days=2)
            assert "expired" in refused(c.get("/v1/stats"), 401)["message"]
    finally:
        server.should_exit = True
        thread.join(30)


def test_a_document_over_the_ingest_limit_is_refused(tmp_path: Path, embedder: Any) -> None:
    server, thread, url, mem = start_server(tmp_path / "home", embedder,
                                            update={"ingest_max_file_bytes": 2048})
    try:
        key = mem.keys.create("acme", "write")[1]
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as c:
            doc = {"source": "big.md", "text": "# Big\n\n" + "word " * 500}
            body = refused(c.post("/v1/documents", json=doc), 422)
            assert "update.ingest_max_file_bytes" in body["message"]
            small = {"source": "small.md", "text": "# Small\n\nPin chart versions.\n"}
            assert len(ok(c.post("/v1/documents", json=small))["added"]) == 1
    finally:
        server.should_exit = True
        thread.join(30)


def test_bad_requests_get_a_4xx_and_a_json_error(srv: Server) -> None:
    with srv.client(srv.writer) as c:
        refused(c.post("/v1/memories", content=b'{"content": "x"', headers={
            "Content-Type": "application/json"}), 400, "malformed_json")
        refused(c.post("/v1/memories", content=b"content=x", headers={
            "Content-Type": "application/x-www-form-urlencoded"}), 415, "unsupported_media_type")
        refused(c.post("/v1/memories", json={"content": "x" * 70_000}), 413, "payload_too_large")

        def chunks() -> Iterator[bytes]:
            yield b'{"content": "'
            for _ in range(100):
                yield b"y" * 1000
            yield b'"}'

        refused(c.post("/v1/memories", content=chunks(), headers={
            "Content-Type": "application/json"}), 413, "payload_too_large")
        refused(c.post("/v1/memories", json={"content": "ok", "colour": "red"}), 422, "invalid")
        refused(c.post("/v1/memories", json={"content": "   "}), 422, "invalid")
        refused(c.post("/v1/memories", json={"content": "x", "type": "poem"}), 422, "invalid")
        refused(c.post("/v1/memories", json=["not", "an", "object"]), 422, "invalid")
        refused(c.post("/v1/search", json={"query": "x", "top_k": 0}), 422, "invalid")
        assert "unknown retrieval profile" in refused(
            c.post("/v1/search", json={"query": "x", "profile": "nope"}), 422, "invalid")["message"]
        refused(c.post("/v1/memories", json={"content": "x", "ttl_days": 1e9}), 422, "invalid")
        refused(c.post("/v1/memories", json={"content": "x", "created_at": "9999-12-31T00:00:00Z"}),
                422, "invalid")
        refused(c.post("/v1/consolidate", json={"jobs": []}), 403)
        refused(c.get("/v1/memories", params={"limit": 0}), 422)
        refused(c.get("/v1/nowhere"), 404)
        refused(c.put("/v1/stats", json={}), 405)
        assert ok(c.get("/v1/stats"))["memories"] == 0  # nothing was stored


def gh(body: dict[str, Any], delivery: str, event: str = "issue_comment",
       secret: str = GH_SECRET) -> tuple[bytes, dict[str, str]]:
    raw = json.dumps(body).encode()
    sig = hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return raw, {"X-Hub-Signature-256": f"sha256={sig}", "X-GitHub-Event": event,
                 "X-GitHub-Delivery": delivery, "Content-Type": "application/json"}


COMMENT = {"action": "created", "repository": {"full_name": "o/r"},
           "issue": {"number": 7, "title": "Cache", "pull_request": {}},
           "comment": {"id": 1, "body": "The Redis cache must not be shared across tenants",
                       "user": {"login": "bob"}, "created_at": "2026-01-01T09:00:00Z"}}


def test_webhooks_are_accepted_once_and_become_memories(srv: Server) -> None:
    with srv.client(None) as c:
        raw, headers = gh(COMMENT, "del-1")
        accepted = ok(c.post("/v1/webhooks/gh", content=raw, headers=headers), 202)
        assert accepted["status"] == "accepted" and accepted["events"] == 1
        dup = ok(c.post("/v1/webhooks/gh", content=raw, headers=headers), 200)
        assert dup["status"] == "duplicate" and dup["event_id"] == accepted["event_id"]
        ping, ping_headers = gh({"zen": "hi", "hook_id": 3}, "del-2", event="ping")
        assert ok(c.post("/v1/webhooks/gh", content=ping, headers=ping_headers))["status"] == \
            "ignored"
        other = ok(c.post("/v1/webhooks/gh", content=raw, headers={**headers, "X-GitHub-Event":
                                                                     "deployment"}))
        assert other["status"] == "ignored" and "'deployment' is not remembered" in other["reason"]
        alert = {"version": "4", "status": "firing", "alerts": [{
            "status": "firing", "labels": {"alertname": "DiskFull", "severity": "critical"},
            "annotations": {"summary": "disk 95% on db-1"}, "startsAt": "2026-01-01T08:00:00Z",
            "fingerprint": "0011223344556677"}]}
        ok(c.post("/v1/webhooks/am", json=alert, headers={"Authorization": f"Bearer {AM_TOKEN}"}),
           202)
        repeat = ok(c.post("/v1/webhooks/am", json=alert,
                           headers={"Authorization": f"Bearer {AM_TOKEN}"}), 200)
        assert repeat["status"] == "duplicate"  # Alertmanager's repeat_interval: no memory
        # Harness can set no header: the token rides in the URL.
        run = {"eventData": {"pipelineIdentifier": "deploy", "planExecutionId": "r1",
                             "eventType": "PipelineFailed", "nodeStatus": "failed",
                             "errorMessage": "quota exceeded in eu-west-1"}}
        assert "?token=" in refused(c.post("/v1/webhooks/ci", json=run), 401)["message"]
        refused(c.post("/v1/webhooks/ci", json=run,
                       headers={"X-Varvemem-Url-Token": "harness-token-1"}), 401)
        refused(c.post("/v1/webhooks/ci?token=wrong", json=run), 401)
        ok(c.post("/v1/webhooks/ci?token=harness-token-1", json=run), 202)
    with srv.client(srv.admin) as c:
        wait_for(lambda: ok(c.get("/v1/status"))["inbox"]["done"] == 3)
        inbox = ok(c.get("/v1/inbox"))["items"]
        assert [e["status"] for e in inbox] == ["done", "done", "done"]
        hits = ok(c.post("/v1/search", json={"query": "is the redis cache shared?",
                                             "types": ["event"]}))["hits"]
        assert "must not be shared" in hits[0]["content"]
        metrics = c.get("/metrics").text
        assert 'varvemem_webhook_deliveries_total{outcome="accepted",source="gh"} 1.0' in metrics
        assert 'varvemem_webhook_deliveries_total{outcome="duplicate",source="gh"} 1.0' in metrics
        assert 'varvemem_webhook_deliveries_total{outcome="ignored",source="gh"} 2.0' in metrics
        assert 'varvemem_webhook_deliveries_total{outcome="duplicate",source="am"} 1.0' in metrics
        # The store's gauges count every tenant's data: off unless server.metrics_store_gauges.
        assert "varvemem_inbox_events" not in metrics and "varvemem_memories" not in metrics
        assert "varvemem_http_request_duration_seconds_bucket" in metrics
        assert 'varvemem_inbox_processed_events_total{outcome="done"}' in metrics


def test_status_shows_the_admin_key_tenant_only(srv: Server) -> None:
    """GET /v1/status: the key's tenant's memories by tier and inbox by status (what /readyz
    showed for all tenants), for an admin key; other tenants' data never shows."""
    with srv.client(None) as c:
        raw, headers = gh(COMMENT, "del-s")
        ok(c.post("/v1/webhooks/gh", content=raw, headers=headers), 202)  # tenant acme
    with srv.client(srv.writer) as c:
        ok(c.post("/v1/memories", json={"content": "acme keeps its runbooks in the wiki"}), 201)
    with srv.client(srv.admin) as c:
        wait_for(lambda: ok(c.get("/v1/status"))["inbox"]["done"] == 1)
        acme = ok(c.get("/v1/status"))
        assert acme["tenant"] == "acme"
        assert acme["inbox"] == {"pending": 0, "processing": 0, "done": 1, "failed": 0}
        assert sum(acme["memories_by_tier"].values()) == 2
    with srv.client(srv.other) as c:
        globex = ok(c.get("/v1/status"))
        assert globex["tenant"] == "globex" and set(globex["inbox"].values()) == {0}
        assert set(globex["memories_by_tier"].values()) == {0}
        assert set(globex["memories_by_tier"]) == set(acme["memories_by_tier"])
    for key in (srv.writer, srv.reader):
        with srv.client(key) as c:
            refused(c.get("/v1/status"), 403)
    with srv.client(None) as c:
        refused(c.get("/v1/status"), 401)


def test_store_gauges_are_exported_when_configured(tmp_path: Path, embedder: Any) -> None:
    server, thread, url, mem = start_server(tmp_path / "home", embedder,
                                            server={"metrics_store_gauges": True})
    try:
        key = mem.keys.create("acme", "write")[1]
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as c:
            ok(c.post("/v1/memories", json={"content": "the gauges count this memory"}), 201)
            metrics = c.get("/metrics").text
        assert 'varvemem_inbox_events{status="pending"} 0.0' in metrics
        assert 'varvemem_memories{tier="long_term"} 1.0' in metrics or \
            'varvemem_memories{tier="mid_term"} 1.0' in metrics
    finally:
        server.should_exit = True
        thread.join(30)


def test_failed_webhook_events_are_retried_by_an_admin(srv: Server) -> None:
    from varvemem.stores.base import InboxEvent

    eid, _ = stores_of(srv.memory).records.enqueue_event(InboxEvent(
        event_id=0, tenant="acme", source="gh", kind="github", delivery="broken", body="[1]",
        headers={"x-github-event": "issue_comment"}, received_at=srv.memory.clock()))
    with srv.client(srv.admin) as c:
        wait_for(lambda: ok(c.get("/v1/inbox?status=failed"))["items"])
        refused(c.post("/v1/inbox/retry", json={"event_ids": ["x"]}), 422)
        refused(c.post("/v1/inbox/retry", json={"event_ids": [2**70]}), 422)
        with srv.client(srv.other) as other:  # another tenant's admin re-arms nothing
            assert ok(other.post("/v1/inbox/retry", json={}))["retried"] == []
        with srv.client(srv.writer) as writer:
            refused(writer.post("/v1/inbox/retry", json={}), 403)
        assert ok(c.post("/v1/inbox/retry", json={"event_ids": [eid]}))["retried"] == [eid]
        # Still malformed: the drain fails it again, with one attempt this time.
        wait_for(lambda: ok(c.get("/v1/inbox?status=failed"))["items"])
        [event] = ok(c.get("/v1/inbox?status=failed"))["items"]
        assert event["event_id"] == eid and event["attempts"] == 1


def test_bad_webhooks_get_a_4xx_and_store_nothing(srv: Server) -> None:
    raw, headers = gh(COMMENT, "bad-1")
    cases = [
        ("/v1/webhooks/nope", raw, headers, 404, "not_found"),
        ("/v1/webhooks/gh", raw, {**headers, "X-Hub-Signature-256": "sha256=00"}, 401,
         "unauthorized"),
        ("/v1/webhooks/gh", raw, {k: v for k, v in headers.items()
                                  if k != "X-Hub-Signature-256"}, 401, "unauthorized"),
        ("/v1/webhooks/gh", *gh({"action": "created"}, "bad-3"), 422, "invalid"),
        ("/v1/webhooks/gh", b"{oops", gh(COMMENT, "bad-4")[1], 401, "unauthorized"),
        ("/v1/webhooks/gh", raw, {**headers, "Content-Type": "text/plain"}, 415,
         "unsupported_media_type"),
        ("/v1/webhooks/gh", *gh({**COMMENT, "pad": "x" * 70_000}, "bad-5"), 413,
         "payload_too_large"),
        ("/v1/webhooks/am", json.dumps({"alerts": []}).encode(),
         {"Content-Type": "application/json", "Authorization": "Bearer wrong"}, 401,
         "unauthorized"),
    ]
    with srv.client(None) as c:
        for path, body, hdrs, status, kind in cases:
            refused(c.post(path, content=body, headers=hdrs), status, kind)
        # Chunked (no Content-Length): the gate counts while it reads.
        refused(c.post("/v1/webhooks/gh", content=iter([b"x" * 40_000, b"x" * 40_000]),
                       headers=headers), 413, "payload_too_large")
        # Malformed JSON with a valid signature: 422, named.
        bad = b'{"action": "created",'
        sig = hmac.new(GH_SECRET.encode(), bad, hashlib.sha256).hexdigest()
        msg = refused(c.post("/v1/webhooks/gh", content=bad, headers={
            **headers, "X-Hub-Signature-256": f"sha256={sig}", "X-GitHub-Delivery": "bad-6"}),
            422)["message"]
        assert "malformed JSON" in msg
    assert srv.memory.inbox.counts() == {}
    with srv.client(srv.admin) as c:  # every refusal is counted, the gate's 413 and 415 too
        metrics = c.get("/metrics").text
    for outcome, n in (("too_large", 2), ("unsupported_media_type", 1), ("bad_signature", 3),
                       ("invalid", 2)):
        assert f'varvemem_webhook_deliveries_total{{outcome="{outcome}",source="gh"}} {n}.0' \
            in metrics, (outcome, metrics)
    assert 'varvemem_webhook_deliveries_total{outcome="unknown_source",source="unknown"} 1.0' \
        in metrics


class Gate:
    """A TCP forwarder to a server that can be shut (every connection cut, new ones refused)
    and opened again on the same port: the store going away and coming back, for this test's
    connections only."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.listener: socket.socket | None = None
        self.open()

    def open(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # shut
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def shut(self) -> None:
        if self.listener is not None:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (close alone does not)
            self.listener.close()
            self.listener = None
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def test_an_unreachable_store_is_answered_503_and_ready_again_when_it_is_back(
        tmp_path: Path, embedder: Any, pg_url: str, pg_schema: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """The store of record (PostgreSQL) cut off under a running server: /readyz and the API
    answer 503 "unavailable" with a JSON error that does not give the store's address away
    (the log has it; the process is still up: /healthz 200), and both serve again once the
    store is reachable."""
    from urllib.parse import urlsplit

    parts = urlsplit(pg_url)
    gate = Gate((parts.hostname or "127.0.0.1", parts.port or 5432))
    via_gate = parts._replace(netloc=f"{parts.username}@127.0.0.1:{gate.port}").geturl()
    server, thread, url, mem = start_server(
        tmp_path / "home", embedder,
        store={"url": via_gate, "connect_timeout": 2,
               "postgresql": {"schema": pg_schema, "pool_size": 2}})
    try:
        key = mem.keys.create("acme", "write")[1]
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"},
                          timeout=60) as c:
            mid = ok(c.post("/v1/memories", json={"content": "The staging cluster is "
                                                  "eks-stg-2"}), 201)["memory_id"]
            assert ok(c.get("/readyz"))["status"] == "ready"

            gate.shut()
            secrets = (pg_schema, str(gate.port), "127.0.0.1", "postgres", "PostgreSQL")
            with caplog.at_level(logging.WARNING, "varvemem.server"):
                for resp in (c.get("/readyz"),
                             c.post("/v1/search", json={"query": "staging cluster"}),
                             c.post("/v1/memories", json={"content": "written while it is down"}),
                             c.get("/v1/stats"), c.get(f"/v1/memories/{mid}"),
                             c.get(f"/v1/memories/{mid}/history")):
                    body = refused(resp, 503, "unavailable")
                    assert body["message"] == "the store is unavailable; the server's log says why"
                    assert not [s for s in secrets if s in resp.text]
            assert ok(c.get("/healthz")) == {"status": "ok"}
            assert any(pg_schema in r.getMessage() for r in caplog.records)

            gate.open()
            wait_for(lambda: c.get("/readyz").status_code == 200, timeout=60)
            hits = ok(c.post("/v1/search", json={"query": "staging cluster"}))["hits"]
            assert [h["memory_id"] for h in hits] == [mid]
            assert [r.content for r in mem.get_all(tenant="acme")] == [
                "The staging cluster is eks-stg-2"]
    finally:
        server.should_exit = True
        thread.join(30)
        gate.shut()
        mem.close()


def test_concurrent_clients_get_what_serial_calls_get_and_the_loop_stays_free(
        srv_at_fixed_time: Server) -> None:
    """The routes hand their calls to the memory's worker (AsyncMemory): many clients at once
    get the answers one client gets, and while the worker is busy the event loop still
    answers (health, other requests queue rather than fail). The clock is pinned: with the
    wall clock, recency moved between the two rounds (0.868977 against 0.868976 once, on a
    loaded machine)."""
    from concurrent.futures import ThreadPoolExecutor

    from varvemem import AsyncMemory

    srv = srv_at_fixed_time

    facts = [f"Service svc-{i} is deployed in region zone-{i % 3} by team {name}"
             for i, name in enumerate(["Ana", "Bo", "李雷", "韩梅梅", "Chen", "Dee", "Eve", "Fu"])]

    def add(fact: str) -> str:
        with srv.client(srv.writer) as c:
            return str(ok(c.post("/v1/memories", json={"content": fact}), 201)["memory_id"])

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(add, facts))
    assert len(set(ids)) == len(facts)
    queries = ["which team deploys svc-3?", "zone-1 的服务", "svc-7 region", "韩梅梅负责什么"]

    def search(q: str) -> list[tuple[str, float]]:
        with srv.client(srv.reader) as c:
            hits = ok(c.post("/v1/search", json={"query": q, "top_k": 5}))["hits"]
            return [(h["memory_id"], h["score"]) for h in hits]

    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(search, queries * 4))
    alone = [search(q) for q in queries]
    assert together == alone * 4

    # Hold the worker; the loop must still answer /healthz, and a search waits, then succeeds.
    release = threading.Event()
    holder = threading.Thread(
        target=lambda: AsyncMemory(srv.memory).run_blocking(lambda m: release.wait(10)))
    holder.start()
    try:
        time.sleep(0.2)
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(search, queries[0])
            with srv.client(None) as c:
                started = time.monotonic()
                assert ok(c.get("/healthz"))["status"] == "ok"
                assert time.monotonic() - started < 5
            assert not waiting.done()
            release.set()
            assert waiting.result(30) == alone[0]
    finally:
        release.set()
        holder.join(10)
