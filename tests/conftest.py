"""Shared fixtures: one embedder per test session, a fresh home per test, a settable clock."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from varvemem import Memory, Settings
from varvemem.embeddings.usem3 import USEEmbedder
from varvemem.engines.update import UpdateEngine
from varvemem.stores import Stores


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> datetime:
        self.now += timedelta(**kw)
        return self.now


@pytest.fixture(scope="session")
def embedder() -> USEEmbedder:
    return USEEmbedder()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def clock_factory() -> type[Clock]:
    """Makes fresh clocks (a test that runs the same story twice needs two)."""
    return Clock


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def make_memory(home: Path, embedder: USEEmbedder, clock: Clock):
    opened: list[Memory] = []

    def make(**settings) -> Memory:
        mem = Memory(settings=Settings.load(home=home, **settings), embedder=embedder,
                     clock=clock)
        opened.append(mem)
        return mem

    yield make
    for mem in opened:
        with contextlib.suppress(Exception):
            mem.close()


@pytest.fixture
def mem(make_memory) -> Iterator[Memory]:
    yield make_memory()


def stores_of(mem: Memory) -> Stores:
    """The store bundle behind ``mem``: the test-only way in (the library keeps it private;
    tests read and fault the stores through it)."""
    return mem._stores


def update_engine_of(mem: Memory) -> UpdateEngine:
    """The update engine behind ``mem``, for tests that fault or slow down its writes."""
    return mem._update


@pytest.fixture
def stores(mem: Memory) -> Stores:
    """The store bundle of the ``mem`` fixture (see :func:`stores_of`)."""
    return stores_of(mem)


@pytest.fixture
def update_engine(mem: Memory) -> UpdateEngine:
    """The update engine of the ``mem`` fixture (see :func:`update_engine_of`)."""
    return update_engine_of(mem)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """A real S3 server (moto in server mode) on a loopback port; its endpoint URL.

    Under CI a missing server fails the test; elsewhere it skips, saying how to enable it.
    """
    import os
    import shutil
    import subprocess
    import sys
    import time

    import httpx

    exe = shutil.which("moto_server", path=os.path.dirname(sys.executable))
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("moto_server is not installed (pip install -e '.[dev]')")
        pytest.skip("S3 tests need moto_server: pip install -e '.[dev]'")
    port = _free_port()
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.HTTPError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"moto_server did not start on {url}")
            time.sleep(0.2)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def s3_bucket(s3_server: str) -> str:
    """A fresh bucket on the S3 server; its name."""
    import uuid

    import boto3

    name = f"mem-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1",
                 aws_access_key_id="test", aws_secret_access_key="test").create_bucket(
        Bucket=name)
    return name


@pytest.fixture(scope="session")
def pg_url() -> str:
    """A real PostgreSQL server's URL (``VARVEMEM_TEST_PG_URL``, default the machine's own on
    127.0.0.1:5432, user postgres). Under CI a missing server fails; elsewhere it skips."""
    import os

    url = os.environ.get("VARVEMEM_TEST_PG_URL",
                         "postgresql://postgres@127.0.0.1:5432/postgres")
    try:
        import psycopg

        psycopg.connect(url, connect_timeout=3).close()
    except Exception as exc:
        msg = f"PostgreSQL at {url} is not usable ({exc}); start it or set VARVEMEM_TEST_PG_URL"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return url


@pytest.fixture(scope="session")
def pgvector_available(pg_url: str) -> bool:
    """The pgvector extension is installed in the PostgreSQL server (scripts/pgvector.sh
    builds it). Under CI its absence fails; elsewhere the test skips."""
    import os

    import psycopg

    with psycopg.connect(pg_url) as conn:
        found = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
                             ).fetchone()
    if found is None:
        msg = "pgvector is not installed in PostgreSQL: run scripts/pgvector.sh"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return True


@pytest.fixture
def pg_schema(pg_url: str) -> Iterator[str]:
    """A fresh PostgreSQL schema name for one test, dropped afterwards."""
    import uuid

    import psycopg

    name = f"mt_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture(scope="session")
def redis_url() -> str:
    """A real Redis server's URL (``VARVEMEM_TEST_REDIS_URL``, default the machine's own on
    127.0.0.1:6379). Under CI a missing server fails; elsewhere it skips."""
    import os

    url = os.environ.get("VARVEMEM_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=3).ping()
    except Exception as exc:
        msg = f"Redis at {url} is not usable ({exc}); start it or set VARVEMEM_TEST_REDIS_URL"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return url


@pytest.fixture
def cache_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of one test's own on the shared Redis; its keys are deleted afterwards."""
    import uuid

    import redis

    prefix = f"mt-{uuid.uuid4().hex[:12]}"
    yield prefix
    r = redis.Redis.from_url(redis_url)
    keys = list(r.scan_iter(f"{prefix}:*"))
    if keys:
        r.delete(*keys)


@pytest.fixture
def redis_process() -> Iterator[Callable[[], Any]]:
    """Starts a private redis-server on a free loopback port (no persistence), to be killed by
    the test; ``start()`` returns ``(url, process)`` and may be called again on the same port."""
    import os
    import shutil
    import subprocess
    import time

    exe = shutil.which("redis-server")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed")
        pytest.skip("this test needs the redis-server program")
    port = _free_port()
    procs: list[subprocess.Popen] = []

    def start() -> tuple[str, subprocess.Popen]:
        import redis

        proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        procs.append(proc)
        url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(url, socket_connect_timeout=1).ping()
                return url, proc
            except redis.RedisError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not start on port {port}")
                time.sleep(0.1)

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory) -> Iterator[str]:
    """A real Milvus gRPC server (``milvus-lite server``, from pip) on a loopback port; its
    ``milvus://`` URL. Under CI a missing server fails the test; elsewhere it skips."""
    import os
    import shutil
    import subprocess
    import sys
    import time

    exe = shutil.which("milvus-lite", path=os.path.dirname(sys.executable))
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("milvus-lite is not installed (pip install -e '.[dev]')")
        pytest.skip("Milvus tests need milvus-lite: pip install -e '.[dev]'")
    port = _free_port()
    data = tmp_path_factory.mktemp("milvus")
    proc = subprocess.Popen([exe, "server", "--data-dir", str(data), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            import socket

            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"milvus-lite server did not start on port {port}")
            time.sleep(0.2)
    try:
        yield f"milvus://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="session")
def milvus_standalone(tmp_path_factory) -> Iterator[str]:
    """A real Milvus standalone server (2.3, with its embedded etcd and local storage, from the
    ``milvus`` PyPI package) on loopback ports; its ``milvus://`` URL. About 20 s to start.
    Under CI a missing server fails the test; elsewhere it skips."""
    import os
    import shutil
    import subprocess
    import sys
    import time

    exe = shutil.which("milvus-server", path=os.path.dirname(sys.executable))
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("milvus (the standalone server) is not installed (pip install -e '.[dev]')")
        pytest.skip("this test needs a Milvus standalone: pip install -e '.[dev]'")
    data = tmp_path_factory.mktemp("milvus-standalone")
    ports = {name: _free_port() for name in ("proxy", "etcd", "root", "query", "qnode", "index",
                                             "inode", "data", "dnode", "pinternal")}
    proc = subprocess.Popen(
        [exe, "--data", str(data), "--proxy-port", str(ports["proxy"]),
         "--etcd-port", str(ports["etcd"]), "--root-coord-port", str(ports["root"]),
         "--query-coord-port", str(ports["query"]), "--query-node-port", str(ports["qnode"]),
         "--index-coord-port", str(ports["index"]), "--index-node-port", str(ports["inode"]),
         "--data-coord-port", str(ports["data"]), "--data-node-port", str(ports["dnode"]),
         "--proxy-internal-port", str(ports["pinternal"])],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"milvus://127.0.0.1:{ports['proxy']}"
    deadline = time.monotonic() + 120
    while True:
        try:
            from pymilvus import MilvusClient

            MilvusClient(f"http://127.0.0.1:{ports['proxy']}", timeout=2).list_collections()
            break
        except Exception:
            if proc.poll() is not None or time.monotonic() > deadline:
                os.killpg(proc.pid, 9)
                pytest.fail(f"the Milvus standalone did not start on {url}")
            time.sleep(1)
    try:
        yield url
    finally:  # the wrapper starts milvus and etcd as children: stop the whole group
        import signal

        os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def mock_llm(handler: Callable[[Any], Any]) -> Any:
    """A chat client whose endpoint is ``handler`` (an ``httpx.Request -> httpx.Response``)."""
    import httpx

    from varvemem.llm import ChatClient
    from varvemem.settings import LLMSettings

    # Retries are the client's own tests' business (tests/unit/test_llm_client.py): no waiting.
    return ChatClient(LLMSettings(enabled=True, url="http://llm.test/v1", model="m"),
                      transport=httpx.MockTransport(handler), sleep=lambda _: None)
