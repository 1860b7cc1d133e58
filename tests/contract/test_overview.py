"""Memory.overview on SQLite and PostgreSQL: counts, growth by day in SQL, recent adds and
changes, the inbox and the lifecycle's schedule, at a fixed clock."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from varvemem import Memory, Settings, ValidationError
from varvemem.model import MemoryRecord, MemoryType, Tier
from varvemem.stores.base import RecordStore, Selection
from varvemem.stores.sqlite import SqliteStore


@pytest.fixture(params=["embedded", "postgres"])
def backend(request) -> dict[str, Any]:
    if request.param == "embedded":
        return {}
    return {"store": {"url": request.getfixturevalue("pg_url"),
                      "postgresql": {"schema": request.getfixturevalue("pg_schema")}}}


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



_NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("sel,index", [
    # The Q&A pairs of a big tenant (qa.report): an index range of the one type.
    (Selection(tenant="t", types=[MemoryType.QA],
               tiers=[t for t in Tier if t is not Tier.ARCHIVE]), "memories_kind"),
    # The lifecycle's walks (forget, re-score, promote) test the narrow index's columns.
    (Selection(tenant="t", tiers=[Tier.LONG_TERM], current_only=False,
               exclude_types=[MemoryType.QA], expired_at=_NOW), "memories_lifecycle"),
    (Selection(tenant="t", tiers=[Tier.LONG_TERM], exclude_types=[MemoryType.KNOWLEDGE],
               decay_due_before=_NOW), "memories_lifecycle"),
    (Selection(tenant="t", tiers=[Tier.ACTIVE], unscored_retrievals=True), "memories_lifecycle"),
])
def test_selections_read_an_index_not_every_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                sel: Selection, index: str) -> None:
    """A selection over a big tenant reads the index made for it, not the whole rows of the
    tenant in id order (each holds its content and vector)."""
    store = SqliteStore(tmp_path / "v.db")
    seen: list[tuple[str, tuple[Any, ...]]] = []
    query = store._query
    monkeypatch.setattr(store, "_query", lambda sql, args=(): seen.append(
        (sql, tuple(args))) or query(sql, args))
    try:
        store.select(sel, 1000)
        (sql, args), = seen
        plan = " ".join(str(r[-1]) for r in store._c.execute(
            "EXPLAIN QUERY PLAN " + store.d.sql(sql), args).fetchall())
        assert index in plan, plan
    finally:
        store.close()


def _recount(mem: Memory, backend: dict[str, Any], tenant: str) -> dict[str, Any]:
    """What stats() counts, counted from the rows themselves."""
    sql = ("SELECT tier, memory_type, valid_to IS NOT NULL, COUNT(*) FROM memories "
           "WHERE tenant = {p} GROUP BY 1, 2, 3",
           "SELECT COUNT(*) FROM history WHERE tenant = {p}")
    if backend:
        import psycopg

        with psycopg.connect(backend["store"]["url"]) as conn:
            conn.execute(f'SET search_path TO "{backend["store"]["postgresql"]["schema"]}"')
            rows = conn.execute(sql[0].format(p="%s"), (tenant,)).fetchall()
            history = conn.execute(sql[1].format(p="%s"), (tenant,)).fetchone()[0]
    else:
        import sqlite3

        conn = sqlite3.connect(mem.settings.home / "varvemem.db")
        try:
            rows = conn.execute(sql[0].format(p="?"), (tenant,)).fetchall()
            history = conn.execute(sql[1].format(p="?"), (tenant,)).fetchone()[0]
        finally:
            conn.close()
    by_tier: dict[str, int] = {}
    by_type: dict[str, int] = {}
    for tier, kind, _, n in rows:
        by_tier[tier] = by_tier.get(tier, 0) + n
        by_type[kind] = by_type.get(kind, 0) + n
    return {"memories": sum(r[3] for r in rows),
            "superseded": sum(r[3] for r in rows if r[2]),
            "by_tier": by_tier, "by_type": by_type, "history_entries": history}


def test_stats_counters_agree_with_the_rows(backend: dict[str, Any], tmp_path: Path, embedder,
                                            clock_factory) -> None:
    """stats() reads counters kept by triggers: after adds, edits, supersessions, promotion,
    forgetting, restores, deletes and a user's erasure they still equal a count of the rows."""
    clock = clock_factory(datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc))
    mem = Memory(settings=Settings.load(home=tmp_path / "home", **backend), embedder=embedder,
                 clock=clock)
    keys = ("memories", "superseded", "by_tier", "by_type", "history_entries")

    def agree() -> None:
        for tenant in ("default", "acme"):
            st = mem.stats(tenant=tenant)
            want = _recount(mem, backend, tenant)
            if st["archived"]:  # archived memories are counted in the archive tier too
                want["by_tier"]["archive"] = want["by_tier"].get("archive", 0) + st["archived"]
            assert {k: st[k] for k in keys} == want, tenant
            assert st["current"] == st["memories"] - st["superseded"]
        seen.append(mem.stats())

    seen: list[dict[str, Any]] = []
    try:
        agree()
        first = mem.add("the staging cluster is eks-stg-1", type="knowledge").memory_id
        mem.add("会议纪要：周五发布 v2.3", type="event", user="li")
        for i in range(6):
            mem.add(f"turn {i}: my laptop is a ThinkPad X{i}", type="dialogue", session="s1",
                    user="li")
        mem.add("a note of acme's", tenant="acme")
        agree()
        mem.add("we moved staging from eks-stg-1 to eks-stg-2", type="knowledge")
        assert mem.get(first).valid_to is not None
        agree()
        mem.update(first, importance=0.9, reason="still worth keeping")
        note = mem.add("Grafana dashboards live at grafana.internal", type="knowledge")
        mem.update(note.memory_id, content="Grafana lives at grafana.corp", reason="moved")
        agree()
        clock.advance(days=400)
        mem.consolidate()  # sessions end, promote, abstract, forget
        agree()
        for rec in mem.get_all(limit=50):
            if rec.tier.value == "archive":
                mem.restore(rec.memory_id, reason="needed")
                break
        mem.restore(first, reason="both are true")
        agree()
        mem.delete(note.memory_id, reason="wrong")
        mem.delete_user("li")
        agree()
        assert {t for st in seen for t in st["by_tier"]} >= {"active", "long_term", "archive"}
        assert seen[-1]["memories"] < max(st["memories"] for st in seen)
    finally:
        mem.close()
