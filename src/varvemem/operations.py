"""Every operation of the library API in one table: whether it only reads, and the role an
API key needs to call it through the service.

Read from here: which calls :class:`~varvemem.AsyncMemory` runs beside each other (reads) and
which alone (writes), the role each REST route and MCP tool asks of a key, and the MCP tool
that calls each operation. A namespace's operations are named ``family.method``
(``qa.save``); ``tests/unit/test_aio.py`` checks that every public method has a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Role = Literal["read", "write", "admin"]


@dataclass(frozen=True)
class Operation:
    """``name``: the method (``search``, ``qa.save``). ``reads``: it changes nothing, so it
    may run beside other reads. ``role``: what a key must allow (admin > write > read;
    default: read for a read, write otherwise). ``tool``: the MCP tool that calls it."""

    name: str
    reads: bool
    role: Role | None = None
    tool: str | None = None

    @property
    def needs(self) -> Role:
        return self.role or ("read" if self.reads else "write")


def _reads(*names: str, role: Role | None = None) -> list[Operation]:
    return [Operation(n, True, role) for n in names]


def _writes(*names: str, role: Role | None = None) -> list[Operation]:
    return [Operation(n, False, role) for n in names]


OPERATIONS: dict[str, Operation] = {op.name: op for op in [
    # Memory
    Operation("search", True, tool="search_memories"),
    Operation("context", True, tool="get_context"),
    *_reads("embedder", "get", "resolve_id", "history", "why_not", "context_budget",
            "session_window", "stats", "index_stats", "check_store", "load_all_qa",
            "search_qa", "get_all", "changes", "due_jobs", "schedule"),
    *_reads("overview", "tier_counts", role="admin"),
    Operation("add", False, tool="add_memory"),
    Operation("feedback", False, tool="feedback"),
    Operation("delete", False, tool="delete_memory"),
    # ``ask`` may write (a new pair, the session's feedback and L1 turns, a retired pair):
    # only Memory knows, during the call, whether it did, so it is a write.
    Operation("ask", False, tool="ask"),
    *_writes("add_many", "add_messages", "add_tool_call", "add_event", "ingest",
             "ingest_text", "update", "save_qa", "close_session", "restore"),
    *_writes("consolidate", "delete_user", "reindex", role="admin"),
    # mem.qa; export writes files, and its callers expect the pairs of one moment.
    *_reads("qa.all", "qa.search", "qa.report", "qa.match"),
    *_writes("qa.save", "qa.update", "qa.feedback", "qa.export", "qa.import_folder"),
    # mem.inbox
    *_reads("inbox.counts", "inbox.events", role="admin"),
    *_writes("inbox.receive", "inbox.process"),
    *_writes("inbox.retry", role="admin"),
    # mem.keys; a login's look-up notes its use (seen_at): every login call writes.
    *_reads("keys.list", "keys.authenticate"),
    *_writes("keys.create", "keys.revoke", "keys.issue_link", "keys.redeem_link",
             "keys.open_session", "keys.session", "keys.close_session"),
    # mem.sessions
    *_reads("sessions.path", "sessions.sessions", "sessions.load_session",
            "sessions.summarise"),
    *_writes("sessions.save", "sessions.delete_session", "sessions.erase_user",
             "sessions.compress_history"),
]}

TOOLS: dict[str, Operation] = {op.tool: op for op in OPERATIONS.values() if op.tool}
"""The MCP tools, each with the operation it calls."""


def of(family: str, reads: bool) -> frozenset[str]:
    """The methods of ``family`` (``""``: :class:`~varvemem.Memory` itself; ``qa``...) that
    read (or write)."""
    prefix = f"{family}." if family else ""
    return frozenset(name.removeprefix(prefix) for name, op in OPERATIONS.items()
                     if op.reads == reads and (name.startswith(prefix) if family
                                               else "." not in name))
