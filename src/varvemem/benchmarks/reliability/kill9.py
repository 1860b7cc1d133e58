"""The kill -9 probe (:func:`probe_kill9`): a writer process killed with SIGKILL at random
moments, after which every acknowledged write is there once; and a PostgreSQL database of
its own for it (:func:`fresh_database`).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .common import Outcome
from .common import every as _every
from .common import timed as _timed
from .common import vocabulary as _vocabulary

# -- kill -9 -----------------------------------------------------------------------------------
_WRITER = r"""
import json, random, sys
from varvemem import Memory, Settings
cfg = json.loads(sys.argv[1])
mem = Memory(settings=Settings.load(home=cfg["home"], **cfg["overrides"]))
words = cfg["words"]
print("ready", flush=True)
i = cfg["start"]
while True:
    rng = random.Random(i)
    text = f"write {i}: " + " ".join(rng.sample(words, 9))
    res = mem.add(text, tenant=cfg["tenant"])
    print(i, res.memory_id, res.status, flush=True)
    i += 1
"""


def _content_of(i: int) -> str:
    rng = random.Random(i)
    return f"write {i}: " + " ".join(rng.sample(_vocabulary(), 9))


def probe_kill9(home: Path, overrides: Mapping[str, Any] | None = None, *, rounds: int = 3,
                max_writes: int = 30, seed: int = 0, tenant: str = "kill9",
                env: Mapping[str, str] | None = None,
                open_memory: Callable[[], Any] | None = None, label: str = "sqlite",
                timeout: float = 120.0) -> Outcome:
    """``rounds`` times: a writer process opens the store (``home`` and the settings
    ``overrides``, e.g. ``{"store": {"url": ...}}``), adds memories and prints each id once
    ``add`` returned; after a random number of acknowledgements (1..``max_writes``) and a
    random pause of up to 30 ms (so the kill lands anywhere in the next add) it is killed with
    SIGKILL. The next round first sends again the write that was in flight (a client's retry).
    After each kill the store is opened (``open_memory()``, default ``Memory`` of the same
    settings) and every acknowledged id must be there, once, and no content stored twice."""
    from ...api import Memory
    from ...settings import Settings

    out = Outcome(f"kill -9 ({label})")
    rng = random.Random(seed)
    proc_env = dict(env if env is not None else
                    {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")})
    settings = dict(overrides or {})

    def opened() -> Any:
        if open_memory is not None:
            return open_memory()
        return Memory(settings=Settings.load(home=home, **settings))

    acked: dict[int, str] = {}  # write index -> the id its add returned
    start = 0
    with _timed(out):
        for r in range(rounds):
            cfg = {"home": str(home), "overrides": settings, "start": start, "tenant": tenant,
                   "words": _vocabulary()}
            proc = subprocess.Popen([sys.executable, "-c", _WRITER, json.dumps(cfg)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env=proc_env)
            assert proc.stdout is not None and proc.stderr is not None
            target = rng.randint(1, max_writes)
            got = 0
            deadline = time.monotonic() + timeout
            try:
                line = proc.stdout.readline()
                if line.strip() != "ready":
                    raise RuntimeError(f"the writer did not start: {line!r} "
                                       f"{proc.stderr.read()[-2000:]}")
                while got < target and time.monotonic() < deadline:
                    line = proc.stdout.readline()
                    if not line:
                        break
                    i, mid, _status = line.split()
                    acked[int(i)] = mid
                    start = int(i) + 1
                    got += 1
                time.sleep(rng.uniform(0, 0.03))
            finally:
                os.kill(proc.pid, signal.SIGKILL)
                rest, err = proc.communicate(timeout=60)
            for line in rest.splitlines():  # acknowledged between the last read and the kill
                parts = line.split()
                if len(parts) == 3:
                    acked[int(parts[0])] = parts[1]
                    start = int(parts[0]) + 1
            if got < target and not acked:
                raise RuntimeError(f"the writer stopped early: {err[-2000:]}")
            out.attempts += got
            mem = opened()
            try:
                records = _every(mem, tenant)
            finally:
                mem.close()
            by_id = {rec.memory_id: rec for rec in records}
            contents = Counter(rec.content for rec in records)
            lost = [(i, mid) for i, mid in acked.items() if mid not in by_id
                    or by_id[mid].content != _content_of(i)]
            twice = [c for c, n in contents.items() if n > 1]
            if lost:
                out.lost = max(out.lost, len(lost))
                out.fail(f"round {r + 1}", f"{len(lost)} acknowledged writes missing, e.g. "
                                           f"{lost[:3]}")
            if twice:
                out.duplicated = max(out.duplicated, len(twice))
                out.fail(f"round {r + 1}", f"{len(twice)} contents stored twice, e.g. "
                                           f"{twice[:2]}")
            ids = Counter(acked.values())
            if any(n > 1 for n in ids.values()):
                out.fail(f"round {r + 1}", "one id acknowledged for two writes: "
                                           f"{[m for m, n in ids.items() if n > 1][:3]}")
    return out


@contextlib.contextmanager
def fresh_database(base_url: str, prefix: str = "varvemem_rel") -> Iterator[str]:
    """A new PostgreSQL database on the server of ``base_url`` (whose user may create
    databases): its URL; dropped afterwards, whoever is still connected."""
    from urllib.parse import urlsplit

    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlsplit(base_url)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(base_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
