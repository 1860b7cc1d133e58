"""LangMem's memory tools (the real package, no model needed: the tools are called as an agent
would call them) over a ``VarvememStore``. LangMem's default namespace
``("memories", "{langgraph_user_id}")`` has its user second: ``user_at=1`` (docs/api.md)."""

from __future__ import annotations

import os
import warnings
from typing import Any

import pytest

try:
    with warnings.catch_warnings():  # trustcall (LangMem's) imports a name LangGraph 1 moved
        warnings.simplefilter("ignore", DeprecationWarning)
        from langmem import create_manage_memory_tool, create_search_memory_tool
except ImportError as exc:
    _reason = f"needs langmem (the [dev] extra installs it): {exc}"
    if os.environ.get("CI"):
        pytest.fail(_reason, pytrace=False)
    pytest.skip(_reason, allow_module_level=True)

from varvemem import Memory
from varvemem.integrations.langgraph import VarvememStore

NAMESPACE = ("memories", "{langgraph_user_id}")  # LangMem's own examples


def config(user: str) -> dict[str, Any]:
    return {"configurable": {"langgraph_user_id": user}}


def test_langmem_users_are_varvemem_users_with_user_at_1(mem: Memory) -> None:
    store = VarvememStore(mem, user_at=1)
    manage = create_manage_memory_tool(namespace=NAMESPACE, store=store)
    search = create_search_memory_tool(namespace=NAMESPACE, store=store,
                                       response_format="content_and_artifact")
    said = {"alice": "Alice prefers dark mode in every editor.",
            "bob": "Bob is vegetarian and loves Thai curry."}
    for user, fact in said.items():
        assert manage.invoke({"content": fact}, config=config(user)).startswith("created memory")
    assert {r.scope.user: r.metadata["langgraph"]["value"]["content"]
            for r in mem.get_all()} == said
    hits = search.invoke({"type": "tool_call", "id": "1", "name": "search_memory",
                          "args": {"query": "what food does bob like?"}}, config=config("bob"))
    assert [h.value["content"] for h in hits.artifact] == [said["bob"]]

    key = hits.artifact[0].key  # an update through the tool: the same memory
    manage.invoke({"content": "Bob eats fish now.", "action": "update", "id": key},
                  config=config("bob"))
    assert [r.metadata["langgraph"]["value"]["content"] for r in mem.get_all(user="bob")] == [
        "Bob eats fish now."]
    mem.delete_user("alice")  # erasing a LangMem user erases their memories, only theirs
    assert {r.scope.user for r in mem.get_all()} == {"bob"}


def test_with_the_default_user_at_every_langmem_user_is_user_memories(mem: Memory) -> None:
    """What the docs warn of: the first element, ``memories``, taken for the user."""
    manage = create_manage_memory_tool(namespace=NAMESPACE, store=VarvememStore(mem))
    for user in ("alice", "bob"):
        manage.invoke({"content": f"{user} likes tea."}, config=config(user))
    assert {r.scope.user for r in mem.get_all()} == {"memories"}
