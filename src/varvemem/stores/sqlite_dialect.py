"""SQLite's side of the shared SQL: its dialect (epoch seconds, JSON text, ``?``), and the write
transaction that keeps the tag table and the tenant's FTS5 table beside each row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from ..model import MemoryRecord
from ..text import date_terms, index_terms
from ._columns import COLUMNS, JSON_COLUMNS, SELECT, TIME_COLUMNS
from ._sql import Dialect, SqlTx


class SqliteDialect(Dialect):
    """Times as epoch seconds (REAL), JSON as text, ``?`` placeholders."""

    errors = (sqlite3.Error,)
    rowid = "rowid"
    hint = "+"
    null_time = "0"
    max_ids = 500

    def sql(self, text: str) -> str:
        return text.replace("%s", "?")

    def in_(self, col: str, values: Sequence[Any], negate: bool = False
            ) -> tuple[str, list[Any]]:
        return (f"{col} {'NOT ' if negate else ''}IN ({', '.join(['%s'] * len(values))})",
                list(values))

    def is_(self, col: str) -> str:
        return f"{col} IS %s"

    def greatest(self, *exprs: str) -> str:
        return f"MAX({', '.join(exprs)})"

    def json_get(self, col: str, key: str) -> str:
        return f"json_extract({col}, '$.{key}')"

    def day(self, col: str) -> str:
        return f"date({col}, 'unixepoch')"

    def time(self, dt: datetime | None) -> float | None:
        return None if dt is None else dt.timestamp()

    def from_time(self, value: Any) -> datetime | None:
        return None if value is None else datetime.fromtimestamp(value, timezone.utc)

    def json(self, value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, default=str)

    def from_json(self, value: Any) -> Any:
        return None if value is None else json.loads(value)

    def encode(self, col: str, value: Any) -> Any:
        if col in TIME_COLUMNS:
            return self.time(value)
        return self.json(value) if col in JSON_COLUMNS else value

    def decode(self, col: str, value: Any) -> Any:
        if col in TIME_COLUMNS:
            return self.from_time(value)
        return json.loads(value) if col in JSON_COLUMNS else value



class SqliteTx(SqlTx):
    """A write inside ``BEGIN IMMEDIATE``; keeps the tag table and FTS5 rows beside each row."""

    def _index(self, rowid: int, r: MemoryRecord) -> None:
        self._c.execute("DELETE FROM memory_tags WHERE memory_rowid = ?", (rowid,))
        self._c.executemany("INSERT OR IGNORE INTO memory_tags (tag, tenant, memory_rowid) "
                            "VALUES (?, ?, ?)", [(t, r.scope.tenant, rowid) for t in r.tags])
        index_text(self._c, rowid, r)

    def _insert_row(self, record: MemoryRecord, values: list[Any], embedding: bytes | None,
                    statement: bytes | None) -> None:
        cur = self._c.execute(
            f"INSERT INTO memories ({SELECT}, embedding, vseq, wseq, statement) "
            f"VALUES ({','.join('?' * (len(COLUMNS) + 4))})",
            (*values, embedding, self._seq, self._seq, statement))
        self._index(int(cur.lastrowid or 0), record)

    def _update_row(self, record: MemoryRecord, sets: list[str], args: list[Any],
                    reindex: bool) -> bool:
        row = self._x(f"UPDATE memories SET {', '.join(sets)} WHERE memory_id = %s AND "
                      "+tenant = %s RETURNING rowid",
                      (*args, record.memory_id, record.scope.tenant)).fetchone()
        if row is not None and reindex:
            self._index(row[0], record)
        return row is not None

    def _delete_row(self, tenant: str, memory_id: str) -> tuple[Any, ...] | None:
        row = self._c.execute("DELETE FROM memories WHERE memory_id = ? AND +tenant = ? "
                              "RETURNING rowid, session_id", (memory_id, tenant)).fetchone()
        if row is None:
            return None
        self._c.execute("DELETE FROM memory_tags WHERE memory_rowid = ?", (row[0],))
        table = fts_table(self._c, tenant)
        if table is not None:
            self._c.execute(f"DELETE FROM {table} WHERE rowid = ?", (row[0],))
        return (row[1],)


# The full text is indexed per tenant: one FTS5 table for each, ``memories_fts_<n>`` (``n`` from
# the fts_tenants table, made on the tenant's first write), and its fts5vocab table. bm25()
# takes its document count, average length and document frequencies from the whole table, and
# FTS5 has no way to count them over a subset of its rows: in one shared table a tenant's
# scores told whether another tenant stored a word, and another tenant could push its memories
# down (issue 18). Scoring outside FTS5 from per-tenant counts would lose its ranking path
# (ORDER BY rank LIMIT keeps only the best rows); separate tables keep it, and a search reads
# the searching tenant's rows only. The cost: a table (and its shadow tables) per tenant, and
# one primary-key read to find it.
_FTS_SPEC = "terms, context, tokenize = 'unicode61 remove_diacritics 0'"


def fts_table(c: sqlite3.Connection, tenant: str, create: bool = False) -> str | None:
    """The name of ``tenant``'s FTS5 table (its fts5vocab table is that name + ``_vocab``);
    None when it has none yet, unless ``create`` (inside the write transaction)."""
    row = c.execute("SELECT n FROM fts_tenants WHERE tenant = ?", (tenant,)).fetchone()
    if row is not None:
        return f"memories_fts_{int(row[0])}"
    if not create:
        return None
    # Rows of fts_tenants are never deleted: a number always names the same tenant.
    n = int(c.execute("SELECT COALESCE(MAX(n), 0) + 1 FROM fts_tenants").fetchone()[0])
    c.execute("INSERT INTO fts_tenants (tenant, n) VALUES (?, ?)", (tenant, n))
    c.execute(f"CREATE VIRTUAL TABLE memories_fts_{n} USING fts5 ({_FTS_SPEC})")
    c.execute(f"CREATE VIRTUAL TABLE memories_fts_{n}_vocab USING fts5vocab "
              f"(memories_fts_{n}, 'row')")
    return f"memories_fts_{n}"


def index_text(c: sqlite3.Connection, rowid: int, r: MemoryRecord) -> None:
    """(Re)write the row's full text in its tenant's table: its terms, and its context column
    (the neighbouring turns and the date in words)."""
    table = fts_table(c, r.scope.tenant, create=True)
    c.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
    terms = index_terms(r.content + " " + " ".join(r.tags))
    context = index_terms(" ".join([*r.context_before, *r.context_after,
                                    date_terms(r.created_at)]))
    c.execute(f"INSERT INTO {table} (rowid, terms, context) VALUES (?, ?, ?)",
              (rowid, " ".join(terms), " ".join(context)))
