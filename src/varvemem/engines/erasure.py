"""Erasure by provenance: a user's memories and everything made from them.

Derived memories name what they were made from: an experience its ``metadata.sources`` (ids)
and ``metadata.users``, a Q&A pair made from an answer its ``metadata.sources`` (id -> content
hash); and the sources point back (``experience_id``, ``derived``), so deleting one memory
finds what was made of it without a scan. Erasing a user deletes their memories and every
derived memory that quotes one of them, transitively (a pair answered from an experience that
quoted the user goes too); an experience is then made again from the sources that remain,
when the abstraction job would make one of them. Deleting one memory does the same to what
was derived from it, keeping each deleted memory's last state in its history as a plain
delete does.

:class:`DeletionReport` says what went where, with counts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel

from ..errors import ValidationError
from ..model import TYPES, MemoryRecord, MemoryType, Tier, types_where
from ..settings import views
from ..stores import StoreTx, parts
from ..stores.base import Selection
from ..stores.session_log import SessionLog
from .lifecycle import ACTOR, LifecycleEngine
from .timeline import snapshot
from .update import UpdateEngine, orphans, record_change, reinstate, replaced_by

_BATCH = 500


class DeletionReport(BaseModel):
    """What erasing a user deleted, where (counts)."""

    tenant: str
    user: str
    live: int = 0  # the user's memories deleted from the live tiers (superseded ones too)
    archived: int = 0  # the user's memories deleted from the archive (its objects rewritten)
    derived: int = 0  # memories made from theirs (experiences, Q&A pairs) deleted
    rederived: int = 0  # experiences made again from the other sources that remained
    history: int = 0  # history entries whose contents were erased (a bare delete stays)
    cached_answers: int = 0  # answer-cache entries of the tenant dropped
    cached_sessions: int = 0  # short-term session windows dropped
    session_files: int = 0  # L1 session files deleted
    session_turns: int = 0  # turns taken out of session files others share
    inbox: int = 0  # webhook payloads dropped from the inbox

    def total(self) -> int:
        """How many things were deleted in all."""
        return sum(v for v in self.model_dump().values() if isinstance(v, int))


def sources_of(rec: MemoryRecord) -> set[str]:
    """The memory ids a derived memory names as its sources (none for other memories)."""
    found = rec.metadata.get("sources")
    if isinstance(found, dict | list):
        return {i for i in found if isinstance(i, str)}
    return set()


class ErasureStores(parts.Records, parts.Caches, parts.Archived, parts.Notices, Protocol):
    """The stores an erasure reaches."""


class ErasureEngine:
    """Deletes a user, or what was derived from deleted memories, by provenance."""

    def __init__(self, settings: views.Webhooks, stores: ErasureStores, update: UpdateEngine,
                 lifecycle: LifecycleEngine, sessions: SessionLog,
                 clock: Callable[[], datetime]) -> None:
        self.settings = settings
        self.stores = stores
        self.update = update
        self.lifecycle = lifecycle
        self.sessions = sessions
        self.clock = clock

    def erase_user(self, tenant: str, user: str, reason: str) -> DeletionReport:
        """Erase ``user`` from ``tenant``: their memories in every tier and the archive, what
        was derived from them, the old contents in those memories' history, the tenant's
        cached answers, their sessions' cached windows, their turns in the session files (a
        session of theirs that holds nobody else's memories loses its file), and their
        webhook payloads in the inbox."""
        now = self.clock()
        report = DeletionReport(tenant=tenant, user=user)
        # The caches first: one that cannot be reached stops the erasure before it starts.
        report.cached_answers = self.stores.answers.drop_tenant(tenant)
        own = self._ids(Selection(tenant=tenant, user=user, current_only=False))
        made = self._records(Selection(tenant=tenant, user=user, current_only=False,
                                       types=[MemoryType.EXPERIENCE]))
        archived = {r.memory_id: r for r in self.stores.archived_records(tenant)}
        own |= {i for i, r in archived.items() if r.scope.user == user}
        derived = self._derived(tenant, own, user, archived)
        sessions = self._sessions(tenant, own | set(derived), archived)
        gone = own | set(derived)
        in_archive = [r for i, r in archived.items() if i in gone]
        report.live, report.derived, report.history, erased = self._delete_live(
            tenant, own, derived, now, reason, erase=True, archived=in_archive)
        report.history += self.lifecycle.delete_archived(in_archive, now, reason, erase=True)[1]
        report.archived = sum(r.memory_id in own for r in in_archive)
        report.derived += sum(r.memory_id in derived for r in in_archive)
        report.rederived = self._rederive(tenant, [*made, *derived.values(), *in_archive],
                                          gone, now)
        for session in sorted(sessions):
            self.stores.active.drop(tenant, session)
        report.cached_sessions = len(sessions)
        erased += in_archive
        self._scrub_neighbours(tenant, erased, gone)
        untagged = self._untag_successors(tenant, erased, gone, now)
        # An answer that listed an untagged memory listed its tags (the context's format).
        report.session_files, report.session_turns = self.sessions.erase_user(
            tenant, user, gone | untagged)
        for session in sorted(sessions):
            if not self.stores.records.select(Selection(session=(tenant, session),
                                                        current_only=False), 1):
                with contextlib.suppress(ValidationError):  # an id no session file can have
                    report.session_files += self.sessions.delete(tenant, session)
        report.inbox = self._erase_inbox(tenant, user, gone)
        if not self.stores.records.purge_deleted(tenant):
            self.stores.notices.append("a reader held the store's write-ahead log: it keeps "
                                       "the erased text until its next checkpoint")
        self.update.after_write()
        return report

    def after_delete(self, deleted: Sequence[MemoryRecord], reason: str) -> int:
        """Delete what was derived from ``deleted`` (memories just deleted, their last state
        kept in history) the same way, and make experiences again from their other sources.
        Returns how many derived memories were deleted."""
        if not deleted:
            return 0
        tenant = deleted[0].scope.tenant
        now = self.clock()
        ids = {r.memory_id for r in deleted}
        derived, archived = self._derived_by_pointers(tenant, deleted)
        if not derived:
            return 0
        why = f"made from a deleted memory{': ' + reason if reason else ''}"
        in_archive = [r for i, r in archived.items() if i in derived]
        self._delete_live(tenant, set(), derived, now, why, erase=False, archived=in_archive)
        self.lifecycle.delete_archived(in_archive, now, why)
        self._rederive(tenant, [*deleted, *derived.values(), *in_archive], ids | set(derived),
                       now)
        self.update.after_write()
        return len(derived)

    # -- steps ----------------------------------------------------------------------------
    def _ids(self, sel: Selection) -> set[str]:
        return {r.memory_id for r in self._records(sel)}

    def _records(self, sel: Selection) -> list[MemoryRecord]:
        out: list[MemoryRecord] = []
        while page := self.stores.records.select(sel, _BATCH, out[-1].memory_id if out else ""):
            out += page
        return out

    def _derived(self, tenant: str, gone: set[str], user: str | None,
                 archived: dict[str, MemoryRecord]) -> dict[str, MemoryRecord]:
        """The tenant's derived memories (live, superseded or archived) that quote a memory of
        ``gone`` or name ``user``, transitively, by id (``gone`` itself excluded)."""
        candidates = {r.memory_id: r for r in self._records(
            Selection(tenant=tenant, types=list(types_where(lambda t: t.derived)),
                      current_only=False))}
        candidates.update((i, r) for i, r in archived.items() if TYPES[r.memory_type].derived)
        found: dict[str, MemoryRecord] = {}
        reach = set(gone)
        while True:
            more = {i: r for i, r in candidates.items() if i not in reach and (
                sources_of(r) & reach or (user is not None and user in _named_users(r)))}
            if not more:
                return found
            found.update(more)
            reach |= set(more)

    def _derived_by_pointers(self, tenant: str, deleted: Sequence[MemoryRecord]
                             ) -> tuple[dict[str, MemoryRecord], dict[str, MemoryRecord]]:
        """What was derived from ``deleted``, found by the pointers sources keep to what was
        made of them (:func:`derived_ids`), transitively: (derived by id, the archived ones
        among them by id). Only memories that do name a deleted one as a source count."""
        reach = {r.memory_id for r in deleted}
        found: dict[str, MemoryRecord] = {}
        archived: dict[str, MemoryRecord] = {}
        frontier = set().union(*(derived_ids(r) for r in deleted)) - reach
        while frontier:
            live = self.stores.records.get_many(tenant, sorted(frontier))
            away = {r.memory_id: r for r in self.stores.archived_records(
                tenant, sorted(frontier - set(live)))}
            archived.update(away)
            more = {i: r for i, r in {**live, **away}.items() if sources_of(r) & reach}
            found.update(more)
            reach |= set(more)
            frontier = set().union(*(derived_ids(r) for r in more.values())) - reach
        return found, {i: r for i, r in archived.items() if i in found}

    def _sessions(self, tenant: str, ids: set[str], archived: dict[str, MemoryRecord]
                  ) -> set[str]:
        """The sessions the memories ``ids`` were in."""
        live = self.stores.records.get_many(tenant, sorted(ids))
        return {r.scope.session for r in [*live.values(), *archived.values()]
                if r.memory_id in ids and r.scope.session}

    def _delete_live(self, tenant: str, own: set[str], derived: dict[str, MemoryRecord],
                     now: datetime, reason: str, erase: bool,
                     archived: Sequence[MemoryRecord]
                     ) -> tuple[int, int, int, list[MemoryRecord]]:
        """Delete the live ones of ``own`` and ``derived`` (``erase``: with their history's old
        contents; else their last state goes into history); the memories they replaced point
        past them (and past the ``archived`` ones going too) or are current again
        (:func:`.update.orphans`), each in the transaction of its successor's deletion.
        Returns (own deleted, derived deleted, history entries erased, the records
        deleted)."""
        ids = sorted(own | set(derived))
        live: dict[str, MemoryRecord] = {}
        for i in range(0, len(ids), _BATCH):
            live.update(self.stores.records.get_many(tenant, ids[i: i + _BATCH]))
        gone = {**{r.memory_id: r for r in archived}, **live}
        orphaned = orphans(self.stores.records, tenant, gone)
        counts = [0, 0, 0]
        order = sorted(live)
        for i in range(0, len(order), _BATCH):
            batch = order[i: i + _BATCH]
            with self.stores.transaction() as tx:
                for memory_id in batch:
                    rec = live[memory_id]
                    tx.delete(tenant, memory_id)
                    if erase:
                        counts[2] += tx.purge_history(tenant, memory_id)
                    record_change(tx, rec, "delete", now, "api", reason,
                                  None if erase else snapshot(rec))
                    counts[0 if memory_id in own else 1] += 1
                reinstate(tx, [o for o in orphaned if o.record.superseded_by in batch], now,
                          "api")
        return counts[0], counts[1], counts[2], list(live.values())

    def _scrub_neighbours(self, tenant: str, erased: Sequence[MemoryRecord],
                          gone: set[str]) -> None:
        """The turns that stay in the sessions of ``erased`` turns lose those turns' words
        from their context keys (the turns before and the reply kept with them, also in
        their vectors and full text)."""
        said: dict[str, set[str]] = {}
        for r in erased:
            if r.scope.session and r.memory_type is MemoryType.DIALOGUE:
                said.setdefault(r.scope.session, set()).add(r.content)
        for session, texts in sorted(said.items()):
            stay = [r for r in self._records(Selection(session=(tenant, session),
                                                       current_only=False))
                    if r.memory_id not in gone]
            self.update.drop_context(stay, texts)

    def _untag_successors(self, tenant: str, erased: Sequence[MemoryRecord], gone: set[str],
                          now: datetime) -> set[str]:
        """A memory that replaced an erased one loses the tags it took from it (unless it
        had them of its own, or from a predecessor that stays). Returns the ids of those
        that lost some."""
        by_successor: dict[str, list[MemoryRecord]] = {}
        for r in erased:
            if r.superseded_by and r.superseded_by not in gone and r.tags:
                by_successor.setdefault(r.superseded_by, []).append(r)
        if not by_successor:
            return set()
        successors = self.stores.records.get_many(tenant, sorted(by_successor))
        kept = [p for p in replaced_by(self.stores.records, tenant, successors)
                if p.memory_id not in gone]
        untagged: set[str] = set()
        with self.stores.transaction() as tx:
            for sid, rec in sorted(successors.items()):
                own = set(self.update.own_tags(rec))
                own.update(t for p in kept if p.superseded_by == sid for t in p.tags)
                theirs = {t for p in by_successor[sid] for t in p.tags} - own
                tags = [t for t in rec.tags if t not in theirs]
                if tags != rec.tags:
                    tx.update(rec.model_copy(update={"tags": tags, "updated_at": now}),
                              fields=["tags", "updated_at"])
                    # No old value: the tags were the erased memory's words.
                    record_change(tx, rec, "update", now, "api",
                                  "tags it took from an erased memory removed", None,
                                  {"tags": tags})
                    untagged.add(sid)
        return untagged

    def _rederive(self, tenant: str, derived: Iterable[MemoryRecord], gone: set[str],
                  now: datetime) -> int:
        """Each deleted experience is made again from its sources that remain current and
        live, when the abstraction job would make one of them; a source left without its
        experience is free to be abstracted again. Returns how many experiences were made."""
        groups: list[tuple[str, list[str]]] = []
        freed: dict[str, MemoryRecord] = {}
        for exp in sorted(derived, key=lambda r: r.memory_id):
            if exp.memory_type is not MemoryType.EXPERIENCE:
                continue
            order = [i for i in exp.metadata.get("sources", []) if isinstance(i, str)
                     and i not in gone]
            found = self.stores.records.get_many(tenant, order)
            left = [found[i] for i in order if i in found and found[i].valid_to is None
                    and found[i].tier is not Tier.ARCHIVE]
            for r in left:
                if r.metadata.get("experience_id") == exp.memory_id:
                    freed[r.memory_id] = r
            if self.lifecycle.worth_abstracting(left):
                groups.append((tenant, [r.memory_id for r in left]))
        if freed:
            with self.stores.transaction() as tx:
                for r in freed.values():
                    _free(tx, r, now)
        if not groups:
            return 0
        return len(self.lifecycle.rebuild(groups, now))

    def _erase_inbox(self, tenant: str, user: str, gone: set[str]) -> int:
        """Drop the payloads of the tenant's webhook events that made a memory of ``gone``, or
        that a source of ``user`` delivered and no worker has finished."""
        theirs = {name for name, src in self.settings.webhooks.sources.items()
                  if src.tenant == tenant and src.user == user}
        picked: list[int] = []
        after = 0
        while page := self.stores.records.inbox(tenant, limit=_BATCH, after=after):
            picked += [e.event_id for e in page if set(e.memory_ids) & gone or (
                e.source in theirs and e.status != "done")]
            after = page[-1].event_id
        return self.stores.records.erase_events(tenant, picked, "erased with its user")


def derived_ids(rec: MemoryRecord) -> set[str]:
    """The memories ``rec`` says were made from it: its experience (``experience_id``) and
    the Q&A pairs answered from it (``derived``)."""
    out = {i for i in rec.metadata.get("derived", []) if isinstance(i, str)} \
        if isinstance(rec.metadata.get("derived"), list) else set()
    exp = rec.metadata.get("experience_id")
    return out | {exp} if isinstance(exp, str) else out


def _named_users(rec: MemoryRecord) -> list[str]:
    users = rec.metadata.get("users")
    return [u for u in users if isinstance(u, str)] if isinstance(users, list) else []


def _free(tx: StoreTx, rec: MemoryRecord, now: datetime) -> None:
    """``rec``'s experience was deleted: it may be abstracted again."""
    meta = {k: v for k, v in rec.metadata.items() if k != "experience_id"}
    tx.update(rec.model_copy(update={"metadata": meta}), fields=["metadata"])
    record_change(tx, rec, "abstract", now, ACTOR, "its experience was deleted",
                  {"experience_id": rec.metadata.get("experience_id")}, None)
