"""The memories table's columns, shared by the SQL stores (SQLite, PostgreSQL).

Each store's dialect (``_sql.Dialect``) encodes the plain Python values of :func:`values` its own
way (SQLite: JSON text and epoch seconds; PostgreSQL: arrays, ``jsonb`` and ``timestamptz``) and
decodes them back before :func:`record`. A new column: its name here, in :func:`values` and
:func:`record` (and in a set below if it is a time or JSON), and a migration for each database.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..model import MemoryRecord, MemoryType, Scope, Tier, TTLMode

if TYPE_CHECKING:
    import numpy as np

COLUMNS = (
    "memory_id", "tenant", "user_id", "agent_id", "session_id", "memory_type", "tier", "content",
    "content_hash", "source", "source_reliability", "importance", "tags", "keywords", "related",
    "created_at", "updated_at", "last_retrieved_at", "retrieval_count", "expires_at", "ttl_mode",
    "ttl_days", "valid_from", "valid_to", "superseded_by", "question", "answer", "score",
    "metadata", "context", "tier_since", "scored_retrievals", "decayed_at",
)
SELECT = ", ".join(COLUMNS)
TIME_COLUMNS = frozenset({"created_at", "updated_at", "last_retrieved_at", "expires_at",
                          "valid_from", "valid_to", "tier_since", "decayed_at"})
JSON_COLUMNS = frozenset({"tags", "keywords", "related", "metadata", "context"})
# JSON columns that PostgreSQL keeps as a text[] (GIN-indexed), not as jsonb.
ARRAY_COLUMNS = frozenset({"tags"})
# Columns the vector index keeps a copy of (VectorAttrs): changing one feeds its catch-up.
VECTOR_ATTRS = frozenset({"tenant", "user_id", "agent_id", "session_id", "memory_type", "tier",
                          "valid_to"})
# Model fields whose column has another name (the rest are named alike).
FIELD_COLUMNS = {"related_memory_ids": ("related",),
                 "scope": ("tenant", "user_id", "agent_id", "session_id"),
                 "context_before": ("context",), "context_after": ("context",)}
# Columns whose change re-indexes the row's full text.
FTS_SOURCES = frozenset({"content", "tags", "context", "created_at"})


def columns_for(fields: Any) -> list[str]:
    """The columns to write for changed model ``fields`` (all columns for ``None``)."""
    if fields is None:
        return list(COLUMNS)
    return list(dict.fromkeys(c for f in fields for c in FIELD_COLUMNS.get(f, (f,))))


def values(r: MemoryRecord) -> dict[str, Any]:
    """Column name -> plain Python value (datetimes, lists, dicts) of ``r``."""
    s = r.scope
    return {
        "memory_id": r.memory_id, "tenant": s.tenant, "user_id": s.user, "agent_id": s.agent,
        "session_id": s.session, "memory_type": r.memory_type.value, "tier": r.tier.value,
        "content": r.content, "content_hash": r.content_hash, "source": r.source,
        "source_reliability": r.source_reliability, "importance": r.importance,
        "tags": r.tags, "keywords": r.keywords, "related": r.related_memory_ids,
        "created_at": r.created_at, "updated_at": r.updated_at,
        "last_retrieved_at": r.last_retrieved_at, "retrieval_count": r.retrieval_count,
        "expires_at": r.expires_at, "ttl_mode": r.ttl_mode.value, "ttl_days": r.ttl_days,
        "valid_from": r.valid_from, "valid_to": r.valid_to, "superseded_by": r.superseded_by,
        "question": r.question, "answer": r.answer, "score": r.score, "metadata": r.metadata,
        "context": {"before": r.context_before, "after": r.context_after},
        "tier_since": r.tier_since, "scored_retrievals": r.scored_retrievals,
        "decayed_at": r.decayed_at,
    }


# A vector's stored bytes: float32 as they are (what every release before half precision
# wrote: a multiple of 4 bytes), or this tag and little-endian float16 (an odd length, so the
# two never mix up whatever the dimension).
_F16 = b"h"


def vector_bytes(vector: np.ndarray, dtype: str) -> bytes:
    """How the SQL stores keep an embedding: ``dtype`` ``f32`` or ``f16``
    (``store.record_vector_dtype``)."""
    import numpy as np

    if dtype == "f16":
        return _F16 + np.asarray(vector, "<f2").tobytes()
    return np.asarray(vector, np.float32).tobytes()


def vector_array(blob: bytes) -> np.ndarray:
    """A stored embedding as a float32 array."""
    import numpy as np

    if len(blob) % 2 and blob[:1] == _F16:
        return np.frombuffer(blob, "<f2", offset=1).astype(np.float32)
    return np.frombuffer(blob, np.float32)


def fill_vectors(rows: Sequence[tuple[str, bytes]], row_of: Mapping[str, int], out: np.ndarray,
                 found: np.ndarray) -> None:
    """Write each stored embedding of ``rows`` (id, blob) into ``out`` at its id's row in
    ``row_of`` (cast to ``out``'s dtype) and mark it ``found``; ids not there are skipped.
    Blobs of one length are decoded together: one numpy cast, not one a row."""
    import numpy as np

    by_length: dict[int, tuple[list[int], list[bytes]]] = {}
    for mid, blob in rows:
        row = row_of.get(mid)
        if row is not None:
            at, blobs = by_length.setdefault(len(blob), ([], []))
            at.append(row)
            blobs.append(blob)
    for length, (at, blobs) in by_length.items():
        raw = np.frombuffer(b"".join(blobs), np.uint8).reshape(len(blobs), length)
        # an odd length is the f16 tag and 2 bytes a dimension (see vector_bytes)
        out[at] = raw[:, 1:].view("<f2") if length % 2 else raw.view("<f4")
        found[at] = True


def _floats(blob: bytes) -> list[float]:
    """A stored embedding as floats (the standard library: no numpy on the record path)."""
    if len(blob) % 2 and blob[:1] == _F16:
        return list(struct.unpack(f"<{(len(blob) - 1) // 2}e", blob[1:]))
    floats = array("f")
    floats.frombytes(blob)
    return floats.tolist()


def record(v: dict[str, Any], embedding: bytes | None = None) -> MemoryRecord:
    """The record of decoded column values ``v`` (as :func:`values` gives them)."""
    ctx = v["context"]
    return MemoryRecord.model_construct(
        memory_id=v["memory_id"], content=v["content"],
        memory_type=MemoryType(v["memory_type"]), tier=Tier(v["tier"]),
        scope=Scope(tenant=v["tenant"], user=v["user_id"], agent=v["agent_id"],
                    session=v["session_id"]),
        source=v["source"], source_reliability=v["source_reliability"],
        importance=v["importance"], tags=v["tags"], keywords=v["keywords"],
        related_memory_ids=v["related"],
        embedding=None if embedding is None else _floats(embedding),
        created_at=v["created_at"], updated_at=v["updated_at"],
        last_retrieved_at=v["last_retrieved_at"], retrieval_count=v["retrieval_count"],
        expires_at=v["expires_at"], ttl_mode=TTLMode(v["ttl_mode"]), ttl_days=v["ttl_days"],
        valid_from=v["valid_from"], valid_to=v["valid_to"],
        superseded_by=v["superseded_by"], question=v["question"], answer=v["answer"],
        score=v["score"], content_hash=v["content_hash"], metadata=v["metadata"],
        context_before=ctx.get("before", []), context_after=ctx.get("after", []),
        tier_since=v["tier_since"], scored_retrievals=v["scored_retrievals"],
        decayed_at=v["decayed_at"],
    )
