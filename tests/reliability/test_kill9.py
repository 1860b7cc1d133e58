"""kill -9, short (issue 18): a writer process killed with SIGKILL at random moments, three
times per store; after each kill every acknowledged add is there once and no content twice.
Target: 0 acknowledged writes lost or duplicated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from varvemem import Memory, Settings
from varvemem.benchmarks import reliability as rel

pytestmark = pytest.mark.slow  # writer processes killed with -9

ROUNDS = 3
WRITES = 12  # acknowledged adds before a kill, at most


def test_sqlite_home(home: Path, embedder: Any) -> None:
    out = rel.probe_kill9(home, rounds=ROUNDS, max_writes=WRITES, seed=1, label="sqlite",
                          open_memory=lambda: Memory(settings=Settings.load(home=home),
                                                     embedder=embedder))
    assert out.attempts >= ROUNDS
    assert out.ok and out.lost == 0 and out.duplicated == 0, out.report()


def test_postgresql_store(home: Path, embedder: Any, pg_url: str) -> None:
    with rel.fresh_database(pg_url) as url:
        overrides = {"store": {"url": url}}
        out = rel.probe_kill9(home, overrides, rounds=ROUNDS, max_writes=WRITES,
                              seed=2, label="postgresql",
                              open_memory=lambda: Memory(settings=Settings.load(
                                  home=home, **overrides), embedder=embedder))
    assert out.attempts >= ROUNDS
    assert out.ok and out.lost == 0 and out.duplicated == 0, out.report()
