"""The forget job (UPD-8): a memory that meets one of its tier's criteria (``lifecycle.tiers``:
expired, too old, idle, unimportant) is archived or deleted."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ...model import MemoryRecord, Tier
from ...stores.base import Selection
from ..timeline import snapshot
from ..update import orphans, reinstate
from .archive import archive
from .base import ACTOR, LifecycleBase
from .reports import JobReport, PlannedAction, PlannedChange, Run


def job_forget(engine: LifecycleBase, now: datetime, tenant: str | None, run: Run) -> JobReport:
    job = JobReport(name="forget")
    criteria: dict[Tier, list[tuple[str, Selection]]] = {}
    for tier, rule in engine.cfg.tiers.items():
        if tier is Tier.ARCHIVE:
            continue
        # The walk below names the tenant; these only tell the tiers' criteria apart.
        base: dict[str, Any] = {"tiers": [tier], "current_only": False,
                                "exclude_types": list(rule.keep_types)}
        mine = criteria[tier] = [("expired", Selection(**base, expired_at=now))]
        if rule.max_age_days:
            mine.append((f"in {tier.value} for {rule.max_age_days:g} days", Selection(
                **base, in_tier_before=now - timedelta(days=rule.max_age_days))))
        if rule.idle_days:
            mine.append((f"not retrieved for {rule.idle_days:g} days", Selection(
                **base, idle_before=now - timedelta(days=rule.idle_days))))
        if rule.min_importance is not None:
            mine.append((f"importance below {rule.min_importance:g}", Selection(
                **base, importance_below=rule.min_importance,
                in_tier_before=now - timedelta(days=rule.min_importance_after_days))))
    if not criteria:
        return job
    # One walk over the tenant for every tier's criteria (each walk reads the whole
    # tenant's index range); a memory is forgotten for the first criterion it meets.
    every = Selection(tenant=tenant, current_only=False,
                      any_of=[sel for mine in criteria.values() for _, sel in mine])
    for batch in engine.select(every, run):
        by_reason: dict[tuple[str, PlannedAction], list[MemoryRecord]] = {}
        for r in batch:
            reason = next((why for why, sel in criteria.get(r.tier, ()) if sel.matches(r)),
                          None)
            if reason is None:  # the SQL's test and matches() disagree: leave it be
                continue
            forget = engine.cfg.tiers[r.tier].forget
            action: PlannedAction = "delete" if forget == "delete" else "archive"
            by_reason.setdefault((reason, action), []).append(r)
            run.plan(PlannedChange(
                job="forget", action=action, memory_id=r.memory_id,
                tenant=r.scope.tenant, from_tier=r.tier.value,
                to_tier=Tier.ARCHIVE.value if action == "archive" else None,
                reason=f"forgotten: {reason}"))
        for (reason, action), records in by_reason.items():
            count = "deleted" if action == "delete" else "archived"
            job.counts[count] = job.counts.get(count, 0) + len(records)
            if run.dry:
                run.gone.update(r.memory_id for r in records)
            elif action == "delete":
                delete(engine, records, now, reason)
            else:
                archive(engine, records, now, reason)
    return job


def delete(engine: LifecycleBase, records: list[MemoryRecord], now: datetime,
           reason: str) -> int:
    by_tenant: dict[str, dict[str, MemoryRecord]] = {}
    for r in records:
        by_tenant.setdefault(r.scope.tenant, {})[r.memory_id] = r
    orphaned = [o for tenant, gone in by_tenant.items()
                for o in orphans(engine.stores.records, tenant, gone)]
    with engine.stores.transaction() as tx:
        for r in records:
            tx.delete(r.scope.tenant, r.memory_id)
            engine.log(tx, r, "delete", now, f"forgotten: {reason}", snapshot(r), None)
        reinstate(tx, orphaned, now, ACTOR)
    engine.synced()
    return len(records)
