"""The library API: :class:`Memory`, one object per home folder, no global state.

Every surface (CLI, and later REST and MCP) is a thin face over this class.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from . import _validate
from ._args import Args
from ._namespaces import QA, Inbox, shortcut
from ._validate import enum_of, enums_of, utc
from .embeddings import check_installed, create_embedder
from .engines import extract
from .engines.reads import ReadEngine
from .errors import ValidationError
from .model import (
    AddResult,
    Draft,
    HistoryEntry,
    IngestReport,
    JobSchedule,
    MemoryChanges,
    MemoryRecord,
    MemoryType,
    Overview,
    SearchFilter,
    SearchHit,
    Tier,
    TTLMode,
    WhyNot,
    normalise_tags,
    utcnow,
)
from .settings import OVERVIEW_DAYS_MAX, OVERVIEW_RECENT_MAX, Settings
from .stores import Stores
from .stores.base import Selection
from .text import estimate_tokens

# The engines (and numpy with them) are imported when a Memory first needs one, so a command
# that only reads records (``varvemem stats``, ``varvemem get``) loads none of them.
if TYPE_CHECKING:
    import numpy as np

    from .embeddings import Embedder
    from .engines.erasure import DeletionReport, ErasureEngine
    from .engines.explain import ExplainEngine
    from .engines.faq import AskResult, FaqEngine
    from .engines.ingest import IngestProgress
    from .engines.lifecycle import ConsolidationReport, LifecycleEngine
    from .engines.retrieval import RetrievalEngine
    from .engines.update import UpdateEngine
    from .history import SessionHistory
    from .keys import KeyRing
    from .llm import ChatClient
    from .stores.session_log import SessionLog

Clock = Callable[[], datetime]
_T = TypeVar("_T")


class _OnFirstUse(Generic[_T]):
    """A part of :class:`Memory` built, and its module imported, when it is first read: once,
    whichever thread reads first. The value then sits in the instance's ``__dict__``, which
    later reads find before this (non-data) descriptor."""

    def __init__(self, build: Callable[[Memory], _T]) -> None:
        self._build = build
        self._name = build.__name__
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _OnFirstUse[_T]: ...
    @overload
    def __get__(self, obj: Memory, owner: type | None = None) -> _T: ...

    def __get__(self, obj: Memory | None, owner: type | None = None) -> _OnFirstUse[_T] | _T:
        if obj is None:
            return self
        with obj._build_lock:  # re-entrant: an engine's build reads the engines it needs
            if self._name not in obj.__dict__:
                obj.__dict__[self._name] = self._build(obj)
            value: _T = obj.__dict__[self._name]
            return value


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
        self._embedder_lock = threading.Lock()
        self._build_lock = threading.RLock()  # see _OnFirstUse
        self._own_llm = llm is None and settings.llm.enabled  # closed by close()
        if llm is None and settings.llm.enabled:
            from .llm import ChatClient

            llm = ChatClient(settings.llm)
        self._llm = llm
        self._stores = Stores(settings, self._model_id)
        self._reads = ReadEngine(settings, self._stores, self._now)
        self._args = Args(settings, self._reads)
        if settings.update.judge == "learned" and settings.update.judge_path is not None:
            from .engines import judge  # a judge file the user named is checked at start

            judge.choose("learned", settings.update.judge_path, self.embedder().model_id)

    # -- the engines and namespaces, each built on first use -----------------------------------
    @_OnFirstUse
    def _update(self) -> UpdateEngine:
        from .engines.update import UpdateEngine

        return UpdateEngine(self.settings, self._stores, self.embedder, self._now, self._llm)

    @_OnFirstUse
    def _retrieval(self) -> RetrievalEngine:
        from .engines.retrieval import RetrievalEngine

        return RetrievalEngine(self.settings, self._stores, self.embedder, self._now)

    @_OnFirstUse
    def _lifecycle(self) -> LifecycleEngine:
        from .engines.lifecycle import LifecycleEngine

        return LifecycleEngine(self.settings, self._stores, self._update, self._now, self._llm)

    @_OnFirstUse
    def _faq(self) -> FaqEngine:
        from .engines.faq import ASK_PROMPT, FaqEngine

        return FaqEngine(self.settings, self._stores, self._update, self._retrieval,
                         self.embedder, self._now, self._llm,
                         lambda q, k, s, u, t: self._context(q, None, k, s, ASK_PROMPT,
                                                              user=u, tenant=t))

    @_OnFirstUse
    def _explain(self) -> ExplainEngine:
        from .engines.explain import ExplainEngine

        return ExplainEngine(self._retrieval, self._reads.current)

    @_OnFirstUse
    def _session_log(self) -> SessionLog:
        from .stores.session_log import SessionLog

        return SessionLog(self.settings.home / "sessions", self.settings.default_tenant)

    @_OnFirstUse
    def _erasure(self) -> ErasureEngine:
        from .engines.erasure import ErasureEngine

        return ErasureEngine(self.settings, self._stores, self._update, self._lifecycle,
                             self._session_log, self._now)

    @_OnFirstUse
    def keys(self) -> KeyRing:
        """API keys of the service (``create``, ``list``, ``revoke``, ``authenticate``), and
        the logins that stand for them (the inspector's sessions and one-time links)."""
        from .keys import KeyRing

        return KeyRing(self._stores.records, self._now)

    @_OnFirstUse
    def qa(self) -> QA:
        """L2: scored Q&A pairs (``save``, ``all``, ``search``, ``update``, ``feedback``, ...)."""
        return QA(self._args, self._faq)

    @_OnFirstUse
    def inbox(self) -> Inbox:
        """INT-1: the webhook inbox (``receive``, ``process``, ``counts``, ``events``, ...)."""
        from .engines.inbox import InboxEngine

        return Inbox(self._args, InboxEngine(self.settings, self._stores, self._update, self._now,
                                       self._stores.records), self._update)

    @_OnFirstUse
    def sessions(self) -> SessionHistory:
        """L1: per-session Markdown history (``save``, ``load_session``, ``compress_history``)."""
        from .history import SessionHistory

        return SessionHistory(self._session_log, self.settings.history, self._now, self._args.tenant,
                              self._llm)

    # -- plumbing ------------------------------------------------------------------------------
    def _now(self) -> datetime:
        now = self.clock()
        return now if now.tzinfo else now.replace(tzinfo=timezone.utc)

    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use."""
        embedder = self._embedder
        if embedder is None:
            with self._embedder_lock:  # concurrent first reads load it once
                if self._embedder is None:
                    self._embedder = create_embedder(self.settings.embedder)
                embedder = self._embedder
        return embedder

    def _model_id(self) -> tuple[str, int]:
        e = self.embedder()
        return e.model_id, e.dim

    @property
    def notices(self) -> list[str]:
        """Things the stores did on their own that a user should hear about (e.g. a rebuild)."""
        return self._stores.notices

    def close(self) -> None:
        """Persist the vector index and close the store (and the LLM client made here)."""
        if "_retrieval" in self.__dict__:  # built (see _OnFirstUse)
            self._retrieval.close()
        self._stores.close()
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
        draft = _validate.draft(content, type=type, tags=tags, source=source, importance=importance,
                            scope=self._args.scope(tenant, user, agent, session), tier=tier,
                            ttl_mode=ttl_mode, ttl_days=ttl_days, metadata=metadata,
                            supersedes=supersedes, created_at=created_at, question=question,
                            answer=answer, score=score)
        return self._update.add([draft])[0]

    def add_many(self, items: Iterable[str | Mapping[str, Any]], *,
                 vectors: np.ndarray | None = None, **defaults: Any) -> list[AddResult]:
        """Bulk add, embedded in batches. Items are strings or dicts of :meth:`add`'s arguments;
        ``defaults`` apply to every item. ``vectors`` (one unit vector per item) skips embedding."""
        return self._update.add(_validate.drafts(items, defaults, self._args.scope), vectors=vectors)

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
                                       self._args.scope(tenant, user, agent, session),
                                       tags=list(tags or []), importance=importance,
                                       created_at=created_at)
        return self._update.add([draft])[0]

    def add_event(self, event: Mapping[str, Any], *, source: str = "event",
                  tenant: str | None = None, user: str | None = None, agent: str | None = None,
                  tags: Sequence[str] | None = None, importance: float | None = None,
                  created_at: datetime | None = None) -> AddResult:
        """Remember a platform event (pipeline run, PR comment, alert, any JSON object)."""
        draft = extract.from_event(event, self._args.scope(tenant, user, agent, None), source=source,
                                   tags=list(tags or []), importance=importance,
                                   created_at=created_at)
        return self._update.add([draft])[0]

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
        return self._update.ingest_paths([Path(p) for p in paths],
                                         self._args.scope(tenant, None, None, None),
                                         normalise_tags(tags), progress)

    def ingest_text(self, text: str, source: str, *, tags: Sequence[str] | None = None,
                    tenant: str | None = None,
                    progress: Callable[[IngestProgress], None] | None = None) -> IngestReport:
        """Ingest a document given as text under a stable ``source`` name (at most
        ``update.ingest_max_file_bytes``; see :meth:`ingest`)."""
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("document is empty")
        if not isinstance(source, str) or not source.strip():
            raise ValidationError("source must be non-empty text")
        _validate.valid_text(text, "content")
        _validate.valid_text(source, "source")
        report = IngestReport(files=1)
        self._update.ingest_text(text, source, self._args.scope(tenant, None, None, None),
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
            self._update.validate(Draft(content=content, scope=rec.scope))
        _validate.importance(importance)
        if tags is not None:
            tags = _validate.tags(self.settings, tags)
        if metadata is not None:  # what the record will hold: its metadata with these merged
            _validate.metadata(self.settings, {**rec.metadata, **dict(metadata)})
        return self._update.change(rec, content=content, tags=tags, importance=importance,
                                   tier=enum_of(Tier, tier, "tier"),
                                   metadata=None if metadata is None else dict(metadata),
                                   reason=reason, actor=actor)

    def feedback(self, memory_id: str, helpful: bool, *, weight: float = 0.1,
                 reason: str = "", tenant: str | None = None) -> MemoryRecord:
        """Score a memory up (helpful) or down: importance, and a Q&A pair's score, move by
        ``weight``, bounded to 0..1."""
        low, high = _validate.FEEDBACK_WEIGHT_RANGE
        if not isinstance(weight, (int, float)) or not low < weight <= high:
            raise ValidationError(f"feedback weight {weight!r} is not in (0, 1]")
        reason = _validate.optional_text(reason, "reason")
        return self._update.feedback(self._args.live(memory_id, tenant), helpful, weight, reason)

    def delete(self, memory_id: str, *, reason: str = "", tenant: str | None = None) -> None:
        """Delete a memory, also from the archive. Its last state stays in :meth:`history`.
        What was derived from it goes too (an experience is made again from its other
        sources, a Q&A pair answered from it is deleted), also kept in history."""
        reason = _validate.optional_text(reason, "reason")
        rec = self.get(memory_id, tenant=tenant)
        if rec.tier is Tier.ARCHIVE:
            self._lifecycle.delete_archived([rec], self._now(), reason)
        else:
            self._update.delete(rec, reason)
        self._erasure.after_delete([rec], reason)

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
        return self._reads.resolve_id(self._args.tenant(tenant), _validate.memory_id(prefix, "id"))

    def history(self, memory_id: str, *, tenant: str | None = None) -> list[HistoryEntry]:
        """Every change to the memory, oldest first (also after it was deleted)."""
        return self._reads.history(self._args.tenant(tenant), _validate.memory_id(memory_id))

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
            query_vector = _validate.vector(query_vector, self._reads.dim())
        flt = self._search_filter(tenant, user, agent, session, type, tier, tags, since, until,
                                  as_of, include_superseded, include_archive)
        return self._retrieval.search(query, flt, top_k=top_k, profile=profile, tags=tags,
                                      now=self._now(), query_vector=query_vector,
                                      record=record, min_relevance=min_relevance)

    def _search_filter(self, tenant: str | None, user: str | None, agent: str | None,
                       session: str | None, type: Any, tier: Any, tags: Sequence[str] | None,
                       since: datetime | None, until: datetime | None, as_of: datetime | None,
                       include_superseded: bool, include_archive: bool) -> SearchFilter:
        for name, value in (("user", user), ("agent", agent), ("session", session),
                            ("tags", tags)):
            _validate.valid_text(value, name)
        try:
            return SearchFilter(
                tenant=self._args.tenant(tenant), user=user, agent=agent, session=session,
                types=enums_of(MemoryType, type, "memory type"), tiers=enums_of(Tier, tier, "tier"),
                tags=normalise_tags(tags) or None, created_after=utc(since, "since"),
                created_before=utc(until, "until"), as_of=utc(as_of, "as_of"),
                include_superseded=include_superseded, include_archive=include_archive)
        except ValueError as exc:
            raise ValidationError(str(exc).splitlines()[0]) from None

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
        flt = self._search_filter(tenant, user, agent, session, type, tier, tags, since, until,
                                  as_of, include_superseded, include_archive)
        rec = self._reads.get(flt.tenant, _validate.text(memory_id, "memory_id"))
        return self._explain.why_not(rec, query, flt, top_k, profile, tags, self._now(),
                                     min_relevance=min_relevance)

    def context(self, query: str, *, max_tokens: int | None = None, top_k: int | None = None,
                session: str | None = None, **search_args: Any) -> str:
        """The best memories for ``query`` as a Markdown block within ``max_tokens``, by
        default the budget :meth:`context_budget` gives (RET-3/4); "" when no memory is
        relevant (``retrieval.relevance_floor``) and there is no session.
        With ``session``, the session's last turns and tool calls (TIER-1, read in order, no
        search) come first; the search then covers every session of the tenant/user/agent."""
        return self._context(query, max_tokens, top_k, session, **search_args)[0]

    def context_budget(self, query: str, max_tokens: int | None = None,
                       prompt: str = "") -> int:
        """The tokens a context for ``query`` may take (SPEC RET-3): ``max_tokens`` when
        given (or ``context.max_tokens`` when set), else ``context.window_share`` of
        ``context.window_tokens`` minus the question, ``prompt`` and
        ``context.prompt_tokens`` (0 when they fill it)."""
        cfg = self.settings.context
        budget = cfg.max_tokens if max_tokens is None else max_tokens
        if budget is None:
            return max(0, int(cfg.window_tokens * cfg.window_share) - estimate_tokens(query)
                       - (estimate_tokens(prompt) if prompt else 0) - cfg.prompt_tokens)
        if not isinstance(budget, int) or isinstance(budget, bool) \
                or budget < _validate.MAX_TOKENS_MIN:
            raise ValidationError(f"max_tokens {budget} is too small (at least "
                                  f"{_validate.MAX_TOKENS_MIN})")
        return budget

    def _context(self, query: str, max_tokens: int | None, top_k: int | None,
                 session: str | None, prompt: str = "",
                 **search_args: Any) -> tuple[str, list[SearchHit], list[str]]:
        """:meth:`context`, the hits behind it and the ids of the session's window packed
        with them; ``prompt`` is what the caller puts around it besides the question (its
        tokens leave the budget)."""
        budget = self.context_budget(query, max_tokens, prompt)
        window: list[MemoryRecord] = []
        if session is not None:
            window = self.session_window(session, tenant=search_args.get("tenant"),
                                         user=search_args.get("user"),
                                         agent=search_args.get("agent"),
                                         as_of=search_args.get("as_of"))
        hits = self.search(query, top_k=top_k or self.settings.context.top_k, **search_args)
        shown = {r.memory_id for r in window}
        # A prompt gets only hits with evidence of their own. Those the relevance judge read
        # passed it; the floor answers nothing unless one hit reaches it, but then ranks the
        # rest below it too, which would fill the budget with memories the query is not about.
        floor = self._retrieval.relevance_floor()
        hits = [h for h in hits if h.memory.memory_id not in shown
                and (floor <= 0 or h.scores.relevance is not None
                     or (h.scores.evidence or 0.0) >= floor)]
        return self._retrieval.pack(hits, budget, window), hits, sorted(shown)

    def session_window(self, session: str, *, tenant: str | None = None,
                       user: str | None = None, agent: str | None = None,
                       as_of: datetime | None = None) -> list[MemoryRecord]:
        """The active tier of a session: its last ``lifecycle.active_turns`` dialogue turns
        and last ``lifecycle.active_tool_calls`` unexpired tool calls, oldest first, as of
        ``as_of`` (default now; nothing said after it)."""
        return self._reads.session_window(self._args.scope(tenant, user, agent, session),
                                          utc(as_of, "as_of") or self._now())

    def stats(self, *, tenant: str | None = None) -> dict[str, Any]:
        """Counts by type and tier, sizes on disk, the embedding model and what decides
        supersession (``judge``: the learned judge's version, or the rules and why)."""
        from .engines.judge import describe

        out = self._reads.stats(self._args.tenant(tenant))
        u, model = self.settings.update, out["embedder"]
        # The store's model, else the configured one's name: no embedder is built for it.
        out["judge"] = describe(u.judge, u.judge_path, model["model"] if model else
                                self.settings.embedder.name)
        return out

    def overview(self, *, tenant: str | None = None, days: int = 30,
                 recent: int = 10) -> Overview:
        """The tenant at a glance: memories by tier, type and both; ``growth``, the memories
        created on each of the last ``days`` days (UTC) and the running total; the ``recent``
        latest memories and latest supersessions, merges, deletions and archivings; inbox
        events by status; each lifecycle job's last run and next due time."""
        _validate.count(days, "days", 1, OVERVIEW_DAYS_MAX)
        _validate.count(recent, "recent", 0, OVERVIEW_RECENT_MAX)
        return self._reads.overview(self._args.tenant(tenant), days, recent, self._now(),
                                    self._lifecycle.schedule())

    def check_store(self) -> None:
        """Read from the store of record (one small row): a :class:`StorageError` when it does
        not answer. The service's readiness check; it tells nothing about any tenant."""
        self._stores.records.get_meta("vector_seq")

    def index_stats(self) -> dict[str, Any]:
        """The vector index, opened and caught up: ``vectors`` (how many) and ``hnsw`` (an
        approximate HNSW graph, else an exact scan)."""
        return self._reads.index_stats()

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
        res = self._faq.ask(text, session, user, scope.tenant)
        if session is not None:
            self.sessions.save(session, [{"role": "user", "content": text},
                                         {"role": "assistant", "content": res.answer,
                                          "sources": res.sources}],
                               tenant=tenant, user=user)
        return res

    # -- lifecycle -----------------------------------------------------------------------------
    def consolidate(self, jobs: Sequence[str] | None = None, *, tenant: str | None = None,
                    dry_run: bool = False, at: datetime | None = None) -> ConsolidationReport:
        """Run the lifecycle jobs once at the clock's time (all by default: end idle sessions,
        re-score, promote, abstract, forget). Idempotent: a second run at the same time
        changes nothing more. The report's ``planned`` lists every change; with ``dry_run``
        nothing is written (records, history, schedule, index, cache, archive) and the report
        says what a run would do, at ``at`` if given (say, a week from now: what would be
        promoted or forgotten by then). A real run acts at the clock's time only."""
        if not isinstance(dry_run, bool):
            raise ValidationError("dry_run must be True or False")
        if at is not None and not dry_run:
            raise ValidationError("at is for dry runs: a run acts at the clock's time")
        at = utc(at, "at")
        if isinstance(jobs, str):
            jobs = [jobs]
        return self._lifecycle.consolidate(list(jobs) if jobs else None,
                                           None if tenant is None else self._args.tenant(tenant),
                                           dry_run, at)

    def due_jobs(self) -> list[str]:
        """The lifecycle jobs whose ``lifecycle.<job>_every_minutes`` has passed."""
        return self._lifecycle.due()

    def schedule(self) -> list[JobSchedule]:
        """Each lifecycle job's interval, last run and next due time at the clock's now (the
        overview's ``lifecycle``, read alone)."""
        return self._lifecycle.schedule()

    def close_session(self, session: str, *, tenant: str | None = None) -> int:
        """End a session now: its active memories move to short-term. Returns how many."""
        scope = self._args.scope(tenant, None, None, session)
        assert scope.session is not None
        return self._lifecycle.end_session(scope.tenant, scope.session, self._now(), "closed")

    def restore(self, memory_id: str, *, reason: str = "", tenant: str | None = None,
                actor: str = "api") -> MemoryRecord:
        """Bring an archived memory back to the tier it left, or undo a supersession: the
        superseded memory is current again (its successor stays current too, and the two are
        no longer taken for one claim at read time), with history."""
        reason, actor = _validate.optional_text(reason, "reason"), \
            _validate.optional_text(actor, "actor")
        rec = self.get(memory_id, tenant=tenant)
        if rec.tier is not Tier.ARCHIVE and (rec.valid_to is not None or rec.superseded_by):
            return self._update.undo_supersession(rec, reason, actor)
        return self._lifecycle.restore(self._args.tenant(tenant), memory_id, self._now())

    def tier_counts(self, *, tenant: str | None = None) -> dict[str, int]:
        """Memories by tier, of one tenant or (``None``) of all."""
        return self._lifecycle.tier_counts(None if tenant is None else self._args.tenant(tenant))

    # -- users -------------------------------------------------------------------------------------
    def get_all(self, *, tenant: str | None = None, user: str | None = None,
             types: Sequence[str | MemoryType] | None = None,
             tiers: Sequence[str | Tier] | None = None, include_superseded: bool = False,
             limit: int = 50, after: str = "") -> list[MemoryRecord]:
        """Live memories by id (a page: pass the last id as ``after`` for the next one)."""
        if not 1 <= limit <= 10_000:
            raise ValidationError("limit must be in 1..10000")
        _validate.valid_text(user, "user")
        _validate.valid_text(after, "after")
        sel = Selection(tenant=self._args.tenant(tenant), user=user,
                        types=enums_of(MemoryType, types, "type"), tiers=enums_of(Tier, tiers, "tier"),
                        current_only=not include_superseded)
        return self._reads.page(sel, limit, after)

    def changes(self, since: int | None = None, *, tenant: str | None = None,
                types: Sequence[str | MemoryType] | None = None) -> MemoryChanges:
        """What the tenant's memories went through since ``since``, a ``position`` an earlier
        call returned: the memories written since (created or changed by any write: an
        update, a supersession, a tier move...; not the retrieval counters a search keeps),
        as they are now, by any instance or process over the store, and the ids removed
        since (deleted, archived, erased), with the position to ask from next.
        ``since=None``: the position alone, to start from. ``types`` narrows the memories
        written (a removed id may be of any type). A client keeping a copy of some
        memories (the LangGraph store) stays current with it; the cost is what was written
        since (one row read when nothing was), not the tenant's size."""
        if since is not None and (not isinstance(since, int) or isinstance(since, bool)
                                  or since < 0):
            raise ValidationError("since must be a position from an earlier changes() (an "
                                  "integer >= 0) or None")
        return self._reads.changes(self._args.tenant(tenant), since,
                                   enums_of(MemoryType, types, "type"))

    def delete_user(self, user: str, *, tenant: str | None = None,
                    reason: str = "user deleted") -> DeletionReport:
        """Erase ``user`` from the tenant (:mod:`varvemem.engines.erasure`): their memories in
        every tier (superseded ones too) and in the archive (its objects are rewritten),
        every memory derived from theirs (experiences are made again from the other sources
        that remain), the old contents of all their history (a bare ``delete`` entry stays),
        the tenant's cached answers, their sessions' short-term cache, their turns in the L1
        session files (a session that holds nobody else's memories loses its file) and their
        webhook payloads. Returns what was deleted where."""
        if not isinstance(user, str) or not user.strip():
            raise ValidationError("user must be non-empty text")
        _validate.valid_text(user, "user")
        reason = _validate.optional_text(reason, "reason")
        return self._erasure.erase_user(self._args.tenant(tenant), user, reason)

    # -- maintenance ---------------------------------------------------------------------------
    def reindex(self, *, re_embed: bool = False,
                progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the vector index from the store; ``re_embed`` recomputes every vector with the
        configured embedder first (after changing models). Returns the number of vectors."""
        return self._update.reindex(re_embed, progress)


def upgrade_store(settings: Settings) -> tuple[int, int]:
    """Migrate the configured store of record to this release's schema (the embedded SQLite
    store migrates on open anyway; PostgreSQL does unless ``store.auto_migrate`` is off).
    Returns the schema versions before and after."""
    from .stores import upgrade_records

    return upgrade_records(settings)
