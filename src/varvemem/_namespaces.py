"""The families of :class:`~varvemem.Memory`'s API that have a namespace of their own:
``mem.qa`` (scored Q&A pairs) and ``mem.inbox`` (webhook deliveries). Each method checks its
arguments and hands the work to an engine."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from . import _validate
from ._args import Args

if TYPE_CHECKING:  # the engines are imported by the Memory that builds them, on first use
    from .engines.faq import AskResult, FaqEngine, QaStatus
    from .engines.inbox import DrainReport, InboxEngine, Receipt
    from .engines.update import UpdateEngine
    from .model import MemoryRecord, SearchHit, TTLMode
    from .stores.base import InboxEvent

P = ParamSpec("P")
R = TypeVar("R")


class shortcut(Generic[P, R]):
    """A method of a namespace reachable from :class:`Memory` under another name, e.g.
    ``save_qa = shortcut("qa", QA.save)``: ``mem.save_qa`` is ``mem.qa.save``, one signature."""

    def __init__(self, family: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self.family, self.method = family, method
        self.__doc__ = f"Shortcut for ``{family}.{method.__name__}``: {method.__doc__ or ''}"

    @overload
    def __get__(self, obj: None, owner: type) -> shortcut[P, R]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> Callable[P, R]: ...

    def __get__(self, obj: object | None, owner: type) -> shortcut[P, R] | Callable[P, R]:
        if obj is None:
            return self
        return getattr(getattr(obj, self.family), self.method.__name__)  # type: ignore[no-any-return]


class QA:
    """L2: scored question/answer pairs and their ``qa-*.md`` mirror (``mem.qa``)."""

    def __init__(self, args: Args, engine: FaqEngine) -> None:
        self._args = args
        self._engine = engine

    def save(self, question: str, answer: str, score: float = 0.5,
             keywords: Sequence[str] | None = None, *, ttl_mode: str | TTLMode | None = None,
             ttl_days: float | None = None, source_file: str | None = None,
             source_location: str | None = None, user: str | None = None,
             tenant: str | None = None) -> str:
        """Remember a scored question/answer pair (seed 2's L2); returns its id. Keywords are
        extracted from the pair (Chinese bigrams, Latin words) unless given."""
        scope = self._args.scope(tenant, user, None, None)
        return self._engine.save(question, answer, score, scope, keywords, ttl_mode=ttl_mode,
                                 ttl_days=ttl_days, source_file=source_file,
                                 source_location=source_location)

    def all(self, *, tenant: str | None = None) -> list[MemoryRecord]:
        """Every current Q&A pair of the tenant, by id."""
        return self._engine.all(self._args.tenant(tenant))

    def search(self, question: str, top_k: int = 5, *,
               tenant: str | None = None) -> list[SearchHit]:
        """The best pairs for ``question``: relevance x TTL weight x score (profile ``faq``)."""
        _validate.query(self._args.settings, question, top_k, "faq")
        return self._engine.search(question, top_k, self._args.tenant(tenant))

    def match(self, question: str, *, user: str | None = None,
              tenant: str | None = None) -> AskResult:
        """The pair :meth:`Memory.ask` would reuse for ``question`` (route ``reuse``), else
        route ``normal`` with why the nearest pair was refused in ``evidence``; it answers
        nothing and records nothing (``faq.reuse_judge = "llm"`` still asks the LLM)."""
        text = _validate.text(question, "question")
        scope = self._args.scope(tenant, user, None, None)
        return self._engine.match(text, user, scope.tenant)

    def update(self, memory_id: str, *, question: str | None = None, answer: str | None = None,
               score: float | None = None, keywords: Sequence[str] | None = None,
               ttl_mode: str | TTLMode | None = None, ttl_days: float | None = None,
               reason: str = "", tenant: str | None = None) -> MemoryRecord:
        """Change a pair in place (history keeps the old values); new text is re-embedded."""
        reason = _validate.optional_text(reason, "reason")
        return self._engine.update(self._args.live(memory_id, tenant), question=question,
                                   answer=answer, score=score, keywords=keywords,
                                   ttl_mode=ttl_mode, ttl_days=ttl_days, reason=reason)

    def feedback(self, memory_id: str, kind: str, *, tenant: str | None = None) -> MemoryRecord:
        """FLOW-1: ``up`` or ``down`` from the user, or ``followup`` (a question right after
        the answer: it was not enough) moves the pair's score by ``faq.feedback_*``."""
        from .engines.faq import check_feedback  # loaded with the engine already

        check_feedback(kind)
        return self._engine.feedback(self._args.live(memory_id, tenant), kind)

    def report(self, *, tenant: str | None = None) -> list[QaStatus]:
        """Every current pair of the tenant, by id, with its TTL mode, its TTL weight at the
        clock's now (``weight_today``, as the ``faq`` ranking applies it), how often it was
        served (``hits``: search hits and reused answers) and its ``helpful``/``unhelpful``
        feedback counts (``followups`` among the latter)."""
        return self._engine.report(self._args.tenant(tenant))

    def export(self, folder: str | Path, *, tenant: str | None = None) -> list[Path]:
        """Write every current pair as ``qa-<id>.md`` into ``folder`` (created if needed)."""
        return self._engine.export(Path(folder), self._args.tenant(tenant))

    def import_folder(self, folder: str | Path, *, tenant: str | None = None) -> dict[str, Any]:
        """Read ``qa-*.md`` files: a file whose id is a pair of the tenant updates it, any other
        adds a pair. A malformed file is reported by name and skipped. Returns ``created``
        (file name -> new id), ``updated``, ``unchanged`` and ``skipped`` (file name -> why)."""
        return self._engine.import_folder(Path(folder), self._args.tenant(tenant))


class Inbox:
    """INT-1: the webhook inbox (``mem.inbox``): deliveries committed as received, turned into
    memories by workers."""

    def __init__(self, args: Args, engine: InboxEngine, update: UpdateEngine) -> None:
        self._args = args
        self._engine = engine
        self._update = update

    def receive(self, source: str, body: bytes, headers: Mapping[str, str]) -> Receipt:
        """Verify a webhook delivery for the configured ``webhooks.sources.<source>`` and commit
        it to the inbox (durably, once per delivery id). :meth:`process` makes the memories.
        Raises :class:`NotFoundError`, :class:`AuthError` or :class:`ValidationError`
        (nothing is stored then)."""
        return self._engine.receive(source, body, headers)

    def process(self, *, worker: str | None = None, limit: int | None = None,
                stop: threading.Event | None = None) -> DrainReport:
        """Lease a batch of inbox events and turn each into memories, exactly once even with
        several workers (on one store) or after a crash (its lease runs out). Once ``stop`` is
        set, the rest of the batch is given back."""
        report = self._engine.drain(worker, limit, stop)
        if report.done:
            self._update.after_write()
        return report

    def counts(self, *, tenant: str | None = None) -> dict[str, int]:
        """Inbox events by status (``pending``, ``processing``, ``done``, ``failed``), of one
        tenant or (``None``) of all."""
        return self._engine.queue.inbox_counts(None if tenant is None else self._args.tenant(tenant))

    def events(self, *, tenant: str | None = None, status: str | None = None,
               limit: int = 100, after: int = 0) -> list[InboxEvent]:
        """The tenant's inbox events by id (a page: the last id as ``after`` for the next)."""
        return self._engine.queue.inbox(self._args.tenant(tenant), status, limit, after)

    def retry(self, event_ids: Sequence[int] | None = None, *,
              tenant: str | None = None) -> list[int]:
        """Re-arm the tenant's failed inbox events (those of ``event_ids``, or all of them), for
        when their cause is fixed; the next :meth:`process` tries them again. Returns the ids
        re-armed (an id that is not a failed event of the tenant is left out)."""
        return self._engine.queue.retry_events(
            self._args.tenant(tenant), None if event_ids is None else list(event_ids))
