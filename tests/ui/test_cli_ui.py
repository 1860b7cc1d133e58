"""``varvemem ui`` as a process: it serves the inspector on loopback and prints a one-time
login link that logs a browser in as the default tenant's admin; a second run reuses the key."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from tests.e2e.test_server import free_port

from varvemem import Memory, Settings


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}


def _start(home: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "varvemem", "ui", "--home", str(home), "--port",
         str(free_port())], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    assert proc.stdout is not None
    link = proc.stdout.readline().strip()
    assert link.startswith("http://127.0.0.1:") and "/ui/login?token=" in link, link
    base = link.split("/ui/")[0]
    deadline = time.monotonic() + 90
    while True:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "ui exited"
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc, link
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "varvemem ui did not come up"
        time.sleep(0.1)


def _stop(proc: subprocess.Popen[str]) -> None:
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_printed_link_logs_in_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    subprocess.run([sys.executable, "-m", "varvemem", "init", "--home", str(home)], env=_env(),
                   check=True, capture_output=True)
    proc, link = _start(home)
    try:
        base = link.split("/ui/")[0]
        with httpx.Client(base_url=base, follow_redirects=True, timeout=30) as browser:
            overview = browser.get(link)
            assert overview.status_code == 200 and str(overview.url) == f"{base}/ui"
            assert "tenant <b>default</b>" in overview.text and "role-admin" in overview.text
        with httpx.Client(timeout=30) as other:
            again = other.get(link)
            assert again.status_code == 403 and "unknown, used or expired" in again.text
    finally:
        _stop(proc)
    assert (home / "ui-admin.key").stat().st_mode & 0o077 == 0
    proc, _ = _start(home)  # the same key again
    _stop(proc)
    with Memory(settings=Settings.load(home=home)) as mem:
        keys = mem.keys.list("default")
    assert [(k.role, k.name) for k in keys] == [("admin", "varvemem ui")]
