"""L1 of the FAQ assistant (SPEC L1-1, L1-2): per-session Markdown history and its compression.

The names follow seed 2's ``SessionStore``: :meth:`SessionHistory.save`,
:meth:`SessionHistory.load_session`, :meth:`SessionHistory.compress_history`. The history is a
log for people and prompts; memories are made from it by :meth:`varvemem.Memory.add_messages`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ._validate import valid_text
from .engines.abstraction import sentences
from .engines.extract import message_text
from .errors import LLMError, ValidationError
from .llm import ChatClient
from .settings import HistorySettings
from .stores.session_log import SessionLog, Turn

log = logging.getLogger("varvemem.llm")  # the summary's LLM fallback


class SessionHistory:
    """Markdown session files under ``<home>/sessions``, one per session, per tenant."""

    def __init__(self, log: SessionLog, cfg: HistorySettings, clock: Callable[[], datetime],
                 tenant: Callable[[str | None], str], llm: ChatClient | None = None) -> None:
        self._log = log
        self.cfg = cfg
        self._clock = clock
        self._tenant = tenant
        self._llm = llm

    def path(self, session: str, *, tenant: str | None = None) -> Path:
        """The session's file (it may not exist yet)."""
        return self._log.path(self._tenant(tenant), session)

    def save(self, session: str, messages: Iterable[Mapping[str, Any]], *,
             summary: str | None = None, tenant: str | None = None,
             user: str | None = None, exact: bool = False) -> Path:
        """Append ``{"role", "content"}`` messages to the session's file, time-stamped, in full.
        ``summary`` is kept beside the last assistant message of the call (the answer it
        summarises; an error when there is none), for :meth:`compress_history`. ``user``
        marks the turns as theirs (erasing the user removes them). A message's ``data`` (a
        JSON object: the fields of the message it came from) is kept with its turn, and its
        ``sources`` (the ids of the memories its text quotes: erasing one of them removes
        the turn).

        By default the text is stripped and a message without text is left out; ``exact``
        keeps each text as given, empty ones too (a chat history's replay)."""
        if user is not None and (not isinstance(user, str) or not user.strip()):
            raise ValidationError("user must be non-empty text or None")
        valid_text(user, "user")
        now = self._clock()
        turns = []
        for i, msg in enumerate(messages):
            if not isinstance(msg, Mapping) or "content" not in msg:
                raise ValidationError(f"message {i} has no 'content'")
            role = str(msg.get("role") or "user")
            text = message_text(msg["content"])
            data = msg.get("data")
            if data is not None and not isinstance(data, Mapping):
                raise ValidationError(f"message {i}: data must be a JSON object")
            sources = msg.get("sources") or ()
            if isinstance(sources, str) or not all(isinstance(s, str) for s in sources):
                raise ValidationError(f"message {i}: sources must be a list of memory ids")
            valid_text(list(sources), f"message {i}: sources")
            valid_text(text, f"message {i}")
            valid_text(data, f"message {i}: data")
            if not exact:
                text = text.strip()
            if text or exact:
                turns.append(Turn(now, role, text, user=user,
                                  data=None if data is None else dict(data),
                                  sources=tuple(sources)))
        if not turns:
            raise ValidationError("no message with text to save")
        if summary is not None and summary.strip():
            last = max((i for i, t in enumerate(turns) if t.role == "assistant"), default=None)
            if last is None:
                raise ValidationError("a summary needs an assistant message with text to "
                                      "summarise")
            valid_text(summary, "summary")
            turns[last] = replace(turns[last], summary=summary.strip())
        return self._log.append(self._tenant(tenant), session, turns)

    def sessions(self, *, tenant: str | None = None) -> list[str]:
        """The ids of the tenant's sessions that have a file, sorted."""
        return self._log.sessions(self._tenant(tenant))

    def delete_session(self, session: str, *, tenant: str | None = None) -> int:
        """Delete the session's file; 1 if there was one, else 0."""
        return self._log.delete(self._tenant(tenant), session)

    def erase_user(self, user: str, *, tenant: str | None = None) -> tuple[int, int]:
        """Take the turns saved for ``user`` out of the tenant's session files (a file left
        empty is deleted): (files deleted, turns removed)."""
        return self._log.erase_user(self._tenant(tenant), user)

    def load_session(self, session: str, *, tenant: str | None = None) -> list[dict[str, Any]]:
        """The session's turns, oldest first: ``{"role", "content", "at", "summary", "user",
        "data", "sources"}``, with each turn's full text, its summary, its user and its
        message fields (each None when it was saved without), and the memories it quotes."""
        return [{"role": t.role, "content": t.content, "at": t.at, "summary": t.summary,
                 "user": t.user, "data": t.data, "sources": list(t.sources)}
                for t in self._log.load(self._tenant(tenant), session)]

    def compress_history(self, messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Seed 2's compression for a prompt: a user message over ``history.slim_chars`` keeps
        its head and a marker; an assistant answer is replaced by its ``summary`` (its own, as
        :meth:`load_session` returns it, or one made here: by the LLM when configured, else its
        first sentences)."""
        out = []
        for msg in messages:
            role = str(msg.get("role") or "user")
            text = message_text(msg.get("content")).strip()
            if role == "assistant":
                given = msg.get("summary")
                out.append({"role": role, "content": given.strip() if isinstance(given, str)
                            and given.strip() else self.summarise(text)})
            elif len(text) > self.cfg.slim_chars:
                cut = len(text) - self.cfg.slim_chars
                out.append({"role": role,
                            "content": f"{text[: self.cfg.slim_chars]} …[{cut} characters cut]"})
            else:
                out.append({"role": role, "content": text})
        return out

    def summarise(self, text: str) -> str:
        """An answer's summary: the LLM's when configured (falling back on failure), else its
        leading sentences within ``history.summary_chars``."""
        limit = self.cfg.summary_chars
        if self._llm is not None:
            try:
                data = self._llm.complete_json(
                    "Summarise this answer of a support assistant in at most "
                    f"{limit} characters, keeping names, numbers and steps. "
                    'Reply as {"summary": "..."}.', text)
                if isinstance(data.get("summary"), str) and data["summary"].strip():
                    return str(data["summary"]).strip()[:limit]
                log.warning("summary falls back to leading sentences: no summary in the "
                            "LLM's answer")
            except LLMError as exc:
                log.warning("summary falls back to leading sentences: %s", exc)
        kept: list[str] = []
        for s in sentences(text):
            if kept and len(" ".join([*kept, s])) > limit:
                break
            kept.append(s)
        summary = " ".join(kept)
        return summary if len(summary) <= limit else summary[: limit - 1].rstrip() + "…"
