"""The service as processes: `varvemem keys`, `varvemem serve` (webhooks acknowledged once
committed, SIGTERM finishing gracefully), and `varvemem worker`s draining one inbox, killed
with -9 mid-batch and restarted: every event still makes exactly one memory."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import stores_of

from varvemem import Memory, Settings

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
    from varvemem.stores.base import InboxEvent

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


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_workers_killed_mid_batch_still_make_each_memory_once(
        tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    store = ""
    if backend == "postgres":  # workers that could be on several machines, sharing one store
        url, schema = request.getfixturevalue("pg_url"), request.getfixturevalue("pg_schema")
        store = f'[store]\nurl = "{url}"\npg_schema = "{schema}"\n'
    home = _home(tmp_path, store)
    settings = Settings.load(home=home, server={"process_inbox": False})
    n = 40
    with Memory(settings=settings) as mem:
        for i in range(n):
            raw, headers = _signed({"type": "build", "status": "failed", "id": f"build-{i}",
                                    "message": f"build {i} failed in module m{i}"})
            assert mem.inbox.receive("events", raw, headers).event_id
    cmd = [sys.executable, "-m", "varvemem", "--home", str(home), "worker", "--interval", "3600"]
    # Two workers share the inbox; each is killed with -9 while it works, twice over.
    for _ in range(2):
        workers = [subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True) for _ in range(2)]
        time.sleep(4)
        for w in workers:
            os.kill(w.pid, signal.SIGKILL)
            w.wait()
        with Memory(settings=settings) as mem:
            counts = mem.inbox.counts()
        if counts.get("done", 0) == n:
            break
    # A last worker (after the dead ones' leases ran out) drains the rest.
    time.sleep(2.5)
    run(home, "worker", "--once")
    with Memory(settings=settings) as mem:
        events = mem.inbox.events(tenant="acme", limit=1000)
        assert [e.status for e in events] == ["done"] * n
        memories = mem.get_all(tenant="acme", types=["event"], limit=1000)
    per_event = Counter(m.metadata["webhook"]["event_id"] for m in memories)
    assert len(per_event) == n and set(per_event.values()) == {1}
    assert {e.memory_ids[0] for e in events} == {m.memory_id for m in memories}
