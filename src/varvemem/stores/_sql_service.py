"""The shared SQL of the service tables: API keys and logins (:class:`SqlKeys`), and the
webhook inbox (:class:`SqlInbox`, with the pieces of the claim each backend writes).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ._sql_dialect import Dialect, SqlBackend
from .base import ApiKey, InboxEvent, Login

KEY_COLUMNS = "key_id, tenant, role, name, secret_hash, created_at, expires_at, revoked_at"
LOGIN_COLUMNS = "token_hash, kind, key_id, csrf, created_at, seen_at"
INBOX_COLUMNS = ("event_id, tenant, source, kind, delivery, body, headers, received_at, status, "
                 "attempts, worker, lease_until, processed_at, error, memory_ids")
_REARM = ("UPDATE inbox SET status = 'pending', attempts = 0, error = NULL, worker = NULL, "
          "lease_until = NULL, processed_at = NULL WHERE tenant = %s AND ")


def waiting(d: Dialect) -> str:
    """Inbox events a worker may claim (one argument: now). A pending event's lease_until is
    its retry time (after a failed attempt)."""
    return (f"(status IN ('pending', 'processing') AND "
            f"COALESCE(lease_until, {d.null_time}) < %s)")


# What a claim sets on an event out of attempts (the WHERE is the dialect's).
GIVE_UP = ("UPDATE inbox SET status = 'failed', worker = NULL, lease_until = NULL, "
           "error = COALESCE(error, 'no result') || ' (gave up after ' || attempts "
           "|| ' attempts)' WHERE ")


class SqlKeys(SqlBackend):
    """The API keys and the logins that stand for them."""

    # -- API keys ------------------------------------------------------------------------
    def _key(self, row: Sequence[Any]) -> ApiKey:
        t = self.d.from_time
        return ApiKey(*row[:5], created_at=t(row[5]),  # type: ignore[misc, arg-type]
                      expires_at=t(row[6]), revoked_at=t(row[7]))

    def put_key(self, key: ApiKey) -> None:
        t = self.d.time
        self._write(f"INSERT INTO api_keys ({KEY_COLUMNS}) VALUES "
                    "(%s, %s, %s, %s, %s, %s, %s, %s)",
                    (key.key_id, key.tenant, key.role, key.name, key.secret_hash,
                     t(key.created_at), t(key.expires_at), t(key.revoked_at)))

    def get_key(self, key_id: str) -> ApiKey | None:
        rows = self._query(f"SELECT {KEY_COLUMNS} FROM api_keys WHERE key_id = %s", (key_id,))
        return self._key(rows[0]) if rows else None

    def keys(self, tenant: str | None = None) -> list[ApiKey]:
        where, args = ("WHERE tenant = %s", (tenant,)) if tenant is not None else ("", ())
        return [self._key(r) for r in self._query(
            f"SELECT {KEY_COLUMNS} FROM api_keys {where} ORDER BY created_at, key_id", args)]

    def revoke_key(self, key_id: str, at: datetime) -> bool:
        return bool(self._write("UPDATE api_keys SET revoked_at = %s WHERE key_id = %s AND "
                                "revoked_at IS NULL RETURNING key_id",
                                (self.d.time(at), key_id)))

    def put_login(self, login: Login) -> None:
        t = self.d.time
        self._write(f"INSERT INTO logins ({LOGIN_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)",
                    (login.token_hash, login.kind, login.key_id, login.csrf,
                     t(login.created_at), t(login.seen_at)))

    def get_login(self, token_hash: str) -> Login | None:
        rows = self._query(f"SELECT {LOGIN_COLUMNS} FROM logins WHERE token_hash = %s",
                           (token_hash,))
        if not rows:
            return None
        t = self.d.from_time
        return Login(*rows[0][:4], created_at=t(rows[0][4]), seen_at=t(rows[0][5]))  # type: ignore[misc, arg-type]

    def see_login(self, token_hash: str, at: datetime) -> None:
        self._write("UPDATE logins SET seen_at = %s WHERE token_hash = %s",
                    (self.d.time(at), token_hash))

    def drop_login(self, token_hash: str) -> bool:
        return bool(self._write("DELETE FROM logins WHERE token_hash = %s RETURNING token_hash",
                                (token_hash,)))

    def prune_logins(self, kind: str, seen_before: datetime) -> int:
        return len(self._write("DELETE FROM logins WHERE kind = %s AND seen_at < %s "
                               "RETURNING token_hash", (kind, self.d.time(seen_before))))


class SqlInbox(SqlBackend):
    """The webhook inbox; the claim is each backend's own."""

    # -- the webhook inbox ---------------------------------------------------------------
    def _event(self, row: Sequence[Any]) -> InboxEvent:
        d = self.d
        return InboxEvent(
            event_id=row[0], tenant=row[1], source=row[2], kind=row[3], delivery=row[4],
            body=row[5], headers=d.from_json(row[6]), received_at=d.from_time(row[7]),  # type: ignore[arg-type]
            status=row[8], attempts=row[9], worker=row[10], lease_until=d.from_time(row[11]),
            processed_at=d.from_time(row[12]), error=row[13],
            memory_ids=tuple(d.from_json(row[14])))

    def _events(self, rows: Sequence[Sequence[Any]]) -> list[InboxEvent]:
        """Claimed rows as events, by id."""
        return sorted((self._event(r) for r in rows), key=lambda e: e.event_id)

    def enqueue_event(self, event: InboxEvent) -> tuple[int, bool]:
        key = (event.tenant, event.source, event.delivery)
        rows = self._write(
            "INSERT INTO inbox (tenant, source, kind, delivery, body, headers, received_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, source, delivery) "
            "DO NOTHING RETURNING event_id",
            (event.tenant, event.source, event.kind, event.delivery, event.body,
             self.d.json(event.headers), self.d.time(event.received_at)))
        if rows:
            return int(rows[0][0]), True
        rearmed = self._write(_REARM + "source = %s AND delivery = %s AND status = 'failed' "
                              "RETURNING event_id", key)
        if rearmed:
            return int(rearmed[0][0]), True
        known = self._query("SELECT event_id FROM inbox WHERE tenant = %s AND source = %s AND "
                            "delivery = %s", key)
        return int(known[0][0]), False

    def renew_leases(self, worker: str, event_ids: Sequence[int], until: datetime) -> set[int]:
        if not event_ids:
            return set()
        inside, args = self.d.in_("event_id", event_ids)
        rows = self._write(
            "UPDATE inbox SET lease_until = %s WHERE worker = %s AND status = 'processing' AND "
            f"{inside} RETURNING event_id", (self.d.time(until), worker, *args))
        return {int(r[0]) for r in rows}

    def release_event(self, event_id: int, worker: str, now: datetime, error: str,
                      final: bool, retry_at: datetime | None = None) -> None:
        t = self.d.time
        self._write("UPDATE inbox SET status = %s, worker = NULL, lease_until = %s, "
                    "error = %s, processed_at = %s WHERE event_id = %s AND worker = %s "
                    "AND status = 'processing'",
                    ("failed" if final else "pending", None if final else t(retry_at), error,
                     t(now) if final else None, event_id, worker))

    def inbox(self, tenant: str | None = None, status: str | None = None, limit: int = 100,
              after: int = 0) -> list[InboxEvent]:
        where, args = ["event_id > %s"], [after]  # type: list[str], list[Any]
        if tenant is not None:
            where.append("tenant = %s")
            args.append(tenant)
        if status is not None:
            where.append("status = %s")
            args.append(status)
        return [self._event(r) for r in self._query(
            f"SELECT {INBOX_COLUMNS} FROM inbox WHERE {' AND '.join(where)} ORDER BY event_id "
            "LIMIT %s", (*args, limit))]

    def inbox_counts(self, tenant: str | None = None) -> dict[str, int]:
        where, args = ("WHERE tenant = %s ", (tenant,)) if tenant is not None else ("", ())
        return {s: n for s, n in self._query(
            f"SELECT status, COUNT(*) FROM inbox {where}GROUP BY status", args)}

    def retry_events(self, tenant: str, event_ids: Sequence[int] | None = None) -> list[int]:
        if event_ids is not None and not event_ids:
            return []
        where, args = "", [tenant]
        if event_ids is not None:
            inside, more = self.d.in_("event_id", event_ids)
            where = f" AND {inside}"
            args.extend(more)
        rows = self._write(_REARM + f"status = 'failed'{where} RETURNING event_id", args)
        return sorted(int(r[0]) for r in rows)

    def prune_inbox(self, processed_before: datetime, tenant: str | None = None) -> int:
        where, args = "", [self.d.time(processed_before)]
        if tenant is not None:
            where, args = " AND tenant = %s", [*args, tenant]
        return len(self._write(
            "UPDATE inbox SET body = '', headers = '{}' WHERE status = 'done' AND "
            f"processed_at < %s AND (body <> '' OR headers <> '{{}}'){where} RETURNING event_id",
            args))

    def prunable_inbox(self, processed_before: datetime, tenant: str | None = None) -> int:
        where, args = "", [self.d.time(processed_before)]
        if tenant is not None:
            where, args = " AND tenant = %s", [*args, tenant]
        return int(self._query(
            "SELECT COUNT(*) FROM inbox WHERE status = 'done' AND processed_at < %s AND "
            f"(body <> '' OR headers <> '{{}}'){where}", args)[0][0])

    def erase_events(self, tenant: str, event_ids: Sequence[int], error: str) -> int:
        if not event_ids:
            return 0
        inside, ids = self.d.in_("event_id", list(event_ids))
        return len(self._write(
            "UPDATE inbox SET body = '', headers = '{}', lease_until = NULL, "
            "error = CASE WHEN status = 'done' THEN error ELSE %s END, "
            "status = CASE WHEN status = 'done' THEN 'done' ELSE 'failed' END "
            f"WHERE tenant = %s AND {inside} AND (body <> '' OR headers <> '{{}}') "
            "RETURNING event_id", [error, tenant, *ids]))
