"""The rescore job: a memory's importance rises with its new retrievals (up to
``lifecycle.importance_ceiling``) and decays when it goes unused (down to
``lifecycle.importance_floor``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from ...model import MemoryRecord, MemoryType
from ...stores.base import Selection
from .base import LIVE_TIERS, LifecycleBase
from .reports import JobReport, PlannedChange, Run


def job_rescore(engine: LifecycleBase, now: datetime, tenant: str | None, run: Run) -> JobReport:
    cfg, job = engine.cfg, JobReport(name="rescore")
    ceiling, floor = cfg.importance_ceiling, cfg.importance_floor
    for batch in engine.select(Selection(tenant=tenant, tiers=LIVE_TIERS,
                                         unscored_retrievals=True), run):
        changes = []
        for r in batch:
            uses = r.retrieval_count - r.scored_retrievals
            boost = min(cfg.use_max, cfg.use_step * uses)
            # Bounded, and never lowered by use: an importance set above the ceiling stays.
            imp = round(max(r.importance, min(ceiling, r.importance + boost)), 4)
            changes.append((r, r.model_copy(update={"importance": imp,
                                                    "scored_retrievals": r.retrieval_count}),
                            f"retrieved {uses} more time(s)"))
        rescore(engine, run, job, "used", changes, now, ["importance", "scored_retrievals"])
    due = now - timedelta(days=cfg.decay_after_days)
    for batch in engine.select(Selection(tenant=tenant, tiers=LIVE_TIERS,
                                         exclude_types=[MemoryType.KNOWLEDGE],
                                         decay_due_before=due), run):
        changes = []
        for r in batch:
            imp = round(min(r.importance, max(floor, r.importance - cfg.decay_step)), 4)
            changes.append((r, r.model_copy(update={"importance": imp, "decayed_at": now}),
                            f"not used for {cfg.decay_after_days:g} days"))
        rescore(engine, run, job, "decayed", changes, now, ["importance", "decayed_at"])
    return job


def rescore(engine: LifecycleBase, run: Run, job: JobReport, count: str,
            changes: list[tuple[MemoryRecord, MemoryRecord, str]], now: datetime,
            fields: list[str]) -> None:
    """Write one batch of re-scored records (their bookkeeping columns too; history where
    the importance changed), or in a dry run plan it."""
    for old, new, reason in changes:
        if new.importance != old.importance:
            run.plan(PlannedChange(job="rescore", action="rescore", memory_id=old.memory_id,
                                   tenant=old.scope.tenant, from_tier=old.tier.value,
                                   to_tier=old.tier.value, reason=reason,
                                   importance_from=old.importance,
                                   importance_to=new.importance))
            job.counts[count] = job.counts.get(count, 0) + 1
    if run.dry:
        run.changed([new for _, new, _ in changes])
        return
    with engine.stores.transaction() as tx:
        for old, new, reason in changes:
            tx.update(new, fields=fields)
            if new.importance != old.importance:
                engine.log(tx, old, "rescore", now, reason, {"importance": old.importance},
                           {"importance": new.importance})
