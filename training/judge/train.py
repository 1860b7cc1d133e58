"""Fit the supersession judge (src/varvemem/engines/judge.py) on the writers' cases.

    .venv/bin/python training/judge/train.py            # writes src/varvemem/engines/judge_usem3.npz

Reproducible: the same cases, seed and embedder give the same file. Only the train and dev
writers of training/truth/splits.json are read; the held-out writers (test, fresh) never are.

Pairs: each case's (new, old) with its label (update: 1; both and unrelated: 0; same: left
out, either answer serves the fact), and ``--negatives`` pairs of a case's new statement with
another case's old one of the same writer (0: what most neighbours of a memory are).

Calibration: each writer's pairs are predicted by a model fitted on the other writers (so
the thresholds are set on words no fit has seen); ``write`` is the lowest threshold at which
at most ``--write-rate`` of the both-true pairs would be retired, ``read`` the lowest at which
at most ``--read-rate`` of them would be marked at read time. The shipped model is then
fitted on every pair.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from varvemem.benchmarks import truth  # noqa: E402
from varvemem.embeddings import create_embedder  # noqa: E402
from varvemem.engines import judge  # noqa: E402
from varvemem.settings import EmbedderSettings  # noqa: E402


def pairs(cases: list[truth.Case], negatives: int, seed: int) -> list[tuple[int, int, int]]:
    """(new's case, old's case, label) over ``cases`` by index."""
    rng = random.Random(seed)
    by_writer: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        by_writer.setdefault(c.writer, []).append(i)
    out = []
    for i, c in enumerate(cases):
        if c.label != "same":
            out.append((i, i, int(c.label == "update")))
        others = [j for j in by_writer[c.writer] if j != i]
        out += [(i, j, 0) for j in rng.sample(others, negatives)]
    return out


def threshold(p: np.ndarray, rate: float) -> float:
    """The lowest threshold (to 4 places) that more than ``rate`` of ``p`` do not reach."""
    t = float(np.quantile(p, 1.0 - rate, method="higher"))
    return round(t + 1e-4, 4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "training" / "truth")
    ap.add_argument("--out", type=Path, default=ROOT / "src" / "varvemem" / "engines" /
                    "judge_usem3.npz")
    ap.add_argument("--negatives", type=int, default=2)
    ap.add_argument("--c", type=float, default=3.0, help="inverse L2 strength")
    ap.add_argument("--write-rate", type=float, default=0.015)
    ap.add_argument("--read-rate", type=float, default=0.15)
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--drop", default="",
                    help="feature groups fitted as zeros, for an ablation: any of cosine, "
                         "product, distance, structure, new, old (comma-separated)")
    ap.add_argument("--splits", default="train,dev",
                    help="the splits whose writers it learns from (train alone to tune on dev)")
    args = ap.parse_args()

    writers = [w for s in args.splits.split(",") for w in truth.split_writers(args.data, s)]
    if set(writers) & {w for s in truth.HELD_OUT for w in truth.split_writers(args.data, s)}:
        raise SystemExit("the held-out writers (test, fresh) are never learned from")
    cases = truth.load(args.data, writers)
    embedder = create_embedder(EmbedderSettings())
    vecs = embedder.embed_documents([t for c in cases for t in (c.old, c.new)])
    old_v, new_v = vecs[0::2], vecs[1::2]
    sides = [(judge.Side(c.new), judge.Side(c.old)) for c in cases]
    rows = pairs(cases, args.negatives, args.seed)
    x = np.stack([judge.features(sides[i][0], sides[j][1], new_v[i], old_v[j])
                  for i, j, _ in rows])
    names = judge.feature_names(new_v.shape[1])
    structure = {name for name, _ in judge.STRUCTURE}
    for group in filter(None, args.drop.split(",")):
        cols = [i for i, n in enumerate(names)
                if (n in structure if group == "structure" else
                    n == group or (n.startswith(f"{group}_") and n[len(group) + 1:].isdigit()))]
        if not cols:
            raise SystemExit(f"--drop: no feature group {group!r}")
        x[:, cols] = 0.0
    y = np.array([label for _, _, label in rows])
    writer = np.array([cases[i].writer for i, _, _ in rows])
    real = np.array([i == j for i, j, _ in rows])
    kept = real & (y == 0)

    def fit(mask: np.ndarray) -> LogisticRegression:
        return LogisticRegression(C=args.c, max_iter=5000).fit(x[mask], y[mask])

    oof = np.zeros(len(rows))
    for w in writers:
        held = writer == w
        oof[held] = fit(~held).predict_proba(x[held])[:, 1]
    write = threshold(oof[kept], args.write_rate)
    read = threshold(oof[kept], args.read_rate)
    ups = real & (y == 1)
    report = {
        "writers": writers, "pairs": len(rows), "updates": int(ups.sum()),
        "kept_pairs": int(kept.sum()), "other_case_pairs": int((~real).sum()),
        "c": args.c, "seed": args.seed, "negatives": args.negatives, "dropped": args.drop,
        "out_of_writer": {
            "auc": round(float(roc_auc_score(y[real], oof[real])), 4),
            "write": write, "read": read,
            "updates_at_write": round(float((oof[ups] >= write).mean()), 4),
            "updates_at_read": round(float((oof[ups] >= read).mean()), 4),
            "kept_at_write": round(float((oof[kept] >= write).mean()), 4),
            "kept_at_read": round(float((oof[kept] >= read).mean()), 4),
            "other_case_at_read": round(float((oof[~real] >= read).mean()), 4),
        },
    }
    final = fit(np.ones(len(rows), dtype=bool))
    fitted = judge.Judge(encoder=embedder.model_id, coef=final.coef_[0].astype(np.float32),
                         intercept=float(final.intercept_[0]), write=write, read=read,
                         meta=report)
    body = fitted.dump()
    args.out.write_bytes(body)
    report["version"] = judge.file_version(body)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
