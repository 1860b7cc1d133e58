"""The cross-tenant probe over MCP (:func:`probe_mcp`): one tenant per ``varvemem mcp``
process, which no argument changes.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .common import Outcome
from .common import every as _every
from .common import timed as _timed
from .common import unknown_like as _unknown_like
from .cross_tenant import OwnerData
from .cross_tenant import without_echo as _without_echo


# -- cross-tenant: MCP -------------------------------------------------------------------------
def probe_mcp(home: Path, tenant: str, owner: OwnerData, owner_tenant: str,
              env: Mapping[str, str] | None = None, timeout: float = 120.0) -> Outcome:
    """``varvemem mcp --tenant tenant`` (stdio) over ``home``, where ``owner`` (tenant
    ``owner_tenant``) has memories: every tool and resource that takes an id answers for the
    owner's ids as for unknown ones, no search or context with the owner's names and words shows them, and a
    ``tenant`` argument (the tools have none) is refused or changes nothing."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError
    from mcp.types import CallToolResult, TextContent

    out = Outcome("cross-tenant MCP")
    proc_env = dict(env if env is not None else
                    {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")})

    def text(res: CallToolResult) -> str:
        return "".join(c.text for c in res.content if isinstance(c, TextContent))

    def check(probe: str, body: str, unknown: str | None = None, mid: str = "",
              fake: str = "") -> None:
        out.attempts += 1
        found = owner.leaked_into(body.replace(mid, "") if unknown is not None
                                  else _without_echo(body))
        if unknown is not None and body.replace(mid, "<id>") != unknown.replace(fake, "<id>"):
            out.fail(probe, f"differs from an unknown id's: {body[:200]!r} vs {unknown[:200]!r}")
        elif found:
            out.fail(probe, f"shows the owner's {found[:3]}: {body[:300]}")
        if "Traceback" in body:
            out.fail(probe, f"a traceback: {body[:300]}")

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "varvemem", "--home", str(home), "mcp",
                                          "--tenant", tenant], env=proc_env)
        with tempfile.TemporaryFile("w+") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as s:
                await s.initialize()

                async def call(name: str, args: dict[str, Any]) -> str:
                    try:
                        return text(await s.call_tool(name, args))
                    except MCPError as exc:
                        return f"error: {exc}"

                async def resource(uri: str) -> str:
                    try:
                        res = await s.read_resource(uri)
                        return json.dumps(res.model_dump(mode="json"))
                    except MCPError as exc:
                        return f"error: {exc}"

                for mid in owner.memory_ids:
                    fake = _unknown_like(mid)
                    for name, args in (("feedback", {"helpful": False, "weight": 1.0}),
                                       ("delete_memory", {})):
                        check(f"mcp {name} {mid}", await call(name, {"memory_id": mid, **args}),
                              await call(name, {"memory_id": fake, **args}), mid, fake)
                    check(f"mcp resource {mid}", await resource(f"varvemem://memories/{mid}"),
                          await resource(f"varvemem://memories/{fake}"), mid, fake)
                check("mcp session resource",
                      await resource(f"varvemem://sessions/{owner.session}"))
                for q in (owner.marker, owner.question):
                    filters: list[dict[str, Any]] = [
                        {}, {"user": owner.user}, {"session": owner.session},
                        {"tags": [owner.tag]}, {"tenant": owner_tenant}]
                    for args in filters:
                        check(f"mcp search {q!r} {args}",
                              await call("search_memories", {"query": q, "top_k": 50, **args}))
                        check(f"mcp context {q!r} {args}",
                              await call("get_context", {"query": q, **args}))
                    check(f"mcp ask {q!r}", await call("ask", {"question": q}))
                    check(f"mcp ask {q!r} tenant", await call(
                        "ask", {"question": q, "tenant": owner_tenant}))
                added = await call("add_memory", {"content": f"Prober note {uuid.uuid4().hex}",
                                                  "tenant": owner_tenant})
                added_ids.append(added)
            errlog.seek(0)
            log = errlog.read()
            out.attempts += 1
            if "Traceback" in log:
                out.fail("mcp server log", log[-500:])

    added_ids: list[str] = []

    with _timed(out):
        async def bounded() -> None:
            with anyio.fail_after(timeout):
                await main()

        anyio.run(bounded)
        # An add that named the owner's tenant is the prober's, or was refused.
        from ...api import Memory
        from ...settings import Settings

        out.attempts += 1
        for reply in added_ids:
            try:
                mid = json.loads(reply)["memory_id"]
            except (ValueError, KeyError, TypeError):
                continue  # refused: fine
            with Memory(settings=Settings.load(home=home)) as mem:
                mine = {r.memory_id for r in _every(mem, tenant)}
                theirs = {r.memory_id for r in _every(mem, owner_tenant)}
            if mid in theirs or mid not in mine:
                out.fail("mcp add_memory with a tenant argument",
                         f"{mid} stored in tenant {owner_tenant!r}, not {tenant!r}")
    return out
