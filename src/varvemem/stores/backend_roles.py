"""The interfaces of the backends beside the store of record: the vector index, the TIER-5
archive, the TIER-1 active cache and the L3 answer cache.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where vectors are handled: reads of records need none
    import numpy as np

from ..model import MemoryRecord, MemoryType, Scope, VectorFilter
from .values import VectorAttrs, VectorChanges


class IndexFileError(Exception):
    """The persisted index cannot be used (missing, corrupted, other model)."""


class MissingIndexFileError(IndexFileError):
    """No index file yet: nothing to distrust, the index is simply built from the store."""


class VectorIndex(ABC):
    """Nearest neighbours by cosine over unit vectors, filtered on :class:`VectorAttrs` by a
    :class:`~varvemem.model.VectorFilter` (rendered from
    :func:`varvemem.filters.vector_clauses`). A :class:`~varvemem.model.SearchFilter` is one
    too; the index checks only its vector part, the store of record the rest.

    Always rebuildable from the record store; ``applied_seq`` says how far it has caught up,
    ``dirty`` how many changes a :meth:`save` would persist (0 for server indexes, which keep
    each change as it comes): after a :meth:`load` and its catch-up, the changes since the file
    was written, whichever process made them.
    """

    dim: int
    applied_seq: int = 0
    dirty: int = 0

    @abstractmethod
    def upsert(self, ids: Sequence[str], vectors: np.ndarray,
               attrs: Sequence[VectorAttrs]) -> None: ...

    @abstractmethod
    def remove(self, ids: Sequence[str]) -> None: ...

    @abstractmethod
    def search(self, query: np.ndarray, k: int, flt: VectorFilter, *,
               approximate: bool = False) -> list[tuple[str, float]]:
        """``(memory_id, cosine)`` best first, only vectors whose attrs pass ``flt``.

        ``approximate``: the caller looks for near-duplicates only (the FAQ fast path), so an
        ANN graph may answer even where a full search would be exact."""

    def apply(self, changes: VectorChanges) -> None:
        """Apply a catch-up from the change feed and note how far it got (``applied_seq``);
        a thread-safe index applies it as one step."""
        if changes.upserts:
            import numpy as np

            ids, vecs, attrs = zip(*changes.upserts)
            self.upsert(list(ids), np.stack(vecs), list(attrs))
        if changes.removals:
            self.remove(changes.removals)
        self.applied_seq = changes.seq

    def search_many(self, queries: np.ndarray, k: int,
                    filters: Sequence[VectorFilter]) -> list[list[tuple[str, float]]]:
        """:meth:`search` for each row of ``queries`` with its own filter: the update engine's
        neighbour lookups. Backends that can batch (one ANN call for all rows) override this."""
        return [self.search(q, k, f) for q, f in zip(queries, filters)]

    @abstractmethod
    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def clear(self) -> None: ...

    @property
    def uses_hnsw(self) -> bool:
        """Whether searches go through an approximate HNSW graph of this process (a server
        index's own plan is not reported: False)."""
        return False

    @property
    def saved(self) -> bool:
        """Whether this index was read from, or written to, a persisted copy that is still
        there; False for a new or rebuilt one, which a close then saves whatever ``dirty``
        says (a server index keeps each change as it comes: True)."""
        return True

    def load(self) -> None:  # noqa: B027 - server indexes keep no copy to read
        """Read the persisted copy (a no-op for server-side indexes):
        :class:`MissingIndexFileError` when there is none yet, :class:`IndexFileError` when it
        cannot be used."""

    def save(self) -> None:  # noqa: B027 - persistent servers need nothing
        """Persist what is in memory (a no-op for server-side indexes)."""

    def persist_lock(self) -> AbstractContextManager[None]:
        """Held around a catch-up and :meth:`save`, so that two processes saving one index
        file lose neither's changes (nothing to hold for server-side indexes)."""
        return nullcontext()

    def close(self) -> None:  # noqa: B027 - only server indexes hold a connection
        """Release the connection, if any."""


class Archive(ABC):
    """TIER-5: immutable objects, each a batch of archived records (embeddings included).

    An object is durable when :meth:`write` returns; the store of record then notes it. A
    record whose id is live again (restored) is ignored by readers: the live store wins.
    """

    location: str

    @abstractmethod
    def write(self, tenant: str, records: Sequence[MemoryRecord], at: datetime) -> str:
        """Store the batch; returns the object's name."""

    @abstractmethod
    def read(self, name: str) -> list[MemoryRecord]:
        """The records of one object; :class:`~varvemem.errors.ArchiveError` naming it when
        it is missing or malformed."""

    @abstractmethod
    def delete(self, name: str) -> None: ...


class ActiveCache(ABC):
    """TIER-1: the newest turns and tool calls of each session, read back in order without
    search. The default reads the store of record; a server cache (Redis) mirrors them."""

    @abstractmethod
    def push(self, record: MemoryRecord) -> None:
        """A session's memory was written (new, changed, or no longer current)."""

    @abstractmethod
    def remove(self, tenant: str, session: str, memory_id: str) -> None:
        """A session's memory left the store (deleted or archived)."""

    @abstractmethod
    def window(self, scope: Scope, memory_type: MemoryType, limit: int,
               until: datetime | None = None) -> list[MemoryRecord]:
        """The newest ``limit`` memories of the type in the session, oldest first (a None user
        or agent in ``scope`` matches any); with ``until``, none created after it."""

    @abstractmethod
    def drop(self, tenant: str, session: str) -> None: ...

    def close(self) -> None:  # noqa: B027 - only server caches hold a connection
        """Release the connection, if any."""


AnswerKey = tuple[str, "str | None", str]  # (tenant, user, normalised question)


class AnswerCache(ABC):
    """L3: questions answered well before -> (pair id, content hash). The caller checks the
    pair against the store of record on every use; this only saves the search."""

    @abstractmethod
    def get(self, key: AnswerKey) -> tuple[str, str] | None: ...

    @abstractmethod
    def put(self, key: AnswerKey, memory_id: str, content_hash: str) -> None: ...

    @abstractmethod
    def drop(self, key: AnswerKey) -> None: ...

    @abstractmethod
    def drop_tenant(self, tenant: str) -> int:
        """Forget every entry of the tenant (after deleting a user's memories); returns how
        many there were. A cache it cannot reach raises :class:`StorageError`."""

