"""Shared fixtures: one embedder per test session, a fresh home per test, a settable clock."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstrata import Memory, Settings
from memstrata.embeddings.usem3 import USEEmbedder


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> datetime:
        self.now += timedelta(**kw)
        return self.now


@pytest.fixture(scope="session")
def embedder() -> USEEmbedder:
    return USEEmbedder()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def make_memory(home: Path, embedder: USEEmbedder, clock: Clock):
    opened: list[Memory] = []

    def make(**settings) -> Memory:
        mem = Memory(settings=Settings.load(home=home, **settings), embedder=embedder,
                     clock=clock)
        opened.append(mem)
        return mem

    yield make
    for mem in opened:
        with contextlib.suppress(Exception):
            mem.close()


@pytest.fixture
def mem(make_memory) -> Iterator[Memory]:
    yield make_memory()
