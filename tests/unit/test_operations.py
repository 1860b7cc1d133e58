"""The operations table names real methods, and the service asks of each caller what the
table says its operation needs."""

from __future__ import annotations

import inspect

from varvemem._namespaces import QA, Inbox, shortcut
from varvemem.api import Memory
from varvemem.history import SessionHistory
from varvemem.keys import KeyRing
from varvemem.operations import OPERATIONS, TOOLS, of

FAMILIES: dict[str, type] = {"": Memory, "qa": QA, "inbox": Inbox, "keys": KeyRing,
                             "sessions": SessionHistory}


def test_every_row_is_a_public_method_and_every_public_method_a_row() -> None:
    for family, cls in FAMILIES.items():
        public = {n for n in dir(cls) if not n.startswith("_")
                  and (callable(inspect.getattr_static(cls, n))
                       or isinstance(inspect.getattr_static(cls, n), shortcut))
                  and not (cls is Memory and n in ("qa", "inbox", "keys", "sessions", "close"))}
        assert of(family, True) | of(family, False) == public, family
        assert not of(family, True) & of(family, False)


def test_roles_and_tools() -> None:
    from varvemem.mcp_tools import TOOL_ROLES  # the mcp extra

    assert OPERATIONS["search"].needs == "read" and OPERATIONS["ask"].needs == "write"
    assert OPERATIONS["consolidate"].needs == "admin"
    assert OPERATIONS["tier_counts"].reads and OPERATIONS["tier_counts"].needs == "admin"
    assert TOOL_ROLES == {"add_memory": "write", "search_memories": "read",
                          "get_context": "read", "ask": "write", "feedback": "write",
                          "delete_memory": "write"}
    assert {t: op.name for t, op in TOOLS.items()}["get_context"] == "context"


def test_every_route_names_an_operation() -> None:
    from varvemem.server import routes

    source = inspect.getsource(routes)
    named = {part.split('"')[1] for part in source.split("need(")[1:]
             if part.startswith('"')}
    assert named and named <= set(OPERATIONS)
