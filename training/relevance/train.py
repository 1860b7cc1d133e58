"""Fit the relevance judge (src/varvemem/engines/relevance.py) on the writers' questions.

    .venv/bin/python training/relevance/train.py    # writes src/varvemem/engines/relevance_judges.json

Reproducible: the same data and embedder give the same file. Only the train and dev writers
of training/relevance/splits.json are read; the held-out writers (relevance.HELD_OUT) never
are.

Rows: each question of a train writer is searched as ``bench relevance`` searches it (the
writer's memories added at their times, the clock at the question's time, default settings
but no judge) and each of the first ``RELEVANCE_WINDOW`` hits gives one row of features,
labelled 1 when the writer named it an answer; then ``--foreign`` questions of the other
writers are asked of each store, every hit labelled 0 (a question of another person's life:
without them the judge never sees a question its store knows nothing about, and calls
"who painted the Mona Lisa?" relevant to the closest memory). The model is a logistic regression
(``--c``), one per kind of memory of ``relevance.KINDS`` (statements; the chat writers'
turns are read for no fit, see KINDS). The threshold (``min_relevance``) is the lowest of
``--thresholds`` at which the answerable questions of the train and dev writers, each
judged by a fit on the others, get at most ``--others`` other hits (issue 40's search
target). Its ``under_floor`` (``min_relevance_under_floor``) is the lowest at which
``--unrelated`` of the other writers' questions get nothing. The shipped model is then
fitted on them all.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from varvemem.api import Memory  # noqa: E402
from varvemem.benchmarks import relevance as bench  # noqa: E402
from varvemem.engines import relevance  # noqa: E402
from varvemem.engines.retrieval import RELEVANCE_WINDOW  # noqa: E402
from varvemem.settings import Settings  # noqa: E402

OUT = ROOT / "src" / "varvemem" / "engines" / "relevance_judges.json"
# Questions of other writers asked of each store as questions it cannot answer, and the
# share of them the judge must leave empty at its threshold for a search no hit of which
# reaches the relevance floor (``Judge.under_floor``).
FOREIGN = 30
UNRELATED = 0.95


def foreign(writers: list[bench.Writer], name: str, n: int) -> list[bench.Question]:
    """``n`` questions of the other writers (theirs in turn, each writer's in order): asked of
    ``name``'s store, they are about nothing it holds (a person's store is one person's
    life), so every hit they find is no answer."""
    others = [[q for q in w.questions] for w in writers if w.name != name]
    out: list[bench.Question] = []
    for i in range(max((len(qs) for qs in others), default=0)):
        out += [qs[i] for qs in others if i < len(qs)]
    return out[:n]


def rows(names: list[str], data: Path, n_foreign: int = 0
         ) -> tuple[np.ndarray, np.ndarray, list[tuple[str, str]], list[str], str]:
    """Features, labels, (writer, question id) and the judge's kind of every hit of the
    writers' questions, in ranked order per question, then of ``n_foreign`` questions of
    the other writers (:func:`foreign`, ids ``x:<writer>:<id>``, no answers); and the
    embedder's model id."""
    xs, ys, keys, kinds = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load(home=Path(tmp))
        settings.retrieval.relevance = "floor"
        clock = bench._Clock()
        with Memory(settings=settings, clock=clock) as mem:
            engine = mem._engines.retrieval  # the engine itself: its ranking before any cut
            everyone = bench.load(data, names)
            for w in everyone:
                ids = bench.fill(mem, clock, w)
                back = {v: k for k, v in ids.items()}
                kind = "" if any(m.session for m in w.memories) else "statement"
                last = max(q.asked for q in w.questions)
                asked = [(q.id, q) for q in w.questions] + [
                    (f"x:{q.id}", replace(q, answers=(), asked=last))
                    for q in foreign(everyone, w.name, n_foreign)]
                for qid, q in asked:
                    clock.now = q.asked
                    flt = mem._args.search_filter(w.name, "u", None, None, None, None, None,
                                                  None, None, None, False, False)
                    ranking = engine.rank(q.text, flt, RELEVANCE_WINDOW, None, None, q.asked)
                    hits = engine.scored_hits(ranking, RELEVANCE_WINDOW)
                    query, inputs = engine.relevance_inputs(ranking, hits)
                    x = relevance.features(query, inputs)
                    for h, row in zip(hits, x):
                        xs.append(row)
                        ys.append(int(back.get(h.memory.memory_id) in q.answers))
                        keys.append((w.name, qid))
                        kinds.append(relevance.kind_of(h.memory.memory_type) or "")
                    if not hits:  # an empty question still counts in the figures
                        keys.append((w.name, qid))
                        xs.append(np.full(len(relevance.FEATURES), np.nan))
                        ys.append(-1)
                        kinds.append(kind)
            model_id = mem.embedder().model_id
    return np.array(xs), np.array(ys), keys, kinds, model_id


def figures(p: np.ndarray, y: np.ndarray, keys: list[tuple[str, str]], answerable: set[tuple[
        str, str]], threshold: float, top: int = 10) -> dict[str, float]:
    """Answer at #1 and #3, other hits per answerable question and the share of unanswerable
    questions left empty, keeping the first ``top`` hits whose ``p`` reaches ``threshold``,
    best ``p`` first."""
    scored: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for i, k in enumerate(keys):
        scored.setdefault(k, [])
        if y[i] >= 0 and p[i] >= threshold:
            scored[k].append((float(p[i]), int(y[i])))
    kept = {k: [label for _, label in sorted(v, key=lambda t: -t[0])][:top]
            for k, v in scored.items()}
    ans = [v for k, v in kept.items() if k in answerable]
    off = [v for k, v in kept.items() if k[1].startswith("x:")]
    un = [v for k, v in kept.items() if k not in answerable and not k[1].startswith("x:")]
    return {"at1": sum(bool(v) and v[0] == 1 for v in ans) / len(ans),
            "at3": sum(1 in v[:3] for v in ans) / len(ans),
            "found": sum(1 in v for v in ans) / len(ans),
            "others": sum(v.count(0) for v in ans) / len(ans),
            "empty": sum(not v for v in un) / max(1, len(un)),
            "unrelated_empty": sum(not v for v in off) / max(1, len(off))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "training" / "relevance")
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--others", type=float, default=1.5)
    ap.add_argument("--thresholds", type=float, nargs="+",
                    default=[0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09]
                    + [round(0.05 * i, 2) for i in range(2, 20)])
    ap.add_argument("--foreign", type=int, default=FOREIGN,
                    help="questions of other writers asked of each store, as non-answers")
    ap.add_argument("--unrelated", type=float, default=UNRELATED,
                    help="the share of those the under-floor threshold leaves empty, at least")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    train = bench.split_writers(args.data, "train")
    dev = bench.split_writers(args.data, "dev")
    x, y, keys, kinds, model_id = rows(train + dev, args.data, args.foreign)
    answerable = {(w.name, q.id) for w in bench.load(args.data, train + dev) for q in w.questions
                  if q.answers}
    writer = np.array([k[0] for k in keys])

    def fit(x: np.ndarray, y: np.ndarray, kind: str, threshold: float, fitted: str
            ) -> relevance.Judge:
        ok = y >= 0
        x, y = x[ok], y[ok]
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale == 0] = 1.0
        lr = LogisticRegression(C=args.c, max_iter=5000).fit((x - mean) / scale, y)
        return relevance.Judge(model_id, kind, mean, scale, lr.coef_[0],
                               float(lr.intercept_[0]), threshold, fitted)

    out = []
    for kind in relevance.KINDS:
        mine = np.array([k == kind for k in kinds])
        xk, yk = x[mine], y[mine]
        keys_k, writers = [k for k, r in zip(keys, mine) if r], writer[mine]
        # Each writer's questions judged by a fit on the other writers (train and dev): the
        # threshold is set on words no fit has seen, over every writer, not two.
        p = np.zeros(len(yk))
        for name in sorted(set(writers)):
            here = writers == name
            judge = fit(xk[~here], yk[~here], kind, 0.5, "")
            p[here] = np.where(yk[here] >= 0, judge.probability(np.nan_to_num(xk[here])), 0.0)
        # Today's order: the weighted sum's ranking, nothing cut.
        first = 1.0 / (1.0 + np.nan_to_num(xk[:, relevance.FEATURES.index("rank")]))
        now = figures(np.where(yk >= 0, first, 0.0), yk, keys_k, answerable, 0.0)
        print(f"[{kind}] weighted sum, no cut: " + ", ".join(f"{k} {v:.3f}"
                                                            for k, v in now.items()))
        table = {t: figures(p, yk, keys_k, answerable, t) for t in args.thresholds}
        for t, f in table.items():
            print(f"[{kind}] threshold {t:g}: " + ", ".join(f"{k} {v:.3f}"
                                                            for k, v in f.items()))
        # The search targets of issue 40: at most --others other hits per answerable
        # question, with the most answers returned (the lowest threshold that keeps it).
        ok = [t for t, f in table.items() if f["others"] <= args.others]
        chosen = min(ok) if ok else max(table)
        print(f"[{kind}] chosen threshold {chosen:.2f} (each writer by a fit on the others: "
              f"{table[chosen]})")
        # Under the floor (no hit has real evidence: often a paraphrase in the other
        # language, or a question of another life) a statement needs more: the lowest
        # threshold at which --unrelated of the other writers' questions get nothing.
        off = [t for t, f in table.items() if f["unrelated_empty"] >= args.unrelated]
        under = min(off) if off else 1.0
        print(f"[{kind}] under the floor: {under:.2f} ({table.get(under)})")
        final = replace(fit(xk, yk, kind, chosen, f"train {','.join(train)} + dev "
                            f"{','.join(dev)}; {args.foreign} questions of the others asked of each"),
                        under_floor=under)
        for name, c in zip(relevance.FEATURES, final.coef):
            print(f"  {name:15s} {c:+.3f}")
        out.append(final.to_json())
    args.out.write_text(json.dumps(out, indent=1) + "\n", "utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
