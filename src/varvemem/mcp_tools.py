"""The MCP server's tools, resources and prompts: :func:`build_server` (the six tools, with
the argument types made from the settings, the resources and the two prompts), the names
and texts it uses and the caller of the current request (:data:`CALLER`, set by the HTTP
transport in :mod:`.mcp_server`).
"""

# No ``from __future__ import annotations``: the tools' argument types are made per server from
# its settings, inside build_server, and the SDK reads them from the functions' annotations.

import contextvars
import heapq
import inspect
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, get_args

import pydantic
from pydantic import ConfigDict, Field, StringConstraints

from . import _validate
from .aio import AsyncMemory
from .api import Memory
from .errors import (
    AuthError,
    ConfigError,
    NotFoundError,
    ValidationError,
    VarvememError,
    public_message,
)
from .keys import ApiKey, allows
from .model import MemoryRecord, MemoryType, Tier
from .operations import TOOLS
from .search_args import SEARCH_ARGS, Kind, SearchArg, with_parameters

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

_MCP_ARGS = {a.mcp: a.name for a in SEARCH_ARGS if a.mcp}  # search_memories' arguments

TOOL_ROLES = {tool: op.needs for tool, op in TOOLS.items()}
"""The role an API key needs for each tool: its operation's (:mod:`varvemem.operations`)."""

PROMPTS = ("remember-this", "recall-before-answering")

SESSION_URI = "varvemem://sessions/{session}"
"""A session's resource (RFC 6570): the id percent-encoded in the URIs the server lists."""

NO_MATCH = "No memory matches this query."
"""What get_context answers when nothing is relevant (the relevance floor) and no session."""

TypeName = Literal["dialogue", "tool_call", "knowledge", "event", "experience", "qa"]
if set(get_args(TypeName)) != {t.value for t in MemoryType}:  # pragma: no cover
    raise ImportError("mcp_tools.TypeName must list the memory types of model.MemoryType")

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])
CALLER: contextvars.ContextVar[ApiKey | None] = contextvars.ContextVar("varvemem_mcp_key",
                                                                      default=None)

_INSTRUCTIONS = (
    "Long-term memory for agents (varvemem). Call search_memories or get_context before "
    "answering anything that may depend on earlier work, decisions or user preferences; call "
    "add_memory for durable facts worth keeping (one statement each); report whether a memory "
    "helped with feedback; delete_memory what is wrong. Resources: varvemem://memories/recent "
    "(the newest memories), varvemem://memories/{memory_id}, varvemem://sessions (the sessions) "
    "and varvemem://sessions/{session} (a session's recent turns and its transcript; the id "
    "percent-encoded, as listed). Prompts: "
    "remember-this, recall-before-answering."
)

# The prompts' text, by language ("en", "zh"); {placeholders} filled from the arguments.
_REMEMBER = {
    "en": ("Save this to long-term memory with the add_memory tool, as one self-contained "
           "statement: name the subject instead of pronouns, write dates in full, keep exact "
           "values (versions, hosts, numbers). Split separate facts into separate calls. Add "
           "short tags when they help find it again.{tags}\n\nTo remember: {content}"),
    "zh": ("请用 add_memory 工具把下面的内容存入长期记忆，每条是一句独立完整的陈述：用主语代替代词，"
           "日期写全，保留精确的值（版本、主机、数字）。不同的事实分开调用。需要时加上简短的标签，"
           "方便以后找到。{tags}\n\n要记住的内容：{content}"),
}
_REMEMBER_TAGS = {"en": " Suggested tags: {tags}.", "zh": " 建议的标签：{tags}。"}
_RECALL = {
    "en": ("Before you answer, call get_context with the question (or search_memories for "
           "individual facts). Use only the memories that bear on it; prefer the newest when two "
           "disagree. If the tool says no memory matches, say that memory holds nothing about "
           "it rather than guessing. Answer in the language of the question.\n\n"
           "Question: {question}"),
    "zh": ("回答之前，先用这个问题调用 get_context（或用 search_memories 查具体事实）。只使用与问题"
           "相关的记忆；两条记忆矛盾时以较新的为准。如果工具说没有匹配的记忆，就说明记忆里没有相关"
           "内容，不要猜测。用提问的语言回答。\n\n问题：{question}"),
}


def one_line(exc: BaseException) -> str:
    lines = (public_message(exc) if isinstance(exc, VarvememError) else str(exc)).strip() \
        .splitlines()
    return lines[0] if lines else type(exc).__name__


def _record(rec: MemoryRecord) -> dict[str, Any]:
    return rec.model_dump(mode="json", exclude={"embedding"})


def describe_arguments_error(exc: pydantic.ValidationError, known: Sequence[str]) -> str:
    """A tool's invalid arguments in one line, each problem naming its argument."""
    parts = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err.get("loc", ()))
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown argument {name!r} (known: {', '.join(known)})")
            continue
        if err["type"] == "missing":
            parts.append(f"argument {name} is required")
            continue
        got = repr(err.get("input"))
        got = got if len(got) <= 40 else got[:37] + "..."
        msg = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"invalid argument {name}: {msg} (got {got})")
    return "; ".join(parts).replace("\n", " ")


def build_server(memory: Memory, tenant: str | None = None, *,
                 keys_required: bool = False) -> "MCPServer[Any]":
    """The MCP server (an ``mcp.server.mcpserver.MCPServer``) over ``memory``. Over stdio it
    acts for ``tenant`` (default: ``settings.default_tenant``); with ``keys_required`` (HTTP,
    :func:`.mcp_server.http_app`) each call acts for the tenant of the API key its request
    came with, and one without is refused. The tools and resources are coroutines that run their calls on
    the memory's worker (an :class:`~varvemem.AsyncMemory` over it), in arrival order without
    holding the event loop: the read tools and the resources beside each other, the others
    alone."""
    try:
        from mcp.server.mcpserver import MCPServer, ResourceSecurity
        from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
        from mcp.server.mcpserver.prompts import Prompt
        from mcp.server.mcpserver.tools import Tool
        from mcp.shared.exceptions import MCPError
        from mcp.shared.uri_template import UriTemplate
        from mcp.types import INVALID_PARAMS, Resource, ToolAnnotations
    except ImportError as exc:
        raise ConfigError(f"varvemem mcp needs the MCP SDK (version 2): pip install "
                          f"'varvemem[mcp]' ({exc})") from None
    if tenant is None:
        tenant = memory.settings.default_tenant
    if not isinstance(tenant, str) or not tenant.strip():
        raise ValidationError("tenant must be non-empty text")
    fixed_tenant = tenant
    settings = memory.settings
    amem = AsyncMemory(memory)

    def caller(needed: str) -> str:
        """The tenant this call acts for, once its key (over HTTP) may do ``needed``."""
        key = CALLER.get()
        if key is None:
            if keys_required:
                raise AuthError("missing or malformed API key")
            return fixed_tenant
        if not allows(key.role, needed):
            raise AuthError(f"API key role {key.role!r} may not do this (needs {needed!r})",
                            forbidden=True)
        return key.tenant

    async def tool_call(tool: str, fn: Callable[[Memory, str], _T]) -> _T:
        """``fn`` for ``tool``: the key must allow what its operation needs, and it runs
        beside other reads when the operation reads (:data:`varvemem.operations.TOOLS`)."""
        op = TOOLS[tool]
        try:
            who = caller(op.needs)
            return await (amem.read(fn, who) if op.reads else amem.run(fn, who))
        except VarvememError as exc:
            raise ToolError(one_line(exc)) from None

    async def resource_read(fn: Callable[[Memory, str], _T]) -> _T:
        try:
            who = caller("read")
            return await amem.read(fn, who)
        except NotFoundError as exc:
            raise ResourceNotFoundError(one_line(exc)) from None
        except VarvememError as exc:
            raise ResourceError(one_line(exc)) from None

    class StrictTool(Tool):
        """A tool whose arguments are checked strictly (no unknown ones) and whose invalid
        arguments are reported in one line naming them."""

        async def run(self, arguments: dict[str, Any], context: Any,
                      convert_result: bool = False) -> Any:
            try:
                return await super().run(arguments, context, convert_result)
            except ToolError as exc:
                cause = exc.__cause__
                if isinstance(cause, pydantic.ValidationError):
                    known = list(self.parameters.get("properties", {}))
                    raise ToolError(f"Error executing tool {self.name}: "
                                    f"{describe_arguments_error(cause, known)}") from cause
                raise

    tools: list[Tool] = []

    def tool(*, destructive: bool = False,
             structured_output: bool | None = None) -> Callable[[_F], _F]:
        """Register a tool; its docstring (dedented) is the description an agent reads, and it
        is read-only when its operation reads (:data:`varvemem.operations.TOOLS`)."""

        def register(fn: _F) -> _F:
            read_only = TOOLS[fn.__name__].reads
            made = StrictTool.from_function(
                fn, description=inspect.cleandoc(fn.__doc__ or ""),
                structured_output=structured_output,
                annotations=ToolAnnotations(read_only_hint=read_only,
                                            destructive_hint=None if read_only else destructive))
            base = made.fn_metadata.arg_model
            strict: type[Any] = type(base.__name__, (base,), {
                "model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True),
                "__module__": base.__module__})
            made.fn_metadata.arg_model = strict
            made.parameters = strict.model_json_schema(by_alias=True)
            tools.append(made)
            return fn

        return register

    # The tools' arguments, with the limits the library checks.
    imp_low, imp_high = _validate.IMPORTANCE_RANGE
    weight_low, weight_high = _validate.FEEDBACK_WEIGHT_RANGE
    types = ", ".join(get_args(TypeName))
    tag = Annotated[str, StringConstraints(min_length=1,
                                           max_length=settings.update.tag_max_chars)]
    name = Annotated[str, StringConstraints(min_length=1)]
    Content = Annotated[str, Field(min_length=1, description=(
        "The fact, decision, preference or event to remember, as one self-contained statement "
        f"(at most {settings.update.max_content_bytes} bytes of UTF-8)."))]
    TypeArg = Annotated[TypeName | None, Field(description=f"Memory type, one of: {types}. "
                                                           "Inferred when omitted.")]
    TagsArg = Annotated[list[tag] | None, Field(
        max_length=settings.update.tags_max,
        description=f"Short labels such as 'k8s' or 'billing' (at most "
                    f"{settings.update.tags_max}, each at most {settings.update.tag_max_chars} "
                    "characters).")]
    UserArg = Annotated[name | None, Field(description="The end user the memory is about or "
                                                       "for.")]
    AgentArg = Annotated[name | None, Field(description="The agent that owns the memory.")]
    SessionArg = Annotated[name | None, Field(description="The conversation or task session "
                                                          "id.")]
    ImportanceArg = Annotated[float | None, Field(
        ge=imp_low, le=imp_high, description=f"{imp_low:g}..{imp_high:g}, how much it matters "
                                             "(scored automatically when omitted).")]
    Query = Annotated[str, Field(min_length=1, description="What to look for, in natural "
                                                           "language.")]
    MaxTokens = Annotated[int | None, Field(
        ge=_validate.MAX_TOKENS_MIN,
        description=f"Token budget of the block (at least {_validate.MAX_TOKENS_MIN}; default "
                    "from the settings: a share of the model's context window).")]
    Question = Annotated[str, Field(min_length=1, description="The question to answer.")]
    MemoryId = Annotated[str, Field(min_length=1, description=(
        "The memory's id (mem_...), as returned by add_memory or search_memories; a unique "
        "prefix of it works too."))]
    Helpful = Annotated[bool, Field(description="true if the memory helped, false if it was "
                                                "wrong or useless.")]
    Weight = Annotated[float, Field(
        gt=weight_low, le=weight_high,
        description=f"How far to move its importance, in ({weight_low:g}, {weight_high:g}].")]

    @tool()
    async def add_memory(content: Content, type: TypeArg = None, tags: TagsArg = None,
                   user: UserArg = None, agent: AgentArg = None, session: SessionArg = None,
                   importance: ImportanceArg = None) -> dict[str, Any]:
        """Remember one thing for later sessions: a fact, decision, preference, event or lesson.

        Adding the same content again returns the existing memory (status "duplicate"); a
        statement that contradicts an older one supersedes it. Returns the memory_id, the status
        (created, duplicate or merged) and the ids it superseded or relates to.
        """
        return await tool_call("add_memory", lambda m, t: m.add(
            content, type=type, tags=tags, user=user, agent=agent, session=session,
            importance=importance, tenant=t).model_dump())

    # How the tool spells each kind of search argument (search_args.Kind); the row gives the
    # bounds, the default and the description.
    search_kinds: dict[Kind, Any] = {
        "count": int, "number": float, "name": name, "session": name, "tags": list[name],
        "types": Annotated[list[TypeName], Field(min_length=1)]}

    def search_parameter(arg: SearchArg) -> inspect.Parameter:
        kind = search_kinds[arg.kind]
        return inspect.Parameter(
            str(arg.mcp), inspect.Parameter.KEYWORD_ONLY, default=arg.default,
            annotation=Annotated[kind if arg.default is not None else kind | None,
                                 Field(ge=arg.low, le=arg.high, description=arg.doc)])

    def search_parameters(fn: _F) -> _F:
        return with_parameters(fn, [search_parameter(a) for a in SEARCH_ARGS if a.mcp])

    @tool()
    @search_parameters  # a parameter for each row of search_args.SEARCH_ARGS that names one
    async def search_memories(query: Query, **given: Any) -> dict[str, Any]:
        """Search long-term memory (semantic + keyword + tags; with the relevance judge on,
        each hit judged for how likely it answers the query). Returns at most top_k hits best
        first, each with its memory_id, content, type, tier, tags, score and the score's
        components (relevance among them when judged); an empty list when nothing stored
        answers the query."""
        args = {_MCP_ARGS[k]: v for k, v in given.items()}  # by the library's keywords
        hits = await tool_call("search_memories",
                               lambda m, t: m.search(query, tenant=t, **args))
        return {"query": query, "hits": [h.to_json() for h in hits]}

    @tool(structured_output=False)
    async def get_context(query: Query, max_tokens: MaxTokens = None,
                          session: SessionArg = None, user: UserArg = None) -> str:
        """The memories relevant to query as one Markdown block within max_tokens, ready to put
        in a prompt; only memories with evidence of being about the query are included. With
        session, that session's latest turns and tool calls come first. Says "No memory matches
        this query." when nothing is relevant."""
        text = await tool_call("get_context", lambda m, t: m.context(
            query, max_tokens=max_tokens, session=session, user=user, tenant=t))
        return text if text.strip() else NO_MATCH

    @tool()
    async def ask(question: Question, session: SessionArg = None,
                  user: UserArg = None) -> dict[str, Any]:
        """Answer a question from memory by the cheapest honest route: "skip" (small talk,
        no retrieval), "reuse" (a stored question/answer pair close enough, with its
        confidence) or "normal" (retrieval; the answer is the packed context unless an LLM is
        configured). Returns route, answer, reason, matched (the pair used), confidence, llm
        and ms. With session the exchange is also kept in that session's history."""
        return await tool_call("ask", lambda m, t: m.ask(question, session=session, user=user,
                                                         tenant=t).model_dump())

    @tool()
    async def feedback(memory_id: MemoryId, helpful: Helpful,
                       weight: Weight = 0.1) -> dict[str, Any]:
        """Tell memory whether a memory helped: its importance (and a Q&A pair's score) moves up
        or down by weight, which changes how it ranks from now on. Returns the memory."""
        return await tool_call("feedback", lambda m, t: _record(
            m.feedback(memory_id, helpful, weight=weight, tenant=t)))

    @tool(destructive=True)
    async def delete_memory(memory_id: MemoryId) -> dict[str, Any]:
        """Delete a memory that is wrong or must be forgotten (also from the archive). Only its
        change history keeps the last state."""
        await tool_call("delete_memory",
                        lambda m, t: m.delete(memory_id, reason="mcp", tenant=t))
        return {"memory_id": memory_id, "deleted": True}

    assert {t.name for t in tools} == set(TOOL_ROLES)

    def sessions_of(m: Memory, who: str) -> list[str]:
        """The tenant's sessions: those with a transcript file and those with turns in the
        active tier (a running session's window)."""
        found = set(m.sessions.sessions(tenant=who))
        after = ""
        while True:
            page = m.get_all(tenant=who, tiers=[Tier.ACTIVE], limit=1000, after=after)
            found.update(r.scope.session for r in page if r.scope.session)
            if len(page) < 1000:
                return sorted(found)
            after = page[-1].memory_id

    session_template = UriTemplate.parse(SESSION_URI)

    def session_uri(session: str) -> str:
        """The URI that reads ``session``: the id percent-encoded (RFC 6570, as the SDK decodes
        it on read), so ``thread/1``, ``a b``, ``?``, ``#``, ``%`` and CJK read back."""
        return session_template.expand({"session": session})

    from ._version import __version__

    class Server(MCPServer[Any]):
        async def list_resources(self) -> list[Resource]:
            """The static resources, then one per session of the caller's tenant."""
            listed = await super().list_resources()
            try:
                ids = await resource_read(sessions_of)
            except ResourceError:
                ids = []
            return listed + [Resource(
                uri=session_uri(s), name=f"session {s}", mime_type="application/json",
                description=f"Session {s}: its recent turns and its transcript.") for s in ids]

    server = Server("varvemem", title="varvemem memory", version=__version__,
                    instructions=_INSTRUCTIONS, tools=tools)

    def resource(uri: str, name: str, security: Any = None) -> Callable[[_F], _F]:
        def register(fn: _F) -> _F:
            return server.resource(uri, name=name, mime_type="application/json",
                                   description=" ".join((fn.__doc__ or "").split()),
                                   security=security)(fn)

        return register

    @resource("varvemem://memories/recent", "recent memories")
    async def recent_resource() -> str:
        """The newest current memories (up to mcp.recent_limit), newest first, as JSON."""
        limit = settings.mcp.recent_limit

        def newest(m: Memory, who: str) -> list[MemoryRecord]:
            # By id, a page at a time, keeping the newest: the public API lists by id only.
            kept: list[tuple[float, str, MemoryRecord]] = []
            after = ""
            while True:
                page = m.get_all(tenant=who, limit=1000, after=after)
                for r in page:
                    item = (r.created_at.timestamp(), r.memory_id, r)
                    if len(kept) < limit:
                        heapq.heappush(kept, item)
                    elif item[:2] > kept[0][:2]:
                        heapq.heapreplace(kept, item)
                if len(page) < 1000:
                    return [r for _, _, r in sorted(kept, key=lambda i: i[:2], reverse=True)]
                after = page[-1].memory_id

        recs = await resource_read(newest)
        return json.dumps({"items": [_record(r) for r in recs]}, ensure_ascii=False, indent=2)

    @resource("varvemem://sessions", "sessions")
    async def sessions_resource() -> str:
        """The tenant's sessions (with a transcript or turns in the active tier), each with the
        URI that reads it, as JSON."""
        ids = await resource_read(sessions_of)
        return json.dumps({"sessions": [{"session": s, "uri": session_uri(s)}
                                        for s in ids]}, ensure_ascii=False, indent=2)

    @resource("varvemem://memories/{memory_id}", "memory")
    async def memory_resource(memory_id: str) -> str:
        """One memory with all its attributes (scope, tier, scores, validity), as JSON."""
        rec = await resource_read(lambda m, t: m.get(memory_id, tenant=t))
        return json.dumps(_record(rec), ensure_ascii=False, indent=2)

    # A session id is any text (a session file's name is made safe by the library: quoted), so
    # the SDK's path checks ("..", "/abs", "C:\\") would only refuse ids the listing gives.
    @resource(SESSION_URI, "session", ResourceSecurity(exempt_params={"session"}))
    async def session_resource(session: str) -> str:
        """A session: its recent dialogue turns and tool calls (its active window, oldest
        first) and its transcript (the turns kept in its history file, e.g. by ask), as JSON."""

        def read(m: Memory, who: str) -> dict[str, Any]:
            window = m.session_window(session, tenant=who)
            try:
                transcript = m.sessions.load_session(session, tenant=who)
            except ValidationError:  # not a name a session file can have: none
                transcript = []
            return {"session": session, "items": [_record(r) for r in window],
                    "transcript": [{**t, "at": t["at"].isoformat()} for t in transcript]}

        return json.dumps(await resource_read(read), ensure_ascii=False, indent=2)

    def pick_language(value: str | None) -> str:
        lang = (value or "en").strip().lower()
        if lang not in _REMEMBER:
            raise MCPError(code=INVALID_PARAMS, message=f"language must be one of "
                                                        f"{', '.join(_REMEMBER)} (got {value!r})")
        return lang

    Lang = Annotated[str | None, Field(description="en (the default) or zh: the language of "
                                                   "the prompt's instructions.")]

    def remember_this(content: Annotated[str, Field(description="What to remember.")],
                      tags: Annotated[str | None, Field(
                          description="Suggested tags, comma-separated.")] = None,
                      language: Lang = None) -> str:
        lang = pick_language(language)
        hint = _REMEMBER_TAGS[lang].format(tags=tags.strip()) if tags and tags.strip() else ""
        return _REMEMBER[lang].format(content=content.strip(), tags=hint)

    def recall_before_answering(question: Annotated[str, Field(
            description="The question about to be answered.")], language: Lang = None) -> str:
        return _RECALL[pick_language(language)].format(question=question.strip())

    for prompt_name, fn, description in (
            ("remember-this", remember_this,
             "Have the model save something to memory well: one self-contained statement per "
             "add_memory call."),
            ("recall-before-answering", recall_before_answering,
             "Have the model consult memory (get_context) before answering a question, and say "
             "so when memory holds nothing about it.")):
        server.add_prompt(Prompt.from_function(fn, name=prompt_name, description=description))
    return server
