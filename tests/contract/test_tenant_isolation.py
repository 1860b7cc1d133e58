"""Tenants can neither observe nor influence each other through full-text statistics: a
tenant's keyword scores, their order and the ``max_docs`` cut depend on its own memories only
(issue 18). The same memories of tenant ``acme`` go into two stores, one of which also holds
another tenant's memories sharing acme's words; every search of acme must answer exactly the
same in both."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from varvemem import Memory, Settings
from varvemem.model import MemoryRecord, SearchFilter
from varvemem.stores.base import RecordStore
from varvemem.stores.sqlite import SqliteStore
from varvemem.text import analyse

from .conftest import BACKENDS
from .test_record_store import T0, put, rec

ACME = [
    ("a1", "the kestrel deploy stalled at the harbor gateway"),
    ("a2", "kestrel harbor lantern rollout notes"),
    ("a3", "lantern quartz beacon dashboards for the harbor team"),
    ("a4", "quartz beacon alert thresholds"),
    ("a5", "a long note about the kestrel cluster, its quartz nodes, their beacon agents and "
           "the lantern proxy that fronts them all"),
]
QUERIES = ["kestrel harbor", "harbor lantern", "quartz beacon lantern kestrel",
           "harbor", "beacon thresholds"]


def other_tenant(n: int) -> list[MemoryRecord]:
    """``n`` memories of tenant ``other`` that share acme's words (short and long ones, so that
    the other tenant's document lengths differ from acme's too)."""
    words = ["harbor", "kestrel harbor", "lantern harbor gateway", "quartz", "harbor beacon "
             "lantern quartz kestrel rollout with many more words than acme ever uses"]
    return [rec(f"o{i}", f"{words[i % len(words)]} item {i}", tenant="other")
            for i in range(n)]


def acme_records() -> list[MemoryRecord]:
    return [rec(mid, text, tenant="acme",
                context_before=["the harbor lantern was mentioned before"] if mid == "a4" else [])
            for mid, text in ACME]


@pytest.fixture(params=BACKENDS)
def store_pair(request, tmp_path: Path) -> Iterator[Callable[[str], RecordStore]]:
    """Opens two separate stores of the backend, by name."""
    opened: list[RecordStore] = []
    schemas: list[str] = []

    def make(name: str) -> RecordStore:
        if request.param == "sqlite":
            store: RecordStore = SqliteStore(tmp_path / f"{name}.db")
        else:
            from varvemem.stores.postgres import PostgresStore

            schemas.append(f"mt_{uuid.uuid4().hex[:12]}")
            store = PostgresStore(request.getfixturevalue("pg_url"), schema=schemas[-1],
                                  pool_size=2)
        opened.append(store)
        return store

    yield make
    for s in opened:
        s.close()
    if schemas:
        with psycopg.connect(request.getfixturevalue("pg_url"), autocommit=True) as conn:
            for name in schemas:
                conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def searches(store: RecordStore, max_docs: int | None = None) -> dict[str, list[Any]]:
    flt = SearchFilter(tenant="acme")
    return {q: store.keyword_search(analyse(q), flt, T0, 10, 0.5, max_docs) for q in QUERIES}


def assert_same(got: dict[str, list[Any]], want: dict[str, list[Any]]) -> None:
    for q in QUERIES:
        assert [m for m, _ in got[q]] == [m for m, _ in want[q]], q
        assert [s for _, s in got[q]] == pytest.approx([s for _, s in want[q]], rel=1e-9), q
    assert any(want.values())


@pytest.mark.parametrize("others", [1, 300])
def test_keyword_scores_ignore_other_tenants(store_pair, others: int) -> None:
    alone, shared = store_pair("alone"), store_pair("shared")
    crowd = other_tenant(others)
    put(alone, *acme_records())
    # The other tenant writes before and after acme.
    put(shared, *crowd[: others // 2])
    put(shared, *acme_records())
    put(shared, *crowd[others // 2 :])
    assert_same(searches(shared), searches(alone))
    # The max_docs cut counts acme's memories only: "harbor" is in 3 of them (and in most of
    # the other tenant's), so a cut at 3 keeps it for acme.
    assert_same(searches(shared, max_docs=3), searches(alone, max_docs=3))
    assert_same(searches(shared, max_docs=1), searches(alone, max_docs=1))


def test_other_tenants_changes_and_deletes_leave_scores_alone(store_pair) -> None:
    alone, shared = store_pair("alone"), store_pair("shared")
    put(alone, *acme_records())
    put(shared, *acme_records(), *other_tenant(40))
    with shared.transaction() as tx:  # the other tenant rewrites and deletes memories
        for r in other_tenant(40)[:10]:
            tx.update(r.model_copy(update={"content": "harbor harbor kestrel"}),
                      fields=["content"])
        for r in other_tenant(40)[10:30]:
            tx.delete("other", r.memory_id)
    assert_same(searches(shared), searches(alone))
    # acme deletes and rewrites its own: its statistics follow in both stores alike.
    for store in (alone, shared):
        with store.transaction() as tx:
            tx.delete("acme", "a2")
            tx.update(acme_records()[3].model_copy(update={"content": "quartz harbor kestrel"}),
                      fields=["content"])
    assert_same(searches(shared), searches(alone))
    assert "a2" not in {m for hits in searches(shared).values() for m, _ in hits}
    assert_same(searches(shared, max_docs=2), searches(alone, max_docs=2))


# -- the same through the library: the explained keyword score and the rank ------------------
@pytest.fixture(params=["embedded", "postgres"])
def make_home(request, tmp_path: Path, embedder, clock_factory) -> Iterator[Callable[[str], Memory]]:
    opened: list[Memory] = []
    schemas: list[str] = []

    def make(name: str) -> Memory:
        extra: dict[str, Any] = {}
        if request.param == "postgres":
            schemas.append(f"mt_{uuid.uuid4().hex[:12]}")
            extra["store"] = {"url": request.getfixturevalue("pg_url"),
                              "postgresql": {"schema": schemas[-1]}}
        mem = Memory(settings=Settings.load(home=tmp_path / name, **extra), embedder=embedder,
                     clock=clock_factory())
        opened.append(mem)
        return mem

    yield make
    for mem in opened:
        mem.close()
    if schemas:
        with psycopg.connect(request.getfixturevalue("pg_url"), autocommit=True) as conn:
            for name in schemas:
                conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def probe(mem: Memory) -> list[tuple[str, float]]:
    """acme's hits for the probe query: (content, explained keyword score), by rank."""
    return [(h.memory.content, h.scores.keyword)
            for h in mem.search("kestrel harbor lantern", tenant="acme", top_k=5,
                                min_relevance=0.0)]


@pytest.mark.parametrize("others", [1, 300])
def test_search_explains_the_same_keyword_score_beside_another_tenant(make_home,
                                                                      others: int) -> None:
    alone, shared = make_home("alone"), make_home("shared")
    for mem in (alone, shared):
        mem.add_many([{"content": text, "tenant": "acme"} for _, text in ACME])
    shared.add_many([{"content": f"{w} report number {i}", "tenant": "other"}
                     for i, w in zip(range(others), ["harbor"] * others)])
    want, got = probe(alone), probe(shared)
    assert [c for c, _ in got] == [c for c, _ in want]
    assert [k for _, k in got] == pytest.approx([k for _, k in want], rel=1e-9)
    assert any(k < 1.0 for _, k in want)  # the probe tells scores apart


# -- existing data: stores made before the per-tenant statistics ------------------------------
def test_a_sqlite_store_with_one_shared_index_upgrades(tmp_path: Path) -> None:
    import sqlite3

    from varvemem.text import INDEX_VERSION

    alone = SqliteStore(tmp_path / "alone.db")
    put(alone, *acme_records())
    store = SqliteStore(tmp_path / "old.db")
    put(store, *other_tenant(30), *acme_records())
    store.close()
    # Back to schema 5's layout: one FTS5 table for every tenant, built by this analyser,
    # no stored statements (schema 11) and no write sequence (schema 13).
    conn = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name GLOB "
                                         "'memories_fts_[0-9]*' AND sql GLOB 'CREATE VIRTUAL*'")]
    assert len(tables) == 4  # two tenants: an FTS5 table and its vocab table each
    for name in sorted(tables, key=len, reverse=True):  # the vocab tables first
        conn.execute(f"DROP TABLE {name}")
    conn.executescript(
        "DROP TABLE fts_tenants; CREATE VIRTUAL TABLE memories_fts USING fts5 (terms, context, "
        "tokenize = 'unicode61 remove_diacritics 0'); CREATE VIRTUAL TABLE memories_fts_vocab "
        "USING fts5vocab (memories_fts, 'row'); INSERT INTO memories_fts (rowid, terms) "
        "SELECT rowid, content FROM memories; ALTER TABLE memories DROP COLUMN statement; "
        "DROP INDEX memories_wseq; ALTER TABLE memories DROP COLUMN wseq; "
        "ALTER TABLE vector_tombstones DROP COLUMN tenant; PRAGMA user_version = 5;")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('fts_version', ?)",
                 (INDEX_VERSION,))
    conn.close()
    store = SqliteStore(tmp_path / "old.db")
    try:
        assert store.schema_version == 14  # every migration ran again from 6
        assert_same(searches(store), searches(alone))
        assert_same(searches(store, max_docs=1), searches(alone, max_docs=1))
        hits = store.keyword_search(["harbor"], SearchFilter(tenant="other"), T0, 100)
        assert len(hits) == 24 and all(m.startswith("o") for m, _ in hits)
    finally:
        store.close()
        alone.close()


def test_a_postgres_schema_with_shared_term_counts_upgrades(pg_url: str, pg_schema: str) -> None:
    from varvemem.stores.postgres import PostgresStore

    store = PostgresStore(pg_url, schema=pg_schema, pool_size=2)
    put(store, *other_tenant(30), *acme_records())
    with store.transaction() as tx:
        tx.delete("other", "o0")
        tx.delete("acme", "a5")
    store.close()
    # Back to schema 4: term_df counted over all tenants, kept by schema 2's trigger.
    old = dict(PostgresStore.migrations())[2]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{pg_schema}"')
        conn.execute("DROP TRIGGER memories_term_df ON memories; DROP TABLE term_df; "
                     "DROP FUNCTION varvemem_term_df()")
        conn.execute(old)
        conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    store = PostgresStore(pg_url, schema=pg_schema, pool_size=2)
    try:
        assert store.schema_version == PostgresStore.migrations()[-1][0]
        with psycopg.connect(pg_url) as conn:
            conn.execute(f'SET search_path TO "{pg_schema}"')
            kept = {(t, w): n for t, w, n in conn.execute(
                "SELECT tenant, term, df FROM term_df WHERE df > 0").fetchall()}
            recount: dict[tuple[str, str], int] = {}
            for tenant in ("acme", "other"):
                recount[(tenant, "")] = conn.execute(
                    "SELECT count(*) FROM memories WHERE tenant = %s", (tenant,)).fetchone()[0]
                for word, ndoc in conn.execute(
                        "SELECT word, ndoc FROM ts_stat(%s)",
                        (f"SELECT fts FROM memories WHERE tenant = '{tenant}'",)).fetchall():
                    recount[(tenant, word)] = ndoc
        assert kept == recount and recount[("acme", "")] == 4 and recount[("other", "")] == 29
        with store.transaction() as tx:  # the new trigger keeps them per tenant
            tx.delete("acme", "a1")
            tx.insert(rec("a9", "harbor harbor", tenant="acme"), None)
        alone = PostgresStore(pg_url, schema=f"{pg_schema}_b", pool_size=2)
        try:
            records = {r.memory_id: r for r in acme_records()}
            put(alone, *(r for m, r in records.items() if m not in ("a1", "a5")),
                rec("a9", "harbor harbor", tenant="acme"))
            assert_same(searches(store), searches(alone))
        finally:
            alone.close()
            with psycopg.connect(pg_url, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{pg_schema}_b" CASCADE')
    finally:
        store.close()
