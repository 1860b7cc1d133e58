"""The embedded store of record: SQLite in WAL mode, one transaction per write, FTS5 for BM25.

The SQL it shares with PostgreSQL is in ``_sql.py``; here is what is SQLite's own: the dialect
(epoch seconds, JSON text, ``?``), the tag table and FTS5 ranking, immediate transactions under
one lock, the pending retrieval counters, migrations by ``user_version``. The dialect and the
write transaction (with the FTS5 table of each tenant) are in ``sqlite_dialect.py``.

Writes use the one write connection, under its lock. Reads take a connection of their own
from a small pool (WAL: many readers, and none waits for the writer), except on the thread
inside a write, which reads on the write connection and so sees its own uncommitted rows. Statements given to
``_query``/``_write`` are in the shared ``%s`` style; those on the raw connection use ``?``.
"""

from __future__ import annotations

import contextlib
import fcntl
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import StorageError
from ..model import SearchFilter
from ..text import INDEX_VERSION, fts_query
from ._columns import SELECT
from ._sql import GIVE_UP, INBOX_COLUMNS, META_UPSERT, Run, SqlStore, waiting
from .base import InboxEvent, StoreTx, prefix_bound
from .sqlite_dialect import SqliteDialect, SqliteTx, fts_table, index_text

__all__ = ["SqliteDialect", "SqliteStore"]

_TAG_SCAN_FACTOR = 20  # tag_search reads at most limit x this many memories per tag
_EXACT_ROWS_FACTOR = 10  # full text caps common terms in tenants over this x scan_docs rows

_D = SqliteDialect()
_fts_table = fts_table  # bench/profile_search.py reads a tenant's FTS5 table through this name


class SqliteStore(SqlStore):
    """SQLite at ``path`` in WAL mode: one write connection, serialised by a lock, and pooled
    read connections (so readers, in this process or another, do not wait for a writer)."""

    d = _D

    def __init__(self, path: Path, synchronous: str = "FULL", busy_timeout_ms: int = 10_000,
                 vector_dtype: str = "f16", page_size: int = 16_384) -> None:
        self.path = path
        self._where = str(path)
        self._synchronous = synchronous
        self.vector_dtype = vector_dtype  # how new vectors are stored (_columns.vector_bytes)
        try:
            with self.d.translate(f"cannot open the store {path}", (sqlite3.DatabaseError,)):
                path.parent.mkdir(parents=True, exist_ok=True)
                self._c = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                          timeout=busy_timeout_ms / 1000)
                self._c.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
                # A deleted row's bytes are overwritten with zeros, not left in free space:
                # an erased user's words are in no page of the file (builds differ in default).
                self._c.execute("PRAGMA secure_delete = ON")
                # Two processes opening a new home at once must not both create the schema.
                with open(path.with_name(path.name + ".lock"), "w") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                    # Only a new database takes it (it is fixed once the first table exists).
                    self._c.execute(f"PRAGMA page_size = {int(page_size)}")
                    self._c.execute("PRAGMA journal_mode = WAL")
                    self._migrate()
                    self._refresh_fts()
                self._c.execute(f"PRAGMA synchronous = {synchronous}")
        except OSError as exc:
            raise StorageError(f"cannot create the store {path}: {exc.strerror}") from None
        self._lock = threading.RLock()
        self._writing = threading.local()  # .depth: this thread's holds of the write lock
        self._busy_timeout_ms = int(busy_timeout_ms)
        self._idle: list[sqlite3.Connection] = []  # read connections not in use
        self._readers: list[sqlite3.Connection] = []  # every read connection, to close
        self._pool_lock = threading.Lock()
        self._closed = False
        # Retrieval counts not written yet, by (tenant, memory id): (count, last time).
        self._pending: dict[tuple[str, str], tuple[int, float]] = {}
        self._pending_lock = threading.Lock()

    # -- schema ---------------------------------------------------------------------------
    def _migrate(self) -> None:
        """Apply the numbered ``migrations/sqlite/NNNN_*.sql`` files above ``user_version``."""
        current = self._c.execute("PRAGMA user_version").fetchone()[0]
        folder = resources.files("varvemem.stores") / "migrations" / "sqlite"
        scripts = sorted((p for p in folder.iterdir() if p.name.endswith(".sql")),
                         key=lambda p: p.name)
        for script in scripts:
            number = int(script.name.split("_", 1)[0])
            if number <= current:
                continue
            # executescript commits; the version bump is part of the same script.
            self._c.executescript(f"BEGIN IMMEDIATE;\n{script.read_text('utf-8')}\n"
                                  f"PRAGMA user_version = {number};\nCOMMIT;")

    def _refresh_fts(self) -> None:
        """Refill the full-text index when it was built by another analyser version (or in
        another layout: schema 6 moved it to a table per tenant)."""
        row = self._c.execute("SELECT value FROM meta WHERE key = 'fts_version'").fetchone()
        if row is not None and row[0] == INDEX_VERSION:
            return
        self._c.execute("BEGIN IMMEDIATE")
        try:
            for (n,) in self._c.execute("SELECT n FROM fts_tenants").fetchall():
                self._c.execute(f"DELETE FROM memories_fts_{int(n)}")
            last = 0
            while rows := self._c.execute(f"SELECT rowid, {SELECT} FROM memories WHERE rowid > ? "
                                          "ORDER BY rowid LIMIT 2000", (last,)).fetchall():
                for row in rows:
                    index_text(self._c, row[0], self.d.record(row[1:]))
                last = rows[-1][0]
            self._c.execute(self.d.sql(META_UPSERT), ("fts_version", INDEX_VERSION))
            self._c.execute("COMMIT")
        except BaseException:
            self._c.execute("ROLLBACK")
            raise

    @staticmethod
    def version_of(path: Path) -> int:
        """The schema version of the database at ``path`` (0: none yet), without migrating."""
        if not path.is_file():
            return 0
        with _D.translate(f"cannot open the store {path}", (sqlite3.DatabaseError,)):
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                return int(conn.execute("PRAGMA user_version").fetchone()[0])
            finally:
                conn.close()

    @property
    def schema_version(self) -> int:
        with self._reading() as c:
            return int(c.execute("PRAGMA user_version").fetchone()[0])

    # -- connections ----------------------------------------------------------------------
    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        """The write connection's lock; reads on this thread meanwhile use that connection."""
        with self._lock:
            depth = getattr(self._writing, "depth", 0)
            self._writing.depth = depth + 1
            try:
                yield
            finally:
                self._writing.depth = depth

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """A connection to read on: the write connection inside this thread's write, else
        a pooled read connection (used by this thread only until it is given back)."""
        if getattr(self._writing, "depth", 0):
            yield self._c
            return
        with self._pool_lock:
            if self._closed:
                raise StorageError(f"the store {self.path} is closed")
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._open_reader()
        try:
            yield conn
        finally:
            if conn.in_transaction:  # an error inside a snapshot
                conn.rollback()
            with self._pool_lock:
                if self._closed:
                    conn.close()
                else:
                    self._idle.append(conn)

    def _open_reader(self) -> sqlite3.Connection:
        with self.d.translate(f"cannot open the store {self.path}", (sqlite3.DatabaseError,)):
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None,
                                   timeout=self._busy_timeout_ms / 1000)
            conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
            conn.execute("PRAGMA query_only = ON")
        with self._pool_lock:
            self._readers.append(conn)
        return conn

    # -- running statements ---------------------------------------------------------------
    def _run(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        return self._c.execute(self.d.sql(sql), args).fetchall()

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._reading() as c:
            return c.execute(self.d.sql(sql), args).fetchall()

    @contextmanager
    def _snapshot(self) -> Iterator[Run]:
        with self._reading() as c:
            own = not c.in_transaction
            if own:
                c.execute("BEGIN")  # one consistent snapshot
            try:
                yield lambda sql, args=(): c.execute(self.d.sql(sql), args).fetchall()
            finally:
                if own:
                    c.execute("COMMIT")

    @contextmanager
    def _immediate(self) -> Iterator[Run]:
        """A write transaction outside the change feed (no sequence number is used)."""
        with self._write_lock(), self.d.translate(f"write to {self.path} failed"):
            self._c.execute("BEGIN IMMEDIATE")
            try:
                yield self._run
                self._c.execute("COMMIT")
            except BaseException:
                if self._c.in_transaction:
                    self._c.execute("ROLLBACK")
                raise

    def _write(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._immediate() as run:
            return run(sql, args)

    @contextmanager
    def transaction(self) -> Iterator[StoreTx]:
        with self._write_lock(), self.d.translate(f"write to {self.path} failed"):
            with self.d.translate(f"cannot write to the store {self.path}",
                                  (sqlite3.OperationalError,)):
                self._c.execute("BEGIN IMMEDIATE")
            try:
                seq = self._c.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                                      "WHERE key = 'vector_seq' RETURNING value").fetchone()[0]
                yield SqliteTx(self._c, self.d, int(seq), self.vector_dtype)
                self._c.execute("COMMIT")
            except BaseException:
                if self._c.in_transaction:  # SQLite may have rolled back already (disk full)
                    self._c.execute("ROLLBACK")
                raise

    def put_meta(self, key: str, value: str) -> None:
        with self._write_lock(), self.d.translate(f"write to {self.path} failed"):
            self._run(META_UPSERT, (key, value))

    # -- full text and tags: FTS5 and the memory_tags table -------------------------------
    def _tags_sql(self, alias: str, tenant: str, tags: Sequence[str]
                  ) -> tuple[str, list[Any]]:
        inside, args = self.d.in_("tag", tags)
        return (f"{alias}.rowid IN (SELECT memory_rowid FROM memory_tags WHERE tenant = %s "
                f"AND {inside})", [tenant, *args])

    def keyword_search(self, tokens: Sequence[str], flt: SearchFilter, now: datetime,
                       limit: int, context_weight: float = 0.5,
                       max_docs: int | None = None,
                       scan_docs: int | None = None) -> list[tuple[str, float]]:
        with self._reading() as c:  # the tenant's own index: its own statistics
            fts = fts_table(c, flt.tenant)
        if fts is None:
            return []
        tokens, df = self._selective(fts, tokens, max_docs)
        if not tokens:
            return []
        where, args = self._filter_sql(flt, now)
        # FTS5's bm25() with column weights: a term in the context counts context_weight times.
        rank = f"bm25(1.0, {float(context_weight):.6f})"
        plan = self._capped_plan(fts, flt.tenant, tokens, df, scan_docs)
        # Fast path: FTS5 keeps only the best rows (ORDER BY rank LIMIT) and the filter runs on
        # those (the table holds the tenant's rows only). When the filter drops too many (a small
        # user, a tier, a time range in a big tenant), one join ranks only the rows that pass it.
        fetch = limit * 4
        score, full = self._ranked(fts, tokens, plan, rank, fetch, "", [])
        inside, rowids = self.d.in_("m.rowid", list(score))
        rows = self._query(f"SELECT m.rowid, m.memory_id FROM memories m WHERE {where} AND "
                           f"{inside}", (*args, *rowids)) if score else []
        if len(rows) >= limit or not full:
            hits = sorted(((mid, float(score[rid])) for rid, mid in rows), key=lambda kv: -kv[1])
            return hits[:limit]
        best, _ = self._ranked(fts, tokens, plan, rank, limit, where, args)
        return [(mid, float(v)) for mid, v in best.items()]

    def _capped_plan(self, fts: str, tenant: str, tokens: list[str], df: dict[str, int],
                     scan_docs: int | None) -> tuple[list[str], list[str], int] | None:
        """How a big tenant reads its common terms: ``(rare, common, first_rowid)``, or None to
        score every row the terms match (the exact FTS5 ranking).

        FTS5 scores every row that matches any term before it keeps the best, so a term found
        in thousands of memories costs thousands of scorings. In a tenant of more than
        ``_EXACT_ROWS_FACTOR x scan_docs`` memories, a term in more than ``scan_docs`` of them
        is common: it still adds its BM25 share to every row a rare term matches (an AND that
        seeks in its posting list), but the rows that only common terms match are read from
        its newest ``scan_docs`` postings only. Smaller tenants, and queries of rare terms
        only, are ranked exactly as before."""
        if not scan_docs:
            return None
        common = [t for t in tokens if df.get(t, 0) > scan_docs]
        if not common:
            return None
        if self.memories_in(tenant) <= _EXACT_ROWS_FACTOR * scan_docs:
            return None
        rare = [t for t in tokens if t not in common]
        widest = max(common, key=lambda t: df.get(t, 0))
        first = self._query(f"SELECT rowid FROM {fts} WHERE {fts} MATCH %s ORDER BY rowid DESC "
                            "LIMIT 1 OFFSET %s", (fts_query([widest]), scan_docs - 1))
        return rare, common, int(first[0][0]) if first else 0

    def _ranked(self, fts: str, tokens: list[str],
                plan: tuple[list[str], list[str], int] | None, rank: str, limit: int,
                where: str, args: list[Any]) -> tuple[dict[Any, float], bool]:
        """The best ``limit`` rows by -bm25, best first, by rowid (or, with ``where``, a
        filter on ``memories m`` joined in, by memory id), and whether the read stopped at
        ``limit`` (there may be more)."""
        join = (f" JOIN memories m ON m.rowid = {fts}.rowid" if where else "")
        cond = f" AND {where}" if where else ""
        key = "m.memory_id" if where else f"{fts}.rowid"

        def best(match: str, extra: str = "", more: Sequence[Any] = ()) -> list[Any]:
            return self._query(
                f"SELECT {key}, -{fts}.rank FROM {fts}{join} WHERE {fts} MATCH %s AND "
                f"{fts}.rank MATCH %s{extra}{cond} ORDER BY {fts}.rank LIMIT %s",
                (match, rank, *more, *args, limit))

        if plan is None:
            ranked = best(fts_query(tokens))
            return dict(ranked), len(ranked) >= limit
        rare, common, first = plan
        score: dict[Any, float] = {}
        full = False
        c_match = fts_query(common)
        if rare:
            r_match = fts_query(rare)
            # Rows a rare term matches: their whole score where a common term is there too
            # (the AND's phrases are each query term once), their rare terms' where not.
            for ranked in (best(f"({r_match}) AND ({c_match})"), best(r_match)):
                full = full or len(ranked) >= limit
                for rid, v in ranked:
                    score[rid] = max(v, score.get(rid, v))
        # The rows only common terms match: from the newest postings of the widest one on.
        ranked = best(c_match, f" AND {fts}.rowid >= %s", (first,))
        full = full or len(ranked) >= limit or first > 0
        for rid, v in ranked:
            score[rid] = max(v, score.get(rid, v))
        best_rows = sorted(score.items(), key=lambda kv: -kv[1])[:limit]
        return dict(best_rows), full

    def purge_deleted(self, tenant: str) -> bool:
        # FTS5 marks deleted rows in new segments; 'optimize' merges every segment of the
        # tenant's table into one, and secure_delete (on for this connection) zeroes the pages
        # the old ones leave free. The write-ahead log still holds the pages as they were
        # before: a checkpoint copies the new ones into the file and TRUNCATE empties the log.
        with self._write_lock():
            table = fts_table(self._c, tenant)
            if table is not None:
                self._write(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
            busy, _, _ = self._c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not busy

    def _selective(self, fts: str, tokens: Sequence[str], max_docs: int | None
                   ) -> tuple[list[str], dict[str, int]]:
        """``tokens`` without those in more than ``max_docs`` memories of the table ``fts``'s
        tenant (FTS5 scores every row that matches any query term, and such terms barely
        change the ranking); the rarest one is kept when all are that common. With them, each
        term's document count (terms found nowhere are absent)."""
        tokens = list(dict.fromkeys(tokens))
        if not tokens:
            return tokens, {}
        inside, args = self.d.in_("term", tokens)
        df = dict(self._query(f"SELECT term, doc FROM {fts}_vocab WHERE {inside}", args))
        if max_docs is None:
            return tokens, df
        kept = [t for t in tokens if df.get(t, 0) <= max_docs]
        return kept or [min(tokens, key=lambda t: df.get(t, 0))], df

    def tag_search(self, tags: Sequence[str], flt: SearchFilter, now: datetime,
                   limit: int) -> list[tuple[str, int]]:
        if not tags:
            return []
        where, args = self._filter_sql(flt, now)
        # Each tag contributes its newest ``scan`` memories (an index range read backwards), so
        # a tag that half the store carries costs no more than a rare one.
        scan = limit * _TAG_SCAN_FACTOR
        per_tag = " UNION ALL ".join(
            ["SELECT * FROM (SELECT memory_rowid FROM memory_tags WHERE tag = %s AND tenant = %s "
             "ORDER BY memory_rowid DESC LIMIT %s)"] * len(tags))
        rows = self._query(
            f"SELECT m.memory_id, COUNT(*) AS n FROM ({per_tag}) t "
            f"JOIN memories m ON m.rowid = t.memory_rowid WHERE {where} "
            "GROUP BY m.rowid ORDER BY n DESC, m.importance DESC, m.created_at DESC LIMIT %s",
            (*(x for tag in tags for x in (tag, flt.tenant, scan)), *args, limit))
        return [(r[0], int(r[1])) for r in rows]

    def known_tags(self, tenant: str, candidates: Sequence[str]) -> list[str]:
        if not candidates:
            return []
        inside, args = self.d.in_("tag", candidates)
        rows = self._query(f"SELECT DISTINCT tag FROM memory_tags WHERE tenant = %s AND {inside}",
                           (tenant, *args))
        found = {r[0] for r in rows}
        return [c for c in candidates if c in found]

    def ids_with_prefix(self, tenant: str, prefix: str, limit: int) -> list[str]:
        # Each part is a range on an index led by memory_id (+tenant keeps the planner off the
        # tenant indexes); the substr() check only drops the odd id a bound of "a" lets in.
        part = "memory_id >= %s AND memory_id < %s AND substr(memory_id, 1, %s) = %s"
        args = (prefix, prefix_bound(prefix), len(prefix), prefix)
        rows = self._query(
            f"SELECT memory_id FROM memories WHERE {part} AND +tenant = %s "
            f"UNION SELECT memory_id FROM archived WHERE {part} AND +tenant = %s "
            f"UNION SELECT memory_id FROM history WHERE tenant = %s AND {part} "
            "ORDER BY 1 LIMIT %s", (*args, tenant, *args, tenant, tenant, *args, limit))
        return [r[0] for r in rows]

    # -- retrieval counters -----------------------------------------------------------------
    def record_retrieval(self, tenant: str, ids: Sequence[str], when: datetime) -> None:
        # Usage counters are not acknowledged user data. They are written without waiting:
        # when another writer (a consolidation, a bulk add) holds the lock, they stay pending
        # in memory and go out with the next retrieval that finds the store free (or at
        # close), so a search never waits for a writer. They skip the fsync (WAL still makes
        # the commit survive a killed process; only an OS crash could lose the last ones).
        # A writer of this process holding the write connection is waited for no more than
        # another process's: the counts stay pending.
        with self._pending_lock:
            for mid in ids:
                count, last = self._pending.get((tenant, mid), (0, 0.0))
                self._pending[(tenant, mid)] = (count + 1, max(last, when.timestamp()))
        if not self._lock.acquire(blocking=False):
            return
        try:
            if not self._c.in_transaction:  # not from inside this thread's own write
                with self._write_lock():
                    self._flush_retrievals(wait=False)
        finally:
            self._lock.release()

    def _flush_retrievals(self, wait: bool) -> None:
        """Write the pending counts (the caller holds the write lock)."""
        with self._pending_lock:
            batch, self._pending = self._pending, {}
        if not batch:
            return
        try:
            self._write_counts(batch, wait)
        except BaseException:
            self._keep_pending(batch)
            raise

    def _keep_pending(self, batch: dict[tuple[str, str], tuple[int, float]]) -> None:
        """Put counts that could not be written back with those counted meanwhile."""
        with self._pending_lock:
            for key, (n, at) in batch.items():
                count, last = self._pending.get(key, (0, 0.0))
                self._pending[key] = (count + n, max(last, at))

    def _write_counts(self, batch: dict[tuple[str, str], tuple[int, float]], wait: bool
                      ) -> None:
        self._c.execute("PRAGMA synchronous = NORMAL")
        if not wait:
            self._c.execute("PRAGMA busy_timeout = 0")
        try:
            self._c.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            self._keep_pending(batch)
            return
        finally:
            self._c.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
            if not self._c.in_transaction:
                self._c.execute(f"PRAGMA synchronous = {self._synchronous}")
        try:
            self._c.executemany(
                "UPDATE memories SET retrieval_count = retrieval_count + ?, "
                "last_retrieved_at = MAX(COALESCE(last_retrieved_at, 0), ?) "
                "WHERE memory_id = ? AND +tenant = ?",
                [(n, at, mid, ten) for (ten, mid), (n, at) in batch.items()])
            self._c.execute("COMMIT")
        except BaseException:
            if self._c.in_transaction:
                self._c.execute("ROLLBACK")
            raise
        finally:
            self._c.execute(f"PRAGMA synchronous = {self._synchronous}")

    # -- the inbox claim --------------------------------------------------------------------
    def claim_events(self, worker: str, limit: int, now: datetime, lease_seconds: float,
                     max_attempts: int) -> list[InboxEvent]:
        # BEGIN IMMEDIATE takes the database's write lock: one claim at a time, across
        # processes, which is what SKIP LOCKED gives PostgreSQL.
        t = now.timestamp()
        free = waiting(self.d)
        with self._immediate() as run:
            run(GIVE_UP + f"{free} AND attempts >= %s", (t, max_attempts))
            rows = run(f"UPDATE inbox SET status = 'processing', worker = %s, lease_until = %s, "
                       f"attempts = attempts + 1 WHERE event_id IN (SELECT event_id FROM inbox "
                       f"WHERE {free} ORDER BY event_id LIMIT %s) RETURNING {INBOX_COLUMNS}",
                       (worker, t + lease_seconds, t, limit))
        return self._events(rows)

    def close(self) -> None:
        with self._write_lock():
            with contextlib.suppress(sqlite3.Error):
                self._flush_retrievals(wait=True)
            with contextlib.suppress(sqlite3.Error):
                self._c.execute("PRAGMA optimize")  # keeps the planner's statistics fresh
            with self._pool_lock:
                self._closed = True
                idle, self._idle = self._idle, []
                for conn in idle:
                    self._readers.remove(conn)
            for conn in idle:
                conn.close()
            self._c.close()
