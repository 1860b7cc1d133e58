"""``add_many`` throughput with vectors given, side by side for several source trees.

Each ``--src`` is a checkout's ``src`` folder (e.g. two ``git worktree``s); the trees run
alternately, ``--rounds`` times each, in child processes. A round embeds nothing: the vectors
come from one ``--vectors`` file (``.npy`` of bench_core's texts, made on the first run). A round
fills a fresh home with ``--base`` memories, then times ``--adds`` more in batches of 1,000.

    .venv/bin/python bench/bench_add.py --src /work/wt/old/src --src src --rounds 2
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def _round(base: int, adds: int, vectors: Path) -> dict[str, float]:
    """One round in this process (the child): the source tree is on ``sys.path`` already."""
    import numpy as np

    sys.path.insert(0, str(BENCH_DIR))
    from bench_core import make_texts
    from varvemem import Memory, Settings

    texts, vecs = make_texts(base + adds), np.load(vectors)
    with tempfile.TemporaryDirectory() as home:
        m = Memory(settings=Settings.load(home=Path(home)))
        m.add_many([{"content": c} for c in texts[:base]], vectors=vecs[:base])
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(base, base + adds, 1000):
            m.add_many([{"content": c} for c in texts[i: i + 1000]], vectors=vecs[i: i + 1000])
        out = {"wall_s": time.perf_counter() - wall,
               "cpu_ms_per_memory": (time.process_time() - cpu) * 1000 / adds}
        m.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", action="append", default=[], type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--base", type=int, default=6000)
    ap.add_argument("--adds", type=int, default=6000)
    ap.add_argument("--vectors", type=Path, default=Path(tempfile.gettempdir()) / "bench-add.npy")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_round(args.base, args.adds, args.vectors)))
        return
    if not args.src:
        ap.error("give at least one --src")
    if not args.vectors.exists():
        import numpy as np

        sys.path.insert(0, str(BENCH_DIR))
        from bench_core import make_texts
        from varvemem.embeddings.usem3 import USEEmbedder

        emb, texts = USEEmbedder(), make_texts(args.base + args.adds)
        np.save(args.vectors, np.concatenate([emb.embed_documents(texts[i: i + 64])
                                              for i in range(0, len(texts), 64)]))
    for r in range(args.rounds):
        for src in args.src:
            env = {**os.environ, "PYTHONPATH": str(src.resolve())}
            res = subprocess.run([sys.executable, __file__, "--child", "--base", str(args.base),
                                  "--adds", str(args.adds), "--vectors", str(args.vectors)],
                                 env=env, capture_output=True, text=True, check=True)
            got = json.loads(res.stdout.strip().splitlines()[-1])
            print(f"round {r + 1} {src}: {args.adds:,} adds in {got['wall_s']:.1f} s, "
                  f"{got['cpu_ms_per_memory']:.2f} ms CPU a memory, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
