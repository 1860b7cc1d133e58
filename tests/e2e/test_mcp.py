"""End to end through ``varvemem mcp``, driven by the MCP SDK's own client: stdio and streamable
HTTP on loopback (tenant isolation: tests/reliability/test_cross_tenant.py). Every server is a
real subprocess, always stopped."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest

try:
    import mcp.server.mcpserver  # noqa: F401  (the SDK 2 server `varvemem mcp` runs)
except ImportError as exc:
    _reason = f"needs the MCP SDK 2 (varvemem[mcp]): {exc}"
    if os.environ.get("CI"):  # [dev] installs it: under CI its absence fails the collection
        pytest.fail(_reason, pytrace=False)
    pytest.skip(_reason, allow_module_level=True)

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, TextResourceContents

pytestmark = pytest.mark.slow  # two servers as subprocesses: over 10 s together

TOOLS = {"add_memory", "search_memories", "get_context", "ask", "feedback", "delete_memory"}
TIMEOUT = 120.0  # seconds for a whole conversation with one server


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}


def _command(home: Path, *args: str) -> list[str]:
    if not (home / "varvemem.db").exists():  # mcp serves an existing home
        subprocess.run([sys.executable, "-m", "varvemem", "--home", str(home), "init"],
                       check=True, capture_output=True, env=_env())
    return [sys.executable, "-m", "varvemem", "--home", str(home), "mcp", *args]


@asynccontextmanager
async def stdio_session(home: Path, errlog: TextIO, *args: str) -> AsyncIterator[ClientSession]:
    cmd = _command(home, *args)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=_env())
    async with stdio_client(params, errlog=errlog) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def converse(fn: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(TIMEOUT):
            await fn()

    anyio.run(bounded)


async def call(client: ClientSession, name: str, /, **args: Any) -> CallToolResult:
    res = await client.call_tool(name, args)
    assert isinstance(res, CallToolResult)
    return res


def text_of(res: CallToolResult) -> str:
    return "".join(c.text for c in res.content if isinstance(c, TextContent))


async def ok(client: ClientSession, name: str, /, **args: Any) -> dict[str, Any]:
    res = await call(client, name, **args)
    assert not res.is_error, text_of(res)
    assert res.structured_content is not None
    return res.structured_content


async def error(client: ClientSession, name: str, /, **args: Any) -> str:
    """The message of a tool error: one line, no traceback."""
    res = await call(client, name, **args)
    assert res.is_error
    message = text_of(res)
    assert "\n" not in message and "Traceback" not in message
    return message


async def read_json(session: ClientSession, uri: str) -> Any:
    res = await session.read_resource(uri)
    (content,) = res.contents
    assert isinstance(content, TextResourceContents)
    assert content.mime_type == "application/json"
    return json.loads(content.text)


def check_log(path: Path) -> None:
    log = path.read_text()
    assert "Traceback" not in log, log


def test_stdio_tools_resources_and_errors(tmp_path: Path) -> None:
    home, log_path = tmp_path / "home", tmp_path / "server.log"

    async def main() -> None:
        with log_path.open("w") as errlog:
            async with stdio_session(home, errlog) as s:
                tools = {t.name: t for t in (await s.list_tools()).tools}
                assert set(tools) == TOOLS
                for tool in tools.values():
                    assert tool.description and tool.input_schema["type"] == "object"
                add_props = tools["add_memory"].input_schema["properties"]
                assert set(add_props) == {"content", "type", "tags", "user", "agent", "session",
                                          "importance"}
                assert tools["add_memory"].input_schema["required"] == ["content"]
                assert set(tools["search_memories"].input_schema["properties"]) == {
                    "query", "top_k", "user", "session", "types", "tags"}
                assert tools["search_memories"].annotations.read_only_hint is True
                assert tools["delete_memory"].annotations.destructive_hint is True

                added = await ok(s, "add_memory",
                                 content="The order service pulls images with the regcred secret",
                                 tags=["helm", "k8s"], user="u1", importance=0.6)
                mid = added["memory_id"]
                assert mid.startswith("mem_") and added["status"] == "created"
                again = await ok(s, "add_memory",
                                 content="The order service pulls images with the regcred secret",
                                 tags=["helm", "k8s"], user="u1")
                assert again["memory_id"] == mid and again["status"] == "duplicate"

                found = await ok(s, "search_memories",
                                 query="which secret does the order service use?", top_k=3)
                hit = found["hits"][0]
                assert hit["memory_id"] == mid and "regcred" in hit["content"]
                assert set(hit["scores"]) >= {"semantic", "keyword", "tag", "recency",
                                              "importance", "reliability"}
                from varvemem.engines.scoring import combine
                from varvemem.model import ScoreBreakdown
                from varvemem.settings import Profile

                # The score is the default profile's weighted sum of the components shown.
                assert 0.0 < hit["score"] <= 1.0
                assert hit["score"] == pytest.approx(
                    combine(ScoreBreakdown(**hit["scores"]), Profile()), abs=1e-6)
                assert (await ok(s, "search_memories", query="regcred", user="u2"))["hits"] == []
                assert (await ok(s, "search_memories", query="regcred",
                                 types=["event"]))["hits"] == []

                ctx = await call(s, "get_context", query="order service image secret",
                                 max_tokens=200)
                assert not ctx.is_error and "regcred" in text_of(ctx)

                answer = await ok(s, "ask", question="Which secret does the order service use?",
                                  session="s-ask")
                # No Q&A pair to reuse and no LLM: retrieval, the answer the packed context.
                assert answer["route"] == "normal" and answer["reason"] == "retrieval (no LLM)"
                assert answer["answer"].startswith("No LLM is configured, so here are the "
                                                   "memories most relevant to the question:")
                assert "regcred" in answer["answer"]
                assert answer["matched"] is None and answer["confidence"] is None
                assert answer["llm"] is False

                rec = await ok(s, "feedback", memory_id=mid, helpful=True, weight=0.2)
                assert rec["memory_id"] == mid and rec["importance"] == pytest.approx(0.8)

                # Resources: a memory (no embedding) and a session's window.
                templates = {t.uri_template for t in
                             (await s.list_resource_templates()).resource_templates}
                assert templates == {"varvemem://memories/{memory_id}",
                                     "varvemem://sessions/{session}"}
                data = await read_json(s, f"varvemem://memories/{mid}")
                assert data["memory_id"] == mid and data["scope"]["tenant"] == "default"
                assert "embedding" not in data and {"helm", "k8s"} <= set(data["tags"])
                turn = await ok(s, "add_memory", content="user: deploy the order service to stg",
                                type="dialogue", session="s-42")
                window = await read_json(s, "varvemem://sessions/s-42")
                assert window["session"] == "s-42"
                assert [i["memory_id"] for i in window["items"]] == [turn["memory_id"]]
                assert (await read_json(s, "varvemem://sessions/elsewhere"))["items"] == []

                # Library errors come back as tool errors with their message.
                assert "query is empty" in await error(s, "search_memories", query="  ")
                assert "no memory mem_unknown" in await error(s, "delete_memory",
                                                              memory_id="mem_unknown")
                assert "unknown memory type" in await error(s, "add_memory", content="x",
                                                            type="gossip")
                assert "weight" in await error(s, "feedback", memory_id=mid, helpful=False,
                                               weight=5.0)
                assert "max_tokens" in await error(s, "get_context", query="x", max_tokens=1)

                deleted = await ok(s, "delete_memory", memory_id=mid)
                assert deleted == {"memory_id": mid, "deleted": True}
                with pytest.raises(MCPError, match=f"memory {mid} was deleted at "):
                    await s.read_resource(f"varvemem://memories/{mid}")
                assert "was deleted" in await error(s, "feedback", memory_id=mid, helpful=True)
                # ... and the server keeps working.
                found = await ok(s, "search_memories", query="order service")
                assert mid not in [h["memory_id"] for h in found["hits"]]
                assert (await ok(s, "add_memory", content="Staging runs on eks-stg-2"))[
                    "status"] == "created"

    converse(main)
    check_log(log_path)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(proc: subprocess.Popen[bytes], port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"server exited with {proc.returncode}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"server not listening on {port} after {timeout} s")


def test_streamable_http(tmp_path: Path) -> None:
    home, log_path, port = tmp_path / "home", tmp_path / "server.log", _free_port()
    with log_path.open("wb") as log:
        proc = subprocess.Popen(_command(home, "--transport", "http", "--host", "127.0.0.1",
                                         "--port", str(port)),
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=_env())
        try:
            _wait_listening(proc, port)

            async def main() -> None:
                async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (
                        read, write), ClientSession(read, write) as s:
                    await s.initialize()
                    assert {t.name for t in (await s.list_tools()).tools} == TOOLS
                    mid = (await ok(s, "add_memory", content="Backups run nightly at 02:00 UTC",
                                    tags=["ops"]))["memory_id"]
                    hits = (await ok(s, "search_memories", query="when do backups run?"))["hits"]
                    assert hits[0]["memory_id"] == mid
                    assert "query is empty" in await error(s, "search_memories", query="")
                    assert (await read_json(s, f"varvemem://memories/{mid}"))["memory_id"] == mid

            converse(main)
            proc.terminate()
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    check_log(log_path)


def test_http_refuses_to_bind_beyond_loopback_without_being_told(tmp_path) -> None:
    from varvemem import Settings
    from varvemem.errors import ConfigError
    from varvemem.mcp_server import run

    with pytest.raises(ConfigError, match="no authentication"):
        run(Settings.load(home=tmp_path / "home"), "http", "0.0.0.0", 0)
