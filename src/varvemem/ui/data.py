"""What the pages read, each one function of a ``Memory`` (run on its worker thread):
``Memory.overview``, ``Memory.why_not``, ``mem.qa.report`` and ``consolidate(dry_run=True)``,
in the pages' terms."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

from ..api import Memory
from ..engines.faq import QaStatus
from ..engines.lifecycle import ConsolidationReport
from ..model import JobSchedule, MemoryRecord, WhyNot
from ..settings import Weights

# The components a weighted profile weighs, one per weight (settings.Weights).
COMPONENTS = tuple(Weights.model_fields)


@dataclass
class Change:
    """A recent supersession, merge, deletion or archiving."""

    memory_id: str
    action: str
    at: datetime
    reason: str = ""
    other: str | None = None  # the replacing (or merged-into) memory


@dataclass
class OverviewView:
    by_tier: dict[str, int]
    by_type: dict[str, int]
    growth: list[tuple[date, int, int]]  # (day, created, total)
    recent_adds: list[MemoryRecord]
    recent_changes: list[Change]
    inbox: dict[str, int]
    lifecycle: list[JobSchedule]
    total: int


def overview(m: Memory, tenant: str, days: int = 30, recent: int = 10) -> OverviewView:
    """Counts by tier and type, growth by day, recent adds and changes, inbox and lifecycle."""
    ov = m.overview(tenant=tenant, days=days, recent=recent)
    changes = []
    for e in ov.recent_changes:
        new = e.new or {}
        other = new.get("superseded_by") or new.get("merged_into")
        changes.append(Change(e.memory_id, e.action, e.at, e.reason,
                              other if isinstance(other, str) else None))
    return OverviewView(by_tier={t: n for t, n in ov.by_tier.items() if n},
                        by_type={t: n for t, n in ov.by_type.items() if n},
                        growth=[(g.day, g.created, g.total) for g in ov.growth],
                        recent_adds=ov.recent_adds, recent_changes=changes, inbox=ov.inbox,
                        lifecycle=ov.lifecycle, total=ov.memories)


def schedule(m: Memory, tenant: str) -> tuple[list[JobSchedule], datetime]:
    """The lifecycle jobs' schedule and the memory's clock."""
    now = m.clock()
    return m.schedule(), now if now.tzinfo else now.replace(tzinfo=timezone.utc)


def why_not(m: Memory, memory_id: str, query: str, tenant: str,
            filters: dict[str, Any]) -> WhyNot:
    return m.why_not(memory_id, query, tenant=tenant, **filters)


def qa_report(m: Memory, tenant: str) -> list[QaStatus]:
    """Every current pair with its TTL weight today, hits and feedback."""
    return m.qa.report(tenant=tenant)


def plan(m: Memory, jobs: list[str] | None, tenant: str,
         at: datetime | None = None) -> ConsolidationReport:
    """What a run of the lifecycle jobs would change for the tenant, now or at ``at``
    (changes nothing)."""
    return m.consolidate(jobs, tenant=tenant, dry_run=True, at=at)
