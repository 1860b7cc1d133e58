"""Bad input over real HTTP (issue 18): a lone surrogate, metadata nested too deep, dates whose
offset leaves the range of dates. Each is a 422 naming the field and stores nothing; an
unexpected exception is a JSON 500 with a request id, on a connection that stays usable. (The
whole bad-input set, any 4xx but never a 5xx: tests/reliability/test_bad_input.py.)"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from varvemem.benchmarks.reliability import OUT_OF_RANGE, nested
from varvemem.server.app import JsonLogFormatter

from .test_server import Server, start_server


def raw(client: httpx.Client, method: str, path: str, body: str) -> httpx.Response:
    """``body`` sent as is: JSON text with ``\\ud800`` escapes that json.dumps would not write
    from Python strings the same way."""
    return client.request(method, path, content=body.encode(),
                          headers={"Content-Type": "application/json"})


@pytest.fixture
def srv(tmp_path: Path, embedder: Any) -> Iterator[Server]:
    server, thread, url, mem = start_server(tmp_path / "home", embedder,
                                            server={"max_body_bytes": 1024 * 1024})
    keys = [mem.keys.create(t, r)[1] for t, r in
            (("acme", "admin"), ("acme", "write"), ("acme", "read"), ("globex", "admin"))]
    yield Server(url, mem, *keys)
    server.should_exit = True
    thread.join(30)


def refused(resp: httpx.Response, field: str) -> None:
    assert resp.status_code == 422, resp.text
    err = resp.json()["error"]
    assert err["type"] == "invalid"
    assert field in err["message"], err["message"]
    assert resp.headers.get("connection") != "close"


def count(srv: Server) -> int:
    return len(srv.memory.get_all(tenant="acme", include_superseded=True))


@pytest.mark.parametrize(("body", "field"), [
    ('{"content": "hello \\ud800 there"}', "content"),
    ('{"content": "deploys are on fridays", "tags": ["ok", "bad\\ud800"]}', "tags"),
    ('{"content": "deploys are on fridays", "metadata": {"k": "v\\udfff"}}', "metadata"),
    ('{"content": "deploys are on fridays", "metadata": {"k\\ud800": 1}}', "metadata"),
    ('{"content": "deploys are on fridays", "metadata": {"a": [{"b": ["\\ud800"]}]}}',
     "metadata"),
    ('{"content": "deploys are on fridays", "source": "x\\ud800"}', "source"),
])
def test_a_lone_surrogate_is_a_422_naming_the_field(srv: Server, body: str, field: str) -> None:
    with srv.client(srv.writer) as c:
        refused(raw(c, "POST", "/v1/memories", body), field)
        refused(raw(c, "POST", "/v1/memories/batch", f'{{"items": [{body}]}}'), field)
    assert count(srv) == 0


@pytest.mark.parametrize("depth", [33, 254, 255, 300])
def test_metadata_nested_too_deep_is_a_422(srv: Server, depth: int) -> None:
    with srv.client(srv.writer) as c:
        body = {"content": "the runbook lives in the wiki", "metadata": nested(depth)}
        refused(c.post("/v1/memories", json=body), "metadata")
        refused(c.post("/v1/memories/batch", json={"items": [body]}), "items[0].metadata")
        ok = c.post("/v1/memories", json={**body, "metadata": nested(32)})
        assert ok.status_code == 201, ok.text
        mid = ok.json()["memory_id"]
        refused(c.patch(f"/v1/memories/{mid}", json={"metadata": nested(depth)}), "metadata")
        assert c.get(f"/v1/memories/{mid}").json()["metadata"] == nested(32)
        assert c.get(f"/v1/memories/{mid}/history").status_code == 200
        assert c.get("/v1/memories").status_code == 200
    assert count(srv) == 1


def test_metadata_and_tags_over_their_limits_are_a_422(srv: Server) -> None:
    with srv.client(srv.writer) as c:
        big = {"content": "the runbook lives in the wiki", "metadata": {"k": "x" * 70_000}}
        refused(c.post("/v1/memories", json=big), "update.metadata_max_bytes")
        long_tag = {"content": "the runbook lives in the wiki", "tags": ["t" * 201]}
        refused(c.post("/v1/memories", json=long_tag), "update.tag_max_chars")
        mid = c.post("/v1/memories", json={"content": "the runbook lives in the wiki",
                                           "metadata": {"a": "x" * 40_000}}).json()["memory_id"]
        # The merged metadata is what would be stored: checked before the change is written.
        refused(c.patch(f"/v1/memories/{mid}", json={"metadata": {"b": "y" * 40_000}}),
                "metadata")
        refused(raw(c, "PATCH", f"/v1/memories/{mid}", '{"tags": ["\\ud800"]}'), "tags")
        refused(raw(c, "POST", f"/v1/memories/{mid}/feedback",
                    '{"helpful": true, "reason": "\\ud800"}'), "reason")
    assert [e.action for e in srv.memory.history(mid, tenant="acme")] == ["create"]


@pytest.mark.parametrize("when", OUT_OF_RANGE)
def test_a_date_out_of_range_in_utc_is_a_422(srv: Server, when: str) -> None:
    with srv.client(srv.writer) as c:
        refused(c.post("/v1/memories", json={"content": "we ship on tuesdays",
                                             "created_at": when}), "created_at")
        refused(c.post("/v1/memories/batch", json={"items": [
            {"content": "we ship on tuesdays", "created_at": when}]}), "created_at")
        for field in ("as_of", "since", "until"):
            for path in ("/v1/search", "/v1/context"):
                refused(c.post(path, json={"query": "ship", field: when}), field)
    assert count(srv) == 0


def test_dates_are_normalised_to_utc(srv: Server) -> None:
    with srv.client(srv.writer) as c:
        resp = c.post("/v1/memories", json={"content": "we ship on tuesdays",
                                            "created_at": "2024-05-01T23:30:00-02:00"})
        assert resp.status_code == 201, resp.text
        rec = c.get(f"/v1/memories/{resp.json()['memory_id']}").json()
        assert rec["created_at"].startswith("2024-05-02T01:30:00")
        hits = c.post("/v1/search", json={"query": "ship", "since": "2024-05-02T01:00:00+01:00",
                                          "until": "2024-05-02T03:00:00+01:00"})
        assert hits.status_code == 200 and len(hits.json()["hits"]) == 1


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(JsonLogFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_an_unexpected_error_is_a_json_500_with_a_request_id(
        srv: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    handler = _Lines()
    logger = logging.getLogger("varvemem.server")
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.INFO)

    def boom(**_: Any) -> dict[str, Any]:
        raise RuntimeError("injected failure")

    try:
        with srv.client(srv.reader) as c:
            assert c.get("/v1/stats").status_code == 200
            before = c.get("/healthz").extensions["network_stream"].get_extra_info("client_addr")
            monkeypatch.setattr(srv.memory, "stats", boom)
            handler.lines.clear()
            resp = c.get("/v1/stats")
            assert resp.status_code == 500
            err = resp.json()["error"]
            assert err["type"] == "internal" and err["message"]
            assert "injected" not in err["message"]  # the details stay in the log
            assert err["request_id"] and resp.headers["X-Request-ID"] == err["request_id"]
            assert resp.headers.get("connection") != "close"
            # The same connection answers the next request.
            again = c.get("/healthz")
            assert again.status_code == 200
            assert again.extensions["network_stream"].get_extra_info("client_addr") == before
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    failed = [json.loads(line) for line in handler.lines if '"status": 500' in line]
    assert len(failed) == 1, handler.lines
    assert failed[0]["level"] == "error" and failed[0]["request_id"] == err["request_id"]
    assert "RuntimeError: injected failure" in failed[0]["exc"]
    assert all("\n" not in line for line in handler.lines)
