"""The promote job (TIER-1/2 -> TIER-3): active and short-term memories above
``lifecycle.promote_above`` move to mid-term."""

from __future__ import annotations

from datetime import datetime

from ...model import Tier
from ...stores.base import Selection
from .base import LifecycleBase
from .reports import JobReport, Run


def job_promote(engine: LifecycleBase, now: datetime, tenant: str | None, run: Run) -> JobReport:
    job = JobReport(name="promote")
    sel = Selection(tenant=tenant, tiers=[Tier.ACTIVE, Tier.SHORT_TERM],
                    importance_above=engine.cfg.promote_above)
    for batch in engine.select(sel, run):
        n = engine.plan_move(run, "promote", "promote", batch, Tier.MID_TERM, now,
                             f"importance above {engine.cfg.promote_above:g}")
        job.counts["promoted"] = job.counts.get("promoted", 0) + n
    return job
