"""The ``mcp`` command: the library as an MCP server, over stdio or streamable HTTP."""

from __future__ import annotations

from enum import Enum

import typer

from ..mcp_server import run
from ._app import app, home_settings


class Transport(str, Enum):
    """How MCP clients reach the server."""

    STDIO = "stdio"
    HTTP = "http"


@app.command("mcp")
def mcp_command(
    ctx: typer.Context,
    transport: Transport = typer.Option(Transport.STDIO, "--transport",
                                        help="stdio (the client starts this process) or http "
                                             "(streamable HTTP at http://HOST:PORT/mcp)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address for --transport http."),
    port: int = typer.Option(8766, "--port", min=0, max=65535, help="Port for --transport http."),
    tenant: str | None = typer.Option(None, "--tenant",
                                      help="The tenant every call acts for (default "
                                           "default_tenant)."),
    allow_remote: bool = typer.Option(False, "--allow-remote",
                                      help="Bind --transport http beyond loopback (it checks no "
                                           "key: only behind an authenticating proxy)."),
) -> None:
    """Serve memories to agents over MCP: tools add_memory, search_memories, get_context, ask,
    feedback, delete_memory; resources varvemem://memories/{id} and varvemem://sessions/{id}.

    Needs the MCP SDK: the mcp extra of varvemem.
    """
    run(home_settings(ctx), transport.value, host, port, tenant, allow_remote)
