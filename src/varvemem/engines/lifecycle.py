"""The lifecycle engine (SPEC TIER-1..5, UPD-3, UPD-8): sessions end, memories are re-scored,
promoted, abstracted into experiences and forgotten, each by a rule from ``settings.lifecycle``.

Every job works in transactions of ``lifecycle.batch_size`` memories and logs each change in
the history, so searches are never blocked for long and nothing moves without a trace. Every
rule is a function of the memories' state and the clock, so running a job twice at the same
time changes nothing the second time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ..errors import ArchiveError, LLMError, NotFoundError, ValidationError
from ..llm import ChatClient
from ..model import (
    Draft,
    HistoryAction,
    JobSchedule,
    MemoryRecord,
    MemoryType,
    Scope,
    Tier,
    VectorFilter,
    types_where,
)
from ..settings import Settings
from ..stores import Stores, StoreTx
from ..stores.base import Selection
from . import abstraction
from .timeline import snapshot
from .update import UpdateEngine, content_hash, orphans, record_change, reinstate

ACTOR = "lifecycle"
log = logging.getLogger("varvemem.llm")  # the abstraction's LLM fallback
_LIVE_TIERS = [t for t in Tier if t is not Tier.ARCHIVE]


@dataclass(frozen=True)
class _Node:
    """What abstraction's grouping knows of a candidate memory."""

    importance: float
    created_at: datetime
    links: list[str]  # associated, resolved and resolving memories
    tenant: str
    user: str | None
    session: str | None
    tier: str


class JobReport(BaseModel):
    """What one lifecycle job did."""

    name: str
    seconds: float = 0.0
    counts: dict[str, int] = Field(default_factory=dict)
    paths: dict[str, int] = Field(default_factory=dict)  # abstraction: extractive / llm
    created: list[str] = Field(default_factory=list)  # abstraction: new experience ids
    errors: list[str] = Field(default_factory=list)  # abstraction: why the LLM path failed


PlannedAction = Literal["move", "promote", "rescore", "end_session", "abstract", "reabstract",
                        "archive", "delete", "prune"]


class PlannedChange(BaseModel):
    """One change a job decided: made in a run, only listed in a dry run."""

    job: str
    action: PlannedAction
    memory_id: str | None = None  # None: a session's end, the inbox's pruning
    from_tier: str | None = None
    to_tier: str | None = None
    reason: str = ""
    session: str | None = None  # end_session
    tenant: str | None = None
    # abstract: the memories abstracted together (seed first); reabstract: the new sources
    group: list[str] = Field(default_factory=list)
    importance_from: float | None = None  # rescore
    importance_to: float | None = None
    count: int | None = None  # prune: how many inbox payloads


class ConsolidationReport(BaseModel):
    """A run of the lifecycle jobs: each job's counts, the tiers before and after and every
    change decided (``planned``). A dry run (``dry_run``) changed nothing: its counts,
    ``planned`` and ``tiers_after`` say what a run at the same time would do."""

    now: datetime
    dry_run: bool = False
    jobs: list[JobReport] = Field(default_factory=list)
    tiers_before: dict[str, int] = Field(default_factory=dict)
    tiers_after: dict[str, int] = Field(default_factory=dict)
    planned: list[PlannedChange] = Field(default_factory=list)
    seconds: float = 0.0

    def changed(self) -> int:
        """How many memories any job touched."""
        return sum(sum(j.counts.values()) for j in self.jobs)


@dataclass
class _Run:
    """One consolidation: the changes decided so far and, in a dry run, the state they would
    leave (``state``: the records as changed, ``gone``: archived or deleted), which the later
    jobs read instead of the store's."""

    dry: bool
    planned: list[PlannedChange] = dc_field(default_factory=list)
    state: dict[str, MemoryRecord] = dc_field(default_factory=dict)
    gone: set[str] = dc_field(default_factory=set)

    def plan(self, change: PlannedChange) -> None:
        self.planned.append(change)

    def changed(self, records: Sequence[MemoryRecord]) -> None:
        """Records as a dry run would leave them."""
        for r in records:
            self.state[r.memory_id] = r


class LifecycleEngine:
    """Runs the jobs over every tenant of a store."""

    def __init__(self, settings: Settings, stores: Stores, update: UpdateEngine,
                 clock: Callable[[], datetime], llm: ChatClient | None = None) -> None:
        self.settings = settings
        self.cfg = settings.lifecycle
        self.stores = stores
        self.update = update
        self.clock = clock
        self.llm = llm

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
        run = _Run(dry=dry_run)
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
        report.tiers_after = _tiers_after(report.tiers_before, run.planned) if dry_run \
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

    # -- helpers -------------------------------------------------------------------------------
    def _select(self, sel: Selection, run: _Run | None = None) -> Iterator[list[MemoryRecord]]:
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

    def _get(self, run: _Run, tenant: str, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The records of ``ids``, as ``run`` would leave them."""
        found = self.stores.records.get_many(tenant, ids)
        if run.dry:
            found = {i: run.state.get(i, r) for i, r in found.items() if i not in run.gone}
        return found

    @staticmethod
    def _log(tx: StoreTx, rec: MemoryRecord, action: HistoryAction, now: datetime, reason: str,
             old: dict[str, Any] | None, new: dict[str, Any] | None,
             actor: str = ACTOR) -> None:
        record_change(tx, rec, action, now, actor, reason, old, new)

    def _plan_move(self, run: _Run, job: str, action: PlannedAction,
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
        return self._move(records, tier, now, reason)

    def _move(self, records: list[MemoryRecord], tier: Tier, now: datetime, reason: str) -> int:
        with self.stores.transaction() as tx:
            for r in records:
                tx.update(r.model_copy(update={"tier": tier, "tier_since": now, "updated_at": now}),
                          fields=["tier", "tier_since", "updated_at"])
                self._log(tx, r, "move", now, reason, {"tier": r.tier.value},
                          {"tier": tier.value})
        self._synced()
        return len(records)

    def _synced(self) -> None:
        self.stores.sync(open_index=False)

    # -- sessions (TIER-1) ---------------------------------------------------------------------
    def _job_sessions(self, now: datetime, tenant: str | None, run: _Run) -> JobReport:
        job = JobReport(name="sessions")
        idle = now - timedelta(minutes=self.cfg.session_idle_minutes)
        for s in self.stores.records.sessions(tenant, open_only=True, idle_before=idle):
            moved = self._end_session(run, s.tenant, s.session, now, "idle")
            job.counts["ended"] = job.counts.get("ended", 0) + 1
            job.counts["moved"] = job.counts.get("moved", 0) + moved
        return job

    def end_session(self, tenant: str, session: str, now: datetime, reason: str) -> int:
        """End a session: its active memories move to short-term; returns how many moved."""
        return self._end_session(_Run(dry=False), tenant, session, now, reason)

    def _end_session(self, run: _Run, tenant: str, session: str, now: datetime,
                     reason: str) -> int:
        moved = 0
        sel = Selection(tiers=[Tier.ACTIVE], current_only=False, session=(tenant, session))
        for batch in self._select(sel, run):
            moved += self._plan_move(run, "sessions", "move", batch, Tier.SHORT_TERM, now,
                                     f"session {reason}")
        run.plan(PlannedChange(job="sessions", action="end_session", session=session,
                               tenant=tenant, reason=reason))
        if not run.dry:
            with self.stores.transaction() as tx:
                tx.end_session(tenant, session, now, reason)
            self.stores.active.drop(tenant, session)
        return moved

    # -- re-scoring ----------------------------------------------------------------------------
    def _job_rescore(self, now: datetime, tenant: str | None, run: _Run) -> JobReport:
        cfg, job = self.cfg, JobReport(name="rescore")
        ceiling, floor = cfg.importance_ceiling, cfg.importance_floor
        for batch in self._select(Selection(tenant=tenant, tiers=_LIVE_TIERS,
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
            self._rescore(run, job, "used", changes, now, ["importance", "scored_retrievals"])
        due = now - timedelta(days=cfg.decay_after_days)
        for batch in self._select(Selection(tenant=tenant, tiers=_LIVE_TIERS,
                                            exclude_types=[MemoryType.KNOWLEDGE],
                                            decay_due_before=due), run):
            changes = []
            for r in batch:
                imp = round(min(r.importance, max(floor, r.importance - cfg.decay_step)), 4)
                changes.append((r, r.model_copy(update={"importance": imp, "decayed_at": now}),
                                f"not used for {cfg.decay_after_days:g} days"))
            self._rescore(run, job, "decayed", changes, now, ["importance", "decayed_at"])
        return job

    def _rescore(self, run: _Run, job: JobReport, count: str,
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
        with self.stores.transaction() as tx:
            for old, new, reason in changes:
                tx.update(new, fields=fields)
                if new.importance != old.importance:
                    self._log(tx, old, "rescore", now, reason, {"importance": old.importance},
                              {"importance": new.importance})

    # -- promotion (TIER-1/2 -> TIER-3) --------------------------------------------------------
    def _job_promote(self, now: datetime, tenant: str | None, run: _Run) -> JobReport:
        job = JobReport(name="promote")
        sel = Selection(tenant=tenant, tiers=[Tier.ACTIVE, Tier.SHORT_TERM],
                        importance_above=self.cfg.promote_above)
        for batch in self._select(sel, run):
            n = self._plan_move(run, "promote", "promote", batch, Tier.MID_TERM, now,
                                f"importance above {self.cfg.promote_above:g}")
            job.counts["promoted"] = job.counts.get("promoted", 0) + n
        return job

    # -- abstraction (TIER-2/3 -> TIER-4) ------------------------------------------------------
    def _job_abstract(self, now: datetime, tenant: str | None, run: _Run) -> JobReport:
        cfg, job = self.cfg, JobReport(name="abstract")
        nodes: dict[str, _Node] = {}
        sessions: dict[tuple[str, str], list[str]] = {}
        resolvers: list[MemoryRecord] = []
        sel = Selection(tenant=tenant, tiers=[Tier.SHORT_TERM, Tier.MID_TERM],
                        types=list(types_where(lambda t: t.episode)), importance_above=cfg.promote_above,
                        not_abstracted=True)
        for batch in self._select(sel, run):
            for r in batch:
                # A failure and what resolved it (engines/outcome.py) belong together too.
                links = [*r.related_memory_ids, *r.metadata.get("resolves", []),
                         *r.metadata.get("resolved_by", [])]
                nodes[r.memory_id] = _Node(r.importance, r.created_at, links, r.scope.tenant,
                                           r.scope.user, r.scope.session, r.tier.value)
                if r.scope.session:
                    sessions.setdefault((r.scope.tenant, r.scope.session), []).append(
                        r.memory_id)
                if r.metadata.get("resolves"):
                    resolvers.append(r)
        # A fix for a problem already abstracted rebuilds that experience (it is not the seed
        # of a new one).
        used: set[str] = set()
        if cfg.reabstract_on_fix:
            for r in resolvers:
                rebuilt = self._reabstract(run, r, now, job.errors)
                if rebuilt:
                    used.add(r.memory_id)
                    job.counts["reabstracted"] = job.counts.get("reabstracted", 0) + len(rebuilt)

        def rank(i: str) -> tuple[float, datetime, str]:  # most important, then oldest, first
            return -nodes[i].importance, nodes[i].created_at, i

        groups: list[tuple[str, list[str]]] = []
        # Seeds by importance: each takes its eligible neighbours (associated, similar or from
        # the same session; most important first) of its tenant and, unless users share, of one
        # user (memories of no user join any). A seed above abstract_above stands on its own; a
        # weaker one needs company.
        for seed in sorted(nodes, key=rank):
            if seed in used:
                continue
            node = nodes[seed]
            near = set(node.links) | set(self._similar(seed, node.tenant)) | set(
                sessions.get((node.tenant, node.session), []) if node.session else [])
            group, owner = [seed], node.user
            for other in sorted((n for n in near if n in nodes and n not in used and n != seed
                                 and nodes[n].tenant == node.tenant), key=rank):
                if len(group) >= cfg.abstract_max_sources:
                    break
                user = nodes[other].user
                if user is not None and not cfg.abstract_across_users:
                    if owner not in (None, user):
                        continue
                    owner = user
                group.append(other)
            if not self.worth_abstracting([nodes[i] for i in group]):
                continue
            used.update(group)
            groups.append((node.tenant, group))
        for tenant_of, group in groups:
            for mid in group:
                run.plan(PlannedChange(
                    job="abstract", action="abstract", memory_id=mid, tenant=tenant_of,
                    from_tier=nodes[mid].tier, to_tier=nodes[mid].tier, group=group,
                    reason=f"abstracted with {len(group) - 1} other memories into an "
                           f"experience (seed {group[0]})"))
        if run.dry:
            job.counts["experiences"] = len(groups)
            job.counts["sources"] = sum(len(g) for _, g in groups)
            run.changed([r.model_copy(update={"metadata": {**r.metadata,
                                                           "experience_id": "(planned)"}})
                         for tenant_of, group in groups
                         for r in self._get(run, tenant_of, group).values()])
            return job
        # Written in chunks: one batched embedding and one linking transaction per chunk.
        size = self.settings.embedder.batch_size
        for i in range(0, len(groups), size):
            for exp_id, path, n in self._abstract(groups[i: i + size], now, job.errors):
                job.created.append(exp_id)
                job.paths[path] = job.paths.get(path, 0) + 1
                job.counts["experiences"] = job.counts.get("experiences", 0) + 1
                job.counts["sources"] = job.counts.get("sources", 0) + n
        return job

    def _similar(self, memory_id: str, tenant: str) -> list[str]:
        """Memories of the tenant at least ``lifecycle.abstract_similarity`` close to this one,
        nearest first (a failure and its fix are related, though rarely similar enough to be
        associated)."""
        vec = self.stores.vectors.vectors([memory_id]).get(memory_id)
        if vec is None:
            return []
        found = self.stores.vectors.search(vec, 4 * self.cfg.abstract_max_sources,
                                           VectorFilter(tenant=tenant))
        return [i for i, cos in found if cos >= self.cfg.abstract_similarity]

    def _text(self, records: list[MemoryRecord], errors: list[str] | None) -> tuple[str, str]:
        """``(path, text)`` of one experience from ``records``: the LLM's when configured,
        else (or when it fails, the error noted once in ``errors``) extractive."""
        if self.llm is not None and "abstract" in self.settings.llm.steps:
            try:
                return "llm", abstraction.llm_abstract(self.llm, records,
                                                       self.cfg.abstract_max_chars)
            except LLMError as exc:
                log.warning("abstraction falls back to extractive: %s", exc)
                if errors is not None and str(exc) not in errors:
                    errors.append(str(exc))
                return "extractive (llm failed)", abstraction.extractive(
                    records, self.cfg.abstract_max_chars, self.settings.update.importance_signals)
        return "extractive", abstraction.extractive(
            records, self.cfg.abstract_max_chars, self.settings.update.importance_signals)

    def _reabstract(self, run: _Run, fix: MemoryRecord, now: datetime,
                    errors: list[str]) -> list[str]:
        """Rebuild the experiences abstracted from the failures ``fix`` resolves
        (``metadata.resolves``, engines/outcome.py) without it: their sources and the fix make
        the new text, the experience keeps its id (history: the old text and why), and the fix
        is linked to it. Returns the experiences rebuilt."""
        tenant = fix.scope.tenant
        resolves = list(fix.metadata["resolves"])
        found_failures = self._get(run, tenant, resolves)
        failures = [found_failures[i] for i in resolves if i in found_failures]  # in its order
        exp_ids = list(dict.fromkeys(f.metadata["experience_id"] for f in failures
                                     if isinstance(f.metadata.get("experience_id"), str)))
        out = []
        max_related = self.settings.update.related_max
        for exp_id in exp_ids:
            exp = self._get(run, tenant, [exp_id]).get(exp_id)
            if exp is None or exp.valid_to is not None \
                    or exp.memory_type is not MemoryType.EXPERIENCE:
                continue
            ids = [i for i in exp.metadata.get("sources", []) if isinstance(i, str)]
            if fix.memory_id in ids:
                continue
            # The problem came first: when full, the newest source but the fix gives way.
            ids = [*ids[: self.cfg.abstract_max_sources - 1], fix.memory_id]
            found = self._get(run, tenant, ids)
            records = [found[i] for i in ids if i in found]
            # Another user's fix joins only where users share; an experience keeps its scope.
            shared = self.cfg.abstract_across_users
            if _owner(tenant, records, shared) != exp.scope or (
                    len(_users(records)) > 1 and not shared):
                continue
            ids = [r.memory_id for r in records]
            resolved = [f for f in fix.metadata["resolves"] if f in ids]
            run.plan(PlannedChange(job="abstract", action="reabstract", memory_id=exp_id,
                                   tenant=tenant, from_tier=exp.tier.value,
                                   to_tier=exp.tier.value, group=ids,
                                   reason=f"{fix.memory_id} resolves {', '.join(resolved)}"))
            if run.dry:
                run.changed([
                    exp.model_copy(update={"metadata": {**exp.metadata, "sources": ids}}),
                    fix.model_copy(update={"metadata": {**fix.metadata,
                                                        "experience_id": exp_id}})])
                out.append(exp_id)
                continue
            path, text = self._text(records, errors)
            self.update.edit(exp, {
                "content": text, "content_hash": content_hash(text),
                "importance": max([exp.importance, *(r.importance for r in records)]),
                "related_memory_ids": list(dict.fromkeys([fix.memory_id,
                                                          *exp.related_memory_ids]))[:max_related],
                "metadata": {**exp.metadata, "sources": ids, "users": _users(records),
                             "abstraction": path}},
                "abstract", f"re-abstracted: {fix.memory_id} resolves "
                            f"{', '.join(resolved)} ({path})", ACTOR)
            with self.stores.transaction() as tx:
                related = list(dict.fromkeys([exp_id, *fix.related_memory_ids]))[:max_related]
                tx.update(fix.model_copy(update={
                    "related_memory_ids": related,
                    "metadata": {**fix.metadata, "experience_id": exp_id}}),
                    fields=["related_memory_ids", "metadata"])
                self._log(tx, fix, "abstract", now, "the fix of an experience's problem",
                          None, {"experience_id": exp_id})
            out.append(exp_id)
        return out

    def worth_abstracting(self, group: Sequence[MemoryRecord | _Node]) -> bool:
        """A group makes an experience when its most important memory is above
        ``lifecycle.abstract_above`` (it stands on its own), else when it has at least
        ``lifecycle.cluster_min`` memories."""
        return bool(group) and (max(m.importance for m in group) > self.cfg.abstract_above
                                or len(group) >= self.cfg.cluster_min)

    def rebuild(self, groups: list[tuple[str, list[str]]], now: datetime) -> list[str]:
        """Make one experience of each ``(tenant, source ids)`` group (after an erasure took
        some of an experience's sources away); returns their ids."""
        return [exp_id for exp_id, _, _ in self._abstract(groups, now)]

    def _abstract(self, groups: list[tuple[str, list[str]]], now: datetime,
                  errors: list[str] | None = None) -> list[tuple[str, str, int]]:
        """One experience per group, linked both ways to its sources: ``(id, path, sources)``.
        Its ``metadata.sources`` names every memory it was built from (seed first, most
        important next), ``metadata.users`` their users, sorted (so an erasure finds it).
        Each distinct LLM failure (the group then abstracted extractively) goes to ``errors``."""
        drafts, sources, paths = [], [], []
        for tenant, ids in groups:
            found = self.stores.records.get_many(tenant, ids)
            records = [found[i] for i in ids if i in found]
            path, text = self._text(records, errors)
            tags = list(dict.fromkeys(t for r in sorted(records, key=lambda r: -r.importance)
                                      for t in r.tags))[:12]
            drafts.append(Draft(
                content=text, memory_type=MemoryType.EXPERIENCE, tier=Tier.LONG_TERM,
                scope=_owner(tenant, records, self.cfg.abstract_across_users),
                source="experience:consolidate",
                importance=max(r.importance for r in records), tags=tags,
                metadata={"sources": [r.memory_id for r in records],
                          "users": _users(records), "abstraction": path}, created_at=now))
            sources.append(records)
            paths.append(path)
        # A re-run after a crash between the two writes finds the same texts: the exact
        # duplicates are returned and linked, not made twice.
        results = self.update.add(drafts, actor=ACTOR, merge=False)
        max_related = self.settings.update.related_max
        out = []
        with self.stores.transaction() as tx:
            for res, records, path, (tenant, _) in zip(results, sources, paths, groups):
                ids = [r.memory_id for r in records]
                exp = self.stores.records.get(tenant, res.memory_id)
                if exp is not None:
                    related = list(dict.fromkeys([*ids, *exp.related_memory_ids]))[:max_related]
                    tx.update(exp.model_copy(update={"related_memory_ids": related}),
                              fields=["related_memory_ids"])
                    self._log(tx, exp, "abstract", now,
                              f"abstracted from {len(ids)} memories ({path})", None,
                              {"sources": ids})
                for r in records:
                    related = list(dict.fromkeys([res.memory_id, *r.related_memory_ids]))
                    tx.update(r.model_copy(update={
                        "related_memory_ids": related[:max_related],
                        "metadata": {**r.metadata, "experience_id": res.memory_id}}),
                        fields=["related_memory_ids", "metadata"])
                    self._log(tx, r, "abstract", now, "abstracted into an experience", None,
                              {"experience_id": res.memory_id})
                out.append((res.memory_id, path, len(records)))
        return out

    # -- forgetting (UPD-8) --------------------------------------------------------------------
    def _job_forget(self, now: datetime, tenant: str | None, run: _Run) -> JobReport:
        job = JobReport(name="forget")
        criteria: dict[Tier, list[tuple[str, Selection]]] = {}
        for tier, rule in self.cfg.tiers.items():
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
        for batch in self._select(every, run):
            by_reason: dict[tuple[str, PlannedAction], list[MemoryRecord]] = {}
            for r in batch:
                reason = next((why for why, sel in criteria.get(r.tier, ()) if sel.matches(r)),
                              None)
                if reason is None:  # the SQL's test and matches() disagree: leave it be
                    continue
                forget = self.cfg.tiers[r.tier].forget
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
                    self._delete(records, now, reason)
                else:
                    self.archive(records, now, reason)
        return job

    # -- the webhook inbox's retention --------------------------------------------------------
    def _job_inbox(self, now: datetime, tenant: str | None, run: _Run) -> JobReport:
        """Done events keep their row (a late redelivery is still known) but lose their payload
        after ``webhooks.keep_done_days``; pending and failed events keep theirs."""
        days = self.settings.webhooks.keep_done_days
        if days is None:
            return JobReport(name="inbox")
        before = now - timedelta(days=days)
        records = self.stores.records
        pruned = records.prunable_inbox(before, tenant) if run.dry \
            else records.prune_inbox(before, tenant)
        if pruned:
            run.plan(PlannedChange(job="inbox", action="prune", tenant=tenant, count=pruned,
                                   reason=f"done over {days:g} days ago"))
        return JobReport(name="inbox", counts={"payloads_dropped": pruned} if pruned else {})

    def _delete(self, records: list[MemoryRecord], now: datetime, reason: str) -> int:
        by_tenant: dict[str, dict[str, MemoryRecord]] = {}
        for r in records:
            by_tenant.setdefault(r.scope.tenant, {})[r.memory_id] = r
        orphaned = [o for tenant, gone in by_tenant.items()
                    for o in orphans(self.stores.records, tenant, gone)]
        with self.stores.transaction() as tx:
            for r in records:
                tx.delete(r.scope.tenant, r.memory_id)
                self._log(tx, r, "delete", now, f"forgotten: {reason}", snapshot(r), None)
            reinstate(tx, orphaned, now, ACTOR)
        self._synced()
        return len(records)

    # -- the archive (TIER-5) ------------------------------------------------------------------
    def archive(self, records: list[MemoryRecord], now: datetime, reason: str) -> int:
        """Move ``records`` to the archive: the object is written (durably) first, then one
        transaction removes them from the live store. If the archive cannot be written the
        memories stay where they are; if the transaction fails the object is an orphan that
        readers ignore."""
        by_tenant: dict[str, list[str]] = {}
        for r in records:
            by_tenant.setdefault(r.scope.tenant, []).append(r.memory_id)
        for tenant, ids in by_tenant.items():
            full = self.stores.records.get_many(tenant, ids, with_embedding=True)
            batch = [full[i] for i in ids if i in full]
            name = self.stores.archive.write(tenant, batch, now)
            try:
                with self.stores.transaction() as tx:
                    for r in batch:
                        tx.archive(tenant, r.memory_id, name, r.tier.value, now)
                        self._log(tx, r, "archive", now, f"forgotten: {reason}",
                                  {"tier": r.tier.value}, {"tier": Tier.ARCHIVE.value,
                                                           "object": name})
            except BaseException:
                self.stores.archive.delete(name)
                raise
        self._synced()
        return len(records)

    def delete_archived(self, records: Sequence[MemoryRecord], now: datetime,
                        reason: str, erase: bool = False) -> tuple[int, int]:
        """Delete archived memories (of one tenant) for good: each object holding one is
        rewritten without them (objects are immutable), the other records it held are pointed
        at the new object, the old one is removed. A crash in between leaves an orphan object,
        never a lost record. ``erase`` also drops their history's old contents. Returns how
        many were deleted, and how many history entries were erased."""
        if not records:
            return 0, 0
        purged = 0
        tenant = records[0].scope.tenant
        by_id = {r.memory_id: r for r in records}
        refs = self.stores.records.archived(tenant, list(by_id))
        if len(refs) < len(by_id):
            missing = sorted(set(by_id) - {r.memory_id for r in refs})
            raise NotFoundError(f"no memory {missing[0]}")
        all_refs = self.stores.records.archived(tenant)
        orphaned = orphans(self.stores.records, tenant, by_id)
        for old in sorted({r.object for r in refs}):
            others = [r for r in all_refs if r.object == old and r.memory_id not in by_id]
            gone = [r.memory_id for r in refs if r.object == old]
            keep_ids = {r.memory_id for r in others}
            keep = [r for r in self.stores.archive.read(old) if r.memory_id in keep_ids]
            new = self.stores.archive.write(tenant, keep, now) if keep else None
            from_tier = {r.memory_id: r.from_tier for r in others}
            with self.stores.transaction() as tx:
                for memory_id in gone:
                    tx.unarchive(tenant, memory_id)
                    if erase:
                        purged += tx.purge_history(tenant, memory_id)
                    self._log(tx, by_id[memory_id], "delete", now,
                              reason or "deleted from the archive",
                              None if erase else snapshot(by_id[memory_id]), None, actor="api")
                for r in keep:
                    assert new is not None
                    tx.archive(tenant, r.memory_id, new, from_tier[r.memory_id], now)
                reinstate(tx, [o for o in orphaned if o.record.superseded_by in gone], now,
                          "api")
            self.stores.archive.delete(old)
        return len(refs), purged

    def restore(self, tenant: str, memory_id: str, now: datetime) -> MemoryRecord:
        """Bring an archived memory back to the tier it left (short-term for a session turn),
        with a fresh retention period."""
        refs = self.stores.records.archived(tenant, [memory_id])
        if not refs:
            if self.stores.records.get(tenant, memory_id) is not None:
                raise ValidationError(f"memory {memory_id} is not archived")
            raise NotFoundError(f"no memory {memory_id}")
        ref = refs[0]
        found = [r for r in self.stores.archive.read(ref.object) if r.memory_id == memory_id]
        if not found or found[0].scope.tenant != tenant:
            raise ArchiveError(f"archive object {ref.object} does not hold memory {memory_id}")
        old = found[0]
        tier = Tier(ref.from_tier)
        tier = Tier.SHORT_TERM if tier in (Tier.ACTIVE, Tier.ARCHIVE) else tier
        expired = old.expires_at is not None and old.expires_at <= now
        rec = old.model_copy(update={"tier": tier, "tier_since": now, "updated_at": now,
                                     "embedding": None,
                                     "expires_at": None if expired else old.expires_at})
        successor = old.superseded_by
        if successor and not (self.stores.records.get(tenant, successor)
                              or self.stores.records.archived(tenant, [successor])):
            # Deleted while this one was away: nothing may name it as a replacement.
            rec.valid_to = rec.superseded_by = None
        vector = None if old.embedding is None else np.asarray(old.embedding, np.float32)
        with self.stores.transaction() as tx:
            tx.insert(rec, vector)
            tx.unarchive(tenant, memory_id)
            before: dict[str, Any] = {"tier": Tier.ARCHIVE.value}
            after: dict[str, Any] = {"tier": tier.value}
            why = f"restored from {ref.object}"
            if successor and rec.superseded_by is None:
                before.update(valid_to=old.valid_to and old.valid_to.isoformat(),
                              superseded_by=successor)
                after.update(valid_to=None, superseded_by=None)
                why += f"; its successor {successor} was deleted: current again"
            self._log(tx, rec, "restore", now, why, before, after)
        self._synced()
        return rec


def _owner(tenant: str, records: Sequence[MemoryRecord], shared: bool) -> Scope:
    """The scope of an experience from ``records``: the one user among them (memories of no
    user join any), or where users share (``shared``) the user they all have, else none (the
    tenant's); their agent where they share one."""
    users = _users(records) if not shared else list({r.scope.user for r in records})
    agents = {r.scope.agent for r in records}
    return Scope(tenant=tenant, user=users[0] if len(users) == 1 else None,
                 agent=agents.pop() if len(agents) == 1 else None)


def _users(records: Sequence[MemoryRecord]) -> list[str]:
    """The users whose memories an experience was built from, sorted."""
    return sorted({r.scope.user for r in records if r.scope.user is not None})


def _tiers_after(before: dict[str, int], planned: Sequence[PlannedChange]) -> dict[str, int]:
    """The tiers ``planned`` would leave: moves, archivings, deletions and new experiences."""
    out = dict(before)
    seeds = {c.group[0] for c in planned if c.action == "abstract"}
    for c in planned:
        if c.action in ("move", "promote", "archive", "delete") and c.from_tier:
            out[c.from_tier] = out.get(c.from_tier, 0) - 1
            if c.to_tier:
                out[c.to_tier] = out.get(c.to_tier, 0) + 1
    out[Tier.LONG_TERM.value] = out.get(Tier.LONG_TERM.value, 0) + len(seeds)
    return out


@dataclass(frozen=True)
class Job:
    """A lifecycle job: the method that runs it (with the clock's time, a tenant, None for
    all, and the run, which a dry run only plans) and the ``lifecycle`` key of its interval in
    minutes (``varvemem worker``)."""

    run: Callable[[LifecycleEngine, datetime, str | None, _Run], JobReport]
    every: str


# The jobs in the order they run.
JOB_TABLE: dict[str, Job] = {
    "sessions": Job(LifecycleEngine._job_sessions, "sessions_every_minutes"),
    "rescore": Job(LifecycleEngine._job_rescore, "rescore_every_minutes"),
    "promote": Job(LifecycleEngine._job_promote, "promote_every_minutes"),
    "abstract": Job(LifecycleEngine._job_abstract, "abstract_every_minutes"),
    "forget": Job(LifecycleEngine._job_forget, "forget_every_minutes"),
    "inbox": Job(LifecycleEngine._job_inbox, "inbox_every_minutes"),
}
JOBS = tuple(JOB_TABLE)
