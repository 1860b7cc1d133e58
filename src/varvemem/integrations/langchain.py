"""LangChain adapters: a chat message history on a varvemem session, and a retriever.

* :class:`VarvememChatMessageHistory` keeps a conversation in a varvemem session: every message
  becomes a dialogue memory (TIER-1, searchable, consolidated on varvemem's schedule) and a turn
  of the session's Markdown history (L1), which :attr:`~VarvememChatMessageHistory.messages`
  reads back in full.
* :class:`VarvememRetriever` is a ``BaseRetriever`` over :meth:`varvemem.Memory.search`
  (``k``, filters and ``search_kwargs`` at construction and per call; ``ainvoke`` through
  :class:`varvemem.AsyncMemory`).

Needs ``langchain-core``: ``pip install 'varvemem[langchain]'``. Only the public
:class:`varvemem.Memory` API is used.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..aio import AsyncMemory
from ..api import Memory
from ..errors import ConfigError

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.documents import Document
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        ChatMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        message_to_dict,
        messages_from_dict,
    )
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, Field, field_validator, model_validator
except ImportError as exc:  # the optional extra is not installed
    raise ConfigError(f"varvemem.integrations.langchain needs langchain-core ({exc}): "
                      "pip install 'varvemem[langchain]'") from None

__all__ = ["VarvememChatMessageHistory", "VarvememRetriever"]

_ROLE = re.compile(r"[A-Za-z0-9_-]{1,32}")  # what a session file accepts as a role


def _role(message: BaseMessage) -> str:
    """varvemem's role for a LangChain message (chunks count as their message class)."""
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, ToolMessage):
        return "tool"
    if isinstance(message, ChatMessage) and _ROLE.fullmatch(message.role):
        return message.role
    return message.type


def _text(content: Any) -> str:
    """A message's text: the string, or its text parts (strings, ``{"type": "text"}`` blocks)
    joined by newlines; images and other blocks are dropped."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        if isinstance(part, str):
            parts.append(part)
        elif (isinstance(part, Mapping) and part.get("type", "text") == "text"
              and isinstance(part.get("text"), str)):
            parts.append(part["text"])
    return "\n".join(parts)


def _message(turn: Mapping[str, Any]) -> BaseMessage:
    """The LangChain message of a session turn: exactly the one saved when the turn keeps its
    fields (``data``), else one made from the role and text (turns saved by other means)."""
    data = turn.get("data")
    if isinstance(data, Mapping) and isinstance(data.get("message"), Mapping):
        saved = dict(data["message"])
        fields = dict(saved.get("data") or {})
        if "content" not in fields:  # a text content is the turn's own text
            fields["content"] = turn["content"]
        return messages_from_dict([{**saved, "data": fields}])[0]
    role, content = turn["role"], turn["content"]
    if role in ("user", "human"):
        return HumanMessage(content=content)
    if role in ("assistant", "ai"):
        return AIMessage(content=content)
    if role == "system":
        return SystemMessage(content=content)
    if role == "tool":
        return ToolMessage(content=content, tool_call_id="")
    return ChatMessage(role=role, content=content)


def _saved(message: BaseMessage) -> dict[str, Any]:
    """A message's fields as its turn keeps them: all of them, but a text content (the turn's
    own text)."""
    saved = message_to_dict(message)
    if isinstance(message.content, str):
        saved["data"] = {k: v for k, v in saved["data"].items() if k != "content"}
    return {"message": saved}


class VarvememChatMessageHistory(BaseChatMessageHistory):
    """A LangChain chat history kept in a varvemem session (L1 file + TIER-1 memories).

    ``add_messages`` writes each message as a turn of the session's Markdown history
    (``memory.sessions.save``), exactly: its text unchanged (empty too: an ``AIMessage`` that
    only carries tool calls) and every field (``id``, ``name``, ``additional_kwargs``,
    ``tool_calls``, ``tool_call_id``, ``response_metadata``...), so ``messages`` gives back
    equal messages, oldest first, and a replayed tool exchange is what the model sent. Each
    message with text also becomes a dialogue memory (``memory.add_messages``) with
    ``user``/``agent`` as its scope. Any session id works (the file name is made safe, the id
    kept inside); concurrent writers, threads or processes, are serialised by a file lock. The
    history is per tenant and session: ``user``/``agent`` scope the memories, and the turns
    are marked as the user's (erasing the user removes them).
    """

    def __init__(self, memory: Memory, session: str, *, tenant: str | None = None,
                 user: str | None = None, agent: str | None = None) -> None:
        super().__init__()
        memory.sessions.path(session, tenant=tenant)  # a bad session id or tenant fails here
        self.memory = memory
        self.session = session
        self.tenant = tenant
        self.user = user
        self.agent = agent

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The session's messages, oldest first, read from its Markdown history."""
        return self._amem.read_blocking(self._read)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` to the session's history and remember those with text as
        dialogue."""
        self._amem.run_blocking(self._add, list(messages))

    def clear(self) -> None:
        """Forget the conversation: end the session (its TIER-1 memories move to short-term)
        and delete its Markdown history, so ``messages`` is empty.

        Long-term memories already made from the session stay; varvemem consolidates and
        forgets them on its own schedule (delete them with ``Memory.delete`` if need be).
        """
        self._amem.run_blocking(self._clear)

    # The async variants run on the memory's worker thread, as the sync ones do (not on
    # LangChain's default executor): concurrent ``aadd_messages`` keep their call order.
    async def aget_messages(self) -> list[BaseMessage]:
        """:attr:`messages`, without blocking the event loop."""
        return await self._amem.read(self._read)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """:meth:`add_messages`, without blocking the event loop."""
        await self._amem.run(self._add, list(messages))

    async def aclear(self) -> None:
        """:meth:`clear`, without blocking the event loop."""
        await self._amem.run(self._clear)

    @property
    def _amem(self) -> AsyncMemory:
        return AsyncMemory(self.memory)  # shares the memory's one worker

    def _read(self, mem: Memory) -> list[BaseMessage]:
        return [_message(t) for t in mem.sessions.load_session(self.session, tenant=self.tenant)]

    def _add(self, mem: Memory, messages: list[BaseMessage]) -> None:
        turns: list[dict[str, Any]] = [
            {"role": _role(m), "content": _text(m.content), "data": _saved(m)} for m in messages]
        if not turns:
            return
        # The L1 log first: it is what ``messages`` reads, and it refuses a bad role before
        # any memory is made.
        mem.sessions.save(self.session, turns, tenant=self.tenant, user=self.user, exact=True)
        rows: list[dict[str, Any]] = []
        for msg, turn in zip(messages, turns):
            if not turn["content"].strip():
                continue
            row: dict[str, Any] = {"role": turn["role"], "content": turn["content"]}
            if msg.name:
                row["name"] = msg.name
            if isinstance(msg, ToolMessage) and msg.tool_call_id:
                row["metadata"] = {"tool_call_id": msg.tool_call_id}
            rows.append(row)
        if rows:
            mem.add_messages(rows, session=self.session, user=self.user, agent=self.agent,
                             tenant=self.tenant)

    def _clear(self, mem: Memory) -> None:
        mem.close_session(self.session, tenant=self.tenant)
        mem.sessions.delete_session(self.session, tenant=self.tenant)


class VarvememRetriever(BaseRetriever):
    """A LangChain retriever over :meth:`varvemem.Memory.search`, best hit first.

    Each hit becomes a ``Document`` (id: the memory id) whose metadata holds ``memory_id``,
    ``score``, ``scores`` (the breakdown), ``channels``, ``type``, ``tier``, ``tags``,
    ``created_at`` (ISO 8601) and ``source``.

    ``memory`` is a :class:`varvemem.Memory` or a :class:`varvemem.AsyncMemory`; either way
    the search runs on the memory's worker thread (:mod:`varvemem.aio`), so sync ``invoke``
    and async ``ainvoke`` calls of one memory never run at the same time, and ``ainvoke``
    does not block the event loop.

    The number of documents is ``k`` (or its other name ``top_k``), as a vector store's
    retriever gives: nothing is cut, neither by relevance nor by the relevance floor, unless
    ``score_threshold`` (``min_relevance``) is given; the filters are
    ``tenant``, ``user``, ``agent``, ``session``, ``types``, ``memory_tags`` and ``profile``;
    ``search_kwargs`` passes any other argument of :meth:`~varvemem.Memory.search` under its
    own name (``{"tags": [...], "since": ..., "include_superseded": True}``), and takes
    LangChain's ``k`` and ``score_threshold`` (``min_relevance``) as a vector store's
    retriever does. Each may be given
    at construction and again per call (``retriever.invoke(q, k=1, user="alice")``, or
    ``search_kwargs={...}``), the call's winning; a field set by name wins over the same key
    in ``search_kwargs`` given at the same place. Unknown fields or arguments are refused.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    memory: Memory | AsyncMemory
    """The memory to search."""
    top_k: int = Field(5, ge=1)
    """How many documents at most (also accepted as ``k``)."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """More arguments of :meth:`varvemem.Memory.search`, by its own names."""
    tenant: str | None = None
    user: str | None = None
    agent: str | None = None
    session: str | None = None
    types: list[str] | None = None
    """Memory types to keep (``dialogue``, ``knowledge``...); ``None``: all."""
    memory_tags: list[str] | None = None
    """Memory tags that restrict (a hit carries at least one) and score. (``tags`` is
    LangChain's own field: the run's tags for callbacks and tracing.)"""
    profile: str | None = None
    """A scoring profile of the settings; ``None``: the default."""

    @model_validator(mode="before")
    @classmethod
    def _k_is_top_k(cls, data: Any) -> Any:
        if isinstance(data, dict) and "k" in data:
            data = dict(data)
            data["top_k"] = _one_k(data.pop("k"), data.get("top_k", _UNSET))
        return data

    @field_validator("search_kwargs")
    @classmethod
    def _known(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _search_kwargs(value)

    @property
    def k(self) -> int:
        """The number of documents (``top_k``)."""
        return self.top_k

    def _search_args(self, call: dict[str, Any]) -> dict[str, Any]:
        """Memory.search's arguments: the defaults, then construction, then the call."""
        # k documents, as a vector store's retriever returns (its "similarity" search); a
        # score_threshold (min_relevance) cuts by relevance, as "similarity_score_threshold".
        args: dict[str, Any] = {"top_k": self.top_k, "min_relevance": 0.0,
                                **self.search_kwargs}
        for name in self.model_fields_set & _FIELD_ARGS.keys():
            args[_FIELD_ARGS[name]] = getattr(self, name)
        call = dict(call)
        extra = call.pop("search_kwargs", None) or {}
        if not isinstance(extra, dict):
            raise ValueError("search_kwargs must be a dict of Memory.search's arguments")
        args.update(_search_kwargs(extra))
        if "k" in call:
            call["top_k"] = _one_k(call.pop("k"), call.get("top_k", _UNSET))
        unknown = sorted(set(call) - _FIELD_ARGS.keys())
        if unknown:
            raise ValueError(f"unknown retriever argument(s) {', '.join(unknown)} (known: k, "
                             f"{', '.join(sorted(_FIELD_ARGS))}, search_kwargs)")
        for name, value in call.items():
            args[_FIELD_ARGS[name]] = value
        return args

    def _async_memory(self) -> AsyncMemory:
        return self.memory if isinstance(self.memory, AsyncMemory) else AsyncMemory(self.memory)

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        args = self._search_args(kwargs)
        hits = self._async_memory().read_blocking(Memory.search, query, **args)
        return [_document(hit) for hit in hits]

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[Document]:
        args = self._search_args(kwargs)
        hits = await self._async_memory().search(query, **args)
        return [_document(hit) for hit in hits]


_UNSET: Any = object()

# The retriever's fields (and per-call arguments) and the Memory.search argument each sets.
_FIELD_ARGS = {"top_k": "top_k", "tenant": "tenant", "user": "user", "agent": "agent",
               "session": "session", "types": "type", "memory_tags": "tags",
               "profile": "profile"}
_SEARCH_ARGS = frozenset(inspect.signature(Memory.search).parameters) - {"self", "query"}


def _one_k(k: Any, top_k: Any) -> Any:
    if top_k is not _UNSET and top_k != k:
        raise ValueError(f"k={k!r} and top_k={top_k!r} differ (they are one setting)")
    return k


# LangChain's spellings in a vector store retriever's search_kwargs, as Memory.search names them.
_LANGCHAIN_KWARGS = {"k": "top_k", "score_threshold": "min_relevance"}


def _search_kwargs(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with LangChain's spellings (``k``, ``score_threshold``) renamed; an argument
    :meth:`Memory.search` does not have, or one given under both names, is refused."""
    out: dict[str, Any] = {}
    for key, v in value.items():
        name = _LANGCHAIN_KWARGS.get(key, key)
        if name in out and out[name] != v:
            raise ValueError(f"search_kwargs: {key}={v!r} and {name}={out[name]!r} differ "
                             "(they are one argument)")
        out[name] = v
    unknown = sorted(set(out) - _SEARCH_ARGS)
    if unknown:
        raise ValueError(f"search_kwargs: Memory.search has no argument {', '.join(unknown)}")
    return out


def _document(hit: Any) -> Document:
    rec = hit.memory
    return Document(page_content=rec.content, id=rec.memory_id, metadata={
        "memory_id": rec.memory_id, "score": hit.score, "scores": hit.scores.model_dump(),
        "channels": list(hit.channels), "type": rec.memory_type.value, "tier": rec.tier.value,
        "tags": list(rec.tags), "created_at": rec.created_at.isoformat(), "source": rec.source})
