"""Any other JSON object: read its common fields, or keep it whole as compact JSON.

Recognised (all optional): ``type``/``event``, ``title``/``summary``, ``message``/``text``/
``description``, ``status``, ``severity``, ``id``, ``url``, ``tags`` (list of strings) and
``occurred_at``/``timestamp`` (ISO 8601 or epoch seconds or milliseconds). The outcome comes from
the status as for pipelines (failed, succeeded, started...), and "firing"/"resolved" pass through;
anything else is "event". The source is the ``id`` when there is one, else a hash of the object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError
from ._common import (
    CONTENT_CAP,
    ID_CAP,
    STATE_WORDS,
    Outcome,
    ParsedEvent,
    block,
    canonical,
    clip,
    digest,
    finish,
    iso,
    make_tags,
    norm,
    outcome_from_status,
    parse_time,
    pick,
    pick_raw,
    prune,
    sentence,
    text_list,
)


def _outcome(status: str | None) -> Outcome:
    word = norm(status)
    if word in ("firing", "resolved"):
        return "firing" if word == "firing" else "resolved"
    return outcome_from_status(status) or "event"


def _compact(payload: dict[str, Any]) -> str:
    try:
        dumped = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        dumped = canonical(payload)
    return clip(dumped, CONTENT_CAP)


def parse(payload: Any, headers: Mapping[str, str] | None = None) -> list[ParsedEvent]:
    """The one event of a generic JSON object."""
    if not isinstance(payload, dict) or not payload:
        raise ValidationError("generic payload must be a non-empty JSON object")
    sources = [payload]
    event_type = pick(sources, ("type", "event"), 64)
    title = pick(sources, ("title", "summary"), 300)
    message = next((found for key in ("message", "text", "description")
                    if (found := block(payload.get(key), 3000)) is not None), None)
    status = pick(sources, ("status",), 64)
    severity = pick(sources, ("severity",), 32)
    ident = pick(sources, ("id",), ID_CAP)
    url = pick(sources, ("url",), 1000)
    user_tags = text_list(payload.get("tags"), 64)[:20]
    occurred_at = parse_time(pick_raw(sources, ("occurred_at", "timestamp")))
    outcome = _outcome(status)

    if title or message:
        details = ", ".join(p for p in (f"status {status}" if status else None,
                                        f"severity {severity}" if severity else None) if p)
        content = sentence(title, message, f"({details})" if details else None, url)
        if event_type:
            content = f"[{event_type}] {content}"
    else:
        content = _compact(payload)

    fields = prune({
        "type": event_type, "title": title, "message": message, "status": status, "severity": severity,
        "id": ident, "url": url, "tags": user_tags, "occurred_at": iso(occurred_at),
    })
    state = STATE_WORDS.get(outcome) or (outcome if outcome != "event" else norm(status))
    tags = make_tags("generic", event_type, state, f"severity:{severity}" if severity else None, *user_tags)
    source = f"generic:{ident}" if ident else f"generic:h{digest(payload)}"
    return [ParsedEvent(content=finish(content), source=source, outcome=outcome, tags=tags,
                        fields=fields, occurred_at=occurred_at)]
