"""The MCP resources a client is given read back: every session the server lists, whatever
characters its id holds, through the SDK's own client (in process, over its in-memory
transport; test_mcp.py drives real servers over stdio and HTTP)."""

from __future__ import annotations

import json
import os

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
from mcp.types import TextResourceContents

from varvemem import Memory
from varvemem.mcp_server import build_server

# Each id holds a character a URI gives a meaning to, or one that must be encoded, or looks
# like a path; the plain one is read as it always was. Each session says something else (one
# turn superseding another would leave its session without a current turn: not listed).
ODD_SESSIONS = {
    "thread/1": "The billing service is written in Go.",
    "a b": "Alice prefers dark mode in every editor.",
    "what?": "Backups run nightly at two.",
    "tag#1": "The staging cluster lives in Frankfurt.",
    "100%": "Bob is vegetarian.",
    "a%2Fb": "The release train leaves on Thursdays.",
    "会话 一": "我们下周三去杭州出差。",
    "x+y,z": "Grafana alerts page the on-call engineer.",
    "..": "The office plant needs water on Mondays.",
    "/srv/abs": "Invoices are approved by the finance lead.",
    "C:\\runs": "The VPN certificate expires in March.",
    "plain-1": "Lunch is served at noon.",
}


def test_every_listed_session_reads_back(mem: Memory) -> None:
    for session, said in ODD_SESSIONS.items():  # turns in the active tier: running sessions
        mem.add(said, type="dialogue", session=session)
    mem.sessions.save("transcript/only?", [{"role": "user", "content": "kept in a file"}])
    expected = {*ODD_SESSIONS, "transcript/only?"}
    read: dict[str, str] = {}
    listed_in_json: dict[str, str] = {}

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(build_server(mem)) as client:
                listing = (await client.list_resources()).resources
                prefix = "varvemem://sessions/"
                for res in listing:
                    uri = str(res.uri)
                    if not uri.startswith(prefix):
                        continue
                    (content,) = (await client.read_resource(uri)).contents
                    assert isinstance(content, TextResourceContents)
                    read[uri] = json.loads(content.text)["session"]
                (content,) = (await client.read_resource("varvemem://sessions")).contents
                assert isinstance(content, TextResourceContents)
                listed_in_json.update({s["uri"]: s["session"]
                                       for s in json.loads(content.text)["sessions"]})
                # The session's turns come with it (the id was not cut at "/" or "?").
                (content,) = (await client.read_resource(
                    next(u for u, s in read.items() if s == "thread/1"))).contents
                assert isinstance(content, TextResourceContents)
                assert [i["content"] for i in json.loads(content.text)["items"]] == [
                    ODD_SESSIONS["thread/1"]]

    anyio.run(main)
    assert sorted(read.values()) == sorted(expected)  # each listed URI reads its own session
    assert listed_in_json == read  # the sessions resource gives the same URIs
    assert "varvemem://sessions/thread%2F1" in read and "varvemem://sessions/plain-1" in read
