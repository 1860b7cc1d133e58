"""Where the time of the core benchmark goes (a diagnostic companion of ``bench_core.py``).

It wraps internal methods of the library with timers at run time (nothing under ``src/`` is
changed) and reports inclusive time and call counts:

* ``--size N``: ``add_many(texts, vectors=...)`` into an empty home (vectors cached under
  ``--cache`` so a rerun skips embedding), then a per-component breakdown of ``--queries``
  searches on that home;
* ``--study N``: a home of N memories (vectors given): what fills the SQLite file, and search
  latency over ``--rounds`` rounds;
* ``--rss N``: peak RSS of one ``add_many`` call of N memories against calls of 1,000 (each in a
  fresh process);
* ``--overlap N``: ``add_many(texts)`` (embedding overlapped with storing in a worker thread, the
  library's way) against the same work done serially from outside (embed a batch, then
  ``add_many(batch, vectors=...)``), and with a shorter GIL switch interval.

    .venv/bin/python bench/profile_core.py --size 100000
    .venv/bin/python bench/profile_core.py --overlap 10000
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import _import_everything, library_fingerprint, make_queries, make_texts
from varvemem import Memory
from varvemem.engines.retrieval import RetrievalEngine
from varvemem.engines.update import UpdateEngine
from varvemem.engines.update.supersession import Supersession
from varvemem.stores import Stores
from varvemem.stores.local_vectors import LocalVectorIndex
from varvemem.stores.sqlite import SqliteStore

TIMES: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
WRAPPED: set[str] = set()


def wrap(cls: type, name: str, label: str | None = None) -> None:
    key = label or f"{cls.__name__}.{name}"
    if key in WRAPPED or not hasattr(cls, name):  # internals change; skip what is gone
        return
    WRAPPED.add(key)
    orig = getattr(cls, name)

    @functools.wraps(orig)
    def timed(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return orig(*a, **kw)
        finally:
            rec = TIMES[key]
            rec[0] += time.perf_counter() - t
            rec[1] += 1

    setattr(cls, name, timed)


def report(title: str, total: float, per: int = 1) -> None:
    print(f"\n{title} (inclusive; nested rows overlap; total {total:.2f}s)")
    for key, (sec, calls) in sorted(TIMES.items(), key=lambda kv: -kv[1][0]):
        extra = f"{sec / per * 1000:9.3f} ms/query" if per > 1 else ""
        print(f"  {key:<40} {sec:9.2f}s {sec / total:6.1%} {calls:9d} calls {extra}")
    TIMES.clear()


def vectors_for(texts: list[str], cache: Path) -> np.ndarray:
    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = cache / f"vectors-{len(texts)}-{key}.npy"
    if path.exists():
        return np.load(path)
    for other in sorted(cache.glob("vectors-*.npy")):  # texts of size N prefix those of size M > N
        m = int(other.name.split("-")[1])
        if m > len(texts) and make_texts(m)[: len(texts)] == texts:
            return np.load(other, mmap_mode="r")[: len(texts)].copy()
    from varvemem.embeddings import create_embedder
    from varvemem.settings import EmbedderSettings

    emb = create_embedder(EmbedderSettings())
    out = np.empty((len(texts), emb.dim), np.float32)
    t = time.perf_counter()
    for i in range(0, len(texts), 64):
        out[i : i + 64] = emb.embed_documents(texts[i : i + 64])
    print(f"embedded {len(texts)} texts in {time.perf_counter() - t:.1f}s", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return out


def profile_size(n: int, queries: int, cache: Path, work: Path) -> None:
    texts = make_texts(n)
    vecs = vectors_for(texts, cache)
    for cls, names in ((UpdateEngine, ("prepare", "_store_one", "_similar", "_exact_duplicate",
                                       "link")),
                       (Supersession, ("detect_supersede",)),
                       (Stores, ("sync", "save_vectors", "_catch_up")),
                       (LocalVectorIndex, ("search", "upsert", "save", "_build_hnsw", "_mask")),
                       (SqliteStore, ("find_by_hash", "get_many", "vector_changes"))):
        for name in names:
            wrap(cls, name)
    orig_tx = SqliteStore.transaction

    def tx(self: SqliteStore):  # type: ignore[no-untyped-def]
        return _timed_cm(orig_tx(self), "SqliteStore.transaction (body+commit)")

    SqliteStore.transaction = tx  # type: ignore[method-assign]
    mem = Memory(home=work / "home")
    mem.embedder()
    t = time.perf_counter()
    res = mem.add_many(texts, vectors=vecs)
    total = time.perf_counter() - t
    print(f"add_many({n}, vectors=...): {total:.1f}s = {n / total:.0f}/s; "
          f"maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
          f"statuses {dict((s, sum(r.status == s for r in res)) for s in ('created', 'merged'))}")
    report(f"add_many, {n} memories, vectors given", total)
    mem.close()
    SqliteStore.transaction = orig_tx  # type: ignore[method-assign]
    del res, mem

    # -- search breakdown ----------------------------------------------------------------------
    qs = make_queries(queries)
    mem = Memory(home=work / "home")
    emb = mem.embedder()
    t = time.perf_counter()
    mem.search(qs[0])
    print(f"\nfirst search after open: {time.perf_counter() - t:.2f}s")
    qv = [emb.embed_query(q) for q in qs]
    for q in qs[1:6]:
        mem.search(q)
    TIMES.clear()
    for cls, names in ((RetrievalEngine, ("search", "query_tags")),
                       (SqliteStore, ("keyword_search", "tag_search", "known_tags", "filter",
                                      "record_retrieval")),
                       (LocalVectorIndex, ("vectors",)),
                       (Stores, ("sync",))):
        for name in names:
            wrap(cls, name)
    lat = []
    t0 = time.perf_counter()
    for q, v in zip(qs, qv):
        t = time.perf_counter()
        mem.search(q, query_vector=v)
        lat.append(time.perf_counter() - t)
    total = time.perf_counter() - t0
    lat.sort()
    print(f"search, query vector given, {queries} queries: p50 {statistics.median(lat) * 1000:.1f} ms, "
          f"p95 {lat[int(0.95 * (len(lat) - 1))] * 1000:.1f} ms")
    report(f"search at {n} memories, query vector given", total, per=queries)
    # the vector channel alone, outside the engine (the filter the engine passes)
    from varvemem.model import SearchFilter

    flt = SearchFilter(tenant=mem.settings.default_tenant)
    # The index on its own, opened beside the memory's (which keeps it private).
    stores = Stores(mem.settings, lambda: (emb.model_id, emb.dim))
    index = stores.vectors
    for label, fn in (("LocalVectorIndex.search k=30", lambda v: index.search(v, 30, flt)),
                      ("LocalVectorIndex._mask", lambda v: index._mask(flt))):
        t = time.perf_counter()
        for v in qv:
            fn(v)
        print(f"  {label:<40} {(time.perf_counter() - t) / queries * 1000:9.3f} ms/query")
    stores.close()
    mem.close()


class _timed_cm:
    def __init__(self, cm: Any, key: str) -> None:
        self.cm, self.key = cm, key

    def __enter__(self) -> Any:
        self.t = time.perf_counter()
        return self.cm.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        try:
            return self.cm.__exit__(*exc)
        finally:
            rec = TIMES[self.key]
            rec[0] += time.perf_counter() - self.t
            rec[1] += 1


def overlap(n: int, cache: Path, work: Path) -> None:
    texts = make_texts(n)
    vecs = vectors_for(texts, cache)
    mem0 = Memory(home=work / "probe")
    emb = mem0.embedder()
    emb.embed_documents(["warm up"])
    mem0.close()
    batch = mem0.settings.embedder.batch_size

    def run(label: str, fn: Any) -> None:
        home = work / label.replace(" ", "_")
        mem = Memory(home=home, embedder=emb)
        t = time.perf_counter()
        fn(mem)
        dt = time.perf_counter() - t
        mem.close()
        print(f"  {label:<48} {dt:7.1f}s  {n / dt:6.0f}/s", flush=True)
        shutil.rmtree(home, ignore_errors=True)

    def serial(mem: Memory) -> None:
        for i in range(0, n, batch):
            part = texts[i : i + batch]
            mem.add_many(part, vectors=emb.embed_documents(part))

    def embed_only(mem: Memory) -> None:
        for i in range(0, n, batch):
            emb.embed_documents(texts[i : i + batch])

    print(f"{n} memories, batches of {batch}:")
    run("embedder alone", embed_only)
    run("add_many(texts) (library overlap)", lambda m: m.add_many(texts))
    run("add_many(texts, vectors) (store alone)", lambda m: m.add_many(texts, vectors=vecs))
    run("serial: embed batch, then add_many(batch, vectors)", serial)
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    run("add_many(texts), sys.setswitchinterval(0.5 ms)", lambda m: m.add_many(texts))
    sys.setswitchinterval(old)


def study(n: int, rounds: int, queries: int, cache: Path, work: Path) -> None:
    """A home of ``n`` memories: what fills the disk, and search latency over several rounds."""
    import sqlite3

    texts = make_texts(n)
    vecs = vectors_for(texts, cache)
    mem = Memory(home=work / "home")
    t = time.perf_counter()
    mem.add_many(texts, vectors=vecs)
    print(f"built a home of {n} memories (vectors given) in {time.perf_counter() - t:.0f}s")
    mem.close()
    del vecs
    db = work / "home" / "varvemem.db"
    con = sqlite3.connect(db)
    rows = con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
    hist = con.execute("SELECT action, COUNT(*), SUM(COALESCE(LENGTH(old), 0) + COALESCE(LENGTH(new), 0)) "
                       "FROM history GROUP BY action ORDER BY 2 DESC").fetchall()
    emb_bytes = con.execute("SELECT SUM(LENGTH(embedding)) FROM memories").fetchone()[0]
    con.close()
    total = sum(r[1] for r in rows)
    print(f"\n{db.name}: {total / 2**20:.1f} MB ({total / n / 1024:.1f} KB per memory)")
    for name, size in rows[:12]:
        print(f"  {name:<28} {size / 2**20:9.1f} MB {size / total:6.1%}")
    print(f"  (embedding blobs inside memories: {emb_bytes / 2**20:.1f} MB)")
    print("history rows by action (count, MB of old+new JSON):")
    for action, count, size in hist:
        print(f"  {action:<10} {count:9d} {count / n:5.2f} per memory {(size or 0) / 2**20:9.1f} MB")

    qs = make_queries(queries)
    mem = Memory(home=work / "home")
    emb = mem.embedder()
    emb.embed_documents(["warm up"])
    qv = [emb.embed_query(q) for q in qs]
    for q in qs[:5]:
        mem.search(q)
    print(f"\nsearch latency at {n} memories, {queries} queries per round (ms):")
    for r in range(rounds):
        for label, kw in (("with query embedding", None), ("query vector given", True)):
            lat = []
            for q, v in zip(qs, qv):
                t = time.perf_counter()
                mem.search(q, query_vector=v if kw else None)
                lat.append((time.perf_counter() - t) * 1000)
            lat.sort()
            print(f"  round {r + 1} {label:<22} p50 {statistics.median(lat):6.1f}  "
                  f"p95 {lat[int(0.95 * (len(lat) - 1))]:6.1f}", flush=True)
    mem.close()


def rss_child(mode: str, n: int, cache: Path, work: Path) -> None:
    texts = make_texts(n)
    vecs = vectors_for(texts, cache)
    mem = Memory(home=work / "home")
    mem.embedder().embed_documents(["warm up"])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    if mode == "one":
        mem.add_many(texts, vectors=vecs)
    else:
        for i in range(0, n, 1000):
            mem.add_many(texts[i : i + 1000], vectors=vecs[i : i + 1000])
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    mem.close()
    label = "one add_many call" if mode == "one" else "add_many in chunks of 1,000"
    print(f"  {label:<30} peak RSS {before:6.0f} MB before -> {after:6.0f} MB "
          f"(+{after - before:.0f} MB), {n / dt:.0f}/s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, help="profile add_many(vectors) and search at N")
    ap.add_argument("--overlap", type=int, help="embedding/storing overlap experiment at N")
    ap.add_argument("--study", type=int, help="disk breakdown and search rounds at N")
    ap.add_argument("--rounds", type=int, default=3, help="search rounds for --study")
    ap.add_argument("--rss", type=int, help="peak RSS of one add_many call vs chunks at N")
    ap.add_argument("--rss-child", choices=("one", "chunks"), help=argparse.SUPPRESS)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "varvemem-bench-cache")
    args = ap.parse_args()
    _import_everything()
    print(f"library: {library_fingerprint()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="varvemem-profile-"))
    try:
        if args.size:
            profile_size(args.size, args.queries, args.cache, work)
        if args.overlap:
            overlap(args.overlap, args.cache, work)
        if args.study:
            study(args.study, args.rounds, args.queries, args.cache, work)
        if args.rss and args.rss_child:
            rss_child(args.rss_child, args.rss, args.cache, work)
        elif args.rss:
            vectors_for(make_texts(args.rss), args.cache)
            print(f"{args.rss} memories, vectors given, each in a fresh process:")
            for mode in ("one", "chunks"):
                subprocess.run([sys.executable, __file__, "--rss", str(args.rss), "--rss-child", mode,
                                "--cache", str(args.cache)], check=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
