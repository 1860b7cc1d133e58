"""Fit the FAQ paraphrase judge (src/varvemem/engines/faq_confidence.py, ``PairJudge``).

    .venv/bin/python training/relevance/train_faq.py   # writes src/varvemem/engines/faq_judges.json

Each ask of a train writer of training/relevance/splits.json meets its writer's FAQ as ``ask``
meets stored pairs: the ``--candidates`` questions nearest by the default embedder's cosine, at
least ``--min-cosine``. Each candidate is one row of ``PAIR_FEATURES``, labelled 1 when the
writer said the ask is that entry's question. The model is a logistic regression (``--c``).
The threshold is the lowest of ``--thresholds`` at which the reuses (each ask's most probable
candidate) of the train and dev writers, each judged by a fit on the others, are right at
least ``--precision`` of the time; the shipped model is then fitted on them all. The
held-out writers are never read.
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
from varvemem.embeddings import Embedder, create_embedder  # noqa: E402
from varvemem.engines import faq_confidence as fc  # noqa: E402
from varvemem.settings import EmbedderSettings, FAQSettings  # noqa: E402

OUT = ROOT / "src" / "varvemem" / "engines" / "faq_judges.json"


def rows(names: list[str], data: Path, embedder: Embedder, k: int, gate: float
         ) -> tuple[np.ndarray, np.ndarray, list[tuple[str, bool]]]:
    """Features, labels and (ask id, is a same question) of every candidate pair."""
    xs, ys, keys = [], [], []
    for w in bench.load(data, names):
        stored = embedder.embed_documents([f.question for f in w.faqs])
        for a in w.asks:
            cos = stored @ embedder.embed_query(a.text)
            order = [j for j in np.argsort(-cos)[:k] if cos[j] >= gate]
            for rank, j in enumerate(order):
                row, _, _ = fc.pair_features(a.text, w.faqs[j].question, float(cos[j]),
                                             float(cos[order[0]]), rank)
                xs.append(row)
                ys.append(int(a.faq == w.faqs[j].id))
                keys.append((a.id, a.faq is not None))
    return np.array(xs), np.array(ys), keys


def figures(p: np.ndarray, y: np.ndarray, keys: list[tuple[str, bool]], same: int,
            t: float) -> dict[str, float]:
    """Reuse recall over same questions and precision over reuses at threshold ``t``."""
    best: dict[str, tuple[float, int]] = {}
    for pi, yi, (ask, _) in zip(p, y, keys):
        if pi > best.get(ask, (-1.0, 0))[0]:
            best[ask] = (float(pi), int(yi))
    reused = [v for v in best.values() if v[0] >= t]
    right = sum(v[1] for v in reused)
    return {"recall": right / max(1, same), "precision": right / len(reused) if reused else 1.0,
            "reused": float(len(reused))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "training" / "relevance")
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--candidates", type=int, default=FAQSettings().reuse_candidates)
    ap.add_argument("--min-cosine", type=float, default=FAQSettings().reuse_min_cosine)
    ap.add_argument("--precision", type=float, default=0.98)
    ap.add_argument("--thresholds", type=float, nargs="+",
                    default=[round(0.05 * i, 2) for i in range(6, 20)])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    embedder = create_embedder(EmbedderSettings())
    names = [w.name for w in bench.load(args.data, bench.split_writers(args.data, "train")
                                        + bench.split_writers(args.data, "dev")) if w.asks]
    data = {n: rows([n], args.data, embedder, args.candidates, args.min_cosine) for n in names}
    same = sum(1 for w in bench.load(args.data, names) for a in w.asks if a.faq is not None)

    def fit(x: np.ndarray, y: np.ndarray, threshold: float, fitted: str) -> fc.PairJudge:
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale == 0] = 1.0
        lr = LogisticRegression(C=args.c, max_iter=5000).fit((x - mean) / scale, y)
        return fc.PairJudge(embedder.model_id, tuple(mean.tolist()), tuple(scale.tolist()),
                            tuple(lr.coef_[0].tolist()), float(lr.intercept_[0]), threshold,
                            fitted)

    # Each writer's asks judged by a fit on the other writers: the threshold is set on
    # words no fit has seen.
    probs, labels, keys = [], [], []
    for name in names:
        rest = [n for n in names if n != name]
        judge = fit(np.concatenate([data[n][0] for n in rest]),
                    np.concatenate([data[n][1] for n in rest]), 0.5, "")
        x, y, k = data[name]
        probs += [judge.probability(list(r)) for r in x]
        labels += y.tolist()
        keys += k
    p, y = np.array(probs), np.array(labels)
    table = {t: figures(p, y, keys, same, t) for t in args.thresholds}
    for t, f in table.items():
        print(f"threshold {t:.2f}: " + ", ".join(f"{k} {v:.3f}" for k, v in f.items()))
    ok = [t for t, f in table.items() if f["precision"] >= args.precision]
    chosen = min(ok) if ok else max(args.thresholds)
    print(f"chosen threshold {chosen:.2f} (each writer by a fit on the others: "
          f"{table[chosen]})")
    final = fit(np.concatenate([data[n][0] for n in names]),
                np.concatenate([data[n][1] for n in names]), chosen,
                f"writers {','.join(names)}")
    for name, c in zip(fc.PAIR_FEATURES, final.coef):
        print(f"  {name:15s} {c:+.3f}")
    args.out.write_text(json.dumps([final.to_json()], indent=1) + "\n", "utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
