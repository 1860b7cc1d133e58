"""The store of record on PostgreSQL (psycopg 3, a connection pool), for more than one machine.

Same tables and change feed as the embedded SQLite store, in a schema of its own
(``store.pg_schema``), created and migrated by varvemem (``migrations/postgres/NNNN_*.sql``,
``varvemem db upgrade``). Full text: the analyser's terms stored as ``tsvector`` lexemes with a
GIN index, ranked by a BM25-like score (IDF x ``ts_rank``); tags: a ``text[]`` with a GIN index.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from functools import partial
from importlib import resources
from typing import Any

import numpy as np

from ..errors import ConfigError, StorageError
from ..model import HistoryEntry, MemoryRecord, MemoryType, Scope, SearchFilter, TTLMode
from ..settings import redact_url
from ..text import INDEX_VERSION, date_terms, index_terms
from . import _columns
from ._columns import COLUMNS, FTS_SOURCES, SELECT, VECTOR_ATTRS, columns_for
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

try:
    import psycopg
    from psycopg import sql
    from psycopg.types.json import Jsonb
    from psycopg_pool import ConnectionPool
except ImportError as _exc:  # pragma: no cover - the optional extra
    raise ConfigError("store.url: a postgresql:// store needs the PostgreSQL extra: "
                      f"pip install 'varvemem[postgres]' ({_exc})") from None

_JSONB = frozenset({"keywords", "related", "metadata", "context"})
_dumps = partial(json.dumps, ensure_ascii=False, default=str)
_MAX_LEXEME = 500  # bytes; PostgreSQL refuses lexemes over 2 KB
_MAX_POSITION = 16_383  # tsvector positions stop here
_EPOCH_MIN = datetime(1, 1, 2, tzinfo=timezone.utc)
_ANALYZE_MIN = 1_000  # new rows before the first statistics refresh
_KEY_COLUMNS = "key_id, tenant, role, name, secret_hash, created_at, expires_at, revoked_at"
_INBOX_COLUMNS = ("event_id, tenant, source, kind, delivery, body, headers, received_at, status, "
                  "attempts, worker, lease_until, processed_at, error, memory_ids")


def describe(exc: Exception) -> str:
    """A server error on one line (PostgreSQL adds DETAIL and HINT lines)."""
    return "; ".join(line.strip() for line in str(exc).strip().splitlines() if line.strip())


def _lexeme(term: str) -> str:
    term = term.encode()[:_MAX_LEXEME].decode(errors="ignore")
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def fts_vector(r: MemoryRecord) -> str:
    """The ``tsvector`` literal of ``r``: the same terms the embedded store indexes."""
    terms = index_terms(r.content + " " + " ".join(r.tags))
    context = index_terms(" ".join([*r.context_before, *r.context_after,
                                    date_terms(r.created_at)]))
    parts = [f"{_lexeme(t)}:{min(i, _MAX_POSITION)}A" for i, t in enumerate(terms, 1)]
    parts += [f"{_lexeme(t)}:{min(i, _MAX_POSITION)}B"
              for i, t in enumerate(context, len(terms) + 1)]
    return " ".join(parts)


def _encode(col: str, value: Any) -> Any:
    return Jsonb(value, dumps=_dumps) if col in _JSONB else value


def _row(r: MemoryRecord) -> list[Any]:
    return [_encode(c, v) for c, v in _columns.values(r).items()]


def _record(row: Sequence[Any], embedding: bytes | None = None) -> MemoryRecord:
    return _columns.record(dict(zip(COLUMNS, row)), embedding)


def _filter_sql(flt: SearchFilter, now: datetime, alias: str = "m") -> tuple[str, list[Any]]:
    """A WHERE clause (without the keyword) for ``flt`` at ``now``."""
    a = alias
    where = [f"{a}.tenant = %s"]
    args: list[Any] = [flt.tenant]
    for col, value in (("user_id", flt.user), ("agent_id", flt.agent),
                       ("session_id", flt.session)):
        if value is not None:
            where.append(f"{a}.{col} = %s")
            args.append(value)
    if flt.types:
        where.append(f"{a}.memory_type = ANY(%s)")
        args.append([t.value for t in flt.types])
    if flt.tiers:
        where.append(f"{a}.tier = ANY(%s)")
        args.append([t.value for t in flt.tiers])
    elif not flt.include_archive:
        where.append(f"{a}.tier <> 'archive'")
    for lim in flt.tier_limits:
        where.append(f"NOT ({a}.tier = %s AND ({a}.importance < %s OR "
                     f"COALESCE({a}.tier_since, {a}.created_at) < %s))")
        args.extend((lim.tier.value, lim.min_importance, lim.since or _EPOCH_MIN))
    if flt.tags:
        where.append(f"{a}.tags && %s")
        args.append(list(flt.tags))
    if flt.created_after is not None:
        where.append(f"{a}.created_at >= %s")
        args.append(flt.created_after)
    if flt.created_before is not None:
        where.append(f"{a}.created_at < %s")
        args.append(flt.created_before)
    when = flt.as_of or now
    # Never a memory before it exists: at ``as_of``, else at ``now`` (a replayed clock).
    where.append(f"{a}.valid_from <= %s")
    args.append(when)
    if not flt.include_superseded:
        where.append(f"({a}.valid_to IS NULL OR {a}.valid_to > %s)")
        args.append(when)
    if not flt.include_expired:
        where.append(f"({a}.expires_at IS NULL OR {a}.expires_at > %s)")
        args.append(when)
    return " AND ".join(where), args


class _PgTx(StoreTx):
    def __init__(self, conn: psycopg.Connection, seq: int) -> None:
        self._c = conn
        self._seq = seq
        self.inserted = 0

    def insert(self, record: MemoryRecord, vector: np.ndarray | None) -> None:
        blob = None if vector is None else np.asarray(vector, np.float32).tobytes()
        self._c.execute(
            f"INSERT INTO memories ({SELECT}, embedding, vseq, fts) "
            f"VALUES ({', '.join(['%s'] * (len(COLUMNS) + 2))}, %s::tsvector)",
            [*_row(record), blob, self._seq, fts_vector(record)])
        self.inserted += 1

    def update(self, record: MemoryRecord, vector: np.ndarray | None = None,
               fields: Collection[str] | None = None) -> None:
        values = dict(zip(COLUMNS, _row(record)))
        cols = columns_for(fields)
        sets = [f"{c} = %s" for c in cols]
        args = [values[c] for c in cols]
        if vector is not None:
            sets.append("embedding = %s")
            args.append(np.asarray(vector, np.float32).tobytes())
        if vector is not None or VECTOR_ATTRS & set(cols):  # the vector index keeps these
            sets.append("vseq = %s")
            args.append(self._seq)
        if FTS_SOURCES & set(cols):
            sets.append("fts = %s::tsvector")
            args.append(fts_vector(record))
        row = self._c.execute(
            f"UPDATE memories SET {', '.join(sets)} WHERE memory_id = %s AND tenant = %s "
            "RETURNING 1", [*args, record.memory_id, record.scope.tenant]).fetchone()
        if row is None:
            raise StorageError(f"memory {record.memory_id} vanished during the update")

    def delete(self, tenant: str, memory_id: str) -> None:
        gone = self._c.execute("DELETE FROM memories WHERE memory_id = %s AND tenant = %s "
                               "RETURNING 1", (memory_id, tenant)).fetchone()
        if gone is not None:
            self._c.execute("INSERT INTO vector_tombstones (memory_id, seq) VALUES (%s, %s)",
                            (memory_id, self._seq))

    def add_history(self, entry: HistoryEntry, tenant: str) -> None:
        self._c.execute(
            "INSERT INTO history (memory_id, tenant, action, at, actor, reason, old, new) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (entry.memory_id, tenant, entry.action, entry.at, entry.actor, entry.reason,
             None if entry.old is None else Jsonb(entry.old, dumps=_dumps),
             None if entry.new is None else Jsonb(entry.new, dumps=_dumps)))

    def set_meta(self, key: str, value: str) -> None:
        self._c.execute("INSERT INTO meta (key, value) VALUES (%s, %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def touch_session(self, tenant: str, session: str, at: datetime) -> None:
        self._c.execute(
            "INSERT INTO sessions AS s (tenant, session_id, started_at, last_active_at) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (tenant, session_id) DO UPDATE SET "
            "last_active_at = GREATEST(s.last_active_at, excluded.last_active_at), "
            "ended_at = NULL, end_reason = NULL", (tenant, session, at, at))

    def end_session(self, tenant: str, session: str, at: datetime, reason: str) -> None:
        self._c.execute("UPDATE sessions SET ended_at = %s, end_reason = %s WHERE tenant = %s "
                        "AND session_id = %s AND ended_at IS NULL", (at, reason, tenant, session))

    def archive(self, tenant: str, memory_id: str, obj: str, from_tier: str,
                at: datetime) -> None:
        self.delete(tenant, memory_id)
        self._c.execute(
            "INSERT INTO archived (memory_id, tenant, object, from_tier, archived_at) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (memory_id) DO UPDATE SET "
            "object = excluded.object, from_tier = excluded.from_tier, "
            "archived_at = excluded.archived_at", (memory_id, tenant, obj, from_tier, at))

    def unarchive(self, tenant: str, memory_id: str) -> None:
        self._c.execute("DELETE FROM archived WHERE memory_id = %s AND tenant = %s",
                        (memory_id, tenant))

    def purge_history(self, tenant: str, memory_id: str) -> None:
        self._c.execute("DELETE FROM history WHERE tenant = %s AND memory_id = %s",
                        (tenant, memory_id))

    def complete_event(self, event_id: int, worker: str, memory_ids: Sequence[str],
                       at: datetime) -> bool:
        row = self._c.execute(
            "UPDATE inbox SET status = 'done', processed_at = %s, memory_ids = %s, "
            "lease_until = NULL, error = NULL WHERE event_id = %s AND worker = %s "
            "AND status = 'processing' RETURNING event_id",
            (at, Jsonb(list(memory_ids)), event_id, worker)).fetchone()
        return row is not None


class PostgresStore(RecordStore):
    """PostgreSQL at ``url``, tables in ``schema``; a pool of ``pool_size`` connections.

    Opening checks the schema version: it migrates a schema behind this release when
    ``auto_migrate`` (else asks for ``varvemem db upgrade``) and refuses a newer one."""

    def __init__(self, url: str, schema: str = "varvemem", pool_size: int = 5,
                 connect_timeout: float = 5.0, auto_migrate: bool = True,
                 migrate: bool = True) -> None:
        self.url = url
        self.schema = schema
        self._where = f"PostgreSQL {redact_url(url)} (schema {schema})"
        try:  # one direct connection first: its error says what is wrong (the pool's would not)
            psycopg.connect(url, connect_timeout=max(1, int(connect_timeout))).close()
        except psycopg.Error as exc:
            raise StorageError(f"store.url: cannot connect to {redact_url(url)}: "
                               f"{describe(exc)}") from None
        self._pool = ConnectionPool(url, min_size=1, max_size=max(1, pool_size), open=False,
                                    kwargs={"autocommit": True}, configure=self._configure,
                                    timeout=connect_timeout)
        self._pool.open(wait=True, timeout=connect_timeout)
        try:
            if migrate:  # else the caller migrates (varvemem db upgrade)
                self.migrate(apply=auto_migrate)
                self._refresh_fts()
        except BaseException:
            self._pool.close()
            raise
        self._lock = threading.Lock()
        self._inserted = 0
        self._analyzed_rows = 0
        if migrate:
            rows = self._query("SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass")
            self._analyzed_rows = int(rows[0][0]) if rows else 0
            if self._analyzed_rows < 0:  # never analysed (PostgreSQL 14+ says -1)
                self.analyze()
        # Retrieval counts not written yet, by (tenant, memory id): (count, last time).
        self._pending: dict[tuple[str, str], tuple[int, datetime]] = {}

    def _configure(self, conn: psycopg.Connection) -> None:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        conn.execute("SET TIME ZONE 'UTC'")

    # -- schema ---------------------------------------------------------------------------
    @staticmethod
    def migrations() -> list[tuple[int, str]]:
        folder = resources.files("varvemem.stores") / "migrations" / "postgres"
        return sorted((int(p.name.split("_", 1)[0]), p.read_text("utf-8"))
                      for p in folder.iterdir() if p.name.endswith(".sql"))

    def migrate(self, apply: bool = True) -> tuple[int, int]:
        """Bring the schema to this release's version (under an advisory lock, so two
        processes cannot both migrate); returns (version before, version after)."""
        latest = self.migrations()[-1][0]
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                         (f"varvemem:{self.schema}",))
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                sql.Identifier(self.schema)))
            exists = conn.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()[0]
            current = 0
            if exists:
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'"
                                   ).fetchone()
                current = int(row[0]) if row else 0
            if current > latest:
                raise StorageError(
                    f"{self._where} is at schema version {current}, newer than this varvemem "
                    f"knows ({latest}): upgrade varvemem")
            if current < latest and not apply:
                raise StorageError(f"{self._where} is at schema version {current}, this "
                                   f"varvemem needs {latest}: run `varvemem db upgrade`")
            for number, script in self.migrations():
                if number > current:
                    conn.execute(script)  # type: ignore[arg-type] - our own files, no input
                    conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', %s) "
                                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                 (str(number),))
        return current, latest

    def _refresh_fts(self) -> None:
        """Rebuild the ``fts`` column when it was made by another analyser version."""
        if self.get_meta("fts_version") == INDEX_VERSION:
            return
        with self._pool.connection() as conn, conn.transaction():
            last = 0
            while rows := conn.execute(
                    f"SELECT row_id, {SELECT} FROM memories WHERE row_id > %s ORDER BY row_id "
                    "LIMIT 2000", (last,)).fetchall():
                with conn.cursor() as cur:
                    cur.executemany("UPDATE memories SET fts = %s::tsvector WHERE row_id = %s",
                                    [(fts_vector(_record(r[1:])), r[0]) for r in rows])
                last = rows[-1][0]
            conn.execute("INSERT INTO meta (key, value) VALUES ('fts_version', %s) "
                         "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                         (INDEX_VERSION,))

    @property
    def schema_version(self) -> int:
        return int(self.get_meta("schema_version") or 0)

    # -- writes ---------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[StoreTx]:
        try:
            # Pipeline mode: the writes of a batch go out without waiting for each reply (a
            # round trip per statement was most of an add's time); errors still abort it all.
            with self._pool.connection() as conn, conn.pipeline(), conn.transaction():
                # The counter row's lock orders writers: sequence order is commit order, so a
                # catch-up that saw seq N has seen every change up to N.
                seq = conn.execute("UPDATE meta SET value = (value::bigint + 1)::text "
                                   "WHERE key = 'vector_seq' RETURNING value").fetchone()
                tx = _PgTx(conn, int(seq[0]))  # type: ignore[index]
                yield tx
        except psycopg.Error as exc:
            raise StorageError(f"write to {self._where} failed: {describe(exc)}") from None
        self._grown(tx.inserted)

    def _grown(self, inserted: int) -> None:
        """Refresh the planner's statistics once the tables grew by a fifth (what autovacuum
        does, which may be off: without statistics PostgreSQL read a whole tenant through the
        (tenant, source) index to find one id, and every add got slower with size)."""
        with self._lock:
            self._inserted += inserted
            if self._inserted < max(_ANALYZE_MIN, self._analyzed_rows // 5):
                return
            self._inserted = 0
        self.analyze()

    def analyze(self) -> None:
        """``ANALYZE`` the tables searches plan on."""
        try:
            with self._pool.connection() as conn:
                conn.execute("ANALYZE memories, term_df, history")
                rows = conn.execute("SELECT reltuples FROM pg_class WHERE oid = "
                                    "'memories'::regclass").fetchone()
        except psycopg.Error as exc:
            raise StorageError(f"analyze on {self._where} failed: {describe(exc)}") from None
        self._analyzed_rows = max(0, int(rows[0])) if rows else 0  # type: ignore[index]

    # -- reads ----------------------------------------------------------------------------
    def _query(self, query: str, args: Sequence[Any] = ()) -> list[Any]:
        try:
            with self._pool.connection() as conn:
                return conn.execute(query, args).fetchall()  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise StorageError(f"read from {self._where} failed: {describe(exc)}") from None

    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = %s", (key,))
        return rows[0][0] if rows else None

    def put_meta(self, key: str, value: str) -> None:
        try:
            with self._pool.connection() as conn:
                conn.execute("INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) "
                             "DO UPDATE SET value = excluded.value", (key, value))
        except psycopg.Error as exc:
            raise StorageError(f"write to {self._where} failed: {describe(exc)}") from None

    def get_many(self, tenant: str, ids: Sequence[str],
                 with_embedding: bool = False) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        cols = SELECT + (", embedding" if with_embedding else "")
        rows = self._query(f"SELECT {cols} FROM memories WHERE tenant = %s AND "
                           "memory_id = ANY(%s)", (tenant, list(ids)))
        out = {}
        for row in rows:
            rec = _record(row[: len(COLUMNS)], row[-1] if with_embedding else None)
            out[rec.memory_id] = rec
        return out

    def find_by_hash(self, tenant: str, content_hash: str) -> list[MemoryRecord]:
        return [_record(r) for r in self._query(
            f"SELECT {SELECT} FROM memories WHERE tenant = %s AND content_hash = %s "
            "AND valid_to IS NULL", (tenant, content_hash))]

    def find_by_source(self, tenant: str, source: str,
                       include_superseded: bool = False) -> list[MemoryRecord]:
        current = "" if include_superseded else "AND valid_to IS NULL "
        return [_record(r) for r in self._query(
            f"SELECT {SELECT} FROM memories WHERE tenant = %s AND source = %s {current}"
            "ORDER BY row_id", (tenant, source))]

    def _doc_freq(self, tokens: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many memories hold each token, and how many there are (the ``term_df`` table a
        trigger keeps)."""
        rows = dict(self._query("SELECT term, df FROM term_df WHERE term = ANY(%s)",
                                ([*tokens, ""],)))
        return {t: int(rows.get(t, 0)) for t in tokens}, int(rows.get("", 0))

    def keyword_search(self, tokens: Sequence[str], flt: SearchFilter, now: datetime,
                       limit: int, context_weight: float = 0.5,
                       max_docs: int | None = None) -> list[tuple[str, float]]:
        tokens = list(dict.fromkeys(t for t in tokens if t))
        if not tokens:
            return []
        df, total = self._doc_freq(tokens)
        if max_docs is not None:
            kept = [t for t in tokens if df[t] <= max_docs]
            tokens = kept or [min(tokens, key=lambda t: df[t])]
        tokens = [t for t in tokens if df[t]]
        if not tokens:
            return []
        # BM25's IDF times ts_rank (term frequency, weights A=1 and B=context_weight, divided by
        # 1 + log(length)): PostgreSQL has no BM25, and ts_rank alone has no IDF.
        weights = f"{{0, 0, {float(context_weight):.6f}, 1}}"
        score = " + ".join(["%s * ts_rank(%s::real[], m.fts, %s::tsquery, 1)"] * len(tokens))
        score_args = [x for t in tokens for x in (
            math.log(1 + (total - df[t] + 0.5) / (df[t] + 0.5)), weights, _lexeme(t))]
        where, args = _filter_sql(flt, now)
        rows = self._query(
            f"SELECT m.memory_id, {score} AS s FROM memories m WHERE m.fts @@ %s::tsquery "
            f"AND {where} ORDER BY s DESC, m.row_id LIMIT %s",
            (*score_args, " | ".join(_lexeme(t) for t in tokens), *args, limit))
        return [(r[0], float(r[1])) for r in rows]

    def recent_in_session(self, scope: Scope, memory_type: MemoryType, limit: int,
                          exact: bool = True, until: datetime | None = None
                          ) -> list[MemoryRecord]:
        if scope.session is None or limit < 1:
            return []
        where, args = "tenant = %s AND session_id = %s", [scope.tenant, scope.session]
        for col, value in (("user_id", scope.user), ("agent_id", scope.agent)):
            if exact or value is not None:
                where += f" AND {col} IS NOT DISTINCT FROM %s"
                args.append(value)
        if until is not None:
            where += " AND created_at <= %s"
            args.append(until)
        return [_record(r) for r in self._query(
            f"SELECT {SELECT} FROM memories WHERE {where} AND memory_type = %s "
            "AND valid_to IS NULL ORDER BY created_at DESC, row_id DESC LIMIT %s",
            (*args, memory_type.value, limit))]

    def tag_search(self, tags: Sequence[str], flt: SearchFilter, now: datetime,
                   limit: int) -> list[tuple[str, int]]:
        if not tags:
            return []
        where, args = _filter_sql(flt, now)
        rows = self._query(
            "SELECT m.memory_id, cardinality(ARRAY(SELECT unnest(m.tags) INTERSECT "
            "SELECT unnest(%s::text[]))) AS n FROM memories m "
            f"WHERE m.tags && %s::text[] AND {where} "
            "ORDER BY n DESC, m.importance DESC, m.created_at DESC LIMIT %s",
            (list(tags), list(tags), *args, limit))
        return [(r[0], int(r[1])) for r in rows]

    def known_tags(self, tenant: str, candidates: Sequence[str]) -> list[str]:
        if not candidates:
            return []
        found = {r[0] for r in self._query(
            "SELECT DISTINCT t FROM memories, unnest(tags) t WHERE tenant = %s AND "
            "tags && %s::text[] AND t = ANY(%s)", (tenant, list(candidates), list(candidates)))}
        return [c for c in candidates if c in found]

    def filter(self, ids: Sequence[str], flt: SearchFilter, now: datetime) -> list[Candidate]:
        if not ids:
            return []
        where, args = _filter_sql(flt, now)
        rows = self._query(
            "SELECT memory_id, memory_type, created_at, importance, source_reliability, tags, "
            f"ttl_mode, ttl_days, score FROM memories m WHERE {where} AND "
            "m.memory_id = ANY(%s)", (*args, list(ids)))
        return [Candidate(r[0], MemoryType(r[1]), r[2], r[3], r[4], r[5], TTLMode(r[6]), r[7],
                          r[8]) for r in rows]

    def history(self, tenant: str, memory_id: str) -> list[HistoryEntry]:
        return [HistoryEntry(memory_id=r[0], action=r[1], at=r[2], actor=r[3], reason=r[4],
                             old=r[5], new=r[6]) for r in self._query(
            "SELECT memory_id, action, at, actor, reason, old, new FROM history "
            "WHERE tenant = %s AND memory_id = %s ORDER BY id", (tenant, memory_id))]

    def ids_with_prefix(self, tenant: str, prefix: str, limit: int) -> list[str]:
        # Ranges on the indexes led by memory_id, in each column's own collation (archived's
        # and history's may be linguistic: prefix_bound keeps the range right for them);
        # starts_with() drops the odd id in range without the prefix. The select lists agree
        # on "C" so that the union can compare them.
        part = "memory_id >= %s AND memory_id < %s AND starts_with(memory_id, %s)"
        args = (prefix, prefix_bound(prefix), prefix)
        rows = self._query(
            f'SELECT memory_id COLLATE "C" FROM memories WHERE tenant = %s AND {part} '
            f'UNION SELECT memory_id COLLATE "C" FROM archived WHERE tenant = %s AND {part} '
            f'UNION SELECT memory_id COLLATE "C" FROM history WHERE tenant = %s AND {part} '
            "ORDER BY 1 LIMIT %s", (tenant, *args, tenant, *args, tenant, *args, limit))
        return [r[0] for r in rows]

    def record_retrieval(self, tenant: str, ids: Sequence[str], when: datetime) -> None:
        # Usage counters are not acknowledged user data: written without waiting for a row a
        # writer holds (kept pending and sent with the next retrieval, or at close), and
        # without waiting for the WAL flush (synchronous_commit off for this transaction).
        with self._lock:
            for mid in ids:
                count, last = self._pending.get((tenant, mid), (0, when))
                self._pending[(tenant, mid)] = (count + 1, max(last, when))
            self._flush_retrievals(wait=False)

    def _flush_retrievals(self, wait: bool) -> None:
        if not self._pending:
            return
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SET LOCAL synchronous_commit = off")
                if not wait:
                    conn.execute("SET LOCAL lock_timeout = '20ms'")
                with conn.cursor() as cur:
                    cur.executemany(
                        "UPDATE memories SET retrieval_count = retrieval_count + %s, "
                        "last_retrieved_at = GREATEST(last_retrieved_at, %s) "
                        "WHERE memory_id = %s AND tenant = %s",
                        [(n, at, mid, ten) for (ten, mid), (n, at) in self._pending.items()])
            self._pending.clear()
        except psycopg.errors.LockNotAvailable:
            return  # a writer holds one of the rows: they stay pending
        except psycopg.Error as exc:
            raise StorageError(f"write to {self._where} failed: {describe(exc)}") from None

    def iter_records(self, tenant: str | None = None,
                     with_embedding: bool = False) -> Iterator[MemoryRecord]:
        cols = SELECT + (", embedding" if with_embedding else "")
        last = 0
        while True:
            query = f"SELECT row_id, {cols} FROM memories WHERE row_id > %s"
            args: list[Any] = [last]
            if tenant is not None:
                query += " AND tenant = %s"
                args.append(tenant)
            rows = self._query(query + " ORDER BY row_id LIMIT 1000", args)
            if not rows:
                return
            for row in rows:
                last = row[0]
                yield _record(row[1 : 1 + len(COLUMNS)], row[-1] if with_embedding else None)

    def tenants(self) -> list[str]:
        return [r[0] for r in self._query("SELECT tenant FROM memories UNION "
                                          "SELECT tenant FROM archived ORDER BY 1")]

    def select(self, sel: Selection, limit: int, after: str = "") -> list[MemoryRecord]:
        where, args = ["memory_id > %s"], [after]
        since = "COALESCE(tier_since, created_at)"

        def cond(clause: str, *values: Any) -> None:
            where.append(clause)
            args.extend(values)

        if sel.tenant is not None:
            cond("tenant = %s", sel.tenant)
        for col, values, neg in (("tier", sel.tiers, ""), ("memory_type", sel.types, ""),
                                 ("memory_type", sel.exclude_types, "NOT ")):
            if values is not None and (values or not neg):
                cond(f"{neg}({col} = ANY(%s))", [getattr(v, "value", v) for v in values])
        if sel.current_only:
            cond("valid_to IS NULL")
        if sel.importance_above is not None:
            cond("importance > %s", sel.importance_above)
        if sel.importance_below is not None:
            cond("importance < %s", sel.importance_below)
        if sel.in_tier_before is not None:
            cond(f"{since} < %s", sel.in_tier_before)
        if sel.idle_before is not None:
            cond(f"COALESCE(last_retrieved_at, {since}) < %s", sel.idle_before)
        if sel.expired_at is not None:
            cond("expires_at <= %s", sel.expired_at)
        if sel.unscored_retrievals:
            cond("retrieval_count > scored_retrievals")
        if sel.decay_due_before is not None:
            cond(f"GREATEST(COALESCE(last_retrieved_at, {since}), decayed_at) < %s",
                 sel.decay_due_before)
        if sel.not_abstracted:
            cond("metadata->'experience_id' IS NULL")
        if sel.session is not None:
            cond("tenant = %s AND session_id = %s", *sel.session)
        if sel.user is not None:
            cond("user_id = %s", sel.user)
        return [_record(r) for r in self._query(
            f"SELECT {SELECT} FROM memories WHERE {' AND '.join(where)} "
            "ORDER BY memory_id LIMIT %s", (*args, limit))]

    def sessions(self, tenant: str | None = None, open_only: bool = True,
                 idle_before: datetime | None = None) -> list[SessionInfo]:
        where, args = ["true"], []
        if tenant is not None:
            where.append("tenant = %s")
            args.append(tenant)
        if open_only:
            where.append("ended_at IS NULL")
        if idle_before is not None:
            where.append("last_active_at < %s")
            args.append(idle_before)
        return [SessionInfo(*r) for r in self._query(
            "SELECT tenant, session_id, started_at, last_active_at, ended_at, end_reason "
            f"FROM sessions WHERE {' AND '.join(where)} ORDER BY last_active_at", args)]

    def archived(self, tenant: str, ids: Sequence[str] | None = None) -> list[ArchivedRef]:
        query = "SELECT memory_id, tenant, object, from_tier, archived_at FROM archived " \
                "WHERE tenant = %s"
        args: list[Any] = [tenant]
        if ids is not None:
            if not ids:
                return []
            query += " AND memory_id = ANY(%s)"
            args.append(list(ids))
        return [ArchivedRef(*r) for r in self._query(
            query + " ORDER BY archived_at, memory_id", args)]

    def vector_seq(self) -> int:
        return int(self.get_meta("vector_seq") or 0)

    def vector_changes(self, since: int) -> VectorChanges:
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # one snapshot
                seq = int(conn.execute("SELECT value FROM meta WHERE key = 'vector_seq'"
                                       ).fetchone()[0])  # type: ignore[index]
                rows = conn.execute(
                    "SELECT memory_id, embedding, tenant, user_id, agent_id, session_id, "
                    "memory_type, tier, valid_to FROM memories "
                    "WHERE vseq > %s AND embedding IS NOT NULL", (since,)).fetchall()
                gone = [r[0] for r in conn.execute(
                    "SELECT memory_id FROM vector_tombstones WHERE seq > %s", (since,))]
        except psycopg.Error as exc:
            raise StorageError(f"read from {self._where} failed: {describe(exc)}") from None
        upserts = [(r[0], np.frombuffer(r[1], np.float32),
                    VectorAttrs(r[2], r[3], r[4], r[5], r[6], r[7], r[8] is None)) for r in rows]
        live = {u[0] for u in upserts}
        return VectorChanges(seq, upserts, [g for g in gone if g not in live])

    def stats(self, tenant: str) -> dict[str, Any]:
        def counts(col: str) -> dict[str, int]:
            return dict(self._query(f"SELECT {col}, count(*) FROM memories WHERE tenant = %s "
                                    f"GROUP BY {col} ORDER BY {col}", (tenant,)))

        total, current = self._query(
            "SELECT count(*), count(*) FILTER (WHERE valid_to IS NULL) FROM memories "
            "WHERE tenant = %s", (tenant,))[0]
        by_tier = counts("tier")
        archived = self._query("SELECT count(*) FROM archived WHERE tenant = %s",
                               (tenant,))[0][0]
        if archived:
            by_tier["archive"] = by_tier.get("archive", 0) + archived
        return {
            "memories": total, "current": current, "superseded": total - current,
            "archived": archived, "by_type": counts("memory_type"), "by_tier": by_tier,
            "open_sessions": self._query("SELECT count(*) FROM sessions WHERE tenant = %s AND "
                                         "ended_at IS NULL", (tenant,))[0][0],
            "history_entries": self._query("SELECT count(*) FROM history WHERE tenant = %s",
                                           (tenant,))[0][0],
            "schema_version": self.schema_version,
        }

    # -- the service's tables -------------------------------------------------------------
    def _write(self, query: str, args: Sequence[Any] = ()) -> list[Any]:
        """One statement in its own transaction (the rows it returns)."""
        try:
            with self._pool.connection() as conn, conn.transaction():
                cur = conn.execute(query, args)  # type: ignore[arg-type]
                return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise StorageError(f"write to {self._where} failed: {describe(exc)}") from None

    def put_key(self, key: ApiKey) -> None:
        self._write(f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                    (key.key_id, key.tenant, key.role, key.name, key.secret_hash,
                     key.created_at, key.expires_at, key.revoked_at))

    def get_key(self, key_id: str) -> ApiKey | None:
        rows = self._query(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_id = %s", (key_id,))
        return ApiKey(*rows[0]) if rows else None

    def keys(self, tenant: str | None = None) -> list[ApiKey]:
        where, args = ("WHERE tenant = %s", (tenant,)) if tenant is not None else ("", ())
        return [ApiKey(*r) for r in self._query(
            f"SELECT {_KEY_COLUMNS} FROM api_keys {where} ORDER BY created_at, key_id", args)]

    def revoke_key(self, key_id: str, at: datetime) -> bool:
        return bool(self._write("UPDATE api_keys SET revoked_at = %s WHERE key_id = %s AND "
                                "revoked_at IS NULL RETURNING key_id", (at, key_id)))

    @staticmethod
    def _event(row: Sequence[Any]) -> InboxEvent:
        return InboxEvent(*row[:14], memory_ids=tuple(row[14]))

    def enqueue_event(self, event: InboxEvent) -> tuple[int, bool]:
        rows = self._write(
            "INSERT INTO inbox (tenant, source, kind, delivery, body, headers, received_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, source, delivery) "
            "DO NOTHING RETURNING event_id",
            (event.tenant, event.source, event.kind, event.delivery, event.body,
             Jsonb(event.headers, dumps=_dumps), event.received_at))
        if rows:
            return int(rows[0][0]), True
        rearmed = self._write(
            "UPDATE inbox SET status = 'pending', attempts = 0, error = NULL, worker = NULL, "
            "lease_until = NULL, processed_at = NULL WHERE tenant = %s AND source = %s AND "
            "delivery = %s AND status = 'failed' RETURNING event_id",
            (event.tenant, event.source, event.delivery))
        if rearmed:
            return int(rearmed[0][0]), True
        known = self._query("SELECT event_id FROM inbox WHERE tenant = %s AND source = %s AND "
                            "delivery = %s", (event.tenant, event.source, event.delivery))
        return int(known[0][0]), False

    def claim_events(self, worker: str, limit: int, now: datetime, lease_seconds: float,
                     max_attempts: int) -> list[InboxEvent]:
        # A pending event's lease_until is its retry time (after a failed attempt).
        waiting = ("(status IN ('pending', 'processing') AND "
                   "COALESCE(lease_until, '-infinity') < %s)")
        until = now + timedelta(seconds=lease_seconds)
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute(
                    f"UPDATE inbox SET status = 'failed', worker = NULL, lease_until = NULL, "
                    f"error = COALESCE(error, 'no result') || ' (gave up after ' || attempts "
                    f"|| ' attempts)' WHERE event_id IN (SELECT event_id FROM inbox WHERE "
                    f"{waiting} AND attempts >= %s FOR UPDATE SKIP LOCKED)", (now, max_attempts))
                # SKIP LOCKED: concurrent workers each lease other rows, none waits on another.
                rows = conn.execute(
                    f"UPDATE inbox SET status = 'processing', worker = %s, lease_until = %s, "
                    f"attempts = attempts + 1 WHERE event_id IN (SELECT event_id FROM inbox "
                    f"WHERE {waiting} ORDER BY event_id LIMIT %s FOR UPDATE SKIP LOCKED) "
                    f"RETURNING {_INBOX_COLUMNS}", (worker, until, now, limit)).fetchall()
        except psycopg.Error as exc:
            raise StorageError(f"write to {self._where} failed: {describe(exc)}") from None
        return sorted((self._event(r) for r in rows), key=lambda e: e.event_id)

    def renew_leases(self, worker: str, event_ids: Sequence[int], until: datetime) -> set[int]:
        if not event_ids:
            return set()
        rows = self._write(
            "UPDATE inbox SET lease_until = %s WHERE worker = %s AND status = 'processing' AND "
            "event_id = ANY(%s) RETURNING event_id", (until, worker, list(event_ids)))
        return {int(r[0]) for r in rows}

    def release_event(self, event_id: int, worker: str, now: datetime, error: str,
                      final: bool, retry_at: datetime | None = None) -> None:
        self._write("UPDATE inbox SET status = %s, worker = NULL, lease_until = %s, "
                    "error = %s, processed_at = %s WHERE event_id = %s AND worker = %s "
                    "AND status = 'processing'",
                    ("failed" if final else "pending", None if final else retry_at, error,
                     now if final else None, event_id, worker))

    def inbox(self, tenant: str | None = None, status: str | None = None, limit: int = 100,
              after: int = 0) -> list[InboxEvent]:
        where, args = ["event_id > %s"], [after]
        if tenant is not None:
            where.append("tenant = %s")
            args.append(tenant)
        if status is not None:
            where.append("status = %s")
            args.append(status)
        return [self._event(r) for r in self._query(
            f"SELECT {_INBOX_COLUMNS} FROM inbox WHERE {' AND '.join(where)} ORDER BY event_id "
            "LIMIT %s", (*args, limit))]

    def inbox_counts(self) -> dict[str, int]:
        return {s: n for s, n in self._query("SELECT status, count(*) FROM inbox GROUP BY status")}

    def retry_events(self, tenant: str, event_ids: Sequence[int] | None = None) -> list[int]:
        where, args = "", [tenant]
        if event_ids is not None:
            where, args = " AND event_id = ANY(%s)", [tenant, list(event_ids)]
        rows = self._write(
            "UPDATE inbox SET status = 'pending', attempts = 0, error = NULL, worker = NULL, "
            "lease_until = NULL, processed_at = NULL WHERE tenant = %s AND status = 'failed'"
            f"{where} RETURNING event_id", args)
        return sorted(int(r[0]) for r in rows)

    def prune_inbox(self, processed_before: datetime, tenant: str | None = None) -> int:
        where, args = "", [processed_before]
        if tenant is not None:
            where, args = " AND tenant = %s", [*args, tenant]
        return len(self._write(
            "UPDATE inbox SET body = '', headers = '{}' WHERE status = 'done' AND "
            f"processed_at < %s AND (body <> '' OR headers <> '{{}}'){where} RETURNING event_id",
            args))

    def close(self) -> None:
        try:
            with self._lock:
                self._flush_retrievals(wait=True)
        except StorageError:
            pass  # counters only; the server is gone
        finally:
            self._pool.close()
