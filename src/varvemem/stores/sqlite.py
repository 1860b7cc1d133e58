"""The embedded store of record: SQLite in WAL mode, one transaction per write, FTS5 for BM25."""

from __future__ import annotations

import contextlib
import fcntl
import json
import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StorageError
from ..model import HistoryEntry, MemoryRecord, MemoryType, Scope, SearchFilter, TTLMode
from ..text import INDEX_VERSION, date_terms, fts_query, index_terms
from . import _columns
from ._columns import (
    COLUMNS,
    FTS_SOURCES,
    JSON_COLUMNS,
    SELECT,
    TIME_COLUMNS,
    VECTOR_ATTRS,
    columns_for,
)
from .base import (
    ApiKey,
    ArchivedRef,
    Candidate,
    InboxEvent,
    RecordStore,
    Selection,
    SessionInfo,
    StoreTx,
    VectorAttrs,
    VectorChanges,
    prefix_bound,
)

_COLUMNS = COLUMNS
_KEY_COLUMNS = "key_id, tenant, role, name, secret_hash, created_at, expires_at, revoked_at"
_INBOX_COLUMNS = ("event_id, tenant, source, kind, delivery, body, headers, received_at, status, "
                  "attempts, worker, lease_until, processed_at, error, memory_ids")
_SELECT = SELECT
_TAG_SCAN_FACTOR = 20  # tag_search reads at most limit x this many memories per tag


def _ts(dt: datetime | None) -> float | None:
    return None if dt is None else dt.timestamp()


def _dt(ts: float | None) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, timezone.utc)


def _encode(col: str, value: Any) -> Any:
    if col in TIME_COLUMNS:
        return _ts(value)
    if col in JSON_COLUMNS:
        return json.dumps(value, ensure_ascii=False, default=str)
    return value


def _row(r: MemoryRecord) -> tuple[Any, ...]:
    return tuple(_encode(c, v) for c, v in _columns.values(r).items())


def _record(row: sqlite3.Row | tuple[Any, ...], embedding: bytes | None = None) -> MemoryRecord:
    v = {c: (_dt(x) if c in TIME_COLUMNS else json.loads(x) if c in JSON_COLUMNS else x)
         for c, x in zip(_COLUMNS, row)}
    return _columns.record(v, embedding)


def _filter_sql(flt: SearchFilter, now: datetime, alias: str = "m") -> tuple[str, list[Any]]:
    """A WHERE clause (without the keyword) for ``flt`` at ``now``."""
    a = alias
    # Unary + keeps the planner off the tenant indexes: plans are driven by memory ids, FTS
    # rowids or tags, which are far more selective.
    where = [f"+{a}.tenant = ?"]
    args: list[Any] = [flt.tenant]
    for col, value in (("user_id", flt.user), ("agent_id", flt.agent),
                       ("session_id", flt.session)):
        if value is not None:
            where.append(f"{a}.{col} = ?")
            args.append(value)
    if flt.types:
        where.append(f"{a}.memory_type IN ({','.join('?' * len(flt.types))})")
        args.extend(t.value for t in flt.types)
    if flt.tiers:
        where.append(f"{a}.tier IN ({','.join('?' * len(flt.tiers))})")
        args.extend(t.value for t in flt.tiers)
    elif not flt.include_archive:
        where.append(f"{a}.tier != 'archive'")
    for lim in flt.tier_limits:
        where.append(f"NOT ({a}.tier = ? AND ({a}.importance < ? OR "
                     f"COALESCE({a}.tier_since, {a}.created_at) < ?))")
        args.extend((lim.tier.value, lim.min_importance,
                     lim.since.timestamp() if lim.since else float("-inf")))
    if flt.tags:
        where.append(f"{a}.rowid IN (SELECT memory_rowid FROM memory_tags WHERE tenant = ? "
                     f"AND tag IN ({','.join('?' * len(flt.tags))}))")
        args.append(flt.tenant)
        args.extend(flt.tags)
    if flt.created_after is not None:
        where.append(f"{a}.created_at >= ?")
        args.append(flt.created_after.timestamp())
    if flt.created_before is not None:
        where.append(f"{a}.created_at < ?")
        args.append(flt.created_before.timestamp())
    when = (flt.as_of or now).timestamp()
    # Never a memory before it exists: at ``as_of``, else at ``now`` (a replayed clock).
    where.append(f"{a}.valid_from <= ?")
    args.append(when)
    if not flt.include_superseded:
        where.append(f"({a}.valid_to IS NULL OR {a}.valid_to > ?)")
        args.append(when)
    if not flt.include_expired:
        where.append(f"({a}.expires_at IS NULL OR {a}.expires_at > ?)")
        args.append(when)
    return " AND ".join(where), args


class _SqliteTx(StoreTx):
    def __init__(self, conn: sqlite3.Connection, seq: int) -> None:
        self._c = conn
        self._seq = seq

    def _index(self, rowid: int, r: MemoryRecord) -> None:
        self._c.execute("DELETE FROM memory_tags WHERE memory_rowid = ?", (rowid,))
        self._c.executemany("INSERT OR IGNORE INTO memory_tags (tag, tenant, memory_rowid) "
                            "VALUES (?, ?, ?)", [(t, r.scope.tenant, rowid) for t in r.tags])
        _index_text(self._c, rowid, r)

    def insert(self, record: MemoryRecord, vector: np.ndarray | None) -> None:
        blob = None if vector is None else np.asarray(vector, np.float32).tobytes()
        cur = self._c.execute(
            f"INSERT INTO memories ({_SELECT}, embedding, vseq) "
            f"VALUES ({','.join('?' * (len(_COLUMNS) + 2))})", (*_row(record), blob, self._seq))
        self._index(int(cur.lastrowid or 0), record)

    def update(self, record: MemoryRecord, vector: np.ndarray | None = None,
               fields: Collection[str] | None = None) -> None:
        values = dict(zip(_COLUMNS, _row(record)))
        cols = columns_for(fields)
        sets = [f"{c} = ?" for c in cols]
        args = [values[c] for c in cols]
        if vector is not None:
            sets.append("embedding = ?")
            args.append(np.asarray(vector, np.float32).tobytes())
        if vector is not None or VECTOR_ATTRS & set(cols):  # the vector index keeps these
            sets.append("vseq = ?")
            args.append(self._seq)
        row = self._c.execute(
            f"UPDATE memories SET {', '.join(sets)} WHERE memory_id = ? AND +tenant = ? "
            "RETURNING rowid", (*args, record.memory_id, record.scope.tenant)).fetchone()
        if row is None:
            raise StorageError(f"memory {record.memory_id} vanished during the update")
        if FTS_SOURCES & set(cols):
            self._index(row[0], record)

    def delete(self, tenant: str, memory_id: str) -> None:
        row = self._c.execute("SELECT rowid FROM memories WHERE memory_id = ? AND +tenant = ?",
                              (memory_id, tenant)).fetchone()
        if row is None:
            return
        self._c.execute("DELETE FROM memories WHERE rowid = ?", (row[0],))
        self._c.execute("DELETE FROM memory_tags WHERE memory_rowid = ?", (row[0],))
        self._c.execute("DELETE FROM memories_fts WHERE rowid = ?", (row[0],))
        self._c.execute("INSERT INTO vector_tombstones (memory_id, seq) VALUES (?, ?)",
                        (memory_id, self._seq))

    def add_history(self, entry: HistoryEntry, tenant: str) -> None:
        self._c.execute(
            "INSERT INTO history (memory_id, tenant, action, at, actor, reason, old, new) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (entry.memory_id, tenant, entry.action, entry.at.timestamp(), entry.actor,
             entry.reason, _json_or_none(entry.old), _json_or_none(entry.new)))

    def set_meta(self, key: str, value: str) -> None:
        self._c.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def touch_session(self, tenant: str, session: str, at: datetime) -> None:
        self._c.execute(
            "INSERT INTO sessions (tenant, session_id, started_at, last_active_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (tenant, session_id) DO UPDATE SET "
            "last_active_at = MAX(last_active_at, excluded.last_active_at), ended_at = NULL, "
            "end_reason = NULL", (tenant, session, at.timestamp(), at.timestamp()))

    def end_session(self, tenant: str, session: str, at: datetime, reason: str) -> None:
        self._c.execute("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE tenant = ? "
                        "AND session_id = ? AND ended_at IS NULL",
                        (at.timestamp(), reason, tenant, session))

    def archive(self, tenant: str, memory_id: str, obj: str, from_tier: str,
                at: datetime) -> None:
        self.delete(tenant, memory_id)
        self._c.execute("INSERT INTO archived (memory_id, tenant, object, from_tier, archived_at) "
                        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (memory_id) DO UPDATE SET "
                        "object = excluded.object, from_tier = excluded.from_tier, "
                        "archived_at = excluded.archived_at",
                        (memory_id, tenant, obj, from_tier, at.timestamp()))

    def unarchive(self, tenant: str, memory_id: str) -> None:
        self._c.execute("DELETE FROM archived WHERE memory_id = ? AND tenant = ?",
                        (memory_id, tenant))

    def purge_history(self, tenant: str, memory_id: str) -> None:
        self._c.execute("DELETE FROM history WHERE tenant = ? AND memory_id = ?",
                        (tenant, memory_id))

    def complete_event(self, event_id: int, worker: str, memory_ids: Sequence[str],
                       at: datetime) -> bool:
        row = self._c.execute(
            "UPDATE inbox SET status = 'done', processed_at = ?, memory_ids = ?, "
            "lease_until = NULL, error = NULL WHERE event_id = ? AND worker = ? "
            "AND status = 'processing' RETURNING event_id",
            (at.timestamp(), json.dumps(list(memory_ids)), event_id, worker)).fetchone()
        return row is not None


def _index_text(c: sqlite3.Connection, rowid: int, r: MemoryRecord) -> None:
    """(Re)write the row's full text: its terms, and its context column (the neighbouring
    turns and the date in words)."""
    c.execute("DELETE FROM memories_fts WHERE rowid = ?", (rowid,))
    terms = index_terms(r.content + " " + " ".join(r.tags))
    context = index_terms(" ".join([*r.context_before, *r.context_after,
                                    date_terms(r.created_at)]))
    c.execute("INSERT INTO memories_fts (rowid, terms, context) VALUES (?, ?, ?)",
              (rowid, " ".join(terms), " ".join(context)))


def _json_or_none(v: dict[str, Any] | None) -> str | None:
    return None if v is None else json.dumps(v, ensure_ascii=False, default=str)


class SqliteStore(RecordStore):
    """SQLite at ``path``: one connection, serialised by a lock, in WAL mode (so reading
    processes do not wait for a writing one)."""

    def __init__(self, path: Path, synchronous: str = "FULL", busy_timeout_ms: int = 10_000) -> None:
        self.path = path
        self._synchronous = synchronous
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._c = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                      timeout=busy_timeout_ms / 1000)
            self._c.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            # Two processes opening a new home at once must not both create the schema.
            with open(path.with_name(path.name + ".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                self._c.execute("PRAGMA journal_mode = WAL")
                self._migrate()
                self._refresh_fts()
            self._c.execute(f"PRAGMA synchronous = {synchronous}")
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot open the store {path}: {exc}") from None
        except OSError as exc:
            raise StorageError(f"cannot create the store {path}: {exc.strerror}") from None
        self._lock = threading.RLock()
        self._busy_timeout_ms = int(busy_timeout_ms)
        # Retrieval counts not written yet, by (tenant, memory id): (count, last time).
        self._pending: dict[tuple[str, str], tuple[int, float]] = {}

    # -- schema ---------------------------------------------------------------------------
    def _migrate(self) -> None:
        """Apply the numbered ``migrations/sqlite/NNNN_*.sql`` files above ``user_version``."""
        current = self._c.execute("PRAGMA user_version").fetchone()[0]
        folder = resources.files("varvemem.stores") / "migrations" / "sqlite"
        scripts = sorted(p for p in folder.iterdir() if p.name.endswith(".sql"))
        for script in scripts:
            number = int(script.name.split("_", 1)[0])
            if number <= current:
                continue
            # executescript commits; the version bump is part of the same script.
            self._c.executescript(f"BEGIN IMMEDIATE;\n{script.read_text('utf-8')}\n"
                                  f"PRAGMA user_version = {number};\nCOMMIT;")

    def _refresh_fts(self) -> None:
        """Refill the full-text index when it was built by another analyser version."""
        row = self._c.execute("SELECT value FROM meta WHERE key = 'fts_version'").fetchone()
        if row is not None and row[0] == INDEX_VERSION:
            return
        self._c.execute("BEGIN IMMEDIATE")
        try:
            self._c.execute("DELETE FROM memories_fts")
            last = 0
            while rows := self._c.execute(f"SELECT rowid, {_SELECT} FROM memories WHERE rowid > ? "
                                          "ORDER BY rowid LIMIT 2000", (last,)).fetchall():
                for row in rows:
                    _index_text(self._c, row[0], _record(row[1:]))
                last = rows[-1][0]
            self._c.execute("INSERT INTO meta (key, value) VALUES ('fts_version', ?) "
                            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                            (INDEX_VERSION,))
            self._c.execute("COMMIT")
        except BaseException:
            self._c.execute("ROLLBACK")
            raise

    @staticmethod
    def version_of(path: Path) -> int:
        """The schema version of the database at ``path`` (0: none yet), without migrating."""
        if not path.is_file():
            return 0
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                return int(conn.execute("PRAGMA user_version").fetchone()[0])
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot open the store {path}: {exc}") from None

    @property
    def schema_version(self) -> int:
        return int(self._c.execute("PRAGMA user_version").fetchone()[0])

    # -- writes ---------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[StoreTx]:
        with self._lock:
            try:
                self._c.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StorageError(f"cannot write to the store {self.path}: {exc}") from None
            try:
                seq = self._c.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                                      "WHERE key = 'vector_seq' RETURNING value").fetchone()[0]
                yield _SqliteTx(self._c, int(seq))
                self._c.execute("COMMIT")
            except BaseException as exc:
                if self._c.in_transaction:  # SQLite may have rolled back already (disk full)
                    self._c.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StorageError(f"write to {self.path} failed: {exc}") from None
                raise

    # -- reads ----------------------------------------------------------------------------
    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._c.execute(sql, args).fetchall()

    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def put_meta(self, key: str, value: str) -> None:
        with self._lock:
            try:
                self._c.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                (key, value))
            except sqlite3.Error as exc:
                raise StorageError(f"write to {self.path} failed: {exc}") from None

    def get_many(self, tenant: str, ids: Sequence[str],
                 with_embedding: bool = False) -> dict[str, MemoryRecord]:
        out: dict[str, MemoryRecord] = {}
        cols = _SELECT + (", embedding" if with_embedding else "")
        for i in range(0, len(ids), 500):
            part = list(ids[i : i + 500])
            rows = self._query(f"SELECT {cols} FROM memories WHERE +tenant = ? AND memory_id IN "
                               f"({','.join('?' * len(part))})", (tenant, *part))
            for row in rows:
                rec = _record(row[: len(_COLUMNS)], row[-1] if with_embedding else None)
                out[rec.memory_id] = rec
        return out

    def find_by_hash(self, tenant: str, content_hash: str) -> list[MemoryRecord]:
        rows = self._query(f"SELECT {_SELECT} FROM memories WHERE tenant = ? AND content_hash = ? "
                           "AND valid_to IS NULL", (tenant, content_hash))
        return [_record(r) for r in rows]

    def find_by_source(self, tenant: str, source: str,
                       include_superseded: bool = False) -> list[MemoryRecord]:
        current = "" if include_superseded else "AND valid_to IS NULL "
        rows = self._query(f"SELECT {_SELECT} FROM memories WHERE tenant = ? AND source = ? "
                           f"{current}ORDER BY rowid", (tenant, source))
        return [_record(r) for r in rows]

    def keyword_search(self, tokens: Sequence[str], flt: SearchFilter, now: datetime,
                       limit: int, context_weight: float = 0.5,
                       max_docs: int | None = None) -> list[tuple[str, float]]:
        tokens = self._selective(tokens, max_docs)
        if not tokens:
            return []
        where, args = _filter_sql(flt, now)
        # FTS5's bm25() with column weights: a term in the context counts context_weight times.
        match = fts_query(list(tokens))
        rank = f"bm25(1.0, {float(context_weight):.6f})"
        # Fast path: FTS5 keeps only the best rows (ORDER BY rank LIMIT) and the filter runs on
        # those. When the filter drops too many (a small tenant or user in a big store), one
        # join ranks only the rows that pass it.
        fetch = limit * 4
        ranked = self._query("SELECT rowid, -rank FROM memories_fts WHERE memories_fts MATCH ? "
                             "AND rank MATCH ? ORDER BY rank LIMIT ?", (match, rank, fetch))
        score = dict(ranked)
        rows = self._query(
            f"SELECT m.rowid, m.memory_id FROM memories m WHERE {where} AND m.rowid IN "
            f"({','.join('?' * len(ranked))})", (*args, *score)) if ranked else []
        if len(rows) >= limit or len(ranked) < fetch:
            hits = sorted(((mid, float(score[rid])) for rid, mid in rows), key=lambda kv: -kv[1])
            return hits[:limit]
        rows = self._query(
            "SELECT m.memory_id, -memories_fts.rank FROM memories_fts "
            f"JOIN memories m ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? "
            f"AND memories_fts.rank MATCH ? AND {where} ORDER BY memories_fts.rank LIMIT ?",
            (match, rank, *args, limit))
        return [(r[0], float(r[1])) for r in rows]

    def _selective(self, tokens: Sequence[str], max_docs: int | None) -> list[str]:
        """``tokens`` without those in more than ``max_docs`` memories (FTS5 scores every row
        that matches any query term, and such terms barely change the ranking); the rarest one
        is kept when all are that common."""
        tokens = list(dict.fromkeys(tokens))
        if max_docs is None or not tokens:
            return tokens
        df = dict(self._query(f"SELECT term, doc FROM memories_fts_vocab WHERE term IN "
                              f"({','.join('?' * len(tokens))})", tokens))
        kept = [t for t in tokens if df.get(t, 0) <= max_docs]
        return kept or [min(tokens, key=lambda t: df.get(t, 0))]

    def recent_in_session(self, scope: Scope, memory_type: MemoryType, limit: int,
                          exact: bool = True, until: datetime | None = None
                          ) -> list[MemoryRecord]:
        if scope.session is None or limit < 1:
            return []
        where, args = "tenant = ? AND session_id = ?", [scope.tenant, scope.session]
        for col, value in (("user_id", scope.user), ("agent_id", scope.agent)):
            if exact or value is not None:
                where += f" AND {col} IS ?"
                args.append(value)
        if until is not None:
            where += " AND created_at <= ?"
            args.append(until.timestamp())
        rows = self._query(
            f"SELECT {_SELECT} FROM memories WHERE {where} AND memory_type = ? "
            "AND valid_to IS NULL ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (*args, memory_type.value, limit))
        return [_record(r) for r in rows]

    def tag_search(self, tags: Sequence[str], flt: SearchFilter, now: datetime,
                   limit: int) -> list[tuple[str, int]]:
        if not tags:
            return []
        where, args = _filter_sql(flt, now)
        # Each tag contributes its newest ``scan`` memories (an index range read backwards), so
        # a tag that half the store carries costs no more than a rare one.
        scan = limit * _TAG_SCAN_FACTOR
        per_tag = " UNION ALL ".join(
            ["SELECT * FROM (SELECT memory_rowid FROM memory_tags WHERE tag = ? AND tenant = ? "
             "ORDER BY memory_rowid DESC LIMIT ?)"] * len(tags))
        rows = self._query(
            f"SELECT m.memory_id, COUNT(*) AS n FROM ({per_tag}) t "
            f"JOIN memories m ON m.rowid = t.memory_rowid WHERE {where} "
            "GROUP BY m.rowid ORDER BY n DESC, m.importance DESC, m.created_at DESC LIMIT ?",
            (*(x for tag in tags for x in (tag, flt.tenant, scan)), *args, limit))
        return [(r[0], int(r[1])) for r in rows]

    def known_tags(self, tenant: str, candidates: Sequence[str]) -> list[str]:
        if not candidates:
            return []
        rows = self._query(
            f"SELECT DISTINCT tag FROM memory_tags WHERE tenant = ? AND tag IN "
            f"({','.join('?' * len(candidates))})", (tenant, *candidates))
        found = {r[0] for r in rows}
        return [c for c in candidates if c in found]

    def filter(self, ids: Sequence[str], flt: SearchFilter, now: datetime) -> list[Candidate]:
        if not ids:
            return []
        where, args = _filter_sql(flt, now)
        rows = self._query(
            "SELECT memory_id, memory_type, created_at, importance, source_reliability, tags, "
            f"ttl_mode, ttl_days, score FROM memories m WHERE {where} AND m.memory_id IN "
            f"({','.join('?' * len(ids))})", (*args, *ids))
        return [Candidate(r[0], MemoryType(r[1]), _dt(r[2]), r[3], r[4],  # type: ignore[arg-type]
                          json.loads(r[5]), TTLMode(r[6]), r[7], r[8]) for r in rows]

    def history(self, tenant: str, memory_id: str) -> list[HistoryEntry]:
        rows = self._query("SELECT memory_id, action, at, actor, reason, old, new FROM history "
                           "WHERE tenant = ? AND memory_id = ? ORDER BY id", (tenant, memory_id))
        return [HistoryEntry(memory_id=r[0], action=r[1], at=_dt(r[2]), actor=r[3], reason=r[4],
                             old=json.loads(r[5]) if r[5] else None,
                             new=json.loads(r[6]) if r[6] else None) for r in rows]

    def ids_with_prefix(self, tenant: str, prefix: str, limit: int) -> list[str]:
        # Each part is a range on an index led by memory_id (+tenant keeps the planner off the
        # tenant indexes); the substr() check only drops the odd id a bound of "a" lets in.
        part = "memory_id >= ? AND memory_id < ? AND substr(memory_id, 1, ?) = ?"
        args = (prefix, prefix_bound(prefix), len(prefix), prefix)
        rows = self._query(
            f"SELECT memory_id FROM memories WHERE {part} AND +tenant = ? "
            f"UNION SELECT memory_id FROM archived WHERE {part} AND +tenant = ? "
            f"UNION SELECT memory_id FROM history WHERE tenant = ? AND {part} "
            "ORDER BY 1 LIMIT ?", (*args, tenant, *args, tenant, tenant, *args, limit))
        return [r[0] for r in rows]

    def record_retrieval(self, tenant: str, ids: Sequence[str], when: datetime) -> None:
        # Usage counters are not acknowledged user data. They are written without waiting:
        # when another writer (a consolidation, a bulk add) holds the lock, they stay pending
        # in memory and go out with the next retrieval that finds the store free (or at
        # close), so a search never waits for a writer. They skip the fsync (WAL still makes
        # the commit survive a killed process; only an OS crash could lose the last ones).
        with self._lock:
            for mid in ids:
                count, last = self._pending.get((tenant, mid), (0, 0.0))
                self._pending[(tenant, mid)] = (count + 1, max(last, when.timestamp()))
            self._flush_retrievals(wait=False)

    def _flush_retrievals(self, wait: bool) -> None:
        if not self._pending:
            return
        self._c.execute("PRAGMA synchronous = NORMAL")
        if not wait:
            self._c.execute("PRAGMA busy_timeout = 0")
        try:
            self._c.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
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
                [(n, at, mid, ten) for (ten, mid), (n, at) in self._pending.items()])
            self._c.execute("COMMIT")
            self._pending.clear()
        except BaseException:
            if self._c.in_transaction:
                self._c.execute("ROLLBACK")
            raise
        finally:
            self._c.execute(f"PRAGMA synchronous = {self._synchronous}")

    def iter_records(self, tenant: str | None = None,
                     with_embedding: bool = False) -> Iterator[MemoryRecord]:
        cols = _SELECT + (", embedding" if with_embedding else "")
        last = 0
        while True:
            sql = f"SELECT rowid, {cols} FROM memories WHERE rowid > ?"
            args: list[Any] = [last]
            if tenant is not None:
                sql += " AND tenant = ?"
                args.append(tenant)
            rows = self._query(sql + " ORDER BY rowid LIMIT 1000", args)
            if not rows:
                return
            for row in rows:
                last = row[0]
                yield _record(row[1 : 1 + len(_COLUMNS)], row[-1] if with_embedding else None)

    def tenants(self) -> list[str]:
        return [r[0] for r in self._query("SELECT tenant FROM memories UNION "
                                          "SELECT tenant FROM archived ORDER BY 1")]

    def select(self, sel: Selection, limit: int, after: str = "") -> list[MemoryRecord]:
        where, args = ["memory_id > ?"], [after]
        since = "COALESCE(tier_since, created_at)"

        def cond(sql: str, *values: Any) -> None:
            where.append(sql)
            args.extend(values)

        if sel.tenant is not None:
            cond("tenant = ?", sel.tenant)
        for col, values, neg in (("tier", sel.tiers, ""), ("memory_type", sel.types, ""),
                                 ("memory_type", sel.exclude_types, "NOT ")):
            if values is not None and (values or not neg):
                cond(f"{col} {neg}IN ({','.join('?' * len(values))})",
                     *(getattr(v, "value", v) for v in values))
        if sel.current_only:
            cond("valid_to IS NULL")
        if sel.importance_above is not None:
            cond("importance > ?", sel.importance_above)
        if sel.importance_below is not None:
            cond("importance < ?", sel.importance_below)
        if sel.in_tier_before is not None:
            cond(f"{since} < ?", sel.in_tier_before.timestamp())
        if sel.idle_before is not None:
            cond(f"COALESCE(last_retrieved_at, {since}) < ?", sel.idle_before.timestamp())
        if sel.expired_at is not None:
            cond("expires_at <= ?", sel.expired_at.timestamp())
        if sel.unscored_retrievals:
            cond("retrieval_count > scored_retrievals")
        if sel.decay_due_before is not None:
            cond(f"MAX(COALESCE(last_retrieved_at, {since}), COALESCE(decayed_at, 0)) < ?",
                 sel.decay_due_before.timestamp())
        if sel.not_abstracted:
            cond("json_extract(metadata, '$.experience_id') IS NULL")
        if sel.session is not None:
            cond("tenant = ? AND session_id = ?", *sel.session)
        if sel.user is not None:
            cond("user_id = ?", sel.user)
        rows = self._query(f"SELECT {_SELECT} FROM memories WHERE {' AND '.join(where)} "
                           "ORDER BY memory_id LIMIT ?", (*args, limit))
        return [_record(r) for r in rows]

    def sessions(self, tenant: str | None = None, open_only: bool = True,
                 idle_before: datetime | None = None) -> list[SessionInfo]:
        where, args = ["1"], []
        if tenant is not None:
            where.append("tenant = ?")
            args.append(tenant)
        if open_only:
            where.append("ended_at IS NULL")
        if idle_before is not None:
            where.append("last_active_at < ?")
            args.append(idle_before.timestamp())
        rows = self._query("SELECT tenant, session_id, started_at, last_active_at, ended_at, "
                           f"end_reason FROM sessions WHERE {' AND '.join(where)} "
                           "ORDER BY last_active_at", args)
        return [SessionInfo(r[0], r[1], _dt(r[2]), _dt(r[3]), _dt(r[4]), r[5])  # type: ignore[arg-type]
                for r in rows]

    def archived(self, tenant: str, ids: Sequence[str] | None = None) -> list[ArchivedRef]:
        sql = "SELECT memory_id, tenant, object, from_tier, archived_at FROM archived " \
              "WHERE tenant = ?"
        args: list[Any] = [tenant]
        if ids is not None:
            if not ids:
                return []
            sql += f" AND memory_id IN ({','.join('?' * len(ids))})"
            args.extend(ids)
        return [ArchivedRef(r[0], r[1], r[2], r[3], _dt(r[4]))  # type: ignore[arg-type]
                for r in self._query(sql + " ORDER BY archived_at, memory_id", args)]

    def vector_seq(self) -> int:
        return int(self.get_meta("vector_seq") or 0)

    def vector_changes(self, since: int) -> VectorChanges:
        with self._lock:
            own = not self._c.in_transaction
            if own:
                self._c.execute("BEGIN")  # one consistent snapshot
            try:
                seq = int(self._c.execute(
                    "SELECT value FROM meta WHERE key = 'vector_seq'").fetchone()[0])
                rows = self._c.execute(
                    "SELECT memory_id, embedding, tenant, user_id, agent_id, session_id, "
                    "memory_type, tier, valid_to FROM memories "
                    "WHERE vseq > ? AND embedding IS NOT NULL", (since,)).fetchall()
                gone = [r[0] for r in self._c.execute(
                    "SELECT memory_id FROM vector_tombstones WHERE seq > ?", (since,))]
            finally:
                if own:
                    self._c.execute("COMMIT")
        upserts = [(r[0], np.frombuffer(r[1], np.float32),
                    VectorAttrs(r[2], r[3], r[4], r[5], r[6], r[7], r[8] is None)) for r in rows]
        live = {u[0] for u in upserts}
        return VectorChanges(seq, upserts, [g for g in gone if g not in live])

    def stats(self, tenant: str) -> dict[str, Any]:
        def counts(col: str) -> dict[str, int]:
            return dict(self._query(f"SELECT {col}, COUNT(*) FROM memories WHERE tenant = ? "
                                    f"GROUP BY {col} ORDER BY {col}", (tenant,)))

        total, current = self._query(
            "SELECT COUNT(*), COALESCE(SUM(valid_to IS NULL), 0) FROM memories WHERE tenant = ?",
            (tenant,))[0]
        by_tier = counts("tier")
        archived = self._query("SELECT COUNT(*) FROM archived WHERE tenant = ?", (tenant,))[0][0]
        if archived:
            by_tier["archive"] = by_tier.get("archive", 0) + archived
        return {
            "memories": total, "current": current, "superseded": total - current,
            "archived": archived, "by_type": counts("memory_type"), "by_tier": by_tier,
            "open_sessions": self._query("SELECT COUNT(*) FROM sessions WHERE tenant = ? AND "
                                         "ended_at IS NULL", (tenant,))[0][0],
            "history_entries": self._query("SELECT COUNT(*) FROM history WHERE tenant = ?",
                                           (tenant,))[0][0],
            "schema_version": self.schema_version,
        }

    # -- the service's tables -------------------------------------------------------------
    @contextmanager
    def _immediate(self) -> Iterator[sqlite3.Connection]:
        """A write transaction outside the change feed (no sequence number is used)."""
        with self._lock:
            try:
                self._c.execute("BEGIN IMMEDIATE")
                try:
                    yield self._c
                    self._c.execute("COMMIT")
                except BaseException:
                    if self._c.in_transaction:
                        self._c.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise StorageError(f"write to {self.path} failed: {exc}") from None

    def _write(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """One statement in its own immediate transaction (the rows it returns)."""
        with self._immediate() as c:
            return c.execute(sql, args).fetchall()

    @staticmethod
    def _key(row: Sequence[Any]) -> ApiKey:
        return ApiKey(*row[:5], created_at=_dt(row[5]),  # type: ignore[arg-type]
                      expires_at=_dt(row[6]), revoked_at=_dt(row[7]))

    def put_key(self, key: ApiKey) -> None:
        self._write(f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (key.key_id, key.tenant, key.role, key.name, key.secret_hash,
                     _ts(key.created_at), _ts(key.expires_at), _ts(key.revoked_at)))

    def get_key(self, key_id: str) -> ApiKey | None:
        rows = self._query(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_id = ?", (key_id,))
        return self._key(rows[0]) if rows else None

    def keys(self, tenant: str | None = None) -> list[ApiKey]:
        where, args = ("WHERE tenant = ?", (tenant,)) if tenant is not None else ("", ())
        return [self._key(r) for r in self._query(
            f"SELECT {_KEY_COLUMNS} FROM api_keys {where} ORDER BY created_at, key_id", args)]

    def revoke_key(self, key_id: str, at: datetime) -> bool:
        return bool(self._write("UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND "
                                "revoked_at IS NULL RETURNING key_id", (at.timestamp(), key_id)))

    @staticmethod
    def _event(row: Sequence[Any]) -> InboxEvent:
        return InboxEvent(
            event_id=row[0], tenant=row[1], source=row[2], kind=row[3], delivery=row[4],
            body=row[5], headers=json.loads(row[6]), received_at=_dt(row[7]),  # type: ignore[arg-type]
            status=row[8], attempts=row[9], worker=row[10], lease_until=_dt(row[11]),
            processed_at=_dt(row[12]), error=row[13], memory_ids=tuple(json.loads(row[14])))

    def enqueue_event(self, event: InboxEvent) -> tuple[int, bool]:
        rows = self._write(
            "INSERT INTO inbox (tenant, source, kind, delivery, body, headers, received_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, source, delivery) DO NOTHING "
            "RETURNING event_id",
            (event.tenant, event.source, event.kind, event.delivery, event.body,
             json.dumps(event.headers, ensure_ascii=False), event.received_at.timestamp()))
        if rows:
            return int(rows[0][0]), True
        rearmed = self._write(
            "UPDATE inbox SET status = 'pending', attempts = 0, error = NULL, worker = NULL, "
            "lease_until = NULL, processed_at = NULL WHERE tenant = ? AND source = ? AND "
            "delivery = ? AND status = 'failed' RETURNING event_id",
            (event.tenant, event.source, event.delivery))
        if rearmed:
            return int(rearmed[0][0]), True
        known = self._query("SELECT event_id FROM inbox WHERE tenant = ? AND source = ? AND "
                            "delivery = ?", (event.tenant, event.source, event.delivery))
        return int(known[0][0]), False

    def claim_events(self, worker: str, limit: int, now: datetime, lease_seconds: float,
                     max_attempts: int) -> list[InboxEvent]:
        # BEGIN IMMEDIATE takes the database's write lock: one claim at a time, across
        # processes, which is what SKIP LOCKED gives PostgreSQL.
        t = now.timestamp()
        # A pending event's lease_until is its retry time (after a failed attempt).
        waiting = "(status IN ('pending', 'processing') AND COALESCE(lease_until, 0) < ?)"
        with self._immediate() as c:
            c.execute(f"UPDATE inbox SET status = 'failed', worker = NULL, lease_until = NULL, "
                      f"error = COALESCE(error, 'no result') || ' (gave up after ' || attempts "
                      f"|| ' attempts)' WHERE {waiting} AND attempts >= ?", (t, max_attempts))
            rows = c.execute(
                f"UPDATE inbox SET status = 'processing', worker = ?, lease_until = ?, "
                f"attempts = attempts + 1 WHERE event_id IN (SELECT event_id FROM inbox "
                f"WHERE {waiting} ORDER BY event_id LIMIT ?) RETURNING {_INBOX_COLUMNS}",
                (worker, t + lease_seconds, t, limit)).fetchall()
        return sorted((self._event(r) for r in rows), key=lambda e: e.event_id)

    def renew_leases(self, worker: str, event_ids: Sequence[int], until: datetime) -> set[int]:
        if not event_ids:
            return set()
        rows = self._write(
            f"UPDATE inbox SET lease_until = ? WHERE worker = ? AND status = 'processing' AND "
            f"event_id IN ({', '.join('?' * len(event_ids))}) RETURNING event_id",
            (until.timestamp(), worker, *event_ids))
        return {int(r[0]) for r in rows}

    def release_event(self, event_id: int, worker: str, now: datetime, error: str,
                      final: bool, retry_at: datetime | None = None) -> None:
        self._write("UPDATE inbox SET status = ?, worker = NULL, lease_until = ?, error = ?, "
                    "processed_at = ? WHERE event_id = ? AND worker = ? AND status = 'processing'",
                    ("failed" if final else "pending", None if final else _ts(retry_at), error,
                     now.timestamp() if final else None, event_id, worker))

    def inbox(self, tenant: str | None = None, status: str | None = None, limit: int = 100,
              after: int = 0) -> list[InboxEvent]:
        where, args = ["event_id > ?"], [after]
        if tenant is not None:
            where.append("tenant = ?")
            args.append(tenant)
        if status is not None:
            where.append("status = ?")
            args.append(status)
        return [self._event(r) for r in self._query(
            f"SELECT {_INBOX_COLUMNS} FROM inbox WHERE {' AND '.join(where)} ORDER BY event_id "
            "LIMIT ?", (*args, limit))]

    def inbox_counts(self) -> dict[str, int]:
        return {s: n for s, n in self._query("SELECT status, COUNT(*) FROM inbox GROUP BY status")}

    def retry_events(self, tenant: str, event_ids: Sequence[int] | None = None) -> list[int]:
        if event_ids is not None and not event_ids:
            return []
        where, args = "", [tenant]
        if event_ids is not None:
            where = f" AND event_id IN ({', '.join('?' * len(event_ids))})"
            args.extend(event_ids)
        rows = self._write(
            "UPDATE inbox SET status = 'pending', attempts = 0, error = NULL, worker = NULL, "
            f"lease_until = NULL, processed_at = NULL WHERE tenant = ? AND status = 'failed'{where} "
            "RETURNING event_id", args)
        return sorted(int(r[0]) for r in rows)

    def prune_inbox(self, processed_before: datetime, tenant: str | None = None) -> int:
        where, args = "", [processed_before.timestamp()]
        if tenant is not None:
            where, args = " AND tenant = ?", [*args, tenant]
        return len(self._write(
            "UPDATE inbox SET body = '', headers = '{}' WHERE status = 'done' AND processed_at < ? "
            f"AND (body <> '' OR headers <> '{{}}'){where} RETURNING event_id", args))

    def close(self) -> None:
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self._flush_retrievals(wait=True)
            with contextlib.suppress(sqlite3.Error):
                self._c.execute("PRAGMA optimize")  # keeps the planner's statistics fresh
            self._c.close()
