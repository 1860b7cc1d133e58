"""Backends the contract suite runs against: the embedded SQLite store and PostgreSQL (a real
server; under CI a missing one fails the run)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from varvemem.stores.base import RecordStore
from varvemem.stores.sqlite import SqliteStore

BACKENDS = ["sqlite", "postgres"]
# The embedded default, PostgreSQL alone, Milvus Lite beside the embedded store, the seed's
# production layout (PostgreSQL, a Milvus standalone server, Redis for the active sessions, S3
# for the archive), and PostgreSQL with pgvector.
COMBOS = ["embedded", "postgres", "milvus-lite", "postgres+milvus+redis+s3", "postgres+pgvector"]


@pytest.fixture(params=BACKENDS)
def open_store(request, tmp_path: Path) -> Iterator[Callable[..., RecordStore]]:
    """Opens the backend's store (again: a second connection to the same data), with the
    store's own keyword arguments if given."""
    opened: list[RecordStore] = []
    if request.param == "sqlite":
        def make(**kw: Any) -> RecordStore:
            return SqliteStore(tmp_path / "varvemem.db", **kw)
    else:
        from varvemem.stores.postgres import PostgresStore

        url, schema = request.getfixturevalue("pg_url"), request.getfixturevalue("pg_schema")

        def make(**kw: Any) -> RecordStore:
            return PostgresStore(url, schema=schema, pool_size=2, **kw)

    def tracked(**kw: Any) -> RecordStore:
        opened.append(make(**kw))
        return opened[-1]

    yield tracked
    for s in opened:
        s.close()


@pytest.fixture
def store(open_store: Callable[[], RecordStore]) -> RecordStore:
    return open_store()


@pytest.fixture
def combo_settings(request, tmp_path: Path) -> dict[str, Any]:
    combo = request.param
    out: dict[str, Any] = {}
    if "postgres" in combo:
        out["store"] = {"url": request.getfixturevalue("pg_url"),
                        "postgresql": {"schema": request.getfixturevalue("pg_schema")}}
    if combo == "postgres+pgvector":
        request.getfixturevalue("pgvector_available")
        out["store"]["vector_url"] = "pgvector"
    elif combo == "milvus-lite":
        out["store"] = {"vector_url": f"milvus-lite://{tmp_path}/milvus.db"}
    elif "milvus" in combo:
        import uuid

        out["store"].update(vector_url=request.getfixturevalue("milvus_standalone"),
                            milvus={"collection": f"t_{uuid.uuid4().hex[:10]}"})
    if "redis" in combo:
        out.setdefault("store", {}).update(
            cache_url=request.getfixturevalue("redis_url"),
            redis={"prefix": request.getfixturevalue("cache_prefix")})
    if "s3" in combo:
        out["archive"] = {"url": f"s3://{request.getfixturevalue('s3_bucket')}/arch",
                          "endpoint_url": request.getfixturevalue("s3_server"),
                          "access_key": "test", "secret_key": "test", "region": "us-east-1"}
    return out
