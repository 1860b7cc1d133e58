"""The embedded defaults of the caches: the answer cache as a dict in this process, the active
cache read from the store of record.
"""

from __future__ import annotations

import threading
from datetime import datetime

from ..model import MemoryRecord, MemoryType, Scope
from .backend_roles import ActiveCache, AnswerCache, AnswerKey
from .record_roles import Memories


class LocalAnswerCache(AnswerCache):
    """The embedded default: a dict in this process, the oldest entry out past ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._d: dict[AnswerKey, tuple[str, str]] = {}
        self._lock = threading.Lock()  # asks may run on several threads

    def get(self, key: AnswerKey) -> tuple[str, str] | None:
        with self._lock:
            return self._d.get(key)

    def put(self, key: AnswerKey, memory_id: str, content_hash: str) -> None:
        if self.size <= 0:
            return
        with self._lock:
            if key not in self._d and len(self._d) >= self.size:
                self._d.pop(next(iter(self._d)))
            self._d[key] = (memory_id, content_hash)

    def drop(self, key: AnswerKey) -> None:
        with self._lock:
            self._d.pop(key, None)

    def drop_tenant(self, tenant: str) -> int:
        with self._lock:
            gone = [k for k in self._d if k[0] == tenant]
            for key in gone:
                del self._d[key]
        return len(gone)


class StoreActiveCache(ActiveCache):
    """The embedded default: the store of record already keeps each session in order."""

    def __init__(self, records: Memories) -> None:
        self.records = records

    def push(self, record: MemoryRecord) -> None:
        pass

    def remove(self, tenant: str, session: str, memory_id: str) -> None:
        pass

    def window(self, scope: Scope, memory_type: MemoryType, limit: int,
               until: datetime | None = None) -> list[MemoryRecord]:
        return self.records.recent_in_session(scope, memory_type, limit, exact=False,
                                              until=until)[::-1]

    def drop(self, tenant: str, session: str) -> None:
        pass
