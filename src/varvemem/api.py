"""The library API: :class:`Memory`, one object per home folder, no global state.

Every surface (CLI, and later REST and MCP) is a thin face over this class.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pydantic

from . import qa_files
from .embeddings import Embedder, check_installed, create_embedder
from .engines import extract, timeline
from .engines.inbox import DrainReport, InboxEngine, Receipt
from .engines.intent import chit_chat
from .engines.lifecycle import ConsolidationReport, LifecycleEngine
from .engines.retrieval import RetrievalEngine
from .engines.update import UpdateEngine, content_hash, embedding_text, snapshot
from .errors import NotFoundError, ValidationError, VarvememError
from .history import SessionHistory
from .keys import KeyRing
from .llm import ChatClient
from .model import (
    AddResult,
    Draft,
    HistoryEntry,
    IngestReport,
    MemoryRecord,
    MemoryType,
    Scope,
    SearchFilter,
    SearchHit,
    Tier,
    TTLMode,
    normalise_tags,
    utcnow,
)
from .settings import Settings, describe_validation_error
from .stores import Stores
from .stores.base import InboxEvent, Selection
from .stores.session_log import SessionLog
from .text import extract_keywords

Clock = Callable[[], datetime]

_HEX = frozenset("0123456789abcdef")
_ID_PREFIX_MIN = 6  # hex digits of a short id, as git's shortest
_ID_MATCHES = 10  # ids an ambiguous short id lists


def _enum(cls: type, value: Any, what: str) -> Any:
    if value is None or isinstance(value, cls):
        return value
    try:
        return cls(str(value))
    except ValueError:
        known = ", ".join(m.value for m in cls)  # type: ignore[attr-defined]
        raise ValidationError(f"unknown {what} {value!r} (known: {known})") from None


def _enums(cls: type, values: Any, what: str) -> list[Any] | None:
    if values is None:
        return None
    if isinstance(values, (str, cls)):
        values = [values]
    return [_enum(cls, v, what) for v in values]


class Memory:
    """Long-term memory for agents, stored under ``home``.

    >>> with Memory(home="/tmp/mem") as mem:
    ...     mid = mem.add("The staging cluster is eks-stg-2").memory_id
    ...     hits = mem.search("which cluster is staging?")
    """

    def __init__(self, home: str | Path | None = None, settings: Settings | None = None, *,
                 clock: Clock | None = None, embedder: Embedder | None = None,
                 llm: ChatClient | None = None) -> None:
        if settings is None:
            settings = Settings.load(home=home)
        elif home is not None:
            settings = settings.model_copy(update={"home": Path(home).expanduser()})
        self.settings = settings
        self.clock: Clock = clock or utcnow
        if embedder is None:  # its optional package, found without loading the model
            check_installed(settings.embedder.name)
        self._embedder = embedder
        self._own_llm = llm is None and settings.llm.enabled  # closed by close()
        if llm is None and settings.llm.enabled:
            llm = ChatClient(settings.llm)
        self._llm = llm
        self.stores = Stores(settings, self._model_id)
        self._update = UpdateEngine(settings, self.stores, self.embedder, self._now, llm)
        self._retrieval = RetrievalEngine(settings, self.stores, self.embedder, self._now)
        self._lifecycle = LifecycleEngine(settings, self.stores, self._update, self._now, llm)
        self._inbox = InboxEngine(settings, self.stores, self._update, self._now, self.stores.records)
        self.keys = KeyRing(self.stores.records, self._now)
        """API keys of the service (``create``, ``list``, ``revoke``, ``authenticate``)."""
        # L3's cache: (tenant, user, question as typed) -> (pair id, its content hash).
        self.sessions = SessionHistory(SessionLog(settings.home / "sessions",
                                                  settings.default_tenant),
                                       settings.history, self._now, self._tenant, llm)
        """L1: per-session Markdown history (``save``, ``load_session``, ``compress_history``)."""

    # -- plumbing ------------------------------------------------------------------------------
    def _now(self) -> datetime:
        now = self.clock()
        return now if now.tzinfo else now.replace(tzinfo=timezone.utc)

    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use."""
        if self._embedder is None:
            self._embedder = create_embedder(self.settings.embedder)
        return self._embedder

    def _model_id(self) -> tuple[str, int]:
        e = self.embedder()
        return e.model_id, e.dim

    @property
    def notices(self) -> list[str]:
        """Things the stores did on their own that a user should hear about (e.g. a rebuild)."""
        return self.stores.notices

    def _scope(self, tenant: str | None, user: str | None, agent: str | None,
               session: str | None) -> Scope:
        for name, value in (("user", user), ("agent", agent), ("session", session)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ValidationError(f"{name} must be non-empty text or None")
        return Scope(tenant=self._tenant(tenant), user=user, agent=agent, session=session)

    def _tenant(self, tenant: str | None) -> str:
        """``None`` means the default tenant; an empty tenant is refused, never defaulted."""
        if tenant is None:
            return self.settings.default_tenant
        if not isinstance(tenant, str) or not tenant.strip():
            raise ValidationError("tenant must be non-empty text")
        return tenant

    def close(self) -> None:
        """Persist the vector index and close the store (and the LLM client made here)."""
        self._retrieval.close()
        self.stores.close()
        if self._own_llm and self._llm is not None:
            self._llm.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes --------------------------------------------------------------------------------
    def add(self, content: str, *, type: str | MemoryType | None = None,
            tags: Sequence[str] | None = None, source: str = "user",
            importance: float | None = None, user: str | None = None, agent: str | None = None,
            session: str | None = None, tenant: str | None = None,
            tier: str | Tier | None = None, ttl_mode: str | TTLMode | None = None,
            ttl_days: float | None = None, metadata: Mapping[str, Any] | None = None,
            supersedes: Sequence[str] | None = None, created_at: datetime | None = None,
            question: str | None = None, answer: str | None = None,
            score: float | None = None) -> AddResult:
        """Remember one thing. Returns the new id, or the existing one for a duplicate."""
        draft = self._draft(content, type=type, tags=tags, source=source, importance=importance,
                            scope=self._scope(tenant, user, agent, session), tier=tier,
                            ttl_mode=ttl_mode, ttl_days=ttl_days, metadata=metadata,
                            supersedes=supersedes, created_at=created_at, question=question,
                            answer=answer, score=score)
        return self._update.add([draft])[0]

    def _draft(self, content: str, **kw: Any) -> Draft:
        if not isinstance(content, str):
            raise ValidationError("content must be text")
        if kw.get("created_at") is not None:
            kw["created_at"] = _utc(kw["created_at"], "created_at")
        try:
            return Draft(
                content=content, memory_type=_enum(MemoryType, kw.pop("type"), "memory type"),
                tier=_enum(Tier, kw.pop("tier"), "tier"),
                ttl_mode=_enum(TTLMode, kw.pop("ttl_mode"), "TTL mode"),
                tags=kw.pop("tags") or [], metadata=dict(kw.pop("metadata") or {}),
                supersedes=list(kw.pop("supersedes") or []), **kw)
        except pydantic.ValidationError as exc:
            raise ValidationError(describe_validation_error(exc, "memory")) from None

    def add_many(self, items: Iterable[str | Mapping[str, Any]], *,
                 vectors: np.ndarray | None = None, **defaults: Any) -> list[AddResult]:
        """Bulk add, embedded in batches. Items are strings or dicts of :meth:`add`'s arguments;
        ``defaults`` apply to every item. ``vectors`` (one unit vector per item) skips embedding."""
        drafts = []
        for i, item in enumerate(items):
            if not isinstance(item, (str, Mapping)):
                raise ValidationError(f"item {i} must be text or a mapping")
            kw = {**defaults, **({"content": item} if isinstance(item, str) else dict(item))}
            if "content" not in kw:
                raise ValidationError(f"item {i} has no content")
            scope = self._scope(kw.pop("tenant", None), kw.pop("user", None),
                                kw.pop("agent", None), kw.pop("session", None))
            kw.setdefault("source", "user")
            for key in ("type", "tier", "ttl_mode", "tags", "metadata", "supersedes"):
                kw.setdefault(key, None)
            drafts.append(self._draft(kw.pop("content"), scope=scope, **kw))
        return self._update.add(drafts, vectors=vectors)

    def add_messages(self, messages: Iterable[Mapping[str, Any]], *, user: str | None = None,
                     agent: str | None = None, session: str | None = None,
                     tenant: str | None = None, tags: Sequence[str] | None = None,
                     created_at: datetime | None = None) -> list[AddResult]:
        """Remember a conversation: one dialogue memory per ``{"role", "content"}`` message."""
        drafts = extract.from_messages(messages, self._scope(tenant, user, agent, session),
                                       source="user", tags=list(tags or []),
                                       created_at=created_at)
        return self._update.add(drafts)

    def add_tool_call(self, name: str, arguments: Mapping[str, Any] | None, result: Any, *,
                      user: str | None = None, agent: str | None = None,
                      session: str | None = None, tenant: str | None = None,
                      tags: Sequence[str] | None = None, importance: float | None = None,
                      important: bool = False, created_at: datetime | None = None) -> AddResult:
        """Remember a tool call and its result. It expires after
        ``lifecycle.tool_call_ttl_hours`` unless ``important`` (or its importance reaches
        ``lifecycle.important_at``)."""
        if important:
            importance = max(importance or 0.0, self.settings.lifecycle.important_at)
        draft = extract.from_tool_call(name, arguments, result,
                                       self._scope(tenant, user, agent, session),
                                       tags=list(tags or []), importance=importance,
                                       created_at=created_at)
        return self._update.add([draft])[0]

    def add_event(self, event: Mapping[str, Any], *, source: str = "event",
                  tenant: str | None = None, user: str | None = None, agent: str | None = None,
                  tags: Sequence[str] | None = None, importance: float | None = None,
                  created_at: datetime | None = None) -> AddResult:
        """Remember a platform event (pipeline run, PR comment, alert, any JSON object)."""
        draft = extract.from_event(event, self._scope(tenant, user, agent, None), source=source,
                                   tags=list(tags or []), importance=importance,
                                   created_at=created_at)
        return self._update.add([draft])[0]

    def ingest(self, paths: str | Path | Sequence[str | Path], *,
               tags: Sequence[str] | None = None, tenant: str | None = None) -> IngestReport:
        """Ingest Markdown/text files or folders as knowledge; a changed file replaces its old
        chunks (kept in history, no longer served), an unchanged one is skipped."""
        if isinstance(paths, (str, Path)):
            paths = [paths]
        return self._update.ingest_paths([Path(p) for p in paths],
                                         self._scope(tenant, None, None, None),
                                         normalise_tags(tags))

    def ingest_text(self, text: str, source: str, *, tags: Sequence[str] | None = None,
                    tenant: str | None = None) -> IngestReport:
        """Ingest a document given as text under a stable ``source`` name."""
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("document is empty")
        if not isinstance(source, str) or not source.strip():
            raise ValidationError("source must be non-empty text")
        report = IngestReport(files=1)
        self._update.ingest_text(text, source, self._scope(tenant, None, None, None),
                                 normalise_tags(tags), report)
        return report

    def update(self, memory_id: str, *, content: str | None = None,
               tags: Sequence[str] | None = None, importance: float | None = None,
               tier: str | Tier | None = None, metadata: Mapping[str, Any] | None = None,
               reason: str = "", tenant: str | None = None, actor: str = "api") -> MemoryRecord:
        """Change a memory in place (history keeps the old values). A new content is re-embedded."""
        rec = self._live(memory_id, tenant)
        changes: dict[str, Any] = {}
        vector = None
        if content is not None and not isinstance(content, str):
            raise ValidationError("content must be text")
        if content is not None and content.strip() != rec.content:
            self._update.validate(Draft(content=content, scope=rec.scope))
            changes["content"] = content.strip()
            changes["content_hash"] = content_hash(content)
            self.stores.check_model()
            vector = self.embedder().embed_documents([embedding_text(
                rec.model_copy(update={"content": content.strip()}),
                self.settings.update.context_embed)])[0]
        if tags is not None:
            changes["tags"] = normalise_tags(tags)
        if importance is not None:
            if not isinstance(importance, (int, float)) or not 0.0 <= importance <= 1.0:
                raise ValidationError(f"importance {importance!r} is not a number in 0..1")
            changes["importance"] = float(importance)
        if tier is not None:
            changes["tier"] = _enum(Tier, tier, "tier")
        if metadata is not None:
            changes["metadata"] = {**rec.metadata, **dict(metadata)}
        if not changes:
            return rec
        return self._apply(rec, changes, "update", reason, actor, vector)

    def _apply(self, rec: MemoryRecord, changes: dict[str, Any], action: str, reason: str,
               actor: str, vector: np.ndarray | None = None) -> MemoryRecord:
        old = {k: _jsonable(getattr(rec, k)) for k in changes}
        now = self._now()
        if "content" in changes:
            changes["keywords"] = extract_keywords(changes["content"],
                                                  self.settings.update.keywords_max)
        new = rec.model_copy(update={**changes, "updated_at": now})
        with self.stores.transaction() as tx:
            # Only the changed columns: a concurrent supersession or retrieval is kept.
            tx.update(new, vector, fields=[*changes, "updated_at"])
            tx.add_history(HistoryEntry(memory_id=rec.memory_id, action=action, at=now,
                                        actor=actor, reason=reason, old=old,
                                        new={k: _jsonable(v) for k, v in changes.items()}),
                           rec.scope.tenant)
        self._after_write()
        return new

    def _after_write(self) -> None:
        """Catch the vector index up if it is open; never fail a committed write over it."""
        try:
            self.stores.sync(open_index=False)
        except VarvememError as exc:
            self.stores.notices.append(f"vector index not updated: {exc}")

    def feedback(self, memory_id: str, helpful: bool, *, weight: float = 0.1,
                 reason: str = "", tenant: str | None = None) -> MemoryRecord:
        """Score a memory up (helpful) or down: importance, and a Q&A pair's score, move by
        ``weight``, bounded to 0..1."""
        if not isinstance(weight, (int, float)) or not 0.0 < weight <= 1.0:
            raise ValidationError(f"feedback weight {weight!r} is not in (0, 1]")
        rec = self._live(memory_id, tenant)
        delta = weight if helpful else -weight
        changes: dict[str, Any] = {"importance": round(min(1.0, max(0.0, rec.importance + delta)),
                                                       4)}
        if rec.score is not None:
            changes["score"] = round(min(1.0, max(0.0, rec.score + delta)), 4)
        return self._apply(rec, changes, "feedback",
                           reason or ("helpful" if helpful else "not helpful"), "feedback")

    def delete(self, memory_id: str, *, reason: str = "", tenant: str | None = None) -> None:
        """Delete a memory, also from the archive. Its last state stays in :meth:`history`."""
        rec = self.get(memory_id, tenant=tenant)
        if rec.tier is Tier.ARCHIVE:
            self._lifecycle.delete_archived([rec], self._now(), reason)
            return
        with self.stores.transaction() as tx:
            tx.delete(rec.scope.tenant, memory_id)
            tx.add_history(HistoryEntry(memory_id=memory_id, action="delete", at=self._now(),
                                        actor="api", reason=reason, old=snapshot(rec)),
                           rec.scope.tenant)
        self._after_write()

    def _live(self, memory_id: str, tenant: str | None) -> MemoryRecord:
        """The memory, which must not be archived (changing one needs a restore first)."""
        rec = self.get(memory_id, tenant=tenant)
        if rec.tier is Tier.ARCHIVE:
            raise ValidationError(f"memory {memory_id} is archived; restore it first")
        return rec

    # -- reads ---------------------------------------------------------------------------------
    def get(self, memory_id: str, *, tenant: str | None = None, with_embedding: bool = False,
            as_of: datetime | None = None) -> MemoryRecord:
        """The memory with this id (read from the archive when it is archived, with tier
        ``archive``); :class:`NotFoundError` when the tenant has none.

        ``as_of``: the memory as it was at that time, rebuilt from :meth:`history`
        (:func:`varvemem.engines.timeline.state_at` says which fields are exact): the changes
        made after it are undone from the current record (a deleted memory's from the snapshot
        its delete kept). :class:`NotFoundError` when it was created after that time or
        deleted by then. The embedding (``with_embedding``) is the stored one, or None when
        the content was different then. It is the record as it was *recorded* at that time
        (by the times of its history), while ``search(as_of=...)`` asks what was *valid*
        then (``valid_from``/``valid_to``); they differ only for backdated memories and in
        the milliseconds between preparing a write and committing it.
        """
        ten = self._tenant(tenant)
        if as_of is not None:
            return self._get_as_of(ten, memory_id, _utc(as_of, "as_of"), with_embedding)
        rec = self._current(ten, memory_id, with_embedding)
        if rec is None:
            gone = [e for e in self.stores.records.history(ten, memory_id) if e.action == "delete"]
            if gone:
                raise NotFoundError(f"memory {memory_id} was deleted at {gone[-1].at.isoformat()}"
                                    "; its history remains")
            raise NotFoundError(f"no memory {memory_id}")
        return rec

    def _current(self, tenant: str, memory_id: str, with_embedding: bool) -> MemoryRecord | None:
        """The live record, else the archived one (tier ``archive``), else None."""
        rec = self.stores.records.get(tenant, memory_id, with_embedding)
        if rec is None:
            archived = self.stores.archived_records(tenant, [memory_id])
            if not archived:
                return None
            rec = archived[0] if with_embedding else \
                archived[0].model_copy(update={"embedding": None})
        return rec

    def _get_as_of(self, tenant: str, memory_id: str, when: datetime,
                   with_embedding: bool) -> MemoryRecord:
        entries = self.stores.records.history(tenant, memory_id)
        rec = self._current(tenant, memory_id, with_embedding)
        if rec is not None:
            state = snapshot(rec)
        else:
            deletes = [i for i, e in enumerate(entries) if e.action == "delete"]
            if not deletes:
                raise NotFoundError(f"no memory {memory_id}")
            gone = entries[deletes[-1]]
            if gone.at <= when:
                raise NotFoundError(f"memory {memory_id} did not exist at {when.isoformat()} "
                                    f"(deleted at {gone.at.isoformat()})")
            if not gone.old:
                raise NotFoundError(f"memory {memory_id} was erased: its past states are gone")
            state, entries = dict(gone.old), entries[: deletes[-1]]
        if rec is not None and not timeline.changed_after(entries, when):
            past = rec
        else:
            past = timeline.state_at(state, entries, when)
            if rec is not None and with_embedding and past.content_hash == rec.content_hash:
                past.embedding = rec.embedding
        if past.created_at > when:
            raise NotFoundError(f"memory {memory_id} did not exist at {when.isoformat()}")
        return past

    def resolve_id(self, prefix: str, *, tenant: str | None = None) -> str:
        """The full id of the tenant's memory whose id starts with ``prefix``: ``mem_`` and at
        least 6 hex digits, or the digits alone (like git's short hashes). Live, archived and
        deleted memories (their history remains) count. :class:`NotFoundError` when none
        matches; :class:`ValidationError` when the prefix is too short, or when several
        match (they are listed)."""
        ten = self._tenant(tenant)
        text = prefix.strip() if isinstance(prefix, str) else ""
        if not text:
            raise ValidationError("memory id is empty")
        digits = (text[4:] if text.lower().startswith("mem_") else text).lower()
        if not set(digits) <= _HEX:  # not an id this library makes: only itself can match
            records = self.stores.records
            if records.get(ten, text) or records.archived(ten, [text]) \
                    or records.history(ten, text):
                return text
            raise NotFoundError(f"no memory {text}")
        if len(digits) < _ID_PREFIX_MIN:
            raise ValidationError(f"memory id {text} is too short: give at least "
                                  f"{_ID_PREFIX_MIN} hex digits after mem_")
        found = self.stores.records.ids_with_prefix(ten, "mem_" + digits, _ID_MATCHES + 1)
        if not found:
            raise NotFoundError(f"no memory {text}")
        if len(found) > 1:
            more = ", ..." if len(found) > _ID_MATCHES else ""
            raise ValidationError(f"memory id {text} is ambiguous: "
                                  f"{', '.join(found[:_ID_MATCHES])}{more}")
        return found[0]

    def history(self, memory_id: str, *, tenant: str | None = None) -> list[HistoryEntry]:
        """Every change to the memory, oldest first (also after it was deleted)."""
        entries = self.stores.records.history(self._tenant(tenant), memory_id)
        if not entries:
            raise NotFoundError(f"no memory {memory_id}")
        return entries

    def search(self, query: str, *, top_k: int | None = None,
               type: str | MemoryType | Sequence[str | MemoryType] | None = None,
               tier: str | Tier | Sequence[str | Tier] | None = None,
               tags: Sequence[str] | None = None, user: str | None = None,
               agent: str | None = None, session: str | None = None, tenant: str | None = None,
               since: datetime | None = None, until: datetime | None = None,
               as_of: datetime | None = None, include_superseded: bool = False,
               include_archive: bool = False, profile: str | None = None,
               query_vector: np.ndarray | None = None) -> list[SearchHit]:
        """Hybrid search: vector + BM25 + tags, re-ranked by ``profile`` (default: settings).

        ``tags`` both restrict (a hit carries at least one) and score (S_tag). ``as_of`` asks
        what was true at that time; superseded memories are excluded unless asked for.
        ``include_archive`` also reads the archive (every archived memory of the tenant: slow).
        ``query_vector`` (a unit vector from the store's model) skips embedding the query.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query is empty")
        if len(query.encode("utf-8")) > self.settings.update.max_content_bytes:
            raise ValidationError("query is over update.max_content_bytes")
        if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
            raise ValidationError(f"top_k {top_k!r} must be a whole number of at least 1")
        if profile is not None and profile not in self.settings.retrieval.profiles:
            known = ", ".join(sorted(self.settings.retrieval.profiles))
            raise ValidationError(f"unknown retrieval profile {profile!r} (known: {known})")
        if query_vector is not None:
            query_vector = np.asarray(query_vector, np.float32)
            dim = self.stores.check_model()[1]
            if query_vector.shape != (dim,) or not np.isfinite(query_vector).all():
                raise ValidationError(f"query_vector must be {dim} finite numbers")
        try:
            flt = SearchFilter(
                tenant=self._tenant(tenant), user=user, agent=agent, session=session,
                types=_enums(MemoryType, type, "memory type"), tiers=_enums(Tier, tier, "tier"),
                tags=normalise_tags(tags) or None, created_after=_utc(since, "since"),
                created_before=_utc(until, "until"), as_of=_utc(as_of, "as_of"),
                include_superseded=include_superseded, include_archive=include_archive)
        except ValueError as exc:
            raise ValidationError(str(exc).splitlines()[0]) from None
        return self._retrieval.search(query, flt, top_k=top_k, profile=profile, tags=tags,
                                      now=self._now(), query_vector=query_vector)

    def context(self, query: str, *, max_tokens: int | None = None, top_k: int | None = None,
                session: str | None = None, **search_args: Any) -> str:
        """The best memories for ``query`` as a Markdown block within ``max_tokens`` (RET-3/4).

        With ``session``, the session's last turns and tool calls (TIER-1, read in order, no
        search) come first; the search then covers every session of the tenant/user/agent.
        """
        return self._context(query, max_tokens, top_k, session, **search_args)[0]

    def _context(self, query: str, max_tokens: int | None, top_k: int | None,
                 session: str | None, **search_args: Any) -> tuple[str, list[SearchHit]]:
        """:meth:`context`, and the hits behind it."""
        budget = self.settings.context.max_tokens if max_tokens is None else max_tokens
        if not isinstance(budget, int) or budget < 16:
            raise ValidationError(f"max_tokens {budget} is too small (at least 16)")
        window: list[MemoryRecord] = []
        if session is not None:
            window = self.session_window(session, tenant=search_args.get("tenant"),
                                         user=search_args.get("user"),
                                         agent=search_args.get("agent"),
                                         as_of=search_args.get("as_of"))
        hits = self.search(query, top_k=top_k or self.settings.context.top_k, **search_args)
        shown = {r.memory_id for r in window}
        hits = [h for h in hits if h.memory.memory_id not in shown]
        return self._retrieval.pack(hits, budget, window), hits

    def session_window(self, session: str, *, tenant: str | None = None,
                       user: str | None = None, agent: str | None = None,
                       as_of: datetime | None = None) -> list[MemoryRecord]:
        """The active tier of a session: its last ``lifecycle.active_turns`` dialogue turns
        and last ``lifecycle.active_tool_calls`` unexpired tool calls, oldest first, as of
        ``as_of`` (default now; nothing said after it)."""
        scope = self._scope(tenant, user, agent, session)
        cfg = self.settings.lifecycle
        now = _utc(as_of, "as_of") or self._now()
        turns = self.stores.active.window(scope, MemoryType.DIALOGUE, cfg.active_turns, now)
        calls = [r for r in self.stores.active.window(scope, MemoryType.TOOL_CALL,
                                                      cfg.active_tool_calls, now)
                 if r.expires_at is None or r.expires_at > now]
        return sorted(turns + calls, key=lambda r: r.created_at)

    def stats(self, *, tenant: str | None = None) -> dict[str, Any]:
        """Counts by type and tier, sizes on disk, the embedding model."""
        out = self.stores.records.stats(self._tenant(tenant))
        stored = self.stores.stored_model()
        out["embedder"] = {"model": stored[0], "dim": stored[1]} if stored else None
        out["home"] = str(self.settings.home)
        out["disk_bytes"] = sum(f.stat().st_size for f in self.settings.home.rglob("*")
                                if f.is_file())
        return out

    # -- L2: scored Q&A pairs ------------------------------------------------------------------
    def save_qa(self, question: str, answer: str, score: float = 0.5,
                keywords: Sequence[str] | None = None, *, ttl_mode: str | TTLMode | None = None,
                ttl_days: float | None = None, source_file: str | None = None,
                source_location: str | None = None, user: str | None = None,
                tenant: str | None = None) -> str:
        """Remember a scored question/answer pair (seed 2's L2); returns its id. Keywords are
        extracted from the pair (Chinese bigrams, Latin words) unless given."""
        question, answer = _qa_text(question, "question"), _qa_text(answer, "answer")
        meta = {k: v for k, v in (("source_file", source_file),
                                  ("source_location", source_location)) if v is not None}
        draft = self._draft(f"{question}\n{answer}", type=MemoryType.QA, tags=None,
                            source="qa", importance=None,
                            scope=self._scope(tenant, user, None, None), tier=None,
                            ttl_mode=ttl_mode, ttl_days=ttl_days, metadata=meta,
                            supersedes=None, question=question, answer=answer,
                            score=_score(score))
        if keywords is not None:
            draft.keywords = [str(k).strip() for k in keywords if str(k).strip()]
        return self._update.add([draft])[0].memory_id

    def load_all_qa(self, *, tenant: str | None = None) -> list[MemoryRecord]:
        """Every current Q&A pair of the tenant, by id."""
        sel = Selection(tenant=self._tenant(tenant), types=[MemoryType.QA],
                        tiers=[t for t in Tier if t is not Tier.ARCHIVE])
        out: list[MemoryRecord] = []
        while batch := self.stores.records.select(sel, 1000, out[-1].memory_id if out else ""):
            out.extend(batch)
        return out

    def search_qa(self, question: str, top_k: int = 5, *,
                  tenant: str | None = None) -> list[SearchHit]:
        """The best pairs for ``question``: relevance x TTL weight x score (profile ``faq``)."""
        return self.search(question, top_k=top_k, type=MemoryType.QA, profile="faq",
                           tenant=tenant)

    def update_qa(self, memory_id: str, *, question: str | None = None,
                  answer: str | None = None, score: float | None = None,
                  keywords: Sequence[str] | None = None, ttl_mode: str | TTLMode | None = None,
                  ttl_days: float | None = None, reason: str = "",
                  tenant: str | None = None) -> MemoryRecord:
        """Change a pair in place (history keeps the old values); new text is re-embedded."""
        rec = self._live(memory_id, tenant)
        if rec.memory_type is not MemoryType.QA:
            raise ValidationError(f"memory {memory_id} is not a Q&A pair")
        changes: dict[str, Any] = {}
        q = rec.question if question is None else _qa_text(question, "question")
        a = rec.answer if answer is None else _qa_text(answer, "answer")
        vector = None
        if (q, a) != (rec.question, rec.answer):
            changes.update(question=q, answer=a, content=f"{q}\n{a}",
                           content_hash=content_hash(f"{q}\n{a}"))
            self.stores.check_model()
            vector = self.embedder().embed_documents([embedding_text(
                rec.model_copy(update={"content": changes["content"]}),
                self.settings.update.context_embed)])[0]
        if score is not None and _score(score) != rec.score:
            changes["score"] = _score(score)
        if ttl_mode is not None and _enum(TTLMode, ttl_mode, "TTL mode") != rec.ttl_mode:
            changes["ttl_mode"] = _enum(TTLMode, ttl_mode, "TTL mode")
        if ttl_days is not None and ttl_days != rec.ttl_days:
            if not isinstance(ttl_days, (int, float)) or ttl_days <= 0:
                raise ValidationError(f"ttl_days {ttl_days!r} is not a positive number")
            changes["ttl_days"] = float(ttl_days)
        if not changes and keywords is None:
            return rec
        new = self._apply(rec, changes, "update", reason, "api", vector) if changes else rec
        if keywords is not None:
            kws = [str(k).strip() for k in keywords if str(k).strip()]
            if kws != new.keywords:
                new = self._apply(new, {"keywords": kws}, "update", reason, "api")
        return new

    def export_qa(self, folder: str | Path, *, tenant: str | None = None) -> list[Path]:
        """Write every current pair as ``qa-<id>.md`` into ``folder`` (created if needed)."""
        return [qa_files.write(Path(folder), r) for r in self.load_all_qa(tenant=tenant)]

    def import_qa(self, folder: str | Path, *, tenant: str | None = None) -> dict[str, Any]:
        """Read ``qa-*.md`` files: a file whose id is a pair of the tenant updates it, any other
        adds a pair. A malformed file is reported by name and skipped. Returns ``created``
        (file name -> new id), ``updated``, ``unchanged`` and ``skipped`` (file name -> why)."""
        path = Path(folder)
        if not path.is_dir():
            raise ValidationError(f"{path} is not a folder")
        report: dict[str, Any] = {"created": {}, "updated": [], "unchanged": [], "skipped": {}}
        for file in sorted(path.glob("qa-*.md")):
            try:
                qa = qa_files.read(file)
            except (ValueError, OSError) as exc:
                report["skipped"][file.name] = str(exc)
                continue
            try:
                known = None
                if qa.id is not None:
                    try:
                        known = self.get(qa.id, tenant=tenant)
                    except NotFoundError:
                        known = None
                if known is not None and known.memory_type is MemoryType.QA \
                        and known.tier is not Tier.ARCHIVE:
                    after = self.update_qa(known.memory_id, question=qa.question,
                                           answer=qa.answer, score=qa.score,
                                           keywords=qa.keywords, ttl_mode=qa.ttl_mode,
                                           ttl_days=qa.ttl_days, reason=f"imported {file.name}",
                                           tenant=tenant)
                    (report["updated"] if _qa_state(after) != _qa_state(known)
                     else report["unchanged"]).append(file.name)
                else:
                    report["created"][file.name] = self.save_qa(
                        qa.question, qa.answer, qa.score, qa.keywords, ttl_mode=qa.ttl_mode,
                        ttl_days=qa.ttl_days, source_file=qa.source_file,
                        source_location=qa.source_location, tenant=tenant)
            except ValidationError as exc:
                report["skipped"][file.name] = str(exc)
        return report

    # -- L3: the intent fast path ---------------------------------------------------------------
    def ask(self, question: str, *, session: str | None = None, user: str | None = None,
            tenant: str | None = None) -> AskResult:
        """Answer ``question`` by the cheapest honest route (seed 2's L3):

        ``skip``: chit-chat gets a short reply, no retrieval. ``reuse``: the best Q&A pair's
        question is at least ``faq.reuse_confidence`` close and its score at least
        ``faq.reuse_min_score``: its answer, straight from memory. ``normal``: retrieval and
        the packed context; with an LLM configured it answers from that context and the
        answer becomes a new pair (FLOW-1), without one the context itself is the answer,
        labelled so. With ``session`` the exchange is also appended to the L1 history.
        """
        started = time.perf_counter()
        text = _qa_text(question, "question")
        cfg = self.settings.faq
        res: AskResult
        chat = chit_chat(text)
        if chat is not None:
            res = AskResult(route="skip", answer=chat[1], reason=f"chit-chat ({chat[0]})")
        else:
            res = (self._cached(text, user, tenant) or self._reuse(text, user, tenant)
                   if cfg.enabled else None) or self._normal(text, session, user, tenant)
        res.ms = round((time.perf_counter() - started) * 1000, 3)
        if session is not None:
            self._session_feedback(session, tenant, chat[0] if chat else None, res)
            self.sessions.save(session, [{"role": "user", "content": text},
                                         {"role": "assistant", "content": res.answer}],
                               tenant=tenant)
        return res

    def qa_feedback(self, memory_id: str, kind: str, *,
                    tenant: str | None = None) -> MemoryRecord:
        """FLOW-1: ``up`` or ``down`` from the user, or ``followup`` (a question right after
        the answer: it was not enough) moves the pair's score by ``faq.feedback_*``."""
        cfg = self.settings.faq
        steps = {"up": (True, cfg.feedback_up), "down": (False, cfg.feedback_down),
                 "followup": (False, cfg.feedback_followup)}
        if kind not in steps:
            raise ValidationError(f"feedback {kind!r} is not one of {list(steps)}")
        helpful, weight = steps[kind]
        rec = self._live(memory_id, tenant)
        if rec.memory_type is not MemoryType.QA:
            raise ValidationError(f"memory {memory_id} is not a Q&A pair")
        return self.feedback(memory_id, helpful, weight=max(weight, 1e-6), tenant=tenant,
                             reason={"up": "helpful", "down": "not helpful",
                                     "followup": "a follow-up question came right after"}[kind])

    def _session_feedback(self, session: str, tenant: str | None, chat: str | None,
                          res: AskResult) -> None:
        """Implicit feedback on the pair that answered the session's previous question, and
        remember this answer's pair (in the store: the CLI asks from separate processes)."""
        key = f"faq.last.{self._tenant(tenant)}.{session}"
        last = self.stores.records.get_meta(key)
        now = self._now()
        if last:
            pair, at = last.split("|", 1)
            recent = now - datetime.fromisoformat(at) <= \
                timedelta(minutes=self.settings.faq.followup_minutes)
            kind = "up" if chat == "thanks" else ("followup" if chat is None else None)
            if recent and kind:
                with contextlib.suppress(NotFoundError, ValidationError):
                    self.qa_feedback(pair, kind, tenant=tenant)
        pair_id = (res.matched or {}).get("id")
        with self.stores.transaction() as tx:
            tx.set_meta(key, f"{pair_id}|{now.isoformat()}" if pair_id else "")

    def _save_answer(self, question: str, answer: str, sources: dict[str, str],
                     user: str | None, tenant: str | None) -> str:
        pid = self.save_qa(question, answer, self.settings.faq.initial_score, user=user,
                           tenant=tenant)
        if sources:
            rec = self.get(pid, tenant=tenant)
            self._apply(rec, {"metadata": {**rec.metadata, "sources": sources}}, "link",
                        "the memories the answer came from", "ask")
        return pid

    def _sources_intact(self, rec: MemoryRecord) -> bool:
        """Are the memories a pair's answer came from all still current and unedited?"""
        sources = rec.metadata.get("sources")
        if not isinstance(sources, dict) or not sources:
            return True
        now = self._now()
        live = self.stores.records.get_many(rec.scope.tenant, list(sources))
        return all(mid in live and live[mid].content_hash == h
                   and (live[mid].valid_to is None or live[mid].valid_to > now)
                   for mid, h in sources.items())

    def _retire(self, rec: MemoryRecord) -> None:
        """A pair whose answer rests on a memory that changed is no longer valid (kept in
        history, never served again)."""
        self._apply(rec, {"valid_to": self._now()}, "supersede",
                    "a memory the answer came from changed", "ask")

    def _cached(self, question: str, user: str | None, tenant: str | None) -> AskResult | None:
        """A pair promoted to the cache answers its question as typed, if it is still the
        same pair: current, unchanged, not expired (else it leaves the cache)."""
        key = self._answer_key(question, user, tenant)
        hit = self.stores.answers.get(key)
        if hit is None:
            return None
        mid, version = hit
        rec = self.stores.records.get(key[0], mid)
        now = self._now()
        if rec is None or rec.content_hash != version or rec.valid_to is not None \
                or (rec.expires_at is not None and rec.expires_at <= now) \
                or (rec.score or 0.0) < self.settings.faq.cache_min_score:
            self.stores.answers.drop(key)
            return None
        if not self._sources_intact(rec):
            self.stores.answers.drop(key)
            self._retire(rec)
            return None
        return AskResult(route="reuse", answer=rec.answer or "", confidence=1.0,
                         matched={"id": mid, "question": rec.question, "score": rec.score},
                         reason="cached: a validated answer to this question")

    def _answer_key(self, question: str, user: str | None,
                    tenant: str | None) -> tuple[str, str | None, str]:
        """The L3 cache's key: the question as typed, case and spacing normalised."""
        return self._tenant(tenant), user, " ".join(question.lower().split())

    def _promote_to_cache(self, question: str, user: str | None, tenant: str | None,
                          rec: MemoryRecord) -> None:
        cfg = self.settings.faq
        if (rec.score or 0.0) >= cfg.cache_min_score:
            key = self._answer_key(question, user, tenant)
            self.stores.answers.put(key, rec.memory_id, rec.content_hash)

    def _reuse(self, question: str, user: str | None, tenant: str | None) -> AskResult | None:
        cfg = self.settings.faq
        qvec = self.embedder().embed_query(question)
        flt = SearchFilter(tenant=self._tenant(tenant), types=[MemoryType.QA],
                           user=None if cfg.share_across_users else user)
        self.stores.sync(persist=False)
        best = self.stores.vectors.search(qvec, 3, flt, approximate=True)
        if not best:
            return None
        found = self.stores.records.filter([i for i, _ in best], flt, self._now())
        ok = {c.memory_id: c for c in found}
        for mid, cos in best:
            cand = ok.get(mid)  # current, unexpired, not archived
            if cand is None:
                continue
            confidence = round(float(cos), 4)
            if confidence < cfg.reuse_confidence or (cand.score or 0.0) < cfg.reuse_min_score:
                return None
            rec = self.get(mid, tenant=tenant)
            if not self._sources_intact(rec):
                self._retire(rec)
                return None  # answered anew, from what is true now
            self._promote_to_cache(question, user, tenant, rec)
            return AskResult(route="reuse", answer=rec.answer or "", confidence=confidence,
                             matched={"id": mid, "question": rec.question, "score": rec.score},
                             reason="a validated answer to the same question")
        return None

    def _normal(self, question: str, session: str | None, user: str | None,
                tenant: str | None) -> AskResult:
        cfg = self.settings.faq
        context, hits = self._context(question, None, cfg.top_k, session, user=user,
                                      tenant=tenant) if cfg.enabled else ("", [])
        llm = self._llm
        if llm is None:
            answer = ("No LLM is configured, so here are the memories most relevant to the "
                      "question:\n\n" + context) if context else \
                "No LLM is configured and no memory matches the question."
            return AskResult(route="normal", answer=answer, reason="retrieval (no LLM)")
        try:
            answer = llm.complete(
                "You answer a user's question for a support assistant. Use the memories "
                "given when they help; say so when they do not answer it.",
                f"{context}\n\nQuestion: {question}").strip()
        except VarvememError as exc:
            logging.getLogger("varvemem.llm").warning(
                "ask answers with the retrieved memories only: %s", exc)
            return AskResult(route="normal", answer=context, reason=f"retrieval (LLM failed: "
                             f"{exc})")
        # The pair remembers the memories its answer came from: when one of them changes, the
        # pair is no longer reused (see _sources_intact).
        sources = {h.memory.memory_id: h.memory.content_hash for h in hits}
        pair = self._save_answer(question, answer, sources, user, tenant) \
            if answer and cfg.enabled else None
        return AskResult(route="normal", answer=answer, reason="retrieval + LLM",
                         matched={"id": pair, "question": question, "score": cfg.initial_score}
                         if pair else None, llm=True)

    # -- lifecycle -----------------------------------------------------------------------------
    def consolidate(self, jobs: Sequence[str] | None = None, *,
                    tenant: str | None = None) -> ConsolidationReport:
        """Run the lifecycle jobs once at the clock's time (all by default: end idle sessions,
        re-score, promote, abstract, forget). Idempotent: a second run at the same time
        changes nothing more."""
        return self._lifecycle.consolidate(list(jobs) if jobs else None,
                                           None if tenant is None else self._tenant(tenant))

    def due_jobs(self) -> list[str]:
        """The lifecycle jobs whose ``lifecycle.<job>_every_minutes`` has passed."""
        return self._lifecycle.due()

    def close_session(self, session: str, *, tenant: str | None = None) -> int:
        """End a session now: its active memories move to short-term. Returns how many."""
        scope = self._scope(tenant, None, None, session)
        assert scope.session is not None
        return self._lifecycle.end_session(scope.tenant, scope.session, self._now(), "closed")

    def restore(self, memory_id: str, *, tenant: str | None = None) -> MemoryRecord:
        """Bring an archived memory back to the tier it left."""
        return self._lifecycle.restore(self._tenant(tenant), memory_id, self._now())

    # -- webhooks (INT-1) ------------------------------------------------------------------------
    def receive_webhook(self, source: str, body: bytes,
                        headers: Mapping[str, str]) -> Receipt:
        """Verify a webhook delivery for the configured ``webhooks.sources.<source>`` and commit
        it to the inbox (durably, once per delivery id). :meth:`process_inbox` makes the
        memories. Raises :class:`NotFoundError`, :class:`AuthError` or :class:`ValidationError`
        (nothing is stored then)."""
        return self._inbox.receive(source, body, headers)

    def process_inbox(self, *, worker: str | None = None, limit: int | None = None,
                      stop: threading.Event | None = None) -> DrainReport:
        """Lease a batch of inbox events and turn each into memories, exactly once even with
        several workers (on one store) or after a crash (its lease runs out). Once ``stop`` is
        set, the rest of the batch is given back."""
        report = self._inbox.drain(worker, limit, stop)
        if report.done:
            self._after_write()
        return report

    def tier_counts(self, *, tenant: str | None = None) -> dict[str, int]:
        """Memories by tier, of one tenant or (``None``) of all."""
        return self._lifecycle.tier_counts(None if tenant is None else self._tenant(tenant))

    def inbox_counts(self) -> dict[str, int]:
        """Inbox events by status (``pending``, ``processing``, ``done``, ``failed``)."""
        return self.stores.records.inbox_counts()

    def inbox_events(self, *, tenant: str | None = None, status: str | None = None,
                     limit: int = 100, after: int = 0) -> list[InboxEvent]:
        """The tenant's inbox events by id (a page: the last id as ``after`` for the next)."""
        return self.stores.records.inbox(self._tenant(tenant), status, limit, after)

    def retry_inbox(self, event_ids: Sequence[int] | None = None, *,
                    tenant: str | None = None) -> list[int]:
        """Re-arm the tenant's failed inbox events (those of ``event_ids``, or all of them), for
        when their cause is fixed; the next :meth:`process_inbox` tries them again. Returns the
        ids re-armed (an id that is not a failed event of the tenant is left out)."""
        return self.stores.records.retry_events(self._tenant(tenant),
                                                None if event_ids is None else list(event_ids))

    # -- users -------------------------------------------------------------------------------------
    def get_all(self, *, tenant: str | None = None, user: str | None = None,
             types: Sequence[str | MemoryType] | None = None,
             tiers: Sequence[str | Tier] | None = None, include_superseded: bool = False,
             limit: int = 50, after: str = "") -> list[MemoryRecord]:
        """Live memories by id (a page: pass the last id as ``after`` for the next one)."""
        if not 1 <= limit <= 10_000:
            raise ValidationError("limit must be in 1..10000")
        sel = Selection(tenant=self._tenant(tenant), user=user,
                        types=_enums(MemoryType, types, "type"), tiers=_enums(Tier, tiers, "tier"),
                        current_only=not include_superseded)
        return self.stores.records.select(sel, limit, after)

    def delete_user(self, user: str, *, tenant: str | None = None,
                    reason: str = "user deleted") -> dict[str, int]:
        """Erase ``user`` from the tenant: their memories in every tier (superseded ones too)
        and in the archive (its objects are rewritten), the old contents in their history (a
        bare ``delete`` entry stays), the tenant's cached answers, and the short-term cache and
        L1 file of each of their sessions that holds nobody else's memories. Returns counts."""
        if not isinstance(user, str) or not user.strip():
            raise ValidationError("user must be non-empty text")
        ten = self._tenant(tenant)
        self.stores.answers.drop_tenant(ten)
        counts, sessions = self._lifecycle.erase_user(ten, user, self._now(), reason)
        counts["sessions"] = 0
        for session in sorted(sessions):
            self.stores.active.drop(ten, session)
            if self.stores.records.select(Selection(session=(ten, session), current_only=False),
                                          1):
                continue  # someone else's turns are in it too
            with contextlib.suppress(ValidationError):  # an id no session file can have
                counts["sessions"] += self.sessions.delete_session(session, tenant=ten)
        self._after_write()
        return counts

    # -- maintenance ---------------------------------------------------------------------------
    def reindex(self, *, re_embed: bool = False,
                progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the vector index from the store; ``re_embed`` recomputes every vector with the
        configured embedder first (after changing models). Returns the number of vectors."""
        if re_embed:
            self._re_embed(progress)
        return self.stores.rebuild_vectors()

    def _re_embed(self, progress: Callable[[int, int], None] | None) -> None:
        emb = self.embedder()
        records = list(self.stores.records.iter_records())
        size = self.settings.embedder.batch_size
        for i in range(0, max(len(records), 1), size):
            part = records[i : i + size]
            vecs = emb.embed_documents([embedding_text(r, self.settings.update.context_embed)
                                        for r in part])
            with self.stores.transaction() as tx:
                for r, v in zip(part, vecs):
                    tx.update(r, v, fields=[])  # the vector only
                if i + size >= len(records):
                    self.stores.set_model(tx, emb.model_id, emb.dim)
            if progress:
                progress(min(i + size, len(records)), len(records))


def _utc(value: datetime | None, name: str) -> datetime | None:
    """Aware datetimes in UTC; a naive one is taken to be UTC already."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise ValidationError(f"{name} must be a datetime")
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else \
        value.astimezone(timezone.utc)


class AskResult(pydantic.BaseModel):
    """How :meth:`Memory.ask` answered: the route (``skip``, ``reuse``, ``normal``), the
    answer, the pair it reused (or made), the confidence of the match and the time spent."""

    route: str
    answer: str
    reason: str = ""
    matched: dict[str, Any] | None = None
    confidence: float | None = None
    llm: bool = False
    ms: float = 0.0


def _qa_state(r: MemoryRecord) -> tuple[Any, ...]:
    return (r.question, r.answer, r.score, r.keywords, r.ttl_mode, r.ttl_days)


def _qa_text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} must be non-empty text")
    return value.strip()


def _score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValidationError(f"score {value!r} is not a number in 0..1")
    return float(value)


def _jsonable(v: Any) -> Any:
    if hasattr(v, "value"):
        return v.value
    if isinstance(v, datetime):
        return v.isoformat()
    return json.loads(json.dumps(v, default=str))


def upgrade_store(settings: Settings) -> tuple[int, int]:
    """Migrate the configured store of record to this release's schema (the embedded SQLite
    store migrates on open anyway; PostgreSQL does unless ``store.auto_migrate`` is off).
    Returns the schema versions before and after."""
    from .stores import upgrade_records

    return upgrade_records(settings)
