"""Start-up time of the command line: the wall time of whole ``varvemem`` processes, and the
default embedder's model load alone.

    PYTHONPATH=src .venv/bin/python bench/bench_cli.py [--home H] [-n 10]

The varvemem that runs is the one on ``PYTHONPATH``: run it twice with two checkouts to compare
them. Without ``--home`` it fills a temporary home with 1,000 memories first (kept with
``--keep``).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

FILL = """
import sys
from varvemem import Memory
subjects = ["the build server", "the API gateway", "the staging cluster", "the billing job",
            "the search index", "the mobile app", "the VPN", "the release train"]
with Memory(home=sys.argv[1]) as mem:
    mem.add_many(f"note {i}: {subjects[i % len(subjects)]} has ticket T-{i * 7919 % 100000}"
                 f" about step {i % 97} in area {i // 8}" for i in range(1000))
"""
FIRST_ID = """
import sys
from varvemem import Memory
with Memory(home=sys.argv[1]) as mem:
    print(mem.get_all()[0].memory_id)
"""
MODEL_LOAD = """
import sys, time
from varvemem.embeddings import create_embedder
from varvemem.settings import EmbedderSettings
cfg = EmbedderSettings(**({"cache_dir": sys.argv[1]} if len(sys.argv) > 1 else {}))
t = time.perf_counter()
create_embedder(cfg).embed_query("warm up")
print(time.perf_counter() - t)
"""


def model_loads(py: str, n: int, *cache: str) -> list[float] | None:
    """``n`` timings of the default embedder's load and first query, each in a new process
    (None when this varvemem has no ``embedder.cache_dir``)."""
    out = []
    for _ in range(n + (1 if cache else 0)):  # with a cache, the first run fills it
        proc = subprocess.run([py, "-c", MODEL_LOAD, *cache], capture_output=True, text=True)
        if proc.returncode:
            return None
        out.append(float(proc.stdout))
    return out[-n:]


def run(args: list[str], env: dict[str, str] | None = None) -> float:
    """Wall time of one process, in seconds; it must succeed."""
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})})
    return time.perf_counter() - start


def figures(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1000:7.0f} ms   best {min(samples) * 1000:7.0f} ms"


def commit() -> str:
    import varvemem

    src = Path(varvemem.__file__).resolve().parent
    try:
        out = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "--", "."],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"unknown ({src})"
    return f"{out}{' (modified)' if dirty else ''} ({src})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--home", type=Path, help="A home to read (default: a new one, 1,000 memories).")
    ap.add_argument("-n", type=int, default=10, help="Runs of each command (default 10).")
    ap.add_argument("--keep", action="store_true", help="Keep the temporary home.")
    args = ap.parse_args()
    py = sys.executable
    env_home = args.home
    tmp = None
    if env_home is None:
        tmp = tempfile.mkdtemp(prefix="bench-cli-")
        env_home = Path(tmp) / "home"
        subprocess.run([py, "-c", FILL, str(env_home)], check=True)
    home = str(env_home)
    first = subprocess.run([py, "-c", FIRST_ID, home], check=True, capture_output=True,
                           text=True).stdout.strip()
    cli = [py, "-m", "varvemem"]
    commands = {
        "--help": [*cli, "--help"],
        "--version": [*cli, "--version"],
        "stats": [*cli, "stats", "--home", home],
        "get ID": [*cli, "get", first, "--home", home],
        "search": [*cli, "search", "which ticket is about the VPN?", "--home", home],
    }
    print(f"machine: {platform.node()}, {platform.machine()}, {os.cpu_count()} cpus, "
          f"{platform.system()} {platform.release()}, Python {platform.python_version()}")
    print(f"date:    {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}")
    print(f"commit:  {commit()}")
    print(f"home:    {home} (runs: {args.n} each, after one warm-up)")
    for name, argv in commands.items():
        run(argv)  # warm the page cache and the byte code
        print(f"{name:<22} {figures([run(argv) for _ in range(args.n)])}")
    loads = model_loads(py, args.n)
    assert loads is not None, "the default embedder does not load"
    print(f"{'model load + 1 query':<22} {figures(loads)}")
    with tempfile.TemporaryDirectory(prefix="bench-cli-models-") as models:
        cached = model_loads(py, args.n, models)
        print(f"{'  with cache_dir':<22} "
              f"{figures(cached) if cached else 'n/a (no embedder.cache_dir)'}")
        if cached:
            env = {"VARVEMEM_EMBEDDER__CACHE_DIR": models}
            run(commands["search"], env)
            print(f"{'search, cache_dir':<22} "
                  f"{figures([run(commands['search'], env) for _ in range(args.n)])}")
    if tmp is not None and not args.keep:
        import shutil

        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
