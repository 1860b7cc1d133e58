"""LangChain adapters: a chat message history on a varvemem session, and a retriever."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Callable

import pytest
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableLambda
from tests.conftest import Clock

from varvemem import AsyncMemory, ConfigError, Memory, ValidationError
from varvemem.integrations.langchain import VarvememChatMessageHistory, VarvememRetriever

QUESTION = "How do I deploy the billing service?\n\n## Context\n- region: eu-west-1\n- `v2.3`"
ANSWER = ("Run the pipeline:\n\n```bash\nmake deploy SERVICE=billing\n```\n\n"
          "# Notes\n1. Wait for the canary.\n2. Check the dashboard.")


def conversation() -> list[BaseMessage]:
    return [SystemMessage(content="You are the release assistant."),
            HumanMessage(content=QUESTION),
            AIMessage(content=ANSWER),
            ToolMessage(content="deploy #42 finished: green", tool_call_id="call-1")]


def shape(messages: list[BaseMessage]) -> list[tuple[type, str]]:
    return [(type(m), m.content) for m in messages]  # type: ignore[misc]


# --- chat message history -------------------------------------------------------------------------

def test_history_round_trip_keeps_order_types_and_markdown(
        make_memory: Callable[..., Memory]) -> None:
    mem = make_memory()
    history = VarvememChatMessageHistory(mem, "chat-1", user="alice", agent="release-bot")
    assert history.messages == []
    history.add_messages(conversation())
    expected = [(SystemMessage, "You are the release assistant."), (HumanMessage, QUESTION),
                (AIMessage, ANSWER), (ToolMessage, "deploy #42 finished: green")]
    assert shape(history.messages) == expected
    turns = mem.sessions.load_session("chat-1")
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "tool"]
    assert mem.sessions.path("chat-1").read_text("utf-8").count("## Context") == 1
    mem.close()  # the Markdown history outlives the process
    again = VarvememChatMessageHistory(make_memory(), "chat-1")
    assert shape(again.messages) == expected


def test_messages_are_dialogue_memories_of_the_session(mem: Memory) -> None:
    history = VarvememChatMessageHistory(mem, "chat-1", user="alice", agent="release-bot")
    history.add_messages(conversation())
    VarvememChatMessageHistory(mem, "chat-2", user="alice").add_user_message(
        "How do I deploy the search service?")
    hits = mem.search("deploy the billing service", session="chat-1", top_k=10)
    assert {h.memory.content for h in hits} == {
        "You are the release assistant.", QUESTION, ANSWER, "deploy #42 finished: green"}
    for h in hits:
        assert h.memory.memory_type.value == "dialogue" and h.memory.tier.value == "active"
        assert (h.memory.scope.session, h.memory.scope.user, h.memory.scope.agent) == (
            "chat-1", "alice", "release-bot")
    roles = {h.memory.content: h.memory.metadata.get("role") for h in hits}
    assert roles[QUESTION] == "user" and roles[ANSWER] == "assistant"
    tool = next(h.memory for h in hits if h.memory.content.startswith("deploy #42"))
    assert tool.metadata.get("role") == "tool" and tool.metadata.get("tool_call_id") == "call-1"
    window = mem.session_window("chat-1", user="alice", agent="release-bot")
    assert [r.content for r in window] == [
        "You are the release assistant.", QUESTION, ANSWER, "deploy #42 finished: green"]
    other = mem.search("deploy", session="chat-2", top_k=10)
    assert [h.memory.content for h in other] == ["How do I deploy the search service?"]


def test_add_message_one_at_a_time_and_convenience_methods(mem: Memory, clock: Clock) -> None:
    history = VarvememChatMessageHistory(mem, "chat-1")
    history.add_message(HumanMessage(content="first"))
    clock.advance(seconds=5)
    history.add_ai_message("second")
    clock.advance(seconds=5)
    history.add_user_message("third")
    history.add_message(ChatMessage(role="critic", content="fourth"))
    got = history.messages
    assert shape(got) == [(HumanMessage, "first"), (AIMessage, "second"),
                          (HumanMessage, "third"), (ChatMessage, "fourth")]
    assert isinstance(got[3], ChatMessage) and got[3].role == "critic"
    assert len(mem.search("first second third", session="chat-1", top_k=10)) == 4


def test_every_message_comes_back_equal_and_text_parts_make_the_memory(mem: Memory) -> None:
    history = VarvememChatMessageHistory(mem, "chat-1")
    sent = [
        HumanMessage(content=[{"type": "text", "text": "What is in this picture?"},
                              {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
                              "Be brief."], id="h1", name="ann"),
        AIMessage(content="", id="a1", tool_calls=[{"name": "look", "args": {"zoom": 2},
                                                     "id": "c1"}],
                  additional_kwargs={"refusal": None}, response_metadata={"model": "m-1"}),
        ToolMessage(content="  a cat, 92%\n", tool_call_id="c1", name="look", id="t1"),
        AIMessage(content="A cat.", id="a2"),
        HumanMessage(content=""),
        ChatMessage(role="Critic Bot", content="<!-- varvemem turn at=x role=user -->"),
    ]
    history.add_messages(sent)
    assert history.messages == sent  # every field, the text as sent, empty ones too
    hits = mem.search("picture cat", session="chat-1", top_k=10)
    assert sorted(h.memory.content for h in hits) == sorted([
        "a cat, 92%", "<!-- varvemem turn at=x role=user -->", "A cat.",
        "What is in this picture?\nBe brief."])


def test_line_ends_and_sizes_come_back_as_sent(mem: Memory) -> None:
    """A CRLF text keeps the message after it; a message over update.max_content_bytes is kept
    whole in the history and remembered in parts that each fit, and its batch is searchable."""
    limit = mem.settings.update.max_content_bytes
    log = "\n".join(f"2026-12-01T10:{i % 60:02d} worker-{i} retried the upload" for i in
                     range(limit // 40))
    pasted = f"The nightly upload keeps failing, here is the log:\r\n{log}\r\nzorblat at the end"
    assert len(pasted.encode("utf-8")) > limit
    sent = [HumanMessage(content="line one\r\nline two"), AIMessage(content="got it"),
            HumanMessage(content=pasted), AIMessage(content="Retry the upload with --resume.")]
    history = VarvememChatMessageHistory(mem, "chat-1")
    history.add_messages(sent)
    assert history.messages == sent
    parts = [r for r in mem.get_all(limit=100) if "parts" in r.metadata]
    assert len(parts) >= 2 and all(len(r.content.encode("utf-8")) <= limit for r in parts)
    assert sorted(r.metadata["part"] for r in parts) == list(range(1, len(parts) + 1))
    assert [h.memory.content for h in mem.search("zorblat", top_k=1)] == \
        [next(r.content for r in parts if r.metadata["part"] == len(parts))]
    assert mem.search("retry with resume", top_k=1)[0].memory.content == \
        "Retry the upload with --resume."


def test_odd_session_ids_and_concurrent_writers(mem: Memory) -> None:
    import asyncio
    import threading

    for sid in ("user:42", "ann@example.com", "thread/1"):
        h = VarvememChatMessageHistory(mem, sid)
        h.add_user_message(f"hello from {sid}")
        assert [m.content for m in h.messages] == [f"hello from {sid}"]
    history = VarvememChatMessageHistory(mem, "busy")

    def write(i: int) -> None:  # no lock of the caller's: the history queues on the worker
        history.add_messages([HumanMessage(content=f"m{i}-{j}") for j in range(3)])

    async def run() -> None:
        await asyncio.gather(*(asyncio.to_thread(write, i) for i in range(6)))

    asyncio.run(run())
    text = mem.sessions.path("busy").read_text("utf-8")
    assert text.count("# Session busy") == 1
    assert sorted(m.content for m in history.messages) == sorted(
        f"m{i}-{j}" for i in range(6) for j in range(3))
    assert threading.active_count() < 50


def test_concurrent_aadd_messages_keep_their_call_order(mem: Memory) -> None:
    """Six ``aadd_messages`` on a new session from one event loop: one header, every message,
    in the order the calls were made (they run one after another on the memory's worker), and
    each text memory made once."""
    history = VarvememChatMessageHistory(mem, "新会话/7", user="u1")
    batches = [[HumanMessage(content=f"第{i}轮 question {i}"),
                AIMessage(content=f"answer {i}: 用 eks-stg-{i}")] for i in range(6)]

    async def run() -> list[BaseMessage]:
        await asyncio.gather(*(history.aadd_messages(b) for b in batches))
        return await history.aget_messages()

    got = asyncio.run(run())
    assert [m.content for m in got] == [m.content for b in batches for m in b]
    text = mem.sessions.path("新会话/7").read_text("utf-8")
    assert text.count("# Session ") == 1
    made = mem.get_all(types=["dialogue"], limit=100)
    assert sorted(r.content for r in made if r.scope.session == "新会话/7") == sorted(
        m.content for b in batches for m in b)


def test_clear_empties_messages_but_keeps_made_memories(mem: Memory) -> None:
    history = VarvememChatMessageHistory(mem, "chat-1")
    history.add_messages(conversation())
    path = mem.sessions.path("chat-1")
    assert path.exists()
    history.clear()
    assert history.messages == [] and not path.exists()
    # the session ended: nothing of it is left in TIER-1
    assert mem.search("deploy the billing service", session="chat-1", tier="active") == []
    kept = mem.search("deploy the billing service", session="chat-1", top_k=10)
    assert QUESTION in {h.memory.content for h in kept}
    assert {h.memory.tier.value for h in kept} == {"short_term"}
    history.add_user_message("a new start")
    assert shape(history.messages) == [(HumanMessage, "a new start")]


def test_tenants_are_isolated(mem: Memory) -> None:
    a = VarvememChatMessageHistory(mem, "chat-1", tenant="a")
    b = VarvememChatMessageHistory(mem, "chat-1", tenant="b")
    plain = VarvememChatMessageHistory(mem, "chat-1")
    a.add_user_message("tenant a speaking")
    b.add_user_message("tenant b speaking")
    assert shape(a.messages) == [(HumanMessage, "tenant a speaking")]
    assert shape(b.messages) == [(HumanMessage, "tenant b speaking")]
    assert plain.messages == []
    assert [h.memory.content for h in mem.search("speaking", session="chat-1", tenant="a")] == [
        "tenant a speaking"]
    b.clear()
    assert b.messages == [] and shape(a.messages) == [(HumanMessage, "tenant a speaking")]


def test_async_history_methods(mem: Memory) -> None:
    history = VarvememChatMessageHistory(mem, "chat-1")

    async def run() -> list[BaseMessage]:
        await history.aadd_messages([HumanMessage(content="hi"), AIMessage(content="hello")])
        return await history.aget_messages()

    assert shape(asyncio.run(run())) == [(HumanMessage, "hi"), (AIMessage, "hello")]
    asyncio.run(history.aclear())
    assert history.messages == []


def test_bad_session_id_is_refused_up_front(mem: Memory) -> None:
    with pytest.raises(ValidationError, match="session id"):
        VarvememChatMessageHistory(mem, "x\x00y")


# --- retriever ------------------------------------------------------------------------------------

@pytest.fixture
def stocked(mem: Memory) -> dict[str, str]:
    ids = {
        "staging": mem.add("The staging cluster is eks-stg-2 in eu-west-1.", type="knowledge",
                           tags=["infra"]).memory_id,
        "prod": mem.add("The production cluster is eks-prd-1 in eu-central-1.", type="knowledge",
                        tags=["infra"]).memory_id,
        "lunch": mem.add("The team lunch is on Friday at the Italian place.", type="knowledge",
                         tags=["social"]).memory_id,
        "chat": mem.add_messages([{"role": "user", "content": "Can we pause the staging deploys today?"}],
                                 session="chat-9")[0].memory_id,
    }
    return ids


def test_retriever_returns_documents_best_first_with_scores(
        mem: Memory, stocked: dict[str, str], clock: Clock) -> None:
    docs = VarvememRetriever(memory=mem).invoke("which cluster is staging?")
    assert all(isinstance(d, Document) for d in docs)
    assert docs[0].page_content == "The staging cluster is eks-stg-2 in eu-west-1."
    assert docs[0].id == docs[0].metadata["memory_id"] == stocked["staging"]
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
    meta = docs[0].metadata
    assert set(meta) == {"memory_id", "score", "scores", "channels", "type", "tier", "tags",
                         "created_at", "source"}
    assert meta["type"] == "knowledge" and "infra" in meta["tags"] and meta["source"] == "user"
    assert meta["created_at"] == clock.now.isoformat() and meta["tier"] in {
        "active", "short_term", "mid_term", "long_term"}
    assert meta["scores"]["semantic"] > 0 and meta["channels"]
    # k documents, as a vector store's retriever gives, whatever their relevance
    hits = mem.search("which cluster is staging?", top_k=5, min_relevance=0.0)
    assert [d.id for d in docs] == [h.memory.memory_id for h in hits]
    assert scores == pytest.approx([h.score for h in hits])
    assert meta["scores"] == hits[0].scores.model_dump() and meta["channels"] == hits[0].channels
    assert meta["tags"] == hits[0].memory.tags


def test_retriever_respects_top_k_and_filters(mem: Memory, stocked: dict[str, str]) -> None:
    query = "staging cluster"
    assert len(VarvememRetriever(memory=mem, top_k=2).invoke(query)) == 2
    assert len(VarvememRetriever(memory=mem, top_k=1).invoke(query)) == 1
    everything = {d.id for d in VarvememRetriever(memory=mem, top_k=10).invoke(query)}
    assert stocked["chat"] in everything
    knowledge = VarvememRetriever(memory=mem, top_k=10, types=["knowledge"]).invoke(query)
    assert knowledge and {d.metadata["type"] for d in knowledge} == {"knowledge"}
    dialogue = VarvememRetriever(memory=mem, top_k=10, types=["dialogue"]).invoke(query)
    assert [d.id for d in dialogue] == [stocked["chat"]]
    infra = VarvememRetriever(memory=mem, top_k=10, memory_tags=["infra"]).invoke(query)
    assert {d.id for d in infra} == {stocked["staging"], stocked["prod"]}
    social = VarvememRetriever(memory=mem, top_k=10, memory_tags=["social"]).invoke("cluster lunch")
    assert [d.id for d in social] == [stocked["lunch"]]
    session = VarvememRetriever(memory=mem, top_k=10, session="chat-9").invoke(query)
    assert [d.id for d in session] == [stocked["chat"]]
    assert VarvememRetriever(memory=mem, tenant="other").invoke(query) == []


def test_retriever_user_scope(mem: Memory) -> None:
    mine = mem.add("Alice prefers dark mode.", user="alice").memory_id
    mem.add("Bob prefers light mode.", user="bob")
    docs = VarvememRetriever(memory=mem, user="alice", top_k=10).invoke("which mode is preferred?")
    assert [d.id for d in docs] == [mine]


def test_retriever_sync_async_and_in_a_chain(mem: Memory, stocked: dict[str, str]) -> None:
    retriever = VarvememRetriever(memory=mem, top_k=3)
    sync = retriever.invoke("which cluster is staging?")
    async_docs = asyncio.run(retriever.ainvoke("which cluster is staging?"))
    assert [d.id for d in async_docs] == [d.id for d in sync] and len(sync) == 3
    chain = retriever | RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs))
    text = chain.invoke("which cluster is staging?")
    assert text.splitlines() == [d.page_content for d in sync]
    assert text.splitlines()[0] == "The staging cluster is eks-stg-2 in eu-west-1."
    assert asyncio.run(chain.ainvoke("which cluster is staging?")) == text


def test_retriever_validates_top_k(mem: Memory) -> None:
    with pytest.raises(ValueError):
        VarvememRetriever(memory=mem, top_k=0)


# --- the optional dependency ----------------------------------------------------------------------

def test_missing_langchain_core_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n == "langchain_core" or n.startswith("langchain_core.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    monkeypatch.delitem(sys.modules, "varvemem.integrations.langchain")
    with pytest.raises(ConfigError, match=r"pip install 'varvemem\[langchain\]'"):
        importlib.import_module("varvemem.integrations.langchain")


# --- retriever: k, filters and search_kwargs, at construction and per call ---------------------

def test_retriever_k_and_top_k_are_one_setting(mem: Memory, stocked: dict[str, str]) -> None:
    query = "staging cluster"
    retriever = VarvememRetriever(memory=mem, k=2)
    assert retriever.top_k == retriever.k == 2 and len(retriever.invoke(query)) == 2
    assert len(retriever.invoke(query, k=1)) == 1
    assert len(retriever.invoke(query, top_k=3)) == 3
    assert len(VarvememRetriever(memory=mem, k=3, top_k=3).invoke(query)) == 3
    with pytest.raises(ValueError, match="differ"):
        VarvememRetriever(memory=mem, k=2, top_k=3)
    with pytest.raises(ValueError, match="differ"):
        retriever.invoke(query, k=1, top_k=2)
    with pytest.raises(ValueError):
        retriever.invoke(query, k=0)


def test_retriever_filters_per_call_override_construction(
        mem: Memory, stocked: dict[str, str]) -> None:
    query = "staging cluster"
    retriever = VarvememRetriever(memory=mem, top_k=10, types=["knowledge"])
    assert stocked["chat"] not in {d.id for d in retriever.invoke(query)}
    assert [d.id for d in retriever.invoke(query, types=["dialogue"])] == [stocked["chat"]]
    assert [d.id for d in retriever.invoke(query, types=None, session="chat-9")] == [
        stocked["chat"]]
    assert {d.id for d in retriever.invoke(query, memory_tags=["infra"])} == {
        stocked["staging"], stocked["prod"]}
    assert retriever.invoke(query, tenant="other") == []
    assert retriever.invoke(query, user="nobody") == []
    assert len(retriever.invoke(query, agent=None, profile="default")) >= 1
    with pytest.raises(ValidationError, match="profile"):
        retriever.invoke(query, profile="no-such-profile")


def test_retriever_search_kwargs(mem: Memory, stocked: dict[str, str]) -> None:
    query = "staging cluster"
    tagged = VarvememRetriever(memory=mem, search_kwargs={"tags": ["infra"], "top_k": 10})
    assert {d.id for d in tagged.invoke(query)} == {stocked["staging"], stocked["prod"]}
    assert len(tagged.invoke(query, search_kwargs={"top_k": 1})) == 1
    # a field set by name wins over search_kwargs given beside it; the call wins over both
    both = VarvememRetriever(memory=mem, k=1, search_kwargs={"top_k": 10, "tags": ["infra"]})
    assert len(both.invoke(query)) == 1 and len(both.invoke(query, k=2)) == 2
    social = tagged.invoke("cluster lunch", search_kwargs={"tags": ["social"]})
    assert [d.id for d in social] == [stocked["lunch"]]


def test_retriever_takes_langchains_search_kwargs(mem: Memory, stocked: dict[str, str]) -> None:
    query = "staging cluster"
    assert len(VarvememRetriever(memory=mem, search_kwargs={"k": 1}).invoke(query)) == 1
    retriever = VarvememRetriever(memory=mem, k=5)
    assert len(retriever.invoke(query, search_kwargs={"k": 1})) == 1
    with pytest.raises(ValueError, match="one argument"):
        VarvememRetriever(memory=mem, search_kwargs={"k": 1, "top_k": 2})
    with pytest.raises(ValidationError, match="min_relevance"):
        retriever.invoke(query, search_kwargs={"score_threshold": 2})


def test_retriever_refuses_unknown_fields_and_arguments(mem: Memory) -> None:
    with pytest.raises(ValueError, match="extra"):
        VarvememRetriever(memory=mem, nonsense=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="no argument"):
        VarvememRetriever(memory=mem, search_kwargs={"topk": 3})
    retriever = VarvememRetriever(memory=mem)
    with pytest.raises(ValueError, match="unknown retriever argument"):
        retriever.invoke("anything", topk=3)
    with pytest.raises(ValueError, match="no argument"):
        retriever.invoke("anything", search_kwargs={"query": "x"})
    with pytest.raises(ValueError):
        VarvememRetriever(memory="not a memory")


def test_retriever_over_async_memory(mem: Memory, stocked: dict[str, str]) -> None:
    amem = AsyncMemory(mem)
    retriever = VarvememRetriever(memory=amem, k=2)
    sync = retriever.invoke("which cluster is staging?")

    async def run() -> list[list[Document]]:
        return list(await asyncio.gather(
            retriever.ainvoke("which cluster is staging?"),
            retriever.ainvoke("which cluster is staging?", k=1),
            VarvememRetriever(memory=mem, k=2).ainvoke("which cluster is staging?")))

    two, one, plain = asyncio.run(run())
    assert [d.id for d in two] == [d.id for d in sync] == [d.id for d in plain]
    assert [d.id for d in one] == [sync[0].id] and sync[0].id == stocked["staging"]
