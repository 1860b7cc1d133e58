"""The reliability suite's servers: a real uvicorn server on loopback (tests/e2e/test_server.py)
with a prober tenant (acme) and an owner tenant (globex), each with an admin key, and a generic
webhook source writing to the owner's tenant."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.test_server import start_server

from varvemem import Memory
from varvemem.benchmarks.reliability import Webhook

MAX_BODY = 64 * 1024
WEBHOOK = Webhook(source="events", secret="owner-events-secret", tenant="globex")


@dataclass
class Live:
    url: str
    memory: Memory
    home: Path
    prober: str  # tenant acme, admin
    owner: str  # tenant globex, admin
    stop: Any


def live_server(home: Path, embedder: Any, **overrides: Any) -> Live:
    """The server over ``home`` (the settings ``overrides``, e.g. ``store``, on top)."""
    server, thread, url, mem = start_server(
        home, embedder, webhooks={"sources": {WEBHOOK.source: {
            "kind": "generic", "tenant": WEBHOOK.tenant, "secret": WEBHOOK.secret}},
            "poll_seconds": 0.05},
        server={"max_body_bytes": MAX_BODY}, **overrides)
    prober = mem.keys.create("acme", "admin")[1]
    owner = mem.keys.create(WEBHOOK.tenant, "admin")[1]

    def stop() -> None:
        server.should_exit = True
        thread.join(30)

    return Live(url, mem, home, prober, owner, stop)


@pytest.fixture
def live(tmp_path: Path, embedder: Any) -> Iterator[Live]:
    srv = live_server(tmp_path / "home", embedder)
    yield srv
    srv.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def live_on_each_store(request: pytest.FixtureRequest, tmp_path: Path,
                       embedder: Any) -> Iterator[Live]:
    """The server on the embedded store, then on PostgreSQL (a schema of its own)."""
    overrides: dict[str, Any] = {}
    if request.param == "postgresql":
        overrides["store"] = {"url": request.getfixturevalue("pg_url"),
                              "postgresql": {"schema": request.getfixturevalue("pg_schema")}}
    srv = live_server(tmp_path / "home", embedder, **overrides)
    yield srv
    srv.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def mem_on_each_store(request: pytest.FixtureRequest, make_memory: Any) -> Memory:
    """A memory on the embedded store, then on PostgreSQL (a schema of its own)."""
    if request.param == "sqlite":
        return make_memory()  # type: ignore[no-any-return]
    return make_memory(store={  # type: ignore[no-any-return]
        "url": request.getfixturevalue("pg_url"),
        "postgresql": {"schema": request.getfixturevalue("pg_schema")}})
