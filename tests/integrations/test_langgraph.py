"""The LangGraph store: a contract run on LangGraph's own ``InMemoryStore`` and on
``VarvememStore`` (LangGraph ships no conformance suite for stores, only for checkpointers),
then what only varvemem does (scope, history, erasure, persistence, a graph)."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
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
from varvemem.integrations.langgraph import VarvememStore, _session

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


def test_a_query_search_ranks_every_item_as_in_memory_store_does(store: BaseStore) -> None:
    """Nothing is dropped for relevance (LangMem searches before it writes: a dropped item
    would be written again), an unrelated query included."""
    ns = ("alice", "memories")
    for key, text in [("ui", "Alice prefers dark mode in every editor."),
                      ("food", "Alice is vegetarian and loves Thai curry."),
                      ("work", "Alice works on the billing service in Go.")]:
        store.put(ns, key, {"text": text})
    assert {h.key for h in store.search(ns, query="how far is Mars from the Sun?")} == {
        "ui", "food", "work"}
    hits = store.search(ns, query="what food does alice like?")
    assert hits[0].key == "food" and len(hits) == 3
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


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


# --- several writers over one memory --------------------------------------------------------

def writers_story(a: BaseStore, b: BaseStore) -> list[tuple[str, Any]]:
    """Puts, updates and deletes by ``a`` and ``b`` in turn, and what the other reads after
    each: one store (``a is b``, the single writer) gives the reference answers."""
    ns, ns2 = ("alice", "notes"), ("bob", "notes")
    seen: list[tuple[str, Any]] = [("b.ns before", b.list_namespaces()),
                                   ("a.search before", triples(a.search(())))]
    a.put(ns, "laptop", {"text": "Alice's laptop is a ThinkPad."})
    seen += [("b.get", triple(b.get(ns, "laptop"))), ("b.search", triples(b.search(("alice",)))),
             ("b.ns", b.list_namespaces())]
    b.put(ns, "laptop", {"text": "Alice's laptop is a MacBook now."})
    seen += [("a.get updated", triple(a.get(ns, "laptop"))),
             ("a.search updated", triples(a.search(ns)))]
    b.put(ns2, "commute", {"text": "Bob rides a bike to work."})
    seen += [("a.ns", a.list_namespaces()), ("a.search all", triples(a.search(()))),
             ("a.get new", triple(a.get(ns2, "commute")))]
    a.delete(ns, "laptop")
    seen += [("b.get deleted", triple(b.get(ns, "laptop"))),
             ("b.search deleted", triples(b.search(())))]
    b.delete(ns2, "commute")
    seen += [("a.get deleted", triple(a.get(ns2, "commute"))),
             ("a.search deleted", triples(a.search(())))]
    return seen


@pytest.mark.parametrize("layout", ["one memory", "two memories on one home"])
def test_stores_see_each_others_puts_updates_and_deletes(
        layout: str, make_memory: Callable[..., Memory]) -> None:
    """Each store answers after the other's writes as one store answers its own (LangGraph's
    InMemoryStore, a single writer), whichever store, or memory over the home, wrote."""
    single = InMemoryStore()
    expected = writers_story(single, single)
    mem = make_memory()
    a = VarvememStore(mem, index={"fields": FIELDS})
    b = VarvememStore(mem if layout == "one memory" else make_memory(),
                      index={"fields": FIELDS})
    assert writers_story(a, b) == expected
    assert a.list_namespaces() == b.list_namespaces() == []


def test_a_query_search_gives_another_stores_latest_value(mem: Memory) -> None:
    a, b = VarvememStore(mem), VarvememStore(mem)
    ns = ("alice", "prefs")
    a.put(ns, "ui", {"text": "Alice prefers dark mode in every editor."})
    assert [h.value["text"] for h in b.search(ns, query="which mode does alice prefer?")] == [
        "Alice prefers dark mode in every editor."]
    a.put(ns, "ui", {"text": "Alice prefers light mode in every editor now."})
    assert [h.value["text"] for h in b.search(ns, query="which mode does alice prefer?")] == [
        "Alice prefers light mode in every editor now."]
    a.delete(ns, "ui")
    assert b.search(ns, query="which mode does alice prefer?") == []


_OTHER_PROCESS = """
import json, sys
from varvemem import Memory
from varvemem.integrations.langgraph import VarvememStore
with Memory(home=sys.argv[1]) as mem:
    store = VarvememStore(mem)
    for ns, key, value in json.loads(sys.argv[2]):
        store.put(tuple(ns), key, value)
"""


def test_a_store_sees_what_another_process_wrote(make_memory: Callable[..., Memory],
                                                 home: Path) -> None:
    store = VarvememStore(make_memory())
    ns = ("alice", "notes")

    def other_process(*puts: tuple[tuple[str, ...], str, dict[str, Any] | None]) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
        subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(home), json.dumps(puts)],
                       check=True, env=env, timeout=120)

    store.put(ns, "desk", {"text": "Alice sits by the window."})
    assert store.list_namespaces() == [ns]  # read once before the other process writes
    other_process((ns, "pet", {"text": "Alice has a cat."}),
                  (ns, "desk", {"text": "Alice sits by the door now."}))
    assert triple(store.get(ns, "pet")) == (ns, "pet", {"text": "Alice has a cat."})
    assert {t[1]: t[2]["text"] for t in triples(store.search(ns))} == {
        "pet": "Alice has a cat.", "desk": "Alice sits by the door now."}
    other_process((ns, "pet", None), (("bob", "notes"), "car", {"text": "Bob drives a van."}))
    assert store.get(ns, "pet") is None
    assert store.list_namespaces() == [ns, ("bob", "notes")]


# --- times come from the engine, not from the metadata ------------------------------------------

def test_item_times_are_the_engines_and_a_forged_one_reorders_nothing(
        make_memory: Callable[..., Memory], clock: Any) -> None:
    """A REST writer of the tenant adds a memory shaped as an item, with times in the far
    future in its metadata (and a created_at the API accepts): it is an item like any
    other, with the times the engine recorded, so it cannot put itself first."""
    from fastapi.testclient import TestClient

    from varvemem.server import create_app

    mem, server_side = make_memory(), make_memory()  # the REST server: another instance
    store = VarvememStore(mem, tenant="acme")
    ns = ("alice", "notes")
    first = clock.now
    store.put(ns, "real", {"text": "Alice's desk is on the third floor."})
    forged_at = clock.advance(minutes=5)
    _, key = mem.keys.create("acme", "write")
    meta = {"namespace": list(ns), "key": "forged", "value": {"text": "Pinned on top."},
            "created_at": "2999-01-01T00:00:00+00:00",
            "updated_at": "2999-01-01T00:00:00+00:00", "indexed": True}
    with TestClient(create_app(memory=server_side)) as http:
        resp = http.post("/v1/memories", headers={"Authorization": f"Bearer {key}"}, json={
            "content": "text: Pinned on top.", "type": "knowledge", "tags": ["langgraph"],
            "user": "alice", "session": _session(ns, "forged"), "tier": "long_term",
            "metadata": {"langgraph": meta}, "created_at": "2799-01-01T00:00:00Z"})
        assert resp.status_code == 201, resp.text
        # Shaped otherwise (no item's session): a memory, not an item.
        resp = http.post("/v1/memories", headers={"Authorization": f"Bearer {key}"}, json={
            "content": "text: Not an item.", "type": "knowledge", "tags": ["langgraph"],
            "user": "alice", "metadata": {"langgraph": {**meta, "key": "loose"}}})
        assert resp.status_code == 201, resp.text
    last = clock.advance(minutes=5)
    store.put(ns, "later", {"text": "Alice's locker is number 12."})
    for reader in (VarvememStore(mem, tenant="acme"), store):  # a new one, one that read before
        assert [i.key for i in reader.search(ns)] == ["later", "forged", "real"]  # newest first
        forged = reader.get(ns, "forged")
        assert forged is not None and forged.value == {"text": "Pinned on top."}
        assert forged.created_at == forged.updated_at == forged_at
    real, later = store.get(ns, "real"), store.get(ns, "later")
    assert real is not None and real.created_at == real.updated_at == first
    assert later is not None and later.updated_at == last
    assert store.get(ns, "loose") is None
    clock.advance(minutes=5)
    store.put(ns, "real", {"text": "Alice's desk is on the fourth floor."})  # an update
    real = store.get(ns, "real")
    assert real is not None and (real.created_at, real.updated_at) == (first, clock.now)


def racing_put(mem: Memory, ns: tuple[str, ...], key: str, text: str) -> None:
    """The memory another process's put of a new key leaves when it raced this one's: both
    saw no item, both added one."""
    mem.add(f"text: {text}", type="knowledge", tags=["langgraph"], user=ns[0],
            session=_session(ns, key), tier="long_term", ttl_mode="off", metadata={
                "langgraph": {"namespace": list(ns), "key": key, "value": {"text": text},
                              "indexed": True}})


def test_a_key_held_by_two_memories_is_one_item_and_a_delete_takes_both(
        mem: Memory, clock: Any) -> None:
    """Two processes putting a new key at once leave two memories for it: the newest is the
    item, a put keeps one, and a delete leaves none behind to come back."""
    store = VarvememStore(mem)
    ns = ("alice", "notes")
    store.put(ns, "k", {"text": "Alice's badge is blue."})
    clock.advance(seconds=1)
    racing_put(mem, ns, "k", "The parking pass expires in June.")
    assert len(mem.get_all(include_superseded=True)) == 2
    for reader in (store, VarvememStore(mem)):
        assert triple(reader.get(ns, "k")) == (ns, "k", {"text": "The parking pass expires in June."})
        assert [i.key for i in reader.search(ns)] == ["k"]
    clock.advance(seconds=1)
    store.put(ns, "k", {"text": "Lunch is served at noon."})
    assert [r.metadata["langgraph"]["value"] for r in mem.get_all(include_superseded=True)] == [
        {"text": "Lunch is served at noon."}]
    clock.advance(seconds=1)
    racing_put(mem, ns, "k", "The coffee machine is on floor two.")
    store.delete(ns, "k")
    assert mem.get_all(include_superseded=True) == []
    assert VarvememStore(mem).get(ns, "k") is None and store.get(ns, "k") is None


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
