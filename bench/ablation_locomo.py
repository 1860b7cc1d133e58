"""What each retrieval default buys on LoCoMo: the same data indexed with one feature added at
a time, and the re-rank weights before and after tuning, in one run.

    .venv/bin/python bench/ablation_locomo.py --data ../shared/bench-data/locomo/locomo10.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from varvemem.benchmarks import locomo, runner
from varvemem.settings import Profile, Weights

# Each step adds one feature to the previous one (update.* settings).
STEPS = {
    "turns alone": dict(runner.PLAIN),
    "+ turns before and reply in full text": {"context_before": 2, "context_reply": True,
                                              "context_embed": 0, "speaker_keys": []},
    "+ turn before in the vector": {"context_before": 2, "context_reply": True,
                                    "context_embed": 1, "speaker_keys": []},
    "+ speaker as a tag (the default)": {},
}
OLD_WEIGHTS = Profile(weights=Weights(semantic=0.45, keyword=0.25, tag=0.10, recency=0.08,
                                      importance=0.07, reliability=0.05))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True)
    ap.add_argument("--conversations", type=int)
    ap.add_argument("--json")
    args = ap.parse_args()
    data = locomo.load(args.data, args.conversations)
    docs, qs = locomo.documents(data), locomo.queries(data)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, update) in enumerate(STEPS.items()):
            systems = {name: None}
            if not update:
                systems["default pipeline, weights before tuning"] = "old-weights"
            root = Path(tmp) / str(n)
            root.mkdir()
            config = root / "varvemem.toml"
            config.write_text(_profile_toml(OLD_WEIGHTS))
            os.environ["VARVEMEM_CONFIG"] = str(config)  # the old weights as a named profile
            t0 = time.perf_counter()
            runs = runner.compare(docs, qs, [runner.Home("usem3", False, systems)], 25,
                                  root, update=update)
            for sys_name, (ranking, indexed) in runs.items():
                s = runner.score_turns(ranking, qs, [5, 10, 25])
                rows.append({"step": sys_name, **{k: s[k] for k in
                             ("recall@5", "recall@10", "recall@25", "ndcg@10", "mrr")},
                             "by_category_recall@10": {c: b["recall@10"]
                                                       for c, b in s["by_category"].items()},
                             "add_per_second": indexed.docs / indexed.add_seconds})
                print(f"{sys_name:45s} R@10 {100 * s['recall@10']:.1f}  "
                      f"({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
    out = {"commit": commit, "questions": len(qs), "turns": len(docs), "steps": rows}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


def _profile_toml(p: Profile) -> str:
    w = p.weights
    return ("[retrieval.profiles.old-weights.weights]\n" + "".join(
        f"{k} = {v}\n" for k, v in w.model_dump().items()))


if __name__ == "__main__":
    main()
