"""The suite's own rules (tests/conftest.py) hold: offline here and in child processes, no
project variable reaches a test, no skip under CI. None of these needs the network: a refused
connection never leaves the machine, and the addresses tried are documentation-only ones."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
import pytest
import varvemem_offline_guard as guard

ROOT = Path(__file__).resolve().parents[2]
PROBES = ROOT / "tests" / "_probes"
FOREIGN = [("192.0.2.1", 80), ("2001:db8::1", 443), ("203.0.113.7", 5432)]  # RFC 5737 / 3849


@pytest.mark.parametrize("host,port", FOREIGN)
def test_connections_to_other_hosts_are_refused_in_process(network_refusals, host: str,
                                                           port: int) -> None:
    with pytest.raises(guard.NetworkBlockedError, match=rf"connection to {host}:{port} refused"):
        socket.create_connection((host, port), timeout=1)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        with pytest.raises(OSError, match=rf"offline: connection to {host}:{port}"):
            s.connect((host, port))
        with pytest.raises(OSError, match=rf"offline: connection to {host}:{port}"):
            s.connect_ex((host, port))
    with socket.socket(family, socket.SOCK_DGRAM) as s, pytest.raises(OSError, match=host):
        s.sendto(b"x", (host, port))
    assert len(network_refusals.take()) == 4


def test_name_lookups_of_other_hosts_are_refused(network_refusals) -> None:
    for lookup in (lambda: socket.getaddrinfo("example.com", 443),
                   lambda: socket.gethostbyname("pypi.org"),
                   lambda: socket.gethostbyname_ex("api.openai.com")):
        with pytest.raises(socket.gaierror, match=r"offline: name lookup to \S+ refused"):
            lookup()
    with pytest.raises(httpx.ConnectError, match=r"offline: .*example\.org:443 refused"):
        httpx.get("https://example.org/", timeout=2)  # what a library on top sees
    assert any("example.com:443" in r for r in network_refusals.take())


def test_loopback_and_unix_sockets_stay_open(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        socket.create_connection(("127.0.0.1", port), timeout=5).close()  # the backlog accepts
        socket.create_connection(("localhost", port), timeout=5).close()
    assert socket.getaddrinfo("localhost", 80)
    assert socket.getaddrinfo("127.5.6.7", 80) and socket.getaddrinfo(None, 80)
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen()
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
    for host in ("127.0.0.1", "127.255.0.1", "::1", "[::1]", "localhost", "LOCALHOST.",
                 "db.localhost", "::ffff:127.0.0.1", "0.0.0.0", b"localhost"):
        assert guard.is_local(host), host
    for host in ("192.0.2.1", "10.0.0.1", "::ffff:192.0.2.1", "fe80::1%eth0", "example.com",
                 "localhost.example.com", "127.0.0.1.nip.io"):
        assert not guard.is_local(host), host


CHILD = textwrap.dedent("""
    import socket, sys
    out = []
    for attempt in (lambda: socket.create_connection(("192.0.2.1", 80), timeout=1),
                    lambda: socket.getaddrinfo("example.com", 443)):
        try:
            attempt()
            out.append("CONNECTED")
        except OSError as exc:
            out.append(f"{type(exc).__name__}: {exc}")
    print("\\n".join(out))
""")


def test_child_python_processes_are_offline_too(network_refusals) -> None:
    assert str(guard.__file__).startswith(str(ROOT / "tests" / "_offline"))
    # As the CLI, server and MCP tests start theirs: the environment minus VARVEMEM_*.
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("NetworkBlockedError: ") and "192.0.2.1:80 refused" in lines[0]
    assert lines[1].startswith("LookupBlockedError: ") and "example.com:443" in lines[1]
    seen = network_refusals.take()  # the child's refusals reach the parent's check
    assert len(seen) == 2 and all(f"pid {os.getpid()}" not in r for r in seen), seen


# --- the rules, seen from a child pytest ------------------------------------------------------


def run_probes(tmp_path: Path, ci: bool, **env: str) -> tuple[dict[str, tuple[str, str]], str]:
    """Runs tests/_probes in a child pytest (CI set or not); each probe's outcome and message."""
    child_env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        child_env["CI"] = "true"
    child_env.update(env)
    xml = tmp_path / f"probes-{ci}.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--continue-on-collection-errors",
         f"--junitxml={xml}", "-o", "junit_family=xunit2", str(PROBES / "probe_guards.py"),
         str(PROBES / "probe_module_skip.py")],
        cwd=ROOT, env=child_env, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    outcomes: dict[str, tuple[str, str]] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name") or case.get("classname") or "?"
        kinds = [(child.tag, (child.get("message") or "") + (child.text or ""))
                 for child in case if child.tag in ("failure", "error", "skipped")]
        outcome = kinds[0] if kinds else ("passed", "")
        if name in outcomes and outcome[0] == "passed":
            continue  # a test failing at teardown is reported twice: keep the failure
        outcomes[name] = outcome
    return outcomes, proc.stdout


@pytest.fixture(scope="module")
def probe_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Any]:
    tmp = tmp_path_factory.mktemp("probes")
    leak = tmp / "leaked.db"
    exported = {"VARVEMEM_STORE__URL": f"sqlite:///{leak}", "VARVEMEM_STORE_URL": f"sqlite:///{leak}",
                "VARVEMEM_HOME": str(tmp / "exported-home"), "VARVEMEM_TEST_PROBE_LEAK_FILE": str(leak)}
    runs = {ci: run_probes(tmp, ci, **exported) for ci in (True, False)}
    assert not leak.exists() and not (tmp / "exported-home").exists()
    return runs


SKIPS = {"test_probe_skip_in_the_body": "probe: a skip in the body",
         "test_probe_skip_mark": "probe: a skip mark",
         "test_probe_skipif_mark": "probe: a skipif mark",
         "test_probe_skip_in_a_fixture": "probe: a skip in a fixture"}


def test_exported_project_variables_never_reach_a_test(probe_runs) -> None:
    for ci in (True, False):
        outcomes, out = probe_runs[ci]
        assert outcomes["test_probe_exported_variables_do_not_reach_a_memory"] == ("passed", ""), out
        assert outcomes["test_probe_environment_set_by_a_test_is_undone_2"] == ("passed", ""), out
        assert outcomes["test_probe_passes"] == ("passed", "")


def test_under_ci_every_skip_fails_with_its_reason(probe_runs) -> None:
    outcomes, _ = probe_runs[True]
    for name, reason in SKIPS.items():
        kind, message = outcomes[name]
        assert kind in ("failure", "error") and "skipped under CI" in message, (name, kind, message)
        assert reason in message, (name, message)
    module = [v for k, v in outcomes.items() if "probe_module_skip" in k]
    assert len(module) == 1, outcomes
    kind, message = module[0]
    assert kind == "error" and "skipped under CI" in message
    assert "probe: a module-level importorskip" in message


def test_outside_ci_skips_skip_and_say_why(probe_runs) -> None:
    outcomes, out = probe_runs[False]
    for name, reason in SKIPS.items():
        assert outcomes[name][0] == "skipped", (name, outcomes[name])
        assert reason in out  # -rs in addopts: the short summary gives each reason
    assert "probe: a module-level importorskip" in out
    assert not [k for k in outcomes if "probe_module_skip" in k and outcomes[k][0] == "error"]


def test_a_swallowed_refusal_still_fails_the_test(probe_runs) -> None:
    for ci in (True, False):
        kind, message = probe_runs[ci][0]["test_probe_swallowed_refusal"]
        assert kind == "error" and "tried to reach the network" in message, (kind, message)
        assert "connection to 192.0.2.1:80 refused" in message
