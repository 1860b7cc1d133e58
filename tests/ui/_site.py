"""A memory with something on every inspector page, keys of each role, and helpers to log in
and post forms as a browser does."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from tests.conftest import stores_of
from tests.e2e.test_server import free_port

from varvemem import Memory, Settings
from varvemem.server import create_app
from varvemem.stores.base import InboxEvent

SCRIPT = "<script>alert(1)</script> the release checklist lives in the wiki"
ZH = "数据库备份每天凌晨两点在 db-backup-01 上运行"
EN = "The staging cluster is called eks-stg-2 and runs in eu-west-1"


@dataclass
class Site:
    """What the tests look at: the memory, its keys and the ids of the seeded memories."""

    mem: Memory
    admin: str  # acme
    writer: str  # acme
    reader: str  # acme
    other: str  # globex, admin
    ids: dict[str, str]
    failed_event: int


def settings(home: Path, **overrides: Any) -> Settings:
    return Settings.load(home=home, **{
        "webhooks": {"sources": {"gh": {"kind": "github", "tenant": "acme",
                                        "secret": "gh-secret-123"}}},
        "server": {"process_inbox": False}, **overrides})


def seed(home: Path, embedder: Any, **overrides: Any) -> Site:
    mem = Memory(settings=settings(home, **overrides), embedder=embedder)
    ids: dict[str, str] = {}
    ids["old_port"] = mem.add("The API gateway listens on port 8080", tags=["gateway"],
                              tenant="acme").memory_id
    new = mem.add("The API gateway now listens on port 9090", tags=["gateway"], tenant="acme")
    assert new.superseded == [ids["old_port"]], new
    ids["new_port"] = new.memory_id
    ids["zh"] = mem.add(ZH, tags=["backup"], tenant="acme").memory_id
    ids["en"] = mem.add(EN, tags=["staging"], tenant="acme").memory_id
    ids["script"] = mem.add(SCRIPT, tenant="acme").memory_id
    ids["qa"] = mem.qa.save("How do I reset the VPN?", "Run vpn-reset on the jump host.", 0.6,
                            tenant="acme")
    mem.add_messages([{"role": "user", "content": "Deploy **staging** now <b>please</b>"},
                      {"role": "assistant", "content": "Deploying eks-stg-2."}],
                     session="chat-1", tenant="acme")
    mem.sessions.save("chat-1", [{"role": "user", "content": "Deploy **staging** now <b>please</b>"},
                                 {"role": "assistant", "content": "Deploying eks-stg-2."}],
                      tenant="acme")
    ids["globex"] = mem.add("Globex keeps its invoices in the finance bucket",
                            tenant="globex").memory_id
    stores_of(mem).records.enqueue_event(InboxEvent(
        event_id=0, tenant="acme", source="gh", kind="github", delivery="bad", body="[1, 2]",
        headers={"x-github-event": "issue_comment"}, received_at=mem.clock()))
    mem.inbox.process()
    [failed] = mem.inbox.events(tenant="acme", status="failed")
    keys = [mem.keys.create(t, r)[1] for t, r in
            (("acme", "admin"), ("acme", "write"), ("acme", "read"), ("globex", "admin"))]
    return Site(mem, *keys, ids=ids, failed_event=failed.event_id)


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "no CSRF field on the page"
    return match.group(1)


def login(client: httpx.Client | Any, key: str) -> Any:
    """Log in through the form, as a browser does (same Origin, the form's token)."""
    form = client.get("/ui/login")
    return client.post("/ui/login", data={"api_key": key, "csrf": csrf_of(form.text),
                                          "next": "/ui"},
                       headers={"Origin": str(client.base_url).rstrip("/")},
                       follow_redirects=False)


@dataclass
class Running:
    url: str
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def serve(mem: Memory) -> Running:
    """The service (and its inspector) over ``mem`` on a loopback port, in a thread."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(memory=mem), host="127.0.0.1", port=port,
                                           log_config=None, access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    return Running(f"http://127.0.0.1:{port}", server, thread)
