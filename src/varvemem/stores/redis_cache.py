"""TIER-1 on Redis: each active session's newest turns and tool calls, shared by every process.

Derived data, never the system of record. A session's window is filled from the store of
record on first read (a sorted set per session and type, scored by time, that expires after the
session's idle time) and appended to after each committed write; a change to one of its memories
drops it. When Redis is unreachable the store of record answers, and sessions written meanwhile
are dropped once Redis is back, so nothing acknowledged is lost or served stale.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, cast
from urllib.parse import quote

from ..errors import StorageError
from ..model import MemoryRecord, MemoryType, Scope, types_where
from ..settings import redact_url
from .base import ActiveCache, AnswerCache, AnswerKey, ChangeSubscriber, Memories, TxChanges
from .composite import composite_key

try:
    import redis
except ImportError as _exc:  # pragma: no cover - the optional extra
    from ..errors import ConfigError

    raise ConfigError("store.cache_url: a redis:// cache needs the Redis extra: "
                      f"pip install 'varvemem[redis]' ({_exc})") from None

log = logging.getLogger("varvemem")
_TYPES = types_where(lambda t: t.session_window)
# A window is a sorted set of memory ids by time plus a hash of their records. Scripts run
# atomically: a write goes only into a window that exists (was filled from the store), so a
# window is always the store's newest ``keep``.
_PUT = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('ZREM', KEYS[1], ARGV[2])
  redis.call('HDEL', KEYS[2], ARGV[2])
  if ARGV[5] == '1' then
    redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
    redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
    local old = redis.call('ZRANGE', KEYS[1], 0, -tonumber(ARGV[4]) - 1)
    for _, id in ipairs(old) do
      redis.call('ZREM', KEYS[1], id)
      redis.call('HDEL', KEYS[2], id)
    end
  end
  redis.call('EXPIRE', KEYS[1], ARGV[6])
  redis.call('EXPIRE', KEYS[2], ARGV[6])
end
return 0
"""
_EMPTY = "-"  # the member that marks a filled window with no memories


def _mine(records: list[MemoryRecord], scope: Scope, limit: int) -> list[MemoryRecord]:
    """The newest ``limit`` of ``records`` (oldest first) that ``scope``'s user and agent see
    (None matches any)."""
    return [r for r in records if (scope.user is None or r.scope.user == scope.user)
            and (scope.agent is None or r.scope.agent == scope.agent)][-limit:]


class RedisActiveCache(ActiveCache, ChangeSubscriber):
    """Windows of up to ``keep`` memories per session and type under ``prefix``, namespaced by
    tenant; each expires ``ttl_seconds`` after its last write. Subscribes to the committed
    writes (:meth:`committed`)."""

    def __init__(self, url: str, records: Memories, *, prefix: str = "varvemem",
                 keep: int = 50, ttl_seconds: int = 3600, timeout: float = 2.0) -> None:
        self.records = records
        self.prefix = prefix
        self.keep = keep
        self.ttl = max(1, int(ttl_seconds))
        self._where = redact_url(url)
        self._r = redis.Redis.from_url(url, socket_timeout=timeout,
                                       socket_connect_timeout=timeout)
        try:
            self._r.ping()
        except redis.RedisError as exc:
            raise StorageError(f"store.cache_url: cannot reach Redis at {self._where}: "
                               f"{exc}") from None
        self._put = self._r.register_script(_PUT)
        self._lock = threading.Lock()
        self._stale: set[tuple[str, str]] = set()  # sessions written while Redis was away

    @property
    def client(self) -> redis.Redis:
        """The connection (the L3 answer cache shares it)."""
        return self._r

    def _key(self, tenant: str, session: str, memory_type: MemoryType) -> str:
        return (f"{self.prefix}:{quote(tenant, safe='')}:active:{quote(session, safe='')}:"
                f"{memory_type.value}")

    def _keys(self, tenant: str, session: str) -> list[str]:
        return [k + suffix for t in _TYPES for k in [self._key(tenant, session, t)]
                for suffix in ("", ":rec")]

    def _away(self, exc: Exception, tenant: str | None = None,
              session: str | None = None) -> None:
        if tenant is not None and session is not None:
            with self._lock:
                self._stale.add((tenant, session))
        log.warning("Redis at %s unreachable (%s); the store of record answers", self._where, exc)

    def _drop_stale(self) -> None:
        with self._lock:
            stale, self._stale = self._stale, set()
        try:
            for tenant, session in stale:
                self._r.delete(*self._keys(tenant, session))
        except redis.RedisError:
            with self._lock:
                self._stale |= stale
            raise

    def committed(self, changes: TxChanges) -> None:
        """A write committed: its session memories removed, then those written pushed."""
        for tenant, session, memory_id in changes.removed:
            self.remove(tenant, session, memory_id)
        for record in changes.written.values():
            self.push(record)

    def push(self, record: MemoryRecord) -> None:
        s = record.scope
        if s.session is None:
            return
        current = record.valid_to is None and record.memory_type in _TYPES
        try:
            self._drop_stale()
            for t in _TYPES:  # out of every window, into its own while current
                key = self._key(s.tenant, s.session, t)
                self._put(keys=[key, key + ":rec"],
                          args=[record.created_at.timestamp(), record.memory_id,
                                record.model_dump_json(exclude={"embedding"}), self.keep,
                                "1" if current and t is record.memory_type else "0", self.ttl])
        except redis.RedisError as exc:
            self._away(exc, s.tenant, s.session)

    def remove(self, tenant: str, session: str, memory_id: str) -> None:
        try:
            self._drop_stale()
            for t in _TYPES:
                key = self._key(tenant, session, t)
                self._put(keys=[key, key + ":rec"], args=[0, memory_id, "", self.keep, "0",
                                                          self.ttl])
        except redis.RedisError as exc:
            self._away(exc, tenant, session)

    def window(self, scope: Scope, memory_type: MemoryType, limit: int,
               until: datetime | None = None) -> list[MemoryRecord]:
        if scope.session is None or limit < 1:
            return []
        if memory_type not in _TYPES or limit > self.keep:
            return self._from_store(scope, memory_type, limit, until)
        key = self._key(scope.tenant, scope.session, memory_type)
        try:
            self._drop_stale()
            # Without scores and with undecoded responses, the members are bytes.
            members = cast("list[bytes]", self._r.zrange(key, 0, -1))
            ids = [i for i in members if i != _EMPTY.encode()]
            if not ids and not self._r.exists(key):
                records = self._fill(key, scope, memory_type)
            else:
                cached = self._r.hmget(key + ":rec", ids) if ids else []
                if any(c is None for c in cached):  # expired half-way: ask the store
                    return self._from_store(scope, memory_type, limit, until)
                records = [MemoryRecord.model_validate_json(c) for c in cached if c is not None]
        except redis.RedisError as exc:
            self._away(exc)
            return self._from_store(scope, memory_type, limit, until)
        if until is not None and records and records[-1].created_at > until:
            # A clock behind the session's newest turn (a replay): the window holds only the
            # newest, so the store answers.
            return self._from_store(scope, memory_type, limit, until)
        return _mine(records, scope, limit)

    def _from_store(self, scope: Scope, memory_type: MemoryType, limit: int,
                    until: datetime | None = None) -> list[MemoryRecord]:
        return self.records.recent_in_session(scope, memory_type, limit, exact=False,
                                              until=until)[::-1]

    def _fill(self, key: str, scope: Scope, memory_type: MemoryType) -> list[MemoryRecord]:
        """The session's whole window (any user or agent) from the store, cached; oldest first."""
        everyone = Scope(tenant=scope.tenant, session=scope.session)
        records = self._from_store(everyone, memory_type, self.keep)
        pipe = self._r.pipeline()  # MULTI/EXEC: readers see the whole window or none
        pipe.delete(key, key + ":rec")
        if records:
            pipe.zadd(key, {r.memory_id: r.created_at.timestamp() for r in records})
            pipe.hset(key + ":rec", mapping={r.memory_id: r.model_dump_json(exclude={"embedding"})
                                             for r in records})
        else:  # an empty window is cached too (a placeholder scored below any time)
            pipe.zadd(key, {_EMPTY: float("-inf")})
        pipe.expire(key, self.ttl)
        pipe.expire(key + ":rec", self.ttl)
        pipe.execute()
        return records

    def drop(self, tenant: str, session: str) -> None:
        try:
            self._drop_stale()
            self._r.delete(*self._keys(tenant, session))
        except redis.RedisError as exc:
            self._away(exc, tenant, session)

    def close(self) -> None:
        self._r.close()


class RedisAnswerCache(AnswerCache):
    """L3 answers shared by every process: one key per question, expiring after ``ttl_seconds``.
    Unreachable Redis is a miss (the fast path then searches), never an error."""

    def __init__(self, client: redis.Redis, prefix: str, ttl_seconds: int) -> None:
        self._r = client
        self.prefix = prefix
        self.ttl = max(1, int(ttl_seconds))

    def _key(self, key: AnswerKey) -> str:
        tenant, user, question = key
        digest = hashlib.sha256(composite_key(user or "", question).encode()).hexdigest()[:32]
        return f"{self.prefix}:{quote(tenant, safe='')}:answer:{digest}"

    def get(self, key: AnswerKey) -> tuple[str, str] | None:
        try:
            raw = self._r.get(self._key(key))
        except redis.RedisError as exc:
            log.warning("Redis answer cache unreachable (%s)", exc)
            return None
        if not raw:
            return None
        assert isinstance(raw, bytes)  # the client does not decode responses
        mid, _, version = raw.decode().partition("\t")
        return mid, version

    def put(self, key: AnswerKey, memory_id: str, content_hash: str) -> None:
        try:
            self._r.set(self._key(key), f"{memory_id}\t{content_hash}", ex=self.ttl)
        except redis.RedisError as exc:
            log.warning("Redis answer cache unreachable (%s)", exc)

    def drop(self, key: AnswerKey) -> None:
        try:
            self._r.delete(self._key(key))
        except redis.RedisError as exc:
            log.warning("Redis answer cache unreachable (%s)", exc)

    def drop_tenant(self, tenant: str) -> int:
        pattern = f"{self.prefix}:{quote(tenant, safe='')}:answer:*"
        gone = 0
        try:
            for chunk in _chunks(self._r.scan_iter(match=pattern, count=500), 500):
                gone += int(self._r.delete(*chunk))
        except redis.RedisError as exc:  # an erasure must not pass over a cache it missed
            raise StorageError(f"Redis answer cache unreachable: {exc}") from None
        return gone


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
