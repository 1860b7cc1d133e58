"""``varvemem mcp``: an MCP server (the official ``mcp`` SDK, version 2) over :class:`Memory`.

Six tools (add_memory, search_memories, get_context, ask, feedback, delete_memory), two
prompts (remember-this, recall-before-answering), resources (``varvemem://memories/recent``,
``varvemem://sessions`` and each session, templates ``varvemem://memories/{memory_id}`` and
``varvemem://sessions/{session}``). A thin face: only the public :class:`Memory` API is used.

The tools' input schemas carry the limits the library checks (read from ``settings`` and
``_validate``, so they cannot drift) and refuse unknown arguments; every error is one line.
Over stdio the server acts for one tenant and needs no key. Over streamable HTTP every request
needs an API key (``Authorization: Bearer msk_...``, the keys of the REST API): its tenant binds
every call and its role decides what it may do (a ``read`` key cannot write).

The tools, resources and prompts (:func:`build_server`) are in :mod:`.mcp_tools`; this module
holds the transports (stdio, and streamable HTTP behind API keys) and re-exports them.
"""

import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

from .aio import AsyncMemory
from .api import Memory
from .errors import AuthError, ValidationError, VarvememError
from .keys import ApiKey
from .mcp_tools import CALLER as _CALLER
from .mcp_tools import NO_MATCH, PROMPTS, TOOL_ROLES, build_server
from .mcp_tools import SESSION_URI as SESSION_URI
from .mcp_tools import TypeName as TypeName
from .mcp_tools import describe_arguments_error as describe_arguments_error
from .mcp_tools import one_line as _one_line
from .settings import Settings

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["NO_MATCH", "PROMPTS", "TOOL_ROLES", "TRANSPORTS", "build_server", "http_app",
           "run", "transport_security"]

TRANSPORTS = ("stdio", "http")
"""``stdio`` (the default: the client starts the server) or ``http`` (streamable HTTP at /mcp)."""

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def transport_security(host: str, allowed_hosts: Sequence[str]) -> Any:
    """The SDK's DNS rebinding protection for a server bound to ``host``: requests whose
    ``Host`` is loopback, ``host`` itself (unless a wildcard address) or one of
    ``allowed_hosts`` (``name`` any port, ``name:port`` that one; ``*`` any host) pass, with
    an ``Origin`` of the same hosts (or none)."""
    from mcp.server.transport_security import TransportSecuritySettings

    if "*" in allowed_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = list(_LOOPBACK_HOSTS)
    if host not in ("0.0.0.0", "::", ""):
        names.append(f"[{host}]" if ":" in host and not host.startswith("[") else host)
    hosts: list[str] = []
    for name in [*names, *allowed_hosts]:
        if name.rsplit(":", 1)[-1].isdigit() and not name.endswith("]"):
            hosts.append(name)  # host:port, as given
        else:
            hosts += [name, f"{name}:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=list(dict.fromkeys(hosts)),
                                     allowed_origins=list(dict.fromkeys(origins)))


class _KeyAuth:
    """ASGI middleware: every HTTP request needs a valid API key (``Authorization: Bearer``);
    the key becomes the request's caller (its tenant, its role) and the principal its MCP
    session is bound to. Refusals are JSON, as the REST API's: 401 (no key, unknown, revoked,
    expired)."""

    def __init__(self, app: "ASGIApp", authenticate: Callable[[str | None], ApiKey]) -> None:
        self.app = app
        self.authenticate = authenticate

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        import anyio.to_thread
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken
        from starlette.responses import JSONResponse

        header = next((v.decode("latin-1") for k, v in scope["headers"]
                       if k.lower() == b"authorization"), "")
        token = header[7:].strip() if header[:7].lower() == "bearer " else None
        try:
            key = await anyio.to_thread.run_sync(self.authenticate, token)
        except AuthError as exc:
            status, kind = (403, "forbidden") if exc.forbidden else (401, "unauthorized")
            await JSONResponse({"error": {"type": kind, "message": str(exc)}},
                               status_code=status,
                               headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        except VarvememError as exc:
            await JSONResponse({"error": {"type": "unavailable", "message": _one_line(exc)}},
                               status_code=503)(scope, receive, send)
            return
        scope["user"] = AuthenticatedUser(AccessToken(
            token=f"msk_{key.key_id}", client_id=key.key_id, scopes=[key.role],
            subject=key.key_id, claims={"tenant": key.tenant},
            expires_at=int(key.expires_at.timestamp()) if key.expires_at else None))
        reset = _CALLER.set(key)
        try:
            await self.app(scope, receive, send)
        finally:
            _CALLER.reset(reset)


def http_app(memory: Memory, host: str = "127.0.0.1",
             allowed_hosts: Sequence[str] | None = None) -> "ASGIApp":
    """The streamable HTTP app (``/mcp``) over ``memory``: API keys required, the ``Host``
    header checked (:func:`transport_security`; default ``mcp.allowed_hosts``)."""
    allowed = memory.settings.mcp.allowed_hosts if allowed_hosts is None else allowed_hosts
    server = build_server(memory, keys_required=True)
    app = server.streamable_http_app(transport_security=transport_security(host, allowed),
                                     host=host)
    return _KeyAuth(app, lambda token: memory.keys.authenticate(token, "read"))


def run(settings: Settings, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8766,
        tenant: str | None = None, allowed_hosts: Sequence[str] = ()) -> None:
    """Open the :class:`Memory` of ``settings`` and serve it over ``transport`` until stopped:
    ``stdio`` until the client closes stdin, ``http`` (streamable HTTP at
    ``http://host:port/mcp``, API keys required) until SIGINT/SIGTERM. ``allowed_hosts`` adds
    to ``mcp.allowed_hosts``. The memory is closed at the end."""
    if transport not in TRANSPORTS:
        raise ValidationError(f"unknown transport {transport!r} (known: {', '.join(TRANSPORTS)})")
    if transport == "http" and tenant is not None:
        raise ValidationError("over HTTP each call acts for its API key's tenant: --tenant is "
                              "for stdio")
    allowed = [*settings.mcp.allowed_hosts, *(h.strip() for h in allowed_hosts if h.strip())]
    memory = Memory(settings=settings)
    # SIGTERM stops like SIGINT, through the finally below. (uvicorn shuts down gracefully, then
    # raises the signal again with the handler it found: this one, not the default that kills.)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _stop) if main else None
    try:
        if transport == "stdio":
            build_server(memory, tenant).run("stdio")
        else:
            _serve(http_app(memory, host, allowed), host, port)
    except _Stopped:
        pass
    finally:
        AsyncMemory(memory).run_blocking(Memory.close)  # after any call still on its worker
        if main:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
        for notice in memory.notices:
            print(f"note: {notice}", file=sys.stderr)


def _serve(app: "ASGIApp", host: str, port: int) -> None:
    import anyio
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info"))
    serve: Callable[[], Awaitable[None]] = server.serve
    anyio.run(serve)


class _Stopped(SystemExit):
    """SIGTERM arrived: leave the server loop and close the memory."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stopped(0)
