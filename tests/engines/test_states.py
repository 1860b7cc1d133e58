"""One current state per subject (engines/states.py): a resolved alert retires the memory of the
same alert firing, a passing run the failures of the same pipeline on the same branch, and a new
firing or failure the resolution or pass before it; with history on both memories, and never
another alert's, instance's, pipeline's or branch's."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import pytest
from tests.engines.test_inbox import AM_TOKEN, GH_SECRET, SOURCES

from varvemem import Memory
from varvemem.model import MemoryRecord

TOKEN = {"Authorization": f"Bearer {AM_TOKEN}"}
HARNESS = {"X-Harness-Token": "ci-token-789"}


@pytest.fixture(params=["sqlite", "postgres"])
def wmem(request: pytest.FixtureRequest, make_memory: Any) -> Memory:
    """On PostgreSQL the rule's reads see only what other transactions committed."""
    if request.param == "sqlite":
        return make_memory(**SOURCES)
    return make_memory(**SOURCES, store={
        "url": request.getfixturevalue("pg_url"),
        "postgresql": {"schema": request.getfixturevalue("pg_schema")}})


def alert(status: str, instance: str = "10.0.0.6", name: str = "HighLatency",
          starts: str = "2025-12-31T09:00:00Z", ends: str = "2025-12-31T09:40:00Z",
          fingerprint: bool = True) -> bytes:
    labels = {"alertname": name, "severity": "warning", "instance": instance, "job": "api"}
    one: dict[str, Any] = {
        "status": status, "labels": labels,
        "annotations": {"summary": f"p99 latency above 2s on {instance}"},
        "startsAt": starts, "endsAt": ends if status == "resolved" else "0001-01-01T00:00:00Z"}
    if fingerprint:
        one["fingerprint"] = hashlib.sha256(json.dumps(labels, sort_keys=True).encode()
                                            ).hexdigest()[:16]
    return json.dumps({"version": "4", "status": status, "receiver": "varvemem",
                       "alerts": [one]}).encode()


def harness(event_type: str, execution: str, pipeline: str = "deploy", end: int = 0,
            stage: str | None = None) -> bytes:
    data = {"accountIdentifier": "acct", "orgIdentifier": "default", "projectIdentifier": "shop",
            "pipelineIdentifier": pipeline, "pipelineName": pipeline.title(),
            "planExecutionId": execution, "eventType": event_type,
            "nodeStatus": "failed" if "Fail" in event_type else "success",
            "errorMessage": "ImagePullBackOff on checkout-7f9" if "Fail" in event_type else "",
            "startTs": 1767171600 + end - 300, "endTs": 1767171600 + end}
    if stage:
        data |= {"stageIdentifier": stage, "stageName": stage.title()}
    return json.dumps({"eventData": data}).encode()


def workflow_run(conclusion: str, run_id: int, branch: str, updated: str) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"action": "completed", "repository": {"full_name": "acme/shop"},
                       "workflow": {"name": "CI"},
                       "workflow_run": {"id": run_id, "name": "CI", "workflow_id": 2823525,
                                        "run_number": run_id % 100, "run_attempt": 1,
                                        "head_branch": branch, "head_sha": "a" * 40,
                                        "event": "push", "status": "completed",
                                        "conclusion": conclusion, "updated_at": updated,
                                        "run_started_at": updated}}).encode()
    sig = hmac.new(GH_SECRET.encode(), body, hashlib.sha256).hexdigest()
    return body, {"X-Hub-Signature-256": f"sha256={sig}", "X-GitHub-Event": "workflow_run",
                  "X-GitHub-Delivery": f"run-{run_id}", "Content-Type": "application/json"}


def deliver(mem: Memory, *items: tuple[str, bytes, dict[str, str]]) -> None:
    for source, body, headers in items:
        assert mem.inbox.receive(source, body, headers).event_id
    report = mem.inbox.process()
    assert report.done == len(items) and not report.errors, report


def events(mem: Memory) -> list[MemoryRecord]:
    return mem.get_all(tenant="acme", types=["event"], limit=1000, include_superseded=True)


def one(mem: Memory, *words: str) -> MemoryRecord:
    found = [r for r in events(mem) if all(w in r.content for w in words)]
    assert len(found) == 1, [r.content for r in found]
    return found[0]


def retired_by(mem: Memory, old: MemoryRecord, new: MemoryRecord) -> None:
    """``old`` superseded by ``new`` as the update engine supersedes, with history on both."""
    old = mem.get(old.memory_id, tenant="acme")
    assert old.valid_to == new.valid_from and old.superseded_by == new.memory_id
    entry = [e for e in mem.history(old.memory_id, tenant="acme") if e.action == "supersede"]
    assert len(entry) == 1 and entry[0].new == {
        "valid_to": new.valid_from.isoformat(), "superseded_by": new.memory_id}
    assert "is " + new.metadata["outcome"] in entry[0].reason
    named = [e for e in mem.history(new.memory_id, tenant="acme")
             if old.memory_id in (e.new or {}).get("supersedes", [])]
    assert len(named) == 1 and named[0].action == "update"


def current(mem: Memory, rec: MemoryRecord) -> bool:
    return mem.get(rec.memory_id, tenant="acme").valid_to is None


def test_a_resolution_retires_its_alert_firing_and_a_new_firing_the_resolution(
        wmem: Memory) -> None:
    question = "is the HighLatency alert on 10.0.0.6 still firing?"
    deliver(wmem, ("am", alert("firing"), TOKEN))
    firing = one(wmem, "[FIRING]")
    deliver(wmem, ("am", alert("resolved"), TOKEN))
    resolved = one(wmem, "[RESOLVED]")
    retired_by(wmem, firing, resolved)
    assert current(wmem, resolved)
    hits = wmem.search(question, tenant="acme")
    assert hits[0].memory.memory_id == resolved.memory_id
    assert firing.memory_id not in {h.memory.memory_id for h in hits}
    # As of while it fired, the firing memory was the current one.
    then = wmem.search(question, tenant="acme", as_of=firing.valid_from)
    assert [h.memory.memory_id for h in then] == [firing.memory_id]

    # It fires again: current again, and the resolution is retired by it.
    deliver(wmem, ("am", alert("firing", starts="2025-12-31T11:00:00Z"), TOKEN))
    again = one(wmem, "[FIRING]", "2025-12-31T11:00:00Z")
    retired_by(wmem, resolved, again)
    assert current(wmem, again)
    hits = wmem.search(question, tenant="acme")
    assert hits[0].memory.memory_id == again.memory_id
    assert {h.memory.memory_id for h in hits}.isdisjoint({firing.memory_id, resolved.memory_id})


def test_a_resolution_retires_no_other_alert(wmem: Memory) -> None:
    deliver(wmem, ("am", alert("firing"), TOKEN),
            ("am", alert("firing", instance="10.0.0.7"), TOKEN),
            ("am", alert("firing", name="HighErrorRate"), TOKEN))
    firing = one(wmem, "[FIRING] Alert HighLatency", "10.0.0.6")
    deliver(wmem, ("am", alert("resolved"), TOKEN))
    resolved = one(wmem, "[RESOLVED] Alert HighLatency", "10.0.0.6")
    retired_by(wmem, firing, resolved)
    # Another instance of the alert, another alert on the instance: still firing.
    assert current(wmem, one(wmem, "[FIRING] Alert HighLatency", "10.0.0.7"))
    assert current(wmem, one(wmem, "[FIRING] Alert HighErrorRate"))
    hits = wmem.search("is the HighLatency alert on 10.0.0.6 still firing?", tenant="acme")
    assert resolved.memory_id in {h.memory.memory_id for h in hits}
    assert firing.memory_id not in {h.memory.memory_id for h in hits}


def test_without_a_fingerprint_the_labels_name_the_alert(wmem: Memory) -> None:
    deliver(wmem, ("am", alert("firing", fingerprint=False), TOKEN),
            ("am", alert("firing", instance="10.0.0.7", fingerprint=False), TOKEN))
    deliver(wmem, ("am", alert("resolved", fingerprint=False), TOKEN))
    retired_by(wmem, one(wmem, "[FIRING]", "10.0.0.6"), one(wmem, "[RESOLVED]", "10.0.0.6"))
    assert current(wmem, one(wmem, "[FIRING]", "10.0.0.7"))


@pytest.mark.parametrize("together", [True, False])
def test_a_firing_delivered_after_its_resolution_is_never_current(
        wmem: Memory, together: bool) -> None:
    resolved, firing = ("am", alert("resolved"), TOKEN), ("am", alert("firing"), TOKEN)
    if together:  # one write: the earlier event is settled first
        deliver(wmem, resolved, firing)
    else:
        deliver(wmem, resolved)
        deliver(wmem, firing)
    late, resolution = one(wmem, "[FIRING]"), one(wmem, "[RESOLVED]")
    retired_by(wmem, late, resolution)
    assert current(wmem, resolution)


def test_a_passing_pipeline_retires_its_failures_and_no_other(wmem: Memory) -> None:
    deliver(wmem, ("ci", harness("PipelineFailed", "run-1", end=0), HARNESS),
            ("ci", harness("PipelineFailed", "run-2", end=600), HARNESS),
            ("ci", harness("PipelineFailed", "run-9", pipeline="build", end=700), HARNESS),
            ("ci", harness("StageFailed", "run-2", end=500, stage="canary"), HARNESS))
    first = one(wmem, "Execution run-1")
    second = one(wmem, 'Harness pipeline "Deploy"', "run-2")
    canary = one(wmem, 'stage "Canary"')
    assert current(wmem, first) and current(wmem, second)  # two failures: two runs
    deliver(wmem, ("ci", harness("PipelineStart", "run-3", end=900), HARNESS))
    assert current(wmem, first) and current(wmem, second)  # a start says nothing yet
    assert "state_of" not in one(wmem, "started").metadata
    deliver(wmem, ("ci", harness("PipelineSuccess", "run-3", end=1200), HARNESS))
    passed = one(wmem, "run-3", "succeeded")
    retired_by(wmem, first, passed)
    retired_by(wmem, second, passed)
    entry = [e for e in wmem.history(passed.memory_id, tenant="acme") if e.action == "update"]
    assert len(entry) == 1 and set(entry[0].new["supersedes"]) == {first.memory_id,
                                                                   second.memory_id}
    assert current(wmem, one(wmem, "run-9"))  # another pipeline
    assert current(wmem, canary)  # a stage is a subject of its own...
    deliver(wmem, ("ci", harness("StageSuccess", "run-3", end=1100, stage="canary"), HARNESS))
    retired_by(wmem, canary, one(wmem, 'stage "Canary"', "succeeded"))  # ...its pass retires it
    hits = wmem.search("is the deploy pipeline failing?", tenant="acme")
    deploy = [h.memory for h in hits if h.memory.metadata["event"]["pipeline"] == "deploy"]
    assert deploy[0].memory_id == passed.memory_id
    assert {h.memory.memory_id for h in hits}.isdisjoint(
        {first.memory_id, second.memory_id, canary.memory_id})
    # It fails again: the pass is retired.
    deliver(wmem, ("ci", harness("PipelineFailed", "run-4", end=1800), HARNESS))
    retired_by(wmem, passed, one(wmem, "run-4"))


def test_a_passing_workflow_retires_the_failures_of_its_branch_only(wmem: Memory) -> None:
    deliver(wmem, ("gh", *workflow_run("failure", 101, "main", "2025-12-31T09:00:00Z")),
            ("gh", *workflow_run("failure", 102, "feature/x", "2025-12-31T09:05:00Z")))
    main, feature = one(wmem, "#1 failed"), one(wmem, "#2 failed")
    deliver(wmem, ("gh", *workflow_run("success", 103, "main", "2025-12-31T09:30:00Z")))
    retired_by(wmem, main, one(wmem, "#3 succeeded"))
    assert current(wmem, feature)
