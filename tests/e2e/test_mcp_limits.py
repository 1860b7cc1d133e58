"""The MCP tools' schemas carry the limits the library checks, read from the same place (so they
cannot drift), and the library refuses what lies past them. In process: the SDK's own client
over its in-memory transport (test_mcp.py drives real servers over stdio and HTTP)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

try:
    import mcp.server.mcpserver  # noqa: F401
except ImportError as exc:
    _reason = f"needs the MCP SDK 2 (varvemem[mcp]): {exc}"
    if os.environ.get("CI"):
        pytest.fail(_reason, pytrace=False)
    pytest.skip(_reason, allow_module_level=True)

from mcp import Client
from mcp.types import TextContent

from varvemem import Memory, _validate
from varvemem.errors import ValidationError
from varvemem.mcp_server import NO_MATCH, build_server, transport_security
from varvemem.model import MemoryType
from varvemem.settings import TOP_K_MAX, RetrievalSettings


def prop(schema: dict[str, Any], name: str) -> dict[str, Any]:
    """A property's schema, the non-null branch of an optional one."""
    p = schema["properties"][name]
    branches = [b for b in p.get("anyOf", [p]) if b.get("type") != "null"]
    assert len(branches) == 1
    return dict(branches[0])


def with_client(mem: Memory, fn: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(build_server(mem)) as client:
                await fn(client)

    anyio.run(main)


def text_of(res: Any) -> str:
    return "".join(c.text for c in res.content if isinstance(c, TextContent))


def test_schemas_carry_the_library_limits(mem: Memory) -> None:
    cfg = mem.settings
    seen: dict[str, dict[str, Any]] = {}

    async def main(client: Client) -> None:
        seen.update({t.name: t.input_schema for t in (await client.list_tools()).tools})

    with_client(mem, main)
    for name, schema in seen.items():
        assert schema["additionalProperties"] is False, name
    top_k = prop(seen["search_memories"], "top_k")
    le = [m.le for m in RetrievalSettings.model_fields["top_k"].metadata if hasattr(m, "le")]
    assert (top_k["minimum"], top_k["maximum"]) == (1, TOP_K_MAX) and le == [TOP_K_MAX]
    importance = prop(seen["add_memory"], "importance")
    assert (importance["minimum"], importance["maximum"]) == _validate.IMPORTANCE_RANGE
    weight = seen["feedback"]["properties"]["weight"]
    assert (weight["exclusiveMinimum"], weight["maximum"]) == _validate.FEEDBACK_WEIGHT_RANGE
    assert prop(seen["get_context"], "max_tokens")["minimum"] == _validate.MAX_TOKENS_MIN
    types = {t.value for t in MemoryType}
    assert set(prop(seen["add_memory"], "type")["enum"]) == types
    assert set(prop(seen["search_memories"], "types")["items"]["enum"]) == types
    tags = prop(seen["add_memory"], "tags")
    assert tags["maxItems"] == cfg.update.tags_max
    assert tags["items"]["maxLength"] == cfg.update.tag_max_chars
    for tool, arg in (("search_memories", "query"), ("get_context", "query"),
                      ("add_memory", "content"), ("ask", "question")):
        assert seen[tool]["properties"][arg]["minLength"] == 1

    # The library draws the same lines: at the bound it works, past it it refuses.
    rec = mem.add("Backups run nightly at 02:00 UTC", importance=_validate.IMPORTANCE_RANGE[1])
    assert mem.search("backups", top_k=TOP_K_MAX)
    with pytest.raises(ValidationError):
        mem.search("backups", top_k=TOP_K_MAX + 1)
    with pytest.raises(ValidationError):
        mem.add("Restores are tested monthly", importance=_validate.IMPORTANCE_RANGE[1] + 0.01)
    mem.feedback(rec.memory_id, True, weight=_validate.FEEDBACK_WEIGHT_RANGE[1])
    for weight_past in (_validate.FEEDBACK_WEIGHT_RANGE[0], _validate.FEEDBACK_WEIGHT_RANGE[1]
                        + 0.01):
        with pytest.raises(ValidationError):
            mem.feedback(rec.memory_id, True, weight=weight_past)
    assert mem.context("backups", max_tokens=_validate.MAX_TOKENS_MIN) is not None
    with pytest.raises(ValidationError):
        mem.context("backups", max_tokens=_validate.MAX_TOKENS_MIN - 1)
    with pytest.raises(ValidationError):
        mem.add("x", type="gossip")


def test_arguments_are_checked_strictly_in_one_line(mem: Memory) -> None:
    mem.add("Backups run nightly at 02:00 UTC")
    seen: dict[str, str] = {}

    async def main(client: Client) -> None:
        for label, tool, args in (
                ("unknown", "search_memories", {"query": "backups", "limit": 3}),
                ("huge", "search_memories", {"query": "backups", "top_k": 1_000_000_000}),
                ("zero", "search_memories", {"query": "backups", "top_k": 0}),
                ("type", "add_memory", {"content": "x", "type": "gossip"}),
                ("importance", "add_memory", {"content": "x", "importance": 2}),
                ("weight", "feedback", {"memory_id": "mem_x", "helpful": True, "weight": 5}),
                ("missing", "get_context", {}),
                ("library", "delete_memory", {"memory_id": "mem_unknown"})):
            res = await client.call_tool(tool, args)
            assert res.is_error, label
            seen[label] = text_of(res)
        res = await client.call_tool("get_context", {"query": "xyzzy plugh frobnicate"})
        assert not res.is_error and text_of(res) == NO_MATCH

    with_client(mem, main)
    for label, message in seen.items():
        assert "\n" not in message and "Traceback" not in message and "pydantic" not in message, \
            (label, message)
    assert "unknown argument 'limit'" in seen["unknown"] and "top_k" in seen["unknown"]
    assert "top_k" in seen["huge"] and str(TOP_K_MAX) in seen["huge"]
    assert "top_k" in seen["zero"]
    assert "argument type" in seen["type"] and "'gossip'" in seen["type"]
    assert "importance" in seen["importance"]
    assert "weight" in seen["weight"]
    assert "argument query is required" in seen["missing"]
    assert "no memory mem_unknown" in seen["library"]


def test_transport_security_hosts() -> None:
    loopback = transport_security("127.0.0.1", [])
    assert loopback.enable_dns_rebinding_protection
    assert "127.0.0.1:*" in loopback.allowed_hosts and "localhost:*" in loopback.allowed_hosts
    assert not any("example" in h for h in loopback.allowed_hosts)
    proxied = transport_security("0.0.0.0", ["memory.example.com", "mem.internal:8443"])
    assert {"memory.example.com", "memory.example.com:*", "mem.internal:8443"} <= set(
        proxied.allowed_hosts)
    assert "mem.internal:*" not in proxied.allowed_hosts
    assert "0.0.0.0" not in proxied.allowed_hosts
    assert "https://memory.example.com" in proxied.allowed_origins
    bound = transport_security("10.0.0.5", [])
    assert "10.0.0.5:*" in bound.allowed_hosts
    assert not transport_security("127.0.0.1", ["*"]).enable_dns_rebinding_protection
