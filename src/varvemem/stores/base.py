"""The small interfaces every backend implements: a record store and a vector index.

Engines talk only to these; nothing backend-specific lives outside its own module.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where vectors are handled: reads of records need none
    import numpy as np

from ..model import (
    HistoryEntry,
    MemoryChanges,
    MemoryRecord,
    MemoryType,
    Scope,
    SearchFilter,
    Tier,
    TTLMode,
    VectorFilter,
)


def prefix_bound(prefix: str) -> str:
    """The upper end of a range scan for the ids starting with ``prefix`` (not empty). A final
    ``9`` steps to ``a`` rather than ``:``, so that the range holds the same ids (``mem_`` and
    hex digits) under a linguistic collation as under byte order; callers still check the
    prefix itself."""
    last = prefix[-1]
    return prefix[:-1] + ("a" if last == "9" else chr(ord(last) + 1))


@dataclass(frozen=True)
class VectorAttrs:
    """The scalar fields a vector index filters on (as Milvus does with scalar fields)."""

    tenant: str
    user: str | None
    agent: str | None
    session: str | None
    memory_type: str
    tier: str
    valid: bool


@dataclass
class VectorChanges:
    """What changed in the store of record since a vector-sequence number."""

    seq: int
    upserts: list[tuple[str, np.ndarray, VectorAttrs]]
    removals: list[str]


@dataclass(frozen=True)
class Candidate:
    """What ranking needs of a memory; full records are read only for the hits kept."""

    memory_id: str
    memory_type: MemoryType
    created_at: datetime
    importance: float
    source_reliability: float
    tags: list[str]
    ttl_mode: TTLMode
    ttl_days: float | None
    score: float | None

    @classmethod
    def of(cls, r: MemoryRecord) -> Candidate:
        return cls(r.memory_id, r.memory_type, r.created_at, r.importance,
                   r.source_reliability, r.tags, r.ttl_mode, r.ttl_days, r.score)


@dataclass(frozen=True)
class Selection:
    """Which memories a lifecycle job works on, across tenants unless ``tenant`` is set.

    Every condition given must hold. Ages count from ``tier_since``, else ``created_at``.
    """

    tenant: str | None = None
    tiers: Sequence[Tier] | None = None
    types: Sequence[MemoryType] | None = None
    exclude_types: Sequence[MemoryType] = ()
    current_only: bool = True  # not superseded
    importance_above: float | None = None
    importance_below: float | None = None
    in_tier_before: datetime | None = None  # entered its tier before this
    idle_before: datetime | None = None  # last retrieved (else entered its tier) before this
    expired_at: datetime | None = None  # expires_at at or before this
    unscored_retrievals: bool = False  # retrieved since re-scoring last credited it
    decay_due_before: datetime | None = None  # neither used nor decayed since this
    not_abstracted: bool = False  # no ``experience_id`` in its metadata yet
    session: tuple[str, str] | None = None  # (tenant, session id)
    user: str | None = None  # the memories of one user (with ``tenant``)
    superseded_by: Sequence[str] | None = None  # replaced by one of these (with ``tenant``)
    # And at least one of these holds (when given): several jobs' criteria in one walk.
    any_of: Sequence[Selection] = ()

    def matches(self, r: MemoryRecord) -> bool:
        """Whether ``r`` is selected: the test the stores' SQL makes, on a record in memory
        (a dry run's planned state, ``engines/lifecycle.py``)."""
        since = r.tier_since or r.created_at
        used = r.last_retrieved_at or since
        return not (
            (self.tenant is not None and r.scope.tenant != self.tenant)
            or (self.tiers is not None and r.tier not in self.tiers)
            or (self.types is not None and r.memory_type not in self.types)
            or r.memory_type in self.exclude_types
            or (self.current_only and r.valid_to is not None)
            or (self.importance_above is not None and not r.importance > self.importance_above)
            or (self.importance_below is not None and not r.importance < self.importance_below)
            or (self.in_tier_before is not None and not since < self.in_tier_before)
            or (self.idle_before is not None and not used < self.idle_before)
            or (self.expired_at is not None
                and (r.expires_at is None or r.expires_at > self.expired_at))
            or (self.unscored_retrievals and r.retrieval_count <= r.scored_retrievals)
            or (self.decay_due_before is not None
                and not max(used, r.decayed_at or used) < self.decay_due_before)
            or (self.not_abstracted and r.metadata.get("experience_id") is not None)
            or (self.session is not None
                and (r.scope.tenant, r.scope.session) != self.session)
            or (self.user is not None and r.scope.user != self.user)
            or (self.superseded_by is not None and r.superseded_by not in self.superseded_by)
            or (bool(self.any_of) and not any(s.matches(r) for s in self.any_of)))


@dataclass(frozen=True)
class SessionInfo:
    """A TIER-1 session: open until closed or idle."""

    tenant: str
    session: str
    started_at: datetime
    last_active_at: datetime
    ended_at: datetime | None = None
    end_reason: str | None = None


@dataclass(frozen=True)
class ArchivedRef:
    """Where an archived memory's record lies."""

    memory_id: str
    tenant: str
    object: str
    from_tier: str
    archived_at: datetime


@dataclass(frozen=True)
class ApiKey:
    """An API key's stored form: only a hash of its secret is kept."""

    key_id: str
    tenant: str
    role: str  # read, write or admin
    name: str
    secret_hash: str  # SHA-256 hex of the secret
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None


@dataclass(frozen=True)
class Login:
    """A random token standing for an API key, only its hash stored: an inspector session
    (``kind`` ``session``, with its CSRF token, ``seen_at`` its last use) or a one-time login
    link (``link``)."""

    token_hash: str  # SHA-256 hex of the token
    kind: str  # session or link
    key_id: str
    csrf: str
    created_at: datetime
    seen_at: datetime


@dataclass(frozen=True)
class InboxEvent:
    """A webhook delivery, committed before it is acknowledged and turned into memories later.

    ``status``: ``pending`` (waiting), ``processing`` (claimed by ``worker`` until
    ``lease_until``), ``done`` (its memories are ``memory_ids``) or ``failed`` (``error`` says
    why; a malformed event, or one that failed ``attempts`` times)."""

    event_id: int
    tenant: str
    source: str  # the configured webhook source's name
    kind: str  # harness, github, alertmanager, generic
    delivery: str  # the sender's delivery id, else a hash of the body
    body: str
    headers: dict[str, str]
    received_at: datetime
    status: str = "pending"
    attempts: int = 0
    worker: str | None = None
    lease_until: datetime | None = None
    processed_at: datetime | None = None
    error: str | None = None
    memory_ids: tuple[str, ...] = ()


@dataclass
class TxChanges:
    """What a transaction changed that a mirror of the store (the Redis session cache) must
    hear of once it commits."""

    written: dict[str, MemoryRecord] = field(default_factory=dict)  # session memories, by id
    removed: list[tuple[str, str, str]] = field(default_factory=list)  # (tenant, session, id)

    def wrote(self, record: MemoryRecord) -> None:
        """A memory was inserted or rewritten (new, changed or superseded)."""
        if record.scope.session is not None:
            self.written[record.memory_id] = record

    def left(self, tenant: str, session: str | None, memory_id: str) -> None:
        """A memory left the live tables (deleted or archived)."""
        if session is not None:
            self.written.pop(memory_id, None)
            self.removed.append((tenant, session, memory_id))


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
