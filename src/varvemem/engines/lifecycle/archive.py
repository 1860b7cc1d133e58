"""The archive (TIER-5): forgotten memories are written to an archive object and leave the
live store; an archived memory can be deleted for good or restored to the tier it left."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ...errors import ArchiveError, NotFoundError, ValidationError
from ...model import MemoryRecord, Tier
from ..timeline import snapshot
from ..update import orphans, reinstate
from .base import LifecycleBase


def archive(engine: LifecycleBase, records: list[MemoryRecord], now: datetime,
            reason: str) -> int:
    """Move ``records`` to the archive: the object is written (durably) first, then one
    transaction removes them from the live store. If the archive cannot be written the
    memories stay where they are; if the transaction fails the object is an orphan that
    readers ignore."""
    by_tenant: dict[str, list[str]] = {}
    for r in records:
        by_tenant.setdefault(r.scope.tenant, []).append(r.memory_id)
    for tenant, ids in by_tenant.items():
        full = engine.stores.records.get_many(tenant, ids, with_embedding=True)
        batch = [full[i] for i in ids if i in full]
        name = engine.stores.archive.write(tenant, batch, now)
        try:
            with engine.stores.transaction() as tx:
                for r in batch:
                    tx.archive(tenant, r.memory_id, name, r.tier.value, now)
                    engine.log(tx, r, "archive", now, f"forgotten: {reason}",
                               {"tier": r.tier.value}, {"tier": Tier.ARCHIVE.value,
                                                        "object": name})
        except BaseException:
            engine.stores.archive.delete(name)
            raise
    engine.synced()
    return len(records)


def delete_archived(engine: LifecycleBase, records: Sequence[MemoryRecord], now: datetime,
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
    refs = engine.stores.records.archived(tenant, list(by_id))
    if len(refs) < len(by_id):
        missing = sorted(set(by_id) - {r.memory_id for r in refs})
        raise NotFoundError(f"no memory {missing[0]}")
    all_refs = engine.stores.records.archived(tenant)
    orphaned = orphans(engine.stores.records, tenant, by_id)
    for old in sorted({r.object for r in refs}):
        others = [r for r in all_refs if r.object == old and r.memory_id not in by_id]
        gone = [r.memory_id for r in refs if r.object == old]
        keep_ids = {r.memory_id for r in others}
        keep = [r for r in engine.stores.archive.read(old) if r.memory_id in keep_ids]
        new = engine.stores.archive.write(tenant, keep, now) if keep else None
        from_tier = {r.memory_id: r.from_tier for r in others}
        with engine.stores.transaction() as tx:
            for memory_id in gone:
                tx.unarchive(tenant, memory_id)
                if erase:
                    purged += tx.purge_history(tenant, memory_id)
                engine.log(tx, by_id[memory_id], "delete", now,
                           reason or "deleted from the archive",
                           None if erase else snapshot(by_id[memory_id]), None, actor="api")
            for r in keep:
                assert new is not None
                tx.archive(tenant, r.memory_id, new, from_tier[r.memory_id], now)
            reinstate(tx, [o for o in orphaned if o.record.superseded_by in gone], now,
                      "api")
        engine.stores.archive.delete(old)
    return len(refs), purged


def restore(engine: LifecycleBase, tenant: str, memory_id: str, now: datetime) -> MemoryRecord:
    """Bring an archived memory back to the tier it left (short-term for a session turn),
    with a fresh retention period."""
    refs = engine.stores.records.archived(tenant, [memory_id])
    if not refs:
        if engine.stores.records.get(tenant, memory_id) is not None:
            raise ValidationError(f"memory {memory_id} is not archived")
        raise NotFoundError(f"no memory {memory_id}")
    ref = refs[0]
    found = [r for r in engine.stores.archive.read(ref.object) if r.memory_id == memory_id]
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
    if successor and not (engine.stores.records.get(tenant, successor)
                          or engine.stores.records.archived(tenant, [successor])):
        # Deleted while this one was away: nothing may name it as a replacement.
        rec.valid_to = rec.superseded_by = None
    vector = None if old.embedding is None else np.asarray(old.embedding, np.float32)
    with engine.stores.transaction() as tx:
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
        engine.log(tx, rec, "restore", now, why, before, after)
    engine.synced()
    return rec
