"""Recall of the HNSW graph against how it is built: connectivity and expansion_add.

The local index's graph (usearch, cosine, ``store.local.dtype``) is built with usearch's
defaults, connectivity 16 and expansion_add 128. This builds the same graph from the same
vectors with other values and measures, for each: build time, the bytes usearch reports,
recall@10 against an exact f32 top 10, and search latency at several ``expansion_search``.

The vectors are ``bench_scale``'s texts (8 to 60 words, a fifth Chinese) embedded with the
default embedder, cached in ``--cache`` (embedding 100,000 takes about 7 minutes on one core);
the queries are ``bench_core.make_queries``. usearch runs on one thread.

    OMP_NUM_THREADS=1 .venv/bin/python bench/bench_graph.py --size 100000 \\
        --builds 16:128,16:256,24:128,32:128 --expansion 256,512,1024
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_core import library_fingerprint, make_queries  # noqa: E402
from bench_scale import make_texts  # noqa: E402


def embedded(texts: list[str], cache: Path, name: str, query: bool = False) -> np.ndarray:
    """``texts`` embedded by the default embedder (as queries when ``query``), cached as
    ``cache/name.npy``."""
    path = cache / f"{name}.npy"
    if path.exists():
        return np.load(path)
    from varvemem.embeddings import create_embedder
    from varvemem.settings import EmbedderSettings

    emb = create_embedder(EmbedderSettings())
    out = np.empty((len(texts), emb.dim), np.float32)
    t = time.perf_counter()
    for i in range(0, len(texts), 64):
        part = texts[i : i + 64]
        out[i : i + 64] = [emb.embed_query(x) for x in part] if query \
            else emb.embed_documents(part)
        if i % 10_000 == 0:
            print(f"  embedded {i:,} in {time.perf_counter() - t:.0f}s", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return out


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int = 10) -> list[set[int]]:
    out = []
    for q in queries:
        sims = vectors @ q
        out.append(set(np.argpartition(-sims, k)[:k].tolist()))
    return out


def measure(vectors: np.ndarray, queries: np.ndarray, truth: list[set[int]], dtype: str,
            connectivity: int, expansion_add: int, efs: list[int]) -> dict[str, object]:
    from usearch.index import Index

    index = Index(ndim=vectors.shape[1], metric="cos", dtype=dtype, connectivity=connectivity,
                  expansion_add=expansion_add)
    keys = np.arange(len(vectors), dtype=np.uint64)
    t = time.perf_counter()
    index.add(keys, vectors, threads=1)
    build = time.perf_counter() - t
    out: dict[str, object] = {"connectivity": connectivity, "expansion_add": expansion_add,
                              "build_s": round(build, 1), "memory_mb": round(
                                  index.memory_usage / 2**20, 1),
                              "bytes_per_vector": round(index.memory_usage / len(vectors))}
    for ef in efs:
        index.expansion_search = ef
        got, times = [], []
        for q in queries:
            t = time.perf_counter()
            res = index.search(q, 40, threads=1)  # the local index asks for k x oversample
            times.append(time.perf_counter() - t)
            got.append(set(np.asarray(res.keys)[:10].tolist()))
        recall = statistics.fmean(len(g & w) / 10 for g, w in zip(got, truth))
        ms = sorted(1000 * x for x in times)
        out[f"ef{ef}"] = {"recall@10": round(recall, 4), "p50_ms": round(ms[len(ms) // 2], 2),
                          "p95_ms": round(ms[int(len(ms) * 0.95)], 2)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--builds", default="16:128,16:256,24:128,32:128",
                    help="connectivity:expansion_add pairs")
    ap.add_argument("--expansion", default="256,512,1024", help="expansion_search values")
    ap.add_argument("--dtype", default="f16")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/varvemem-graph-vectors"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    vectors = embedded(make_texts(args.size), args.cache, f"scale-{args.size}")
    queries = embedded(make_queries(args.queries + 6)[6:], args.cache,
                       f"queries-{args.queries}", query=True)
    truth = exact_top(vectors, queries)
    efs = [int(x) for x in args.expansion.split(",")]
    results = []
    for pair in args.builds.split(","):
        m, ef_add = (int(x) for x in pair.split(":"))
        r = measure(vectors, queries, truth, args.dtype, m, ef_add, efs)
        results.append(r)
        print(json.dumps(r), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"library": library_fingerprint(), "size": args.size,
                                         "dtype": args.dtype, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
