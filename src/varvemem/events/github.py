"""GitHub comments on pull requests and issues.

The ``X-GitHub-Event`` header picks the format: ``issue_comment`` (a conversation comment on a PR
or an issue) and ``pull_request_review_comment`` (a comment on a line of a PR's diff) become one
event each; ``ping`` and deleted comments are acknowledged and ignored; any other event is refused.
Without the header the event is inferred from the payload's shape. An edited comment keeps the
source of the comment (same identity, newer text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import UnsupportedEventError, ValidationError
from ._common import (
    ID_CAP,
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
    parse_time,
    prune,
    text,
)

# The headers GitHub signs and numbers its deliveries in (a webhook source's defaults).
SIGNATURE_HEADER = "X-Hub-Signature-256"
DELIVERY_HEADER = "X-GitHub-Delivery"

ISSUE_COMMENT = "issue_comment"
REVIEW_COMMENT = "pull_request_review_comment"
PING = "ping"
HANDLED = (ISSUE_COMMENT, REVIEW_COMMENT, PING)

# owner/repo and the number, from a comment's html_url, for payloads missing repository or number.
_HTML_URL = re.compile(r"https?://[^/\s]+/([^/\s]+/[^/\s]+)/(?:pull|issues)/(\d+)")


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
    raise ValidationError("github delivery has no X-GitHub-Event header and is not a recognisable comment")


def _repo(payload: dict[str, Any]) -> str | None:
    repository = obj(payload.get("repository"))
    full = text(repository.get("full_name"), ID_CAP)
    if full:
        return full
    owner = text(obj(repository.get("owner")).get("login"), ID_CAP)
    name = text(repository.get("name"), ID_CAP)
    return f"{owner}/{name}" if owner and name else None


def parse(payload: Any, headers: Mapping[str, str] | None = None) -> list[ParsedEvent]:
    """The comment event of one GitHub delivery; [] for a ping or a deleted comment."""
    event = _event_name(payload, lower_headers(headers))
    if event == PING:
        return []
    if event not in HANDLED:
        raise UnsupportedEventError(
            f"github event {clip(clean(event), 64)!r} is not handled; varvemem reads "
            f"{ISSUE_COMMENT} and {REVIEW_COMMENT} (and acknowledges ping)")
    if not isinstance(payload, dict):
        raise ValidationError(f"github {event} payload must be a JSON object")
    action = text(payload.get("action"), 32)
    if norm(action) == "deleted":
        return []
    comment = payload.get("comment")
    if not isinstance(comment, dict) or not comment:
        raise ValidationError(f"github {event} payload has no comment object")

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
    edited = norm(action) == "edited"

    kind = "PR" if is_pr else "issue"
    where = f"{kind} {repo or '?'}#{number or '?'}" + (f' "{title}"' if title else "")
    if path:
        where += f" at {path}" + (f" line {line}" if line else "")
    head = f"{author or 'someone'} {'edited a comment' if edited else 'commented'} on {where}:"
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
                     "edited" if edited else None, "bot" if norm(author_type) == "bot" else None)
    occurred_at = (updated or created) if edited else (created or updated)
    return [ParsedEvent(content=finish(content), source=source, outcome="comment", tags=tags,
                        fields=fields, occurred_at=occurred_at)]
