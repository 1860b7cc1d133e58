"""The lifecycle engine: runs the jobs of ``JOB_TABLE`` (all or some, for real or dry), says
which are due, and the public operations the API and the erasure call (end a session,
archive, delete archived memories, restore, rebuild experiences)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timedelta

from ...errors import ValidationError
from ...model import JobSchedule, MemoryRecord, Tier
from . import abstract, archive, sessions
from .base import LifecycleBase
from .jobs import JOB_TABLE, JOBS
from .reports import ConsolidationReport, Run, tiers_after


class LifecycleEngine(LifecycleBase):
    """Runs the jobs over every tenant of a store."""

    # -- running -------------------------------------------------------------------------------
    def consolidate(self, jobs: list[str] | None = None, tenant: str | None = None,
                    dry_run: bool = False, at: datetime | None = None) -> ConsolidationReport:
        """Run ``jobs`` (default all, in order: sessions, rescore, promote, abstract, forget,
        inbox). Each job decides its changes batch by batch and applies them; in a
        ``dry_run`` it only lists them (``planned``), and the later jobs decide on the state
        the earlier ones would have left. ``at`` (dry runs): the time to decide as of, instead
        of the clock's now."""
        names = jobs or list(JOBS)
        unknown = sorted(set(names) - set(JOBS))
        if unknown:
            raise ValidationError(f"unknown lifecycle job(s) {unknown} (known: {list(JOBS)})")
        now = self.clock() if at is None else at
        started = time.perf_counter()
        run = Run(dry=dry_run)
        report = ConsolidationReport(now=now, dry_run=dry_run,
                                     tiers_before=self.tier_counts(tenant))
        for name in (j for j in JOBS if j in names):
            t0 = time.perf_counter()
            job = JOB_TABLE[name].run(self, now, tenant, run)
            job.seconds = round(time.perf_counter() - t0, 4)
            report.jobs.append(job)
            if tenant is None and not dry_run:  # a tenant's run leaves the others' schedule
                with self.stores.transaction() as tx:
                    tx.set_meta(f"lifecycle.{name}.last_run", now.isoformat())
        report.planned = run.planned
        report.tiers_after = tiers_after(report.tiers_before, run.planned) if dry_run \
            else self.tier_counts(tenant)
        report.seconds = round(time.perf_counter() - started, 4)
        return report

    def due(self) -> list[str]:
        """The jobs whose interval (``lifecycle.<job>_every_minutes``) has passed."""
        return [s.job for s in self.schedule() if s.due]

    def schedule(self) -> list[JobSchedule]:
        """Each job's last run, interval and next due time at the clock's now."""
        now = self.clock()
        out = []
        for name, job in JOB_TABLE.items():
            last = self.stores.records.get_meta(f"lifecycle.{name}.last_run")
            minutes = float(getattr(self.cfg, job.every))
            if last is None:
                out.append(JobSchedule(job=name, every_minutes=minutes))
                continue
            ran = datetime.fromisoformat(last)
            nxt = ran + timedelta(minutes=minutes)
            out.append(JobSchedule(job=name, every_minutes=minutes, last_run=ran, next_due=nxt,
                                   due=now >= nxt))
        return out

    def tier_counts(self, tenant: str | None) -> dict[str, int]:
        tenants = [tenant] if tenant else self.stores.records.tenants()
        out: dict[str, int] = {t.value: 0 for t in Tier}
        for t in tenants:
            for tier, n in self.stores.records.stats(t)["by_tier"].items():
                out[tier] = out.get(tier, 0) + n
        return out

    # -- sessions (TIER-1) ---------------------------------------------------------------------
    def end_session(self, tenant: str, session: str, now: datetime, reason: str) -> int:
        """End a session: its active memories move to short-term; returns how many moved."""
        return sessions.end_session(self, Run(dry=False), tenant, session, now, reason)

    # -- abstraction (TIER-2/3 -> TIER-4) ------------------------------------------------------
    def worth_abstracting(self, group: Sequence[MemoryRecord | abstract.Node]) -> bool:
        """Whether a group makes an experience (``abstract.worth_abstracting``)."""
        return abstract.worth_abstracting(self, group)

    def rebuild(self, groups: list[tuple[str, list[str]]], now: datetime) -> list[str]:
        """Make one experience of each ``(tenant, source ids)`` group (after an erasure took
        some of an experience's sources away); returns their ids."""
        return [exp_id for exp_id, _, _ in abstract.abstract(self, groups, now)]

    # -- the archive (TIER-5) ------------------------------------------------------------------
    def archive(self, records: list[MemoryRecord], now: datetime, reason: str) -> int:
        """Move ``records`` to the archive (``archive.archive``)."""
        return archive.archive(self, records, now, reason)

    def delete_archived(self, records: Sequence[MemoryRecord], now: datetime,
                        reason: str, erase: bool = False) -> tuple[int, int]:
        """Delete archived memories (of one tenant) for good (``archive.delete_archived``).
        Returns how many were deleted, and how many history entries were erased."""
        return archive.delete_archived(self, records, now, reason, erase)

    def restore(self, tenant: str, memory_id: str, now: datetime) -> MemoryRecord:
        """Bring an archived memory back to the tier it left (``archive.restore``)."""
        return archive.restore(self, tenant, memory_id, now)
