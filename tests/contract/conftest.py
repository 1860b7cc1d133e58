"""Backends the contract suite runs against: the embedded SQLite store and PostgreSQL (a real
server; under CI a missing one fails the run)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from varvemem.stores.base import RecordStore
from varvemem.stores.sqlite import SqliteStore

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def open_store(request, tmp_path: Path) -> Iterator[Callable[[], RecordStore]]:
    """Opens the backend's store (again: a second connection to the same data)."""
    opened: list[RecordStore] = []
    if request.param == "sqlite":
        def make() -> RecordStore:
            return SqliteStore(tmp_path / "varvemem.db")
    else:
        from varvemem.stores.postgres import PostgresStore

        url, schema = request.getfixturevalue("pg_url"), request.getfixturevalue("pg_schema")

        def make() -> RecordStore:
            return PostgresStore(url, schema=schema, pool_size=2)

    def tracked() -> RecordStore:
        opened.append(make())
        return opened[-1]

    yield tracked
    for s in opened:
        s.close()


@pytest.fixture
def store(open_store: Callable[[], RecordStore]) -> RecordStore:
    return open_store()
