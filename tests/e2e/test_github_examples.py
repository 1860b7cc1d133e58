"""Every example payload GitHub's own toolkit publishes (@octokit/webhooks-examples, installed
from the npm registry by scripts/webhook-examples.sh), HMAC-signed and posted to a real server:
each is answered 2xx (202 taken, 200 ignored), and the ones taken make sensible memories."""

from __future__ import annotations

import collections
import hashlib
import hmac
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import install_tool
from tests.e2e.test_server import GH_SECRET, start_server, wait_for

PINNED = "7.6.1"  # scripts/webhook-examples.sh installs this version
ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / ".cache" / "webhook-examples" / "node_modules" / "@octokit" / "webhooks-examples"

# What varvemem takes of the examples: (event, how) -> count; the rest is ignored (200).
TAKEN = {
    ("check_run", "taken"): 3, ("issue_comment", "taken"): 5, ("issue_comment", "edit"): 2,
    ("issue_comment", "forget"): 2, ("pull_request", "taken"): 8,
    ("pull_request_review", "taken"): 3, ("pull_request_review", "edit"): 1,
    ("pull_request_review_comment", "taken"): 3, ("pull_request_review_comment", "edit"): 1,
    ("pull_request_review_comment", "forget"): 1, ("push", "taken"): 2,
    ("workflow_run", "taken"): 3,
}


@pytest.fixture(scope="module")
def examples() -> list[tuple[str, dict[str, Any]]]:
    """(event name, payload) of every example, installing the package first if it is missing."""
    index = PACKAGE / "api.github.com" / "index.json"
    installed = index.exists() and json.loads((PACKAGE / "package.json").read_text())["version"] == PINNED
    if not installed:
        index.unlink(missing_ok=True)  # another version's: the script replaces it
        install_tool("webhook-examples.sh", {"OCTOKIT_WEBHOOKS_EXAMPLES_VERSION": PINNED}, index,
                     f"@octokit/webhooks-examples@{PINNED}")
    return [(entry["name"], example) for entry in json.loads(index.read_text())
            for example in entry["examples"]]


@pytest.fixture
def server(tmp_path: Path, embedder: Any) -> Iterator[Any]:
    srv, thread, url, mem = start_server(tmp_path / "home", embedder,
                                         update={"associate_threshold": 1.0})
    yield url, mem
    srv.should_exit = True
    thread.join(30)


def test_every_example_is_answered_2xx_and_those_taken_make_memories(
        examples: list[tuple[str, dict[str, Any]]], server: Any) -> None:
    import httpx

    url, mem = server
    assert len(examples) == 329 and len({name for name, _ in examples}) == 58
    outcomes: collections.Counter[tuple[str, str]] = collections.Counter()
    with httpx.Client(base_url=url, timeout=30) as client:
        for n, (name, payload) in enumerate(examples):
            body = json.dumps(payload).encode()
            sig = hmac.new(GH_SECRET.encode(), body, hashlib.sha256).hexdigest()
            resp = client.post("/v1/webhooks/gh", content=body, headers={
                "Content-Type": "application/json", "X-GitHub-Event": name,
                "X-GitHub-Delivery": f"example-{n}", "X-Hub-Signature-256": f"sha256={sig}"})
            assert resp.status_code in (200, 202), (name, payload.get("action"), resp.text)
            answer = resp.json()
            if resp.status_code == 200:
                assert answer["status"] == "ignored" and answer["reason"], answer
                outcomes[(name, "ignored")] += 1
            else:
                assert answer["status"] == "accepted" and answer["events"] == 1
                outcomes[(name, "accepted")] += 1
    taken = collections.Counter[str]()
    for (name, _), count in TAKEN.items():
        taken[name] += count
    assert {k: v for k, v in outcomes.items() if k[1] == "accepted"} == {
        (name, "accepted"): count for name, count in taken.items()}
    assert sum(outcomes.values()) == 329 and outcomes[("ping", "ignored")] == 4
    # Events and actions not read, pushes to tags: 200 ignored.
    assert outcomes[("push", "ignored")] == 5 and outcomes[("issues", "ignored")] == 29

    wait_for(lambda: mem.inbox.counts().get("done", 0) == sum(taken.values()), timeout=120)
    assert mem.inbox.counts() == {"done": sum(taken.values())}  # none failed
    every = mem.get_all(tenant="acme", types=["event"], include_superseded=True, limit=1000)
    current = [m for m in every if m.valid_to is None]
    contents = [m.content for m in current]

    def one(prefix: str) -> Any:
        found = [m for m in current if m.content.startswith(prefix)]
        assert found, (prefix, contents)
        return found[0]

    [failed] = [m for m in every if m.content.startswith(
        'Check "Octocoders-linter" (octocoders-linter) failed on Codertocat/Hello-World')]
    assert failed.metadata["outcome"] == "failure"
    assert failed.importance >= mem.settings.webhooks.importance["failure"]
    assert "https://github.com/Codertocat/Hello-World/runs/128620228" in failed.content
    passed = one('Check "Octocoders-linter" (octocoders-linter) succeeded')
    assert passed.importance < failed.importance
    # The check passed after it failed, on the same branch: the failure is retired.
    assert failed.superseded_by == passed.memory_id
    assert one("Codertocat pushed 1 commit to master of Codertocat/Hello-World:").metadata[
        "event"]["branch"] == "master"
    opened = one('Codertocat opened PR Codertocat/Hello-World#2 "Update the README with new '
                 'information." (changes into master): This is a pretty simple change')
    assert "pr" in opened.tags and opened.source == "github:Codertocat/Hello-World#2/pull_request"
    assert one("Codertocat closed PR Codertocat/Hello-World#2").metadata["event"]["merged"] is False
    one("Codertocat reopened PR Codertocat/Hello-World#2")
    one('GitHub Actions workflow "Manually triggered workflow" run #36 completed')
    run = one("GitHub Actions workflow")
    assert run.metadata["event"]["run_id"]
    one("Codertocat reviewed PR Codertocat/Hello-World#2")
    # The examples come by action, a comment's deletion before its edit: the deletion forgot
    # the comment (invalidated with history, not erased), the later edit is current again.
    comment = "github:Codertocat/Hello-World#1/comment/492700400"
    forgotten = [m for m in every if m.source == comment and m.valid_to is not None
                 and m.superseded_by is None]
    assert forgotten and all(m.content.startswith("Codertocat commented") for m in forgotten)
    assert any(e.action == "supersede" and "deleted a comment" in e.reason
               for e in mem.history(forgotten[0].memory_id, tenant="acme"))
    [edit] = [m for m in current if m.source == comment]
    assert edit.content.startswith("Codertocat edited a comment on issue Codertocat/Hello-World#1")
    # Sent again in order (new deliveries), the comment then its edit: one current version.
    with httpx.Client(base_url=url, timeout=30) as client:
        for n, action in enumerate(("created", "edited")):
            payload = next(p for name, p in examples if name == "issue_comment"
                           and p["action"] == action)
            body = json.dumps(payload).encode()
            sig = hmac.new(GH_SECRET.encode(), body, hashlib.sha256).hexdigest()
            assert client.post("/v1/webhooks/gh", content=body, headers={
                "Content-Type": "application/json", "X-GitHub-Event": "issue_comment",
                "X-GitHub-Delivery": f"again-{n}", "X-Hub-Signature-256": f"sha256={sig}"}
                ).status_code == 202
    wait_for(lambda: mem.inbox.counts().get("done", 0) == sum(taken.values()) + 2, timeout=60)
    now = mem.get_all(tenant="acme", types=["event"], limit=1000)
    [latest] = [m for m in now if m.source == comment]
    assert latest.content.startswith("Codertocat edited a comment")
    assert latest.memory_id != edit.memory_id and mem.get(edit.memory_id, tenant="acme").superseded_by
    # No example made a failed or empty memory, and none was the raw JSON.
    assert all(c and not c.startswith("{") for c in contents)
