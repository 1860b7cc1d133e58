"""The LLM as a pair judge on the writers' cases (issue 39 item 6): a real model, not a mock.

Each (OLD, NEW) case of ``training/truth`` (split by writer, ``splits.json``) is put to the
model behind an OpenAI-compatible endpoint through :func:`varvemem.engines.llm_judge.judge_pairs`
(one request a case, one OLD statement). Printed: update-vs-not (accuracy, precision, recall,
F1), overall and by language group (``en``, ``zh``, ``across`` = en>zh and zh>en), the four
labels' confusion matrix (answers the judge could not read are a column of their own), recall
of updates by family, and the seconds per call.

The test split is held out: for it only aggregates are printed, never a case (and
``--show-misses`` is refused). Tune on ``dev`` only.

A model to measure, served on loopback (see scripts/local_llm.py)::

    python3 scripts/local_llm.py setup && python3 scripts/local_llm.py serve --port 8181
    PYTHONPATH=src python bench/bench_llm_pairs.py --url http://127.0.0.1:8181/v1 --split dev
    python3 scripts/local_llm.py stop
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from varvemem.benchmarks.truth import load, split_writers
from varvemem.engines.llm_judge import VERDICTS, judge_pairs
from varvemem.errors import LLMError
from varvemem.llm import ChatClient
from varvemem.settings import LLMSettings

ROOT = Path(__file__).resolve().parents[1]
GROUPS = {"en": "en", "zh": "zh", "en>zh": "across", "zh>en": "across"}
ERR = "error"


def _binary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tp = sum(r["label"] == "update" and r["got"] == "update" for r in rows)
    fp = sum(r["label"] != "update" and r["got"] == "update" for r in rows)
    fn = sum(r["label"] == "update" and r["got"] != "update" for r in rows)
    tn = len(rows) - tp - fp - fn
    prec = tp / (tp + fp) if tp + fp else None
    rec = tp / (tp + fn) if tp + fn else None
    f1 = 2 * prec * rec / (prec + rec) if prec and rec else None
    return {"n": len(rows), "accuracy": (tp + tn) / len(rows) if rows else None,
            "precision": prec, "recall": rec, "f1": f1, "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "errors": sum(r["got"] == ERR for r in rows),
            "exact": sum(r["label"] == r["got"] for r in rows) / len(rows) if rows else None}


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    families: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[GROUPS.get(r["lang"], r["lang"])].append(r)
        families[r["family"]].append(r)
    confusion = Counter((r["label"], r["got"]) for r in rows)
    secs = [r["seconds"] for r in rows]
    return {
        "all": _binary(rows),
        "by_language": {g: _binary(groups[g]) for g in ("en", "zh", "across") if groups[g]},
        "by_family": {f: {"n": len(v), "called_update": sum(r["got"] == "update" for r in v)}
                      for f, v in sorted(families.items())},
        "confusion": {t: {g: confusion[(t, g)] for g in (*VERDICTS, ERR)} for t in VERDICTS},
        "seconds_per_call": {
            "mean": statistics.fmean(secs) if secs else None,
            "median": statistics.median(secs) if secs else None,
            "p90": sorted(secs)[int(0.9 * (len(secs) - 1))] if secs else None,
            "total": sum(secs)},
    }


def _pct(x: float | None) -> str:
    return "  -  " if x is None else f"{100 * x:5.1f}"


def report(split: str, s: dict[str, Any], meta: dict[str, Any]) -> None:
    sample = f", a random sample (seed {meta['seed']})" if meta["seed"] is not None else ""
    print(f"\nLLM pair judge, split {split}: {s['all']['n']} cases{sample}, model "
          f"{meta['model']} at {meta['url']}")
    print(f"  {meta['date']}, commit {meta['commit']}, {meta['cpus']} CPUs, load "
          f"{meta['load_before']} before / {meta['load_after']} after")
    print("\nupdate vs not       n    acc   prec    rec     F1  exact4  unread")
    rows = [("all", s["all"]), *s["by_language"].items()]
    for name, b in rows:
        print(f"  {name:<12} {b['n']:>5}  {_pct(b['accuracy'])}  {_pct(b['precision'])}  "
              f"{_pct(b['recall'])}  {_pct(b['f1'])}   {_pct(b['exact'])}  {b['errors']:>5}")
    print("\nconfusion (rows: the writer's label; columns: the model's)")
    cols = (*VERDICTS, ERR)
    print("  " + " " * 10 + "".join(f"{c:>10}" for c in cols))
    for t, row in s["confusion"].items():
        print(f"  {t:<10}" + "".join(f"{row[c]:>10}" for c in cols))
    print("\ncalled update, by family")
    for f, v in s["by_family"].items():
        print(f"  {f:<20} {v['called_update']:>4} / {v['n']:<4}")
    sp = s["seconds_per_call"]
    print(f"\nseconds per call: mean {sp['mean']:.2f}, median {sp['median']:.2f}, "
          f"p90 {sp['p90']:.2f}; total {sp['total'] / 60:.1f} min")


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "train"), default="dev")
    ap.add_argument("--data", type=Path, default=ROOT / "training" / "truth")
    ap.add_argument("--limit", type=int, default=0,
                    help="a random sample of N cases (seeded by --seed); 0: all")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--url", default=os.environ.get("VARVEMEM_LLM_URL",
                                                    "http://127.0.0.1:8181/v1"))
    ap.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds for each request")
    ap.add_argument("--skip", type=int, default=0,
                    help="leave out the first N cases (of the sample): to go on after a run "
                         "that --minutes stopped")
    ap.add_argument("--minutes", type=float, default=0,
                    help="stop after this many minutes and report the cases judged so far "
                         "(with --limit: still a random sample); 0: no limit")
    ap.add_argument("--json", type=Path, help="write the figures (aggregates only) here")
    ap.add_argument("--show-misses", action="store_true",
                    help="print each case the model got wrong (not on the test split)")
    args = ap.parse_args(argv)
    if args.split == "test" and args.show_misses:
        ap.error("the test split is held out: no single case is printed")

    cases = load(args.data, split_writers(args.data, args.split))
    if args.limit:
        cases = random.Random(args.seed).sample(cases, min(args.limit, len(cases)))
    cases = cases[args.skip:]
    cfg = LLMSettings(enabled=True, url=args.url, model=args.model, timeout=args.timeout,
                      retries=0)  # a loopback server: a failure is counted, not retried
    meta: dict[str, Any] = {
        "url": args.url, "model": args.model, "split": args.split, "n": len(cases),
        "limit": args.limit, "seed": args.seed if args.limit else None, "skip": args.skip,
        "commit": _commit(),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": os.cpu_count(), "load_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    rows: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60 * args.minutes if args.minutes else None
    with ChatClient(cfg) as client:
        for n, case in enumerate(cases, 1):
            if deadline is not None and time.monotonic() > deadline:
                # the sample's order is random: the cases done are a random sample too
                print(f"time budget of {args.minutes:g} min spent: {n - 1} of {len(cases)} "
                      "cases judged", file=sys.stderr, flush=True)
                break
            start = time.perf_counter()
            try:
                judged = judge_pairs(client, case.new, [case.old])[0]
                got, reason = judged.verdict, judged.reason
            except LLMError as exc:
                got, reason = ERR, str(exc)
            rows.append({"label": case.label, "got": got, "lang": case.lang,
                         "family": case.family, "seconds": time.perf_counter() - start})
            if args.show_misses and got != case.label:
                print(f"MISS {case.id} [{case.family} {case.lang}] {case.label} -> {got}\n"
                      f"  OLD {case.old}\n  NEW {case.new}" + (f"\n  {reason}" if reason else ""),
                      flush=True)
            if n % 25 == 0 or n == len(cases):
                b = _binary(rows)
                print(f"[{n}/{len(cases)}] update acc {_pct(b['accuracy'])} prec "
                      f"{_pct(b['precision'])} rec {_pct(b['recall'])}, "
                      f"{statistics.fmean(r['seconds'] for r in rows):.2f} s/call",
                      file=sys.stderr, flush=True)
    meta["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    meta["judged"] = len(rows)
    s = score(rows)
    report(args.split, s, meta)
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, **s}, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
