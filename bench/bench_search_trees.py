"""Search latency side by side for several source trees, in one run.

Each ``--src`` is a checkout's ``src`` folder; each tree imports its own package (``memstrata``
in trees from before the rename), as in ``bench_add.py``. Per tree, one child process fills a
home with ``--size`` of ``bench_scale``'s texts (vectors given, from ``--vectors``, made on the
first run); then, per round, trees alternating, a fresh child process opens that home and
times ``--queries`` searches (``top_k`` 10, query embedding included) after 5 warm-ups: what a
newly started server does, its parse caches cold.

    .venv/bin/python bench/bench_search_trees.py --src /work/wt/old/src --src src --rounds 2
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent


def _package(src: Path) -> Any:
    sys.path.insert(0, str(BENCH_DIR))
    from bench_core import tree_package

    return tree_package(src)


def _fill(src: Path, home: Path, size: int, vectors: Path) -> dict[str, Any]:
    import numpy as np

    sys.path.insert(0, str(BENCH_DIR))
    from bench_scale import make_texts

    pkg = _package(src)
    m = pkg.Memory(home=home)
    t = time.perf_counter()
    m.add_many(make_texts(size), vectors=np.load(vectors)[:size])
    m.close()
    return {"fill_s": time.perf_counter() - t}


def _search(src: Path, home: Path, queries: int) -> dict[str, Any]:
    sys.path.insert(0, str(BENCH_DIR))
    from bench_core import make_queries

    pkg = _package(src)
    m = pkg.Memory(home=home)
    qs = make_queries(queries + 5)
    for q in qs[:5]:
        m.search(q, top_k=10)
    lat, cpu = [], time.process_time()
    for q in qs[5:]:
        t = time.perf_counter()
        m.search(q, top_k=10)
        lat.append(time.perf_counter() - t)
    cpu = time.process_time() - cpu
    lat.sort()
    return {"p50_ms": 1000 * statistics.median(lat), "p95_ms": 1000 * lat[int(0.95 * len(lat))],
            "cpu_ms_per_search": 1000 * cpu / len(lat), "package": pkg.__file__}


def _child(*args: str, src: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    env = {k: v for k, v in env.items() if not k.startswith("VARVEMEM_")}
    res = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True,
                         text=True, check=True)
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", action="append", default=[], type=Path)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--vectors", type=Path, help="bench_scale texts' vectors (default: "
                    "bench-add-scale.npy in the temp folder, shared with bench_add --texts scale)")
    ap.add_argument("--child", choices=("fill", "search"), help=argparse.SUPPRESS)
    ap.add_argument("--child-src", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.vectors = args.vectors or Path(tempfile.gettempdir()) / "bench-add-scale.npy"
    if args.child == "fill":
        print(json.dumps(_fill(args.child_src, args.home, args.size, args.vectors)))
        return
    if args.child == "search":
        print(json.dumps(_search(args.child_src, args.home, args.queries)))
        return
    if not args.src:
        ap.error("give at least one --src")
    import numpy as np

    if not args.vectors.exists() or len(np.load(args.vectors, mmap_mode="r")) < args.size:
        sys.path.insert(0, str(BENCH_DIR))
        from bench_scale import make_texts
        from varvemem.embeddings.usem3 import USEEmbedder

        emb, texts = USEEmbedder(), make_texts(args.size)
        np.save(args.vectors, np.concatenate([emb.embed_documents(texts[i: i + 64])
                                              for i in range(0, len(texts), 64)]))
    base = Path(tempfile.mkdtemp(prefix="bench-search-trees-"))
    homes = {}
    for n, src in enumerate(args.src):
        homes[src] = base / f"home-{n}"
        got = _child("--child", "fill", "--child-src", str(src), "--home", str(homes[src]),
                     "--size", str(args.size), "--vectors", str(args.vectors), src=src)
        print(f"filled {src}: {args.size:,} memories in {got['fill_s']:.0f} s", flush=True)
    for r in range(args.rounds):
        for src in args.src:
            got = _child("--child", "search", "--child-src", str(src), "--home",
                         str(homes[src]), "--queries", str(args.queries), src=src)
            print(f"round {r + 1} {src}: p50 {got['p50_ms']:.1f} ms, p95 {got['p95_ms']:.1f} ms, "
                  f"{got['cpu_ms_per_search']:.1f} ms CPU a search, load "
                  f"{os.getloadavg()[0]:.1f} ({got['package']})", flush=True)


if __name__ == "__main__":
    main()
