"""Where an add's CPU goes on an existing (large) home: 1,800 ``add_many`` with vectors given,
under cProfile, after 200 to warm up. The texts are ``bench_scale``'s stream, each marked
with the run's id so that none is a duplicate of an earlier run's.

    .venv/bin/python bench/profile_add.py HOME [SORT [ROWS]]

It adds to HOME: use a scratch copy.
"""

from __future__ import annotations

import cProfile
import pstats
import resource
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import make_texts
from varvemem import Memory, Settings


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    mem = Memory(settings=Settings.load(home=sys.argv[1],
                                        retrieval={"record_retrieval": False}))
    t0 = time.perf_counter()
    vectors = mem.index_stats()["vectors"]
    print(f"open and catch up the vector index: {time.perf_counter() - t0:.1f} s, "
          f"{vectors:,} vectors")
    run = uuid.uuid4().hex[:8]  # fresh texts on every run: no duplicates of an earlier one
    texts = [f"{t} (profiled {run})" for t in make_texts(2000)]
    vecs = mem.embedder().embed_documents(texts)
    mem.add_many(texts[:200], vectors=vecs[:200])
    prof = cProfile.Profile()
    c0 = _cpu()
    prof.enable()
    mem.add_many(texts[200:], vectors=vecs[200:])
    prof.disable()
    print(f"CPU per memory: {1000 * (_cpu() - c0) / 1800:.2f} ms")
    order = sys.argv[2] if len(sys.argv) > 2 else "tottime"  # e.g. cumtime
    pstats.Stats(prof).sort_stats(order).print_stats(int(sys.argv[3]) if len(sys.argv) > 3 else 18)
    mem.close()


if __name__ == "__main__":
    main()
