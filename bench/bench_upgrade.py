"""Adds into a home filled by another release: how many of the filled memories' stored
statements each round of adds finds unusable and parses again (and writes back), and the CPU
of each round.

A child process with ``--fill-src``'s package fills a fresh home with ``--base`` of
``bench_scale``'s texts (vectors given, from bench_add's vector file); this process, with the
package on its own path, then adds ``--rounds`` x 1,000 more.

    PYTHONPATH=src .venv/bin/python bench/bench_upgrade.py --fill-src /work/wt/start/src
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_add import _texts  # noqa: E402


def _fill(home: Path, src: Path, base: int, vectors: Path) -> None:
    import numpy as np

    from bench_core import tree_package

    pkg = tree_package(src)
    m = pkg.Memory(home=home)
    m.add_many([{"content": c} for c in _texts("scale", base)],
               vectors=np.load(vectors)[:base])
    m.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fill-src", type=Path, required=True)
    ap.add_argument("--base", type=int, default=6000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--vectors", type=Path,
                    default=Path(tempfile.gettempdir()) / "bench-add-scale.npy",
                    help="bench_add.py --texts scale's vector file (made by a bench_add run)")
    ap.add_argument("--child-home", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_home:
        _fill(args.child_home, args.fill_src, args.base, args.vectors)
        return
    import numpy as np

    import varvemem
    from varvemem.engines import claims

    home = Path(tempfile.mkdtemp())
    subprocess.run([sys.executable, __file__, "--fill-src", str(args.fill_src), "--base",
                    str(args.base), "--vectors", str(args.vectors), "--child-home", str(home)],
                   env={**os.environ, "PYTHONPATH": str(args.fill_src.resolve())}, check=True)
    texts = _texts("scale", args.base + 1000 * args.rounds)
    vecs = np.load(args.vectors)
    filled, parsed = set(texts[: args.base]), []
    real = claims.statement

    def counting(text: str, *a: Any, **k: Any) -> Any:
        if text in filled:
            parsed.append(text)
        return real(text, *a, **k)

    claims.statement = counting  # type: ignore[assignment]
    m = varvemem.Memory(home=home)
    for i in range(args.base, args.base + 1000 * args.rounds, 1000):
        parsed.clear()
        cpu = time.process_time()
        m.add_many([{"content": t} for t in texts[i: i + 1000]], vectors=vecs[i: i + 1000])
        print(f"adds {i:,}-{i + 1000:,}: {len(set(parsed)):,} filled memories' statements "
              f"parsed again, {time.process_time() - cpu:.1f} s CPU")
    m.close()


if __name__ == "__main__":
    main()
