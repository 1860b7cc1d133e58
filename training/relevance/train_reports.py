"""Fit the event-report reader (src/varvemem/engines/reports.py) on the writers' memories.

    .venv/bin/python training/relevance/train_reports.py   # writes src/varvemem/engines/reports.json

Each memory of a train or dev writer of training/relevance/splits.json is one row: its
vector (the default embedder) and what its time words say, labelled 1 when its writer gave it
the day it ``happened`` (an event), 0 for a standing fact. The held-out writers are never
read. A logistic regression (``--c``); its accuracy on each writer predicted by a fit on the
others is printed, then the shipped fit reads them all.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from varvemem.benchmarks import relevance as bench  # noqa: E402
from varvemem.embeddings import create_embedder  # noqa: E402
from varvemem.engines import reports  # noqa: E402
from varvemem.settings import EmbedderSettings  # noqa: E402

OUT = ROOT / "src" / "varvemem" / "engines" / "reports.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "training" / "relevance")
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    names = bench.split_writers(args.data, "train") + bench.split_writers(args.data, "dev")
    memories = [(w.name, m) for w in bench.load(args.data, names) for m in w.memories]
    embedder = create_embedder(EmbedderSettings())
    vectors = embedder.embed_documents([m.text for _, m in memories])
    time = np.array([reports.time_features(m.text, m.recorded)[0] for _, m in memories])
    x = np.hstack([vectors, time])
    y = np.array([int(bool(m.happened)) for _, m in memories])
    groups = np.array([n for n, _ in memories])
    right = 0
    for name in names:
        out = groups == name
        fit = LogisticRegression(C=args.c, max_iter=5000).fit(x[~out], y[~out])
        pred = fit.predict(x[out])
        right += int((pred == y[out]).sum())
        print(f"{name}: {np.mean(pred == y[out]):.3f} right "
              f"({int(((pred == 1) & (y[out] == 0)).sum())} facts read as events, "
              f"{int(((pred == 0) & (y[out] == 1)).sum())} events as facts)")
    print(f"each writer by a fit on the others: {right / len(y):.3f} right of {len(y)}")
    fit = LogisticRegression(C=args.c, max_iter=5000).fit(x, y)
    reader = reports.Reader(embedder.model_id, fit.coef_[0], float(fit.intercept_[0]),
                            f"{len(y)} memories of {','.join(names)}")
    args.out.write_text(json.dumps([reader.to_json()]) + "\n", "utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
