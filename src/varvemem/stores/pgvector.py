"""The vector index in the store of record's own PostgreSQL, with the pgvector extension.

``store.vector_url = "pgvector"`` beside ``store.url = postgresql://...``: one table per
embedding model (``vectors_<model>_<dim>``) in the store's schema, an HNSW index with cosine
distance, and the scalar fields retrieval filters on. Like every vector index it is derived:
caught up from the store's change feed (how far: ``RecordStore.put_meta``) and rebuilt by
``varvemem reindex``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from ..errors import StorageError
from ..filters import vector_clauses
from ..model import VectorFilter
from .base import VectorAttrs, VectorIndex
from .postgres import PostgresStore, describe
from .render import pgvector_sql

# pgvector refuses a wider hnsw.ef_search ("value 1024 is out of bounds").
PG_EF_SEARCH_MAX = 1000


def _literal(v: np.ndarray) -> str:
    """pgvector's text form; ``repr`` of a float32 (as a Python float) round-trips exactly."""
    return "[" + ",".join(map(repr, v.tolist())) + "]"


class PgVectorIndex(VectorIndex):
    """Vectors in a table of ``store``'s schema, searched with pgvector's HNSW index."""

    def __init__(self, store: PostgresStore, dim: int, model_id: str, *,
                 ef_search: int = 1024) -> None:
        self.store = store
        self.dim = dim
        self.model_id = model_id
        self.ef_search = min(ef_search, PG_EF_SEARCH_MAX)
        slug = re.sub(r"[^0-9a-z]+", "_", model_id.lower()).strip("_")
        self.table = f"vectors_{slug}_{dim}"[:63]
        self._seq_key = f"pgvector_seq:{self.table}"
        self._where = f"pgvector in {store._where}"
        try:
            with store._pool.connection() as conn:
                row = conn.execute("SELECT extnamespace::regnamespace::text FROM pg_extension "
                                   "WHERE extname = 'vector'").fetchone()
                if row is None:  # in public: other schemas may share it, ours may be dropped
                    conn.execute("CREATE EXTENSION vector SCHEMA public")
                    row = conn.execute("SELECT extnamespace::regnamespace::text FROM "
                                       "pg_extension WHERE extname = 'vector'").fetchone()
        except psycopg.Error as exc:
            raise StorageError(
                f"store.vector_url: pgvector is not usable in {store._where}: "
                f"{describe(exc)} (install the extension, then as a superuser: "
                "CREATE EXTENSION vector)") from None
        self._ext = row[0]  # type: ignore[index]
        self._written = 0
        self._analyzed_rows = 0
        self._analyze_after = False
        self._create()

    def _sql(self, text: str) -> sql.Composed:
        """``text`` with {t} the table, {vec} the vector type, {ops} the operator class."""
        ext = sql.Identifier(self._ext)
        return sql.SQL(text).format(
            t=sql.Identifier(self.table), vec=sql.SQL("{}.vector").format(ext),
            ops=sql.SQL("{}.vector_cosine_ops").format(ext),
            dist=sql.SQL("OPERATOR({}.<=>)").format(ext),
            idx=sql.Identifier(self.table + "_hnsw"))

    def _exec(self, what: str, query: sql.Composed, args: Sequence[object] = (),
              many: bool = False, fetch: bool = False) -> list[tuple[Any, ...]]:
        try:
            with self.store._pool.connection() as conn:
                if not getattr(conn, "_varvemem_hnsw", False):  # once per pooled connection
                    conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(
                        sql.Literal(self.ef_search)))
                    with contextlib.suppress(psycopg.errors.UndefinedObject,
                                             psycopg.errors.InvalidParameterValue):
                        conn.execute("SET hnsw.iterative_scan = relaxed_order")  # pgvector 0.8+
                    conn._varvemem_hnsw = True  # type: ignore[attr-defined]
                with conn.cursor() as cur:
                    if many:
                        with conn.transaction():
                            cur.executemany(query, args)  # type: ignore[arg-type]
                        return []
                    cur.execute(query, args)
                    return cur.fetchall() if fetch else []
        except psycopg.Error as exc:
            raise StorageError(f"{what} on {self._where} failed: {describe(exc)}") from None

    def _create(self) -> None:
        self._exec("create", self._sql(
            "CREATE TABLE IF NOT EXISTS {t} (memory_id text COLLATE \"C\" PRIMARY KEY, "
            "tenant text NOT NULL, user_id text, agent_id text, session_id text, "
            f"memory_type text NOT NULL, tier text NOT NULL, valid boolean NOT NULL, "
            f"vector {{vec}}({int(self.dim)}) NOT NULL)"))
        # Kept in the row, not TOASTed: a 512-d vector is 2 KB, and detoasting each row made a
        # scan 4x slower.
        self._exec("create", self._sql("ALTER TABLE {t} ALTER COLUMN vector SET STORAGE PLAIN"))
        self._exec("create", self._sql(
            "CREATE INDEX IF NOT EXISTS {idx} ON {t} USING hnsw (vector {ops})"))

    @property
    def applied_seq(self) -> int:
        return int(self.store.get_meta(self._seq_key) or 0)

    @applied_seq.setter
    def applied_seq(self, seq: int) -> None:
        self.store.put_meta(self._seq_key, str(int(seq)))

    def upsert(self, ids: Sequence[str], vectors: np.ndarray,
               attrs: Sequence[VectorAttrs]) -> None:
        vectors = np.asarray(vectors, np.float32).reshape(len(ids), self.dim)
        rows = [(mid, at.tenant, at.user, at.agent, at.session, at.memory_type, at.tier,
                 at.valid, _literal(v)) for mid, v, at in zip(ids, vectors, attrs)]
        self._written += len(rows)
        if self._written >= max(1_000, self._analyzed_rows // 5):
            self._analyze_after = True
        if rows:
            self._exec("upsert", self._sql(
                "INSERT INTO {t} (memory_id, tenant, user_id, agent_id, session_id, "
                "memory_type, tier, valid, vector) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, "
                "%s::{vec}) ON CONFLICT (memory_id) DO UPDATE SET tenant = excluded.tenant, "
                "user_id = excluded.user_id, agent_id = excluded.agent_id, "
                "session_id = excluded.session_id, memory_type = excluded.memory_type, "
                "tier = excluded.tier, valid = excluded.valid, vector = excluded.vector"),
                rows, many=True)
        if self._analyze_after:
            # As the store does: without statistics the planner scanned and sorted the whole
            # table for every search instead of walking the HNSW index.
            self._analyze_after, self._written = False, 0
            self._exec("analyze", self._sql("ANALYZE {t}"))
            found = self._exec("analyze", self._sql(
                "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass"),
                [self.table], fetch=True)
            self._analyzed_rows = max(0, int(found[0][0])) if found else 0

    def remove(self, ids: Sequence[str]) -> None:
        if ids:
            self._exec("delete", self._sql("DELETE FROM {t} WHERE memory_id = ANY(%s)"),
                       [list(ids)])

    def clear(self) -> None:
        self._exec("drop", self._sql("DROP TABLE IF EXISTS {t}"))
        self._create()
        self.applied_seq = 0

    @staticmethod
    def _filter(flt: VectorFilter) -> tuple[str, list[object]]:
        args: list[object] = []
        return " AND ".join(pgvector_sql(node, args) for node in vector_clauses(flt)), args

    def search(self, query: np.ndarray, k: int, flt: VectorFilter, *,
               approximate: bool = False) -> list[tuple[str, float]]:
        # One statement per query: batching them as LATERAL scans over unnest() was 30x slower
        # (the planner does not use the HNSW index for a vector from the outer query).
        if k <= 0:
            return []
        where, args = self._filter(flt)
        q = _literal(np.asarray(query, np.float32).reshape(self.dim))
        rows = self._exec("search", self._sql(
            "SELECT memory_id, 1 - (vector {dist} %s::{vec}) FROM {t} WHERE " + where +
            " ORDER BY vector {dist} %s::{vec} LIMIT %s"), [q, *args, q, k], fetch=True)
        return [(r[0], float(r[1])) for r in rows]

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        # pgvector's binary form (dim and a spare as int16, then big-endian float4s): casting
        # to text or real[] costs several ms per search.
        try:
            with self.store._pool.connection() as conn, conn.cursor(binary=True) as cur:
                cur.execute(self._sql("SELECT memory_id, vector FROM {t} "
                                      "WHERE memory_id = ANY(%s)"), [list(ids)])
                rows = cur.fetchall()
        except psycopg.Error as exc:
            raise StorageError(f"get on {self._where} failed: {describe(exc)}") from None
        return {r[0]: np.frombuffer(r[1], ">f4", offset=4).astype(np.float32) for r in rows}

    def __len__(self) -> int:
        return int(self._exec("count", self._sql("SELECT count(*) FROM {t}"), fetch=True)[0][0])
