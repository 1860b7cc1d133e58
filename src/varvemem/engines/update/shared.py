"""What the parts of the update engine share, and the other engines write with: the history
entry of a change (:func:`record_change`), a memory superseded (:func:`supersede`), the
memories a deletion leaves without a successor (:func:`orphans`, :func:`reinstate`), what a
new memory takes of those it supersedes (:func:`inherit`, :func:`succession`,
:func:`created`), content hashes, ids, the text a vector is computed from, the near-duplicate
test, a draft on its way through the pipeline (:class:`Prepared`) and :class:`WriteBase`, what
every part holds.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from ...embeddings import Embedder
from ...llm import ChatClient
from ...model import (
    AddResult,
    Draft,
    HistoryAction,
    HistoryEntry,
    MemoryRecord,
    MemoryType,
    normalise_tags,
)
from ...settings import UpdateSettings, views
from ...stores import StoreTx, parts
from ...stores.base import RecordStore, Selection
from ...text import analyse, identifiers
from .. import claims

ACTOR = "update-engine"
_VALIDITY = ("valid_to", "superseded_by", "updated_at")
_PAGE = 500  # ids per query when many memories are read by a list of ids


def content_hash(content: str) -> str:
    """Hash of the normalised content (:func:`..claims.normalise`): case, width, punctuation
    variants (ASCII/CJK), trailing punctuation and spacing do not matter."""
    return hashlib.sha256(claims.normalise(content).encode("utf-8")).hexdigest()[:32]



def record_change(tx: StoreTx, rec: MemoryRecord, action: HistoryAction, at: datetime, actor: str,
                  reason: str = "", old: dict[str, Any] | None = None,
                  new: dict[str, Any] | None = None) -> None:
    """Write one entry of ``rec``'s history (every history write of the write path)."""
    tx.add_history(HistoryEntry(memory_id=rec.memory_id, action=action, at=at, actor=actor,
                                reason=reason, old=old, new=new), rec.scope.tenant)


def jsonable(v: Any) -> Any:
    if hasattr(v, "value"):
        return v.value
    if isinstance(v, datetime):
        return v.isoformat()
    return json.loads(json.dumps(v, default=str))


def supersede(tx: StoreTx, old: MemoryRecord, successor: MemoryRecord | None, reason: str,
              actor: str, now: datetime) -> None:
    """Invalidate ``old`` (kept, no longer served) and record why in its history.

    It is valid until its successor is (``valid_to`` = the successor's ``valid_from``), or
    until ``now`` without one. A successor backdated before ``old`` began leaves ``old`` an
    empty validity (``valid_to`` = its ``valid_from``): it is recorded as never true.
    """
    before = {"valid_to": None, "superseded_by": old.superseded_by}
    end = successor.valid_from if successor is not None else now
    old.valid_to = max(end, old.valid_from)
    old.superseded_by = successor.memory_id if successor is not None else None
    old.updated_at = now
    tx.update(old, fields=_VALIDITY)
    record_change(tx, old, "supersede", now, actor, reason, old=before,
                  new={"valid_to": old.valid_to.isoformat(), "superseded_by": old.superseded_by})


@dataclass(frozen=True)
class Orphan:
    """A memory whose successor is about to be deleted, and what replaces it then: the first
    successor down the chain that stays (``successor``), or nothing (current again)."""

    record: MemoryRecord
    successor: str | None


def replaced_by(records: RecordStore, tenant: str, ids: Iterable[str]) -> list[MemoryRecord]:
    """The tenant's memories superseded by one of ``ids`` (the ``superseded_by`` index)."""
    wanted = sorted(ids)
    found: list[MemoryRecord] = []
    for i in range(0, len(wanted), _PAGE):
        sel = Selection(tenant=tenant, current_only=False, superseded_by=wanted[i:i + _PAGE])
        after = ""
        while page := records.select(sel, _PAGE, after):
            found += page
            after = page[-1].memory_id
    return found


def orphans(records: RecordStore, tenant: str, gone: Mapping[str, MemoryRecord]) -> list[Orphan]:
    """The memories that ``gone`` (about to be deleted, by id) replaced and that stay: nothing
    may name a deleted memory as its replacement (:func:`reinstate` them in the deletion's
    transaction)."""
    stay = [r for r in replaced_by(records, tenant, gone) if r.memory_id not in gone]

    def past(memory_id: str | None) -> str | None:
        seen: set[str] = set()
        while memory_id is not None and memory_id in gone and memory_id not in seen:
            seen.add(memory_id)
            memory_id = gone[memory_id].superseded_by
        return memory_id

    after = {r.memory_id: past(r.superseded_by) for r in stay}
    wanted = sorted({s for s in after.values() if s is not None})
    exist = set(records.get_many(tenant, wanted)) | \
        {a.memory_id for a in records.archived(tenant, wanted)} if wanted else set()
    return [Orphan(r, s if s in exist and s not in gone else None) for r, s in
            ((r, after[r.memory_id]) for r in stay)]


def reinstate(tx: StoreTx, orphaned: Sequence[Orphan], now: datetime, actor: str) -> None:
    """Point each orphan at its new successor, or make it current again, with history."""
    for o in orphaned:
        old, rec = o.record, o.record.model_copy()
        before = {"valid_to": jsonable(old.valid_to), "superseded_by": old.superseded_by}
        rec.superseded_by, rec.updated_at = o.successor, now
        if o.successor is None:
            rec.valid_to = None
        tx.update(rec, fields=_VALIDITY)
        why = f"its successor {old.superseded_by} was deleted"
        record_change(tx, rec, "supersede" if o.successor else "restore", now, actor,
                      f"{why}; {o.successor} replaces it" if o.successor else
                      f"{why}: current again", old=before,
                      new={"valid_to": jsonable(rec.valid_to), "superseded_by": o.successor})


def inherit(new: MemoryRecord, olds: Sequence[MemoryRecord]) -> None:
    """``new`` takes the tags of the memories it supersedes, after its own: a search by the
    old fact's tags still finds the current one. An identifier tag the old content produced
    (``eks-stg-2``) stays behind unless the new content names it too: it describes the old
    statement, not the new one."""
    own = set(normalise_tags(identifiers(new.content)))
    for o in olds:
        theirs = set(normalise_tags(identifiers(o.content))) - own
        new.tags = normalise_tags([*new.tags, *(t for t in o.tags if t not in theirs)])


def succession(reason: str, superseded: dict[str, str]) -> str:
    """A new memory's create reason: its own, then which memories it supersedes and why."""
    by_why: dict[str, list[str]] = {}
    for mid, why in superseded.items():
        by_why.setdefault(why, []).append(mid)
    return "; ".join([*([reason] if reason else []),
                      *(f"supersedes {', '.join(ids)}: {why}" for why, ids in by_why.items())])


def created(superseded: Sequence[str], own_tags: Sequence[str] | None = None
            ) -> dict[str, Any] | None:
    """A create entry's ``new`` as stored: the ids the memory supersedes, when it does, and
    the tags it had before it took theirs (:func:`inherit`; an erasure of one of them takes
    back only what it gave). The record itself is not written again: it is the row, and
    what it was at creation follows from the row and the entries after
    (``ReadEngine.history`` shows it, :func:`..timeline.as_created`)."""
    if not superseded:
        return None
    return {"supersedes": list(superseded),
            **({"own_tags": list(own_tags)} if own_tags is not None else {})}


def embedding_text(r: MemoryRecord, context_turns: int) -> str:
    """What a memory's vector is computed from: its content, then up to ``context_turns`` of
    the turns before it (contextual keys: "Yes, every Sunday" is found by what it answers). A
    Q&A pair is embedded by its question: a new question is matched to the questions asked
    before (seed 2's matcher; the L3 fast path), while full text still sees the answer."""
    if r.memory_type is MemoryType.QA and r.question:
        return r.question
    return "\n".join([r.content, *r.context_before[:context_turns]])


def _key_text(r: MemoryRecord) -> str:
    """What near-duplicates are compared on: a Q&A pair's question, else the content."""
    return r.question if r.memory_type is MemoryType.QA and r.question else r.content


def near_duplicate(cfg: UpdateSettings, r: MemoryRecord, cos: float, rec: MemoryRecord) -> bool:
    """Is ``r`` a near duplicate of ``rec``: the same normalised key text, or close in
    meaning and words; never when their value-like parts differ (``merge_value_guard``)."""
    a, b = _key_text(r), _key_text(rec)
    near = claims.normalise(a) == claims.normalise(b) or (
        cos >= cfg.near_duplicate_threshold
        and word_overlap(a, b) >= cfg.near_duplicate_overlap)
    # The guard last: it parses both texts, and most candidates are not near at all.
    return near and not (cfg.merge_value_guard
                         and claims.value_set(a) != claims.value_set(b))



def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the analysed words of two texts, in 0..1."""
    x, y = set(analyse(a)), set(analyse(b))
    return len(x & y) / len(x | y) if x | y else 1.0


def new_id() -> str:
    return "mem_" + uuid.uuid4().hex


@dataclass
class Turn:
    """Where a dialogue draft sits in its session: the turns before it (nearest first) and the
    one it replies to, as a stored memory id or the index of an earlier draft of this call."""

    before: list[str] = field(default_factory=list)
    replies_to: str | int | None = None


@dataclass
class Prepared:
    draft: Draft
    record: MemoryRecord
    index: int = 0
    turn: Turn | None = None
    steps: dict[str, str] = field(default_factory=dict)
    vector: np.ndarray | None = None
    neighbours: list[tuple[str, float]] = field(default_factory=list)  # in the index
    llm_verdict: dict[str, str] | None = None  # memories the LLM says this one supersedes
    llm_error: str = ""
    llm_asked: int | None = None  # pairs the judge left to the LLM (None: the LLM alone)
    result: AddResult | None = None
    merge: bool = True
    statement: bytes | None = None  # stored with the record (see Supersession.statement), when parsed early
    # Candidates whose stored statement was unusable (another release's rules), parsed again:
    # written back in the same transaction.
    stale_statements: dict[str, bytes] = field(default_factory=dict)


def current(records: RecordStore, ids: dict[str, str], tenant: str,
            batch: Mapping[str, Prepared]) -> dict[str, MemoryRecord]:
    """The memories of ``ids`` that are still current (read inside the write transaction;
    earlier items of this batch from their own records)."""
    stored = records.get_many(tenant, [i for i in ids if i not in batch])
    found = {i: batch[i].record if i in batch else stored.get(i) for i in ids}
    return {i: r for i, r in found.items() if r is not None and r.valid_to is None}


class WriteConfig(views.Update, views.Types, views.Lifecycle, views.Embedder, views.Llm,
                  views.Retrieval, Protocol):
    """The settings sections the write path reads."""


class WriteStores(parts.Records, parts.Vectors, parts.Model, parts.Notices, Protocol):
    """The stores the write path uses."""


class WriteBase:
    """What every part of the update engine holds: the settings, the stores, the embedder (a
    callable, so the model loads only when first needed), the clock and the LLM, if any."""

    def __init__(self, settings: WriteConfig, stores: WriteStores,
                 embedder: Callable[[], Embedder],
                 clock: Callable[[], datetime], llm: ChatClient | None = None) -> None:
        self.settings = settings
        self.cfg = settings.update
        self.stores = stores
        self._embedder = embedder
        self.clock = clock
        self.llm = llm

    def llm_for(self, step: str) -> bool:
        """Whether the LLM does ``step`` (``llm.steps``)."""
        return self.llm is not None and step in self.settings.llm.steps
