"""consolidate(dry_run=True): lists exactly what the run then does, and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Clock, stores_of

from varvemem import Memory, PlannedChange, ValidationError


def fill(mem: Memory, clock: Clock) -> dict[str, str]:
    """Memories in English and Chinese that every job has something to do with."""
    ids: dict[str, str] = {}
    # A session of related turns, important enough to be promoted and abstracted once ended.
    for i, text in enumerate([
            "The deploy of order-svc failed: ImagePullBackOff on the regcred secret",
            "订单服务部署失败，镜像拉取凭证 regcred 不在 order 命名空间",
            "Fixed it: copied the regcred secret into namespace order and redeployed"]):
        ids[f"turn{i}"] = mem.add(text, type="dialogue", session="s1", importance=0.6).memory_id
    ids["chat"] = mem.add("好的，谢谢", type="dialogue", session="s2", importance=0.2).memory_id
    # Short-term memories: one to be forgotten for its age, one raised by use past the
    # promotion threshold (re-scoring, then promotion, in the same run).
    ids["old"] = mem.add("the cafeteria closes early on Friday", type="dialogue",
                         importance=0.3).memory_id
    ids["used"] = mem.add("支付流水线的缓存键包含流水线序号", type="dialogue",
                          importance=0.49).memory_id
    ids["fact"] = mem.add("The staging cluster is eks-stg-2", type="knowledge").memory_id
    ids["tool"] = mem.add_tool_call("kubectl_get", {"ns": "prod"}, "3 pods running",
                                    session="s3").memory_id
    for _ in range(3):
        assert any(h.memory.memory_id == ids["used"]
                   for h in mem.search("支付流水线的缓存键", top_k=3))
    return ids


def snapshot(mem: Memory) -> dict[str, Any]:
    """Everything a dry run must leave as it was."""
    records = mem.get_all(include_superseded=True, limit=10_000)
    stats = {k: v for k, v in mem.stats().items() if k != "disk_bytes"}
    archived = {mid for mid in stats_ids(mem) if mid not in {r.memory_id for r in records}}
    return {"records": [r.model_dump() for r in records],
            "history": {mid: [e.model_dump() for e in mem.history(mid)]
                        for mid in stats_ids(mem)},
            "archived": sorted(archived), "stats": stats, "due": mem.due_jobs(),
            "schedule": [j.model_dump() for j in mem.overview().lifecycle],
            "window": [r.memory_id for s in ("s1", "s2", "s3") for r in mem.session_window(s)],
            "vectors": mem.index_stats()}


def stats_ids(mem: Memory) -> list[str]:
    stores = stores_of(mem)
    live = [r.memory_id for r in stores.records.iter_records("default")]
    return sorted(live + [a.memory_id for a in stores.records.archived("default")])


def key(c: PlannedChange) -> tuple[Any, ...]:
    return (c.job, c.action, c.memory_id or "", c.session or "", c.from_tier or "",
            c.to_tier or "", c.reason, tuple(c.group), c.importance_from, c.importance_to,
            c.count)


@pytest.mark.parametrize("days", [0.05, 8, 200])
def test_a_dry_run_lists_what_the_run_does(mem: Memory, clock: Clock, days: float) -> None:
    ids = fill(mem, clock)
    clock.advance(days=days)
    before = snapshot(mem)
    dry = mem.consolidate(dry_run=True)
    assert dry.dry_run and snapshot(mem) == before
    assert mem.consolidate(dry_run=True).planned == dry.planned  # still nothing changed
    real = mem.consolidate()
    assert not real.dry_run
    assert sorted(map(key, dry.planned)) == sorted(map(key, real.planned))
    assert [(j.name, j.counts) for j in dry.jobs] == [(j.name, j.counts) for j in real.jobs]
    assert dry.tiers_before == real.tiers_before and dry.tiers_after == real.tiers_after
    # What was listed is what happened.
    final = {c.memory_id: c for c in real.planned if c.memory_id and c.to_tier}
    for mid, change in final.items():
        if change.action != "abstract":
            assert mem.get(mid).tier.value == change.to_tier or any(
                c.memory_id == mid and c.job == "forget" for c in real.planned)
    if days == 8:
        actions = {(c.memory_id, c.action) for c in real.planned}
        assert (ids["used"], "rescore") in actions and (ids["used"], "promote") in actions
        assert (ids["old"], "archive") in actions
        assert any(c.action == "end_session" and c.session == "s1" for c in real.planned)
        assert {ids["turn0"], ids["turn1"], ids["turn2"]} <= {
            c.memory_id for c in real.planned if c.action == "abstract"}
    assert real.changed() == dry.changed()


def test_a_dry_run_of_some_jobs_and_a_tenant(mem: Memory, clock: Clock) -> None:
    fill(mem, clock)
    mem.add("another tenant's turn", type="dialogue", session="t1", tenant="acme")
    clock.advance(hours=2)
    before = snapshot(mem)
    dry = mem.consolidate(["sessions", "promote"], tenant="acme", dry_run=True)
    assert [c.action for c in dry.planned] == ["move", "end_session"]
    assert {c.tenant for c in dry.planned} == {"acme"}
    assert snapshot(mem) == before
    assert mem.consolidate("sessions", dry_run=True).jobs[0].name == "sessions"
    with pytest.raises(ValidationError, match="dry_run"):
        mem.consolidate(dry_run="yes")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="unknown lifecycle job"):
        mem.consolidate(["nope"], dry_run=True)


def test_a_dry_run_at_a_later_time_is_the_run_at_that_time(mem: Memory, clock: Clock) -> None:
    """``at``: what a run a week from now would do, asked now; the same plan the run makes
    when the clock gets there. A real run takes no ``at``."""
    from datetime import timedelta

    fill(mem, clock)
    clock.advance(hours=1)
    before = snapshot(mem)
    later = clock.now + timedelta(days=8)
    ahead = mem.consolidate(dry_run=True, at=later)
    assert snapshot(mem) == before and ahead.now == later
    assert ahead.planned != mem.consolidate(dry_run=True).planned  # a week changes things
    clock.now = later
    real = mem.consolidate()
    assert sorted(map(key, ahead.planned)) == sorted(map(key, real.planned))
    with pytest.raises(ValidationError, match="at is for dry runs"):
        mem.consolidate(at=later)
    with pytest.raises(ValidationError, match="at must be a datetime"):
        mem.consolidate(dry_run=True, at="tomorrow")  # type: ignore[arg-type]
