"""The chat client against a fake OpenAI-compatible server on loopback: request shape, retries,
backoff, timeouts, errors, and the engines' reported fallback when the endpoint fails."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from varvemem import LLMError, Memory, Settings
from varvemem.llm import ChatClient
from varvemem.settings import LLMSettings

KEY = "sk-test-secret-4711"


@dataclass
class Canned:
    """One answer of the fake server: ``body`` is sent as JSON (a ``str`` as it is)."""

    status: int = 200
    body: Any = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    """One request the fake server got."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def chat(content: str) -> dict[str, Any]:
    """A chat completion whose message is ``content``."""
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}


class FakeLLM:
    """An OpenAI-compatible ``POST /v1/chat/completions`` answering from a queue of
    :class:`Canned` responses (then ``default``, if set), recording every request."""

    def __init__(self) -> None:
        self.queue: deque[Canned] = deque()
        self.default: Canned | None = None
        self.requests: list[Seen] = []
        self.stop = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                fake.requests.append(Seen(self.path, dict(self.headers.items()), body))
                if self.path != "/v1/chat/completions":
                    canned = Canned(404, {"error": {"message": "no such path"}})
                elif fake.queue:
                    canned = fake.queue.popleft()
                else:
                    canned = fake.default or Canned(500, {"error": {"message": "queue empty"}})
                if canned.delay and fake.stop.wait(canned.delay):
                    return
                data = canned.body if isinstance(canned.body, str) else json.dumps(canned.body)
                payload = data.encode()
                try:
                    self.send_response(canned.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in canned.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    def push(self, *canned: Canned) -> None:
        self.queue.extend(canned)

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM()
    try:
        yield server
    finally:
        server.close()


class Sleeps(list[float]):
    """A ``sleep`` that records the waits instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def client(url: str, sleeps: Sleeps, **cfg: Any) -> ChatClient:
    return ChatClient(LLMSettings(enabled=True, url=url, model="test-model", **cfg),
                      sleep=sleeps, rand=lambda: 0.5)


# -- the request ------------------------------------------------------------------------------
def test_request_shape_with_and_without_a_key(fake_llm: FakeLLM, sleeps: Sleeps) -> None:
    fake_llm.push(Canned(body=chat("hello")), Canned(body=chat("again")))
    with client(fake_llm.url, sleeps, api_key=KEY) as llm:
        assert llm.complete("You are terse.", "Say hello") == "hello"
    with client(fake_llm.url + "/", sleeps) as llm:
        assert llm.complete("sys", "user") == "again"
    first, second = fake_llm.requests
    assert first.path == "/v1/chat/completions" and second.path == "/v1/chat/completions"
    assert first.body == {"model": "test-model", "temperature": 0,
                          "messages": [{"role": "system", "content": "You are terse."},
                                       {"role": "user", "content": "Say hello"}]}
    assert first.headers["Authorization"] == f"Bearer {KEY}"
    assert "Authorization" not in second.headers and "authorization" not in second.headers
    assert not sleeps


def test_complete_json_finds_the_object_in_the_answer(fake_llm: FakeLLM, sleeps: Sleeps) -> None:
    fake_llm.push(Canned(body=chat('Sure: {"a": 1} done')))
    with client(fake_llm.url, sleeps) as llm:
        assert llm.complete_json("sys", "u") == {"a": 1}
    assert fake_llm.requests[0].body["messages"][0]["content"].endswith(
        "Answer with one JSON object only.")


# -- retries ----------------------------------------------------------------------------------
def test_5xx_is_retried_with_exponential_backoff(fake_llm: FakeLLM, sleeps: Sleeps,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    fake_llm.push(Canned(500, {"error": "boom"}), Canned(503, "busy"), Canned(body=chat("ok")))
    with caplog.at_level(logging.WARNING, logger="varvemem.llm"), \
            client(fake_llm.url, sleeps, api_key=KEY, backoff_seconds=0.5) as llm:
        assert llm.complete("sys", "the secret prompt") == "ok"
    assert len(fake_llm.requests) == 3
    # backoff_seconds * 2**n, with jitter 0.5 -> three quarters of it
    assert sleeps == [pytest.approx(0.375), pytest.approx(0.75)]
    retries = [r for r in caplog.records if r.name == "varvemem.llm"]
    assert len(retries) == 2 and all(r.levelno == logging.WARNING for r in retries)
    assert "attempt 1 of 3" in retries[0].getMessage()
    assert "HTTP 500" in retries[0].getMessage() and "HTTP 503" in retries[1].getMessage()
    for r in retries:
        assert KEY not in r.getMessage() and "secret prompt" not in r.getMessage()


def test_backoff_is_capped_and_jittered(fake_llm: FakeLLM) -> None:
    fake_llm.default = Canned(502, {})
    waits: list[float] = []
    low = ChatClient(LLMSettings(url=fake_llm.url, retries=4, backoff_seconds=1,
                                 backoff_max_seconds=3), sleep=waits.append, rand=lambda: 0.0)
    with low, pytest.raises(LLMError, match="after 5 attempts"):
        low.complete("s", "u")
    assert waits == [0.5, 1.0, 1.5, 1.5]  # half of 1, 2, 3 (capped), 3
    waits.clear()
    high = ChatClient(LLMSettings(url=fake_llm.url, retries=2, backoff_seconds=1,
                                  backoff_max_seconds=3), sleep=waits.append, rand=lambda: 0.999)
    with high, pytest.raises(LLMError):
        high.complete("s", "u")
    assert waits == [pytest.approx(0.9995), pytest.approx(1.999)]


def test_429_honours_retry_after_capped_at_the_maximum(fake_llm: FakeLLM, sleeps: Sleeps) -> None:
    fake_llm.push(Canned(429, {}, headers={"Retry-After": "3"}),
                  Canned(429, {}, headers={"Retry-After": "120"}),
                  Canned(429, {}, headers={"Retry-After": "soon"}),
                  Canned(body=chat("ok")))
    with client(fake_llm.url, sleeps, retries=3, backoff_seconds=0.5,
                backoff_max_seconds=8) as llm:
        assert llm.complete("s", "u") == "ok"
    assert len(fake_llm.requests) == 4
    assert sleeps == [3.0, 8.0, pytest.approx(0.5 * 4 * 0.75)]  # unparseable: the backoff


def test_other_4xx_fails_at_once(fake_llm: FakeLLM, sleeps: Sleeps) -> None:
    fake_llm.default = Canned(400, {"error": {"message": "the prompt 'x' is bad",
                                              "type": "invalid_request_error"}})
    with client(fake_llm.url, sleeps, retries=3) as llm, \
            pytest.raises(LLMError) as err:
        llm.complete("s", "u")
    assert len(fake_llm.requests) == 1 and not sleeps
    msg = str(err.value)
    assert "HTTP 400" in msg and "after 1 attempt:" in msg and "invalid_request_error" in msg
    assert fake_llm.url + "/chat/completions" in msg and "prompt" not in msg


def test_a_slow_answer_times_out_is_retried_then_fails(fake_llm: FakeLLM, sleeps: Sleeps,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    fake_llm.default = Canned(body=chat("too late"), delay=2.0)
    with caplog.at_level(logging.WARNING, logger="varvemem.llm"), \
            client(fake_llm.url, sleeps, timeout=0.2, retries=2) as llm, \
            pytest.raises(LLMError) as err:
        llm.complete("s", "u")
    assert len(fake_llm.requests) == 3 and len(sleeps) == 2
    msg = str(err.value)
    assert "after 3 attempts" in msg and "Timeout" in msg and "\n" not in msg
    assert caplog.records[-1].getMessage() == msg  # the final failure is logged too


def test_a_refused_connection_is_retried(sleeps: Sleeps) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with client(f"http://127.0.0.1:{port}/v1", sleeps, retries=1) as llm, \
            pytest.raises(LLMError, match=r"after 2 attempts: ConnectError"):
        llm.complete("s", "u")
    assert len(sleeps) == 1


def test_retries_zero_sends_exactly_one_request(fake_llm: FakeLLM, sleeps: Sleeps) -> None:
    fake_llm.default = Canned(500, {})
    with client(fake_llm.url, sleeps, retries=0) as llm, \
            pytest.raises(LLMError, match=r"after 1 attempt: HTTP 500"):
        llm.complete("s", "u")
    assert len(fake_llm.requests) == 1 and not sleeps


# -- bad answers --------------------------------------------------------------------------------
def test_an_answer_without_json_is_an_llm_error(fake_llm: FakeLLM, sleeps: Sleeps) -> None:
    fake_llm.push(Canned(body=chat("I would rather not.")), Canned(body={"choices": []}),
                  Canned(body="<html>proxy</html>"), Canned(body=chat("[1, 2]")))
    with client(fake_llm.url, sleeps) as llm:
        with pytest.raises(LLMError, match="without JSON"):
            llm.complete_json("s", "u")
        with pytest.raises(LLMError, match="without choices"):
            llm.complete_json("s", "u")
        with pytest.raises(LLMError, match="without choices"):
            llm.complete("s", "u")
        with pytest.raises(LLMError, match="not an object"):
            llm.complete_json("s", "u")
    assert len(fake_llm.requests) == 4 and not sleeps  # a bad answer is not retried


def test_the_api_key_never_appears_in_errors_or_logs(fake_llm: FakeLLM, sleeps: Sleeps,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    echo = {"error": {"message": f"bad key {KEY}", "type": "auth", "code": KEY}}
    fake_llm.push(Canned(500, echo), Canned(401, echo))
    with caplog.at_level(logging.DEBUG, logger="varvemem.llm"), \
            client(fake_llm.url, sleeps, api_key=KEY) as llm, \
            pytest.raises(LLMError) as err:
        llm.complete("s", "u")
    assert "HTTP 401" in str(err.value) and KEY not in str(err.value)
    assert caplog.records and all(KEY not in r.getMessage() for r in caplog.records)
    assert KEY not in repr(LLMSettings(api_key=KEY))


# -- the engines' fallback, end to end ----------------------------------------------------------
def _settings(home: Path, url: str, **llm: Any) -> Settings:
    return Settings.load(home=home, llm={"enabled": True, "url": url, "model": "test-model",
                                         "api_key": KEY, "retries": 1, "backoff_seconds": 0,
                                         "timeout": 5, **llm})


def test_a_failing_endpoint_falls_back_to_the_rules_and_says_so(
        fake_llm: FakeLLM, home: Path, embedder: Any, clock: Any,
        caplog: pytest.LogCaptureFixture) -> None:
    fake_llm.default = Canned(500, {"error": {"message": "down"}})
    with caplog.at_level(logging.WARNING, logger="varvemem.llm"), \
            Memory(home=home, settings=_settings(home, fake_llm.url), embedder=embedder,
                   clock=clock) as mem:
        res = mem.add("the payment pipeline failed again on deploy")
        assert res.status == "created"
        assert mem.get(res.memory_id).content == "the payment pipeline failed again on deploy"
        classify, score = res.steps["classify"], res.steps["score"]
        assert classify.startswith("rules (llm failed: chat endpoint")
        assert "after 2 attempts: HTTP 500" in classify
        assert "llm failed" in score and score.startswith("rules")
        assert KEY not in classify + score
        llm = mem._engines.llm
    assert llm is not None and llm._client.is_closed  # Memory.close closed the client it made
    # classify and score, two tries each; every request carried the content
    assert len(fake_llm.requests) == 4
    assert all(r.body["messages"][1]["content"] == "the payment pipeline failed again on deploy"
               for r in fake_llm.requests)
    said = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("classify falls back to the rules") for m in said)
    assert any(m.startswith("score falls back to the rules") for m in said)


def test_a_working_endpoint_is_reported_as_the_llm_path(
        fake_llm: FakeLLM, home: Path, embedder: Any, clock: Any) -> None:
    fake_llm.push(Canned(body=chat('{"memory_type": "event", "tags": ["Outage", "payments"]}')))
    settings = _settings(home, fake_llm.url, steps=["classify"])
    with Memory(home=home, settings=settings, embedder=embedder, clock=clock) as mem:
        res = mem.add("the payment API returned 502s for ten minutes")
        assert res.status == "created" and res.steps["classify"] == "llm"
        assert res.steps["score"].startswith("rules")
        rec = mem.get(res.memory_id)
        assert rec.memory_type.value == "event" and {"outage", "payments"} <= set(rec.tags)
    (req,) = fake_llm.requests
    assert req.path == "/v1/chat/completions" and req.body["model"] == "test-model"
    assert req.headers["Authorization"] == f"Bearer {KEY}"
    assert req.body["messages"][0]["content"].startswith("Classify an agent memory")
    assert req.body["messages"][1]["content"] == "the payment API returned 502s for ten minutes"
