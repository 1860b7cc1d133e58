"""The shared reads of each memory's history, the TIER-1 sessions and the archive references
(:class:`SqlHistories`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from ..model import HistoryEntry
from ._sql_dialect import SqlBackend
from .base import ArchivedRef, SessionInfo


class SqlHistories(SqlBackend):
    """History, sessions and archive references: the same SQL on both stores."""

    # -- history, sessions, archive references -------------------------------------------
    _HISTORY = "SELECT memory_id, action, at, actor, reason, old, new"

    def _entries(self, rows: list[Any]) -> list[HistoryEntry]:
        d = self.d
        return [HistoryEntry(memory_id=r[0], action=r[1], at=d.from_time(r[2]),
                             actor=r[3], reason=r[4], old=d.from_json(r[5]), new=d.from_json(r[6]))
                for r in rows]

    def history(self, tenant: str, memory_id: str) -> list[HistoryEntry]:
        return self._entries(self._query(
            f"{self._HISTORY} FROM history WHERE tenant = %s AND memory_id = %s ORDER BY id",
            (tenant, memory_id)))

    def recent_history(self, tenant: str, actions: Sequence[str], limit: int
                       ) -> list[HistoryEntry]:
        if not actions or limit < 1:
            return []
        # One index range (history_recent: tenant, action, id) per action, newest first, so the
        # cost is the entries returned, not the tenant's history.
        part = (f"SELECT * FROM ({self._HISTORY}, id FROM history WHERE tenant = %s "
                "AND action = %s ORDER BY id DESC LIMIT %s) AS h")
        union = " UNION ALL ".join([part] * len(actions))
        args = [v for a in actions for v in (tenant, a, limit)]
        rows = self._query(f"SELECT * FROM ({union}) AS u ORDER BY id DESC LIMIT %s",
                           (*args, limit))
        return self._entries(rows)

    def history_of(self, tenant: str, action: str) -> Iterator[HistoryEntry]:
        last = 0
        while rows := self._query(f"{self._HISTORY}, id FROM history WHERE tenant = %s AND "
                                  "action = %s AND id > %s ORDER BY id LIMIT 1000",
                                  (tenant, action, last)):
            last = rows[-1][-1]
            yield from self._entries(rows)

    def sessions(self, tenant: str | None = None, open_only: bool = True,
                 idle_before: datetime | None = None) -> list[SessionInfo]:
        where: list[str] = []
        args: list[Any] = []
        if tenant is not None:
            where.append("tenant = %s")
            args.append(tenant)
        if open_only:
            where.append("ended_at IS NULL")
        if idle_before is not None:
            where.append("last_active_at < %s")
            args.append(self.d.time(idle_before))
        t = self.d.from_time
        rows = self._query("SELECT tenant, session_id, started_at, last_active_at, ended_at, "
                           f"end_reason FROM sessions{' WHERE ' if where else ''}"
                           f"{' AND '.join(where)} ORDER BY last_active_at", args)
        return [SessionInfo(r[0], r[1], t(r[2]), t(r[3]), t(r[4]), r[5])  # type: ignore[arg-type]
                for r in rows]

    def archived(self, tenant: str, ids: Sequence[str] | None = None) -> list[ArchivedRef]:
        sql = "SELECT memory_id, tenant, object, from_tier, archived_at FROM archived " \
              "WHERE tenant = %s"
        args: list[Any] = [tenant]
        if ids is not None:
            if not ids:
                return []
            inside, more = self.d.in_("memory_id", ids)
            sql += f" AND {inside}"
            args.extend(more)
        return [ArchivedRef(r[0], r[1], r[2], r[3], self.d.from_time(r[4]))  # type: ignore[arg-type]
                for r in self._query(sql + " ORDER BY archived_at, memory_id", args)]
