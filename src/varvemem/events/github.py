"""GitHub webhook events.

The ``X-GitHub-Event`` header picks the format (without it the event is inferred from the
payload's shape). Read, one event each:

* ``issue_comment`` (a conversation comment on a PR or an issue) and
  ``pull_request_review_comment`` (a comment on a line of a PR's diff);
* ``pull_request``: opened, edited, closed (merged or not) and reopened;
* ``pull_request_review``: submitted, edited and dismissed;
* ``workflow_run`` and ``check_run`` once completed, the outcome from the conclusion (a
  failure, a timeout or a startup failure: "failure"; success: "success"; else "event"), the
  state of the workflow (or check) on its branch (``state_of``: a pass retires its failures);
* ``push`` to the repository's default branch.

An edit (``action: edited`` of a comment, a PR's body, a review; a dismissal of a review)
keeps the object's source and ``revises`` it: its memory supersedes the earlier version's. A
deleted comment is a ``forget`` event: no memory, the comment's memories are invalidated.
Anything else (``ping``, other events and actions, pushes elsewhere) raises ``Ignored``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ValidationError
from ._common import (
    ID_CAP,
    Ignored,
    Outcome,
    ParsedEvent,
    block,
    clean,
    clip,
    digest,
    finish,
    iso,
    lower_headers,
    make_tags,
    norm,
    obj,
    objects,
    parse_time,
    prune,
    sentence,
    text,
)

# The headers GitHub signs and numbers its deliveries in (a webhook source's defaults).
SIGNATURE_HEADER = "X-Hub-Signature-256"
DELIVERY_HEADER = "X-GitHub-Delivery"

ISSUE_COMMENT = "issue_comment"
REVIEW_COMMENT = "pull_request_review_comment"
PULL_REQUEST = "pull_request"
REVIEW = "pull_request_review"
WORKFLOW_RUN = "workflow_run"
CHECK_RUN = "check_run"
PUSH = "push"
PING = "ping"

# owner/repo and the number, from a comment's html_url, for payloads missing repository or number.
_HTML_URL = re.compile(r"https?://[^/\s]+/([^/\s]+/[^/\s]+)/(?:pull|issues)/(\d+)")
_FAILED = frozenset({"failure", "timedout", "startupfailure", "cancelled", "canceled"})


def _event_name(payload: Any, headers: dict[str, str]) -> str:
    name = headers.get("x-github-event")
    if name is not None:
        return name.strip().lower()
    if isinstance(payload, dict):
        if "zen" in payload and "hook_id" in payload:
            return PING
        comment = obj(payload.get("comment"))
        if comment and isinstance(payload.get("pull_request"), dict) and (
                "diff_hunk" in comment or "path" in comment):
            return REVIEW_COMMENT
        if comment and isinstance(payload.get("issue"), dict):
            return ISSUE_COMMENT
        for key in (WORKFLOW_RUN, CHECK_RUN):
            if isinstance(payload.get(key), dict):
                return key
        if isinstance(payload.get("review"), dict) and isinstance(payload.get("pull_request"), dict):
            return REVIEW
        if isinstance(payload.get("pull_request"), dict) and "number" in payload:
            return PULL_REQUEST
        if isinstance(payload.get("ref"), str) and "after" in payload and "commits" in payload:
            return PUSH
    raise ValidationError("github delivery has no X-GitHub-Event header and is not a recognisable event")


def _repo(payload: dict[str, Any]) -> str | None:
    repository = obj(payload.get("repository"))
    full = text(repository.get("full_name"), ID_CAP)
    if full:
        return full
    owner = text(obj(repository.get("owner")).get("login"), ID_CAP)
    name = text(repository.get("name"), ID_CAP)
    return f"{owner}/{name}" if owner and name else None


def _login(value: Any) -> str | None:
    return text(obj(value).get("login"), ID_CAP)


def _action(payload: dict[str, Any]) -> tuple[str | None, str]:
    action = text(payload.get("action"), 32)
    return action, norm(action)


def _object(payload: dict[str, Any], key: str, event: str) -> dict[str, Any]:
    found = payload.get(key)
    if not isinstance(found, dict) or not found:
        raise ValidationError(f"github {event} payload has no {key} object")
    return found


def _not_read(event: str, action: str | None, read: str) -> Ignored:
    return Ignored(f"github {event} action {clip(clean(action or '(none)'), 32)!r} is not "
                   f"remembered; varvemem reads {read}")


def _comment(event: str, payload: dict[str, Any]) -> ParsedEvent:
    action, word = _action(payload)
    comment = _object(payload, "comment", event)
    review = event == REVIEW_COMMENT
    thread = obj(payload.get("pull_request" if review else "issue"))
    is_pr = review or bool(thread.get("pull_request"))
    repo = _repo(payload)
    number = text(thread.get("number"), 32)
    comment_url = text(comment.get("html_url"), 1000)
    thread_url = text(thread.get("html_url"), 1000)
    if (not repo or not number) and (match := _HTML_URL.match(comment_url or thread_url or "")):
        repo, number = repo or match.group(1), number or match.group(2)
    title = text(thread.get("title"), 300)
    comment_id = text(comment.get("id"), 32)
    user = obj(comment.get("user"))
    author = text(user.get("login"), ID_CAP)
    author_type = text(user.get("type"), 32)
    body = block(comment.get("body"), 3500)
    path = text(comment.get("path"), 300) if review else None
    line = (text(comment.get("line"), 16) or text(comment.get("original_line"), 16)) if review else None
    created, updated = parse_time(comment.get("created_at")), parse_time(comment.get("updated_at"))
    edited, deleted = word == "edited", word == "deleted"

    kind = "PR" if is_pr else "issue"
    where = f"{kind} {repo or '?'}#{number or '?'}" + (f' "{title}"' if title else "")
    if path:
        where += f" at {path}" + (f" line {line}" if line else "")
    verb = "deleted a comment" if deleted else "edited a comment" if edited else "commented"
    head = f"{author or 'someone'} {verb} on {where}:"
    link = comment_url or thread_url
    content = " ".join(p for p in (head, body or "(empty comment)", f"({link})" if link else None) if p)

    segment = "review_comment" if review else "comment"
    source = f"github:{repo or '-'}#{number or '-'}/{segment}/{comment_id or 'h' + digest(comment)}"
    fields = prune({
        "event": event, "action": action, "repo": repo, "number": number, "title": title,
        "kind": "pull_request" if is_pr else "issue",
        "comment_id": comment_id, "author": author, "author_type": author_type,
        "body": block(comment.get("body"), 2000), "url": comment_url, "thread_url": thread_url,
        "path": path, "line": line,
        "diff_hunk": block(comment.get("diff_hunk"), 1000) if review else None,
        "review_id": text(comment.get("pull_request_review_id"), 32) if review else None,
        "commit_id": text(comment.get("commit_id"), 64) if review else None,
        "created_at": iso(created), "updated_at": iso(updated),
    })
    tags = make_tags("github", "comment", "pr" if is_pr else "issue", "review" if review else None, repo,
                     "edited" if edited else "deleted" if deleted else None,
                     "bot" if norm(author_type) == "bot" else None)
    occurred_at = (updated or created) if edited or deleted else (created or updated)
    return ParsedEvent(content=finish(content), source=source, outcome="comment", tags=tags,
                       fields=fields, occurred_at=occurred_at,
                       revises=source if edited or deleted else None, forget=deleted)


def _thread(payload: dict[str, Any], pr: dict[str, Any]) -> tuple[str | None, str | None, str]:
    repo = _repo(payload)
    number = text(pr.get("number"), 32) or text(payload.get("number"), 32)
    url = text(pr.get("html_url"), 1000)
    if (not repo or not number) and (match := _HTML_URL.match(url or "")):
        repo, number = repo or match.group(1), number or match.group(2)
    return repo, number, f"{repo or '?'}#{number or '?'}"


def _pull_request(event: str, payload: dict[str, Any]) -> ParsedEvent:
    action, word = _action(payload)
    if word not in ("opened", "edited", "closed", "reopened"):
        raise _not_read(event, action, "opened, edited, closed and reopened")
    pr = _object(payload, "pull_request", event)
    repo, number, ref = _thread(payload, pr)
    title = text(pr.get("title"), 300)
    author = _login(pr.get("user"))
    actor = _login(payload.get("sender")) or author
    url = text(pr.get("html_url"), 1000)
    body = block(pr.get("body"), 3000)
    base, head = text(obj(pr.get("base")).get("ref"), 200), text(obj(pr.get("head")).get("ref"), 200)
    merged = word == "closed" and (pr.get("merged") is True or bool(pr.get("merged_at")))
    merged_by = _login(pr.get("merged_by"))
    created, updated = parse_time(pr.get("created_at")), parse_time(pr.get("updated_at"))
    closed = parse_time(pr.get("merged_at")) or parse_time(pr.get("closed_at"))
    what = f'PR {ref}' + (f' "{title}"' if title else "")
    branches = f" ({head} into {base})" if head and base else (f" (into {base})" if base else "")
    link = f"({url})" if url else None
    source = f"github:{repo or '-'}#{number or '-'}/pull_request"
    revises = None
    if word in ("opened", "edited"):
        # The PR's description: an edit is a newer version of the same text.
        verb = "opened" if word == "opened" else "edited"
        parts = [f"{actor or 'someone'} {verb} {what}{branches}:", body or "(no description)", link]
        revises = source if word == "edited" else None
        occurred_at = (updated or created) if word == "edited" else (created or updated)
    else:
        if merged:
            verb = f"merged {what}{branches}" + (f" (merged by {merged_by})" if merged_by
                                                   and merged_by != actor else "")
        elif word == "closed":
            verb = f"closed {what} without merging"
        else:
            verb = f"reopened {what}"
        parts = [f"{actor or 'someone'} {verb}.", link]
        stamp = iso(closed if word == "closed" else updated) or "h" + digest(pr)
        source += f"/{'merged' if merged else word}/{stamp}"
        occurred_at = closed if word == "closed" and closed else (updated or created)
    state = "merged" if merged else word
    fields = prune({
        "event": event, "action": action, "repo": repo, "number": number, "title": title,
        "author": author, "actor": actor, "url": url, "state": state,
        "body": block(pr.get("body"), 2000) if word in ("opened", "edited") else None,
        "base": base, "head": head, "merged": merged if word == "closed" else None,
        "merged_by": merged_by, "draft": pr.get("draft") if isinstance(pr.get("draft"), bool) else None,
        "head_sha": text(obj(pr.get("head")).get("sha"), 64),
        "created_at": iso(created), "updated_at": iso(updated), "closed_at": iso(closed),
    })
    tags = make_tags("github", "pr", state, repo)
    return ParsedEvent(content=finish(" ".join(p for p in parts if p)), source=source,
                       outcome="event", tags=tags, fields=fields, occurred_at=occurred_at,
                       revises=revises)


_REVIEW_VERBS = {"approved": "approved", "changesrequested": "requested changes on",
                 "commented": "reviewed", "dismissed": "reviewed"}


def _review(event: str, payload: dict[str, Any]) -> ParsedEvent:
    action, word = _action(payload)
    if word not in ("submitted", "edited", "dismissed"):
        raise _not_read(event, action, "submitted, edited and dismissed")
    review = _object(payload, "review", event)
    pr = obj(payload.get("pull_request"))
    repo, number, ref = _thread(payload, pr)
    title = text(pr.get("title"), 300)
    reviewer = _login(review.get("user"))
    state = text(review.get("state"), 32)
    body = block(review.get("body"), 3000)
    url = text(review.get("html_url"), 1000) or text(pr.get("html_url"), 1000)
    review_id = text(review.get("id"), 32)
    submitted = parse_time(review.get("submitted_at"))
    what = f"PR {ref}" + (f' "{title}"' if title else "")
    link = f"({url})" if url else None
    if word == "dismissed":
        actor = _login(payload.get("sender"))
        head = f"{reviewer or 'someone'}'s review of {what} was dismissed" + (
            f" by {actor}" if actor and actor != reviewer else "") + (":" if body else ".")
        parts = [head, body, link]
    else:
        verb = _REVIEW_VERBS.get(norm(state), "reviewed")
        edited = " (edited)" if word == "edited" else ""
        parts = [f"{reviewer or 'someone'} {verb} {what}{edited}:", body or f"({state or 'no text'})", link]
    source = f"github:{repo or '-'}#{number or '-'}/review/{review_id or 'h' + digest(review)}"
    fields = prune({
        "event": event, "action": action, "repo": repo, "number": number, "title": title,
        "review_id": review_id, "reviewer": reviewer, "state": state,
        "body": block(review.get("body"), 2000), "url": url,
        "commit_id": text(review.get("commit_id"), 64), "submitted_at": iso(submitted),
    })
    tags = make_tags("github", "review", "pr", norm(state) or None, repo,
                     "edited" if word == "edited" else None)
    return ParsedEvent(content=finish(" ".join(p for p in parts if p)), source=source,
                       outcome="comment", tags=tags, fields=fields,
                       occurred_at=submitted if word == "submitted" else None,
                       revises=source if word in ("edited", "dismissed") else None)


def _conclusion(conclusion: str | None) -> Outcome:
    word = norm(conclusion)
    if word in _FAILED:
        return "failure"
    return "success" if word == "success" else "event"


def _run_words(conclusion: str | None, outcome: Outcome) -> str:
    if outcome == "failure":
        return {"timedout": "timed out", "cancelled": "was cancelled", "canceled": "was cancelled",
                "startupfailure": "failed to start"}.get(norm(conclusion), "failed")
    if outcome == "success":
        return "succeeded"
    return f"completed ({conclusion})" if conclusion else "completed"


def _pipeline(repo: str | None, kind: str, name: str | None, branch: str | None) -> str | None:
    """The subject a run reports the state of: one workflow (or check) on one branch of one
    repository; None when a part is unknown (no run may retire another branch's)."""
    if not (repo and name and branch):
        return None
    return f"github:{repo}/{kind}/{name}@{branch}"


def _workflow_run(event: str, payload: dict[str, Any]) -> ParsedEvent:
    action, word = _action(payload)
    if word != "completed":
        raise _not_read(event, action, "completed runs")
    run = _object(payload, "workflow_run", event)
    repo = _repo(payload)
    name = text(run.get("name"), 200) or text(obj(payload.get("workflow")).get("name"), 200)
    conclusion = text(run.get("conclusion"), 32)
    outcome = _conclusion(conclusion)
    number = text(run.get("run_number"), 16)
    attempt = text(run.get("run_attempt"), 16)
    branch = text(run.get("head_branch"), 200)
    sha = text(run.get("head_sha"), 64)
    trigger = text(run.get("event"), 64)
    url = text(run.get("html_url"), 1000)
    actor = _login(run.get("triggering_actor")) or _login(run.get("actor"))
    head_commit = obj(run.get("head_commit"))
    message = text(head_commit.get("message"), 200)
    started = parse_time(run.get("run_started_at")) or parse_time(run.get("created_at"))
    updated = parse_time(run.get("updated_at"))
    run_id = text(run.get("id"), 32)
    label = f'workflow "{name}"' if name else "a workflow"
    head = (f"GitHub Actions {label} run" + (f" #{number}" if number else "")
            + (f" (attempt {attempt})" if attempt and attempt != "1" else "")
            + f" {_run_words(conclusion, outcome)} on {repo or '?'}"
            + (f" branch {branch}" if branch else "") + ".")
    details = ", ".join(p for p in (f"triggered by {trigger}" if trigger else None,
                                    f"by {actor}" if actor else None,
                                    f"commit {sha[:12]}" if sha else None) if p)
    parts = [head, details[:1].upper() + details[1:] + "." if details else None,
             f'Commit message: "{message}".' if message else None, url]
    source = f"github:{repo or '-'}/workflow_run/{run_id or 'h' + digest(run)}/{attempt or '1'}"
    fields = prune({
        "event": event, "action": action, "repo": repo, "workflow": name, "run_id": run_id,
        "run_number": number, "run_attempt": attempt, "status": text(run.get("status"), 32),
        "conclusion": conclusion, "branch": branch, "head_sha": sha, "trigger": trigger,
        "actor": actor, "url": url, "commit_message": message,
        "started_at": iso(started), "updated_at": iso(updated),
    })
    tags = make_tags("github", "workflow", "ci", {"failure": "failed", "success": "succeeded"}.get(
        outcome, norm(conclusion) or None), repo, name, f"branch:{branch}" if branch else None)
    workflow = text(run.get("workflow_id"), 32) or name
    return ParsedEvent(content=finish(" ".join(p for p in parts if p)), source=source,
                       outcome=outcome, tags=tags, fields=fields, occurred_at=updated or started,
                       state_of=_pipeline(repo, "workflow", workflow, branch))


def _check_run(event: str, payload: dict[str, Any]) -> ParsedEvent:
    action, word = _action(payload)
    if word != "completed":
        raise _not_read(event, action, "completed check runs")
    check = _object(payload, "check_run", event)
    conclusion = text(check.get("conclusion"), 32)
    if norm(conclusion) == "skipped":
        raise Ignored("github check_run skipped: nothing ran")
    outcome = _conclusion(conclusion)
    repo = _repo(payload)
    name = text(check.get("name"), 200)
    suite = obj(check.get("check_suite"))
    branch = text(suite.get("head_branch"), 200)
    sha = text(check.get("head_sha"), 64) or text(suite.get("head_sha"), 64)
    url = text(check.get("html_url"), 1000) or text(check.get("details_url"), 1000)
    output = obj(check.get("output"))
    title, summary = text(output.get("title"), 300), block(output.get("summary"), 1500)
    app = text(obj(check.get("app")).get("name"), 100)
    prs = [n for n in (text(p.get("number"), 16) for p in objects(check.get("pull_requests"), 10)) if n]
    completed = parse_time(check.get("completed_at"))
    started = parse_time(check.get("started_at"))
    check_id = text(check.get("id"), 32)
    head = (f'Check "{name or "?"}"' + (f" ({app})" if app else "")
            + f" {_run_words(conclusion, outcome)} on {repo or '?'}"
            + (f" branch {branch}" if branch else "") + (f" commit {sha[:12]}" if sha else "")
            + (f" (PR {', '.join('#' + n for n in prs)})" if prs else "") + ".")
    parts = [head, f"{title}: {summary}" if title and summary else title or summary, url]
    source = f"github:{repo or '-'}/check_run/{check_id or 'h' + digest(check)}"
    fields = prune({
        "event": event, "action": action, "repo": repo, "check": name, "check_id": check_id,
        "app": app, "status": text(check.get("status"), 32), "conclusion": conclusion,
        "branch": branch, "head_sha": sha, "url": url, "title": title,
        "summary": block(output.get("summary"), 1000), "pull_requests": prs,
        "started_at": iso(started), "completed_at": iso(completed),
    })
    tags = make_tags("github", "check", "ci", {"failure": "failed", "success": "succeeded"}.get(
        outcome, norm(conclusion) or None), repo, name, f"branch:{branch}" if branch else None)
    return ParsedEvent(content=finish(sentence(*parts)), source=source,
                       outcome=outcome, tags=tags, fields=fields, occurred_at=completed or started,
                       state_of=_pipeline(repo, "check", f"{app}/{name}" if app else name, branch))


def _push(event: str, payload: dict[str, Any]) -> ParsedEvent:
    ref = text(payload.get("ref"), 300)
    repository = obj(payload.get("repository"))
    default = text(repository.get("default_branch"), 200) or text(repository.get("master_branch"), 200)
    branch = ref.removeprefix("refs/heads/") if ref and ref.startswith("refs/heads/") else None
    if branch is None or (branch != default if default else branch not in ("main", "master")):
        raise Ignored(f"github push to {clip(ref or '?', 100)!r} is not remembered; varvemem reads "
                      f"pushes to the default branch ({default or 'main or master'})")
    if payload.get("deleted") is True:
        raise Ignored("github push deleted the default branch")
    repo = _repo(payload)
    pusher = text(obj(payload.get("pusher")).get("name"), ID_CAP) or _login(payload.get("sender"))
    raw_commits = payload.get("commits")
    commits = objects(raw_commits, 2048)
    after = text(payload.get("after"), 64)
    compare = text(payload.get("compare"), 1000)
    forced = payload.get("forced") is True
    lines = []
    for commit in commits[:10]:
        sha = text(commit.get("id"), 64)
        message = text(commit.get("message"), 200)
        if sha or message:
            lines.append(f"{(sha or '?')[:7]} {message or ''}".strip())
    head_commit = obj(payload.get("head_commit"))
    if not lines and head_commit:
        lines.append(f"{(text(head_commit.get('id'), 64) or '?')[:7]} "
                     f"{text(head_commit.get('message'), 200) or ''}".strip())
    count = len(commits)
    what = f"{count} commit{'s' if count != 1 else ''}" if count else "commits"
    head = (f"{pusher or 'someone'} {'force-pushed' if forced else 'pushed'} {what} to {branch} "
            f"of {repo or '?'}" + (":" if lines else "."))
    more = f"(and {count - 10} more)" if count > 10 else None
    parts = [head, "; ".join(lines) if lines else None, more, compare]
    moment = parse_time(head_commit.get("timestamp"))
    source = f"github:{repo or '-'}/push/{branch}/{after or 'h' + digest(payload)}"
    fields = prune({
        "event": event, "repo": repo, "ref": ref, "branch": branch, "pusher": pusher,
        "before": text(payload.get("before"), 64), "after": after, "forced": forced or None,
        "created": payload.get("created") is True or None, "commit_count": count,
        "commits": lines, "compare": compare,
    })
    tags = make_tags("github", "push", repo, f"branch:{branch}", "forced" if forced else None)
    return ParsedEvent(content=finish(" ".join(p for p in parts if p)), source=source,
                       outcome="event", tags=tags, fields=fields, occurred_at=moment)


_HANDLERS: dict[str, Callable[[str, dict[str, Any]], ParsedEvent]] = {
    ISSUE_COMMENT: _comment, REVIEW_COMMENT: _comment, PULL_REQUEST: _pull_request,
    REVIEW: _review, WORKFLOW_RUN: _workflow_run, CHECK_RUN: _check_run, PUSH: _push,
}
HANDLED = (*_HANDLERS, PING)


def parse(payload: Any, headers: Mapping[str, str] | None = None) -> list[ParsedEvent]:
    """The one event of a GitHub delivery; ``Ignored`` for a ping or an event or action not read."""
    event = _event_name(payload, lower_headers(headers))
    if event == PING:
        raise Ignored("github ping: the webhook works")
    handler = _HANDLERS.get(event)
    if handler is None:
        raise Ignored(f"github event {clip(clean(event), 64)!r} is not remembered; varvemem reads "
                      f"{', '.join(_HANDLERS)}")
    if not isinstance(payload, dict):
        raise ValidationError(f"github {event} payload must be a JSON object")
    return [handler(event, payload)]


