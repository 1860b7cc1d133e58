"""The part of :class:`~varvemem.Memory`'s API that looks after memories rather than using
them: the lifecycle (consolidate, schedule, sessions, restore), users (paging, the change feed,
erasure) and the index. A mixin of ``Memory``, in a module of its own by size only."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from . import _validate
from ._args import Args
from ._engines import Engines
from ._validate import enums_of
from .model import JobSchedule, MemoryChanges, MemoryRecord, MemoryType, Tier

if TYPE_CHECKING:
    from .engines.erasure import DeletionReport
    from .engines.lifecycle import ConsolidationReport


class Administration:
    """Lifecycle, users and maintenance methods of :class:`~varvemem.Memory`."""

    _engines: Engines
    _args: Args
    _now: Callable[[], datetime]

    # -- lifecycle -----------------------------------------------------------------------------
    def consolidate(self, jobs: Sequence[str] | None = None, *, tenant: str | None = None,
                    dry_run: bool = False, at: datetime | None = None) -> ConsolidationReport:
        """Run the lifecycle jobs once at the clock's time (all by default: end idle sessions,
        re-score, promote, abstract, forget). Idempotent: a second run at the same time
        changes nothing more. The report's ``planned`` lists every change; with ``dry_run``
        nothing is written (records, history, schedule, index, cache, archive) and the report
        says what a run would do, at ``at`` if given (say, a week from now: what would be
        promoted or forgotten by then). A real run acts at the clock's time only."""
        at = _validate.dry_run(dry_run, at)
        if isinstance(jobs, str):
            jobs = [jobs]
        return self._engines.lifecycle.consolidate(
            list(jobs) if jobs else None, None if tenant is None else self._args.tenant(tenant),
            dry_run, at)

    def due_jobs(self) -> list[str]:
        """The lifecycle jobs whose ``lifecycle.<job>_every_minutes`` has passed."""
        return self._engines.lifecycle.due()

    def schedule(self) -> list[JobSchedule]:
        """Each lifecycle job's interval, last run and next due time at the clock's now (the
        overview's ``lifecycle``, read alone)."""
        return self._engines.lifecycle.schedule()

    def close_session(self, session: str, *, tenant: str | None = None) -> int:
        """End a session now: its active memories move to short-term. Returns how many."""
        scope = self._args.scope(tenant, None, None, session)
        assert scope.session is not None
        return self._engines.lifecycle.end_session(scope.tenant, scope.session, self._now(),
                                                   "closed")

    def restore(self, memory_id: str, *, reason: str = "", tenant: str | None = None,
                actor: str = "api") -> MemoryRecord:
        """Bring an archived memory back to the tier it left, or undo a supersession: the
        superseded memory is current again (its successor stays current too, and the two are
        no longer taken for one claim at read time), with history."""
        reason, actor = _validate.optional_text(reason, "reason"), \
            _validate.optional_text(actor, "actor")
        rec = self._args.get(memory_id, tenant)
        if rec.tier is not Tier.ARCHIVE and (rec.valid_to is not None or rec.superseded_by):
            return self._engines.update.undo_supersession(rec, reason, actor)
        return self._engines.lifecycle.restore(self._args.tenant(tenant), memory_id, self._now())

    def tier_counts(self, *, tenant: str | None = None) -> dict[str, int]:
        """Memories by tier, of one tenant or (``None``) of all."""
        return self._engines.lifecycle.tier_counts(
            None if tenant is None else self._args.tenant(tenant))

    # -- users -------------------------------------------------------------------------------------
    def get_all(self, *, tenant: str | None = None, user: str | None = None,
                types: Sequence[str | MemoryType] | None = None,
                tiers: Sequence[str | Tier] | None = None, include_superseded: bool = False,
                limit: int = 50, after: str = "") -> list[MemoryRecord]:
        """Live memories by id (a page: pass the last id as ``after`` for the next one)."""
        return self._engines.reads.page(
            self._args.selection(tenant, user, types, tiers, include_superseded, limit, after),
            limit, after)

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
        _validate.position(since)
        return self._engines.reads.changes(self._args.tenant(tenant), since,
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
        _validate.user(user)
        reason = _validate.optional_text(reason, "reason")
        return self._engines.erasure.erase_user(self._args.tenant(tenant), user, reason)

    # -- maintenance ---------------------------------------------------------------------------
    def reindex(self, *, re_embed: bool = False,
                progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the vector index from the store; ``re_embed`` recomputes every vector with the
        configured embedder first (after changing models). Returns the number of vectors."""
        return self._engines.update.reindex(re_embed, progress)
