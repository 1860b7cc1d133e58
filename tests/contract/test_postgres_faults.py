"""PostgreSQL as the store of record: configured by URL, migrated by varvemem, and every
fault a clear error that names the setting."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from tests.conftest import stores_of
from typer.testing import CliRunner

from varvemem import ConfigError, Memory, Settings, StorageError, upgrade_store
from varvemem.cli import app
from varvemem.stores.postgres import PostgresStore


def test_short_url_variables_and_redaction(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VARVEMEM_STORE_URL", "postgresql://u:s3cret@db.example/mem")
    monkeypatch.setenv("VARVEMEM_ARCHIVE_URL", "s3://bucket/prefix")
    s = Settings.load(home=tmp_path)
    assert s.store.url == "postgresql://u:s3cret@db.example/mem"
    assert s.archive.url == "s3://bucket/prefix"
    monkeypatch.setenv("VARVEMEM_STORE__URL", "sqlite:///tmp/x.db")  # the nested name wins
    assert Settings.load(home=tmp_path).store.url == "sqlite:///tmp/x.db"
    monkeypatch.setenv("VARVEMEM_STORE__URL", "mysql://u:s3cret@db/mem")
    with pytest.raises(ConfigError, match=r"store\.url: unsupported store URL") as err:
        Settings.load(home=tmp_path)
    assert "s3cret" not in str(err.value)
    monkeypatch.delenv("VARVEMEM_STORE__URL")
    out = CliRunner().invoke(app, ["--home", str(tmp_path), "config", "show", "--json"])
    assert out.exit_code == 0, out.output
    shown = json.loads(out.output)["store"]["url"]
    assert shown == "postgresql://u:***@db.example/mem"


def test_unreachable_server_and_unknown_role(tmp_path: Path, pg_url: str) -> None:
    with pytest.raises(StorageError, match=r"store\.url: cannot connect to "
                                           r"postgresql://u:\*\*\*@127\.0\.0\.1:1/x"):
        Memory(settings=Settings.load(home=tmp_path, store={
            "url": "postgresql://u:pw@127.0.0.1:1/x", "connect_timeout": 2}))
    bad_role = pg_url.replace("postgres@", "no_such_role_x@", 1)
    with pytest.raises(StorageError, match=r"store\.url: .*no_such_role_x"):
        Memory(settings=Settings.load(home=tmp_path, store={"url": bad_role}))


def test_schema_versions_upgrade_and_newer(tmp_path: Path, pg_url: str, pg_schema: str) -> None:
    settings = Settings.load(home=tmp_path, store={"url": pg_url, "postgresql": {
        "schema": pg_schema, "auto_migrate": False}})
    with pytest.raises(StorageError, match="varvemem db upgrade"):
        Memory(settings=settings)  # an empty schema is behind too: nothing is created
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass(%s)", (f"{pg_schema}.memories",)
                            ).fetchone()[0] is None
    runner = CliRunner()
    env = {"VARVEMEM_STORE_URL": pg_url, "VARVEMEM_STORE__POSTGRESQL__SCHEMA": pg_schema,
           "VARVEMEM_STORE__POSTGRESQL__AUTO_MIGRATE": "false"}
    out = runner.invoke(app, ["--home", str(tmp_path), "db", "upgrade"], env=env)
    assert out.exit_code == 0, out.output
    latest = PostgresStore.migrations()[-1][0]
    assert f"schema version 0 -> {latest}" in out.output
    out = runner.invoke(app, ["--home", str(tmp_path), "db", "upgrade"], env=env)
    assert f"schema version {latest}, up to date" in out.output
    mem = Memory(settings=settings)
    mem.add("the store is ready")
    mem.close()
    with psycopg.connect(pg_url) as conn:
        conn.execute(f'UPDATE "{pg_schema}".meta SET value = %s WHERE key = %s',
                     (str(latest + 1), "schema_version"))
    with pytest.raises(StorageError, match="newer than this varvemem knows"):
        Memory(settings=settings)
    with pytest.raises(StorageError, match="newer than this varvemem knows"):
        upgrade_store(settings)


def test_two_processes_share_one_database(tmp_path: Path, pg_url: str, pg_schema: str,
                                          embedder) -> None:
    """Two homes (two machines) on one PostgreSQL: each sees the other's writes, its own
    local vector index caught up from the store's change feed."""
    cfg = {"url": pg_url, "postgresql": {"schema": pg_schema}}
    a = Memory(settings=Settings.load(home=tmp_path / "a", store=cfg), embedder=embedder)
    b = Memory(settings=Settings.load(home=tmp_path / "b", store=cfg), embedder=embedder)
    try:
        mid = a.add("the release train leaves on Thursdays").memory_id
        assert b.search("when does the release train leave?")[0].memory.memory_id == mid
        b.delete(mid)
        assert a.search("when does the release train leave?") == []
    finally:
        a.close()
        b.close()


def test_server_gone_mid_write_leaves_nothing_half_done(tmp_path: Path, pg_url: str,
                                                        pg_schema: str, embedder) -> None:
    """The connection dies inside a write: a clear error, nothing of it committed, and the
    pool serves the next write on a fresh connection."""

    mem = Memory(settings=Settings.load(home=tmp_path, store={
        "url": pg_url, "postgresql": {"schema": pg_schema}}),
                 embedder=embedder)
    kept = mem.add("written before the fault").memory_id
    store = stores_of(mem).records

    def kill_own_backend() -> None:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                          "query LIKE 'INSERT INTO memories%%' AND pid <> pg_backend_pid()")

    half = mem.get(kept).model_copy(update={"memory_id": "mem_half", "content": "half"})
    with pytest.raises(StorageError, match=r"write to PostgreSQL .* failed"), \
            store.transaction() as tx:
        tx.insert(half, None)
        kill_own_backend()
        tx.set_meta("after", "the fault")
    assert store.get("default", "mem_half") is None and store.get_meta("after") is None
    assert mem.add("written after the fault").status == "created"
    assert [h.memory.content for h in mem.search("written after the fault", top_k=1)] == \
        ["written after the fault"]
    mem.close()


def test_missing_pgvector_extension_is_a_clear_error(tmp_path: Path, pg_url: str) -> None:
    """A fresh database and a user who may not create extensions: pgvector cannot be set up,
    and the error says what to do."""
    import uuid

    db, role = f"mt_{uuid.uuid4().hex[:10]}", f"mt_user_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN')
        admin.execute(f'CREATE DATABASE "{db}" OWNER "{role}"')
    try:
        url = pg_url.replace("postgres@", f"{role}@", 1).rsplit("/", 1)[0] + f"/{db}"
        mem = Memory(settings=Settings.load(home=tmp_path, store={"url": url,
                                                                  "vector_url": "pgvector"}))
        with pytest.raises(StorageError, match=r"store\.vector_url: pgvector is not usable .*"
                                               r"CREATE EXTENSION vector"):
            mem.add("no vectors without the extension")
        mem.close()
        with pytest.raises(ConfigError, match=r"store\.vector_url: pgvector lives in"):
            Memory(settings=Settings.load(home=tmp_path / "h2", store={
                "vector_url": "pgvector"})).add("pgvector without PostgreSQL")
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')


def test_term_frequencies_follow_every_change(tmp_path: Path, pg_url: str, pg_schema: str,
                                              embedder) -> None:
    """The document frequencies BM25's IDF reads are kept by a trigger: after adds, an edit, a
    supersede and deletes they equal a full recount."""
    mem = Memory(settings=Settings.load(home=tmp_path, store={
        "url": pg_url, "postgresql": {"schema": pg_schema}}),
                 embedder=embedder)
    a = mem.add("Staging runs on cluster eks-stg-2").memory_id
    b = mem.add("the payment pipeline failed on a cache key").memory_id
    mem.add("镜像拉取凭证放错了命名空间")
    mem.add("Staging now runs on cluster eks-stg-3")
    mem.update(b, content="the payment pipeline failed on a wrong cache key")
    mem.delete(a)
    with psycopg.connect(pg_url) as conn:
        conn.execute(f'SET search_path TO "{pg_schema}"')
        kept = dict(conn.execute("SELECT term, df FROM term_df WHERE df > 0").fetchall())
        recount = dict(conn.execute("SELECT word, ndoc FROM ts_stat('SELECT fts FROM memories')"
                                    ).fetchall())
        recount[""] = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    assert kept == recount and recount[""] == 3 and "镜像" in kept
    mem.close()
