"""Where the local index's graph keeps its vectors (``store.local.graph_file_vectors``), side by
side.

"copy" (True) is the graph file as usearch saves it, with a copy of every vector; "links"
(False, the default since issue 21) holds the graph's links alone, and an open reads the
vectors back from the store of record. For each mode, on its own copy of HOME (a home that
``bench_scale.py --home`` or ``bench_vectors.py --close`` built): one save of the index (what a
close that saves pays), the bytes by file, then ``--rounds`` fresh processes, the modes taking
turns, each timing the index's open (load and catch-up), its RSS and peak RSS, and searches.

    .venv/bin/python bench/bench_graph_file.py /work/scale/h30 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MODES = {"copy": True, "links": False}


def _status_mb(field: str = "VmRSS") -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _settings(home: Path, mode: str) -> Any:
    from varvemem import Settings

    return Settings.load(home=home, store={"local": {"graph_file_vectors": MODES[mode]}})


def _stores(home: Path, mode: str) -> Any:
    """The home's stores, for the embedding model its vectors were made by."""
    from varvemem.stores import Stores

    stores: Any = None
    stores = Stores(_settings(home, mode), lambda: stores.stored_model())
    return stores


def child(home: Path, mode: str, searches: int) -> dict[str, Any]:
    """In a fresh process: open the store and its index, then search it."""
    import numpy as np

    from varvemem.model import SearchFilter

    t = time.perf_counter()
    stores = _stores(home, mode)
    index = stores.vectors
    opened = time.perf_counter() - t
    rss = _status_mb()
    rng = np.random.default_rng(1)
    live = [m for m in index._ids if m]  # type: ignore[attr-defined]  # the local index's
    ids = [live[i] for i in rng.integers(0, len(live), searches)]
    qs = np.stack([index.vectors([m])[m] for m in ids])  # stored vectors as queries
    times = []
    for q in qs:
        s = time.perf_counter()
        index.search(q, 10, SearchFilter())
        times.append(time.perf_counter() - s)
    stores.close()
    return {"open_s": round(opened, 3), "rss_mb": rss,
            "peak_rss_mb": _status_mb("VmHWM"),
            "search_p50_ms": round(statistics.median(times) * 1e3, 2), "size": len(index),
            "notices": stores.notices}


def prepare(home: Path, mode: str) -> dict[str, Any]:
    """A copy of ``home`` whose index is saved in ``mode``; the save's time and the bytes."""
    work = home.parent / f"{home.name}.{mode}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(home, work)
    stores = _stores(work, mode)
    n = len(stores.vectors)
    t = time.perf_counter()
    stores.save_vectors()
    saved = time.perf_counter() - t
    stores.close()
    files = {p.name: p.stat().st_size for p in (work / "vectors").iterdir() if p.is_file()}
    graph = sum(v for k, v in files.items() if k.endswith(".usearch"))
    home_bytes = sum(p.stat().st_size for p in work.rglob("*") if p.is_file())
    return {"work": str(work), "memories": n, "save_s": round(saved, 3),
            "graph_file_b_per_memory": round(graph / n, 1),
            "vectors_npz_b_per_memory": round(files.get("vectors.npz", 0) / n, 1),
            "home_b_per_memory": round(home_bytes / n, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--searches", type=int, default=200)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", choices=list(MODES), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.home, args.child, args.searches)))
        return 0
    out: dict[str, Any] = {"home": str(args.home), "load": list(__import__("os").getloadavg())}
    prepared = {m: prepare(args.home, m) for m in MODES}
    for m, row in prepared.items():
        print(m, json.dumps(row), flush=True)
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in MODES}
    for r in range(args.rounds):
        for m in (MODES if r % 2 == 0 else reversed(list(MODES))):
            got = subprocess.run([sys.executable, __file__, prepared[m]["work"], "--child", m,
                                  "--searches", str(args.searches)],
                                 capture_output=True, text=True, check=True)
            row = json.loads(got.stdout.strip().splitlines()[-1])
            runs[m].append(row)
            print(m, json.dumps(row), flush=True)
    for m in MODES:
        rows = runs[m]
        prepared[m].update({k: statistics.median(r[k] for r in rows)
                            for k in ("open_s", "rss_mb", "peak_rss_mb", "search_p50_ms")})
        prepared[m]["runs"] = rows
        shutil.rmtree(prepared[m]["work"], ignore_errors=True)
    out["modes"] = prepared
    out["load_after"] = list(__import__("os").getloadavg())
    print(json.dumps({m: {k: v for k, v in prepared[m].items() if k != "runs"} for m in MODES},
                     indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
