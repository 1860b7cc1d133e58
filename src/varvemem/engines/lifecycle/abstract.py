"""The abstract job (TIER-2/3 -> TIER-4): groups of related episodes become one experience
(extractive, or the LLM's text), linked both ways to its sources; a fix for a problem already
abstracted rebuilds that experience (UPD-3)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ...errors import LLMError
from ...model import Draft, MemoryRecord, MemoryType, Scope, Tier, VectorFilter, types_where
from ...stores.base import Selection
from .. import abstraction
from ..update import content_hash
from .base import ACTOR, LifecycleBase
from .reports import JobReport, PlannedChange, Run

log = logging.getLogger("varvemem.llm")  # the abstraction's LLM fallback


@dataclass(frozen=True)
class Node:
    """What abstraction's grouping knows of a candidate memory."""

    importance: float
    created_at: datetime
    links: list[str]  # associated, resolved and resolving memories
    tenant: str
    user: str | None
    session: str | None
    tier: str


def job_abstract(engine: LifecycleBase, now: datetime, tenant: str | None, run: Run) -> JobReport:
    cfg, job = engine.cfg, JobReport(name="abstract")
    nodes: dict[str, Node] = {}
    sessions: dict[tuple[str, str], list[str]] = {}
    resolvers: list[MemoryRecord] = []
    sel = Selection(tenant=tenant, tiers=[Tier.SHORT_TERM, Tier.MID_TERM],
                    types=list(types_where(lambda t: t.episode)), importance_above=cfg.promote_above,
                    not_abstracted=True)
    for batch in engine.select(sel, run):
        for r in batch:
            # A failure and what resolved it (engines/update/outcome.py) belong together too.
            links = [*r.related_memory_ids, *r.metadata.get("resolves", []),
                     *r.metadata.get("resolved_by", [])]
            nodes[r.memory_id] = Node(r.importance, r.created_at, links, r.scope.tenant,
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
            rebuilt = reabstract(engine, run, r, now, job.errors)
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
        near = set(node.links) | set(similar(engine, seed, node.tenant)) | set(
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
        if not worth_abstracting(engine, [nodes[i] for i in group]):
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
                     for r in engine.get(run, tenant_of, group).values()])
        return job
    # Written in chunks: one batched embedding and one linking transaction per chunk.
    size = engine.settings.embedder.batch_size
    for i in range(0, len(groups), size):
        for exp_id, path, n in abstract(engine, groups[i: i + size], now, job.errors):
            job.created.append(exp_id)
            job.paths[path] = job.paths.get(path, 0) + 1
            job.counts["experiences"] = job.counts.get("experiences", 0) + 1
            job.counts["sources"] = job.counts.get("sources", 0) + n
    return job


def similar(engine: LifecycleBase, memory_id: str, tenant: str) -> list[str]:
    """Memories of the tenant at least ``lifecycle.abstract_similarity`` close to this one,
    nearest first (a failure and its fix are related, though rarely similar enough to be
    associated)."""
    vec = engine.stores.vectors.vectors([memory_id]).get(memory_id)
    if vec is None:
        return []
    found = engine.stores.vectors.search(vec, 4 * engine.cfg.abstract_max_sources,
                                         VectorFilter(tenant=tenant))
    return [i for i, cos in found if cos >= engine.cfg.abstract_similarity]


def experience_text(engine: LifecycleBase, records: list[MemoryRecord],
                    errors: list[str] | None) -> tuple[str, str]:
    """``(path, text)`` of one experience from ``records``: the LLM's when configured,
    else (or when it fails, the error noted once in ``errors``) extractive."""
    if engine.llm is not None and "abstract" in engine.settings.llm.steps:
        try:
            return "llm", abstraction.llm_abstract(engine.llm, records,
                                                   engine.cfg.abstract_max_chars)
        except LLMError as exc:
            log.warning("abstraction falls back to extractive: %s", exc)
            if errors is not None and str(exc) not in errors:
                errors.append(str(exc))
            return "extractive (llm failed)", abstraction.extractive(
                records, engine.cfg.abstract_max_chars, engine.settings.update.importance_signals)
    return "extractive", abstraction.extractive(
        records, engine.cfg.abstract_max_chars, engine.settings.update.importance_signals)


def reabstract(engine: LifecycleBase, run: Run, fix: MemoryRecord, now: datetime,
               errors: list[str]) -> list[str]:
    """Rebuild the experiences abstracted from the failures ``fix`` resolves
    (``metadata.resolves``, engines/update/outcome.py) without it: their sources and the fix make
    the new text, the experience keeps its id (history: the old text and why), and the fix
    is linked to it. Returns the experiences rebuilt."""
    tenant = fix.scope.tenant
    resolves = list(fix.metadata["resolves"])
    found_failures = engine.get(run, tenant, resolves)
    failures = [found_failures[i] for i in resolves if i in found_failures]  # in its order
    exp_ids = list(dict.fromkeys(f.metadata["experience_id"] for f in failures
                                 if isinstance(f.metadata.get("experience_id"), str)))
    out = []
    max_related = engine.settings.update.related_max
    for exp_id in exp_ids:
        exp = engine.get(run, tenant, [exp_id]).get(exp_id)
        if exp is None or exp.valid_to is not None \
                or exp.memory_type is not MemoryType.EXPERIENCE:
            continue
        ids = [i for i in exp.metadata.get("sources", []) if isinstance(i, str)]
        if fix.memory_id in ids:
            continue
        # The problem came first: when full, the newest source but the fix gives way.
        ids = [*ids[: engine.cfg.abstract_max_sources - 1], fix.memory_id]
        found = engine.get(run, tenant, ids)
        records = [found[i] for i in ids if i in found]
        # Another user's fix joins only where users share; an experience keeps its scope.
        shared = engine.cfg.abstract_across_users
        if owner_scope(tenant, records, shared) != exp.scope or (
                len(users_of(records)) > 1 and not shared):
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
        path, text = experience_text(engine, records, errors)
        engine.update.edit(exp, {
            "content": text, "content_hash": content_hash(text),
            "importance": max([exp.importance, *(r.importance for r in records)]),
            "related_memory_ids": list(dict.fromkeys([fix.memory_id,
                                                      *exp.related_memory_ids]))[:max_related],
            "metadata": {**exp.metadata, "sources": ids, "users": users_of(records),
                         "abstraction": path}},
            "abstract", f"re-abstracted: {fix.memory_id} resolves "
                        f"{', '.join(resolved)} ({path})", ACTOR)
        with engine.stores.transaction() as tx:
            related = list(dict.fromkeys([exp_id, *fix.related_memory_ids]))[:max_related]
            tx.update(fix.model_copy(update={
                "related_memory_ids": related,
                "metadata": {**fix.metadata, "experience_id": exp_id}}),
                fields=["related_memory_ids", "metadata"])
            engine.log(tx, fix, "abstract", now, "the fix of an experience's problem",
                       None, {"experience_id": exp_id})
        out.append(exp_id)
    return out


def worth_abstracting(engine: LifecycleBase, group: Sequence[MemoryRecord | Node]) -> bool:
    """A group makes an experience when its most important memory is above
    ``lifecycle.abstract_above`` (it stands on its own), else when it has at least
    ``lifecycle.cluster_min`` memories."""
    return bool(group) and (max(m.importance for m in group) > engine.cfg.abstract_above
                            or len(group) >= engine.cfg.cluster_min)


def abstract(engine: LifecycleBase, groups: list[tuple[str, list[str]]], now: datetime,
             errors: list[str] | None = None) -> list[tuple[str, str, int]]:
    """One experience per group, linked both ways to its sources: ``(id, path, sources)``.
    Its ``metadata.sources`` names every memory it was built from (seed first, most
    important next), ``metadata.users`` their users, sorted (so an erasure finds it).
    Each distinct LLM failure (the group then abstracted extractively) goes to ``errors``."""
    drafts, sources, paths = [], [], []
    for tenant, ids in groups:
        found = engine.stores.records.get_many(tenant, ids)
        records = [found[i] for i in ids if i in found]
        path, text = experience_text(engine, records, errors)
        tags = list(dict.fromkeys(t for r in sorted(records, key=lambda r: -r.importance)
                                  for t in r.tags))[:12]
        drafts.append(Draft(
            content=text, memory_type=MemoryType.EXPERIENCE, tier=Tier.LONG_TERM,
            scope=owner_scope(tenant, records, engine.cfg.abstract_across_users),
            source="experience:consolidate",
            importance=max(r.importance for r in records), tags=tags,
            metadata={"sources": [r.memory_id for r in records],
                      "users": users_of(records), "abstraction": path}, created_at=now))
        sources.append(records)
        paths.append(path)
    # A re-run after a crash between the two writes finds the same texts: the exact
    # duplicates are returned and linked, not made twice.
    results = engine.update.add(drafts, actor=ACTOR, merge=False)
    max_related = engine.settings.update.related_max
    out = []
    with engine.stores.transaction() as tx:
        for res, records, path, (tenant, _) in zip(results, sources, paths, groups):
            ids = [r.memory_id for r in records]
            exp = engine.stores.records.get(tenant, res.memory_id)
            if exp is not None:
                related = list(dict.fromkeys([*ids, *exp.related_memory_ids]))[:max_related]
                tx.update(exp.model_copy(update={"related_memory_ids": related}),
                          fields=["related_memory_ids"])
                engine.log(tx, exp, "abstract", now,
                           f"abstracted from {len(ids)} memories ({path})", None,
                           {"sources": ids})
            for r in records:
                related = list(dict.fromkeys([res.memory_id, *r.related_memory_ids]))
                tx.update(r.model_copy(update={
                    "related_memory_ids": related[:max_related],
                    "metadata": {**r.metadata, "experience_id": res.memory_id}}),
                    fields=["related_memory_ids", "metadata"])
                engine.log(tx, r, "abstract", now, "abstracted into an experience", None,
                           {"experience_id": res.memory_id})
            out.append((res.memory_id, path, len(records)))
    return out


def owner_scope(tenant: str, records: Sequence[MemoryRecord], shared: bool) -> Scope:
    """The scope of an experience from ``records``: the one user among them (memories of no
    user join any), or where users share (``shared``) the user they all have, else none (the
    tenant's); their agent where they share one."""
    users = users_of(records) if not shared else list({r.scope.user for r in records})
    agents = {r.scope.agent for r in records}
    return Scope(tenant=tenant, user=users[0] if len(users) == 1 else None,
                 agent=agents.pop() if len(agents) == 1 else None)


def users_of(records: Sequence[MemoryRecord]) -> list[str]:
    """The users whose memories an experience was built from, sorted."""
    return sorted({r.scope.user for r in records if r.scope.user is not None})
