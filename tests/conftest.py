"""Shared fixtures: one embedder per test session, a fresh home per test, a settable clock."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memstrata import Memory, Settings
from memstrata.embeddings.usem3 import USEEmbedder


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


def mock_llm(handler: Callable[[Any], Any]) -> Any:
    """A chat client whose endpoint is ``handler`` (an ``httpx.Request -> httpx.Response``)."""
    import httpx

    from memstrata.llm import ChatClient
    from memstrata.settings import LLMSettings

    return ChatClient(LLMSettings(enabled=True, url="http://llm.test/v1", model="m"),
                      transport=httpx.MockTransport(handler))
