"""The reads the library API serves that no other engine owns: one memory (live, archived, or
as it was at a time), its history, short ids, a session's window, pages and counts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, time, timedelta, timezone
from typing import Any, Protocol

from ..errors import NotFoundError
from ..model import (
    DayCount,
    HistoryEntry,
    JobSchedule,
    MemoryChanges,
    MemoryRecord,
    MemoryType,
    Overview,
    Scope,
)
from ..settings import views
from ..stores import parts
from ..stores.base import Selection
from . import ids, timeline

# The history an overview lists as recent changes: what replaced, merged or removed a memory.
OVERVIEW_ACTIONS = ("supersede", "merge", "delete", "archive")


class ReadsConfig(views.Home, views.Lifecycle, views.Update, views.Embedder, Protocol):
    """The settings sections plain reads use."""


class ReadsStores(parts.Records, parts.Vectors, parts.Caches, parts.Archived, parts.Model,
                  Protocol):
    """The stores plain reads use."""


class ReadEngine:
    """Reads of the store of record, the archive and the session cache, for the façade."""

    def __init__(self, settings: ReadsConfig, stores: ReadsStores,
                 clock: Callable[[], datetime]) -> None:
        self.settings = settings
        self.stores = stores
        self.clock = clock

    def current(self, tenant: str, memory_id: str, with_embedding: bool = False
                ) -> MemoryRecord | None:
        """The live record, else the archived one (tier ``archive``), else None."""
        rec = self.stores.records.get(tenant, memory_id, with_embedding)
        if rec is not None:
            return rec
        archived = self.stores.archived_records(tenant, [memory_id])
        if not archived:
            return None
        return archived[0] if with_embedding else archived[0].model_copy(update={"embedding": None})

    def get(self, tenant: str, memory_id: str, with_embedding: bool = False,
            as_of: datetime | None = None) -> MemoryRecord:
        """:meth:`current`, or the memory as it was recorded at ``as_of``
        (:func:`timeline.record_at`); :class:`NotFoundError` saying why there is none."""
        if as_of is not None:
            current = self.current(tenant, memory_id, with_embedding)
            entries = timeline.back_links(
                memory_id, current, self.stores.records.history(tenant, memory_id),
                lambda rid: self.stores.records.history(tenant, rid))
            return timeline.record_at(memory_id, current, entries, as_of, with_embedding)
        rec = self.current(tenant, memory_id, with_embedding)
        if rec is not None:
            return rec
        gone = [e for e in self.stores.records.history(tenant, memory_id) if e.action == "delete"]
        if gone:
            raise NotFoundError(f"memory {memory_id} was deleted at {gone[-1].at.isoformat()}"
                                "; its history remains")
        raise NotFoundError(f"no memory {memory_id}")

    def history(self, tenant: str, memory_id: str) -> list[HistoryEntry]:
        """Every change to the memory, oldest first; :class:`NotFoundError` when it has none."""
        entries = self.stores.records.history(tenant, memory_id)
        if not entries:
            raise NotFoundError(f"no memory {memory_id}")
        first = entries[0]
        if first.action != "create" or "content" in (first.new or {}):
            return entries  # written with the record (by an older release)
        current = self.current(tenant, memory_id)
        if current is not None:
            state, before = timeline.snapshot(current), entries
        else:  # deleted: from the state its delete kept (none when erased)
            last = max(i for i, e in enumerate(entries) if e.action == "delete") \
                if any(e.action == "delete" for e in entries) else None
            if last is None or not entries[last].old:
                return entries
            state, before = dict(entries[last].old or {}), entries[:last]
        links = timeline.links_back(memory_id, current, entries,
                                    lambda rid: self.stores.records.history(tenant, rid))
        made = timeline.as_created(state, before, links)
        return [first.model_copy(update={"new": {**made, **(first.new or {})}}), *entries[1:]]

    def resolve_id(self, tenant: str, prefix: str) -> str:
        """The full id a short id names (:func:`ids.resolve`)."""
        return ids.resolve(self.stores.records, tenant, prefix)

    def session_window(self, scope: Scope, at: datetime) -> list[MemoryRecord]:
        """The session's last ``lifecycle.active_turns`` turns and ``active_tool_calls``
        tool calls unexpired at ``at`` (none said after it), oldest first."""
        cfg = self.settings.lifecycle
        active = self.stores.active
        turns = active.window(scope, MemoryType.DIALOGUE, cfg.active_turns, at)
        calls = [r for r in active.window(scope, MemoryType.TOOL_CALL, cfg.active_tool_calls, at)
                 if r.expires_at is None or r.expires_at > at]
        return sorted(turns + calls, key=lambda r: r.created_at)

    def page(self, sel: Selection, limit: int, after: str) -> list[MemoryRecord]:
        """Up to ``limit`` memories of ``sel`` by id, after the id ``after``."""
        return self.stores.records.select(sel, limit, after)

    def changes(self, tenant: str, since: int | None,
                types: Sequence[MemoryType] | None) -> MemoryChanges:
        """The change feed from ``since`` (None: its position alone)."""
        records = self.stores.records
        if since is None:
            return MemoryChanges(position=records.vector_seq())
        return records.memory_changes(tenant, since, types)

    def stats(self, tenant: str) -> dict[str, Any]:
        """Counts by type and tier, the embedding model, the home and its size on disk, and
        what decides supersession (``judge``: the learned judge's version, or the rules and
        why)."""
        from .judge import describe

        out = self.stores.records.stats(tenant)
        stored = self.stores.stored_model()
        out["embedder"] = {"model": stored[0], "dim": stored[1]} if stored else None
        home = self.settings.home
        out["home"] = str(home)
        out["disk_bytes"] = sum(f.stat().st_size for f in home.rglob("*") if f.is_file())
        u = self.settings.update
        # The store's model, else the configured one's name: no embedder is built for it.
        out["judge"] = describe(u.judge, u.judge_path,
                                stored[0] if stored else self.settings.embedder.name)
        return out

    def overview(self, tenant: str, days: int, recent: int, now: datetime,
                 schedule: list[JobSchedule]) -> Overview:
        """The tenant's counts, growth over ``days`` days to ``now``, latest additions and
        changes (``OVERVIEW_ACTIONS``), inbox and the lifecycle's ``schedule``."""
        records = self.stores.records
        stats = records.stats(tenant)
        cross: dict[str, dict[str, int]] = {}
        for (tier, kind), n in sorted(records.tier_type_counts(tenant).items()):
            cross.setdefault(tier, {})[kind] = n
        first = (now - timedelta(days=days - 1)).date()
        total, per_day = records.created_by_day(
            tenant, datetime.combine(first, time.min, tzinfo=timezone.utc))
        created = dict(per_day)
        growth = []
        for i in range(days):
            day = first + timedelta(days=i)
            total += created.get(day, 0)
            growth.append(DayCount(day=day, created=created.get(day, 0), total=total))
        return Overview(
            tenant=tenant, now=now, memories=stats["memories"] + stats["archived"],
            by_tier=stats["by_tier"], by_type=stats["by_type"], by_tier_type=cross,
            growth=growth, recent_adds=records.latest(tenant, recent),
            recent_changes=records.recent_history(tenant, OVERVIEW_ACTIONS, recent),
            inbox=records.inbox_counts(tenant), lifecycle=schedule)

    def index_stats(self) -> dict[str, Any]:
        """The vector index, opened and caught up: ``vectors`` (how many) and ``hnsw``."""
        self.stores.sync(persist=False)
        index = self.stores.vectors
        return {"vectors": len(index), "hnsw": index.uses_hnsw}

    def dim(self) -> int:
        """The configured embedder's dimension, checked against the stored vectors."""
        return self.stores.check_model()[1]
