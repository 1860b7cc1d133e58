"""Through the webhook route of a real server: a resolved alert retires the memory of the same
alert firing (another instance of it stays firing), and a workflow that passes retires its
failures on the same branch (another branch's stay), so a search serves the current state."""

from __future__ import annotations

import copy
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


@pytest.fixture
def server(tmp_path: Path, embedder: Any) -> Iterator[tuple[str, Any, str]]:
    srv, thread, url, mem = start_server(tmp_path / "home", embedder)
    yield url, mem, mem.keys.create("acme", "read")[1]
    srv.should_exit = True
    thread.join(30)


def notification(states: dict[str, str]) -> dict[str, Any]:
    """An Alertmanager notification of the HighLatency group: one alert per instance, in the
    state given (Alertmanager sends the group's firing alerts again with a resolved one)."""
    alerts = []
    for instance, status in states.items():
        labels = {"alertname": "HighLatency", "severity": "warning", "instance": instance,
                  "job": "api"}
        alerts.append({
            "status": status, "labels": labels,
            "annotations": {"summary": f"p99 latency above 2s on {instance}"},
            "startsAt": "2025-12-31T09:00:00Z",
            "endsAt": "2025-12-31T09:40:00Z" if status == "resolved" else "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus:9090/graph?g0.expr=latency",
            "fingerprint": hashlib.sha256(instance.encode()).hexdigest()[:16]})
    firing = any(s == "firing" for s in states.values())
    return {"version": "4", "groupKey": '{}:{alertname="HighLatency"}',
            "status": "firing" if firing else "resolved", "receiver": "varvemem",
            "groupLabels": {"alertname": "HighLatency"},
            "commonLabels": {"alertname": "HighLatency", "job": "api"},
            "externalURL": "http://alertmanager:9093", "truncatedAlerts": 0, "alerts": alerts}


def events(mem: Any) -> list[Any]:
    return mem.get_all(tenant="acme", types=["event"], include_superseded=True, limit=100)


def search(url: str, key: str, query: str) -> list[str]:
    resp = httpx.post(f"{url}/v1/search", json={"query": query},
                      headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert resp.status_code == 200, resp.text
    return [h["memory_id"] for h in resp.json()["hits"]]


def test_a_resolved_alert_is_served_not_its_stale_firing(server: tuple[str, Any, str]) -> None:
    url, mem, key = server
    token = {"Authorization": f"Bearer {AM_TOKEN}"}
    with httpx.Client(base_url=url, timeout=30) as c:
        both = notification({"10.0.0.6": "firing", "10.0.0.7": "firing"})
        assert c.post("/v1/webhooks/am", json=both, headers=token).status_code == 202
        wait_for(lambda: mem.inbox.counts(tenant="acme").get("done") == 1)
        one_resolved = notification({"10.0.0.6": "resolved", "10.0.0.7": "firing"})
        assert c.post("/v1/webhooks/am", json=one_resolved, headers=token).status_code == 202
        wait_for(lambda: mem.inbox.counts(tenant="acme").get("done") == 2)
    made = {(r.metadata["event"]["instance"], r.metadata["outcome"]): r for r in events(mem)}
    assert len(made) == 3  # the still-firing alert sent again is no new memory
    firing, resolved = made[("10.0.0.6", "firing")], made[("10.0.0.6", "resolved")]
    assert firing.valid_to == resolved.valid_from and firing.superseded_by == resolved.memory_id
    assert any(e.action == "supersede" and e.new["superseded_by"] == resolved.memory_id
               for e in mem.history(firing.memory_id, tenant="acme"))
    assert any(firing.memory_id in (e.new or {}).get("supersedes", [])
               for e in mem.history(resolved.memory_id, tenant="acme"))
    other = made[("10.0.0.7", "firing")]
    assert other.valid_to is None  # another instance: still firing
    hits = search(url, key, "is the HighLatency alert on 10.0.0.6 still firing?")
    assert resolved.memory_id in hits and firing.memory_id not in hits


def test_a_passing_workflow_retires_its_failures_on_its_branch(
        examples: list[tuple[str, dict[str, Any]]],  # noqa: F811
        server: tuple[str, Any, str]) -> None:
    url, mem, key = server
    passed = next(p for n, p in examples if n == "workflow_run" and p["action"] == "completed"
                  and p["workflow_run"]["conclusion"] == "success")
    branch = passed["workflow_run"]["head_branch"]

    def failed(run_id: int, on: str) -> dict[str, Any]:
        run = copy.deepcopy(passed)
        run["workflow_run"] |= {"id": run_id, "run_number": run_id, "conclusion": "failure",
                                "head_branch": on, "updated_at": "2020-10-05T15:00:00Z"}
        return run

    with httpx.Client(base_url=url, timeout=30) as c:
        for n, payload in enumerate((failed(901, branch), failed(902, "feature"), passed)):
            body = json.dumps(payload).encode()
            sig = hmac.new(GH_SECRET.encode(), body, hashlib.sha256).hexdigest()
            resp = c.post("/v1/webhooks/gh", content=body, headers={
                "Content-Type": "application/json", "X-GitHub-Event": "workflow_run",
                "X-GitHub-Delivery": f"run-{n}", "X-Hub-Signature-256": f"sha256={sig}"})
            assert resp.status_code == 202, resp.text
    wait_for(lambda: mem.inbox.counts(tenant="acme").get("done") == 3)
    made = {(r.metadata["event"]["branch"], r.metadata["outcome"]): r for r in events(mem)}
    success, failure = made[(branch, "success")], made[(branch, "failure")]
    assert failure.superseded_by == success.memory_id and failure.valid_to == success.valid_from
    assert made[("feature", "failure")].valid_to is None  # another branch: still failing
    repo = passed["repository"]["full_name"]
    hits = search(url, key, f"is the workflow of {repo} failing on {branch}?")
    assert success.memory_id in hits and failure.memory_id not in hits
