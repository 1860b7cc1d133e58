"""Start-up time of the command line: the wall time of whole ``varvemem`` processes, and the
default embedder's model load alone.

    PYTHONPATH=src .venv/bin/python bench/bench_cli.py [--home H] [-n 10]
    .venv/bin/python bench/bench_cli.py --src ../main/src --src src   # before / after

The varvemem that runs is the one on ``PYTHONPATH``; with ``--src`` (given twice or more) each
command runs from each of those source folders in turn, sample by sample, so a busy machine
weighs on both alike. Besides the wall time, the child's CPU time (user + system) is shown,
which other processes on the machine disturb less. Without ``--home`` it fills a temporary
home with 1,000 memories first (kept with ``--keep``).

The processes keep their byte code in a temporary ``PYTHONPYCACHEPREFIX`` (even under
``PYTHONDONTWRITEBYTECODE``, which would make every run compile the sources again, as no
installed package does): the warm-up writes it, the timed runs read it, no source tree is
touched.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
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


def model_loads(py: str, n: int, *cache: str, env: dict[str, str] | None = None
                ) -> list[float] | None:
    """``n`` timings of the default embedder's load and first query, each in a new process
    (None when this varvemem has no ``embedder.cache_dir``)."""
    out = []
    for _ in range(n + (1 if cache else 0)):  # with a cache, the first run fills it
        proc = subprocess.run([py, "-c", MODEL_LOAD, *cache], capture_output=True, text=True,
                              env={**os.environ, **(env or {})})
        if proc.returncode:
            return None
        out.append(float(proc.stdout))
    return out[-n:]


def run(args: list[str], env: dict[str, str] | None = None) -> float:
    """Wall time of one process, in seconds; it must succeed."""
    return timed(args, env)[0]


def timed(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) time of one process, in seconds; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def figures(samples: list[float], cpu: list[float] | None = None) -> str:
    out = f"median {statistics.median(samples) * 1000:7.0f} ms   best {min(samples) * 1000:7.0f} ms"
    if cpu:
        out += f"   cpu median {statistics.median(cpu) * 1000:5.0f} ms"
    return out


def commit(env: dict[str, str] | None = None) -> str:
    """The commit (and folder) of the varvemem that runs with ``env``."""
    where = subprocess.run([sys.executable, "-c", "import varvemem; print(varvemem.__file__)"],
                           capture_output=True, text=True, check=True,
                           env={**os.environ, **(env or {})}).stdout.strip()
    src = Path(where).resolve().parent
    try:
        out = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "--", "."],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"unknown ({src})"
    return f"{out}{' (modified)' if dirty else ''} ({src})"


def model(py: str, n: int, search: list[str], env: dict[str, str]) -> None:
    """The default embedder's load alone, with and without ``embedder.cache_dir``, and a
    search with it (from the first variant's source only: the model is the same for all)."""
    loads = model_loads(py, n, env=env)
    assert loads is not None, "the default embedder does not load"
    print(f"{'model load + 1 query':<22} {figures(loads)}")
    with tempfile.TemporaryDirectory(prefix="bench-cli-models-") as models:
        cached = model_loads(py, n, models, env=env)
        print(f"{'  with cache_dir':<22} "
              f"{figures(cached) if cached else 'n/a (no embedder.cache_dir)'}")
        if cached:
            env = {**env, "VARVEMEM_EMBEDDER__CACHE_DIR": models}
            run(search, env)
            print(f"{'search, cache_dir':<22} {figures([run(search, env) for _ in range(n)])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--home", type=Path, help="A home to read (default: a new one, 1,000 memories).")
    ap.add_argument("-n", type=int, default=10, help="Runs of each command (default 10).")
    ap.add_argument("--keep", action="store_true", help="Keep the temporary home.")
    ap.add_argument("--src", action="append", type=Path, default=[],
                    help="A source folder to run varvemem from (its PYTHONPATH); give two or "
                         "more to compare them, sample by sample.")
    ap.add_argument("--only", default="",
                    help="Comma-separated command names to time (default: all, and the model "
                         "load), e.g. 'stats,get ID'.")
    args = ap.parse_args()
    py = sys.executable
    pycache = tempfile.mkdtemp(prefix="bench-cli-pyc-")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the children inherit os.environ
    os.environ["PYTHONPYCACHEPREFIX"] = pycache
    # Each variant: a label and the environment it runs with.
    variants = [(str(src), {"PYTHONPATH": str(src.resolve())}) for src in args.src] or [("", {})]
    first_env = variants[0][1]
    env_home = args.home
    tmp = None
    if env_home is None:
        tmp = tempfile.mkdtemp(prefix="bench-cli-")
        env_home = Path(tmp) / "home"
        subprocess.run([py, "-c", FILL, str(env_home)], check=True,
                       env={**os.environ, **first_env})
    home = str(env_home)
    first = subprocess.run([py, "-c", FIRST_ID, home], check=True, capture_output=True,
                           text=True, env={**os.environ, **first_env}).stdout.strip()
    cli = [py, "-m", "varvemem"]
    commands = {
        "--help": [*cli, "--help"],
        "--version": [*cli, "--version"],
        "stats": [*cli, "stats", "--home", home],
        "get ID": [*cli, "get", first, "--home", home],
        "search": [*cli, "search", "which ticket is about the VPN?", "--home", home],
        # The floor under any command that reads the home: typer (which coerces parameters
        # with pydantic), then pydantic-settings, which Settings is made of.
        "floor: typer+pydantic": [py, "-c", "import typer, typer._adapters, pydantic"],
        "floor: +settings lib": [py, "-c", "import typer, typer._adapters, pydantic, "
                                           "pydantic_settings"],
    }
    print(f"machine: {platform.node()}, {platform.machine()}, {os.cpu_count()} cpus, "
          f"{platform.system()} {platform.release()}, Python {platform.python_version()}")
    print(f"date:    {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}")
    for label, env in variants:
        print(f"commit:  {commit(env)}{f'  [{label}]' if label else ''}")
    print(f"home:    {home} (runs: {args.n} each, after one warm-up)")
    print(f"load:    {os.getloadavg()[0]:.2f} (1 min average, at the start)")
    only = [c.strip() for c in args.only.split(",") if c.strip()]
    for name, argv in commands.items():
        if only and name not in only:
            continue
        for _, env in variants:
            run(argv, env)  # warm the page cache and the byte code
        samples: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in variants}
        for _ in range(args.n):  # the variants alternate: a busy spell weighs on each alike
            for label, env in variants:
                samples[label].append(timed(argv, env))
        for label, _ in variants:
            wall, cpu = zip(*samples[label])
            print(f"{name:<22} {figures(list(wall), list(cpu))}"
                  f"{f'  [{label}]' if label else ''}")
    print(f"load:    {os.getloadavg()[0]:.2f} (1 min average, at the end of the commands)")
    if not only:
        model(py, args.n, commands["search"], first_env)
    import shutil

    shutil.rmtree(pycache)
    if tmp is not None and not args.keep:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
