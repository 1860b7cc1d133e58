"""``add_many`` throughput with vectors given, side by side for several source trees.

Each ``--src`` is a checkout's ``src`` folder (e.g. two ``git worktree``s); the trees run
alternately, ``--rounds`` times each, in child processes, each importing the package from its
own tree (``memstrata`` in trees from before the rename). A round embeds nothing: the vectors
come from one ``--vectors`` file (``.npy`` of ``--texts``: bench_core's or bench_scale's texts,
or LoCoMo's turns as conversation, made on the first run). A round fills a fresh home with
``--base`` memories, then times ``--adds`` more in batches of 1,000.

    .venv/bin/python bench/bench_add.py --src /work/wt/old/src --src src --rounds 2 --texts scale

``--cold`` reopens the home before the timed adds with the engines' caches emptied, as a new
process (or a store bigger than the caches) finds them.
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
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
LOCOMO = BENCH_DIR.parent.parent / "shared" / "bench-data" / "locomo" / "locomo10.json"


def _texts(kind: str, n: int) -> list[str]:
    return [item["content"] for item in _items(kind, n)]


def _items(kind: str, n: int) -> list[dict[str, Any]]:
    """``n`` items for ``add_many``: bench_core's or bench_scale's texts, or LoCoMo's turns as
    ``varvemem bench locomo`` adds them (``benchmarks.runner.index``: type dialogue, a user
    per conversation, its sessions, the turns' times, the speaker in metadata)."""
    sys.path.insert(0, str(BENCH_DIR))
    if kind == "turns":  # read where they are (CC BY-NC: never copied), as bench locomo adds them
        from varvemem.benchmarks import locomo

        items = [{"content": d.content, "user": d.scope, "session": d.session,
                  "created_at": d.time, "type": "dialogue",
                  "metadata": {"key": d.key, **d.metadata}}
                 for d in locomo.documents(locomo.load(LOCOMO))]
    elif kind == "scale":
        from bench_scale import make_texts as scale_texts

        items = [{"content": c} for c in scale_texts(n)]
    else:
        from bench_core import make_texts

        items = [{"content": c} for c in make_texts(n)]
    if len(items) < n:
        raise SystemExit(f"--texts {kind} has {len(items):,} items, fewer than --base + "
                         f"--adds ({n:,})")
    return items[:n]


def _forget_parses(package: str) -> None:
    """Empty the engines' caches (``functools.lru_cache``): what a new process, or a store
    bigger than the caches, starts from."""
    for name, module in list(sys.modules.items()):
        if name.startswith(f"{package}.engines"):
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def _round(base: int, adds: int, vectors: Path, kind: str, src: Path,
           cold: bool) -> dict[str, Any]:
    """One round in this process (the child), with the package of the tree ``src``."""
    import numpy as np

    sys.path.insert(0, str(BENCH_DIR))
    from bench_core import tree_package

    pkg = tree_package(src)
    Memory = pkg.Memory

    items, vecs = _items(kind, base + adds), np.load(vectors)
    with tempfile.TemporaryDirectory() as home:
        m = Memory(home=Path(home))
        m.add_many(items[:base], vectors=vecs[:base])
        if cold:
            m.close()
            _forget_parses(pkg.__name__)
            m = Memory(home=Path(home))
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(base, base + adds, 1000):
            m.add_many(items[i: i + 1000], vectors=vecs[i: i + 1000])
        out = {"wall_s": time.perf_counter() - wall,
               "cpu_ms_per_memory": (time.process_time() - cpu) * 1000 / adds,
               "package": pkg.__file__}
        m.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", action="append", default=[], type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--base", type=int, default=6000)
    ap.add_argument("--adds", type=int, default=6000)
    ap.add_argument("--texts", choices=("core", "scale", "turns"), default="core",
                    help="bench_core's memories (8-40 words), bench_scale's (8-60) or LoCoMo's "
                    "conversation turns (type dialogue; ../shared/bench-data)")
    ap.add_argument("--vectors", type=Path, help="the texts' vectors, made on the first run "
                    "(default: bench-add-<texts>.npy in the temp folder)")
    ap.add_argument("--src-dir", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--cold", action="store_true",
                    help="reopen the home and empty the parse caches before the timed adds")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.vectors = args.vectors or Path(tempfile.gettempdir()) / f"bench-add-{args.texts}.npy"
    if args.child:
        print(json.dumps(_round(args.base, args.adds, args.vectors, args.texts, args.src_dir,
                                args.cold)))
        return
    if not args.src:
        ap.error("give at least one --src")
    import numpy as np

    # The file is shared with bench_search_trees, which may have made fewer rows.
    if not args.vectors.exists() or len(np.load(args.vectors, mmap_mode="r")) < args.base + args.adds:
        from varvemem.embeddings.usem3 import USEEmbedder

        emb, texts = USEEmbedder(), _texts(args.texts, args.base + args.adds)
        np.save(args.vectors, np.concatenate([emb.embed_documents(texts[i: i + 64])
                                              for i in range(0, len(texts), 64)]))
    for r in range(args.rounds):
        for src in args.src:
            env = {**os.environ, "PYTHONPATH": str(src.resolve())}
            res = subprocess.run([sys.executable, __file__, "--child", "--base", str(args.base),
                                  "--adds", str(args.adds), "--vectors", str(args.vectors),
                                  "--texts", args.texts, "--src-dir", str(src),
                                  *(["--cold"] if args.cold else [])],
                                 env=env, capture_output=True, text=True, check=True)
            got = json.loads(res.stdout.strip().splitlines()[-1])
            print(f"round {r + 1} {src}: {args.adds:,} adds in {got['wall_s']:.1f} s, "
                  f"{got['cpu_ms_per_memory']:.2f} ms CPU a memory, load {os.getloadavg()[0]:.1f} "
                  f"({got['package']})")


if __name__ == "__main__":
    main()
