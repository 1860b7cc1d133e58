"""The service under load, over real HTTP on loopback (`varvemem serve` as a subprocess).

1. **Webhooks**: ``--events`` signed generic events sent by ``--concurrency`` clients as fast as
   the server takes them: accepted per second and accept latency (p50/p95), then how long the
   inbox takes to turn them all into memories (processed per second). Two set-ups side by side
   in one run: the server draining its own inbox, and the server plus one ``varvemem worker``
   process (``server.process_inbox = false``).
2. **Search at ``--size`` memories**: the home is filled with ``--size`` synthetic memories
   (bench_core's generator, embedded once), then ``--concurrency`` clients search for
   ``--seconds``: requests per second and p50/p95, beside the same queries through the library
   in one process (the HTTP overhead is the ratio).

    .venv/bin/python bench/bench_service.py --events 2000 --size 100000 --json out.json

``--home DIR`` searches a home filled before (the same texts: ``bench_ui.py --keep DIR``).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import hashlib  # noqa: E402
import hmac  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import httpx  # noqa: E402
import numpy as np  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_core import _lat, _log, library_fingerprint, make_queries, make_texts  # noqa: E402
from bench_scale import _now_utc, machine  # noqa: E402

SECRET = "bench-secret-0123"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(process_inbox: bool, workers: int = 1) -> str:
    return (f"[server]\nprocess_inbox = {str(process_inbox).lower()}\nlog_json = true\n"
            f"workers = {workers}\n\n"
            "[webhooks]\npoll_seconds = 0.05\n\n[webhooks.sources.events]\n"
            f'kind = "generic"\ntenant = "bench"\nsecret = "{SECRET}"\n')


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}


def _start(home: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "varvemem", "--home", str(home), "serve",
                             "--port", str(port), "--log-level", "warning"], env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise SystemExit("varvemem serve exited")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("varvemem serve did not come up")
        time.sleep(0.2)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def _send_events(url: str, n: int, concurrency: int, tag: str) -> dict[str, Any]:
    bodies = []
    for i in range(n):
        raw = json.dumps({"type": "build", "status": "failed" if i % 3 == 0 else "succeeded",
                          "id": f"{tag}-{i}", "message": f"build {i} of service s{i % 50}: "
                          f"step {i % 7} exited with code {i % 5}"}).encode()
        sig = hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
        bodies.append((raw, {"Content-Type": "application/json",
                             "X-Varvemem-Signature": f"sha256={sig}",
                             "X-Delivery-Id": f"{tag}-{i}"}))
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    queue: asyncio.Queue[tuple[bytes, dict[str, str]]] = asyncio.Queue()
    for item in bodies:
        queue.put_nowait(item)

    async def client(c: httpx.AsyncClient) -> None:
        while not queue.empty():
            raw, headers = queue.get_nowait()
            t = time.perf_counter()
            resp = await c.post(f"{url}/v1/webhooks/events", content=raw, headers=headers)
            latencies.append(time.perf_counter() - t)
            statuses[resp.status_code] = statuses.get(resp.status_code, 0) + 1

    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as c:
        t = time.perf_counter()
        await asyncio.gather(*(client(c) for _ in range(concurrency)))
        seconds = time.perf_counter() - t
    return {"sent": n, "statuses": statuses, "accept_seconds": round(seconds, 2),
            "accepted_per_s": round(statuses.get(202, 0) / seconds, 1),
            "accept_latency": _lat(latencies)}


def _wait_processed(url: str, n: int, start: float) -> float:
    while True:
        inbox = httpx.get(f"{url}/readyz", timeout=30).json()["inbox"]
        if inbox.get("done", 0) + inbox.get("failed", 0) >= n:
            return time.perf_counter() - start
        time.sleep(0.1)


def bench_webhooks(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for setup in ("server drains", "server + 1 worker"):
        home = work / setup.replace(" ", "-").replace("+", "and")
        home.mkdir()
        (home / "varvemem.toml").write_text(_config(setup == "server drains"))
        port = _free_port()
        proc = _start(home, port)
        worker = None
        if setup != "server drains":
            worker = subprocess.Popen([sys.executable, "-m", "varvemem", "--home", str(home),
                                       "worker", "--interval", "3600"], env=_env(),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            start = time.perf_counter()
            sent = asyncio.run(_send_events(url, args.events, args.concurrency, "e"))
            total = _wait_processed(url, args.events, start)
            sent["processed_seconds"] = round(total, 2)
            sent["processed_per_s"] = round(args.events / total, 1)
            # A redelivery of every event: acknowledged as duplicates, nothing new.
            again = asyncio.run(_send_events(url, min(args.events, 200), args.concurrency, "e"))
            sent["redelivered_statuses"] = again["statuses"]
            out[setup] = sent
            _log(f"webhooks, {setup}: {sent['accepted_per_s']}/s accepted "
                 f"(p95 {sent['accept_latency']['p95_ms']} ms), {sent['processed_per_s']}/s "
                 f"processed, statuses {sent['statuses']}")
        finally:
            if worker is not None:
                worker.terminate()
                worker.wait(60)
            _stop(proc)
    return out


async def _search_load(url: str, key: str, queries: list[str], concurrency: int,
                       seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    errors = 0
    stop_at = time.perf_counter() + seconds
    headers = {"Authorization": f"Bearer {key}"}

    async def client(c: httpx.AsyncClient, offset: int) -> None:
        nonlocal errors
        i = offset
        while time.perf_counter() < stop_at:
            t = time.perf_counter()
            resp = await c.post(f"{url}/v1/search", json={"query": queries[i % len(queries)],
                                                          "top_k": 10}, headers=headers)
            latencies.append(time.perf_counter() - t)
            errors += resp.status_code != 200
            i += concurrency

    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency),
                                 timeout=120) as c:
        t = time.perf_counter()
        await asyncio.gather(*(client(c, k) for k in range(concurrency)))
        elapsed = time.perf_counter() - t
    return {"requests": len(latencies), "errors": errors,
            "per_s": round(len(latencies) / elapsed, 1), "latency": _lat(latencies)}


def bench_search(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from varvemem import Memory, Settings
    from varvemem.embeddings.usem3 import USEEmbedder

    home = args.home or work / "search"
    home.mkdir(exist_ok=True)
    (home / "varvemem.toml").write_text(_config(True, args.workers))
    emb = USEEmbedder()
    queries = make_queries(args.queries)
    with Memory(settings=Settings.load(home=home), embedder=emb) as mem:
        held = mem.stats(tenant="bench")["memories"]
        if held:  # --home: a home filled before (bench_ui --keep fills the same texts)
            _log(f"reusing {home}: {held:,} memories")
        else:
            texts = make_texts(args.size)
            t = time.perf_counter()
            vectors = np.concatenate([emb.embed_documents(texts[i : i + 64])
                                      for i in range(0, len(texts), 64)])
            _log(f"embedded {args.size:,} texts in {time.perf_counter() - t:.0f} s")
            for i in range(0, args.size, 5000):
                mem.add_many([{"content": c, "tenant": "bench"} for c in texts[i : i + 5000]],
                             vectors=vectors[i : i + 5000])
            _log(f"filled {args.size:,} memories")
        key = mem.keys.create("bench", "read")[1]
        for q in queries[:20]:  # warm: the index and the model are loaded
            mem.search(q, tenant="bench")
        lib: list[float] = []
        t = time.perf_counter()
        for q in queries:
            s = time.perf_counter()
            mem.search(q, top_k=10, tenant="bench")
            lib.append(time.perf_counter() - s)
        library = {"requests": len(lib), "per_s": round(len(lib) / (time.perf_counter() - t), 1),
                   "latency": _lat(lib)}
    port = _free_port()
    proc = _start(home, port)
    try:
        url = f"http://127.0.0.1:{port}"
        asyncio.run(_search_load(url, key, queries[:20], 1, 3))  # warm the server
        one = asyncio.run(_search_load(url, key, queries, 1, args.seconds))
        many = asyncio.run(_search_load(url, key, queries, args.concurrency, args.seconds))
    finally:
        _stop(proc)
    out = {"library, 1 caller": library, "http, 1 client": one,
           f"http, {args.concurrency} clients": many,
           "ratio_http_p50_to_library_p50": round(one["latency"]["p50_ms"]
                                                  / library["latency"]["p50_ms"], 2)}
    _log(f"search at {args.size:,}: library p50 {library['latency']['p50_ms']} ms; http 1 "
         f"client {one['per_s']}/s p95 {one['latency']['p95_ms']} ms; {args.concurrency} "
         f"clients {many['per_s']}/s p95 {many['latency']['p95_ms']} ms")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--skip-webhooks", action="store_true")
    parser.add_argument("--workers", type=int, default=1, help="server processes (search)")
    parser.add_argument("--home", type=Path, metavar="DIR",
                        help="search this home (filled once, e.g. by bench_ui.py --keep)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="varvemem-service-"))
    out: dict[str, Any] = {"library": library_fingerprint(), "machine": machine(),
                           "started": _now_utc(),
                           "command": "python bench/bench_service.py " + " ".join(sys.argv[1:])}
    try:
        if not args.skip_webhooks:
            out["webhooks"] = bench_webhooks(args, work)
        if not args.skip_search:
            out["search"] = bench_search(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["finished"] = _now_utc()
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
