"""What every lifecycle job works with: the engine's settings, stores and clock, and the batch
helpers the jobs share (select memories batch by batch as a run would leave them, move them
between tiers, log each change in the history)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any, Protocol

from ...llm import ChatClient
from ...model import HistoryAction, MemoryRecord, Tier
from ...settings import views
from ...stores import StoreTx, parts
from ...stores.base import Selection
from ..update import UpdateEngine, record_change
from .reports import PlannedAction, PlannedChange, Run

ACTOR = "lifecycle"
LIVE_TIERS = [t for t in Tier if t is not Tier.ARCHIVE]


class LifecycleConfig(views.Lifecycle, views.Update, views.Embedder, views.Llm, views.Webhooks,
                      Protocol):
    """The settings sections the lifecycle jobs read."""


class LifecycleStores(parts.Records, parts.Vectors, parts.Archived, parts.Caches, Protocol):
    """The stores the lifecycle jobs use."""


class LifecycleBase:
    """The state of the lifecycle engine and the helpers its jobs share."""

    def __init__(self, settings: LifecycleConfig, stores: LifecycleStores, update: UpdateEngine,
                 clock: Callable[[], datetime], llm: ChatClient | None = None) -> None:
        self.settings = settings
        self.cfg = settings.lifecycle
        self.stores = stores
        self.update = update
        self.clock = clock
        self.llm = llm

    # -- helpers -------------------------------------------------------------------------------
    def select(self, sel: Selection, run: Run | None = None) -> Iterator[list[MemoryRecord]]:
        """Batches of matching memories, by id; a batch may be changed before the next is read.
        In a dry run, as ``run``'s changes would leave them: a changed record is tested again
        (``Selection.matches``), one the store did not select but now matches comes last."""
        after = ""
        seen: set[str] = set()
        dry = run is not None and run.dry and bool(run.state or run.gone)
        while batch := self.stores.records.select(sel, self.cfg.batch_size, after):
            after = batch[-1].memory_id
            if dry:
                assert run is not None
                seen.update(r.memory_id for r in batch)
                batch = [r for r in (run.state.get(r.memory_id, r) for r in batch)
                         if r.memory_id not in run.gone and sel.matches(r)]
                if not batch:
                    continue
            yield batch
        if dry:
            assert run is not None
            extra = [r for mid, r in sorted(run.state.items())
                     if mid not in seen and mid not in run.gone and sel.matches(r)]
            for i in range(0, len(extra), self.cfg.batch_size):
                yield extra[i: i + self.cfg.batch_size]

    def get(self, run: Run, tenant: str, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The records of ``ids``, as ``run`` would leave them."""
        found = self.stores.records.get_many(tenant, ids)
        if run.dry:
            found = {i: run.state.get(i, r) for i, r in found.items() if i not in run.gone}
        return found

    @staticmethod
    def log(tx: StoreTx, rec: MemoryRecord, action: HistoryAction, now: datetime, reason: str,
            old: dict[str, Any] | None, new: dict[str, Any] | None,
            actor: str = ACTOR) -> None:
        record_change(tx, rec, action, now, actor, reason, old, new)

    def plan_move(self, run: Run, job: str, action: PlannedAction,
                  records: list[MemoryRecord], tier: Tier, now: datetime, reason: str) -> int:
        """Move ``records`` to ``tier`` (in a dry run, plan it)."""
        for r in records:
            run.plan(PlannedChange(job=job, action=action, memory_id=r.memory_id,
                                   tenant=r.scope.tenant, from_tier=r.tier.value,
                                   to_tier=tier.value, reason=reason))
        if run.dry:
            run.changed([r.model_copy(update={"tier": tier, "tier_since": now, "updated_at": now})
                         for r in records])
            return len(records)
        return self.move(records, tier, now, reason)

    def move(self, records: list[MemoryRecord], tier: Tier, now: datetime, reason: str) -> int:
        with self.stores.transaction() as tx:
            for r in records:
                tx.update(r.model_copy(update={"tier": tier, "tier_since": now, "updated_at": now}),
                          fields=["tier", "tier_since", "updated_at"])
                self.log(tx, r, "move", now, reason, {"tier": r.tier.value},
                         {"tier": tier.value})
        self.synced()
        return len(records)

    def synced(self) -> None:
        self.stores.sync(open_index=False)
