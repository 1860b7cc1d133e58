"""The small value types the store interfaces pass: what a vector index filters on, ranking
candidates, lifecycle selections (:class:`~varvemem.filters.Selection`, written with the other
filters), sessions, archive references, API keys, logins, inbox events, and what a transaction
changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where vectors are handled: reads of records need none
    import numpy as np

from ..filters import Selection as Selection
from ..model import MemoryRecord, MemoryType, TTLMode


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

