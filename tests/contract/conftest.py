"""Backends the contract suite runs against. Server backends join this list as they land."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.stores.base import RecordStore
from memstrata.stores.sqlite import SqliteStore

BACKENDS = ["sqlite"]


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path: Path) -> RecordStore:
    if request.param == "sqlite":
        s = SqliteStore(tmp_path / "memstrata.db")
    else:  # pragma: no cover - grows with the server-backends issue
        raise AssertionError(request.param)
    yield s
    s.close()
