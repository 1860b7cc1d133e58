"""The sessions job (SPEC TIER-1): a session idle for ``lifecycle.session_idle_minutes`` ends,
its active memories move to short-term."""

from __future__ import annotations

from datetime import datetime, timedelta

from ...model import Tier
from ...stores.base import Selection
from .base import LifecycleBase
from .reports import JobReport, PlannedChange, Run


def job_sessions(engine: LifecycleBase, now: datetime, tenant: str | None, run: Run) -> JobReport:
    job = JobReport(name="sessions")
    idle = now - timedelta(minutes=engine.cfg.session_idle_minutes)
    for s in engine.stores.records.sessions(tenant, open_only=True, idle_before=idle):
        moved = end_session(engine, run, s.tenant, s.session, now, "idle")
        job.counts["ended"] = job.counts.get("ended", 0) + 1
        job.counts["moved"] = job.counts.get("moved", 0) + moved
    return job


def end_session(engine: LifecycleBase, run: Run, tenant: str, session: str, now: datetime,
                reason: str) -> int:
    moved = 0
    sel = Selection(tiers=[Tier.ACTIVE], current_only=False, session=(tenant, session))
    for batch in engine.select(sel, run):
        moved += engine.plan_move(run, "sessions", "move", batch, Tier.SHORT_TERM, now,
                                  f"session {reason}")
    run.plan(PlannedChange(job="sessions", action="end_session", session=session,
                           tenant=tenant, reason=reason))
    if not run.dry:
        with engine.stores.transaction() as tx:
            tx.end_session(tenant, session, now, reason)
        engine.stores.active.drop(tenant, session)
    return moved
