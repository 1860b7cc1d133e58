"""The README's snippets run as written, each in an empty folder, as a newcomer would run them.

Fenced ``python`` and ``bash`` blocks are run; ``console`` blocks (install lines, commands shown
with their output) and ``toml`` blocks are not. Nothing may be written to the user's home.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def _blocks(lang: str) -> list[str]:
    return [body for kind, body in _FENCE.findall(README.read_text("utf-8")) if kind == lang]


def _env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The caller's environment without VARVEMEM_*, the venv's scripts first on PATH, and a
    fake empty HOME to prove the snippet leaves the real one alone."""
    home = tmp_path / "user-home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    env["HOME"] = str(home)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "80"
    return env, home


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=240)
    finally:  # a server a snippet started in the background goes with the snippet
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def test_the_readme_has_snippets_to_run() -> None:
    assert len(_blocks("python")) >= 2 and len(_blocks("bash")) >= 3
    snippets = "\n".join(_blocks("python") + _blocks("bash"))
    assert all(line in snippets for line in CLAIMS)  # every claim is still in the README


# What the README's comments say a snippet shows, checked on its output (keyed by a line of it).
CLAIMS = {
    'mem.add("The staging cluster is now eks-stg-3")':  # the current fact ranks first
        lambda out: "now eks-stg-3" in out.splitlines()[0],
    'print(mem.ask("工单怎么提交？").route)': lambda out: out.splitlines()[-1] == "reuse",
    'varvemem search "staging cluster" --as-of 2020-01-01':
        lambda out: "no memories found" in out and "is eks-stg-2" not in out,
}


def _check_claims(snippet: str, out: str) -> None:
    for line, holds in CLAIMS.items():
        if line in snippet:
            assert holds(out), f"the README says more than {line!r} shows:\n{out}"


def _run_snippet(tmp_path: Path, lang: str, index: int, cmd: list[str]
                 ) -> subprocess.CompletedProcess[str]:
    """Run README block ``index`` of ``lang`` (``cmd``) in an empty folder; it must succeed
    and leave the user's home alone."""
    work = tmp_path / "work"
    work.mkdir()
    env, home = _env(tmp_path)
    proc = _run(cmd, work, env)
    assert proc.returncode == 0, f"README {lang} block {index}:\n{cmd[-1]}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr
    assert list(home.iterdir()) == [], "the snippet wrote to the user's home"
    assert (work / "memory").is_dir()
    _check_claims(cmd[-1], proc.stdout)
    return proc


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_snippet_runs_in_an_empty_folder(tmp_path: Path, index: int) -> None:
    _run_snippet(tmp_path, "python", index, [sys.executable, "-c", _blocks("python")[index]])


@pytest.mark.parametrize("index", range(len(_blocks("bash"))))
def test_shell_snippet_runs_in_an_empty_folder(tmp_path: Path, index: int) -> None:
    script = _blocks("bash")[index].replace("8765", str(_free_port()))
    proc = _run_snippet(tmp_path, "bash", index, ["bash", "-euo", "pipefail", "-c", script])
    if "curl" in script:  # the service flow: the key's tenant finds what the CLI added
        answers = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        assert answers, proc.stdout
        assert any("eks-stg-3" in h["content"] for h in answers[-1]["hits"]), proc.stdout
