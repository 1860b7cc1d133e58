"""The write transaction both SQL stores share (:class:`SqlTx`); the dialect's subclass writes
the memories table's own indexes.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where vectors are handled: reads of records need none
    import numpy as np

from ..errors import StorageError
from ..model import HistoryEntry, MemoryRecord
from . import _columns
from ._columns import FTS_SOURCES, VECTOR_ATTRS, columns_for, vector_bytes
from ._sql_dialect import META_UPSERT, Dialect
from .base import StoreTx, TxChanges


class SqlTx(StoreTx):
    """One write transaction on one connection; the dialect's subclass writes the memories
    table's own indexes (full text, tags)."""

    def __init__(self, conn: Any, dialect: Dialect, seq: int, vector_dtype: str = "f16") -> None:
        self._c = conn
        self._d = dialect
        self._seq = seq
        self._vector_dtype = vector_dtype
        self.changes = TxChanges()

    def _blob(self, vector: np.ndarray | None) -> bytes | None:
        return None if vector is None else vector_bytes(vector, self._vector_dtype)

    def _x(self, sql: str, args: Sequence[Any] = ()) -> Any:
        """Execute shared SQL; returns the cursor."""
        return self._c.execute(self._d.sql(sql), args)

    # -- the memories table: its indexes are the dialect's --------------------------------
    @abstractmethod
    def _insert_row(self, record: MemoryRecord, values: list[Any], embedding: bytes | None,
                    statement: bytes | None) -> None: ...

    @abstractmethod
    def _update_row(self, record: MemoryRecord, sets: list[str], args: list[Any],
                    reindex: bool) -> bool:
        """Run the UPDATE of ``sets``; False when the row is gone. ``reindex``: the full
        text's sources changed."""

    @abstractmethod
    def _delete_row(self, tenant: str, memory_id: str) -> tuple[Any, ...] | None:
        """Delete the row with its index entries; returns (its session id,), None if none."""

    def insert(self, record: MemoryRecord, vector: np.ndarray | None,
               statement: bytes | None = None) -> None:
        self._insert_row(record, self._d.row(record), self._blob(vector), statement)
        self.changes.wrote(record)

    def update(self, record: MemoryRecord, vector: np.ndarray | None = None,
               fields: Collection[str] | None = None) -> None:
        cols = columns_for(fields)
        values = _columns.values(record)  # encoded below only for the columns written
        sets = [f"{c} = %s" for c in cols]
        args = [self._d.encode(c, values[c]) for c in cols]
        if vector is not None:
            sets.append("embedding = %s")
            args.append(self._blob(vector))
        if "content" in cols:  # what the rules parsed of the old text holds its words
            sets.append("statement = NULL")
        if vector is not None or VECTOR_ATTRS & set(cols):  # the vector index keeps these
            sets.append("vseq = %s")
            args.append(self._seq)
        sets.append("wseq = %s")  # the memories' own change feed: any write
        args.append(self._seq)
        if not self._update_row(record, sets, args, bool(FTS_SOURCES & set(cols))):
            raise StorageError(f"memory {record.memory_id} vanished during the update")
        self.changes.wrote(record)

    def set_statements(self, tenant: str, statements: Mapping[str, bytes]) -> None:
        for memory_id, statement in statements.items():
            self._x(f"UPDATE memories SET statement = %s WHERE memory_id = %s AND "
                    f"{self._d.hint}tenant = %s", (statement, memory_id, tenant))

    def delete(self, tenant: str, memory_id: str) -> None:
        gone = self._delete_row(tenant, memory_id)
        if gone is None:
            return
        self._x("INSERT INTO vector_tombstones (memory_id, seq, tenant) VALUES (%s, %s, %s)",
                (memory_id, self._seq, tenant))
        self.changes.left(tenant, gone[0], memory_id)

    # -- the other tables: the same SQL on both ------------------------------------------
    def add_history(self, entry: HistoryEntry, tenant: str) -> None:
        d = self._d
        self._x("INSERT INTO history (memory_id, tenant, action, at, actor, reason, old, new) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (entry.memory_id, tenant, entry.action, d.time(entry.at), entry.actor,
                 entry.reason, None if entry.old is None else d.json(entry.old),
                 None if entry.new is None else d.json(entry.new)))

    def set_meta(self, key: str, value: str) -> None:
        self._x(META_UPSERT, (key, value))

    def touch_session(self, tenant: str, session: str, at: datetime) -> None:
        t = self._d.time(at)
        self._x("INSERT INTO sessions AS s (tenant, session_id, started_at, last_active_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (tenant, session_id) DO UPDATE SET "
                f"last_active_at = {self._d.greatest('s.last_active_at', 'excluded.last_active_at')}, "
                "ended_at = NULL, end_reason = NULL", (tenant, session, t, t))

    def end_session(self, tenant: str, session: str, at: datetime, reason: str) -> None:
        self._x("UPDATE sessions SET ended_at = %s, end_reason = %s WHERE tenant = %s "
                "AND session_id = %s AND ended_at IS NULL",
                (self._d.time(at), reason, tenant, session))

    def archive(self, tenant: str, memory_id: str, obj: str, from_tier: str,
                at: datetime) -> None:
        self.delete(tenant, memory_id)
        self._x("INSERT INTO archived (memory_id, tenant, object, from_tier, archived_at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (memory_id) DO UPDATE SET "
                "object = excluded.object, from_tier = excluded.from_tier, "
                "archived_at = excluded.archived_at",
                (memory_id, tenant, obj, from_tier, self._d.time(at)))

    def unarchive(self, tenant: str, memory_id: str) -> None:
        self._x("DELETE FROM archived WHERE memory_id = %s AND tenant = %s", (memory_id, tenant))

    def purge_history(self, tenant: str, memory_id: str) -> int:
        # Counted from the rows returned: a cursor's rowcount is -1 in PostgreSQL's pipeline.
        return len(self._x("DELETE FROM history WHERE tenant = %s AND memory_id = %s "
                           "RETURNING 1", (tenant, memory_id)).fetchall())

    def complete_event(self, event_id: int, worker: str, memory_ids: Sequence[str],
                       at: datetime) -> bool:
        row = self._x(
            "UPDATE inbox SET status = 'done', processed_at = %s, memory_ids = %s, "
            "lease_until = NULL, error = NULL WHERE event_id = %s AND worker = %s "
            "AND status = 'processing' RETURNING event_id",
            (self._d.time(at), self._d.json(list(memory_ids)), event_id, worker)).fetchone()
        return row is not None
