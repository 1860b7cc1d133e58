"""Search latency on an existing home, side by side for full-text settings, in one run.

    .venv/bin/python bench/search_at_size.py HOME [--queries 200]

Each setting gets a fresh ``Memory`` on the same home and the same synthetic questions
(``bench_scale.make_queries``); the order of settings alternates per round to spread noise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import make_queries
from varvemem import Memory, Settings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("home")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--max-docs", default="1000000000,20000",
                    help="retrieval.keyword_max_docs values to compare")
    args = ap.parse_args()
    queries = make_queries(args.queries)
    settings = {f"keyword_max_docs = {int(v):,}": int(v) for v in args.max_docs.split(",")}
    # Retrieval counters off: the benchmark must not change the home it measures.
    mems = {name: Memory(settings=Settings.load(home=args.home, retrieval={
                "keyword_max_docs": v, "record_retrieval": False}))
            for name, v in settings.items()}
    times: dict[str, list[float]] = {name: [] for name in settings}
    for mem in mems.values():
        for q in queries[:5]:
            mem.search(q)
    for i, q in enumerate(queries):
        order = list(mems.items()) if i % 2 == 0 else list(reversed(mems.items()))
        for name, mem in order:
            t0 = time.perf_counter()
            mem.search(q)
            times[name].append(time.perf_counter() - t0)
    out = {"home": args.home, "memories": mems[next(iter(mems))].stats()["memories"],
           "queries": len(queries), "results": {}}
    for name, ts in times.items():
        ms = sorted(t * 1000 for t in ts)
        out["results"][name] = {"p50_ms": statistics.median(ms),
                                "p95_ms": ms[round(0.95 * (len(ms) - 1))]}
    for mem in mems.values():
        mem.close()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
