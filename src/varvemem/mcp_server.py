"""``varvemem mcp``: an MCP server (the official ``mcp`` SDK, version 2) over :class:`Memory`.

Six tools (add_memory, search_memories, get_context, ask, feedback, delete_memory) and two
resource templates (``varvemem://memories/{memory_id}``, ``varvemem://sessions/{session}``),
all acting for one tenant. A thin face: only the public :class:`Memory` API is used, library
errors become tool errors (or resource errors) carrying their one-line message.
"""

from __future__ import annotations

import inspect
import ipaddress
import json
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import Field

from .api import Memory
from .errors import ConfigError, NotFoundError, ValidationError, VarvememError
from .model import MemoryRecord, MemoryType
from .settings import Settings

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["TRANSPORTS", "build_server", "run"]

TRANSPORTS = ("stdio", "http")
"""``stdio`` (the default: the client starts the server) or ``http`` (streamable HTTP at /mcp)."""

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])
_TYPES = ", ".join(t.value for t in MemoryType)

# The tools' arguments. Module-level: the SDK evaluates the (postponed) annotations of the tool
# functions against this module's globals to build their input schemas.
Content = Annotated[str, Field(description="The fact, decision, preference or event to remember, "
                                           "as one self-contained statement.")]
TypeArg = Annotated[str | None, Field(description=f"Memory type, one of: {_TYPES}. Inferred "
                                                  "when omitted.")]
TypesArg = Annotated[list[str] | None, Field(description=f"Only these memory types (of: {_TYPES}).")]
TagsArg = Annotated[list[str] | None, Field(description="Short labels such as 'k8s' or 'billing'.")]
SearchTagsArg = Annotated[list[str] | None, Field(
    description="Only memories carrying at least one of these tags (they also raise the score).")]
UserArg = Annotated[str | None, Field(description="The end user the memory is about or for.")]
AgentArg = Annotated[str | None, Field(description="The agent that owns the memory.")]
SessionArg = Annotated[str | None, Field(description="The conversation or task session id.")]
ImportanceArg = Annotated[float | None, Field(description="0..1, how much it matters (scored "
                                                          "automatically when omitted).")]
Query = Annotated[str, Field(description="What to look for, in natural language.")]
TopK = Annotated[int | None, Field(description="How many hits at most (default from settings).")]
MaxTokens = Annotated[int | None, Field(description="Token budget of the block (at least 16; "
                                                    "default from settings).")]
Question = Annotated[str, Field(description="The question to answer.")]
MemoryId = Annotated[str, Field(description="The memory's id (mem_...), as returned by "
                                            "add_memory or search_memories.")]
Helpful = Annotated[bool, Field(description="true if the memory helped, false if it was wrong or "
                                            "useless.")]
Weight = Annotated[float, Field(description="How far to move its importance, in (0, 1].")]

_INSTRUCTIONS = (
    "Long-term memory for agents (varvemem), tenant {tenant!r}. Call search_memories or "
    "get_context before answering anything that may depend on earlier work, decisions or user "
    "preferences; call add_memory for durable facts worth keeping (one statement each); report "
    "whether a memory helped with feedback; delete_memory what is wrong. Read a memory at "
    "varvemem://memories/{{memory_id}} and a session's recent turns at "
    "varvemem://sessions/{{session}}."
)


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _record(rec: MemoryRecord) -> dict[str, Any]:
    return rec.model_dump(mode="json", exclude={"embedding"})


def build_server(memory: Memory, tenant: str | None = None) -> MCPServer:
    """The MCP server (an ``mcp.server.mcpserver.MCPServer``) over ``memory``, acting for
    ``tenant`` (default: ``settings.default_tenant``). Calls into ``memory`` are serialised by a
    lock: the SDK runs these synchronous tools on worker threads."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
        from mcp.types import ToolAnnotations
    except ImportError as exc:
        raise ConfigError(f"varvemem mcp needs the MCP SDK (version 2): pip install "
                          f"'varvemem[mcp]' ({exc})") from None
    if tenant is None:
        tenant = memory.settings.default_tenant
    if not isinstance(tenant, str) or not tenant.strip():
        raise ValidationError("tenant must be non-empty text")
    lock = threading.Lock()

    def tool_call(fn: Callable[[Memory], _T]) -> _T:
        try:
            with lock:
                return fn(memory)
        except VarvememError as exc:
            raise ToolError(_one_line(exc)) from None

    def resource_read(fn: Callable[[Memory], _T]) -> _T:
        try:
            with lock:
                return fn(memory)
        except NotFoundError as exc:
            raise ResourceNotFoundError(_one_line(exc)) from None
        except VarvememError as exc:
            raise ResourceError(_one_line(exc)) from None

    from . import __version__

    server: MCPServer = MCPServer(
        "varvemem", title="varvemem memory", version=__version__,
        instructions=_INSTRUCTIONS.format(tenant=tenant))

    def tool(*, read_only: bool, destructive: bool = False,
             structured_output: bool | None = None) -> Callable[[_F], _F]:
        """Register a tool; its docstring (dedented) is the description an agent reads."""

        def register(fn: _F) -> _F:
            server.add_tool(fn, description=inspect.cleandoc(fn.__doc__ or ""),
                            structured_output=structured_output,
                            annotations=ToolAnnotations(read_only_hint=read_only,
                                                        destructive_hint=None if read_only
                                                        else destructive))
            return fn

        return register

    def resource(uri: str, name: str) -> Callable[[_F], _F]:
        def register(fn: _F) -> _F:
            return server.resource(uri, name=name, mime_type="application/json",
                                   description=inspect.cleandoc(fn.__doc__ or ""))(fn)

        return register

    @tool(read_only=False)
    def add_memory(content: Content, type: TypeArg = None, tags: TagsArg = None,
                   user: UserArg = None, agent: AgentArg = None, session: SessionArg = None,
                   importance: ImportanceArg = None) -> dict[str, Any]:
        """Remember one thing for later sessions: a fact, decision, preference, event or lesson.

        Adding the same content again returns the existing memory (status "duplicate"); a
        statement that contradicts an older one supersedes it. Returns the memory_id, the status
        (created, duplicate or merged) and the ids it superseded or relates to.
        """
        return tool_call(lambda m: m.add(
            content, type=type, tags=tags, user=user, agent=agent, session=session,
            importance=importance, tenant=tenant).model_dump())

    @tool(read_only=True)
    def search_memories(query: Query, top_k: TopK = None, user: UserArg = None,
                        session: SessionArg = None, types: TypesArg = None,
                        tags: SearchTagsArg = None) -> dict[str, Any]:
        """Search long-term memory (semantic + keyword + tags, ranked by recency, importance and
        reliability too). Returns the hits best first, each with its memory_id, content, type,
        tier, tags, score and the score's components; an empty list when nothing matches."""
        hits = tool_call(lambda m: m.search(query, top_k=top_k, user=user, session=session,
                                            type=types, tags=tags, tenant=tenant))
        return {"query": query, "hits": [h.to_json() for h in hits]}

    @tool(read_only=True, structured_output=False)
    def get_context(query: Query, max_tokens: MaxTokens = None, session: SessionArg = None,
                    user: UserArg = None) -> str:
        """The memories most relevant to query as one Markdown block within max_tokens,
        ready to put in a prompt. With session, that session's latest turns and tool calls
        come first. Says "No relevant memories." when there are none."""
        text = tool_call(lambda m: m.context(query, max_tokens=max_tokens, session=session,
                                             user=user, tenant=tenant))
        return text if text.strip() else "No relevant memories."

    @tool(read_only=False)
    def ask(question: Question, session: SessionArg = None,
            user: UserArg = None) -> dict[str, Any]:
        """Answer a question from memory by the cheapest honest route: "skip" (small talk,
        no retrieval), "reuse" (a stored question/answer pair close enough, with its
        confidence) or "normal" (retrieval; the answer is the packed context unless an LLM is
        configured). Returns route, answer, reason, matched (the pair used), confidence, llm
        and ms. With session the exchange is also kept in that session's history."""
        return tool_call(lambda m: m.ask(question, session=session, user=user,
                                         tenant=tenant).model_dump())

    @tool(read_only=False)
    def feedback(memory_id: MemoryId, helpful: Helpful, weight: Weight = 0.1) -> dict[str, Any]:
        """Tell memory whether a memory helped: its importance (and a Q&A pair's score) moves up
        or down by weight, which changes how it ranks from now on. Returns the memory."""
        return tool_call(lambda m: _record(m.feedback(memory_id, helpful, weight=weight,
                                                      tenant=tenant)))

    @tool(read_only=False, destructive=True)
    def delete_memory(memory_id: MemoryId) -> dict[str, Any]:
        """Delete a memory that is wrong or must be forgotten (also from the archive). Only its
        change history keeps the last state."""
        tool_call(lambda m: m.delete(memory_id, reason="mcp", tenant=tenant))
        return {"memory_id": memory_id, "deleted": True}

    @resource("varvemem://memories/{memory_id}", "memory")
    def memory_resource(memory_id: str) -> str:
        """One memory with all its attributes (scope, tier, scores, validity), as JSON."""
        rec = resource_read(lambda m: m.get(memory_id, tenant=tenant))
        return json.dumps(_record(rec), ensure_ascii=False, indent=2)

    @resource("varvemem://sessions/{session}", "session")
    def session_resource(session: str) -> str:
        """A session's recent dialogue turns and tool calls (its active window), oldest first,
        as JSON."""
        window = resource_read(lambda m: m.session_window(session, tenant=tenant))
        return json.dumps({"session": session, "items": [_record(r) for r in window]},
                          ensure_ascii=False, indent=2)

    return server


def run(settings: Settings, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8766,
        tenant: str | None = None, allow_remote: bool = False) -> None:
    """Open the :class:`Memory` of ``settings`` and serve it over ``transport`` until stopped:
    ``stdio`` until the client closes stdin, ``http`` (streamable HTTP at
    ``http://host:port/mcp``) until SIGINT/SIGTERM. The memory is closed at the end.

    MCP over HTTP checks no API key: it binds to loopback only, unless ``allow_remote`` (for
    a host behind an authenticating proxy)."""
    if transport not in TRANSPORTS:
        raise ValidationError(f"unknown transport {transport!r} (known: {', '.join(TRANSPORTS)})")
    if transport == "http" and not allow_remote and not _loopback(host):
        raise ConfigError(f"MCP over HTTP has no authentication: bind it to 127.0.0.1 (not "
                          f"{host}), or put it behind an authenticating proxy and pass "
                          "--allow-remote")
    memory = Memory(settings=settings)
    # SIGTERM stops like SIGINT, through the finally below. (uvicorn shuts down gracefully, then
    # raises the signal again with the handler it found: this one, not the default that kills.)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _stop) if main else None
    try:
        server = build_server(memory, tenant)
        if transport == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host=host, port=port)
    except _Stopped:
        pass
    finally:
        memory.close()
        if main:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
        for notice in memory.notices:
            print(f"note: {notice}", file=sys.stderr)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class _Stopped(SystemExit):
    """SIGTERM arrived: leave the server loop and close the memory."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stopped(0)

