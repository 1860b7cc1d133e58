"""The core benchmark on the server stacks beside the embedded default, in one run.

Stacks (``--stacks``):

- ``embedded``: SQLite, the local vector index, the store as the short-term cache (default);
- ``pg+milvus+redis``: PostgreSQL (``--pg-url``), a Milvus standalone server (the ``milvus``
  PyPI package's Milvus 2.3 with its embedded etcd, started here on loopback ports) and Redis
  (``--redis-url``);
- ``pg+pgvector+redis``: PostgreSQL with the pgvector extension for the vectors, and Redis.

``--size`` synthetic memories (bench_core's generator) are embedded once with the default
embedder (its throughput is reported); then each stack gets them through
``add_many(texts, vectors=...)`` into an empty store (the add path without the embedding, which
is the same for every stack: add with embedding = embedding + this). Then every stack is
reopened and the ``--queries`` searches run round-robin over the stacks (so machine noise hits
all alike), with the query embedding (``search(q)``) and without (``query_vector``): p50/p95.
Ratios are against ``embedded``. Each stack's result is appended to ``--jsonl`` as it lands.

    .venv/bin/python bench/bench_stack.py --size 100000 --json out.json
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_core import _lat, _log, library_fingerprint, make_queries, make_texts  # noqa: E402
from bench_scale import _now_utc, machine  # noqa: E402

STACKS = ("embedded", "pg+milvus+redis", "pg+pgvector+redis")
CHUNK = 5_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def milvus_standalone(work: Path) -> Iterator[str]:
    """A Milvus standalone (``milvus-server`` from the ``milvus`` package) until the block ends."""
    exe = shutil.which("milvus-server", path=os.path.dirname(sys.executable))
    if exe is None:
        raise SystemExit("milvus-server not found: pip install -e '.[dev]'")
    roles = ("proxy", "etcd", "root-coord", "query-coord", "query-node", "index-coord",
             "index-node", "data-coord", "data-node", "proxy-internal")
    ports = {r: _free_port() for r in roles}
    args = [exe, "--data", str(work / "milvus")]
    for role, port in ports.items():
        args += [f"--{role}-port", str(port)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    from pymilvus import MilvusClient

    deadline = time.monotonic() + 180
    while True:
        try:
            MilvusClient(f"http://127.0.0.1:{ports['proxy']}", timeout=2).list_collections()
            break
        except Exception:
            if proc.poll() is not None or time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                raise SystemExit("the Milvus standalone did not start") from None
            time.sleep(1)
    try:
        yield f"milvus://127.0.0.1:{ports['proxy']}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def stack_settings(name: str, args: argparse.Namespace, milvus: str | None,
                   run_id: str) -> dict[str, Any]:
    if name == "embedded":
        return {}
    store: dict[str, Any] = {"url": args.pg_url,
                             "postgresql": {"schema": f"bench_{run_id}_{name[3:6]}"},
                             "cache_url": args.redis_url, "redis": {"prefix": f"bench-{run_id}"}}
    if "milvus" in name:
        store.update(vector_url=milvus, milvus={"collection": f"bench_{run_id}"})
    else:
        store["vector_url"] = "pgvector"
    return {"store": store}


def cleanup(name: str, settings: dict[str, Any], milvus: str | None) -> None:
    store = settings.get("store")
    if not store:
        return
    import psycopg

    with psycopg.connect(store["url"], autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{store["postgresql"]["schema"]}" CASCADE')
    if milvus and "milvus" in name:
        from pymilvus import MilvusClient

        from varvemem.stores.milvus import milvus_uri

        client = MilvusClient(milvus_uri(milvus))
        for c in client.list_collections():
            if c.startswith(store["milvus"]["collection"]):
                client.drop_collection(c)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from varvemem import Memory, Settings
    from varvemem.embeddings.usem3 import USEEmbedder

    run_id = uuid.uuid4().hex[:8]
    work = Path(tempfile.mkdtemp(prefix="varvemem-stack-"))
    out: dict[str, Any] = {"size": args.size, "queries": args.queries, "stacks": {},
                           "library": library_fingerprint(), "machine": machine(),
                           "started": _now_utc(), "command": "python bench/bench_stack.py " +
                           " ".join(sys.argv[1:])}
    emb = USEEmbedder()
    texts = make_texts(args.size)
    queries = make_queries(args.queries)
    t = time.perf_counter()
    vectors = np.concatenate([emb.embed_documents(texts[i : i + 64])
                              for i in range(0, len(texts), 64)])
    embed_s = time.perf_counter() - t
    out["embed"] = {"seconds": round(embed_s, 1), "per_s": round(args.size / embed_s, 1)}
    _log(f"embedded {args.size:,} texts: {args.size / embed_s:.0f}/s")
    qvecs = np.stack([emb.embed_query(q) for q in queries])
    with contextlib.ExitStack() as stack:
        milvus = stack.enter_context(milvus_standalone(work)) \
            if any("milvus" in s for s in args.stacks) else None
        opened: dict[str, Any] = {}
        configs = {}
        for name in args.stacks:
            configs[name] = stack_settings(name, args, milvus, run_id)
            stack.callback(cleanup, name, configs[name], milvus)
            home = work / name.replace("+", "-")
            mem = Memory(settings=Settings.load(home=home, **configs[name]), embedder=emb)
            t = time.perf_counter()
            for i in range(0, len(texts), CHUNK):
                mem.add_many(texts[i : i + CHUNK], vectors=vectors[i : i + CHUNK])
                done = min(i + CHUNK, len(texts))
                _log(f"{name}: {done:,} added, {done / (time.perf_counter() - t):.0f}/s")
            add_s = time.perf_counter() - t
            t = time.perf_counter()
            mem.close()
            close_s = time.perf_counter() - t
            result = {"add_seconds": round(add_s, 1), "add_per_s": round(args.size / add_s, 1),
                      "close_s": round(close_s, 2), "settings": configs[name]}
            out["stacks"][name] = result
            _log(f"{name}: add_many with given vectors {args.size / add_s:.0f}/s")
            opened[name] = Memory(settings=Settings.load(home=home, **configs[name]),
                                  embedder=emb)
            stack.callback(opened[name].close)
            with (work / "partial.jsonl").open("a") as fh:
                fh.write(json.dumps({name: result}) + "\n")
        for mem in opened.values():  # warm up: model, index, connections
            for q in queries[:5]:
                mem.search(q)
        times: dict[str, dict[str, list[float]]] = {n: {"embed": [], "vector": []}
                                                     for n in opened}
        for q, v in zip(queries, qvecs):
            for name, mem in opened.items():
                t = time.perf_counter()
                mem.search(q)
                times[name]["embed"].append(time.perf_counter() - t)
                t = time.perf_counter()
                mem.search(q, query_vector=v)
                times[name]["vector"].append(time.perf_counter() - t)
        for name in opened:
            out["stacks"][name]["search_ms"] = _lat(times[name]["embed"])
            out["stacks"][name]["search_given_vector_ms"] = _lat(times[name]["vector"])
    base = out["stacks"].get("embedded")
    if base:
        for r in out["stacks"].values():
            r["vs_embedded"] = {
                "add_throughput": round(r["add_per_s"] / base["add_per_s"], 2),
                "search_p50": round(r["search_ms"]["p50_ms"] / base["search_ms"]["p50_ms"], 2),
                "search_p95": round(r["search_ms"]["p95_ms"] / base["search_ms"]["p95_ms"], 2)}
    out["finished"] = _now_utc()
    shutil.rmtree(work, ignore_errors=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--stacks", default=",".join(STACKS))
    ap.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.stacks = [s for s in args.stacks.split(",") if s]
    unknown = set(args.stacks) - set(STACKS)
    if unknown:
        ap.error(f"unknown stacks {sorted(unknown)} (known: {', '.join(STACKS)})")
    out = run(args)
    print(f"{'stack':<20} {'add/s':>8} {'search p50':>11} {'p95':>8} {'p50 given vector':>17}")
    for name, r in out["stacks"].items():
        print(f"{name:<20} {r['add_per_s']:>8.0f} {r['search_ms']['p50_ms']:>9.1f}ms "
              f"{r['search_ms']['p95_ms']:>6.1f}ms {r['search_given_vector_ms']['p50_ms']:>15.1f}ms"
              f"  {r.get('vs_embedded', '')}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
