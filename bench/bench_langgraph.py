"""What a LangGraph store's reads cost at size, and whether a second store sees a first's writes.

Fills a home with ``--items`` items through one ``VarvememStore`` (puts in batches of 100:
one memory each; or takes the home ``--home`` filled by an earlier run, so two versions can be
timed on one copy of the same data), then opens a second store over the same memory and
times, warm:

* ``get`` of a random key, ``search`` with a query (limit 10 in one user's namespace),
  ``search`` without one (the newest 10 under one user) and ``list_namespaces``;
* the first call of a fresh store (it reads its index once);
* a ``get`` right after the other store put a new key (does it see it, and at what cost).

    .venv/bin/python bench/bench_langgraph.py --items 10000 [--home /tmp/lg-10k]

Medians and 95th percentiles in milliseconds, as JSON. Run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.store.base import PutOp

from varvemem import Memory
from varvemem.integrations.langgraph import VarvememStore

USERS = 100
SUBJECTS = ["the billing service", "the staging cluster", "the release train", "the VPN",
            "the on-call rota", "the data warehouse", "the design review", "the test suite",
            "the mobile app", "the search index"]
FACTS = ["prefers {s} to run on Mondays", "owns {s} this quarter", "wrote the runbook for {s}",
         "asked to be paged when {s} fails", "is migrating {s} to the new region",
         "thinks {s} needs more tests", "reviewed {s} last week", "will present {s} on Friday"]
QUERIES = ["who owns the billing service?", "what runs on Mondays?", "who is migrating the VPN?",
           "runbook for the data warehouse", "who presents on Friday?"]


def timed(fn: Callable[[], Any], reps: int) -> dict[str, float]:
    runs = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t) * 1000)
    runs.sort()
    return {"median_ms": round(statistics.median(runs), 3),
            "p95_ms": round(runs[int(0.95 * (len(runs) - 1))], 3), "reps": reps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--home", type=Path, help="a home to fill once and time again (kept)")
    args = ap.parse_args()
    rng = random.Random(7)
    out: dict[str, Any] = {"items": args.items, "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp, \
            Memory(home=args.home or Path(tmp) / "home") as mem:
        writer = VarvememStore(mem, index={"fields": ["text"]})
        if writer.get(("user0", "memories"), "k0") is None:
            t = time.perf_counter()
            for start in range(0, args.items, 100):
                writer.batch([PutOp((f"user{i % USERS}", "memories"), f"k{i}", {
                    "text": f"User {i % USERS} " + rng.choice(FACTS).format(
                        s=rng.choice(SUBJECTS)) + f" (note {i})", "n": i})
                    for i in range(start, min(args.items, start + 100))])
            out["fill_s"] = round(time.perf_counter() - t, 1)

        reader = VarvememStore(mem, index={"fields": ["text"]})
        t = time.perf_counter()
        reader.get(("user0", "memories"), "k0")
        out["first_call_ms"] = round((time.perf_counter() - t) * 1000, 1)
        out["get"] = timed(lambda: reader.get((f"user{(i := rng.randrange(args.items)) % USERS}",
                                               "memories"), f"k{i}"), args.reps)
        out["search_query"] = timed(lambda: reader.search(
            (f"user{rng.randrange(USERS)}", "memories"), query=rng.choice(QUERIES), limit=10),
            max(20, args.reps // 4))
        out["search_newest"] = timed(lambda: reader.search((f"user{rng.randrange(USERS)}",),
                                                           limit=10), max(20, args.reps // 4))
        out["list_namespaces"] = timed(lambda: reader.list_namespaces(limit=100),
                                       max(20, args.reps // 4))
        seen = []
        run = uuid.uuid4().hex[:8]  # keys no earlier run on this home put

        def after_other_put() -> None:
            key = f"new-{run}-{len(seen)}"
            value = {"text": f"User 1 added note {key}"}
            writer.put(("user1", "memories"), key, value)
            t = time.perf_counter()
            got = reader.get(("user1", "memories"), key)
            seen.append((got is not None and got.value == value,
                         (time.perf_counter() - t) * 1000))

        for _ in range(20):
            after_other_put()
        out["get_after_other_put"] = {
            "seen": sum(s for s, _ in seen), "of": len(seen),
            "median_ms": round(statistics.median(ms for _, ms in seen), 3)}
    out["load_after"] = os.getloadavg()
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
