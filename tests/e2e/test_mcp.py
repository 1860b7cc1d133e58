"""End to end through ``varvemem mcp``, driven by the MCP SDK's own client: stdio, streamable
HTTP with API keys and the Host check (tenant isolation: tests/reliability/test_cross_tenant.py).
Every server is a real subprocess, always stopped."""

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
import httpx2
import pytest

try:
    import mcp.server.mcpserver  # noqa: F401  (the SDK 2 server `varvemem mcp` runs)
except ImportError as exc:
    _reason = f"needs the MCP SDK 2 (varvemem[mcp]): {exc}"
    if os.environ.get("CI"):  # [dev] installs it: under CI its absence fails the collection
        pytest.fail(_reason, pytrace=False)
    pytest.skip(_reason, allow_module_level=True)

from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, TextResourceContents

from varvemem import Memory
from varvemem.errors import ValidationError
from varvemem.mcp_server import NO_MATCH, PROMPTS
from varvemem.settings import TOP_K_MAX

pytestmark = pytest.mark.slow  # three servers as subprocesses: over 10 s together

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


async def text(client: ClientSession, name: str, /, **args: Any) -> str:
    res = await call(client, name, **args)
    assert not res.is_error, text_of(res)
    return text_of(res)


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
                    "query", "top_k", "user", "session", "types", "tags", "min_relevance"}
                assert tools["search_memories"].annotations.read_only_hint is True
                assert all(t.input_schema["additionalProperties"] is False
                           for t in tools.values())
                top_k = tools["search_memories"].input_schema["properties"]["top_k"]["anyOf"][0]
                assert (top_k["minimum"], top_k["maximum"]) == (1, TOP_K_MAX)

                # Prompts: listed, and got in either language.
                prompts = {p.name: p for p in (await s.list_prompts()).prompts}
                assert set(prompts) == set(PROMPTS)
                assert [a.name for a in prompts["recall-before-answering"].arguments] == [
                    "question", "language"]
                got = await s.get_prompt("recall-before-answering",
                                         {"question": "Which secret does the order service use?"})
                (msg,) = got.messages
                assert isinstance(msg.content, TextContent) and "get_context" in msg.content.text
                assert "Which secret does the order service use?" in msg.content.text
                got = await s.get_prompt("remember-this", {"content": "Staging is eks-stg-2",
                                                           "language": "zh"})
                assert "add_memory" in got.messages[0].content.text  # type: ignore[union-attr]
                assert "要记住的内容：Staging is eks-stg-2" in got.messages[0].content.text  # type: ignore[union-attr]
                with pytest.raises(MCPError, match="language must be one of en, zh"):
                    await s.get_prompt("remember-this", {"content": "x", "language": "fr"})
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
                # Listed: the newest memories, the sessions, and each session.
                listed = {str(r.uri) for r in (await s.list_resources()).resources}
                assert {"varvemem://memories/recent", "varvemem://sessions",
                        "varvemem://sessions/s-42", "varvemem://sessions/s-ask"} <= listed
                recent = (await read_json(s, "varvemem://memories/recent"))["items"]
                assert recent[0]["memory_id"] == turn["memory_id"]
                assert mid in [r["memory_id"] for r in recent]
                assert {"session": "s-42", "uri": "varvemem://sessions/s-42"} in (
                    await read_json(s, "varvemem://sessions"))["sessions"]
                transcript = (await read_json(s, "varvemem://sessions/s-ask"))["transcript"]
                assert [t["role"] for t in transcript] == ["user", "assistant"]
                assert transcript[0]["content"] == "Which secret does the order service use?"

                # Library errors come back as tool errors with their message.
                assert "query is empty" in await error(s, "search_memories", query="  ")
                assert "no memory mem_unknown" in await error(s, "delete_memory",
                                                              memory_id="mem_unknown")
                assert "argument type" in await error(s, "add_memory", content="x",
                                                      type="gossip")
                # Arguments the schema does not name, or past its limits, are refused.
                assert "unknown argument 'limit'" in await error(s, "search_memories",
                                                                 query="regcred", limit=3)
                huge = await error(s, "search_memories", query="regcred", top_k=1_000_000_000)
                assert "top_k" in huge and str(TOP_K_MAX) in huge
                assert await text(s, "get_context", query="xyzzy plugh frobnicate") == NO_MATCH
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


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "1"}}}


@asynccontextmanager
async def http_session(url: str, key: str | None,
                       host: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if host:
        headers["Host"] = host
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
            streamable_http_client(url, http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def test_streamable_http(tmp_path: Path) -> None:
    """Over HTTP: API keys of the REST API (tenant and role), the Host check with
    --allowed-hosts, and the same tools, prompts and resources."""
    home, log_path, port = tmp_path / "home", tmp_path / "server.log", _free_port()
    command = _command(home, "--transport", "http", "--host", "127.0.0.1", "--port", str(port),
                       "--allowed-hosts", "memory.example.com,mem.internal:8443")
    with Memory(home=home) as mem:
        writer = mem.keys.create("b", "write", name="writer")[1]
        reader = mem.keys.create("b", "read", name="reader")[1]
        other = mem.keys.create("a", "write", name="other tenant")[1]
        revoked_key, revoked = mem.keys.create("b", "write", name="revoked")
        mem.keys.revoke(revoked_key.key_id)
    url = f"http://127.0.0.1:{port}/mcp"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=_env())
        try:
            _wait_listening(proc, port)

            async def raw(key: str | None, host: str | None = None, body: Any = None,
                          session: str | None = None) -> httpx2.Response:
                headers = {"Accept": "application/json, text/event-stream",
                           "Content-Type": "application/json"}
                if key is not None:
                    headers["Authorization"] = f"Bearer {key}"
                if host is not None:
                    headers["Host"] = host
                if session is not None:
                    headers["Mcp-Session-Id"] = session
                    headers["Mcp-Protocol-Version"] = "2025-06-18"
                async with httpx2.AsyncClient(timeout=60) as http:
                    return await http.post(url, json=body or INITIALIZE, headers=headers)

            async def main() -> None:
                # No key, a bad one, a revoked one: 401 before any MCP, one-line JSON.
                for key, message in ((None, "missing or malformed API key"),
                                     ("msk_0123456789abcdef_" + "x" * 40, "unknown API key"),
                                     (revoked, "API key revoked")):
                    res = await raw(key)
                    assert res.status_code == 401 and res.headers["www-authenticate"] == "Bearer"
                    assert res.json() == {"error": {"type": "unauthorized", "message": message}}
                with pytest.raises(Exception):  # noqa: B017  (the SDK client cannot connect)
                    async with http_session(url, None):
                        pass
                # The Host header: loopback and the allowed names pass, others are refused.
                assert (await raw(writer)).status_code == 200
                assert (await raw(writer, "memory.example.com")).status_code == 200
                assert (await raw(writer, "memory.example.com:443")).status_code == 200
                assert (await raw(writer, "mem.internal:8443")).status_code == 200
                assert (await raw(writer, "mem.internal:9000")).status_code == 421
                assert (await raw(writer, "evil.example.net")).status_code == 421
                # A session is bound to the key that opened it: another key cannot use it.
                opened = await raw(writer)
                sid = opened.headers["mcp-session-id"]
                tools_list = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
                assert (await raw(other, body=tools_list, session=sid)).status_code == 404
                assert (await raw(writer, body=tools_list, session=sid)).status_code in (200, 202)

                async with http_session(url, writer, "memory.example.com") as s:
                    assert {t.name for t in (await s.list_tools()).tools} == TOOLS
                    assert {p.name for p in (await s.list_prompts()).prompts} == set(PROMPTS)
                    mid = (await ok(s, "add_memory", content="Backups run nightly at 02:00 UTC",
                                    tags=["ops"], session="s-http"))["memory_id"]
                    hits = (await ok(s, "search_memories", query="when do backups run?"))["hits"]
                    assert hits[0]["memory_id"] == mid
                    assert "argument query" in await error(s, "search_memories", query="")
                    assert "unknown argument 'tenant'" in await error(
                        s, "search_memories", query="backups", tenant="a")
                    assert "top_k" in await error(s, "search_memories", query="backups",
                                                  top_k=1_000_000_000)
                    data = await read_json(s, f"varvemem://memories/{mid}")
                    assert data["memory_id"] == mid and data["scope"]["tenant"] == "b"
                    listed = {str(r.uri) for r in (await s.list_resources()).resources}
                    assert "varvemem://sessions/s-http" in listed
                    recent = (await read_json(s, "varvemem://memories/recent"))["items"]
                    assert [r["memory_id"] for r in recent] == [mid]

                async with http_session(url, reader) as s:  # a read key reads, never writes
                    hits = (await ok(s, "search_memories", query="when do backups run?"))["hits"]
                    assert [h["memory_id"] for h in hits] == [mid]
                    assert "regcred" not in await text(s, "get_context", query="backups")
                    for name, args in (("add_memory", {"content": "Restores run monthly"}),
                                       ("delete_memory", {"memory_id": mid}),
                                       ("feedback", {"memory_id": mid, "helpful": True}),
                                       ("ask", {"question": "When do backups run?"})):
                        message = await error(s, name, **args)
                        assert message.endswith("API key role 'read' may not do this "
                                                "(needs 'write')"), message
                    assert (await read_json(s, f"varvemem://memories/{mid}"))["memory_id"] == mid

                # The SDK's high-level client (the 2026-07-28 protocol, no session): the same.
                async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {reader}"},
                                              timeout=60) as http, \
                        Client(streamable_http_client(url, http_client=http)) as client:
                    res = await client.call_tool("search_memories", {"query": "backups"})
                    assert not res.is_error and res.structured_content is not None
                    assert [h["memory_id"] for h in res.structured_content["hits"]] == [mid]
                    res = await client.call_tool("add_memory", {"content": "Restores monthly"})
                    assert res.is_error and "needs 'write'" in text_of(res)

                async with http_session(url, other) as s:  # another tenant's key sees nothing
                    assert (await ok(s, "search_memories", query="when do backups run?"))[
                        "hits"] == []
                    assert await text(s, "get_context", query="backups") == NO_MATCH
                    assert "no memory" in await error(s, "delete_memory", memory_id=mid)
                    with pytest.raises(MCPError, match="no memory"):
                        await s.read_resource(f"varvemem://memories/{mid}")
                    assert (await read_json(s, "varvemem://memories/recent"))["items"] == []
                    listed = {str(r.uri) for r in (await s.list_resources()).resources}
                    assert "varvemem://sessions/s-http" not in listed

            converse(main)
            proc.terminate()
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    check_log(log_path)
    with Memory(home=home) as mem:  # written for the key's tenant
        assert mem.get(mid_of(mem, "b"), tenant="b").content == "Backups run nightly at 02:00 UTC"


def mid_of(mem: Memory, tenant: str) -> str:
    (rec,) = mem.get_all(tenant=tenant)
    return rec.memory_id


def test_http_takes_its_tenant_from_the_key(tmp_path) -> None:
    from varvemem import Settings
    from varvemem.mcp_server import run

    with pytest.raises(ValidationError, match="API key's tenant"):
        run(Settings.load(home=tmp_path / "home"), "http", "127.0.0.1", 0, tenant="b")
