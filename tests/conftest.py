"""Shared fixtures: one embedder per test session, a fresh home per test, a settable clock.

And the suite's rules, for every test (see docs in each hook below):

* offline: connections and name lookups to any host but this machine are refused, here and in
  every Python process a test starts (``tests/_offline``); a test during which one was refused
  fails, even when the code under test swallowed the error;
* no leaking environment: the project's variables (``VARVEMEM_*`` but ``VARVEMEM_TEST_*``, and
  the few others the code reads) are cleared for the session and for every test, and whatever
  a test changes in ``os.environ`` is put back after it;
* under ``CI`` no skip: a skipped test (or module) fails with the skip's reason;
* Hypothesis runs derandomized under ``CI`` (profile ``ci``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

from varvemem import Memory, Settings
from varvemem.embeddings.usem3 import USEEmbedder
from varvemem.engines.update import UpdateEngine
from varvemem.stores import Stores

if TYPE_CHECKING:
    from varvemem._namespaces import Inbox

OFFLINE_DIR = Path(__file__).resolve().parent / "_offline"
sys.path.insert(0, str(OFFLINE_DIR))
import varvemem_offline_guard as offline_guard  # noqa: E402  (lives in OFFLINE_DIR)


def under_ci() -> bool:
    """``CI`` is set (as the CI runner and ``.ci/run`` do): what may skip elsewhere must run."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def install_tool(script: str, env: dict[str, str], ready: Path, what: str) -> None:
    """Run ``scripts/<script>`` (a test tool installed from a registry into ``.cache/``) unless
    ``ready`` exists; when it still does not, fail under CI, else skip, naming ``what``."""
    import subprocess

    if ready.exists():
        return
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([str(root / "scripts" / script)], env={**os.environ, **env},
                         capture_output=True, text=True, timeout=600, check=False)
    if run.returncode != 0 or not ready.exists():
        why = f"could not install {what}: {run.stderr[-2000:]}"
        if under_ci():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)


# --- offline ---------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    offline_guard.install()  # this process
    # Child Python processes: they inherit os.environ, so its PYTHONPATH puts the guard's
    # sitecustomize.py first, and its log file collects what they were refused.
    path = os.environ.get("PYTHONPATH")
    if str(OFFLINE_DIR) not in (path or "").split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join([str(OFFLINE_DIR), *([path] if path else [])])
    fd, log = tempfile.mkstemp(prefix="varvemem-offline-", suffix=".log")
    os.close(fd)
    os.chmod(log, 0o666)  # a child that drops privileges (tests/engines/test_durability.py)
    os.environ[offline_guard.LOG_ENV] = log
    config.stash[_LOG_KEY] = log
    # Read before it is cleared: the model the `llm_local` tests talk to (never another test).
    config.stash[LLM_LOCAL_URL] = os.environ.get("VARVEMEM_LLM_URL", "").strip()
    _clear_project_env()  # the session's fixtures too (module- and session-scoped ones)


def pytest_unconfigure(config: pytest.Config) -> None:
    log = config.stash.get(_LOG_KEY, None)
    if log:
        with contextlib.suppress(OSError):
            os.unlink(log)


_LOG_KEY = pytest.StashKey[str]()
LLM_LOCAL_URL = pytest.StashKey[str]()


@pytest.fixture(scope="session")
def llm_local_url(request: pytest.FixtureRequest) -> str:
    """VARVEMEM_LLM_URL as the session started (the project's variables are cleared for every
    test), for the tests marked ``llm_local`` only, which run when asked (``pytest -m
    llm_local``): without it they fail, saying how to serve a model."""
    url = request.config.stash.get(LLM_LOCAL_URL, "")
    if not url:
        pytest.fail("the llm_local tests need VARVEMEM_LLM_URL, an OpenAI-compatible endpoint "
                    "on loopback: python3 scripts/local_llm.py setup && python3 "
                    "scripts/local_llm.py serve --port 8181, then VARVEMEM_LLM_URL="
                    "http://127.0.0.1:8181/v1", pytrace=False)
    return url


class NetworkRefusals:
    """What the offline guard refused since the test began, in this process and its children."""

    def __init__(self, log: str) -> None:
        self._log = Path(log)
        self._offset = self._log.stat().st_size if self._log.exists() else 0

    def take(self) -> list[str]:
        """The refusals not taken yet (a test that provokes them on purpose takes them)."""
        if not self._log.exists():
            return []
        with self._log.open("rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        self._offset += len(data)
        return [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]


@pytest.fixture(autouse=True)
def _offline(request: pytest.FixtureRequest) -> Iterator[NetworkRefusals]:
    if not offline_guard.is_installed():  # a test must not be able to take the guard off
        pytest.fail("the offline guard is not installed (tests/_offline)", pytrace=False)
    refusals = NetworkRefusals(request.config.stash[_LOG_KEY])
    yield refusals
    seen = refusals.take()
    if seen:
        pytest.fail("this test tried to reach the network:\n" + "\n".join(seen), pytrace=False)


@pytest.fixture
def network_refusals(_offline: NetworkRefusals) -> NetworkRefusals:
    """For a test that provokes refusals on purpose: ``take()`` them (the rest fail the test)."""
    return _offline


# --- environment -----------------------------------------------------------------------------

# What the code under test reads from the environment besides its arguments: its settings
# (src/varvemem/settings/__init__.py: VARVEMEM_*, with the short *_URL names), boto3's chain behind the
# S3 archive (AWS_*, e.g. AWS_ENDPOINT_URL) and the metrics' PROMETHEUS_MULTIPROC_DIR.
PROJECT_ENV_PREFIXES = ("VARVEMEM_", "AWS_")
PROJECT_ENV_NAMES = frozenset({"PROMETHEUS_MULTIPROC_DIR"})
TEST_ENV_PREFIXES = ("VARVEMEM_TEST_",)  # the tests' own knobs (say, VARVEMEM_TEST_PG_URL)


def is_project_env(name: str) -> bool:
    if name.startswith(TEST_ENV_PREFIXES) or name == "CI":
        return False
    return name.startswith(PROJECT_ENV_PREFIXES) or name in PROJECT_ENV_NAMES


def _clear_project_env() -> None:
    for name in [n for n in os.environ if is_project_env(n)]:
        del os.environ[name]


@pytest.fixture(autouse=True)
def _clean_environment() -> Iterator[None]:
    """No project variable reaches a test, and no test's changes reach the next one."""
    saved = dict(os.environ)
    _clear_project_env()
    yield
    if dict(os.environ) != saved:
        os.environ.clear()
        os.environ.update(saved)


# --- no skip under CI ------------------------------------------------------------------------


def _skip_reason(longrepr: Any) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI a skipped test fails, with the skip's reason: whatever it needs, CI has."""
    outcome = yield
    report = outcome.get_result()
    if under_ci() and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = (f"skipped under CI ({item.nodeid}): {_skip_reason(report.longrepr)}"
                           " -- CI must run every test; install or start what it needs")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """The same for a module (or class) skipped as a whole, say by a module-level
    ``pytest.importorskip``: under CI its collection fails."""
    outcome = yield
    report = outcome.get_result()
    if under_ci() and report.skipped:
        report.outcome = "failed"
        report.longrepr = (f"skipped under CI ({collector.nodeid}): {_skip_reason(report.longrepr)}"
                           " -- CI must run every test; install or start what it needs")


# --- Hypothesis ------------------------------------------------------------------------------

# Under CI: the same examples every run (a failure there is reproducible, not a lucky draw), no
# database carried between runs, no deadline nor slowness check (two loaded cores), and the
# blob to reproduce a failure printed. Elsewhere Hypothesis's default profile.
settings.register_profile("ci", derandomize=True, max_examples=100, deadline=None,
                          database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("VARVEMEM_TEST_HYPOTHESIS_PROFILE",
                                     "ci" if under_ci() else "default"))


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
    return mem._engines.stores


def update_engine_of(mem: Memory) -> UpdateEngine:
    """The update engine behind ``mem``, for tests that fault or slow down its writes."""
    return mem._engines.update


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


def inbox_over(mem: Memory, before: Callable[[], None]) -> Inbox:
    """``mem``'s webhook inbox, its writes through a unit of work that runs ``before()`` first
    (:class:`tests.fakes.HookedUnitOfWork`): an outage, a count, a slow write."""
    from tests.fakes import HookedUnitOfWork

    from varvemem._namespaces import Inbox
    from varvemem.engines.inbox import InboxEngine

    e = mem._engines
    stores = HookedUnitOfWork(e.stores, before)
    update = UpdateEngine(mem.settings, stores, e.embedder, e.now, e.llm)
    return Inbox(e.args, InboxEngine(mem.settings, stores, update, e.now, e.stores.records),
                 update)
