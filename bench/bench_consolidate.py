"""What a consolidation costs at size, and whether searches wait for it.

For each size N (``--sizes``) a home is filled with a month of synthetic agent memory: dialogue
and tool calls in sessions of 20 turns, events, knowledge and a few experiences, in time order
(the texts are ``bench_scale``'s). Then, at the month's end plus 8 days (so sessions end,
short-term memory ages out and tool calls have expired):

1. ``--searches`` searches alone (a child process): the baseline latency;
2. ``Memory.consolidate()`` in a child process, timed per job, with its peak RSS, while another
   child searches the same home without pause: the latency during a consolidation;
3. a second consolidation at the same time (it must change nothing), timed.

    nice -n 10 .venv/bin/python bench/bench_consolidate.py --sizes 10000,100000

``--vectors-from HOME`` takes the embeddings from a home ``bench_scale.py --keep`` built (the
same texts), instead of embedding them again.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from datetime import datetime, timedelta, timezone  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_core import _lat, _rss_mb, library_fingerprint, make_queries  # noqa: E402
from bench_scale import _log, _now_utc, machine, make_texts  # noqa: E402

END = datetime(2026, 6, 1, tzinfo=timezone.utc)  # the synthetic month ends here
AT = END + timedelta(days=8)  # consolidation and searches happen here


def _mix(i: int) -> dict[str, Any]:
    """Type, session and user of the i-th memory: per 20, 10 turns, 3 tool calls (in the
    session), 4 events, 2 knowledge, 1 experience."""
    slot = i % 20
    common = {"user": f"u{(i // 200) % 50}"}
    if slot < 13:
        return {**common, "type": "dialogue" if slot < 10 else "tool_call",
                "session": f"s{i // 20}"}
    return {**common, "type": "event" if slot < 17 else
            ("knowledge" if slot < 19 else "experience")}


def _vectors(texts: list[str], source: Path | None) -> np.ndarray:
    from varvemem import Memory, Settings

    if source is not None:
        row = {t.strip(): i for i, t in enumerate(texts)}
        out: np.ndarray | None = None
        found = 0
        mem = Memory(settings=Settings.load(home=source))
        after = ""
        while page := mem.get_all(include_superseded=True, limit=10_000, after=after):
            after = page[-1].memory_id
            for r in page:
                i = row.get(r.content)
                emb = None if i is None else mem.get(r.memory_id, with_embedding=True).embedding
                if i is not None and emb is not None:
                    if out is None:
                        out = np.zeros((len(texts), len(emb)), np.float32)
                    out[i] = emb
                    found += 1
        mem.close()
        if out is None or found < len(texts):
            raise SystemExit(f"{len(texts) - found} texts have no vector in {source}")
        return out
    from varvemem.embeddings import create_embedder

    emb = create_embedder(Settings.load(home=tempfile.mkdtemp()).embedder)
    return np.concatenate([emb.embed_documents(texts[i: i + 1024])
                           for i in range(0, len(texts), 1024)])


def build(home: Path, n: int, source: Path | None) -> dict[str, Any]:
    from varvemem import Memory, Settings

    texts = make_texts(n)
    t0 = time.perf_counter()
    vectors = _vectors(texts, source)
    embed_s = time.perf_counter() - t0
    start = END - timedelta(days=30)
    step = timedelta(days=30) / n
    clock_box = [start]
    mem = Memory(settings=Settings.load(home=home), clock=lambda: clock_box[0])
    t0 = time.perf_counter()
    for i in range(0, n, 2000):
        items = [{"content": texts[j], "created_at": start + j * step, **_mix(j)}
                 for j in range(i, min(i + 2000, n))]
        clock_box[0] = items[-1]["created_at"]
        mem.add_many(items, vectors=vectors[i: i + len(items)])
    add_s = time.perf_counter() - t0
    stats = mem.stats()
    mem.close()
    return {"n": n, "vectors_s": round(embed_s, 1), "add_s": round(add_s, 1),
            "tiers": stats["by_tier"], "types": stats["by_type"],
            "open_sessions": stats["open_sessions"]}


def _child(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE,
                            text=True)


def search_child(home: Path, count: int, stop: Path | None) -> None:
    from varvemem import Memory, Settings

    mem = Memory(settings=Settings.load(home=home), clock=lambda: AT)
    queries = make_queries(max(count, 200))
    for q in queries[:5]:
        mem.search(q)
    times: list[float] = []
    starts: list[float] = []
    i = 0
    while (stop is None and i < count) or (stop is not None and not stop.exists()):
        starts.append(time.time())
        t0 = time.perf_counter()
        mem.search(queries[i % len(queries)])
        times.append(time.perf_counter() - t0)
        i += 1
    mem.close()
    print(json.dumps({"times": times, "starts": starts}))


def consolidate_child(home: Path) -> None:
    from varvemem import Memory, Settings

    mem = Memory(settings=Settings.load(home=home), clock=lambda: AT)
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    started = time.time()
    report = mem.consolidate()
    seconds = time.perf_counter() - t0
    mem.close()
    print(json.dumps({"seconds": round(seconds, 2), "rss_before_mb": round(rss_before, 1),
                      "started": started,
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                           / 1024, 1),
                      "report": report.model_dump(mode="json")}))


def run_size(n: int, work: Path, searches: int, source: Path | None) -> dict[str, Any]:
    home = work / f"home-{n}"
    _log(f"{n:,}: building")
    out: dict[str, Any] = {"size": n, "build": build(home, n, source)}
    _log(f"{n:,}: built {out['build']}")
    base = _child(["--search-child", str(home), "--count", str(searches)])
    out["search_alone"] = _lat(json.loads(base.communicate()[0])["times"])
    _log(f"{n:,}: searches alone {out['search_alone']}")
    stop = work / f"stop-{n}"
    searcher = _child(["--search-child", str(home), "--stop", str(stop)])
    time.sleep(2.0)  # the searcher is warm before the consolidation starts
    cons = _child(["--consolidate-child", str(home)])
    first = json.loads(cons.communicate()[0])
    stop.touch()
    timing = json.loads(searcher.communicate()[0])
    during = timing["times"]
    out["consolidate"] = first
    out["search_during"] = _lat(during)
    # The slowest searches, with when they started (seconds after the consolidation began).
    slow = sorted(zip(during, timing["starts"]), reverse=True)[:10]
    out["search_during_slowest"] = [{"ms": round(t * 1000, 1),
                                     "at_s": round(s - first["started"], 2)} for t, s in slow]
    _log(f"{n:,}: consolidated in {first['seconds']} s, peak RSS {first['peak_rss_mb']} MB; "
         f"searches during: {out['search_during']}")
    again = json.loads(_child(["--consolidate-child", str(home)]).communicate()[0])
    # Searches ran during the first one (retrievals are re-scored): the second changes those.
    out["consolidate_again"] = {"seconds": again["seconds"],
                                "changed": sum(sum(j["counts"].values())
                                               for j in again["report"]["jobs"]),
                                "jobs": {j["name"]: j["counts"] for j in again["report"]["jobs"]}}
    third = json.loads(_child(["--consolidate-child", str(home)]).communicate()[0])
    out["consolidate_third"] = {"seconds": third["seconds"],
                                "changed": sum(sum(j["counts"].values())
                                               for j in third["report"]["jobs"])}
    _log(f"{n:,}: second consolidation {out['consolidate_again']}, third "
         f"{out['consolidate_third']}")
    return out


def table(results: list[dict[str, Any]]) -> str:
    rows = ["| memories | consolidate s | per 1k s | peak RSS MB | archived | promoted | "
            "experiences | search p50/p95/max alone ms | during ms | again s (changed) |",
            "|---:|---:|---:|---:|---:|---:|---:|---|---|---|"]
    for r in results:
        c = r["consolidate"]
        jobs = {j["name"]: j["counts"] for j in c["report"]["jobs"]}
        a, d = r["search_alone"], r["search_during"]
        rows.append(
            f"| {r['size']:,} | {c['seconds']:.1f} | {1000 * c['seconds'] / r['size']:.2f} | "
            f"{c['peak_rss_mb']:.0f} | {jobs['forget'].get('archived', 0):,} | "
            f"{jobs['promote'].get('promoted', 0):,} | "
            f"{jobs['abstract'].get('experiences', 0):,} | "
            f"{a['p50_ms']:.1f} / {a['p95_ms']:.1f} / {a['max_ms']:.0f} | "
            f"{d['p50_ms']:.1f} / {d['p95_ms']:.1f} / {d['max_ms']:.0f} (n={d['n']}) | "
            f"{r['consolidate_again']['seconds']:.1f} ({r['consolidate_again']['changed']}) |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--searches", type=int, default=300, help="baseline searches")
    ap.add_argument("--vectors-from", type=Path, help="a bench_scale home with these texts")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--json", type=Path, help="default bench/results/consolidate-<commit>.json")
    ap.add_argument("--search-child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--consolidate-child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--count", type=int, default=300, help=argparse.SUPPRESS)
    ap.add_argument("--stop", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.search_child:
        search_child(args.search_child, args.count, args.stop)
        return 0
    if args.consolidate_child:
        consolidate_child(args.consolidate_child)
        return 0
    work = args.workdir or Path(tempfile.mkdtemp(prefix="varvemem-consolidate-"))
    lib = library_fingerprint()
    out: dict[str, Any] = {"command": " ".join([Path(sys.executable).name, *sys.argv]),
                           "started": _now_utc(), "machine": machine(), "library": lib,
                           "results": []}
    for n in (int(s) for s in args.sizes.split(",")):
        out["results"].append(run_size(n, work, args.searches, args.vectors_from))
    out["finished"] = _now_utc()
    path = args.json or BENCH_DIR / "results" / f"consolidate-{lib.get('commit') or 'dev'}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(table(out["results"]))
    _log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
