"""The LangGraph store: a contract run on LangGraph's own ``InMemoryStore`` and on
``VarvememStore`` (LangGraph ships no conformance suite for stores, only for checkpointers),
then what only varvemem does (scope, history, erasure, persistence, a graph)."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypedDict

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from varvemem import AsyncMemory, ConfigError, Memory, ValidationError
from varvemem.embeddings.usem3 import USEEmbedder
from varvemem.integrations.langgraph import VarvememStore

FIELDS = ["text"]


@pytest.fixture(params=["in_memory", "varvemem", "varvemem_async"])
def store(request: pytest.FixtureRequest, make_memory: Callable[..., Memory],
          embedder: USEEmbedder) -> Iterator[BaseStore]:
    """The reference and ours, both reading the value's ``text`` for search (the reference
    embeds it with varvemem's embedder, so both rank by the same model)."""
    if request.param == "in_memory":
        yield InMemoryStore(index={"dims": embedder.dim, "fields": FIELDS,
                                   "embed": lambda texts: embedder.embed_documents(texts).tolist()})
    elif request.param == "varvemem":
        yield VarvememStore(make_memory(), index={"fields": FIELDS})
    else:  # over an AsyncMemory: the same store, the same worker
        yield VarvememStore(AsyncMemory(make_memory()), index={"fields": FIELDS})


def triple(item: Item | None) -> tuple[tuple[str, ...], str, dict[str, Any]] | None:
    return None if item is None else (item.namespace, item.key, item.value)


def triples(items: list[SearchItem]) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    return sorted(t for t in map(triple, items) if t is not None)


# --- the contract: the same cases on both stores ---------------------------------------------

def test_put_get_round_trip(store: BaseStore) -> None:
    value = {"text": "Alice prefers dark mode.", "n": 3, "nested": {"a": [1, "two", None]},
             "ok": True}
    assert store.get(("alice", "prefs"), "ui") is None
    store.put(("alice", "prefs"), "ui", value)
    item = store.get(("alice", "prefs"), "ui")
    assert isinstance(item, Item) and triple(item) == (("alice", "prefs"), "ui", value)
    assert item.created_at.tzinfo is not None and item.updated_at >= item.created_at
    assert store.get(("alice",), "ui") is None and store.get(("alice", "prefs"), "other") is None


def test_a_put_of_the_same_key_replaces(store: BaseStore) -> None:
    ns = ("alice", "prefs")
    store.put(ns, "ui", {"text": "Alice prefers dark mode."})
    store.put(ns, "ui", {"text": "Alice prefers light mode now."})
    assert triple(store.get(ns, "ui")) == (ns, "ui", {"text": "Alice prefers light mode now."})
    assert triples(store.search(ns)) == [(ns, "ui", {"text": "Alice prefers light mode now."})]
    store.put(("bob", "prefs"), "ui", {"text": "Bob prefers light mode."})
    assert len(store.search(())) == 2


def test_delete_and_put_none(store: BaseStore) -> None:
    ns = ("alice", "notes")
    store.put(ns, "a", {"text": "first"})
    store.put(ns, "b", {"text": "second"})
    store.delete(ns, "a")
    store.batch([PutOp(ns, "b", None)])
    assert store.get(ns, "a") is None and store.get(ns, "b") is None
    assert store.search(ns) == []
    # InMemoryStore goes on listing a namespace whose items are all gone (its dict stays);
    # ours lists the namespaces that hold items, as LangGraph's PostgreSQL store does.
    assert store.list_namespaces() == ([ns] if isinstance(store, InMemoryStore) else [])
    store.delete(ns, "never-there")  # no error
    store.put(ns, "a", {"text": "again"})
    assert triple(store.get(ns, "a")) == (ns, "a", {"text": "again"})


def test_search_filter_limit_and_offset(store: BaseStore) -> None:
    for i in range(7):
        store.put(("docs", "team-a" if i % 2 else "team-b"), f"d{i}",
                  {"text": f"Runbook page {i}", "n": i, "kind": "runbook" if i < 5 else "faq",
                   "meta": {"owner": "ops" if i % 3 else "dev"}})
    every = triples(store.search(("docs",), limit=100))
    assert len(every) == 7
    assert {t[1] for t in triples(store.search(("docs", "team-a")))} == {"d1", "d3", "d5"}
    assert {t[1] for t in triples(store.search(("docs",), filter={"kind": "faq"}))} == {
        "d5", "d6"}
    assert {t[1] for t in triples(store.search(("docs",), filter={"n": {"$gte": 5}}))} == {
        "d5", "d6"}
    assert {t[1] for t in triples(store.search(("docs",), filter={"n": {"$gt": 1, "$lt": 4}}))
            } == {"d2", "d3"}
    assert {t[1] for t in triples(store.search(("docs",), filter={"n": {"$ne": 0},
                                                                  "meta": {"owner": "dev"}}))
            } == {"d3", "d6"}
    assert store.search(("docs",), filter={"kind": "nothing"}) == []
    pages = [store.search(("docs",), limit=3, offset=o) for o in (0, 3, 6)]
    assert [len(p) for p in pages] == [3, 3, 1]
    assert sorted(t for p in pages for t in triples(p)) == every  # pages do not overlap
    assert store.search(("docs",), limit=3, offset=7) == []
    assert store.search(("nothing",)) == []


def test_list_namespaces(store: BaseStore) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("b", "x"), ("b", "y", "c")]:
        store.put(ns, "k", {"text": "t"})
    assert store.list_namespaces() == sorted(
        [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("b", "x"), ("b", "y", "c")])
    assert store.list_namespaces(prefix=("a",)) == [("a", "b", "c"), ("a", "b", "d"), ("a", "x")]
    assert store.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("b", "y", "c")]
    assert store.list_namespaces(prefix=("*", "x")) == [("a", "x"), ("b", "x")]
    assert store.list_namespaces(prefix=("a",), suffix=("d",)) == [("a", "b", "d")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("b",)]
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "x"), ("b", "x"),
                                                  ("b", "y")]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d"), ("a", "x")]
    ops = [ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("b",)),), limit=1)]
    assert store.batch(ops) == [[("b", "x")]]


def test_query_search_finds_the_relevant_item_first(store: BaseStore) -> None:
    ns = ("alice", "memories")
    store.put(ns, "ui", {"text": "Alice prefers dark mode in every editor."})
    store.put(ns, "food", {"text": "Alice is vegetarian and loves Thai curry."})
    store.put(ns, "work", {"text": "Alice works on the billing service in Go."})
    store.put(("bob", "memories"), "food", {"text": "Bob eats anything, mostly pizza."})
    hits = store.search(ns, query="what food does alice like?")
    assert hits and hits[0].key == "food" and hits[0].namespace == ns
    assert all(h.namespace == ns for h in hits) and isinstance(hits[0].score, float)
    top = store.search(("alice",), query="which programming language for billing?", limit=1)
    assert [h.key for h in top] == ["work"]
    filtered = store.search(ns, query="what food does alice like?", filter={"text": {
        "$ne": "Alice is vegetarian and loves Thai curry."}})
    assert "food" not in {h.key for h in filtered}


def test_an_item_put_with_index_false_is_kept_but_not_searched(store: BaseStore) -> None:
    ns = ("alice", "memories")
    store.put(ns, "secret", {"text": "The vault code is kept in the safe."}, index=False)
    store.put(ns, "other", {"text": "Alice likes hiking in the alps."})
    assert triple(store.get(ns, "secret")) == (ns, "secret",
                                               {"text": "The vault code is kept in the safe."})
    hits = store.search(ns, query="where is the vault code?")
    # InMemoryStore pads a short result with unindexed items, unscored; ours leaves them out
    assert all(h.score is None for h in hits if h.key == "secret")
    if isinstance(store, VarvememStore):
        assert "secret" not in {h.key for h in hits}
    assert "secret" in {h.key for h in store.search(ns)}


def test_a_batch_reads_before_its_puts(store: BaseStore) -> None:
    ns = ("alice", "notes")
    store.put(ns, "a", {"text": "old"})
    results = store.batch([PutOp(ns, "a", {"text": "new"}), GetOp(ns, "a"),
                           PutOp(ns, "b", {"text": "b1"}), PutOp(ns, "b", {"text": "b2"}),
                           SearchOp(ns), GetOp(ns, "b")])
    assert results[0] is None and results[2] is None and results[3] is None
    assert triple(results[1]) == (ns, "a", {"text": "old"})  # type: ignore[arg-type]
    assert [t[1] for t in triples(results[4])] == ["a"]  # type: ignore[arg-type]
    assert results[5] is None
    assert triple(store.get(ns, "a")) == (ns, "a", {"text": "new"})
    assert triple(store.get(ns, "b")) == (ns, "b", {"text": "b2"})


def test_async_methods(store: BaseStore) -> None:
    ns = ("alice", "notes")

    async def run() -> None:
        await asyncio.gather(*[store.aput(ns, f"k{i}", {"text": f"note {i}", "i": i})
                               for i in range(5)])
        assert triple(await store.aget(ns, "k3")) == (ns, "k3", {"text": "note 3", "i": 3})
        assert len(await store.asearch(ns, limit=10)) == 5
        assert await store.alist_namespaces() == [ns]
        await store.adelete(ns, "k3")
        got = await store.abatch([GetOp(ns, "k3"), GetOp(ns, "k4")])
        assert got[0] is None and triple(got[1]) == (ns, "k4", {"text": "note 4", "i": 4})  # type: ignore[arg-type]

    asyncio.run(run())


def test_bad_namespaces_are_refused(store: BaseStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put((), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.put(("a", ""), "k", {"text": "x"})


# --- what only varvemem does ------------------------------------------------------------------

def test_items_are_scoped_memories_with_history(mem: Memory) -> None:
    store = VarvememStore(mem, tenant="acme", agent="planner", tags=["prefs"])
    store.put(("alice", "prefs"), "ui", {"text": "Alice prefers dark mode."})
    store.put(("alice", "prefs"), "ui", {"text": "Alice prefers light mode."})
    [rec] = mem.get_all(tenant="acme")
    assert (rec.scope.tenant, rec.scope.user, rec.scope.agent) == ("acme", "alice", "planner")
    assert rec.memory_type.value == "knowledge" and rec.tier.value == "long_term"
    assert set(rec.tags) >= {"langgraph", "prefs"} and rec.content == "text: Alice prefers light mode."
    meta = rec.metadata["langgraph"]
    assert meta["namespace"] == ["alice", "prefs"] and meta["key"] == "ui"
    assert meta["value"] == {"text": "Alice prefers light mode."}
    actions = [h.action for h in mem.history(rec.memory_id, tenant="acme")]
    assert actions[0] == "create" and "update" in actions
    hits = mem.search("which mode does alice prefer?", tenant="acme", user="alice")
    assert [h.memory.memory_id for h in hits] == [rec.memory_id]
    store.delete(("alice", "prefs"), "ui")
    assert mem.get_all(tenant="acme") == []
    assert [h.action for h in mem.history(rec.memory_id, tenant="acme")][-1] == "delete"
    assert mem.get_all() == []  # nothing in the default tenant


def test_the_whole_value_is_searched_by_default_and_user_at(mem: Memory) -> None:
    store = VarvememStore(mem, user_at=1)
    store.put(("memories", "alice"), "m1", {"topic": "infra", "fact": "staging is eks-stg-2"})
    [rec] = mem.get_all()
    assert rec.scope.user == "alice" and rec.content == "topic: infra\nfact: staging is eks-stg-2"
    assert [h.key for h in store.search(("memories", "alice"), query="staging cluster")] == ["m1"]
    store.put(("memories",), "m2", {"fact": "shared"})  # too short for a user
    assert {r.scope.user for r in mem.get_all()} == {"alice", None}


def test_items_outlive_the_store_and_the_process(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory()
    VarvememStore(mem).put(("alice", "prefs"), "ui", {"text": "dark mode"})
    mem.close()
    again = VarvememStore(make_memory())
    assert triple(again.get(("alice", "prefs"), "ui")) == (("alice", "prefs"), "ui",
                                                           {"text": "dark mode"})
    again.put(("alice", "prefs"), "ui", {"text": "light mode"})  # the same memory, updated
    assert len(again.search(("alice",))) == 1


def test_delete_user_erases_their_items(mem: Memory) -> None:
    store = VarvememStore(mem)
    store.put(("alice", "prefs"), "ui", {"text": "dark mode"})
    store.put(("bob", "prefs"), "ui", {"text": "light mode"})
    mem.delete_user("alice")
    assert store.get(("alice", "prefs"), "ui") is None
    assert triple(store.get(("bob", "prefs"), "ui")) is not None


def test_similar_values_of_different_keys_stay_apart(mem: Memory) -> None:
    store = VarvememStore(mem)
    ns = ("alice", "prefs")
    store.put(ns, "a", {"text": "Alice's favourite food is pizza."})
    store.put(ns, "b", {"text": "Alice's favourite food is pizza."})  # not a duplicate
    store.put(ns, "c", {"text": "Alice's favourite food is sushi."})  # not an update of a
    assert {t[1]: t[2]["text"] for t in triples(store.search(ns))} == {
        "a": "Alice's favourite food is pizza.", "b": "Alice's favourite food is pizza.",
        "c": "Alice's favourite food is sushi."}
    assert len(mem.get_all(include_superseded=True)) == 3
    assert {h.key for h in store.search(ns, query="favourite food", limit=5)} >= {"c"}


def test_options_are_checked(mem: Memory) -> None:
    with pytest.raises(ValidationError, match="embed"):
        VarvememStore(mem, index={"dims": 3, "embed": lambda t: [[0.0] * 3 for _ in t]})
    with pytest.raises(ValidationError, match="user_at"):
        VarvememStore(mem, user_at=-1)
    with pytest.raises(ValidationError):
        VarvememStore("not a memory")  # type: ignore[arg-type]
    store = VarvememStore(mem)
    with pytest.raises(ValidationError, match="JSON"):
        store.put(("a",), "k", {"when": object()})
    with pytest.raises(ValueError, match="operator"):
        store.put(("a",), "k", {"n": 1}) or store.search(("a",), filter={"n": {"$in": [1]}})


def test_over_an_async_memory_in_a_graph(mem: Memory) -> None:
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        user: str
        said: str
        recalled: list[str]

    def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
        store.put((state["user"], "memories"), "last", {"text": state["said"]})
        return {}

    async def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
        hits = await store.asearch((state["user"], "memories"), query=state["said"])
        return {"recalled": [h.value["text"] for h in hits]}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=VarvememStore(AsyncMemory(mem)))
    out = asyncio.run(graph.ainvoke({"user": "alice", "said": "I moved to Lisbon last spring.",
                                     "recalled": []}))
    assert out["recalled"] == ["I moved to Lisbon last spring."]
    [rec] = mem.get_all()
    assert rec.scope.user == "alice"


def test_missing_langgraph_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n == "langgraph" or n.startswith("langgraph.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "langgraph", None)
    monkeypatch.delitem(sys.modules, "varvemem.integrations.langgraph")
    with pytest.raises(ConfigError, match=r"pip install 'varvemem\[langgraph\]'"):
        importlib.import_module("varvemem.integrations.langgraph")


def test_key_value_store_values_and_refusals(make_memory: Callable[..., Memory]) -> None:
    """The LangChain key-value adapter: its items are kept but not searched, another
    namespace's keys are not listed, and a value it cannot keep is refused in one line."""
    from langchain_core.documents import Document

    from varvemem.integrations.langgraph import VarvememKeyValueStore

    mem = make_memory()
    store = VarvememStore(mem)
    kv = VarvememKeyValueStore(store, ("docs",))
    other = VarvememKeyValueStore(store, ("cache",))
    doc = Document(page_content="回滚步骤: kubectl rollout undo", metadata={"page": 3})
    kv.mset([("runbook#1", doc), ("raw", b"\x01\x02")])
    other.mset([("runbook#2", {"vector": [0.5, 0.25]})])
    assert kv.mget(["runbook#1", "raw", "nope"]) == [doc, b"\x01\x02", None]
    assert sorted(kv.yield_keys()) == ["raw", "runbook#1"]
    assert list(other.yield_keys(prefix="run")) == ["runbook#2"]
    assert mem.search("kubectl rollout undo 回滚") == []  # index=False: kept, not searched
    with pytest.raises(ValidationError, match="JSON, bytes or a LangChain"):
        kv.mset([("bad", object())])
    with pytest.raises(ValidationError, match="non-empty text"):
        kv.mget([""])
    kv.mdelete(["raw", "never-there"])
    assert kv.mget(["raw"]) == [None]
