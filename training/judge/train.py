"""Fit the supersession judge (src/varvemem/engines/judge.py) on the writers' cases.

    .venv/bin/python training/judge/train.py            # writes src/varvemem/engines/judge_usem3.npz

Reproducible: the same cases, seed and embedder give the same file. Only the writers of
``--splits`` of training/truth/splits.json (train, dev and ids) and the stores of
``--store-splits`` of training/relevance/splits.json (train and dev) are read; the held-out
writers and stores (``HELD_OUT`` of each benchmark) never are.

Pairs: each case's (new, old) with its label (update: 1; both and unrelated: 0; same: left
out, either answer serves the fact), ``--negatives`` pairs of a case's new statement with
another case's old one of the same writer (0: what most neighbours of a memory are), and the
pairs the write path judged in one person's store (``--stores``, labelled by readers: the
event reports and standing facts of one topic side by side that no case shows; the stores of
``--store-splits`` of training/relevance, never its held-out ones).

Model: ``--members`` networks of one hidden layer of ``--hidden`` ReLU units (L2 ``--alpha``,
each with its own seed), whose probabilities are averaged; ``--hidden 0`` fits a logistic
regression instead (``--c``). The networks read the same features: the pairs' vectors carry
most of the signal, and a hidden layer lets it combine with the structure.

Calibration: each writer's pairs are predicted by a model fitted on other writers (``--folds``
groups of writers, each predicted by a fit on the rest: the thresholds are set on words no
fit has seen); ``write`` is the lowest threshold at which
at most ``--write-rate`` of the cases' both-true pairs and ``--store-rate`` of the stores'
would be retired, ``read`` the lowest at which at most ``--read-rate`` of the cases'
both-true pairs would be marked at read time. The shipped model is then fitted on every pair.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold
from sklearn.neural_network import MLPClassifier

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from varvemem.benchmarks import relevance, truth  # noqa: E402
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


STORE_LABELS = ("update", "same", "both", "unrelated", "unread")


def store_pairs(path: Path, splits: list[str]) -> list[tuple[str, str, str, int]]:
    """(writer, new text, old text, label) of the pairs the write path judged in the stores
    of ``training/relevance`` (``store_pairs.jsonl``), for the writers of ``splits``: what a
    memory's neighbours in one person's store look like. ``update`` is 1; ``both``,
    ``unrelated`` and ``unread`` (a pair no reader labelled: the judge of the time gave it
    under 0.3) are 0; ``same`` is left out."""
    if not splits:
        return []
    folder = ROOT / "training" / "relevance"
    names = [w for s in splits for w in relevance.split_writers(folder, s)]
    if set(names) & {w for s in relevance.HELD_OUT for w in relevance.split_writers(folder, s)}:
        raise SystemExit("the held-out stores are never learned from")
    said = {m.id: m.text for w in relevance.load(folder, names) for m in w.memories}
    out = []
    for line in path.read_text("utf-8").splitlines():
        row = json.loads(line)
        if row["label"] not in STORE_LABELS:
            raise SystemExit(f"{path}: label {row['label']!r} is not one of {STORE_LABELS}")
        if row["writer"] in names and row["label"] != "same":
            w = row["writer"]
            out.append((w, said[f"{w}-{row['new']}"], said[f"{w}-{row['old']}"],
                        int(row["label"] == "update")))
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
    ap.add_argument("--c", type=float, default=3.0,
                    help="inverse L2 strength of the logistic regression (--hidden 0)")
    ap.add_argument("--hidden", type=int, default=128, help="hidden units a network (0: linear)")
    ap.add_argument("--alpha", type=float, default=0.1, help="L2 strength of the networks")
    ap.add_argument("--members", type=int, default=3, help="networks averaged")
    ap.add_argument("--folds", type=int, default=3,
                    help="out-of-writer folds for the calibration (writers grouped)")
    ap.add_argument("--write-rate", type=float, default=0.015)
    ap.add_argument("--read-rate", type=float, default=0.15)
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--drop", default="",
                    help="feature groups fitted as zeros, for an ablation: any of cosine, "
                         "product, distance, structure, new, old (comma-separated)")
    ap.add_argument("--splits", default="train,dev,ids",
                    help="the splits whose writers it learns from (train alone to tune on dev)")
    ap.add_argument("--stores", type=Path, default=ROOT / "training" / "judge" /
                    "store_pairs.jsonl", help="pairs judged in one person's store, labelled")
    ap.add_argument("--store-splits", default="train,dev",
                    help="the relevance splits whose stores it learns from ('' for none)")
    ap.add_argument("--store-rate", type=float, default=0.01,
                    help="at most this share of the stores' both-true pairs retired")
    ap.add_argument("--store-weight", type=float, default=1.0,
                    help="the weight of a store pair in the fit")
    args = ap.parse_args()

    writers = [w for s in args.splits.split(",") for w in truth.split_writers(args.data, s)]
    if set(writers) & {w for s in truth.HELD_OUT for w in truth.split_writers(args.data, s)}:
        raise SystemExit(f"the held-out writers ({', '.join(truth.HELD_OUT)}) are never "
                         "learned from")
    cases = truth.load(args.data, writers)
    stores = store_pairs(args.stores, list(filter(None, args.store_splits.split(","))))
    embedder = create_embedder(EmbedderSettings())
    texts = [t for c in cases for t in (c.old, c.new)] + [t for _, n, o, _ in stores
                                                          for t in (o, n)]
    vecs = embedder.embed_documents(texts)
    old_v, new_v = vecs[0::2], vecs[1::2]
    sides = [(judge.Side(n), judge.Side(o)) for o, n in zip(texts[0::2], texts[1::2])]
    # (new, old, label, writer, kind): kind 0 a case's own pair, 1 a case's new statement
    # with another case's old one, 2 a pair of one person's store.
    rows = [(i, j, label, cases[i].writer, int(i != j))
            for i, j, label in pairs(cases, args.negatives, args.seed)]
    rows += [(len(cases) + k, len(cases) + k, label, writer, 2)
             for k, (writer, _, _, label) in enumerate(stores)]
    x = np.stack([judge.features(sides[i][0], sides[j][1], new_v[i], old_v[j])
                  for i, j, *_ in rows])
    names = judge.feature_names(new_v.shape[1])
    structure = {name for name, _ in judge.STRUCTURE}
    for group in filter(None, args.drop.split(",")):
        cols = [i for i, n in enumerate(names)
                if (n in structure if group == "structure" else
                    n == group or (n.startswith(f"{group}_") and n[len(group) + 1:].isdigit()))]
        if not cols:
            raise SystemExit(f"--drop: no feature group {group!r}")
        x[:, cols] = 0.0
    y = np.array([row[2] for row in rows])
    writer = np.array([row[3] for row in rows])
    kind = np.array([row[4] for row in rows])
    real = kind == 0
    kept = real & (y == 0)
    in_store = (kind == 2) & (y == 0)
    weight = np.where(kind == 2, args.store_weight, 1.0)

    def weighted(mask: np.ndarray) -> dict[str, np.ndarray]:
        """Sample weights only with store pairs: without them the fit is the one before them
        (the report alone differs, by the store keys)."""
        return {"sample_weight": weight[mask]} if stores else {}

    def fit(mask: np.ndarray) -> judge.Judge:
        """A judge fitted on the pairs of ``mask`` (its thresholds set later)."""
        if args.hidden == 0:
            lr = LogisticRegression(C=args.c, max_iter=5000).fit(x[mask], y[mask],
                                                            **weighted(mask))
            return judge.Judge.linear(embedder.model_id, lr.coef_[0], float(lr.intercept_[0]),
                                      1.0, 1.0)
        nets = [MLPClassifier(hidden_layer_sizes=(args.hidden,), alpha=args.alpha,
                              max_iter=300, early_stopping=True, random_state=args.seed + m
                              ).fit(x[mask], y[mask], **weighted(mask))
                for m in range(args.members)]
        return judge.Judge(
            embedder.model_id, np.concatenate([n.coefs_[0] for n in nets], axis=1),
            np.concatenate([n.intercepts_[0] for n in nets]),
            np.concatenate([n.coefs_[1][:, 0] for n in nets]),
            np.array([n.intercepts_[1][0] for n in nets]), 1.0, 1.0)

    def predict(j: judge.Judge, mask: np.ndarray) -> np.ndarray:
        # The layers as the file stores them (w1 in float16): what the engine will compute.
        w1 = j.w1.astype(np.float16).astype(np.float32)
        hidden = np.maximum(x[mask] @ w1 + j.b1, 0.0) * j.w2
        z = hidden.reshape(int(mask.sum()), j.members, -1).sum(axis=2) + j.b2
        return np.asarray((1.0 / (1.0 + np.exp(-z.astype(np.float64)))).mean(axis=1))

    oof = np.zeros(len(rows))
    for _, held_idx in GroupKFold(n_splits=min(args.folds, len(writers))).split(x, y, writer):
        held = np.zeros(len(rows), dtype=bool)
        held[held_idx] = True
        oof[held] = predict(fit(~held), held)
    write = threshold(oof[kept], args.write_rate)
    if in_store.any():  # and few of a store's look-alikes
        write = max(write, threshold(oof[in_store], args.store_rate))
    read = threshold(oof[kept], args.read_rate)
    ups = real & (y == 1)
    report = {
        "writers": writers, "pairs": len(rows), "updates": int(ups.sum()),
        "kept_pairs": int(kept.sum()), "other_case_pairs": int((kind == 1).sum()),
        "store_pairs": int((kind == 2).sum()), "store_updates": int(((kind == 2) & (y == 1)).sum()),
        "store_splits": args.store_splits, "store_rate": args.store_rate,
        "store_weight": args.store_weight,
        "model": "logistic regression" if args.hidden == 0 else
        f"{args.members} x MLP({args.hidden}) alpha {args.alpha}",
        "c": args.c, "seed": args.seed, "negatives": args.negatives, "dropped": args.drop,
        "folds": args.folds,
        "out_of_writer": {
            "auc": round(float(roc_auc_score(y[real], oof[real])), 4),
            "write": write, "read": read,
            "updates_at_write": round(float((oof[ups] >= write).mean()), 4),
            "updates_at_read": round(float((oof[ups] >= read).mean()), 4),
            "kept_at_write": round(float((oof[kept] >= write).mean()), 4),
            "kept_at_read": round(float((oof[kept] >= read).mean()), 4),
            "other_case_at_read": round(float((oof[kind == 1] >= read).mean()), 4),
            **({"store_kept_at_write": round(float((oof[in_store] >= write).mean()), 4),
                "store_updates_at_write": round(float((oof[(kind == 2) & (y == 1)] >= write
                                                       ).mean()), 4)}
               if in_store.any() else {}),
            # What other write rates would give: the trade-off --write-rate picks from.
            "trade_off": [{"write_rate": r, "write": (t := threshold(oof[kept], r)),
                           "updates_at_write": round(float((oof[ups] >= t).mean()), 4)}
                          for r in (0.005, 0.01, 0.015, 0.02, 0.03)],
        },
    }
    final = fit(np.ones(len(rows), dtype=bool))
    fitted = dataclasses.replace(final, write=write, read=read, meta=report)
    body = fitted.dump()
    args.out.write_bytes(body)
    report["version"] = judge.file_version(body)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
