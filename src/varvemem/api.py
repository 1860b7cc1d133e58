"""The library API: :class:`Memory`, one object per home folder, no global state.

Every surface (CLI, and later REST and MCP) is a thin face over this class.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _validate
from ._admin import Administration
from ._engines import Engines, OnFirstUse
from ._namespaces import QA, Inbox, shortcut
from ._validate import enum_of, utc
from .engines import extract
from .errors import ValidationError
from .model import (
    AddResult,
    Draft,
    HistoryEntry,
    IngestReport,
    MemoryRecord,
    MemoryType,
    Overview,
    SearchHit,
    Tier,
    TTLMode,
    WhyNot,
    normalise_tags,
    utcnow,
)
from .settings import OVERVIEW_DAYS_MAX, OVERVIEW_RECENT_MAX, Settings

if TYPE_CHECKING:  # the engines are imported on first use (_engines.py)
    import numpy as np

    from .embeddings import Embedder
    from .engines.faq import AskResult
    from .engines.update.ingest import IngestProgress
    from .history import SessionHistory
    from .keys import KeyRing
    from .llm import ChatClient

Clock = Callable[[], datetime]


class Memory(Administration):
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
        self._build_lock = threading.RLock()  # see OnFirstUse
        self._engines = Engines(settings, self._now, embedder, llm)
        self._args = self._engines.args

    # -- the namespaces, each built on first use -----------------------------------
    @OnFirstUse
    def keys(self) -> KeyRing:
        """API keys of the service (``create``, ``list``, ``revoke``, ``authenticate``), and
        the logins that stand for them (the inspector's sessions and one-time links)."""
        from .keys import KeyRing

        return KeyRing(self._engines.stores.records, self._now)

    @OnFirstUse
    def qa(self) -> QA:
        """L2: scored Q&A pairs (``save``, ``all``, ``search``, ``update``, ``feedback``, ...)."""
        return QA(self._args, self._engines.faq)

    @OnFirstUse
    def inbox(self) -> Inbox:
        """INT-1: the webhook inbox (``receive``, ``process``, ``counts``, ``events``, ...)."""
        from .engines.inbox import InboxEngine

        e = self._engines
        return Inbox(self._args, InboxEngine(self.settings, e.stores, e.update, self._now,
                                             e.stores.records), e.update)

    @OnFirstUse
    def sessions(self) -> SessionHistory:
        """L1: per-session Markdown history (``save``, ``load_session``, ``compress_history``)."""
        from .history import SessionHistory

        return SessionHistory(self._engines.session_log, self.settings.history, self._now,
                              self._args.tenant, self._engines.llm)

    # -- plumbing ------------------------------------------------------------------------------
    def _now(self) -> datetime:
        now = self.clock()
        return now if now.tzinfo else now.replace(tzinfo=timezone.utc)

    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use."""
        return self._engines.embedder()

    @property
    def notices(self) -> list[str]:
        """Things the stores did on their own that a user should hear about (e.g. a rebuild)."""
        return self._engines.stores.notices

    def close(self) -> None:
        """Persist the vector index and close the store (and the LLM client made here)."""
        self._engines.close()

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
        draft = _validate.draft(content, type=type, tags=tags, source=source, importance=importance,
                            scope=self._args.scope(tenant, user, agent, session), tier=tier,
                            ttl_mode=ttl_mode, ttl_days=ttl_days, metadata=metadata,
                            supersedes=supersedes, created_at=created_at, question=question,
                            answer=answer, score=score)
        return self._engines.update.add([draft])[0]

    def add_many(self, items: Iterable[str | Mapping[str, Any]], *,
                 vectors: np.ndarray | None = None, **defaults: Any) -> list[AddResult]:
        """Bulk add, embedded in batches. Items are strings or dicts of :meth:`add`'s arguments;
        ``defaults`` apply to every item. ``vectors`` (one unit vector per item) skips embedding."""
        return self._engines.update.add(_validate.drafts(items, defaults, self._args.scope), vectors=vectors)

    def add_messages(self, messages: Iterable[Mapping[str, Any]], *, user: str | None = None,
                     agent: str | None = None, session: str | None = None,
                     tenant: str | None = None, tags: Sequence[str] | None = None,
                     created_at: datetime | None = None) -> list[AddResult]:
        """Remember a conversation: one dialogue memory per ``{"role", "content"}`` message (a
        message over ``update.max_content_bytes`` becomes several, its ``part`` of ``parts``
        in their metadata)."""
        drafts = extract.from_messages(messages, self._args.scope(tenant, user, agent, session),
                                       source="user",
                                       max_bytes=self.settings.update.max_content_bytes,
                                       tags=list(tags or []), created_at=created_at)
        return self._engines.update.add(drafts)

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
                                       self._args.scope(tenant, user, agent, session),
                                       tags=list(tags or []), importance=importance,
                                       created_at=created_at)
        return self._engines.update.add([draft])[0]

    def add_event(self, event: Mapping[str, Any], *, source: str = "event",
                  tenant: str | None = None, user: str | None = None, agent: str | None = None,
                  tags: Sequence[str] | None = None, importance: float | None = None,
                  created_at: datetime | None = None) -> AddResult:
        """Remember a platform event (pipeline run, PR comment, alert, any JSON object)."""
        draft = extract.from_event(event, self._args.scope(tenant, user, agent, None), source=source,
                                   tags=list(tags or []), importance=importance,
                                   created_at=created_at)
        return self._engines.update.add([draft])[0]

    def ingest(self, paths: str | Path | Sequence[str | Path], *,
               tags: Sequence[str] | None = None, tenant: str | None = None,
               progress: Callable[[IngestProgress], None] | None = None) -> IngestReport:
        """Ingest Markdown/text files or folders as knowledge; a changed file replaces its old
        chunks (kept in history, no longer served), an unchanged one is skipped.

        A file is read and stored ``update.ingest_batch_chunks`` new chunks at a time: an
        interrupted ingest resumes when run again, and invalidates nothing. A file over
        ``update.ingest_max_file_bytes`` is skipped in a folder, refused when named.
        ``progress`` hears after each batch how far the ingest is (:class:`IngestProgress`)."""
        if isinstance(paths, (str, Path)):
            paths = [paths]
        return self._engines.update.ingest_paths([Path(p) for p in paths],
                                         self._args.scope(tenant, None, None, None),
                                         normalise_tags(tags), progress)

    def ingest_text(self, text: str, source: str, *, tags: Sequence[str] | None = None,
                    tenant: str | None = None,
                    progress: Callable[[IngestProgress], None] | None = None) -> IngestReport:
        """Ingest a document given as text under a stable ``source`` name (at most
        ``update.ingest_max_file_bytes``; see :meth:`ingest`)."""
        _validate.document(text, source)
        report = IngestReport(files=1)
        self._engines.update.ingest_text(text, source, self._args.scope(tenant, None, None, None),
                                 normalise_tags(tags), report, progress=progress)
        return report

    def update(self, memory_id: str, *, content: str | None = None,
               tags: Sequence[str] | None = None, importance: float | None = None,
               tier: str | Tier | None = None, metadata: Mapping[str, Any] | None = None,
               reason: str = "", tenant: str | None = None, actor: str = "api") -> MemoryRecord:
        """Change a memory in place (history keeps the old values). A new content is re-embedded."""
        reason, actor = _validate.optional_text(reason, "reason"), \
            _validate.optional_text(actor, "actor")
        rec = self._args.live(memory_id, tenant)
        if content is not None and not isinstance(content, str):
            raise ValidationError("content must be text")
        if content is not None and content.strip() != rec.content:
            self._engines.update.validate(Draft(content=content, scope=rec.scope))
        _validate.importance(importance)
        if tags is not None:
            tags = _validate.tags(self.settings, tags)
        if metadata is not None:  # what the record will hold: its metadata with these merged
            _validate.metadata(self.settings, {**rec.metadata, **dict(metadata)})
        return self._engines.update.change(rec, content=content, tags=tags, importance=importance,
                                   tier=enum_of(Tier, tier, "tier"),
                                   metadata=None if metadata is None else dict(metadata),
                                   reason=reason, actor=actor)

    def feedback(self, memory_id: str, helpful: bool, *, weight: float = 0.1,
                 reason: str = "", tenant: str | None = None) -> MemoryRecord:
        """Score a memory up (helpful) or down: importance, and a Q&A pair's score, move by
        ``weight``, bounded to 0..1."""
        _validate.feedback_weight(weight)
        reason = _validate.optional_text(reason, "reason")
        return self._engines.update.feedback(self._args.live(memory_id, tenant), helpful, weight, reason)

    def delete(self, memory_id: str, *, reason: str = "", tenant: str | None = None) -> None:
        """Delete a memory, also from the archive. Its last state stays in :meth:`history`.
        What was derived from it goes too (an experience is made again from its other
        sources, a Q&A pair answered from it is deleted), also kept in history."""
        reason = _validate.optional_text(reason, "reason")
        rec = self.get(memory_id, tenant=tenant)
        if rec.tier is Tier.ARCHIVE:
            self._engines.lifecycle.delete_archived([rec], self._now(), reason)
        else:
            self._engines.update.delete(rec, reason)
        self._engines.erasure.after_delete([rec], reason)

    # -- reads ---------------------------------------------------------------------------------
    def get(self, memory_id: str, *, tenant: str | None = None, with_embedding: bool = False,
            as_of: datetime | None = None) -> MemoryRecord:
        """The memory with this id (read from the archive when it is archived, with tier
        ``archive``); :class:`NotFoundError` when the tenant has none. ``as_of``: the memory
        as it was *recorded* at that time, replayed from :meth:`history` (see
        :func:`varvemem.engines.timeline.record_at`); ``search(as_of=...)`` asks what was
        *valid* then instead."""
        return self._args.get(memory_id, tenant, with_embedding, as_of)

    def resolve_id(self, prefix: str, *, tenant: str | None = None) -> str:
        """The full id of the tenant's memory whose id starts with ``prefix``: ``mem_`` and at
        least 6 hex digits, or the digits alone (like git's short hashes). Live, archived and
        deleted memories (their history remains) count. :class:`NotFoundError` when none
        matches; :class:`ValidationError` when the prefix is too short, or when several
        match (they are listed)."""
        return self._engines.reads.resolve_id(self._args.tenant(tenant), _validate.memory_id(prefix, "id"))

    def history(self, memory_id: str, *, tenant: str | None = None) -> list[HistoryEntry]:
        """Every change to the memory, oldest first (also after it was deleted)."""
        return self._engines.reads.history(self._args.tenant(tenant), _validate.memory_id(memory_id))

    def search(self, query: str, *, top_k: int | None = None,
               type: str | MemoryType | Sequence[str | MemoryType] | None = None,
               tier: str | Tier | Sequence[str | Tier] | None = None,
               tags: Sequence[str] | None = None, user: str | None = None,
               agent: str | None = None, session: str | None = None, tenant: str | None = None,
               since: datetime | None = None, until: datetime | None = None,
               as_of: datetime | None = None, include_superseded: bool = False,
               include_archive: bool = False, profile: str | None = None,
               query_vector: np.ndarray | None = None, record: bool = True,
               min_relevance: float | None = None) -> list[SearchHit]:
        """Hybrid search: vector + BM25 + tags, re-ranked by ``profile`` (default: settings).
        Returns at most ``top_k`` hits; when no hit reaches the relevance floor none, or
        with the judge only the statements it finds at least
        ``retrieval.min_relevance_under_floor`` relevant that do not lack the query's
        subject words; with
        the relevance judge (``retrieval.relevance = "learned"``, the default) the hits no
        judge reads (turns, tool calls, events, pairs, experiences) among the first
        ``top_k`` and only the statements it finds at least ``min_relevance`` likely to
        answer the query (default
        ``retrieval.min_relevance``; each hit's ``scores.relevance``), and the newer
        statement of a returned one's claim ranked among them, whatever its relevance.
        ``min_relevance=0`` drops nothing, the floor included.
        ``tags`` both restrict (a hit carries at least one) and score (S_tag). ``as_of`` asks
        what was true at that time; superseded memories are excluded unless asked for.
        ``include_archive`` also reads the archive (every archived memory of the tenant: slow).
        ``query_vector`` (a unit vector from the store's model) skips embedding the query.
        ``record=False`` looks without touching: the hits are not counted as used (their
        retrieval count and last use, which re-scoring reads, stay as they were)."""
        _validate.query(self.settings, query, top_k, profile)
        if not isinstance(record, bool):
            raise ValidationError("record must be True or False")
        _validate.share(min_relevance, "min_relevance")
        if query_vector is not None:
            query_vector = _validate.vector(query_vector, self._engines.reads.dim())
        flt = self._args.search_filter(tenant, user, agent, session, type, tier, tags, since, until,
                                  as_of, include_superseded, include_archive)
        return self._engines.retrieval.search(query, flt, top_k=top_k, profile=profile, tags=tags,
                                      now=self._now(), query_vector=query_vector,
                                      record=record, min_relevance=min_relevance)

    def why_not(self, memory_id: str, query: str, *, tenant: str | None = None,
                top_k: int | None = None,
                type: str | MemoryType | Sequence[str | MemoryType] | None = None,
                tier: str | Tier | Sequence[str | Tier] | None = None,
                tags: Sequence[str] | None = None, user: str | None = None,
                agent: str | None = None, session: str | None = None,
                since: datetime | None = None, until: datetime | None = None,
                as_of: datetime | None = None, include_superseded: bool = False,
                include_archive: bool = False, profile: str | None = None,
                min_relevance: float | None = None) -> WhyNot:
        """Why the memory is not among the hits of :meth:`search` with the same arguments (or,
        ``verdict == "returned"``, its rank there): filtered (``rule`` names the filter),
        superseded (``superseded_by``, ``chain``), expired, archived, not found by any channel,
        judged unlikely to answer (``min_relevance``) or below the relevance floor, or ranked
        below ``top_k`` (``rank``, ``scores`` and the last hit returned). It runs that search
        without recording retrievals. :class:`NotFoundError` when the tenant has no such
        memory."""
        _validate.memory_id(memory_id)
        _validate.query(self.settings, query, top_k, profile)
        _validate.share(min_relevance, "min_relevance")
        flt = self._args.search_filter(tenant, user, agent, session, type, tier, tags, since, until,
                                  as_of, include_superseded, include_archive)
        rec = self._engines.reads.get(flt.tenant, _validate.text(memory_id, "memory_id"))
        return self._engines.explain.why_not(rec, query, flt, top_k, profile, tags, self._now(),
                                     min_relevance=min_relevance)

    def context(self, query: str, *, max_tokens: int | None = None, top_k: int | None = None,
                session: str | None = None, **search_args: Any) -> str:
        """The best memories for ``query`` as a Markdown block within ``max_tokens``, by
        default the budget :meth:`context_budget` gives (RET-3/4); "" when no memory is
        relevant (``retrieval.relevance_floor``) and there is no session.
        With ``session``, the session's last turns and tool calls (TIER-1, read in order, no
        search) come first; the search then covers every session of the tenant/user/agent."""
        session_args = {k: search_args.get(k) for k in ("tenant", "user", "agent", "as_of")}
        return self._engines.context.build(
            query, max_tokens, top_k, "", lambda k: self.search(query, top_k=k, **search_args),
            None if session is None else lambda: self.session_window(session, **session_args))[0]

    def context_budget(self, query: str, max_tokens: int | None = None,
                       prompt: str = "") -> int:
        """The tokens a context for ``query`` may take (SPEC RET-3): ``max_tokens`` when
        given (or ``context.max_tokens`` when set), else ``context.window_share`` of
        ``context.window_tokens`` minus the question, ``prompt`` and
        ``context.prompt_tokens`` (0 when they fill it)."""
        from .engines.context import budget

        return budget(self.settings.context, query, max_tokens, prompt)

    def session_window(self, session: str, *, tenant: str | None = None,
                       user: str | None = None, agent: str | None = None,
                       as_of: datetime | None = None) -> list[MemoryRecord]:
        """The active tier of a session: its last ``lifecycle.active_turns`` dialogue turns
        and last ``lifecycle.active_tool_calls`` unexpired tool calls, oldest first, as of
        ``as_of`` (default now; nothing said after it)."""
        return self._engines.reads.session_window(self._args.scope(tenant, user, agent, session),
                                          utc(as_of, "as_of") or self._now())

    def stats(self, *, tenant: str | None = None) -> dict[str, Any]:
        """Counts by type and tier, sizes on disk, the embedding model and what decides
        supersession (``judge``: the learned judge's version, or the rules and why)."""
        return self._engines.reads.stats(self._args.tenant(tenant))

    def overview(self, *, tenant: str | None = None, days: int = 30,
                 recent: int = 10) -> Overview:
        """The tenant at a glance: memories by tier, type and both; ``growth``, the memories
        created on each of the last ``days`` days (UTC) and the running total; the ``recent``
        latest memories and latest supersessions, merges, deletions and archivings; inbox
        events by status; each lifecycle job's last run and next due time."""
        _validate.count(days, "days", 1, OVERVIEW_DAYS_MAX)
        _validate.count(recent, "recent", 0, OVERVIEW_RECENT_MAX)
        return self._engines.reads.overview(self._args.tenant(tenant), days, recent, self._now(),
                                    self._engines.lifecycle.schedule())

    def check_store(self) -> None:
        """Read from the store of record (one small row): a :class:`StorageError` when it does
        not answer. The service's readiness check; it tells nothing about any tenant."""
        self._engines.stores.records.get_meta("vector_seq")

    def index_stats(self) -> dict[str, Any]:
        """The vector index, opened and caught up: ``vectors`` (how many) and ``hnsw`` (an
        approximate HNSW graph, else an exact scan)."""
        return self._engines.reads.index_stats()

    # -- L2/L3: scored Q&A pairs and the fast path ----------------------------------------------
    save_qa = shortcut("qa", QA.save)
    load_all_qa = shortcut("qa", QA.all)
    search_qa = shortcut("qa", QA.search)

    def ask(self, question: str, *, session: str | None = None, user: str | None = None,
            tenant: str | None = None) -> AskResult:
        """Answer ``question`` by the cheapest honest route (seed 2's L3). ``skip``: chit-chat
        gets a short reply, no retrieval. ``reuse``: a Q&A pair is judged the question asked
        (``faq.reuse_judge``: by default its calibrated confidence,
        :mod:`varvemem.engines.faq_confidence`, at least ``faq.reuse_confidence``; or the
        learned judge; or, with an LLM configured, the LLM) and its score is at least
        ``faq.reuse_min_score``: its answer,
        straight from memory (``AskResult.evidence`` says why). ``normal``: retrieval and
        the packed context; with an LLM configured it answers from that context and the
        answer becomes a new pair (FLOW-1),
        without one the context itself is the answer, labelled so. With ``session`` the
        exchange is also appended to the L1 history."""
        text = _validate.text(question, "question")
        scope = self._args.scope(tenant, user, None, session)
        res = self._engines.faq.ask(text, session, user, scope.tenant)
        if session is not None:
            self.sessions.save(session, [{"role": "user", "content": text},
                                         {"role": "assistant", "content": res.answer,
                                          "sources": res.sources}],
                               tenant=tenant, user=user)
        return res


def upgrade_store(settings: Settings) -> tuple[int, int]:
    """Migrate the configured store of record to this release's schema (the embedded SQLite
    store migrates on open anyway; PostgreSQL does unless ``store.postgresql.auto_migrate`` is off).
    Returns the schema versions before and after."""
    from .stores import upgrade_records

    return upgrade_records(settings)
