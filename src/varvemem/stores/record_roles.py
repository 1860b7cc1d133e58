"""The store of record's interfaces: a transaction's writes, and the roles each consumer is
typed with (memories, full text, the change feed, history, sessions, archive references, API
keys, the webhook inbox), all of which :class:`RecordStore` plays.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where vectors are handled: reads of records need none
    import numpy as np

from ..model import HistoryEntry, MemoryChanges, MemoryRecord, MemoryType, Scope, SearchFilter
from .values import (
    ApiKey,
    ArchivedRef,
    Candidate,
    InboxEvent,
    Login,
    Selection,
    SessionInfo,
    TxChanges,
    VectorChanges,
)


class ChangeSubscriber(ABC):
    """Told of each committed write (by :meth:`varvemem.stores.Stores.transaction`)."""

    @abstractmethod
    def committed(self, changes: TxChanges) -> None: ...


class StoreTx(ABC):
    """One atomic unit of writes: all of it lands, or none of it. ``changes`` records what
    it changed, for the subscribers told after the commit."""

    changes: TxChanges

    @abstractmethod
    def insert(self, record: MemoryRecord, vector: np.ndarray | None,
               statement: bytes | None = None) -> None:
        """Add the record, with its vector and what the rules parsed of it (``statement``,
        see :mod:`varvemem.engines.statements`; read back by ``Memories.statements``)."""

    @abstractmethod
    def update(self, record: MemoryRecord, vector: np.ndarray | None = None,
               fields: Collection[str] | None = None) -> None:
        """Rewrite the record (matched by id); ``vector`` None keeps the stored one.

        ``fields`` (model field names) limits the write to those, e.g. ``["related_memory_ids"]``.
        """

    @abstractmethod
    def set_statements(self, tenant: str, statements: Mapping[str, bytes]) -> None:
        """Store what the rules parse of each memory (by id) now, in place of a statement
        parsed by other rules or from another text; nothing else of the memory changes."""

    @abstractmethod
    def delete(self, tenant: str, memory_id: str) -> None: ...

    @abstractmethod
    def add_history(self, entry: HistoryEntry, tenant: str) -> None: ...

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None: ...

    @abstractmethod
    def touch_session(self, tenant: str, session: str, at: datetime) -> None:
        """Note activity in a session (opening it, or re-opening an ended one)."""

    @abstractmethod
    def end_session(self, tenant: str, session: str, at: datetime, reason: str) -> None: ...

    @abstractmethod
    def archive(self, tenant: str, memory_id: str, obj: str, from_tier: str,
                at: datetime) -> None:
        """Remove the memory from the live tables (as :meth:`delete`) and note where the
        archive keeps it."""

    @abstractmethod
    def unarchive(self, tenant: str, memory_id: str) -> None:
        """Forget the archive reference (after a restore has inserted the record again)."""

    @abstractmethod
    def purge_history(self, tenant: str, memory_id: str) -> int:
        """Delete the memory's history (its old contents), for erasing a user; returns how
        many entries there were."""

    @abstractmethod
    def complete_event(self, event_id: int, worker: str, memory_ids: Sequence[str],
                       at: datetime) -> bool:
        """Mark an inbox event done with its memories, in the same transaction as them.
        False (and the caller rolls back) when ``worker`` no longer holds its lease."""


# -- the store of record's roles: each consumer is typed with the one it uses ----------------
class Memories(ABC):
    """Reading memories: by id, hash, source or session, filtered, selected, counted."""

    @abstractmethod
    def get_many(self, tenant: str, ids: Sequence[str],
                 with_embedding: bool = False) -> dict[str, MemoryRecord]: ...

    def get(self, tenant: str, memory_id: str, with_embedding: bool = False) -> MemoryRecord | None:
        return self.get_many(tenant, [memory_id], with_embedding).get(memory_id)

    def contents(self, tenant: str, ids: Sequence[str]) -> dict[str, str]:
        """The texts of ``ids`` (those that exist): what a second look at candidates reads,
        without building whole records."""
        return {i: r.content for i, r in self.get_many(tenant, ids).items()}

    def statements(self, tenant: str, ids: Sequence[str]) -> dict[str, bytes]:
        """What the rules stored of ``ids`` when they were added (those that have it): a
        store that keeps none returns nothing, and the rules parse the texts."""
        return {}

    @abstractmethod
    def find_by_hash(self, tenant: str, content_hash: str) -> list[MemoryRecord]:
        """Current (not superseded) memories with this content hash."""

    @abstractmethod
    def find_by_source(self, tenant: str, source: str,
                       include_superseded: bool = False) -> list[MemoryRecord]:
        """Memories whose ``source`` is exactly ``source`` (current ones unless asked)."""

    @abstractmethod
    def recent_in_session(self, scope: Scope, memory_type: MemoryType, limit: int,
                          exact: bool = True, until: datetime | None = None
                          ) -> list[MemoryRecord]:
        """The newest current memories of ``memory_type`` in ``scope``'s session, newest first;
        none when the scope has no session. ``exact``: the same user and agent (None included);
        else a None user or agent matches any. ``until``: none created after it."""

    @abstractmethod
    def filter(self, ids: Sequence[str], flt: SearchFilter, now: datetime) -> list[Candidate]:
        """The memories among ``ids`` that pass ``flt`` at ``now``, as ranking candidates."""

    @abstractmethod
    def ids_with_prefix(self, tenant: str, prefix: str, limit: int) -> list[str]:
        """The tenant's memory ids that start with ``prefix``, live, archived or only left in
        history (deleted), sorted, at most ``limit``. A range scan of the id indexes
        (``prefix <= id <`` :func:`prefix_bound`), never a scan of the table."""

    @abstractmethod
    def record_retrieval(self, tenant: str, ids: Sequence[str], when: datetime) -> None: ...

    @abstractmethod
    def iter_records(self, tenant: str | None = None,
                     with_embedding: bool = False) -> Iterator[MemoryRecord]: ...

    @abstractmethod
    def tenants(self) -> list[str]:
        """Every tenant with a live or archived memory."""

    @abstractmethod
    def select(self, sel: Selection, limit: int, after: str = "") -> list[MemoryRecord]:
        """Up to ``limit`` memories matching ``sel`` with ids above ``after``, by id."""

    @abstractmethod
    def stats(self, tenant: str) -> dict[str, Any]: ...

    @abstractmethod
    def created_by_day(self, tenant: str, since: datetime) -> tuple[int, list[tuple[date, int]]]:
        """How many of the tenant's memories were created before ``since``, and how many on
        each (UTC) day from it on that had any, oldest first: one indexed ``GROUP BY``."""

    @abstractmethod
    def tier_type_counts(self, tenant: str) -> dict[tuple[str, str], int]:
        """The tenant's live memories by ``(tier, memory type)``."""

    @abstractmethod
    def latest(self, tenant: str, limit: int) -> list[MemoryRecord]:
        """The tenant's ``limit`` most recently created memories, newest first."""


class TextIndex(ABC):
    """Full-text and tag search over the memories."""

    @abstractmethod
    def keyword_search(self, tokens: Sequence[str], flt: SearchFilter, now: datetime,
                       limit: int, context_weight: float = 0.5,
                       max_docs: int | None = None,
                       scan_docs: int | None = None) -> list[tuple[str, float]]:
        """``(memory_id, bm25)`` best first; bm25 positive, higher is better. ``tokens`` are
        :func:`varvemem.text.index_terms`; a match in a memory's context (neighbouring turns,
        date) counts ``context_weight`` times a match in its own text. Terms found in more than
        ``max_docs`` memories are left out (the rarest one is kept). ``scan_docs``: a store may
        bound the cost of terms found in more memories than this in a big tenant (SQLite reads
        the rows only such terms match from their newest postings; smaller tenants and rare
        terms rank exactly); None ranks every matching row."""

    @abstractmethod
    def tag_search(self, tags: Sequence[str], flt: SearchFilter, now: datetime,
                   limit: int) -> list[tuple[str, int]]:
        """``(memory_id, matched tag count)`` best first."""

    @abstractmethod
    def known_tags(self, tenant: str, candidates: Sequence[str]) -> list[str]:
        """Those of ``candidates`` that some memory of the tenant carries as a tag."""


class ChangeFeed(ABC):
    """The sequence-numbered feed a vector index catches up from, and the meta values."""

    @abstractmethod
    def get_meta(self, key: str) -> str | None: ...

    @abstractmethod
    def put_meta(self, key: str, value: str) -> None:
        """Write a meta value outside the change feed (no sequence number is used): derived
        bookkeeping, such as how far a shared vector index has caught up."""

    @abstractmethod
    def vector_seq(self) -> int: ...

    @abstractmethod
    def vector_changes(self, since: int) -> VectorChanges: ...

    @abstractmethod
    def memory_changes(self, tenant: str, since: int,
                       types: Sequence[MemoryType] | None = None) -> MemoryChanges:
        """The tenant's memories (of ``types``) written since the sequence number ``since``,
        as they are now, and the ids removed since, read in one snapshot with the sequence
        number it reached: the cost is what was written since, not the tenant's size."""

    @abstractmethod
    def stored_vectors(self, ids: Sequence[str], out: np.ndarray) -> np.ndarray:
        """Write the stored vector of ``ids[i]`` into row ``i`` of ``out`` (cast to its dtype;
        an empty id is skipped) and return the boolean mask of the ids found: how a local
        index whose graph file holds no vectors gets them back from the store of record."""


class Histories(ABC):
    """Each memory's history (its old contents)."""

    @abstractmethod
    def history(self, tenant: str, memory_id: str) -> list[HistoryEntry]: ...

    @abstractmethod
    def recent_history(self, tenant: str, actions: Sequence[str], limit: int
                       ) -> list[HistoryEntry]:
        """The tenant's ``limit`` latest history entries of ``actions``, newest first."""

    @abstractmethod
    def history_of(self, tenant: str, action: str) -> Iterator[HistoryEntry]:
        """Every history entry of the tenant with ``action``, oldest first (one index range,
        read in pages: the cost is the entries, not the tenant's history)."""


class Sessions(ABC):
    """The TIER-1 sessions, open or ended."""

    @abstractmethod
    def sessions(self, tenant: str | None = None, open_only: bool = True,
                 idle_before: datetime | None = None) -> list[SessionInfo]: ...


class ArchiveRefs(ABC):
    """Where the archive keeps each archived memory."""

    @abstractmethod
    def archived(self, tenant: str, ids: Sequence[str] | None = None) -> list[ArchivedRef]:
        """Archive references of the tenant (of ``ids`` only, when given)."""


class KeyStore(ABC):
    """The service's API keys, and the logins that stand for them (shared by every process
    of a deployment, as the keys are)."""

    @abstractmethod
    def put_key(self, key: ApiKey) -> None: ...

    @abstractmethod
    def get_key(self, key_id: str) -> ApiKey | None: ...

    @abstractmethod
    def keys(self, tenant: str | None = None) -> list[ApiKey]: ...

    @abstractmethod
    def revoke_key(self, key_id: str, at: datetime) -> bool:
        """Revoke a key; False when there is no such key (or it was revoked already)."""

    @abstractmethod
    def put_login(self, login: Login) -> None: ...

    @abstractmethod
    def get_login(self, token_hash: str) -> Login | None: ...

    @abstractmethod
    def see_login(self, token_hash: str, at: datetime) -> None:
        """Note a use of the login at ``at`` (its ``seen_at``)."""

    @abstractmethod
    def drop_login(self, token_hash: str) -> bool:
        """Delete a login; False when there was none (so of several processes dropping one
        link at once, one gets True)."""

    @abstractmethod
    def prune_logins(self, kind: str, seen_before: datetime) -> int:
        """Delete the logins of ``kind`` last seen before ``seen_before``; how many."""


class InboxQueue(ABC):
    """The webhook inbox: durable events, leased by workers (done in :class:`StoreTx`)."""

    @abstractmethod
    def enqueue_event(self, event: InboxEvent) -> tuple[int, bool]:
        """Commit ``event`` (its ``event_id`` is ignored) durably; returns (its id, True), or the
        id of the event already stored with the same (tenant, source, delivery) and False. A
        redelivery of an event that ``failed`` re-arms it (pending, no attempts): True."""

    @abstractmethod
    def claim_events(self, worker: str, limit: int, now: datetime, lease_seconds: float,
                     max_attempts: int) -> list[InboxEvent]:
        """Lease up to ``limit`` pending events (or ones whose lease ran out: their worker
        died), oldest first, so that no two workers hold the same event. An event leased
        ``max_attempts`` times already is marked failed instead."""

    @abstractmethod
    def renew_leases(self, worker: str, event_ids: Sequence[int], until: datetime) -> set[int]:
        """Extend ``worker``'s leases on these events to ``until``; returns the ids it still
        held (an event whose lease ran out and went to another worker is not among them)."""

    @abstractmethod
    def release_event(self, event_id: int, worker: str, now: datetime, error: str,
                      final: bool, retry_at: datetime | None = None) -> None:
        """Give a leased event back after a failed attempt: ``pending`` again (claimed no
        sooner than ``retry_at``), or ``failed`` for good when ``final`` (a malformed event
        retries in vain)."""

    @abstractmethod
    def inbox(self, tenant: str | None = None, status: str | None = None, limit: int = 100,
              after: int = 0) -> list[InboxEvent]:
        """Inbox events by id, ``after`` the given id."""

    @abstractmethod
    def inbox_counts(self, tenant: str | None = None) -> dict[str, int]:
        """How many events (of ``tenant``, else of every tenant) are in each status."""

    @abstractmethod
    def retry_events(self, tenant: str, event_ids: Sequence[int] | None = None) -> list[int]:
        """Re-arm the tenant's ``failed`` events (those of ``event_ids``, or all): pending, no
        attempts, no error. Returns their ids; other events are left as they are."""

    @abstractmethod
    def prune_inbox(self, processed_before: datetime, tenant: str | None = None) -> int:
        """Drop the body and headers of ``done`` events processed before the given time; the
        row stays, so a late redelivery is still known. Returns how many were pruned."""

    @abstractmethod
    def prunable_inbox(self, processed_before: datetime, tenant: str | None = None) -> int:
        """How many events :meth:`prune_inbox` would prune (nothing is changed)."""

    @abstractmethod
    def erase_events(self, tenant: str, event_ids: Sequence[int], error: str) -> int:
        """Drop the body and headers of these events of ``tenant`` now (erasure); one not done
        yet becomes ``failed`` with ``error``, so no worker turns it into memories. The rows
        stay (a redelivery is still known). Returns how many held a payload."""


class RecordStore(Memories, TextIndex, ChangeFeed, Histories, Sessions, ArchiveRefs, KeyStore,
                  InboxQueue):
    """The system of record: every role above, and the transactions that write them."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[StoreTx]: ...

    @abstractmethod
    def purge_deleted(self, tenant: str) -> bool:
        """After an erasure: leave no byte of the rows deleted where the store keeps them
        (an inverted index keeps deleted terms until its segments merge, free space keeps old
        bytes, a write-ahead log keeps old pages, dead rows stay until vacuumed). False when
        a part could not be done now (a reader held the log); what no store can reach
        (backups, archived logs) is said in the docs."""

    @abstractmethod
    def close(self) -> None: ...

