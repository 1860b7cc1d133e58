"""A delivery received before is answered the same way whatever its sender: GitHub's
*Redeliver* (the same ``X-GitHub-Delivery``), Harness sending the same notification again,
Alertmanager's ``repeat_interval``: ``200 {"status": "duplicate"}`` with the first event's
id, and no second memory. A real server, GitHub's own example payloads."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.e2e.test_github_examples import examples  # noqa: F401 - a fixture
from tests.e2e.test_server import AM_TOKEN, GH_SECRET, start_server, wait_for

HARNESS = {"eventData": {
    "accountIdentifier": "acct1", "orgIdentifier": "default", "projectIdentifier": "payments",
    "pipelineIdentifier": "deploy_prod", "pipelineName": "Deploy Prod",
    "planExecutionId": "Xy12AbCd", "eventType": "PipelineFailed", "nodeStatus": "failed",
    "errorMessage": "Helm upgrade failed: timed out waiting for the condition",
    "startTs": 1709632800, "endTs": 1709633100}}
ALERTS = {"version": "4", "status": "firing", "receiver": "varvemem",
          "groupKey": '{}:{alertname="HighErrorRate"}', "alerts": [{
              "status": "firing", "labels": {"alertname": "HighErrorRate", "severity": "critical",
                                             "instance": "api-1:9090"},
              "annotations": {"summary": "5xx above 5%"}, "startsAt": "2024-03-05T10:00:00Z",
              "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "a1b2c3d4e5f60718"}]}


@pytest.fixture
def server(tmp_path: Path, embedder: Any) -> Iterator[tuple[str, Any]]:
    srv, thread, url, mem = start_server(tmp_path / "home", embedder)
    yield url, mem
    srv.should_exit = True
    thread.join(30)


def signed(name: str, payload: dict[str, Any], delivery: str) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(payload).encode()
    sig = hmac.new(GH_SECRET.encode(), body, hashlib.sha256).hexdigest()
    return body, {"Content-Type": "application/json", "X-GitHub-Event": name,
                  "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": f"sha256={sig}"}


def example(payloads: list[tuple[str, dict[str, Any]]], name: str, action: str
            ) -> dict[str, Any]:
    return next(p for n, p in payloads if n == name and p.get("action") == action)


def test_a_redelivery_is_a_duplicate_for_every_sender(
        examples: list[tuple[str, dict[str, Any]]], server: tuple[str, Any]) -> None:  # noqa: F811
    url, mem = server
    comment = example(examples, "issue_comment", "created")
    run = example(examples, "workflow_run", "completed")
    with httpx.Client(base_url=url, timeout=30) as c:
        firsts: list[int] = []
        for name, payload, delivery in (("issue_comment", comment, "72d3162e-1"),
                                        ("workflow_run", run, "72d3162e-2")):
            body, headers = signed(name, payload, delivery)
            first = c.post("/v1/webhooks/gh", content=body, headers=headers)
            assert first.status_code == 202, first.text
            firsts.append(first.json()["event_id"])
            # GitHub's Redeliver button: the same body under the same delivery id, twice.
            for _ in range(2):
                again = c.post("/v1/webhooks/gh", content=body, headers=headers)
                assert again.status_code == 200, again.text
                assert again.json()["status"] == "duplicate"
                assert again.json()["event_id"] == firsts[-1]
        # Harness has no delivery id: the same notification again is the same body.
        first = c.post("/v1/webhooks/ci?token=harness-token-1", json=HARNESS)
        assert first.status_code == 202, first.text
        again = c.post("/v1/webhooks/ci?token=harness-token-1", json=HARNESS)
        assert again.status_code == 200, again.text
        assert again.json() | {"message": ""} == {
            "status": "duplicate", "event_id": first.json()["event_id"], "message": ""}
        # Alertmanager's repeat_interval: the same alert states, the same answer.
        token = {"Authorization": f"Bearer {AM_TOKEN}"}
        first = c.post("/v1/webhooks/am", json=ALERTS, headers=token)
        assert first.status_code == 202, first.text
        again = c.post("/v1/webhooks/am", json=ALERTS, headers=token)
        assert again.status_code == 200, again.text
        assert again.json()["status"] == "duplicate"
        assert again.json()["event_id"] == first.json()["event_id"]
        metrics = c.get("/metrics").text
    wait_for(lambda: mem.inbox.counts(tenant="acme").get("done") == 4)
    made = mem.get_all(tenant="acme", types=["event"], limit=100, include_superseded=True)
    assert len(made) == 4  # one memory per event: nothing stored twice
    assert len(mem.inbox.events(tenant="acme")) == 4
    for source, count in (("gh", 4), ("ci", 1), ("am", 1)):
        assert (f'varvemem_webhook_deliveries_total{{outcome="duplicate",source="{source}"}} '
                f"{count}.0") in metrics
    assert 'outcome="repeat"' not in metrics
