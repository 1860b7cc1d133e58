"""Where a search's CPU goes on an existing home: each channel alone, FTS5 ranking variants,
and a cProfile of whole searches (query vectors given, retrieval counters off).

    .venv/bin/python bench/profile_search.py HOME [--queries 200]

HOME is a home ``bench_scale.py --home DIR`` built (its synthetic texts and questions).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import make_queries
from varvemem import Memory, Settings
from varvemem.engines.retrieval import RetrievalEngine
from varvemem.model import SearchFilter, utcnow
from varvemem.stores import Stores
from varvemem.text import fts_query, index_terms


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home", type=Path)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    mem = Memory(settings=Settings.load(home=args.home, retrieval={"record_retrieval": False}))
    qs = make_queries(args.queries)
    vecs = [mem.embedder().embed_query(q) for q in qs]
    for q, v in zip(qs[:5], vecs[:5]):
        mem.search(q, query_vector=v)

    def per_query(label: str, fn) -> None:  # type: ignore[no-untyped-def]
        c0, t0 = _cpu(), time.perf_counter()
        for i in range(len(qs)):
            fn(i)
        print(f"{label:<46} cpu {1000 * (_cpu() - c0) / len(qs):6.2f} ms  "
              f"wall {1000 * (time.perf_counter() - t0) / len(qs):6.2f} ms")

    # The channels on their own, over stores opened beside the memory's (which keeps its own
    # private).
    stores = Stores(mem.settings, lambda: (mem.embedder().model_id, mem.embedder().dim))
    store, flt, now = stores.records, SearchFilter(), utcnow()
    per_query("search (vector given)", lambda i: mem.search(qs[i], query_vector=vecs[i]))
    per_query("  full text, keyword_max_docs 5000",
              lambda i: store.keyword_search(index_terms(qs[i]), flt, now, 100, 0.5, 5000))
    per_query("  full text, every term",
              lambda i: store.keyword_search(index_terms(qs[i]), flt, now, 100, 0.5, None))
    per_query("  vector index", lambda i: stores.vectors.search(vecs[i], 30, flt))
    eng = RetrievalEngine(mem.settings, stores, mem.embedder, utcnow)
    per_query("  tags", lambda i: store.tag_search(eng.query_tags(qs[i], "default"), flt, now,
                                                   30))
    # FTS5 alone: how much the context column and its weight cost (the store's own query).
    conn = store._c  # type: ignore[attr-defined]
    from varvemem.stores.sqlite import _fts_table

    fts = _fts_table(conn, flt.tenant)  # the tenant's own FTS5 table (one per tenant)
    # (the kept terms, each query term's document count)
    sel = [store._selective(fts, index_terms(q), 5000) for q in qs]  # type: ignore[attr-defined]
    kept = [k for k, _ in sel]
    print(f"query terms kept {statistics.fmean(len(k) for k in kept):.1f}, rows they match "
          f"(sum of document frequencies) "
          f"{statistics.fmean(sum(df.get(t, 0) for t in k) for k, df in sel):,.0f}")
    for label, sql, extra in (
            ("  FTS5 bm25(1.0, 0.5) (the default)", "AND rank MATCH ? ", ("bm25(1.0, 0.5)",)),
            ("  FTS5 bm25() both columns weight 1", "", ()),
    ):
        per_query(label, lambda i, sql=sql, extra=extra: conn.execute(
            f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? {sql}"
            "ORDER BY rank LIMIT 400", (fts_query(kept[i]), *extra)).fetchall())
    per_query("  FTS5 bm25() own text column only", lambda i: conn.execute(
        f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? ORDER BY rank LIMIT 400",
        ("terms : (" + fts_query(kept[i]) + ")",)).fetchall())
    prof = cProfile.Profile()
    prof.enable()
    for q, v in zip(qs, vecs):
        mem.search(q, query_vector=v)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    stores.close()
    mem.close()


if __name__ == "__main__":
    main()
