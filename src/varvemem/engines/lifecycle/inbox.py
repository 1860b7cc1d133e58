"""The inbox job: the webhook inbox's retention (done events lose their payload after
``webhooks.keep_done_days``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from .base import LifecycleBase
from .reports import JobReport, PlannedChange, Run


def job_inbox(engine: LifecycleBase, now: datetime, tenant: str | None, run: Run) -> JobReport:
    """Done events keep their row (a late redelivery is still known) but lose their payload
    after ``webhooks.keep_done_days``; pending and failed events keep theirs."""
    days = engine.settings.webhooks.keep_done_days
    if days is None:
        return JobReport(name="inbox")
    before = now - timedelta(days=days)
    records = engine.stores.records
    pruned = records.prunable_inbox(before, tenant) if run.dry \
        else records.prune_inbox(before, tenant)
    if pruned:
        run.plan(PlannedChange(job="inbox", action="prune", tenant=tenant, count=pruned,
                               reason=f"done over {days:g} days ago"))
    return JobReport(name="inbox", counts={"payloads_dropped": pruned} if pruned else {})
