"""The L3 fast path against the normal path, side by side, at 1k and 10k Q&A pairs.

For each size a home gets N synthetic pairs (``bench_core``'s generator: a question and a
sentence as its answer, score 0.9). Then, interleaved: ``ask()`` with a stored question
re-typed (lower case, punctuation changed: a fast-path hit, ``reuse``) and ``ask()`` with a
question that matches no pair (the ``normal`` path: retrieval and the packed context; no LLM).
Query embedding is included in both. p50/p95 and the ratio are printed and written to JSON.

    .venv/bin/python bench/bench_ask.py --sizes 1000,10000
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_core import Generator, _lat, library_fingerprint  # noqa: E402
from bench_scale import _now_utc, machine  # noqa: E402
from varvemem import Memory, Settings  # noqa: E402


def run_size(n: int, asks: int, work: Path) -> dict[str, Any]:
    g = Generator(23)
    questions = list(dict.fromkeys(f"{g.query()} ({i})" for i in range(n)))
    mem = Memory(settings=Settings.load(home=work / f"home-{n}"))
    t0 = time.perf_counter()
    mem.add_many([{"content": f"{q}\n{g.sentence()}", "type": "qa", "question": q,
                   "answer": g.sentence(), "score": 0.9, "source": "qa"} for q in questions])
    add_s = time.perf_counter() - t0
    rng = random.Random(5)
    asked = [rng.choice(questions) for _ in range(asks)]
    hits = [q.lower().rstrip("?)").replace("(", "") for q in asked]
    misses = [f"{g.sentence()} zebra quartz {i}?" for i in range(asks)]
    for q in hits[:5] + misses[:5]:
        mem.ask(q)
    times: dict[str, list[float]] = {"reuse": [], "normal": []}
    routes: dict[str, dict[str, int]] = {"hit": {}, "miss": {}}
    right = 0  # fast-path hits that reused the pair whose question was asked
    for original, hit, miss in zip(asked, hits, misses):
        for kind, q in (("hit", hit), ("miss", miss)):
            t = time.perf_counter()
            res = mem.ask(q)
            elapsed = time.perf_counter() - t
            routes[kind][res.route] = routes[kind].get(res.route, 0) + 1
            if res.route in times:
                times[res.route].append(elapsed)
            if kind == "hit" and res.route == "reuse" and res.matched \
                    and res.matched["question"] == original:
                right += 1
    mem.close()
    out = {"pairs": len(questions), "add_s": round(add_s, 1), "routes": routes,
           "reused_the_asked_pair": right,
           "reuse": _lat(times["reuse"]), "normal": _lat(times["normal"])}
    out["speedup_p50"] = round(out["normal"]["p50_ms"] / out["reuse"]["p50_ms"], 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--asks", type=int, default=300)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    lib = library_fingerprint()
    out: dict[str, Any] = {"command": " ".join([Path(sys.executable).name, *sys.argv]),
                           "started": _now_utc(), "machine": machine(), "library": lib,
                           "results": []}
    with tempfile.TemporaryDirectory(prefix="varvemem-ask-") as work:
        for n in (int(s) for s in args.sizes.split(",")):
            r = run_size(n, args.asks, Path(work))
            out["results"].append(r)
            print(f"{r['pairs']:>6,} pairs: reuse p50/p95 {r['reuse']['p50_ms']:.2f}/"
                  f"{r['reuse']['p95_ms']:.2f} ms, normal {r['normal']['p50_ms']:.2f}/"
                  f"{r['normal']['p95_ms']:.2f} ms, x{r['speedup_p50']} at p50; routes "
                  f"{r['routes']}, the asked pair reused {r['reused_the_asked_pair']}",
                  flush=True)
    out["finished"] = _now_utc()
    path = args.json or BENCH_DIR / "results" / f"ask-{lib.get('commit') or 'dev'}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
