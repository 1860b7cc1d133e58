"""The store of record on PostgreSQL (psycopg 3, a connection pool), for more than one machine.

Same tables and change feed as the embedded SQLite store, in a schema of its own
(``store.postgresql.schema``), created and migrated by varvemem
(``migrations/postgres/NNNN_*.sql``, ``varvemem db upgrade``). Full text: the analyser's terms
stored as ``tsvector`` lexemes with a GIN index, ranked by a BM25-like score (IDF x
``ts_rank``); tags: a ``text[]`` with a GIN index.
The SQL it shares with SQLite is in ``_sql.py``; here is what is PostgreSQL's own.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timedelta
from functools import partial
from importlib import resources
from typing import Any

from ..errors import ConfigError, StorageError
from ..model import MemoryRecord, SearchFilter
from ..settings import redact_url
from ..text import INDEX_VERSION, date_terms, index_terms
from ._columns import ARRAY_COLUMNS, COLUMNS, JSON_COLUMNS, SELECT
from ._sql import (
    GIVE_UP,
    INBOX_COLUMNS,
    META_UPSERT,
    Dialect,
    Run,
    SqlStore,
    SqlTx,
    describe,
    waiting,
)
from .base import InboxEvent, StoreTx, prefix_bound

try:
    import psycopg
    from psycopg import sql
    from psycopg.types.json import Jsonb
    from psycopg_pool import ConnectionPool
except ImportError as _exc:  # pragma: no cover - the optional extra
    raise ConfigError("store.url: a postgresql:// store needs the PostgreSQL extra: "
                      f"pip install 'varvemem[postgres]' ({_exc})") from None

__all__ = ["PostgresStore", "describe", "fts_vector"]

_JSONB = JSON_COLUMNS - ARRAY_COLUMNS
_dumps = partial(json.dumps, ensure_ascii=False, default=str)
_MAX_LEXEME = 500  # bytes; PostgreSQL refuses lexemes over 2 KB
_MAX_POSITION = 16_383  # tsvector positions stop here
_ANALYZE_MIN = 1_000  # new rows before the first statistics refresh


# The tables an erasure deletes rows of that hold text (a memory's, its history's, a webhook
# payload, the terms of its words, an archived memory's id, its session's name).
_ERASED_TABLES = ("memories", "history", "inbox", "term_df", "archived", "sessions")

class PostgresDialect(Dialect):
    """``timestamptz``, ``jsonb`` and ``text[]`` columns (psycopg converts them both ways),
    ``= ANY(%s)`` lists."""

    errors = (psycopg.Error,)
    rowid = "row_id"
    null_time = "'-infinity'"

    def in_(self, col: str, values: Sequence[Any], negate: bool = False
            ) -> tuple[str, list[Any]]:
        clause = f"{col} = ANY(%s)"
        return (f"NOT ({clause})" if negate else clause), [list(values)]

    def is_(self, col: str) -> str:
        return f"{col} IS NOT DISTINCT FROM %s"

    def greatest(self, *exprs: str) -> str:
        return f"GREATEST({', '.join(exprs)})"

    def json_get(self, col: str, key: str) -> str:
        return f"{col}->>'{key}'"  # text: a JSON null is NULL too

    def day(self, col: str) -> str:
        return f"to_char({col} AT TIME ZONE 'UTC', 'YYYY-MM-DD')"

    def json(self, value: Any) -> Jsonb:
        return Jsonb(value, dumps=_dumps)

    def encode(self, col: str, value: Any) -> Any:
        return self.json(value) if col in _JSONB else value


_D = PostgresDialect()


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


class _PgTx(SqlTx):
    """A write on one pooled connection in pipeline mode; keeps the ``fts`` column."""

    inserted = 0

    def _insert_row(self, record: MemoryRecord, values: list[Any], embedding: bytes | None,
                    statement: bytes | None) -> None:
        self._c.execute(
            f"INSERT INTO memories ({SELECT}, embedding, vseq, wseq, statement, fts) "
            f"VALUES ({', '.join(['%s'] * (len(COLUMNS) + 4))}, %s::tsvector)",
            [*values, embedding, self._seq, self._seq, statement, fts_vector(record)])
        self.inserted += 1

    def _update_row(self, record: MemoryRecord, sets: list[str], args: list[Any],
                    reindex: bool) -> bool:
        if reindex:
            sets, args = [*sets, "fts = %s::tsvector"], [*args, fts_vector(record)]
        return self._c.execute(
            f"UPDATE memories SET {', '.join(sets)} WHERE memory_id = %s AND tenant = %s "
            "RETURNING 1", [*args, record.memory_id, record.scope.tenant]).fetchone() is not None

    def _delete_row(self, tenant: str, memory_id: str) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._c.execute(
            "DELETE FROM memories WHERE memory_id = %s AND tenant = %s RETURNING session_id",
            (memory_id, tenant)).fetchone()
        return row


class PostgresStore(SqlStore):
    """PostgreSQL at ``url``, tables in ``schema``; a pool of ``pool_size`` connections.

    Opening checks the schema version: it migrates a schema behind this release when
    ``auto_migrate`` (else asks for ``varvemem db upgrade``) and refuses a newer one."""

    d = _D

    def __init__(self, url: str, schema: str = "varvemem", pool_size: int = 5,
                 connect_timeout: float = 5.0, auto_migrate: bool = True,
                 migrate: bool = True, vector_dtype: str = "f16",
                 erase_rewrite: bool = False) -> None:
        self.url = url
        self.schema = schema
        self.erase_rewrite = erase_rewrite  # purge_deleted's VACUUM FULL
        self.vector_dtype = vector_dtype  # how new vectors are stored (_columns.vector_bytes)
        self._where = f"PostgreSQL {redact_url(url)} (schema {schema})"
        # One direct connection first: its error says what is wrong (the pool's would not).
        with self.d.translate(f"store.url: cannot connect to {redact_url(url)}"):
            psycopg.connect(url, connect_timeout=max(1, int(connect_timeout))).close()
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
        self._pending_lock = threading.Lock()  # the dict
        self._flushing = threading.Lock()  # one flush at a time; a search does not wait

    def _configure(self, conn: psycopg.Connection) -> None:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        conn.execute("SET TIME ZONE 'UTC'")

    def _failing(self, what: str) -> AbstractContextManager[None]:
        """Driver errors as "``what`` <this store> failed: <the error>"."""
        return self.d.translate(f"{what} {self._where} failed")

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
            found = conn.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()
            assert found is not None  # a SELECT without FROM returns one row
            exists = found[0]
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
                    conn.execute(script)  # our own files, no input
                    conn.execute(META_UPSERT, ("schema_version", str(number)))
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
                                    [(fts_vector(self.d.record(r[1:])), r[0]) for r in rows])
                last = rows[-1][0]
            conn.execute(META_UPSERT, ("fts_version", INDEX_VERSION))

    @property
    def schema_version(self) -> int:
        return int(self.get_meta("schema_version") or 0)

    # -- running statements ---------------------------------------------------------------
    def _query(self, query: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._failing("read from"), self._pool.connection() as conn:
            return conn.execute(query, args).fetchall()

    @contextmanager
    def _snapshot(self) -> Iterator[Run]:
        with self._failing("read from"), self._pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # one snapshot
            yield lambda query, args=(): conn.execute(query, args).fetchall()

    def _write(self, query: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._failing("write to"), self._pool.connection() as conn, conn.transaction():
            cur = conn.execute(query, args)
            return cur.fetchall() if cur.description else []

    @contextmanager
    def transaction(self) -> Iterator[StoreTx]:
        # Pipeline mode: the writes of a batch go out without waiting for each reply (a
        # round trip per statement was most of an add's time); errors still abort it all.
        with self._failing("write to"), self._pool.connection() as conn, conn.pipeline(), \
                conn.transaction():
            # The counter row's lock orders writers: sequence order is commit order, so a
            # catch-up that saw seq N has seen every change up to N.
            seq = conn.execute("UPDATE meta SET value = (value::bigint + 1)::text "
                               "WHERE key = 'vector_seq' RETURNING value").fetchone()
            assert seq is not None  # the counter row exists from the first migration on
            tx = _PgTx(conn, self.d, int(seq[0]), self.vector_dtype)
            yield tx
        self._grown(tx.inserted)

    def put_meta(self, key: str, value: str) -> None:
        with self._failing("write to"), self._pool.connection() as conn:
            conn.execute(META_UPSERT, (key, value))

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
        with self._failing("analyze on"), self._pool.connection() as conn:
            conn.execute("ANALYZE memories, term_df, history")
            rows = conn.execute("SELECT reltuples FROM pg_class WHERE oid = "
                                "'memories'::regclass").fetchone()
        self._analyzed_rows = max(0, int(rows[0])) if rows else 0

    # -- full text and tags: tsvector with term_df for BM25, a text[] of tags -------------
    def _tags_sql(self, alias: str, tenant: str, tags: Sequence[str]
                  ) -> tuple[str, list[Any]]:
        return f"{alias}.tags && %s", [list(tags)]

    def _doc_freq(self, tenant: str, tokens: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many of ``tenant``'s memories hold each token, and how many it has (the
        ``term_df`` table a trigger keeps, per tenant: no tenant's scores may depend on
        another's data)."""
        rows = dict(self._query("SELECT term, df FROM term_df WHERE tenant = %s AND "
                                "term = ANY(%s)", (tenant, [*tokens, ""])))
        return {t: int(rows.get(t, 0)) for t in tokens}, int(rows.get("", 0))

    def purge_deleted(self, tenant: str) -> bool:
        # The trigger counts a term down to 0 and leaves its row: a deleted memory's words.
        self._write("DELETE FROM term_df WHERE tenant = %s AND df <= 0 AND term <> ''",
                    (tenant,))
        # A deleted row stays in its page, and in its indexes, until a vacuum (autovacuum
        # comes when it will). A plain VACUUM removes it but may leave its bytes in the
        # page's free space until reused; VACUUM FULL (erase_rewrite) rewrites the tables,
        # holding an exclusive lock while it does.
        vacuum = "VACUUM FULL {}" if self.erase_rewrite else "VACUUM {}"
        with self._failing("vacuum"), self._pool.connection() as conn:  # autocommit
            for table in _ERASED_TABLES:
                conn.execute(sql.SQL(vacuum).format(sql.Identifier(table)))
        return True

    def keyword_search(self, tokens: Sequence[str], flt: SearchFilter, now: datetime,
                       limit: int, context_weight: float = 0.5,
                       max_docs: int | None = None,
                       scan_docs: int | None = None) -> list[tuple[str, float]]:
        tokens = list(dict.fromkeys(t for t in tokens if t))
        if not tokens:
            return []
        df, total = self._doc_freq(flt.tenant, tokens)
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
        where, args = self._filter_sql(flt, now)
        rows = self._query(
            f"SELECT m.memory_id, {score} AS s FROM memories m WHERE m.fts @@ %s::tsquery "
            f"AND {where} ORDER BY s DESC, m.row_id LIMIT %s",
            (*score_args, " | ".join(_lexeme(t) for t in tokens), *args, limit))
        return [(r[0], float(r[1])) for r in rows]

    def tag_search(self, tags: Sequence[str], flt: SearchFilter, now: datetime,
                   limit: int) -> list[tuple[str, int]]:
        if not tags:
            return []
        where, args = self._filter_sql(flt, now)
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

    # -- retrieval counters -----------------------------------------------------------------
    def record_retrieval(self, tenant: str, ids: Sequence[str], when: datetime) -> None:
        # Usage counters are not acknowledged user data: written without waiting for a row a
        # writer holds (kept pending and sent with the next retrieval, or at close), and
        # without waiting for the WAL flush (synchronous_commit off for this transaction).
        with self._pending_lock:
            for mid in ids:
                count, last = self._pending.get((tenant, mid), (0, when))
                self._pending[(tenant, mid)] = (count + 1, max(last, when))
        if self._flushing.acquire(blocking=False):
            try:
                self._flush_retrievals(wait=False)
            finally:
                self._flushing.release()

    def _flush_retrievals(self, wait: bool) -> None:
        with self._pending_lock:
            batch, self._pending = self._pending, {}
        if not batch:
            return
        try:
            written = self._write_counts(batch, wait)
        except BaseException:
            written = False
            raise
        finally:
            if not written:  # back with the counts made meanwhile
                with self._pending_lock:
                    for key, (n, at) in batch.items():
                        count, last = self._pending.get(key, (0, at))
                        self._pending[key] = (count + n, max(last, at))

    def _write_counts(self, batch: dict[tuple[str, str], tuple[int, datetime]],
                      wait: bool) -> bool:
        """Write ``batch``; False when a writer holds one of its rows."""
        with self._failing("write to"):
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
                            [(n, at, mid, ten) for (ten, mid), (n, at) in batch.items()])
            except psycopg.errors.LockNotAvailable:
                return False  # a writer holds one of the rows: they stay pending
        return True

    # -- the inbox claim --------------------------------------------------------------------
    def claim_events(self, worker: str, limit: int, now: datetime, lease_seconds: float,
                     max_attempts: int) -> list[InboxEvent]:
        free = waiting(self.d)
        until = now + timedelta(seconds=lease_seconds)
        with self._failing("write to"), self._pool.connection() as conn, conn.transaction():
            conn.execute(GIVE_UP + f"event_id IN (SELECT event_id FROM inbox WHERE {free} AND "
                         "attempts >= %s FOR UPDATE SKIP LOCKED)", (now, max_attempts))
            # SKIP LOCKED: concurrent workers each lease other rows, none waits on another.
            rows = conn.execute(
                f"UPDATE inbox SET status = 'processing', worker = %s, lease_until = %s, "
                f"attempts = attempts + 1 WHERE event_id IN (SELECT event_id FROM inbox "
                f"WHERE {free} ORDER BY event_id LIMIT %s FOR UPDATE SKIP LOCKED) "
                f"RETURNING {INBOX_COLUMNS}", (worker, until, now, limit)).fetchall()
        return self._events(rows)

    def close(self) -> None:
        try:
            with self._flushing:
                self._flush_retrievals(wait=True)
        except StorageError:
            pass  # counters only; the server is gone
        finally:
            self._pool.close()
