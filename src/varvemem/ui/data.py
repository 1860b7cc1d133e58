"""What the pages read, each behind one function of a ``Memory`` (run on its worker thread).

Where the library has the call (``Memory.overview``, ``Memory.why_not``, ``mem.qa.report``,
``consolidate(dry_run=True)``) it is used; where it does not yet, the nearest thing is built
from the public API here, so the swap is one place.
"""

from __future__ import annotations

import inspect
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from ..api import Memory
from ..model import MemoryRecord, ScoreBreakdown, Tier
from ..settings import TOP_K_MAX

COMPONENTS = ("semantic", "keyword", "tag", "recency", "importance", "reliability")
OVERVIEW_SCAN = 20_000  # memories read to draw the growth chart when the library has no overview


@dataclass
class Change:
    memory_id: str
    action: str
    at: datetime
    reason: str = ""
    other: str | None = None  # the replacing memory, for a supersession


@dataclass
class JobState:
    name: str
    every_minutes: float
    last_run: datetime | None
    next_due: datetime | None
    due: bool


@dataclass
class OverviewView:
    by_tier: dict[str, int]
    by_type: dict[str, int]
    growth: list[tuple[date, int, int]]
    recent_adds: list[MemoryRecord]
    recent_changes: list[Change]
    inbox: dict[str, int]
    lifecycle: list[JobState]
    total: int = 0


def _attr(obj: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return default


def overview(m: Memory, tenant: str, days: int = 30, recent: int = 10) -> OverviewView:
    """Counts by tier and type, growth by day, recent adds and changes, inbox and lifecycle."""
    if hasattr(m, "overview"):
        return _from_library(m.overview(tenant=tenant, days=days, recent=recent))
    stats = m.stats(tenant=tenant)
    records: list[MemoryRecord] = []
    after = ""
    while len(records) < OVERVIEW_SCAN:
        page = m.get_all(tenant=tenant, include_superseded=True, limit=1000, after=after)
        records += page
        if len(page) < 1000:
            break
        after = page[-1].memory_id
    now = m.clock()
    start = (now - timedelta(days=days - 1)).date()
    per_day = Counter(r.created_at.date() for r in records)
    total = sum(n for d, n in per_day.items() if d < start)
    growth = []
    for i in range(days):
        d = start + timedelta(days=i)
        total += per_day.get(d, 0)
        growth.append((d, per_day.get(d, 0), total))
    adds = sorted(records, key=lambda r: r.created_at, reverse=True)[:recent]
    changes = sorted((Change(r.memory_id, "supersede", r.valid_to or r.updated_at,
                             other=r.superseded_by)
                      for r in records if r.superseded_by), key=lambda c: c.at,
                     reverse=True)[:recent]
    return OverviewView(by_tier={t.value: n for t in Tier
                                 if (n := m.tier_counts(tenant=tenant).get(t.value, 0))},
                        by_type=dict(stats.get("by_type", {})), growth=growth,
                        recent_adds=adds, recent_changes=changes,
                        inbox=m.inbox.counts(tenant=tenant), lifecycle=_jobs(m),
                        total=int(stats.get("memories", len(records))))


def _jobs(m: Memory) -> list[JobState]:
    cfg = m.settings.lifecycle
    due = set(m.due_jobs())
    names = ("sessions", "rescore", "promote", "abstract", "forget", "inbox")
    return [JobState(n, getattr(cfg, f"{n}_every_minutes"), None, None, n in due) for n in names]


def _from_library(ov: Any) -> OverviewView:
    """The library's ``Overview`` in the page's terms."""
    growth = [(g[0] if isinstance(g[0], date) else date.fromisoformat(str(g[0])[:10]),
               int(g[1]), int(g[2])) if isinstance(g, (tuple, list))
              else (_attr(g, "day"), int(_attr(g, "created", default=0)),
                    int(_attr(g, "cumulative", "total", default=0)))
              for g in _attr(ov, "growth", default=[])]
    changes = []
    for e in _attr(ov, "recent_changes", default=[]):
        new = _attr(e, "new") or {}
        changes.append(Change(_attr(e, "memory_id"), str(_attr(e, "action")), _attr(e, "at"),
                              _attr(e, "reason", default="") or "",
                              new.get("superseded_by") if isinstance(new, dict) else None))
    jobs = []
    for j in _attr(ov, "lifecycle", default=[]):
        jobs.append(JobState(_attr(j, "name", "job"), float(_attr(j, "every_minutes", default=0)),
                             _attr(j, "last_run"), _attr(j, "next_due"),
                             bool(_attr(j, "due", default=False))))
    by_tier = dict(_attr(ov, "by_tier", "tiers", default={}))
    return OverviewView(by_tier=by_tier, by_type=dict(_attr(ov, "by_type", "types", default={})),
                        growth=growth, recent_adds=list(_attr(ov, "recent_adds", default=[])),
                        recent_changes=changes, inbox=dict(_attr(ov, "inbox", default={})),
                        lifecycle=jobs,
                        total=int(_attr(ov, "total", default=sum(by_tier.values()))))


# -- why not -----------------------------------------------------------------------------------
@dataclass
class Returned:
    memory_id: str
    score: float
    scores: ScoreBreakdown


@dataclass
class WhyNotView:
    """Why a memory is not among a search's hits (the library's ``WhyNot`` fields)."""

    memory_id: str
    verdict: str
    reason: str
    rule: str | None = None
    superseded_by: str | None = None
    chain: list[str] = field(default_factory=list)
    rank: int | None = None
    score: float | None = None
    scores: ScoreBreakdown | None = None
    last_returned: Returned | None = None
    weights: dict[str, float] = field(default_factory=dict)
    floor: float | None = None
    channels: list[str] = field(default_factory=list)


def why_not(m: Memory, memory_id: str, query: str, tenant: str,
            filters: dict[str, Any]) -> Any:
    """The library's ``why_not`` when it has one, else :func:`_why_not_here`."""
    if hasattr(m, "why_not"):
        return m.why_not(memory_id, query, tenant=tenant, **filters)
    return _why_not_here(m, memory_id, query, tenant, filters)


def _why_not_here(m: Memory, memory_id: str, query: str, tenant: str,
                  filters: dict[str, Any]) -> WhyNotView:
    rec = m.get(memory_id, tenant=tenant)
    memory_id = rec.memory_id
    profile = m.settings.profile(filters.get("profile"))
    weights = profile.weights.model_dump()
    out = WhyNotView(memory_id, "not_retrieved", "", weights=weights,
                     floor=m.settings.retrieval.relevance_floor)
    chain: list[str] = []
    nxt = rec.superseded_by
    while nxt and len(chain) < 20:
        chain.append(nxt)
        try:
            nxt = m.get(nxt, tenant=tenant).superseded_by
        except Exception:  # a deleted successor ends the chain
            break
    now = m.clock()
    as_of = filters.get("as_of")

    def verdict(v: str, reason: str, rule: str | None = None) -> WhyNotView:
        out.verdict, out.reason, out.rule = v, reason, rule
        return out

    if rec.tier is Tier.ARCHIVE and not filters.get("include_archive"):
        return verdict("archived", "it is archived; the search did not include the archive",
                       "include_archive")
    if rec.superseded_by and not filters.get("include_superseded") and as_of is None:
        out.superseded_by, out.chain = rec.superseded_by, chain
        return verdict("superseded", f"it was superseded by {rec.superseded_by}",
                       "include_superseded")
    if rec.expires_at is not None and rec.expires_at <= now:
        return verdict("expired", f"it expired at {rec.expires_at:%Y-%m-%d %H:%M}", "ttl")
    types: list[str] = filters.get("type") or []
    tiers: list[str] = filters.get("tier") or []
    checks: list[tuple[bool, str, str]] = [
        (bool(types) and rec.memory_type.value not in types, "type",
         f"its type {rec.memory_type.value} is not among {', '.join(types)}"),
        (bool(tiers) and rec.tier.value not in tiers, "tier",
         f"its tier {rec.tier.value} is not among {', '.join(tiers)}"),
        (bool(filters.get("tags")) and not set(filters["tags"]) & set(rec.tags), "tags",
         f"it carries none of the tags {', '.join(filters.get('tags') or [])}"),
    ]
    for name in ("user", "agent", "session"):
        want = filters.get(name)
        checks.append((want is not None and getattr(rec.scope, name) != want, name,
                       f"its {name} is {getattr(rec.scope, name)!r}, not {want!r}"))
    since, until = filters.get("since"), filters.get("until")
    checks += [(since is not None and rec.created_at < since, "since",
                f"it was created {rec.created_at:%Y-%m-%d %H:%M}, before since"),
               (until is not None and rec.created_at >= until, "until",
                f"it was created {rec.created_at:%Y-%m-%d %H:%M}, after until"),
               (as_of is not None and (rec.valid_from > as_of or (
                   rec.valid_to is not None and rec.valid_to <= as_of)), "as_of",
                "it was not valid at as_of")]
    for failed, rule, reason in checks:
        if failed:
            return verdict("filtered", f"the {rule} filter leaves it out: {reason}", rule)
    top_k = filters.get("top_k") or m.settings.retrieval.top_k
    wide = {k: v for k, v in filters.items() if k != "top_k"}
    hits = m.search(query, top_k=TOP_K_MAX, tenant=tenant, **wide)
    shown = hits[:top_k]
    if shown:
        out.last_returned = Returned(shown[-1].memory.memory_id, shown[-1].score,
                                     shown[-1].scores)
    for rank, hit in enumerate(hits, 1):
        if hit.memory.memory_id == memory_id:
            out.rank, out.score, out.scores, out.channels = rank, hit.score, hit.scores, \
                hit.channels
            if rank <= top_k:
                return verdict("returned", f"it is returned, at rank {rank}")
            return verdict("ranked_out", f"it ranks {rank}, below the {top_k} hits returned",
                           "top_k")
    if not hits:
        return verdict("below_floor", "no memory reached the relevance floor for this query",
                       "relevance_floor")
    return verdict("not_retrieved", "no channel (vector, keyword, tag) found it among its "
                                    "candidates for this query")


# -- Q&A ---------------------------------------------------------------------------------------
@dataclass
class QaRow:
    memory: MemoryRecord
    weight_today: float | None = None
    hits: int = 0
    helpful: int | None = None
    unhelpful: int | None = None


def qa_report(m: Memory, tenant: str) -> list[QaRow]:
    """Every current pair with its use; ``mem.qa.report`` when the library has it."""
    report = getattr(m.qa, "report", None)
    if report is None:
        return [QaRow(r, None, r.retrieval_count) for r in m.qa.all(tenant=tenant)]
    rows = []
    for s in report(tenant=tenant):
        rec = _attr(s, "memory", "record")
        if rec is None:
            rec = m.get(_attr(s, "memory_id"), tenant=tenant)
        rows.append(QaRow(rec, _attr(s, "weight_today"), int(_attr(s, "hits", default=0) or 0),
                          _attr(s, "helpful"), _attr(s, "unhelpful")))
    return rows


# -- lifecycle ---------------------------------------------------------------------------------
def can_plan(m: Memory) -> bool:
    return "dry_run" in inspect.signature(m.consolidate).parameters


def plan(m: Memory, jobs: list[str] | None, tenant: str) -> Any:
    """A dry run of the lifecycle jobs for the tenant (``None``: the library cannot yet)."""
    if not can_plan(m):
        return None
    return m.consolidate(jobs, tenant=tenant, dry_run=True)  # type: ignore[call-arg]
