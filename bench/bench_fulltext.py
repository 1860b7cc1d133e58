"""The keyword channel alone at one size: p50/p95 of ``SqliteStore.keyword_search``.

Builds (once, then reuses) a store of ``--n`` bench_core ``make_texts`` memories (written
straight into ``SqliteStore``: the keyword channel reads only the rows and the full text),
then times the keyword channel for bench_core's questions
(English and Chinese) and for hand-written queries of common and rare words, each setting in
``--caps`` interleaved query by query in one run (``--caps 0`` is the uncapped channel). It also
prints the full-text tables' bytes per memory (dbstat).

    PYTHONPATH=src .venv/bin/python bench/bench_fulltext.py --home /tmp/ft100k --n 100000 \
        --caps 0,2000
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import make_queries, make_texts
from varvemem.model import MemoryRecord, MemoryType, Scope, SearchFilter, Tier
from varvemem.settings import Settings
from varvemem.stores.sqlite import SqliteStore
from varvemem.text import index_terms

HAND = ["what did the team decide about the project",  # common words only
        "the meeting about the project deadline with the team",
        "我们 团队 项目 的 会议",
        "what about the zephyrine",  # filled in with a rare stored word below
        ]


def build(home: Path, n: int) -> None:
    """``n`` memories written straight into the store of record (rows and full text; the
    vector index is not needed by the keyword channel), ``step`` to a transaction."""
    home.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(home / "varvemem.db", synchronous="OFF")
    texts = make_texts(n)
    vec = np.ones(8, np.float32) / np.sqrt(8)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    t = time.perf_counter()
    step = 10_000
    for i in range(0, n, step):
        with store.transaction() as tx:
            for j, text in enumerate(texts[i:i + step], start=i):
                at = t0 + timedelta(seconds=j)
                tx.insert(MemoryRecord(memory_id=f"m{j:07d}", content=text,
                                       memory_type=MemoryType.KNOWLEDGE, tier=Tier.LONG_TERM,
                                       scope=Scope(tenant="default"), created_at=at,
                                       updated_at=at, valid_from=at, content_hash=f"h{j}"), vec)
        print(f"  built {min(n, i + step)} ({time.perf_counter() - t:.0f}s)", flush=True)
    store.close()


def fts_bytes(db: Path, n: int) -> dict[str, float]:
    con = sqlite3.connect(db)
    rows = con.execute("SELECT name, SUM(pgsize) FROM dbstat WHERE name LIKE 'memories_fts%' "
                       "GROUP BY name ORDER BY 2 DESC").fetchall()
    con.close()
    return {name: size / n for name, size in rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--caps", default="0,2000", help="keyword_scan_docs settings; 0 = uncapped")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    if not (a.home / "varvemem.db").exists():
        build(a.home, a.n)
    store = SqliteStore(a.home / "varvemem.db")
    cfg = Settings().retrieval
    now = datetime.now(timezone.utc)
    flt = SearchFilter(tenant="default")
    texts = make_texts(2_000)
    rare = sorted({t for x in texts for t in index_terms(x)},
                  key=lambda t: len(t))[-1:]  # a long (so rare) stored term
    qs = make_queries(a.queries) + HAND[:3] + [HAND[3].replace("zephyrine", rare[0])]
    caps = [int(c) for c in a.caps.split(",")]
    toks = [index_terms(q) for q in qs]
    times: dict[int, list[float]] = {c: [] for c in caps}
    results: dict[int, list[list[str]]] = {c: [] for c in caps}
    for r in range(a.rounds):
        for tk in toks:
            for c in caps:
                t = time.perf_counter()
                hits = store.keyword_search(tk, flt, now, cfg.keyword_window, cfg.context_weight,
                                            cfg.keyword_max_docs, scan_docs=c or None)
                times[c].append((time.perf_counter() - t) * 1000)
                if r == 0:
                    results[c].append([h[0] for h in hits])
    out: dict[str, object] = {"n": a.n, "queries": len(qs), "rounds": a.rounds}
    base = results[caps[0]]
    for c in caps:
        ts = sorted(times[c])
        same = sum(x == y for x, y in zip(results[c], base, strict=True))
        top10 = statistics.mean(len(set(x[:10]) & set(y[:10])) / min(10, len(y))
                                for x, y in zip(results[c], base, strict=True) if y)
        row = {"p50_ms": ts[len(ts) // 2], "p95_ms": ts[int(len(ts) * 0.95)],
               "mean_ms": statistics.mean(ts), "identical_rankings": same,
               "top10_overlap_with_first": top10}
        out[f"cap_{c}"] = row
        print(f"scan_docs={c or 'off':>6}: p50 {row['p50_ms']:.2f} ms, p95 {row['p95_ms']:.2f} ms, "
              f"mean {row['mean_ms']:.2f}; rankings identical to first setting {same}/{len(qs)}, "
              f"top-10 overlap {top10:.3f}")
    store.close()
    out["fts_bytes_per_memory"] = fts_bytes(a.home / "varvemem.db", a.n)
    print("full-text bytes per memory:", json.dumps(out["fts_bytes_per_memory"]))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
