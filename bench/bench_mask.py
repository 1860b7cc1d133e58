"""What a search's filter costs the local vector index at size.

The filter of a search (tenant, user, current only, the default tiers) becomes a boolean mask
over every row of the index before the graph is searched: O(rows) numpy work on each search.
This times building that mask at ``--rows`` rows (tiny vectors: only the rows' filter codes
matter), ``--repeat`` times, to tell whether caching masks between changes would pay.

    .venv/bin/python bench/bench_mask.py --rows 100000,300000,1000000
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from varvemem.filters import vector_clauses
from varvemem.model import VectorFilter
from varvemem.stores.base import VectorAttrs
from varvemem.stores.local_vectors import LocalVectorIndex

TIERS = ("short_term", "mid_term", "long_term")


def measure(rows: int, repeat: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        # No graph: the mask is the same whichever way the rows are then searched.
        idx = LocalVectorIndex(Path(tmp), 4, "bench", hnsw_threshold=rows + 1)
        vecs = rng.normal(size=(rows, 4)).astype(np.float32)
        users = rng.integers(0, 50, rows)
        attrs = [VectorAttrs("default", f"u{users[i]}", None, None, "knowledge",
                             TIERS[i % 3], i % 40 != 0) for i in range(rows)]
        idx.upsert([f"m{i}" for i in range(rows)], vecs, attrs)
        clauses = vector_clauses(VectorFilter(tenant="default", user="u7"))
        built = []
        for _ in range(repeat):
            t = time.perf_counter()
            mask = idx._mask(clauses)
            built.append(time.perf_counter() - t)
        return {"rows": rows, "kept": int(mask.sum()),
                "p50_ms": round(statistics.median(built) * 1e3, 3),
                "p95_ms": round(float(np.percentile(built, 95)) * 1e3, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", default="100000,300000,1000000")
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    for n in (int(x) for x in args.rows.split(",")):
        print(json.dumps(measure(n, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
