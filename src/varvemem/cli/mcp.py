"""The ``mcp`` command: the library as an MCP server, over stdio or streamable HTTP."""

from __future__ import annotations

from enum import Enum

import typer

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
                                             "(streamable HTTP at http://HOST:PORT/mcp, API keys "
                                             "required)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address for --transport http."),
    port: int = typer.Option(8766, "--port", min=0, max=65535, help="Port for --transport http."),
    tenant: str | None = typer.Option(None, "--tenant",
                                      help="The tenant every call acts for over stdio (default "
                                           "default_tenant). Over HTTP the API key's tenant."),
    allowed_hosts: list[str] | None = typer.Option(
        None, "--allowed-hosts", metavar="HOSTS",
        help="Host headers --transport http accepts besides loopback and --host, e.g. the name "
             "a reverse proxy forwards (host or host:port; comma-separated or repeated; '*' for "
             "any). Adds to the setting mcp.allowed_hosts."),
) -> None:
    """Serve memories to agents over MCP: tools add_memory, search_memories, get_context, ask,
    feedback, delete_memory; prompts remember-this, recall-before-answering; resources
    varvemem://memories/recent, varvemem://sessions and templates varvemem://memories/{id},
    varvemem://sessions/{id}.

    Over HTTP every request needs an API key (varvemem keys create), sent as
    "Authorization: Bearer KEY": its tenant binds every call, and a read key cannot write.
    Needs the MCP SDK: the mcp extra of varvemem.
    """
    hosts = [h for value in allowed_hosts or [] for h in value.split(",")]
    from ..mcp_server import run

    run(home_settings(ctx), transport.value, host, port, tenant, hosts)
