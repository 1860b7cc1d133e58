"""Extraction (SPEC UPD-1): turn messages, tool results, platform events and documents into drafts."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ValidationError
from ..model import Draft, MemoryType, Scope, check_text
from ..text import chunk_markdown
from ..text.chunking import pieces

# The fields an event's content names, in this order ("title: ...; message: ..."); public so
# the claim rules can read past them (:func:`.claims.slots`).
EVENT_FIELDS = (
    "title", "summary", "alertname", "status", "severity", "service", "pipeline", "stage",
    "execution", "repository", "pr_number", "author", "error_message", "message", "body",
    "description", "url",
)


def message_text(content: Any) -> str:
    """The text of a chat message's ``content``: a string, or the text parts of a list of
    parts (OpenAI's multimodal form); ``None`` (a tool-call message) has none."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p if isinstance(p, str) else str(p.get("text", ""))
                         for p in content if isinstance(p, (str, Mapping)))
    raise ValidationError(f"message content of type {type(content).__name__} is not text")


def from_messages(messages: Iterable[Mapping[str, Any]], scope: Scope, source: str = "user",
                  max_bytes: int | None = None, **common: Any) -> list[Draft]:
    """One dialogue draft per chat message ``{"role": ..., "content": ...}``; messages without
    text (tool-call stubs, image-only parts) are skipped. A text over ``max_bytes`` (UTF-8)
    becomes consecutive drafts within it, cut at paragraphs, lines or spaces
    (:func:`~varvemem.text.chunking.pieces`), each knowing its ``part`` of ``parts``."""
    drafts = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping) or "content" not in msg:
            raise ValidationError(f"message {i} has no 'content'")
        text = message_text(msg["content"])
        if not text.strip():
            continue
        check_text(text, f"message {i}: content")  # before it is measured and cut
        role = str(msg.get("role") or "user")
        check_text(role, f"message {i}: role")
        meta = {"role": role, **dict(msg.get("metadata") or {})}
        if msg.get("name"):
            meta["name"] = str(msg["name"])
        src = source if role == "user" else f"agent:{role}"
        parts = [text] if max_bytes is None or len(text.encode("utf-8")) <= max_bytes \
            else pieces(text, max_bytes)
        for n, part in enumerate(parts, 1):
            drafts.append(Draft(content=part, memory_type=MemoryType.DIALOGUE, scope=scope,
                                source=src, metadata=meta if len(parts) == 1 else
                                {**meta, "part": n, "parts": len(parts)}, **common))
    return drafts


def from_tool_call(name: str, arguments: Mapping[str, Any] | None, result: Any, scope: Scope,
                   **common: Any) -> Draft:
    """A tool call and its result as one ``tool_call`` draft."""
    args = json.dumps(dict(arguments or {}), ensure_ascii=False, sort_keys=True, default=str)
    out = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    return Draft(content=f"Tool {name}({args}) returned: {out}", memory_type=MemoryType.TOOL_CALL,
                 scope=scope, source=f"tool:{name}",
                 metadata={"tool": name, "arguments": dict(arguments or {})}, **common)


def describe_event(event: Mapping[str, Any]) -> str:
    """A readable one-paragraph summary of a platform event from its usual fields."""
    parts = []
    for key in EVENT_FIELDS:
        value = event.get(key)
        if value not in (None, "", [], {}):
            parts.append(f"{key}: {value}")
    for key in ("labels", "annotations"):
        value = event.get(key)
        if isinstance(value, Mapping):
            parts.extend(f"{k}: {v}" for k, v in value.items() if k not in event)
    if not parts:
        parts = [json.dumps(dict(event), ensure_ascii=False, sort_keys=True, default=str)]
    return "; ".join(parts)


def from_event(event: Mapping[str, Any], scope: Scope, source: str = "event",
               **common: Any) -> Draft:
    """A platform event (pipeline, PR comment, alert, generic) as an ``event`` draft."""
    if not isinstance(event, Mapping) or not event:
        raise ValidationError("an event must be a non-empty JSON object")
    kind = source.split(":", 1)[-1]
    return Draft(content=f"[{kind}] {describe_event(event)}", memory_type=MemoryType.EVENT,
                 scope=scope, source=source if ":" in source else f"event:{source}",
                 metadata={"raw": dict(event)}, **common)


def from_document(text: str, source: str, scope: Scope, max_chars: int,
                  **common: Any) -> list[Draft]:
    """Knowledge drafts, one per chunk, each knowing its section and position."""
    drafts = []
    for i, (section, chunk) in enumerate(chunk_markdown(text, max_chars)):
        meta = {"section": section, "chunk": i}
        drafts.append(Draft(content=chunk, memory_type=MemoryType.KNOWLEDGE, scope=scope,
                            source=source, metadata=meta, **common))
    return drafts
