"""Webhook payloads to events: Harness, GitHub comments, Alertmanager, generic JSON."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from varvemem.errors import UnsupportedEventError, ValidationError
from varvemem.events import CONTENT_CAP, FIELD_CAP, KINDS, ParsedEvent, alertmanager, parse, read

UTC = timezone.utc
EXEC_URL = ("https://app.harness.io/ng/account/acct1/cd/orgs/default/projects/payments/pipelines/"
            "deploy_prod/executions/Xy12AbCd/pipeline")


def one(kind: str, payload: Any, headers: dict[str, str] | None = None) -> ParsedEvent:
    events = parse(kind, payload, headers)
    assert len(events) == 1
    return events[0]


# --- Harness ------------------------------------------------------------------------------------

def harness_stage_failed() -> dict[str, Any]:
    return {"eventData": {
        "accountIdentifier": "acct1", "orgIdentifier": "default", "projectIdentifier": "payments",
        "pipelineIdentifier": "deploy_prod", "pipelineName": "Deploy Prod", "planExecutionId": "Xy12AbCd",
        "stageIdentifier": "deploy", "stageName": "Deploy", "eventType": "StageFailed",
        "nodeStatus": "failed", "errorMessage": "Helm upgrade failed: timed out waiting for the condition",
        "executionUrl": EXEC_URL, "pipelineUrl": "https://app.harness.io/pipelines/deploy_prod",
        "triggeredBy": {"name": "alice", "email": "alice@example.com", "triggerType": "MANUAL"},
        "startTs": 1709632800, "startTime": "Tue Mar 05 10:00:00 UTC 2024", "endTs": 1709633100,
        "tag": [{"key": "team", "value": "payments"}],
    }}


def test_harness_stage_failure_from_event_data() -> None:
    event = one("harness", harness_stage_failed())
    assert event.outcome == "failure"
    assert event.source == "harness:acct1/default/payments/deploy_prod/Xy12AbCd/deploy:stagefailed"
    assert event.tags == ["harness", "pipeline", "stage", "failed", "deploy_prod", "stage:deploy"]
    assert event.content.startswith(
        'Harness stage "Deploy" (deploy) of pipeline "Deploy Prod" (deploy_prod) failed in default/payments.')
    assert "Error: Helm upgrade failed: timed out waiting for the condition." in event.content
    assert "Triggered by alice <alice@example.com> (MANUAL)." in event.content
    assert event.content.endswith(EXEC_URL)  # no full stop glued to the link
    assert event.occurred_at == datetime(2024, 3, 5, 10, 5, tzinfo=UTC)  # the end, for a failure
    assert event.link_key is None
    assert event.fields == {
        "account": "acct1", "org": "default", "project": "payments", "pipeline": "deploy_prod",
        "pipeline_name": "Deploy Prod", "stage": "deploy", "stage_name": "Deploy", "execution_id": "Xy12AbCd",
        "event_type": "StageFailed", "status": "failed", "level": "stage",
        "error": "Helm upgrade failed: timed out waiting for the condition", "url": EXEC_URL,
        "pipeline_url": "https://app.harness.io/pipelines/deploy_prod",
        "started_at": "2024-03-05T10:00:00Z", "ended_at": "2024-03-05T10:05:00Z",
        "triggered_by": "alice", "triggered_by_email": "alice@example.com", "trigger_type": "MANUAL",
        "pipeline_tags": ["team:payments"],
    }
    json.dumps(event.fields)


def test_harness_top_level_aliases_and_millisecond_timestamps() -> None:
    payload = {"accountId": "acct1", "orgIdentifier": "default", "projectIdentifier": "payments",
               "pipelineIdentifier": "build", "executionId": "run42", "eventType": "PIPELINE_SUCCESS",
               "status": "SUCCEEDED", "startTs": 1709632800000, "endTime": "2024-03-05T10:07:30.5+01:00",
               "pipelineExecutionUrl": "https://harness.example/run42", "triggeredBy": "ci-bot"}
    event = one("harness", payload)
    assert event.outcome == "success"
    assert event.source == "harness:acct1/default/payments/build/run42:pipelinesuccess"
    assert event.tags == ["harness", "pipeline", "succeeded", "build"]
    assert event.occurred_at == datetime(2024, 3, 5, 9, 7, 30, 500000, tzinfo=UTC)
    assert event.fields["started_at"] == "2024-03-05T10:00:00Z"
    assert event.fields["triggered_by"] == "ci-bot"
    assert event.fields["url"] == "https://harness.example/run42"


@pytest.mark.parametrize(("event_type", "status", "outcome", "state"), [
    ("PipelineStart", "started", "started", "started"),
    ("StageStart", None, "started", "started"),
    ("PipelineSuccess", None, "success", "succeeded"),
    ("PipelineFailed", "failed", "failure", "failed"),
    ("StepFailed", "FAILED", "failure", "failed"),
    ("PipelineEnd", "completed", "success", "succeeded"),
    ("PipelineEnd", "aborted", "failure", "failed"),
    ("PipelineEnd", "expired", "failure", "failed"),
    ("PipelinePaused", "paused", "event", "paused"),
    ("WaitingForUserAction", None, "event", "waitingforuseraction"),
    (None, "running", "started", "started"),
    (None, "error", "failure", "failed"),
    (None, None, "event", "event"),
])
def test_harness_outcomes(event_type: str | None, status: str | None, outcome: str, state: str) -> None:
    payload: dict[str, Any] = {"pipelineIdentifier": "p", "planExecutionId": "e1"}
    if event_type:
        payload["eventType"] = event_type
    if status:
        payload["nodeStatus"] = status
    event = one("harness", payload)
    assert event.outcome == outcome
    assert state in event.tags


def test_harness_start_and_end_of_one_execution_are_distinct_sources() -> None:
    base = {"pipelineIdentifier": "p", "planExecutionId": "e1", "startTs": 1709632800}
    start = one("harness", {**base, "eventType": "PipelineStart"})
    failed = one("harness", {**base, "eventType": "PipelineFailed", "endTs": 1709632900})
    assert start.source != failed.source
    assert start.occurred_at == datetime(2024, 3, 5, 10, 0, tzinfo=UTC)
    assert failed.occurred_at == datetime(2024, 3, 5, 10, 1, 40, tzinfo=UTC)


def test_harness_without_execution_id_hashes_the_payload() -> None:
    a = one("harness", {"pipelineName": "Nightly", "eventType": "PipelineFailed", "startTs": 1})
    b = one("harness", {"pipelineName": "Nightly", "eventType": "PipelineFailed", "startTs": 2})
    assert a.source.startswith("harness:-/-/-/Nightly/h")
    assert a.source != b.source
    assert a.occurred_at == datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)


def test_harness_event_data_as_json_string() -> None:
    payload = {"eventData": json.dumps(harness_stage_failed()["eventData"])}
    assert one("harness", payload).source == one("harness", harness_stage_failed()).source


@pytest.mark.parametrize("payload", [None, [], "x", 3, {}, {"eventType": "PipelineStart"},
                                     {"eventData": {"pipelineIdentifier": ["not", "a", "string"]}}])
def test_harness_rejects_payloads_without_a_pipeline(payload: Any) -> None:
    with pytest.raises(ValidationError):
        parse("harness", payload)


# --- GitHub -------------------------------------------------------------------------------------

def issue_comment(action: str = "created", on_pr: bool = True) -> dict[str, Any]:
    issue: dict[str, Any] = {"number": 12, "title": "Retry on 503", "html_url": "https://github.com/acme/api/pull/12"}
    if on_pr:
        issue["pull_request"] = {"url": "https://api.github.com/repos/acme/api/pulls/12"}
    return {
        "action": action, "issue": issue, "repository": {"full_name": "acme/api"},
        "comment": {"id": 123, "body": "This breaks the\r\nretry loop\u0000 when the\tupstream 503s",
                    "user": {"login": "bob", "type": "User"},
                    "html_url": "https://github.com/acme/api/pull/12#issuecomment-123",
                    "created_at": "2024-03-05T10:00:00Z", "updated_at": "2024-03-05T11:00:00Z"},
    }


def test_github_issue_comment_on_a_pull_request() -> None:
    event = one("github", issue_comment(), {"X-GitHub-Event": "issue_comment"})
    assert event.outcome == "comment"
    assert event.source == "github:acme/api#12/comment/123"
    assert event.tags == ["github", "comment", "pr", "acme/api"]
    assert event.content == ('bob commented on PR acme/api#12 "Retry on 503": This breaks the retry loop '
                             "when the upstream 503s (https://github.com/acme/api/pull/12#issuecomment-123)")
    assert event.occurred_at == datetime(2024, 3, 5, 10, 0, tzinfo=UTC)
    assert event.fields["body"] == "This breaks the\nretry loop  when the\tupstream 503s"
    assert event.fields["number"] == "12"
    assert event.fields["kind"] == "pull_request"
    assert event.fields["author"] == "bob"
    assert event.link_key is None


def test_github_comment_on_an_issue_and_edits() -> None:
    event = one("github", issue_comment(on_pr=False), {"X-GitHub-Event": "issue_comment"})
    assert "issue" in event.tags and "pr" not in event.tags
    assert event.content.startswith("bob commented on issue acme/api#12")
    edited = one("github", issue_comment(action="edited"), {"X-GitHub-Event": "issue_comment"})
    assert edited.source == "github:acme/api#12/comment/123"  # same comment, newer text
    assert "edited" in edited.tags
    assert edited.content.startswith("bob edited a comment on PR")
    assert edited.occurred_at == datetime(2024, 3, 5, 11, 0, tzinfo=UTC)


def review_comment() -> dict[str, Any]:
    return {
        "action": "created",
        "pull_request": {"number": 7, "title": "Add cache", "html_url": "https://github.com/acme/api/pull/7"},
        "repository": {"owner": {"login": "acme"}, "name": "api"},
        "comment": {"id": 9001, "pull_request_review_id": 55, "body": "Off by one here?",
                    "path": "src/cache.py", "line": None, "original_line": 42,
                    "diff_hunk": "@@ -40,3 +40,4 @@\n     for i in range(n):\n",
                    "commit_id": "abc123", "user": {"login": "dependabot[bot]", "type": "Bot"},
                    "html_url": "https://github.com/acme/api/pull/7#discussion_r9001",
                    "created_at": "2024-03-05T12:00:00+02:00"},
    }


def test_github_review_comment() -> None:
    event = one("github", review_comment(), {"X-GitHub-Event": "pull_request_review_comment"})
    assert event.source == "github:acme/api#7/review_comment/9001"
    assert event.tags == ["github", "comment", "pr", "review", "acme/api", "bot"]
    assert event.content == ('dependabot[bot] commented on PR acme/api#7 "Add cache" at src/cache.py '
                             "line 42: Off by one here? (https://github.com/acme/api/pull/7#discussion_r9001)")
    assert event.occurred_at == datetime(2024, 3, 5, 10, 0, tzinfo=UTC)
    assert event.fields["diff_hunk"] == "@@ -40,3 +40,4 @@\n     for i in range(n):"
    assert event.fields["path"] == "src/cache.py"
    assert event.fields["line"] == "42"
    assert event.fields["review_id"] == "55"


@pytest.mark.parametrize("name", ["X-GitHub-Event", "x-github-event", "X-GITHUB-EVENT"])
def test_github_header_lookup_ignores_case(name: str) -> None:
    assert one("github", issue_comment(), {name: "issue_comment"}).source == "github:acme/api#12/comment/123"
    assert parse("github", {"zen": "Keep it logically awesome.", "hook_id": 1}, {name: "ping"}) == []


def test_github_event_inferred_without_the_header() -> None:
    assert one("github", issue_comment()).fields["event"] == "issue_comment"
    assert one("github", review_comment()).fields["event"] == "pull_request_review_comment"
    assert parse("github", {"zen": "Design for failure.", "hook_id": 1}) == []
    with pytest.raises(ValidationError, match="X-GitHub-Event"):
        parse("github", {"ref": "refs/heads/main"})


def test_github_deleted_comments_forget_and_pings_are_ignored() -> None:
    deleted = one("github", issue_comment(action="deleted"), {"X-GitHub-Event": "issue_comment"})
    assert deleted.forget and deleted.revises == "github:acme/api#12/comment/123"
    assert deleted.content.startswith("bob deleted a comment on PR acme/api#12")
    edited = one("github", issue_comment(action="edited"), {"X-GitHub-Event": "issue_comment"})
    assert not edited.forget and edited.revises == edited.source
    assert one("github", issue_comment(), {"X-GitHub-Event": "issue_comment"}).revises is None
    assert parse("github", None, {"X-GitHub-Event": "ping"}) == []
    assert read("github", None, {"X-GitHub-Event": "ping"}).ignored == "github ping: the webhook works"


@pytest.mark.parametrize(("event", "payload", "reason"), [
    ("issues", {"action": "opened"}, "github event 'issues' is not remembered"),
    ("", {}, "github event '' is not remembered"),
    ("push", {"ref": "refs/tags/v1", "repository": {"default_branch": "main"}},
     "push to 'refs/tags/v1' is not remembered"),
    ("push", {"ref": "refs/heads/dev", "repository": {"default_branch": "main"}},
     "default branch (main)"),
    ("pull_request", {"action": "labeled", "pull_request": {}}, "action 'labeled'"),
    ("workflow_run", {"action": "requested", "workflow_run": {}}, "completed runs"),
    ("check_run", {"action": "created", "check_run": {}}, "completed check runs"),
    ("pull_request_review", {"action": "deleted"}, "submitted, edited and dismissed"),
])
def test_github_events_and_actions_not_read_are_ignored_with_a_reason(
        event: str, payload: dict[str, Any], reason: str) -> None:
    delivery = read("github", payload, {"X-GitHub-Event": event})
    assert delivery.events == [] and reason in (delivery.ignored or ""), delivery


def pull_request(action: str = "opened", **pr: Any) -> dict[str, Any]:
    return {"action": action, "number": 2, "sender": {"login": "ann"},
            "repository": {"full_name": "acme/api", "default_branch": "main"},
            "pull_request": {"number": 2, "title": "Retry on 503", "body": "Adds a backoff.",
                             "html_url": "https://github.com/acme/api/pull/2", "user": {"login": "ann"},
                             "base": {"ref": "main"}, "head": {"ref": "retry", "sha": "abc"},
                             "created_at": "2024-03-05T10:00:00Z", "updated_at": "2024-03-05T11:00:00Z",
                             **pr}}


def test_github_pull_requests_opened_edited_merged_closed_reopened() -> None:
    hdrs = {"X-GitHub-Event": "pull_request"}
    opened = one("github", pull_request(), hdrs)
    assert opened.source == "github:acme/api#2/pull_request" and opened.revises is None
    assert opened.content == ('ann opened PR acme/api#2 "Retry on 503" (retry into main): Adds a '
                              "backoff. (https://github.com/acme/api/pull/2)")
    assert opened.outcome == "event" and "pr" in opened.tags and "opened" in opened.tags
    edited = one("github", pull_request("edited", body="Adds a jittered backoff."), hdrs)
    assert edited.source == edited.revises == opened.source
    assert "jittered" in edited.content and edited.content.startswith("ann edited PR")
    merged = one("github", pull_request("closed", merged=True, merged_at="2024-03-06T09:00:00Z",
                                        merged_by={"login": "bob"}), hdrs)
    assert merged.content == ('ann merged PR acme/api#2 "Retry on 503" (retry into main) (merged '
                              "by bob). (https://github.com/acme/api/pull/2)")
    assert merged.source == "github:acme/api#2/pull_request/merged/2024-03-06T09:00:00Z"
    assert merged.occurred_at == datetime(2024, 3, 6, 9, 0, tzinfo=UTC) and merged.fields["merged"]
    closed = one("github", pull_request("closed", merged=False, closed_at="2024-03-06T09:00:00Z"), hdrs)
    assert "closed PR acme/api#2" in closed.content and "without merging" in closed.content
    reopened = one("github", pull_request("reopened"), hdrs)
    assert reopened.content.startswith("ann reopened PR acme/api#2") and reopened.revises is None
    assert one("github", pull_request()).fields["event"] == "pull_request"  # inferred


def review(action: str = "submitted", state: str = "changes_requested") -> dict[str, Any]:
    return {"action": action, "sender": {"login": "carol"},
            "repository": {"full_name": "acme/api"},
            "pull_request": {"number": 2, "title": "Retry on 503",
                             "html_url": "https://github.com/acme/api/pull/2"},
            "review": {"id": 77, "state": state, "body": "Cap the retries at 5.",
                       "user": {"login": "carol"}, "submitted_at": "2024-03-05T12:00:00Z",
                       "html_url": "https://github.com/acme/api/pull/2#pullrequestreview-77"}}


def test_github_reviews_and_their_edits_and_dismissals() -> None:
    hdrs = {"X-GitHub-Event": "pull_request_review"}
    submitted = one("github", review(), hdrs)
    assert submitted.source == "github:acme/api#2/review/77" and submitted.outcome == "comment"
    assert submitted.content.startswith('carol requested changes on PR acme/api#2 "Retry on 503": '
                                        "Cap the retries at 5.")
    assert one("github", review(state="approved"), hdrs).content.startswith("carol approved PR")
    edited = one("github", review("edited"), hdrs)
    assert edited.revises == submitted.source and "(edited)" in edited.content
    dismissed = one("github", review("dismissed", "dismissed"), hdrs)
    assert dismissed.revises == submitted.source
    assert dismissed.content.startswith("carol's review of PR acme/api#2 \"Retry on 503\" was dismissed: Cap "
                                        "the retries at 5.")


def workflow_run(conclusion: str | None = "failure") -> dict[str, Any]:
    return {"action": "completed", "repository": {"full_name": "acme/api"},
            "workflow_run": {"id": 99, "name": "CI", "run_number": 12, "run_attempt": 1,
                             "status": "completed", "conclusion": conclusion, "head_branch": "main",
                             "head_sha": "0123456789abcdef", "event": "push",
                             "html_url": "https://github.com/acme/api/actions/runs/99",
                             "actor": {"login": "ann"}, "head_commit": {"message": "Bump deps"},
                             "run_started_at": "2024-03-05T10:00:00Z",
                             "updated_at": "2024-03-05T10:07:00Z"}}


@pytest.mark.parametrize(("conclusion", "outcome", "words"), [
    ("failure", "failure", "failed"), ("timed_out", "failure", "timed out"),
    ("startup_failure", "failure", "failed to start"), ("success", "success", "succeeded"),
    ("neutral", "event", "completed (neutral)"), (None, "event", "completed"),
])
def test_github_workflow_runs_by_conclusion(conclusion: str | None, outcome: str, words: str) -> None:
    event = one("github", workflow_run(conclusion), {"X-GitHub-Event": "workflow_run"})
    assert event.outcome == outcome
    assert event.content.startswith(f'GitHub Actions workflow "CI" run #12 {words} on acme/api '
                                    "branch main.")
    assert event.source == "github:acme/api/workflow_run/99/1"
    assert event.occurred_at == datetime(2024, 3, 5, 10, 7, tzinfo=UTC)
    assert 'Commit message: "Bump deps".' in event.content
    assert event.content.endswith("https://github.com/acme/api/actions/runs/99")


def check_run() -> dict[str, Any]:
    return {"action": "completed", "repository": {"full_name": "acme/api"},
               "check_run": {"id": 5, "name": "lint", "status": "completed", "conclusion": "failure",
                             "head_sha": "0123456789abcdef", "html_url": "https://github.com/acme/api/runs/5",
                             "check_suite": {"head_branch": "main"}, "app": {"name": "GitHub Actions"},
                             "output": {"title": "2 errors", "summary": "E501 line too long"},
                             "pull_requests": [{"number": 2}],
                             "completed_at": "2024-03-05T10:03:00Z"}}


def test_github_check_runs() -> None:
    payload = check_run()
    event = one("github", payload, {"X-GitHub-Event": "check_run"})
    assert event.outcome == "failure" and event.source == "github:acme/api/check_run/5"
    assert event.content == ('Check "lint" (GitHub Actions) failed on acme/api branch main commit '
                             "0123456789ab (PR #2). 2 errors: E501 line too long. "
                             "https://github.com/acme/api/runs/5")
    payload["check_run"]["conclusion"] = "skipped"
    assert "skipped" in (read("github", payload, {"X-GitHub-Event": "check_run"}).ignored or "")


def push() -> dict[str, Any]:
    return {"ref": "refs/heads/main", "before": "a" * 40, "after": "b" * 40,
               "repository": {"full_name": "acme/api", "default_branch": "main"},
               "pusher": {"name": "ann"}, "compare": "https://github.com/acme/api/compare/a...b",
               "commits": [{"id": "1234567890", "message": "Fix retry loop"},
                           {"id": "abcdef1234", "message": "Bump deps"}],
               "head_commit": {"id": "abcdef1234", "timestamp": "2024-03-05T10:00:00-01:00"}}


def test_github_pushes_to_the_default_branch() -> None:
    payload = push()
    event = one("github", payload, {"X-GitHub-Event": "push"})
    assert event.content == ("ann pushed 2 commits to main of acme/api: 1234567 Fix retry loop; "
                             "abcdef1 Bump deps https://github.com/acme/api/compare/a...b")
    assert event.source == f"github:acme/api/push/main/{'b' * 40}"
    assert event.occurred_at == datetime(2024, 3, 5, 11, 0, tzinfo=UTC)
    assert one("github", payload).fields["event"] == "push"  # inferred from the shape


@pytest.mark.parametrize("payload", [None, [1], {"action": "created"}, {"comment": "hi"}, {"comment": {}}])
def test_github_rejects_deliveries_without_a_comment(payload: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        parse("github", payload, {"X-GitHub-Event": "issue_comment"})
    assert not isinstance(caught.value, UnsupportedEventError)


def test_github_missing_repository_read_from_the_comment_url() -> None:
    payload = issue_comment()
    del payload["repository"]
    del payload["issue"]["number"]
    event = one("github", payload, {"X-GitHub-Event": "issue_comment"})
    assert event.source == "github:acme/api#12/comment/123"


# --- Alertmanager -------------------------------------------------------------------------------

def alertmanager_payload(status: str = "firing") -> dict[str, Any]:
    resolved = status == "resolved"
    return {
        "version": "4", "groupKey": '{}:{alertname="HighErrorRate"}', "status": status,
        "receiver": "varvemem", "groupLabels": {"alertname": "HighErrorRate"},
        "commonLabels": {"alertname": "HighErrorRate", "env": "prod"},
        "commonAnnotations": {"runbook_url": "https://runbooks.example/high-error-rate"},
        "externalURL": "http://alertmanager:9093", "truncatedAlerts": 0,
        "alerts": [
            {"status": status, "labels": {"alertname": "HighErrorRate", "severity": "critical",
                                          "instance": "api-1:9090", "job": "api", "env": "prod"},
             "annotations": {"summary": "5xx above 5%", "description": "Error rate is 7.2% for 10m"},
             "startsAt": "2024-03-05T10:00:00.123456789Z",
             "endsAt": "2024-03-05T10:30:00Z" if resolved else "0001-01-01T00:00:00Z",
             "generatorURL": "http://prometheus:9090/graph?g0.expr=rate", "fingerprint": "a1b2c3d4e5f60718"},
            {"status": status,
             "labels": {"alertname": "HighErrorRate", "severity": "warning", "instance": "api-2:9090"},
             "annotations": {}, "startsAt": "2024-03-05T10:01:00Z", "endsAt": "0001-01-01T00:00:00Z",
             "fingerprint": "ffff000011112222"},
        ],
    }


def test_alertmanager_one_event_per_alert() -> None:
    first, second = parse("alertmanager", alertmanager_payload())
    assert first.outcome == "firing"
    assert first.link_key == "a1b2c3d4e5f60718"
    assert first.source == "alertmanager:a1b2c3d4e5f60718:firing:2024-03-05T10:00:00.123456Z"
    assert first.tags == ["alert", "firing", "higherrorrate", "severity:critical"]
    assert first.occurred_at == datetime(2024, 3, 5, 10, 0, 0, 123456, tzinfo=UTC)
    assert first.content == (
        "[FIRING] Alert HighErrorRate (critical) on instance api-1:9090, job api. Summary: 5xx above 5%. "
        "Description: Error rate is 7.2% for 10m. Labels: env=prod. Started 2024-03-05T10:00:00.123456Z. "
        "Runbook: https://runbooks.example/high-error-rate Source: http://prometheus:9090/graph?g0.expr=rate")
    assert first.fields["receiver"] == "varvemem"
    assert first.fields["labels"]["env"] == "prod"
    assert "ends_at" not in first.fields  # Go's zero time means unset
    json.dumps(first.fields)
    # the group's labels and annotations fill what the second alert lacks
    assert second.fields["labels"]["env"] == "prod"
    assert second.fields["runbook_url"] == "https://runbooks.example/high-error-rate"
    assert second.tags == ["alert", "firing", "higherrorrate", "severity:warning"]


def test_alertmanager_resolved_links_to_firing() -> None:
    firing = parse("alertmanager", alertmanager_payload("firing"))[0]
    resolved = parse("alertmanager", alertmanager_payload("resolved"))[0]
    assert resolved.outcome == "resolved"
    assert resolved.link_key == firing.link_key
    assert resolved.source != firing.source
    assert resolved.occurred_at == datetime(2024, 3, 5, 10, 30, tzinfo=UTC)
    assert resolved.content.startswith("[RESOLVED] Alert HighErrorRate")


def test_alertmanager_refire_is_a_new_event_redelivery_is_not() -> None:
    payload = alertmanager_payload()
    again = copy.deepcopy(payload)
    later = copy.deepcopy(payload)
    later["alerts"][0]["startsAt"] = "2024-03-06T08:00:00Z"
    first = parse("alertmanager", payload)[0]
    assert parse("alertmanager", again)[0].source == first.source
    refire = parse("alertmanager", later)[0]
    assert refire.source != first.source
    assert refire.link_key == first.link_key


def test_alertmanager_fingerprint_fallback_hashes_sorted_labels() -> None:
    a = {"alerts": [{"labels": {"alertname": "Disk", "instance": "db-1"},
                     "startsAt": "2024-03-05T10:00:00Z"}]}
    b = {"alerts": [{"status": "resolved", "labels": {"instance": "db-1", "alertname": "Disk"}}]}
    firing, resolved = one("alertmanager", a), one("alertmanager", b)
    assert firing.link_key is not None and firing.link_key == resolved.link_key
    assert firing.outcome == "firing" and resolved.outcome == "resolved"
    assert resolved.occurred_at is None
    assert resolved.source.endswith(":resolved:-")


def test_alertmanager_empty_alerts_and_bad_payloads() -> None:
    assert parse("alertmanager", {"version": "4", "alerts": []}) == []
    with pytest.raises(ValidationError, match="version '3'"):
        parse("alertmanager", {"version": "3", "alerts": []})
    assert parse("alertmanager", {"version": 4, "alerts": []}) == []
    for bad in (None, [], "alerts", {"version": "4"}, {"alerts": {"0": {}}}, {"alerts": [1, "x"]}):
        with pytest.raises(ValidationError):
            parse("alertmanager", bad)


def test_alertmanager_truncated_alerts_are_kept() -> None:
    payload = alertmanager_payload()
    assert "truncated_alerts" not in parse("alertmanager", payload)[0].fields  # 0: none left out
    payload["truncatedAlerts"] = 12
    assert all(e.fields["truncated_alerts"] == 12 for e in parse("alertmanager", payload))
    with pytest.raises(ValidationError, match="use kind grafana"):
        parse("alertmanager", grafana_payload())


# --- Grafana ------------------------------------------------------------------------------------

def grafana_payload(status: str = "firing") -> dict[str, Any]:
    resolved = status == "resolved"
    return {
        "receiver": "varvemem", "status": status, "orgId": 1, "version": "1",
        "groupKey": '{}:{alertname="High memory usage"}', "truncatedAlerts": 0,
        "groupLabels": {"alertname": "High memory usage"},
        "commonLabels": {"alertname": "High memory usage", "team": "blue"}, "commonAnnotations": {},
        "externalURL": "https://grafana.example/", "title": "[FIRING:1] High memory usage",
        "state": "alerting", "message": "**Firing**",
        "alerts": [{
            "status": status, "labels": {"alertname": "High memory usage", "team": "blue", "zone": "us-1"},
            "annotations": {"summary": "Heap above 90% in us-1", "runbook_url": "https://runbooks.example/heap"},
            "startsAt": "2024-03-05T10:51:03.157076+02:00",
            "endsAt": "2024-03-05T09:20:00Z" if resolved else "0001-01-01T00:00:00Z",
            "generatorURL": "https://grafana.example/alerting/1afz29v7z/edit",
            "fingerprint": "c6eadffa33fcdf37", "silenceURL": "https://grafana.example/alerting/silence/new",
            "dashboardURL": "https://grafana.example/d/abc", "panelURL": "https://grafana.example/d/abc?viewPanel=2",
            "values": {"B": 94.2}, "valueString": "[ var='B' labels={zone=us-1} value=94.2 ]",
        }],
    }


def test_grafana_alerts_are_read_like_alertmanager_s_and_pair_up() -> None:
    firing = one("grafana", grafana_payload())
    assert firing.source == "grafana:c6eadffa33fcdf37:firing:2024-03-05T08:51:03.157076Z"
    assert firing.outcome == "firing" and firing.link_key == "c6eadffa33fcdf37"
    assert firing.tags == ["alert", "firing", "high-memory-usage", "grafana"]
    assert firing.content == (
        "[FIRING] Alert High memory usage. Summary: Heap above 90% in us-1. Labels: team=blue, zone=us-1. "
        "Started 2024-03-05T08:51:03.157076Z. Value: [ var='B' labels={zone=us-1} value=94.2 ]. "
        "Runbook: https://runbooks.example/heap Source: https://grafana.example/alerting/1afz29v7z/edit "
        "Dashboard: https://grafana.example/d/abc?viewPanel=2")
    assert firing.fields["org_id"] == "1" and firing.fields["silence_url"].endswith("/silence/new")
    assert firing.fields["dashboard_url"] == "https://grafana.example/d/abc"
    resolved = one("grafana", grafana_payload("resolved"))
    assert resolved.outcome == "resolved" and resolved.link_key == firing.link_key
    assert alertmanager.counterpart(resolved.source, "resolved")[0] == firing.source  # type: ignore[index]
    with pytest.raises(ValidationError, match="use kind alertmanager"):
        parse("grafana", alertmanager_payload())
    assert parse("grafana", {"version": "1", "alerts": []}) == []


# --- Harness FirstGen ---------------------------------------------------------------------------

def firstgen(event_type: str = "PIPELINE_END", status: str = "FAILED") -> dict[str, Any]:
    return {"id": "evt-1", "version": "v1", "eventType": event_type, "data": {
        "application": {"id": "app1", "name": "Payments"},
        "pipeline": {"id": "pl1", "name": "Deploy Prod"},
        "triggeredBy": {"uuid": "u1", "name": "alice", "email": "alice@example.com"},
        "triggeredByType": "USER", "startedAt": 1709632800000, "completedAt": 1709633100000,
        "status": status, "executionId": "ex-9", "pipelineExecution": {"id": "ex-9"},
        "environments": [{"id": "env1", "name": "prod"}], "services": [{"id": "svc1"}],
        "executionArgs": {"notes": "hotfix"}}}


def test_harness_firstgen_events() -> None:
    event = one("harness", firstgen())
    assert event.outcome == "failure"
    assert event.source == "harness:firstgen/app1/pl1/ex-9:pipelineend"
    assert event.content == (
        'Harness pipeline "Deploy Prod" (pl1) failed in application "Payments" (app1). Execution ex-9. '
        "Environments: prod. Services: svc1. Triggered by alice <alice@example.com> (USER). "
        "Notes: hotfix. Started 2024-03-05T10:00:00Z, ended 2024-03-05T10:05:00Z.")
    assert event.occurred_at == datetime(2024, 3, 5, 10, 5, tzinfo=UTC)
    assert event.tags == ["harness", "pipeline", "failed", "pl1", "app:payments", "env:prod"]
    assert event.fields["generation"] == "firstgen" and event.fields["event_id"] == "evt-1"
    assert one("harness", firstgen(status="SUCCESS")).outcome == "success"
    started = one("harness", firstgen("pipeline_start", "RUNNING"))
    assert started.outcome == "started" and started.source.endswith(":pipelinestart")
    workflow = firstgen("workflow_end", "ABORTED")
    workflow["data"]["workflow"] = {"id": "wf1", "name": "Rolling"}
    workflow["data"]["workflowExecution"] = {"id": "wx-3"}
    event = one("harness", workflow)
    assert event.outcome == "failure" and event.fields["level"] == "workflow"
    assert event.content.startswith('Harness workflow "Rolling" (wf1) of pipeline "Deploy Prod" (pl1) '
                                    "failed")
    with pytest.raises(ValidationError, match="FirstGen"):
        parse("harness", {"eventType": "PIPELINE_END", "data": {"status": "FAILED"}})


# --- generic ------------------------------------------------------------------------------------

def test_generic_readable_fields() -> None:
    payload = {"type": "deploy", "title": "v1.2 rolled out", "message": "Canary passed; 100% traffic.",
               "status": "succeeded", "severity": "info", "id": "d-1", "url": "https://deploys.example/d-1",
               "tags": ["Prod", "API", 3], "timestamp": 1709632800000}
    event = one("generic", payload)
    assert event.outcome == "success"
    assert event.source == "generic:d-1"
    assert event.tags == ["generic", "deploy", "succeeded", "severity:info", "prod", "api"]
    assert event.content == ("[deploy] v1.2 rolled out. Canary passed; 100% traffic. "
                             "(status succeeded, severity info). https://deploys.example/d-1")
    assert event.occurred_at == datetime(2024, 3, 5, 10, 0, tzinfo=UTC)
    assert event.fields["tags"] == ["Prod", "API"]
    assert event.fields["occurred_at"] == "2024-03-05T10:00:00Z"


@pytest.mark.parametrize(("status", "outcome"), [
    ("FAILED", "failure"), ("error", "failure"), ("running", "started"), ("firing", "firing"),
    ("resolved", "resolved"), ("weird", "event"), (None, "event"),
])
def test_generic_outcome_from_status(status: str | None, outcome: str) -> None:
    payload = {"event": "job", "text": "nightly backup", "status": status,
               "occurred_at": "2024-03-05T10:00:00"}
    event = one("generic", payload)
    assert event.outcome == outcome
    assert event.occurred_at == datetime(2024, 3, 5, 10, 0, tzinfo=UTC)  # naive read as UTC


def test_generic_without_readable_fields_keeps_compact_json() -> None:
    payload = {"zeta": [1, 2], "alpha": {"b": None, "a": "ü"}}
    event = one("generic", payload)
    assert event.content == '{"alpha":{"a":"ü","b":null},"zeta":[1,2]}'
    assert event.outcome == "event"
    assert event.fields == {}
    assert event.source.startswith("generic:h")
    assert one("generic", {"alpha": {"a": "ü", "b": None}, "zeta": [1, 2]}).source == event.source
    assert one("generic", {"zeta": [1, 3]}).source != event.source


@pytest.mark.parametrize("payload", [None, {}, [], [{"title": "x"}], "text", 1.5])
def test_generic_requires_a_non_empty_object(payload: Any) -> None:
    with pytest.raises(ValidationError):
        parse("generic", payload)


# --- dispatch, caps ------------------------------------------------------------------------------

def test_unknown_kind_is_unsupported_and_kind_ignores_case() -> None:
    with pytest.raises(UnsupportedEventError, match="unknown event kind 'gitlab'"):
        parse("gitlab", {"a": 1})
    with pytest.raises(UnsupportedEventError):
        parse(None, {"a": 1})  # type: ignore[arg-type]
    assert one(" Generic ", {"title": "x"}).source.startswith("generic:")


def test_content_and_fields_are_capped() -> None:
    payload = issue_comment()
    payload["comment"]["body"] = "word " * 5000
    event = one("github", payload, {"X-GitHub-Event": "issue_comment"})
    assert len(event.content) <= CONTENT_CAP
    assert "…" in event.content
    huge = one("generic", {"title": "t" * 10_000, "status": "s" * 10_000, "blob": "b" * 10_000})
    assert len(huge.content) <= CONTENT_CAP
    assert all(len(v) <= FIELD_CAP for v in huge.fields.values() if isinstance(v, str))
    blob = one("generic", {"blob": "b" * 10_000})
    assert len(blob.content) == CONTENT_CAP and blob.content.endswith("…")


# --- properties ------------------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
times = (st.integers(min_value=-(10**15), max_value=10**15) | st.floats()
         | st.datetimes(timezones=st.none() | st.just(UTC)).map(datetime.isoformat)
         | st.sampled_from(["0001-01-01T00:00:00Z", "2024-03-05T10:00:00.123456789Z", "2024-13-45T99:99:99Z",
                            "Tue Mar 05 10:00:00 UTC 2024", "Tue Foo 35 10:00:00 GMT 2024", "1709632800"])
         | json_values)
words = st.sampled_from(["failed", "FAILED", "success", "completed", "running", "paused", "firing",
                         "resolved", "PipelineStart", "StageFailed", "PIPELINE_END", "created", "edited",
                         "deleted"])
values = words | json_values


def shaped(keys: list[str], time_keys: tuple[str, ...] = (), **nested: st.SearchStrategy[Any]
           ) -> st.SearchStrategy[dict[str, Any]]:
    optional: dict[str, st.SearchStrategy[Any]] = dict.fromkeys(keys, values)
    optional.update(dict.fromkeys(time_keys, times))
    optional.update(nested)
    return st.fixed_dictionaries({}, optional=optional)


HARNESS_KEYS = ["accountIdentifier", "accountId", "orgIdentifier", "projectIdentifier",
                "pipelineIdentifier", "pipelineName", "stageIdentifier", "stageName", "nodeName",
                "stepIdentifier", "planExecutionId", "executionId", "eventType", "nodeStatus", "status",
                "errorMessage", "message", "executionUrl", "triggeredBy", "tag", "failureInfo"]
HARNESS_TIMES = ("startTs", "startTime", "endTs", "endTime")
harness_like = shaped(HARNESS_KEYS, HARNESS_TIMES,
                      eventData=shaped(HARNESS_KEYS, HARNESS_TIMES) | json_values)
user = shaped(["login", "type"])
github_like = shaped(
    ["action", "zen", "hook_id"],
    comment=shaped(["id", "body", "path", "line", "original_line", "diff_hunk", "html_url"],
                   ("created_at", "updated_at"), user=user | json_values) | json_values,
    issue=shaped(["number", "title", "html_url", "pull_request"]) | json_values,
    pull_request=shaped(["number", "title", "html_url"]) | json_values,
    repository=shaped(["full_name", "name"], owner=user) | json_values,
)
labels = st.dictionaries(st.sampled_from(["alertname", "severity", "instance", "job"]) | st.text(max_size=8),
                         values, max_size=5)
alert = shaped(["status", "generatorURL", "fingerprint"], ("startsAt", "endsAt"),
               labels=labels | json_values, annotations=labels | json_values)
alertmanager_like = shaped(
    ["status", "receiver", "groupKey", "externalURL"],
    version=st.sampled_from(["4", 4, "3"]) | json_values,
    alerts=st.lists(alert | json_values, max_size=3) | json_values,
    commonLabels=labels | json_values, commonAnnotations=labels | json_values,
)
generic_like = shaped(["type", "event", "title", "summary", "message", "text", "description", "status",
                       "severity", "id", "url", "tags"], ("occurred_at", "timestamp"))
SHAPED = {"harness": harness_like, "github": github_like, "alertmanager": alertmanager_like,
          "grafana": alertmanager_like, "generic": generic_like}
headers = st.dictionaries(
    st.sampled_from(["X-GitHub-Event", "x-github-event", "X-GITHUB-EVENT", "Content-Type"])
    | st.text(max_size=8),
    st.sampled_from(["issue_comment", "pull_request_review_comment", "ping", "push", " Issue_Comment "])
    | st.text(max_size=8),
    max_size=3,
) | st.none()


def check(kind: str, payload: Any, hdrs: dict[str, str] | None) -> bool:
    """Parses, and checks what every event must be. True: accepted; False: refused with the
    documented error (``ValidationError``, or its ``UnsupportedEventError``); nothing else."""
    try:
        events = parse(kind, payload, hdrs)
    except ValidationError:
        return False
    assert isinstance(events, list)
    for event in events:
        assert isinstance(event, ParsedEvent)
        assert event.content and len(event.content) <= CONTENT_CAP
        assert event.source.startswith(f"{kind}:")
        assert event.outcome in ("failure", "success", "started", "firing", "resolved", "comment", "event")
        assert all(tag and tag == tag.lower() for tag in event.tags)
        json.dumps(event.fields, allow_nan=False)
        assert event.occurred_at is None or event.occurred_at.utcoffset() is not None
        assert event.occurred_at is None or event.occurred_at.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
    # a redelivery of the same payload has the same identity
    assert [e.source for e in parse(kind, copy.deepcopy(payload), hdrs)] == [e.source for e in events]
    return True


def generic_payload() -> dict[str, Any]:
    return {"type": "deploy", "title": "v1.2 rolled out", "message": "Canary passed; 100% traffic.",
            "status": "succeeded", "severity": "info", "id": "d-1", "url": "https://deploys.example/d-1",
            "tags": ["Prod", "API", 3], "timestamp": 1709632800000}


# Real deliveries of each kind, as the examples above build them, with their headers.
VALID: dict[str, list[tuple[Callable[[], dict[str, Any]], dict[str, str] | None]]] = {
    "harness": [(harness_stage_failed, None), (firstgen, None),
                (lambda: {**firstgen(), "data": {**firstgen()["data"], "environments": {"a": 1},
                                                 "services": 3}}, None),
                (lambda: harness_stage_failed()["eventData"], None)],  # the top-level form
    "github": [(issue_comment, {"X-GitHub-Event": "issue_comment"}),
               (lambda: issue_comment(on_pr=False), {"X-GitHub-Event": "issue_comment"}),
               (lambda: issue_comment(action="edited"), {"X-GitHub-Event": "issue_comment"}),
               (review_comment, {"X-GitHub-Event": "pull_request_review_comment"}),
               (issue_comment, None),  # the event inferred from the payload
               (pull_request, {"X-GitHub-Event": "pull_request"}),
               (review, {"X-GitHub-Event": "pull_request_review"}),
               (workflow_run, {"X-GitHub-Event": "workflow_run"}),
               (check_run, {"X-GitHub-Event": "check_run"}), (push, {"X-GitHub-Event": "push"}),
               (check_run, None), (push, None)],  # inferred
    "alertmanager": [(alertmanager_payload, None), (lambda: alertmanager_payload("resolved"), None)],
    "grafana": [(grafana_payload, None), (lambda: grafana_payload("resolved"), None)],
    "generic": [(generic_payload, None)],
}
ALL_VALID = [(kind, make, hdrs) for kind, cases in VALID.items() for make, hdrs in cases]


def key_paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value inside ``obj`` (dict keys and list indexes), outermost first."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    out: list[tuple[Any, ...]] = []
    for key, value in items:
        out.append((*prefix, key))
        out.extend(key_paths(value, (*prefix, key)))
    return out


@st.composite
def perturbed(draw: st.DrawFn, kind: str) -> tuple[dict[str, Any], dict[str, str] | None, str]:
    """A valid delivery of ``kind`` with one value replaced (by any JSON, a time-like value or
    a status word), removed, or one unknown key added somewhere; and what was done."""
    make, hdrs = draw(st.sampled_from(VALID[kind]))
    payload = make()
    path = draw(st.sampled_from(key_paths(payload)))
    parent: Any = payload
    for key in path[:-1]:
        parent = parent[key]
    how = draw(st.sampled_from(["replace", "remove", "add"]))
    if how == "replace":
        parent[path[-1]] = draw(values | times)
    elif how == "remove":
        del parent[path[-1]]
    else:
        target = parent[path[-1]] if isinstance(parent[path[-1]], dict) else payload
        target["x-unknown-" + draw(st.text(max_size=6))] = draw(json_values)
    return payload, hdrs, f"{how} {'/'.join(map(str, path))}"


@pytest.mark.parametrize("kind,make,hdrs", ALL_VALID)
def test_valid_deliveries_are_always_accepted(kind: str, make: Callable[[], dict[str, Any]],
                                             hdrs: dict[str, str] | None) -> None:
    assert check(kind, make(), hdrs), (kind, make)


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(KINDS), payload=json_values, hdrs=headers)
def test_arbitrary_json_gives_events_or_validation_error(kind: str, payload: Any,
                                                         hdrs: dict[str, str] | None) -> None:
    check(kind, payload, hdrs)


@pytest.mark.parametrize("kind", KINDS)
def test_payloads_of_the_right_shape_give_events_or_validation_error(kind: str) -> None:
    """The kind's keys with any values (and any headers): events or the documented error, and
    a fair share of events (about a third to nine in ten, by kind), not none."""
    accepted: list[bool] = []

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(payload=SHAPED[kind], hdrs=headers)
    def run(payload: dict[str, Any], hdrs: dict[str, str] | None) -> None:
        accepted.append(check(kind, payload, hdrs))

    run()
    assert len(accepted) >= 100 and sum(accepted) >= 0.1 * len(accepted), (sum(accepted), len(accepted))


@pytest.mark.parametrize("kind", KINDS)
def test_near_valid_deliveries_give_events_or_validation_error_and_mostly_events(kind: str) -> None:
    """One value of a real delivery changed: a parser may refuse it (with the documented
    error), but one that refused everything must fail here. Most perturbations touch a value
    the parser does not need (a label, a URL, a time it can do without), so most are accepted;
    and an added unknown key never makes a delivery invalid."""
    outcomes: dict[str, list[bool]] = {"replace": [], "remove": [], "add": []}

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(case=perturbed(kind))
    def run(case: tuple[dict[str, Any], dict[str, str] | None, str]) -> None:
        payload, hdrs, what = case
        accepted = check(kind, payload, hdrs)
        if what.startswith("add"):
            assert accepted, what
        outcomes[what.partition(" ")[0]].append(accepted)

    run()
    tried = [ok for seen in outcomes.values() for ok in seen]
    assert len(tried) >= 100, len(tried)
    assert sum(tried) >= 0.7 * len(tried), {k: (sum(v), len(v)) for k, v in outcomes.items()}
    assert all(sum(v) > 0 for v in outcomes.values() if len(v) >= 10), outcomes


# --- the subject whose state an event reports ------------------------------------------------

def test_the_subject_of_a_state_is_the_alert_or_the_pipeline_on_its_branch() -> None:
    gh = {"X-GitHub-Event": "workflow_run"}
    fired, resolved = (parse("alertmanager", alertmanager_payload(s)) for s in ("firing", "resolved"))
    assert [e.state_of for e in fired] == [e.state_of for e in resolved] == [
        "alertmanager:a1b2c3d4e5f60718", "alertmanager:ffff000011112222"]  # one per alert
    refire = alertmanager_payload()
    refire["alerts"][0]["startsAt"] = "2024-03-06T08:00:00Z"
    assert parse("alertmanager", refire)[0].state_of == fired[0].state_of
    no_print = {"alerts": [{"labels": {"alertname": "Disk", "instance": "db-1"}}]}
    other = {"alerts": [{"labels": {"alertname": "Disk", "instance": "db-2"}}]}
    assert one("alertmanager", no_print).state_of != one("alertmanager", other).state_of
    assert one("grafana", grafana_payload()).state_of.startswith("grafana:")

    run = one("github", workflow_run("failure"), gh)
    assert run.state_of == "github:acme/api/workflow/CI@main"
    passed = workflow_run("success")
    passed["workflow_run"] |= {"id": 100, "run_number": 13}
    assert one("github", passed, gh).state_of == run.state_of  # another run, the same workflow
    branch = workflow_run("success")
    branch["workflow_run"]["head_branch"] = "feature"
    assert one("github", branch, gh).state_of == "github:acme/api/workflow/CI@feature"
    unknown = workflow_run("failure")
    del unknown["workflow_run"]["head_branch"]
    assert one("github", unknown, gh).state_of is None  # it may retire no branch's failures
    assert one("github", check_run(), {"X-GitHub-Event": "check_run"}).state_of == \
        "github:acme/api/check/GitHub Actions/lint@main"

    stage = one("harness", harness_stage_failed())
    assert stage.state_of == "harness:acct1/default/payments/deploy_prod/stage/deploy"
    pipeline = harness_stage_failed()
    pipeline["eventData"] |= {"eventType": "PipelineSuccess", "nodeStatus": "success",
                              "planExecutionId": "Other1"}
    del pipeline["eventData"]["stageIdentifier"], pipeline["eventData"]["stageName"]
    assert one("harness", pipeline).state_of == "harness:acct1/default/payments/deploy_prod"
    assert one("harness", firstgen()).state_of == "harness:firstgen/app1/pl1"
    assert one("generic", {"id": "x", "status": "firing"}).state_of is None
