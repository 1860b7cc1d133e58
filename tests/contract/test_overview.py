"""Memory.overview on SQLite and PostgreSQL: counts, growth by day in SQL, recent adds and
changes, the inbox and the lifecycle's schedule, at a fixed clock."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from varvemem import Memory, Settings, ValidationError
from varvemem.model import MemoryRecord
from varvemem.stores.base import RecordStore
from varvemem.stores.sqlite import SqliteStore


@pytest.fixture(params=["embedded", "postgres"])
def backend(request) -> dict[str, Any]:
    if request.param == "embedded":
        return {}
    return {"store": {"url": request.getfixturevalue("pg_url"),
                      "pg_schema": request.getfixturevalue("pg_schema")}}


def test_overview(backend: dict[str, Any], tmp_path: Path, embedder, clock_factory) -> None:
    clock = clock_factory(datetime(2026, 3, 1, 22, 0, tzinfo=timezone.utc))
    mem = Memory(settings=Settings.load(home=tmp_path / "home", **backend), embedder=embedder,
                 clock=clock)
    try:
        old = mem.add("the staging cluster is eks-stg-1", type="knowledge").memory_id
        mem.add("订单服务的数据库是 mysql-a", type="knowledge")
        mem.add("I prefer dark mode", type="dialogue", session="s1")
        clock.advance(hours=3)  # the next UTC day
        new = mem.add("we moved staging from eks-stg-1 to eks-stg-2", type="knowledge")
        assert new.superseded == [old]
        gone = mem.add("Grafana dashboards live at grafana.internal", type="event").memory_id
        mem.delete(gone, reason="wrong")
        mem.add("other tenant's note", tenant="acme")
        mem.add("backdated", created_at=datetime(2026, 1, 1, tzinfo=timezone.utc))
        clock.advance(days=2)
        mem.consolidate(["sessions"])

        ov = mem.overview(days=5, recent=3)
        assert ov.tenant == "default" and ov.now == clock.now
        assert ov.by_tier == mem.stats()["by_tier"] and ov.memories == 5
        assert ov.by_type == {"dialogue": 1, "knowledge": 4}
        assert ov.by_tier_type["long_term"]["knowledge"] >= 3
        assert sum(n for t in ov.by_tier_type.values() for n in t.values()) == 5
        days = [(g.day, g.created, g.total) for g in ov.growth]
        assert days == [(date(2026, 2, 28), 0, 1), (date(2026, 3, 1), 3, 4),
                        (date(2026, 3, 2), 1, 5), (date(2026, 3, 3), 0, 5),
                        (date(2026, 3, 4), 0, 5)]
        assert ov.recent_adds[0].content == \
            "we moved staging from eks-stg-1 to eks-stg-2"
        assert len(ov.recent_adds) == 3 and all(isinstance(r, MemoryRecord)
                                                for r in ov.recent_adds)
        changes = [(e.memory_id, e.action) for e in ov.recent_changes]
        assert changes[0] == (gone, "delete")
        assert changes == [(gone, "delete"), (old, "supersede")]  # the successor: a create
        assert ov.inbox == {}
        jobs = {j.job: j for j in ov.lifecycle}
        assert list(jobs) == ["sessions", "rescore", "promote", "abstract", "forget", "inbox"]
        assert jobs["sessions"].last_run == clock.now and not jobs["sessions"].due
        assert jobs["sessions"].next_due == clock.now + timedelta(
            minutes=mem.settings.lifecycle.sessions_every_minutes)
        assert jobs["forget"].last_run is None and jobs["forget"].due
        assert mem.overview(tenant="acme").memories == 1
        for bad in ({"days": 0}, {"recent": -1}, {"days": True}):
            with pytest.raises(ValidationError, match=next(iter(bad))):
                mem.overview(**bad)
    finally:
        mem.close()


def test_growth_is_one_indexed_group_by(tmp_path: Path) -> None:
    """The store's day query reads the (tenant, created_at) index, not the table."""
    store: RecordStore = SqliteStore(tmp_path / "v.db")
    try:
        assert isinstance(store, SqliteStore)
        plan = " ".join(str(r[-1]) for r in store._c.execute(
            "EXPLAIN QUERY PLAN SELECT date(created_at, 'unixepoch'), COUNT(*) FROM memories "
            "WHERE tenant = ? AND created_at >= ? GROUP BY 1", ("t", 0.0)).fetchall())
        assert "memories_created" in plan
        plan = " ".join(str(r[-1]) for r in store._c.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM history WHERE tenant = ? AND action = ? "
            "ORDER BY id DESC LIMIT 5", ("t", "delete")).fetchall())
        assert "history_recent" in plan
    finally:
        store.close()
