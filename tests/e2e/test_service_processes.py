"""The service as processes: `varvemem keys`, `varvemem serve` (webhooks acknowledged once
committed, SIGTERM finishing gracefully), and `varvemem worker`s draining one inbox, killed
with -9 mid-batch (with an event in flight and more leased) and taken over once their leases
ran out: every event still makes exactly one memory."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from tests.conftest import stores_of

from varvemem import Memory, Settings
from varvemem.stores.base import InboxEvent

from .test_cli import run
from .test_server import free_port

SECRET = "generic-secret-1"
CONFIG = f"""
[webhooks]
lease_seconds = 2
poll_seconds = 0.05
batch_size = 4

[webhooks.sources.events]
kind = "generic"
tenant = "acme"
secret = "{SECRET}"
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}


def _home(tmp_path: Path, store: str = "") -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "varvemem.toml").write_text(store + CONFIG)
    run(home, "init")  # serve and worker open an existing home only
    return home


def _serve(home: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """`varvemem serve` on a free port, once /readyz answers."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "varvemem", "--home", str(home), "serve", "--port", str(port),
         *args], env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read() if proc.stderr else "serve exited")
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("serve did not come up")
        time.sleep(0.1)


def _stop(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    """SIGTERM, then a graceful exit (uvicorn re-raises the signal it caught: -SIGTERM), or a
    kill; returns the JSON lines it logged."""
    try:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) in (0, -signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    logs = proc.stderr.read() if proc.stderr else ""
    return [json.loads(line) for line in logs.splitlines() if line.startswith("{")]


def _signed(body: dict[str, object]) -> tuple[bytes, dict[str, str]]:
    raw = json.dumps(body).encode()
    sig = hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
    return raw, {"X-Varvemem-Signature": f"sha256={sig}", "Content-Type": "application/json"}


def test_keys_commands(tmp_path: Path) -> None:
    home = _home(tmp_path)
    created = json.loads(run(home, "keys", "create", "--tenant", "acme", "--role", "read",
                             "--name", "grafana", "--json").stdout)
    assert created["key"].startswith(f"msk_{created['key_id']}_")
    listed = json.loads(run(home, "keys", "list", "--json").stdout)
    assert [(k["key_id"], k["tenant"], k["role"], k["name"]) for k in listed] == [
        (created["key_id"], "acme", "read", "grafana")]
    assert created["key"] not in run(home, "keys", "list").stdout  # never shown again
    assert "revoked" in run(home, "keys", "revoke", created["key_id"]).stdout
    assert json.loads(run(home, "keys", "list", "--json").stdout)[0]["revoked_at"]
    bad = run(home, "keys", "create", "--tenant", "acme", "--role", "root", ok=False)
    assert bad.returncode == 1 and "role must be one of" in bad.stderr
    assert "no API key" in run(home, "keys", "revoke", "0" * 16, ok=False).stderr


def test_inbox_commands_list_and_retry_failed_events(tmp_path: Path) -> None:
    home = _home(tmp_path)
    with Memory(settings=Settings.load(home=home)) as mem:
        stores_of(mem).records.enqueue_event(InboxEvent(
            event_id=0, tenant="acme", source="events", kind="generic", delivery="broken",
            body="[1]", headers={}, received_at=mem.clock()))
    run(home, "worker", "--once")
    [failed] = json.loads(run(home, "inbox", "list", "--tenant", "acme", "--status", "failed",
                              "--json").stdout)
    assert failed["delivery"] == "broken" and failed["error"]
    assert "re-armed 0" in run(home, "inbox", "retry", "--tenant", "globex").stdout
    out = run(home, "inbox", "retry", str(failed["event_id"]), "--tenant", "acme").stdout
    assert f"re-armed 1 failed event(s): {failed['event_id']}" in out
    [pending] = json.loads(run(home, "inbox", "list", "--tenant", "acme", "--json").stdout)
    assert (pending["status"], pending["attempts"]) == ("pending", 0)
    assert "broken" in run(home, "inbox", "list", "--tenant", "acme").stdout


def _count(metrics: str, route: str) -> float:
    """Requests to ``route`` in a Prometheus exposition, over every method and status."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if line.startswith("varvemem_http_request_duration_seconds_count{")
               and f'route="{route}"' in line)


@pytest.mark.slow
def test_serve_with_two_worker_processes(tmp_path: Path) -> None:
    home = _home(tmp_path)
    key = json.loads(run(home, "keys", "create", "--tenant", "acme", "--json").stdout)["key"]
    proc, url = _serve(home, "--workers", "2", "--log-level", "warning")
    auth = {"Authorization": f"Bearer {key}"}
    try:
        ids = [httpx.post(f"{url}/v1/memories", json={"content": f"fact number {i} of ten"},
                          headers=auth, timeout=60).json()["memory_id"] for i in range(10)]
        # Whichever process answers, it sees what the other wrote (one store).
        for mid in ids:
            assert httpx.get(f"{url}/v1/memories/{mid}", headers=auth).status_code == 200
        assert httpx.get(f"{url}/v1/stats", headers=auth).json()["current"] == 10
        # Whichever process is scraped, the counts are both processes' together.
        for _ in range(4):
            assert _count(httpx.get(f"{url}/metrics").text, "/v1/memories/{memory_id}") == 10
    finally:
        lines = _stop(proc)
    # --log-level reached the worker processes: no request was logged at info.
    assert not [entry for entry in lines if entry.get("route")], lines[-5:]


def test_serve_refuses_an_unknown_log_level(tmp_path: Path) -> None:
    bad = run(_home(tmp_path), "serve", "--log-level", "loud", ok=False)
    assert bad.returncode == 1 and "--log-level 'loud'" in bad.stderr


@pytest.mark.slow
def test_serve_accepts_webhooks_and_stops_gracefully(tmp_path: Path) -> None:
    home = _home(tmp_path)
    key = json.loads(run(home, "keys", "create", "--tenant", "acme", "--json").stdout)["key"]
    proc, url = _serve(home)
    try:
        raw, headers = _signed({"type": "deploy", "status": "failed", "id": "ev-1",
                                "message": "checkout deploy failed: quota exceeded"})
        resp = httpx.post(f"{url}/v1/webhooks/events", content=raw, headers=headers)
        assert resp.status_code == 202, resp.text
        auth = {"Authorization": f"Bearer {key}"}
        deadline = time.monotonic() + 30
        while not httpx.post(f"{url}/v1/search", json={"query": "quota exceeded"},
                             headers=auth).json()["hits"]:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        lines = _stop(proc)
    assert any(entry.get("route") == "/v1/webhooks/{source}" and entry.get("status") == 202
               for entry in lines), lines[-5:]
    assert lines[-1]["message"].startswith("varvemem stopped"), lines[-5:]


class _EmbedGate:
    """An OpenAI-compatible ``/embeddings`` endpoint on loopback for the worker processes: a
    fixed random unit vector per text (near-orthogonal: no two events look alike). A worker
    is told by its API key; a victim's (``victim-*``) request for an event text beyond its
    first ``free`` is held until :meth:`open`, so it dies with that event in flight and the
    rest of its batch still leased."""

    def __init__(self, free: int) -> None:
        self.free = free
        self.lock = threading.Lock()
        self.answered: dict[str, set[str]] = {}  # key -> the event texts it was given vectors for
        self.held: dict[str, str] = {}  # victim key -> the event text it waits on
        self.gate = threading.Event()
        gate = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if not gate.admit(key, body["input"]):
                    gate.gate.wait(120)
                data = [{"index": i, "embedding": _vector(t)} for i, t in enumerate(body["input"])]
                raw = json.dumps({"data": data}).encode()
                with contextlib.suppress(OSError):  # a killed victim hung up
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def admit(self, key: str, texts: list[str]) -> bool:
        """False: hold this request (a victim past its free event texts)."""
        with self.lock:
            seen = self.answered.setdefault(key, set())
            new = [t for t in texts if "module m" in t and t not in seen]
            if key.startswith("victim") and new and len(seen) >= self.free:
                self.held.setdefault(key, new[0])
                return False
            seen.update(new)
            return True

    def open(self) -> None:
        self.gate.set()

    def close(self) -> None:
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()


def _vector(text: str, dim: int = 64) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    return [float(x) for x in np.random.default_rng(seed).standard_normal(dim)]


def _until(what: str, check: Callable[[], Any], timeout: float,
           procs: Sequence[subprocess.Popen[str]] = ()) -> Any:
    """Poll ``check`` until it returns something true, or fail loudly at the deadline (or as
    soon as one of ``procs`` died on its own)."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        for p in procs:
            if p.poll() is not None:
                raise AssertionError(f"{what}: worker {p.pid} exited with {p.returncode}: "
                                     f"{p.stderr.read()[-3000:] if p.stderr else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_workers_killed_mid_batch_still_make_each_memory_once(
        tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    """Two workers each lease a batch, make ``free`` memories of it and are killed with -9
    while embedding the next event (held by the endpoint, so the kill always lands there);
    two more take over the leased rest once the leases run out. Every event is done once."""
    free, batch, n = 2, 4, 24  # batch: webhooks.batch_size in CONFIG
    gate = _EmbedGate(free)
    request.addfinalizer(gate.close)
    store = ""
    if backend == "postgres":  # workers that could be on several machines, sharing one store
        url, schema = request.getfixturevalue("pg_url"), request.getfixturevalue("pg_schema")
        store = f'[store]\nurl = "{url}"\n[store.postgresql]\nschema = "{schema}"\n'
    # One event per embedder batch, so per transaction: a worker's batch is done event by event.
    store += (f'[embedder]\nname = "openai"\nurl = "{gate.url}"\nmodel = "gate"\n'
              'batch_size = 1\ntimeout = 120\n')
    home = _home(tmp_path, store)
    settings = Settings.load(home=home, server={"process_inbox": False})
    assert (settings.webhooks.batch_size, settings.webhooks.lease_seconds) == (batch, 2)
    with Memory(settings=settings) as mem:
        for i in range(n):
            raw, headers = _signed({"type": "build", "status": "failed", "id": f"build-{i}",
                                    "message": f"build {i} failed in module m{i}"})
            assert mem.inbox.receive("events", raw, headers).event_id

    reader = Memory(settings=settings)
    request.addfinalizer(reader.close)

    def inbox() -> list[InboxEvent]:
        return reader.inbox.events(tenant="acme", limit=1000)

    def start(key: str, lease: float) -> subprocess.Popen[str]:
        env = {**_env(), "VARVEMEM_EMBEDDER__API_KEY": key,
               "VARVEMEM_WEBHOOKS__LEASE_SECONDS": str(lease)}
        return subprocess.Popen(
            [sys.executable, "-m", "varvemem", "--home", str(home), "worker", "--interval",
             "3600"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    host = socket.gethostname()
    # The victims lease for 8 s (the survivors for 2): the first one held keeps its leases
    # while the other starts, so neither takes over the other's batch before the kill.
    victim_lease = 8.0
    victims = [start(f"victim-{i}", victim_lease) for i in range(2)]
    names = {f"{host}:{v.pid}" for v in victims}

    def mid_batch() -> list[InboxEvent] | None:
        """The inbox once each victim has done ``free`` events, holds the rest of its batch
        and waits on the next one's vectors."""
        if len(gate.held) < len(victims):
            return None
        events = inbox()
        for name in names:
            mine = [e for e in events if e.worker == name]
            if (sum(e.status == "done" for e in mine) != free
                    or sum(e.status == "processing" for e in mine) != batch - free):
                return None
        return events

    try:
        before = _until("the victims hold part of a batch", mid_batch, 90, victims)
    finally:
        for v in victims:
            os.kill(v.pid, signal.SIGKILL)
            v.wait()
    assert [v.returncode for v in victims] == [-signal.SIGKILL] * 2
    # The kill landed mid-batch: each victim had done some events and leased others.
    done_by_victims = {e.event_id for e in before if e.worker in names and e.status == "done"}
    leased = {e.event_id: e for e in before if e.worker in names and e.status == "processing"}
    assert len(done_by_victims) == 2 * free and len(leased) == 2 * (batch - free)
    assert all(e.lease_until is not None and e.attempts == 1 for e in leased.values())
    in_flight = set(gate.held.values())
    assert len(in_flight) == 2
    gate.open()  # what the dead victims asked for is answered to no one

    def drained() -> list[InboxEvent] | None:
        events = inbox()
        return events if all(e.status == "done" for e in events) else None

    survivors = [start("survivor", 2.0) for _ in range(2)]
    try:
        after = _until("the survivors drain the inbox", drained, 90, survivors)
    finally:
        for w in survivors:
            w.send_signal(signal.SIGTERM)
        codes = [w.wait(timeout=60) for w in survivors]
    assert codes == [0, 0], [w.stderr.read()[-2000:] if w.stderr else "" for w in survivors]
    survivor_names = {f"{host}:{w.pid}" for w in survivors}
    by_id = {e.event_id: e for e in after}
    assert len(by_id) == n and all(e.status == "done" and e.memory_ids for e in after)
    # What the victims had leased was taken over after its lease: a second attempt each.
    for event_id, held in leased.items():
        took = by_id[event_id]
        assert took.attempts == 2 and took.worker in survivor_names, (held, took)
        assert held.lease_until is not None and took.processed_at is not None
        assert took.processed_at >= held.lease_until, (held, took)
    # Every other event was attempted once, and the victims' done ones were not redone.
    for event_id, e in by_id.items():
        if event_id not in leased:
            assert e.attempts == 1, e
    assert {i for i, e in by_id.items() if e.worker in names} == done_by_victims

    with Memory(settings=settings) as mem:
        memories = mem.get_all(tenant="acme", types=["event"], limit=1000)
    per_event = Counter(m.metadata["webhook"]["event_id"] for m in memories)
    assert set(per_event) == set(by_id) and set(per_event.values()) == {1}, per_event
    assert Counter(m.metadata["webhook"]["delivery"] for m in memories).most_common(1)[0][1] == 1
    assert {mid for e in after for mid in e.memory_ids} == {m.memory_id for m in memories}
    # The events in flight at the kill have their memory, once (no half-written one left).
    assert sum(any(t.startswith(m.content) for t in in_flight) for m in memories) == 2
