"""The shared reads of memories (:class:`SqlMemories`): by id, hash, source or session, filtered,
selected, counted. Search filters and lifecycle selections are clauses (:mod:`varvemem.filters`)
rendered by :func:`~varvemem.stores.render.memories_where`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from typing import Any

from .. import filters
from ..model import MemoryRecord, MemoryType, Scope, SearchFilter, TTLMode
from ._columns import COLUMNS, SELECT
from ._sql_dialect import SqlBackend
from .base import Candidate, Selection
from .render import memories_where


class SqlMemories(SqlBackend):
    """The memories table's queries both SQL stores share; the full-text and tag clauses and
    the schema version are the backend's."""

    @abstractmethod
    def _tags_sql(self, alias: str, tenant: str, tags: Sequence[str]
                  ) -> tuple[str, list[Any]]:
        """The memory (of ``tenant``) carries one of ``tags``."""

    @property
    @abstractmethod
    def schema_version(self) -> int: ...

    # -- compilers -----------------------------------------------------------------------
    def _filter_sql(self, flt: SearchFilter, now: datetime, alias: str = "m"
                    ) -> tuple[str, list[Any]]:
        """A WHERE clause (without the keyword) for ``flt`` at ``now``: its
        :func:`~varvemem.filters.search_clauses`, rendered."""
        def tags(values: Sequence[str]) -> tuple[str, list[Any]]:
            return self._tags_sql(alias, flt.tenant, values)

        return memories_where(filters.search_clauses(flt, now), self.d, alias, hint=True,
                              tags=tags)

    # -- memories ------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = %s", (key,))
        return rows[0][0] if rows else None

    def get_many(self, tenant: str, ids: Sequence[str],
                 with_embedding: bool = False) -> dict[str, MemoryRecord]:
        out: dict[str, MemoryRecord] = {}
        cols = SELECT + (", embedding" if with_embedding else "")
        for i in range(0, len(ids), self.d.max_ids):
            inside, args = self.d.in_("memory_id", ids[i : i + self.d.max_ids])
            rows = self._query(f"SELECT {cols} FROM memories WHERE {self.d.hint}tenant = %s "
                               f"AND {inside}", (tenant, *args))
            for row in rows:
                rec = self.d.record(row[: len(COLUMNS)], row[-1] if with_embedding else None)
                out[rec.memory_id] = rec
        return out

    def contents(self, tenant: str, ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for i in range(0, len(ids), self.d.max_ids):
            inside, args = self.d.in_("memory_id", ids[i : i + self.d.max_ids])
            out.update((r[0], r[1]) for r in self._query(
                f"SELECT memory_id, content FROM memories WHERE {self.d.hint}tenant = %s "
                f"AND {inside}", (tenant, *args)))
        return out

    def statements(self, tenant: str, ids: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for i in range(0, len(ids), self.d.max_ids):
            inside, args = self.d.in_("memory_id", ids[i : i + self.d.max_ids])
            out.update((r[0], r[1]) for r in self._query(
                f"SELECT memory_id, statement FROM memories WHERE {self.d.hint}tenant = %s "
                f"AND {inside} AND statement IS NOT NULL", (tenant, *args)))
        return out

    def find_by_hash(self, tenant: str, content_hash: str) -> list[MemoryRecord]:
        return self._records(self._query(
            f"SELECT {SELECT} FROM memories WHERE tenant = %s AND content_hash = %s "
            "AND valid_to IS NULL", (tenant, content_hash)))

    def find_by_source(self, tenant: str, source: str,
                       include_superseded: bool = False) -> list[MemoryRecord]:
        current = "" if include_superseded else "AND valid_to IS NULL "
        return self._records(self._query(
            f"SELECT {SELECT} FROM memories WHERE tenant = %s AND source = %s {current}"
            f"ORDER BY {self.d.rowid}", (tenant, source)))

    def recent_in_session(self, scope: Scope, memory_type: MemoryType, limit: int,
                          exact: bool = True, until: datetime | None = None
                          ) -> list[MemoryRecord]:
        if scope.session is None or limit < 1:
            return []
        where = "tenant = %s AND session_id = %s"
        args: list[Any] = [scope.tenant, scope.session]
        for col, value in (("user_id", scope.user), ("agent_id", scope.agent)):
            if exact or value is not None:
                where += f" AND {self.d.is_(col)}"
                args.append(value)
        if until is not None:
            where += " AND created_at <= %s"
            args.append(self.d.time(until))
        return self._records(self._query(
            f"SELECT {SELECT} FROM memories WHERE {where} AND memory_type = %s "
            f"AND valid_to IS NULL ORDER BY created_at DESC, {self.d.rowid} DESC LIMIT %s",
            (*args, memory_type.value, limit)))

    def filter(self, ids: Sequence[str], flt: SearchFilter, now: datetime) -> list[Candidate]:
        if not ids:
            return []
        where, args = self._filter_sql(flt, now)
        inside, more = self.d.in_("m.memory_id", ids)
        rows = self._query(
            "SELECT memory_id, memory_type, created_at, importance, source_reliability, tags, "
            f"ttl_mode, ttl_days, score FROM memories m WHERE {where} AND {inside}",
            (*args, *more))
        d = self.d
        return [Candidate(r[0], MemoryType(r[1]), d.decode("created_at", r[2]), r[3], r[4],
                          d.decode("tags", r[5]), TTLMode(r[6]), r[7], r[8]) for r in rows]

    def iter_records(self, tenant: str | None = None,
                     with_embedding: bool = False) -> Iterator[MemoryRecord]:
        cols = SELECT + (", embedding" if with_embedding else "")
        rowid = self.d.rowid
        last = 0
        while True:
            sql = f"SELECT {rowid}, {cols} FROM memories WHERE {rowid} > %s"
            args: list[Any] = [last]
            if tenant is not None:
                sql += " AND tenant = %s"
                args.append(tenant)
            rows = self._query(sql + f" ORDER BY {rowid} LIMIT 1000", args)
            if not rows:
                return
            for row in rows:
                last = row[0]
                yield self.d.record(row[1 : 1 + len(COLUMNS)],
                                    row[-1] if with_embedding else None)

    def tenants(self) -> list[str]:
        return [r[0] for r in self._query("SELECT tenant FROM memories UNION "
                                          "SELECT tenant FROM archived ORDER BY 1")]

    def select(self, sel: Selection, limit: int, after: str = "") -> list[MemoryRecord]:
        where, args = memories_where(filters.selection_clauses(sel), self.d)
        return self._records(self._query(
            f"SELECT {SELECT} FROM memories WHERE memory_id > %s"
            f"{' AND ' + where if where else ''} ORDER BY memory_id LIMIT %s",
            (after, *args, limit)))

    def _memory_counts(self, tenant: str) -> list[tuple[str, str, bool, int]]:
        # Counters kept by triggers (migration "counts"): a few rows, whatever the tenant's size.
        return [(t, k, bool(s), int(n)) for t, k, s, n in self._query(
            "SELECT tier, memory_type, superseded, n FROM memory_counts "
            "WHERE tenant = %s AND n > 0", (tenant,))]

    def memories_in(self, tenant: str) -> int:
        """How many memories the tenant holds (its counters: a few rows read)."""
        return sum(n for *_, n in self._memory_counts(tenant))

    def stats(self, tenant: str) -> dict[str, Any]:
        total = superseded = 0
        by_type: dict[str, int] = {}
        by_tier: dict[str, int] = {}
        for tier, kind, old, n in self._memory_counts(tenant):
            total += n
            superseded += n if old else 0
            by_type[kind] = by_type.get(kind, 0) + n
            by_tier[tier] = by_tier.get(tier, 0) + n
        archived = int(self._query("SELECT COUNT(*) FROM archived WHERE tenant = %s",
                                   (tenant,))[0][0])
        if archived:
            by_tier["archive"] = by_tier.get("archive", 0) + archived
        sessions = self._query("SELECT COUNT(*) FROM sessions WHERE tenant = %s "
                               "AND ended_at IS NULL", (tenant,))
        history = self._query("SELECT n FROM history_counts WHERE tenant = %s", (tenant,))
        return {
            "memories": total, "current": total - superseded, "superseded": superseded,
            "archived": archived, "by_type": dict(sorted(by_type.items())),
            "by_tier": dict(sorted(by_tier.items())),
            "open_sessions": int(sessions[0][0]),
            "history_entries": int(history[0][0]) if history else 0,
            "schema_version": self.schema_version,
        }

    def created_by_day(self, tenant: str, since: datetime) -> tuple[int, list[tuple[date, int]]]:
        at = self.d.time(since)
        before = int(self._query("SELECT COUNT(*) FROM memories WHERE tenant = %s "
                                 "AND created_at < %s", (tenant, at))[0][0])
        day = self.d.day("created_at")
        rows = self._query(f"SELECT {day}, COUNT(*) FROM memories WHERE tenant = %s "
                           f"AND created_at >= %s GROUP BY {day} ORDER BY 1", (tenant, at))
        return before, [(date.fromisoformat(str(d)), int(n)) for d, n in rows]

    def tier_type_counts(self, tenant: str) -> dict[tuple[str, str], int]:
        out: dict[tuple[str, str], int] = {}
        for tier, kind, _, n in self._memory_counts(tenant):
            out[tier, kind] = out.get((tier, kind), 0) + n
        return out

    def latest(self, tenant: str, limit: int) -> list[MemoryRecord]:
        return self._records(self._query(
            f"SELECT {SELECT} FROM memories WHERE tenant = %s "
            f"ORDER BY created_at DESC, {self.d.rowid} DESC LIMIT %s", (tenant, limit)))
