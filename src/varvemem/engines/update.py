"""The update engine (SPEC UPD-1..7, UPD-9): validate, classify, score, embed, dedup, supersede,
associate and store, one batch per transaction.

Steps that could use an LLM (classify, score, supersede) have a deterministic local default in
:mod:`.rules`; every :class:`AddResult` says which path each step took.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..embeddings import Embedder, normalise
from ..errors import LLMError, UnknownMemoryError, ValidationError, VarvememError
from ..language.records import other_record
from ..llm import ChatClient
from ..model import (
    TYPES,
    AddResult,
    Draft,
    HistoryAction,
    HistoryEntry,
    IngestReport,
    MemoryRecord,
    MemoryType,
    Scope,
    SearchFilter,
    Tier,
    TTLMode,
    normalise_tags,
)
from ..settings import Settings
from ..stores import Stores, StoreTx
from ..stores.base import RecordStore, Selection
from ..text import analyse, extract_keywords, identifiers, index_terms
from . import claims, llm_judge, outcome, reports, rules, statements
from . import judge as judging
from .reports import HAPPENED
from .timeline import snapshot

if TYPE_CHECKING:
    from .ingest import IngestProgress

ACTOR = "update-engine"
log = logging.getLogger("varvemem.llm")  # the LLM steps' fallbacks
_VALIDITY = ("valid_to", "superseded_by", "updated_at")
_PAGE = 500  # ids per query when many memories are read by a list of ids


def content_hash(content: str) -> str:
    """Hash of the normalised content (:func:`.claims.normalise`): case, width, punctuation
    variants (ASCII/CJK), trailing punctuation and spacing do not matter."""
    return hashlib.sha256(claims.normalise(content).encode("utf-8")).hexdigest()[:32]


def _live(r: MemoryRecord, now: datetime) -> bool:
    """Served by default: not expired and not archived."""
    return r.tier is not Tier.ARCHIVE and (r.expires_at is None or r.expires_at > now)


def record_change(tx: StoreTx, rec: MemoryRecord, action: HistoryAction, at: datetime, actor: str,
                  reason: str = "", old: dict[str, Any] | None = None,
                  new: dict[str, Any] | None = None) -> None:
    """Write one entry of ``rec``'s history (every history write of the write path)."""
    tx.add_history(HistoryEntry(memory_id=rec.memory_id, action=action, at=at, actor=actor,
                                reason=reason, old=old, new=new), rec.scope.tenant)


def _jsonable(v: Any) -> Any:
    if hasattr(v, "value"):
        return v.value
    if isinstance(v, datetime):
        return v.isoformat()
    return json.loads(json.dumps(v, default=str))


def _supersede(tx: StoreTx, old: MemoryRecord, successor: MemoryRecord | None, reason: str,
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
        before = {"valid_to": _jsonable(old.valid_to), "superseded_by": old.superseded_by}
        rec.superseded_by, rec.updated_at = o.successor, now
        if o.successor is None:
            rec.valid_to = None
        tx.update(rec, fields=_VALIDITY)
        why = f"its successor {old.superseded_by} was deleted"
        record_change(tx, rec, "supersede" if o.successor else "restore", now, actor,
                      f"{why}; {o.successor} replaces it" if o.successor else
                      f"{why}: current again", old=before,
                      new={"valid_to": _jsonable(rec.valid_to), "superseded_by": o.successor})


def _inherit(new: MemoryRecord, olds: Sequence[MemoryRecord]) -> None:
    """``new`` takes the tags of the memories it supersedes, after its own: a search by the
    old fact's tags still finds the current one. An identifier tag the old content produced
    (``eks-stg-2``) stays behind unless the new content names it too: it describes the old
    statement, not the new one."""
    own = set(normalise_tags(identifiers(new.content)))
    for o in olds:
        theirs = set(normalise_tags(identifiers(o.content))) - own
        new.tags = normalise_tags([*new.tags, *(t for t in o.tags if t not in theirs)])


def _succession(reason: str, superseded: dict[str, str]) -> str:
    """A new memory's create reason: its own, then which memories it supersedes and why."""
    by_why: dict[str, list[str]] = {}
    for mid, why in superseded.items():
        by_why.setdefault(why, []).append(mid)
    return "; ".join([*([reason] if reason else []),
                      *(f"supersedes {', '.join(ids)}: {why}" for why, ids in by_why.items())])


def _created(superseded: Sequence[str], own_tags: Sequence[str] | None = None
             ) -> dict[str, Any] | None:
    """A create entry's ``new`` as stored: the ids the memory supersedes, when it does, and
    the tags it had before it took theirs (:func:`_inherit`; an erasure of one of them takes
    back only what it gave). The record itself is not written again: it is the row, and
    what it was at creation follows from the row and the entries after
    (``ReadEngine.history`` shows it, :func:`.timeline.as_created`)."""
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


def _shape(content: str, value: str) -> int:
    """How much of ``value``'s leading letters a value of ``content`` shares (``eks-stg-6``
    and ``eks-stg-3``: 8)."""
    best = 0
    for v in claims.values(content):
        n = 0
        for x, y in zip(v.text, value):
            if x != y:
                break
            n += 1
        best = max(best, n)
    return best


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the analysed words of two texts, in 0..1."""
    x, y = set(analyse(a)), set(analyse(b))
    return len(x & y) / len(x | y) if x | y else 1.0


def new_id() -> str:
    return "mem_" + uuid.uuid4().hex


@dataclass
class _Turn:
    """Where a dialogue draft sits in its session: the turns before it (nearest first) and the
    one it replies to, as a stored memory id or the index of an earlier draft of this call."""

    before: list[str] = field(default_factory=list)
    replies_to: str | int | None = None


@dataclass
class _Prepared:
    draft: Draft
    record: MemoryRecord
    index: int = 0
    turn: _Turn | None = None
    steps: dict[str, str] = field(default_factory=dict)
    vector: np.ndarray | None = None
    neighbours: list[tuple[str, float]] = field(default_factory=list)  # in the index
    llm_verdict: dict[str, str] | None = None  # memories the LLM says this one supersedes
    llm_error: str = ""
    llm_asked: int | None = None  # pairs the judge left to the LLM (None: the LLM alone)
    result: AddResult | None = None
    merge: bool = True
    statement: bytes | None = None  # stored with the record (see _statement), when parsed early
    # Candidates whose stored statement was unusable (another release's rules), parsed again:
    # written back in the same transaction.
    stale_statements: dict[str, bytes] = field(default_factory=dict)


class UpdateEngine:
    """The write path. ``embedder`` is a callable so the model loads only when first needed."""

    def __init__(self, settings: Settings, stores: Stores, embedder: Callable[[], Embedder],
                 clock: Callable[[], datetime], llm: ChatClient | None = None) -> None:
        self.settings = settings
        self.cfg = settings.update
        self.stores = stores
        self._embedder = embedder
        self.clock = clock
        self.llm = llm

    # -- public -----------------------------------------------------------------------------
    def add(self, drafts: Sequence[Draft], actor: str = ACTOR,
            vectors: np.ndarray | None = None, merge: bool = True,
            in_tx: Callable[[StoreTx, list[tuple[AddResult, MemoryRecord]]], None] | None = None
            ) -> list[AddResult]:
        """Run the pipeline over ``drafts``; each embedder batch is committed as one transaction
        (every draft is validated before the first one is written).

        ``vectors`` (optional, one unit vector per draft) skips embedding. ``merge`` False
        never folds a draft into a near duplicate (an abstracted experience must exist on its
        own, however close to its one source). ``in_tx`` runs inside the last batch's
        transaction with each result and its record (as stored when ``created``), so more
        writes commit with the memories or not at all.
        """
        for d in drafts:
            self.validate(d)
            self._explicit_supersedes(d, d.scope.tenant)  # unknown ids fail before any write
        dim = self.stores.check_model()[1]
        if vectors is not None:
            vectors = np.asarray(vectors, np.float32)
            if vectors.shape != (len(drafts), dim) or not np.isfinite(vectors).all():
                raise ValidationError(f"vectors must be {len(drafts)} finite rows of {dim} "
                                      f"numbers (got shape {vectors.shape})")
        results: list[AddResult] = []
        size = self.settings.embedder.batch_size
        starts = range(0, len(drafts), size)
        turns = self._turns(drafts)
        # The drafts that a later draft of this call replies to, kept by index once stored.
        replied = {t.replies_to for t in turns if t is not None and isinstance(t.replies_to, int)}
        done: dict[int, _Prepared] = {}
        written: list[tuple[AddResult, MemoryRecord]] = []

        def prepare(start: int) -> list[_Prepared]:
            batch = [self._prepare(d, start + i, turns[start + i])
                     for i, d in enumerate(drafts[start : start + size])]
            self._embed(batch, None if vectors is None else vectors[start : start + size])
            return batch

        # Prepare and embed the next batch in a worker thread while this one is stored: the
        # embedder's numpy work releases the GIL, so the two overlap on a second core.
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(prepare, starts[0]) if starts else None
            for n in range(len(starts)):
                assert pending is not None
                batch = pending.result()
                if n + 1 < len(starts):
                    pending = pool.submit(prepare, starts[n + 1])
                self.stores.sync()
                self._find_neighbours(batch)
                self._judge_with_llm(batch)
                with self.stores.transaction() as tx:
                    self.stores.claim_model(tx)
                    accepted: list[_Prepared] = []
                    for p in batch:
                        p.merge = merge
                        self._store_one(tx, p, accepted, actor)
                        if p.stale_statements:
                            tx.set_statements(p.record.scope.tenant, p.stale_statements)
                        self._link_reply(tx, p, done)
                        if p.index in replied:
                            done[p.index] = p
                    written.extend((p.result, p.record) for p in batch if p.result is not None)
                    # Outcome (engines/outcome.py): a resolution raises the failures it resolves.
                    outcome.resolve(tx, self.stores, self.settings, [
                        p.record for p in batch if p.result and p.result.status == "created"],
                        self.clock())
                    if in_tx is not None and n + 1 == len(starts):
                        in_tx(tx, written)
                results.extend(p.result for p in batch if p.result is not None)
                self.stores.sync()
        return results

    def validate(self, d: Draft) -> None:
        if not d.content or not d.content.strip():
            raise ValidationError("content is empty")
        size = len(d.content.encode("utf-8"))
        if size > self.cfg.max_content_bytes:
            raise ValidationError(f"content is {size} bytes, over the limit of "
                                  f"{self.cfg.max_content_bytes} (update.max_content_bytes)")
        if d.importance is not None and not 0.0 <= d.importance <= 1.0:
            raise ValidationError(f"importance {d.importance} is not in 0..1")
        if not d.scope.tenant:
            raise ValidationError("tenant is empty")

    # -- changes in place ---------------------------------------------------------------------
    def change(self, rec: MemoryRecord, *, content: str | None = None,
               tags: Sequence[str] | None = None, importance: float | None = None,
               tier: Tier | None = None, metadata: dict[str, Any] | None = None,
               reason: str = "", actor: str = "api") -> MemoryRecord:
        """Change the given fields of ``rec`` (values checked by the caller); ``rec`` itself
        when nothing differs."""
        changes: dict[str, Any] = {}
        if content is not None and content.strip() != rec.content:
            changes["content"] = content.strip()
            changes["content_hash"] = content_hash(content)
            if HAPPENED in rec.metadata:  # the days the old words reported
                changes["metadata"] = {k: v for k, v in rec.metadata.items() if k != HAPPENED}
        if tags is not None:
            changes["tags"] = normalise_tags(tags)
        if importance is not None:
            changes["importance"] = float(importance)
        if tier is not None:
            changes["tier"] = tier
        if metadata is not None:
            changes["metadata"] = {**changes.get("metadata", rec.metadata), **metadata}
        return self.edit(rec, changes, "update", reason, actor) if changes else rec

    def feedback(self, rec: MemoryRecord, helpful: bool, weight: float,
                 reason: str = "") -> MemoryRecord:
        """Move importance, and a Q&A pair's score, up or down by ``weight``, bounded to 0..1."""
        delta = weight if helpful else -weight
        changes: dict[str, Any] = {"importance": round(min(1.0, max(0.0, rec.importance + delta)),
                                                       4)}
        if rec.score is not None:
            changes["score"] = round(min(1.0, max(0.0, rec.score + delta)), 4)
        return self.edit(rec, changes, "feedback",
                         reason or ("helpful" if helpful else "not helpful"), "feedback")

    def edit(self, rec: MemoryRecord, changes: dict[str, Any], action: HistoryAction,
             reason: str, actor: str) -> MemoryRecord:
        """Write ``changes`` to ``rec`` in one transaction with its history entry. A changed
        ``content`` (give its ``content_hash`` too) is re-embedded and its keywords
        re-extracted."""
        vector = self._vector(rec.model_copy(update=changes)) if "content" in changes else None
        now = self.clock()
        if "content" in changes:
            changes["keywords"] = extract_keywords(changes["content"], self.cfg.keywords_max)
        old = {k: _jsonable(getattr(rec, k)) for k in changes}  # what replaying history undoes
        new = rec.model_copy(update={**changes, "updated_at": now})
        with self.stores.transaction() as tx:
            # Only the changed columns: a concurrent supersession or retrieval is kept.
            tx.update(new, vector, fields=[*changes, "updated_at"])
            record_change(tx, rec, action, now, actor, reason, old=old,
                          new={k: _jsonable(v) for k, v in changes.items()})
        self.after_write()
        return new

    def _vector(self, changed: MemoryRecord) -> np.ndarray:
        """The vector of a record as changed (a pair's new question included)."""
        self.stores.check_model()
        vector: np.ndarray = self._embedder().embed_documents(
            [embedding_text(changed, self.cfg.context_embed)])[0]
        return vector

    def undo_supersession(self, rec: MemoryRecord, reason: str = "",
                          actor: str = "api") -> MemoryRecord:
        """``rec`` current again after a supersession the rules (or a caller) got wrong. It
        keeps the successor's id in ``metadata["distinct_from"]``, so read-time conflict
        resolution no longer takes the two for one claim."""
        meta = dict(rec.metadata)
        if rec.superseded_by:
            meta["distinct_from"] = sorted({*meta.get("distinct_from", []), rec.superseded_by})
        why = reason or f"supersession by {rec.superseded_by or 'an update'} undone"
        return self.edit(rec, {"valid_to": None, "superseded_by": None, "metadata": meta},
                         "restore", why, actor)

    def own_tags(self, rec: MemoryRecord) -> list[str]:
        """The tags ``rec`` had before it took those of the memories it superseded (none
        known for a memory recorded before releases kept them)."""
        created = next((e for e in self.stores.records.history(rec.scope.tenant, rec.memory_id)
                        if e.action == "create"), None)
        own = (created.new or {}).get("own_tags") if created is not None else None
        return [t for t in own if isinstance(t, str)] if isinstance(own, list) else []

    def drop_context(self, records: Sequence[MemoryRecord], texts: Set[str]) -> int:
        """Take ``texts`` (the words of erased turns) out of the context keys of ``records``
        (the turns around them): a turn embedded with one of them is embedded again. Returns
        how many changed."""
        changed: list[tuple[MemoryRecord, np.ndarray | None]] = []
        for r in records:
            before = [c for c in r.context_before if c not in texts]
            after = [c for c in r.context_after if c not in texts]
            if (before, after) == (r.context_before, r.context_after):
                continue
            new = r.model_copy(update={"context_before": before, "context_after": after})
            embedded = self.cfg.context_embed
            changed.append((new, self._vector(new) if before[:embedded]
                            != r.context_before[:embedded] else None))
        if changed:
            with self.stores.transaction() as tx:
                for new, vector in changed:
                    tx.update(new, vector, fields=["context_before", "context_after"])
        return len(changed)

    def delete(self, rec: MemoryRecord, reason: str = "", actor: str = "api") -> None:
        """Delete a live (not archived) memory; its history keeps its last state. What it had
        replaced points past it or is current again (:func:`orphans`)."""
        orphaned = orphans(self.stores.records, rec.scope.tenant, {rec.memory_id: rec})
        now = self.clock()
        with self.stores.transaction() as tx:
            tx.delete(rec.scope.tenant, rec.memory_id)
            record_change(tx, rec, "delete", now, actor, reason, old=snapshot(rec))
            reinstate(tx, orphaned, now, actor)
        self.after_write()

    def reindex(self, re_embed: bool = False,
                progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the vector index from the store of record (re-embedding every memory
        first when ``re_embed``); returns its size."""
        if re_embed:
            self.re_embed(progress)
        return self.stores.rebuild_vectors()

    def re_embed(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Recompute every stored vector with the configured embedder, batch by batch; the last
        batch records the new model."""
        emb = self._embedder()
        records = list(self.stores.records.iter_records())
        size = self.settings.embedder.batch_size
        for i in range(0, max(len(records), 1), size):
            part = records[i : i + size]
            vecs = emb.embed_documents([embedding_text(r, self.cfg.context_embed) for r in part])
            with self.stores.transaction() as tx:
                for r, v in zip(part, vecs):
                    tx.update(r, v, fields=[])  # the vector only
                if i + size >= len(records):
                    self.stores.set_model(tx, emb.model_id, emb.dim)
            if progress:
                progress(min(i + size, len(records)), len(records))

    def set_meta(self, key: str, value: str) -> None:
        """Store one value of the store's key/value metadata."""
        with self.stores.transaction() as tx:
            tx.set_meta(key, value)

    def after_write(self) -> None:
        """Catch the vector index up if it is open; never fail a committed write over it."""
        try:
            self.stores.sync(open_index=False)
        except VarvememError as exc:
            self.stores.notices.append(f"vector index not updated: {exc}")

    # -- steps --------------------------------------------------------------------------------
    def _turns(self, drafts: Sequence[Draft]) -> list[_Turn | None]:
        """Each dialogue draft's place in its session (``update.context_*``): the turns before
        it come from the store, then from the earlier drafts of this call."""
        cfg = self.cfg
        keep = max(cfg.context_before, 1)
        recent: dict[tuple[Any, ...], list[tuple[str, str | int]]] = {}  # newest first
        out: list[_Turn | None] = []
        for i, d in enumerate(drafts):
            mtype = None if d.scope.session is None else \
                d.memory_type or rules.classify(d, cfg)[0]
            if mtype is None or mtype not in cfg.context_types:
                out.append(None)
                continue
            key = (*d.scope.model_dump().values(), mtype)
            if key not in recent:
                recent[key] = [(r.content, r.memory_id) for r in
                               self.stores.records.recent_in_session(d.scope, mtype, keep)]
            history = recent[key]
            out.append(_Turn([c for c, _ in history[: cfg.context_before]],
                             history[0][1] if history else None))
            history.insert(0, (d.content.strip(), i))
            del history[keep:]
        return out

    def _link_reply(self, tx: StoreTx, p: _Prepared, done: dict[int, _Prepared]) -> None:
        """Index a newly stored turn as the reply of the turn before it (``context_reply``).
        The context is derived index data, so this is not a change in the history."""
        if not self.cfg.context_reply or p.turn is None or p.turn.replies_to is None \
                or p.result is None or p.result.status != "created":
            return
        ref = p.turn.replies_to
        if isinstance(ref, int):
            earlier = done.get(ref)
            if earlier is None or earlier.result is None or earlier.result.status != "created":
                return
            prev: MemoryRecord | None = earlier.record
        else:
            prev = self.stores.records.get(p.record.scope.tenant, ref)
        if prev is None or prev.context_after == [p.record.content]:
            return
        prev.context_after = [p.record.content]
        tx.update(prev, fields=["context_after"])

    def _prepare(self, d: Draft, index: int = 0, turn: _Turn | None = None) -> _Prepared:
        now = self.clock()
        steps: dict[str, str] = {"extract": "given"}
        mtype, tags = rules.classify(d, self.cfg)
        steps["classify"] = "explicit" if d.memory_type else "rules"
        if self._llm_for("classify") and d.memory_type is None:
            mtype, tags, steps["classify"] = self._llm_classify(d, mtype, tags)
        if d.importance is not None:
            imp, steps["score"] = d.importance, "explicit"
        else:
            imp, signals = rules.importance(d.content, mtype, self.cfg)
            steps["score"] = "rules" + (f" ({', '.join(signals)})" if signals else "")
            if self._llm_for("score"):
                imp, steps["score"] = self._llm_score(d.content, imp, steps["score"])
        reliability = (d.source_reliability if d.source_reliability is not None
                       else rules.reliability(d.source, self.cfg))
        created = d.created_at or now
        rule = self.cfg.ttl_by_type[mtype.value]
        ttl_mode = d.ttl_mode or rule.mode
        ttl_days = d.ttl_days if d.ttl_days is not None else rule.days
        expires = (created + timedelta(days=ttl_days)
                   if ttl_mode is TTLMode.HARD and ttl_days else None)
        life = self.settings.lifecycle
        # TIER-1: a tool call expires after lifecycle.tool_call_ttl_hours unless important.
        if mtype is MemoryType.TOOL_CALL and expires is None and life.tool_call_ttl_hours \
                and imp < life.important_at:
            expires = created + timedelta(hours=life.tool_call_ttl_hours)
        tier = d.tier or (Tier.ACTIVE if d.scope.session and TYPES[mtype].session_window
                          else self.cfg.tier_by_type[mtype])
        record = MemoryRecord(
            memory_id=new_id(), content=d.content.strip(), memory_type=mtype,
            tier=tier, tier_since=created, scope=d.scope, source=d.source,
            source_reliability=reliability, importance=imp, tags=tags,
            keywords=d.keywords if d.keywords is not None else
            extract_keywords(d.content, self.cfg.keywords_max),
            created_at=created, updated_at=now, valid_from=created, expires_at=expires,
            ttl_mode=ttl_mode, ttl_days=ttl_days, question=d.question, answer=d.answer,
            score=d.score, content_hash=content_hash(d.content), metadata=dict(d.metadata),
            context_before=turn.before if turn else [])
        return _Prepared(d, record, index, turn, steps)

    def _embed(self, batch: list[_Prepared], vectors: np.ndarray | None) -> None:
        if vectors is not None:
            vecs = normalise(vectors)
            path = "given"
        else:
            vecs = self._embedder().embed_documents(
                [embedding_text(p.record, self.cfg.context_embed) for p in batch])
            path = self._embedder().model_id
        reader = reports.shipped(self._embedder().model_id)
        for p, v in zip(batch, vecs):
            p.vector = v
            p.steps["embed"] = path
            rec = p.record
            if reader is not None and TYPES[rec.memory_type].statement \
                    and HAPPENED not in rec.metadata:
                report = reports.read(reader, rec.content, v, rec.created_at)
                if report is not None:  # its days, for time questions to match
                    rec.metadata[HAPPENED] = [d.isoformat() for d in report.days]

    def _find_neighbours(self, batch: list[_Prepared]) -> None:
        """The nearest committed memories of each item's tenant/user/agent, in one batched call."""
        filters = [SearchFilter(tenant=p.record.scope.tenant, user=p.record.scope.user,
                                agent=p.record.scope.agent) for p in batch]
        queries = np.stack([p.vector for p in batch])  # type: ignore[misc]
        k = max(self.cfg.neighbours, self.cfg.associate_max + 1)
        for p, found in zip(batch, self.stores.vectors.search_many(queries, k, filters)):
            p.neighbours = found

    def _similar(self, p: _Prepared, accepted: list[_Prepared]) -> list[tuple[MemoryRecord, float]]:
        """Current memories of the same tenant/user/agent most similar to ``p``, best first:
        its neighbours in the index and the earlier items of this batch."""
        s = p.record.scope
        k = max(self.cfg.neighbours, self.cfg.associate_max + 1)
        assert p.vector is not None
        found = dict(p.neighbours)
        for q in accepted:
            if q.record.scope.tenant == s.tenant and q.record.scope.user == s.user \
                    and q.record.scope.agent == s.agent and q.vector is not None:
                found[q.record.memory_id] = float(q.vector @ p.vector)
        best = sorted(found.items(), key=lambda kv: -kv[1])[:k]
        batch = {q.record.memory_id: q.record for q in accepted}
        stored = self.stores.records.get_many(s.tenant, [i for i, _ in best if i not in batch])
        out = []
        for mid, cos in best:
            rec = batch.get(mid) or stored.get(mid)
            if rec is not None and rec.valid_to is None and rec.scope.user == s.user \
                    and rec.scope.agent == s.agent:
                out.append((rec, cos))
        return out

    def _store_one(self, tx: StoreTx, p: _Prepared, accepted: list[_Prepared], actor: str) -> None:
        rec, d, now = p.record, p.draft, self.clock()
        # 1. exact duplicate
        if self.cfg.dedup_exact and not d.supersedes:
            dup = self._exact_duplicate(rec, accepted)
            if dup is not None:
                p.steps["dedup"] = "exact"
                p.result = AddResult(memory_id=dup, status="duplicate", steps=p.steps)
                return
        p.steps["dedup"] = "none"
        similar = self._similar(p, accepted)
        # 2. supersession: explicit ids, then rules or the LLM on similar memories
        superseded = self._explicit_supersedes(d, rec.scope.tenant)
        if superseded:
            p.steps["supersede"] = "explicit"
        elif rec.memory_type in self.cfg.supersede_types:
            superseded, p.steps["supersede"] = self._detect_supersede(p, similar, accepted)
        # 3. near duplicate of a live memory of the very same scope: merged into or linked to it
        # (Q&A pairs compare their questions: the same question with another answer).
        near = next((r for r, cos in similar if self._near(r, cos, rec)
                     and r.memory_type == rec.memory_type and r.scope == rec.scope
                     and r.memory_id not in superseded and _live(r, now)), None)
        if near is not None and rec.memory_type is MemoryType.QA and not superseded \
                and ((rec.score or 0.0) > (near.score or 0.0)
                     or ((rec.score or 0.0) == (near.score or 0.0)
                         and claims.normalise(rec.answer or "")
                         != claims.normalise(near.answer or ""))):
            # EVO-1: one better pair. The better-scored answer is kept (of two as good, the
            # newer), the other superseded by it (linked, in history, never served again); a
            # worse new pair, or the same answer again, is merged.
            superseded = {near.memory_id: "a better-scored answer to the same question"}
            p.steps["dedup"] = "near-duplicate pair superseded"
            near = None
        if near is not None and not superseded and self.cfg.near_duplicate_action == "merge" \
                and p.merge:
            p.steps["dedup"] = "near-duplicate merged"
            self._merge(tx, near, rec, actor, now)
            p.result = AddResult(memory_id=near.memory_id, status="merged", steps=p.steps)
            return
        # 4. association, both directions
        related = [r for r, cos in similar if cos >= self.cfg.associate_threshold
                   and r.memory_id not in superseded][: self.cfg.associate_max]
        p.steps["associate"] = f"vector ({len(related)})"
        rec.related_memory_ids = [r.memory_id for r in related]
        if near is not None and self.cfg.near_duplicate_action == "link" \
                and near.memory_id not in rec.related_memory_ids:
            rec.related_memory_ids.insert(0, near.memory_id)
            related.insert(0, near)
        # 5. store. What it supersedes is settled first (only memories still current now):
        # it inherits their tags and history names them on both sides.
        batch = {q.record.memory_id: q for q in accepted}
        olds = self._current(superseded, rec.scope.tenant, batch)
        superseded = {i: why for i, why in superseded.items() if i in olds}
        own_tags = list(rec.tags)
        _inherit(rec, list(olds.values()))
        tx.insert(rec, p.vector, self._statement(rec))
        if rec.tier is Tier.ACTIVE and rec.scope.session:
            tx.touch_session(rec.scope.tenant, rec.scope.session, rec.created_at)
        record_change(tx, rec, "create", now, actor,
                      _succession(d.metadata.get("reason", ""), superseded),
                      new=_created(list(superseded), own_tags))
        for old_id, why in superseded.items():
            _supersede(tx, olds[old_id], rec, why, actor, now)
        for other in related:  # a batch item links back through its own record
            self.link(tx, batch[other.memory_id].record if other.memory_id in batch else other,
                      rec.memory_id, actor, now, back=True)
        accepted.append(p)
        p.result = AddResult(memory_id=rec.memory_id, status="created",
                             superseded=list(superseded), related=rec.related_memory_ids,
                             steps=p.steps)

    def _near(self, r: MemoryRecord, cos: float, rec: MemoryRecord) -> bool:
        """Is ``r`` a near duplicate of ``rec``: the same normalised key text, or close in
        meaning and words; never when their value-like parts differ (``merge_value_guard``)."""
        a, b = _key_text(r), _key_text(rec)
        near = claims.normalise(a) == claims.normalise(b) or (
            cos >= self.cfg.near_duplicate_threshold
            and word_overlap(a, b) >= self.cfg.near_duplicate_overlap)
        # The guard last: it parses both texts, and most candidates are not near at all.
        return near and not (self.cfg.merge_value_guard
                             and claims.value_set(a) != claims.value_set(b))

    def _exact_duplicate(self, rec: MemoryRecord, accepted: list[_Prepared]) -> str | None:
        now = self.clock()

        def same(o: MemoryRecord) -> bool:
            return (o.content_hash == rec.content_hash and o.scope == rec.scope
                    and o.memory_type == rec.memory_type and o.valid_to is None
                    and _live(o, now))

        for q in accepted:
            if same(q.record):
                return q.record.memory_id
        for o in self.stores.records.find_by_hash(rec.scope.tenant, rec.content_hash):
            if same(o):
                return o.memory_id
        return None

    def _explicit_supersedes(self, d: Draft, tenant: str) -> dict[str, str]:
        if not d.supersedes:
            return {}
        found = self.stores.records.get_many(tenant, d.supersedes)
        missing = [i for i in d.supersedes if i not in found]
        if missing:
            raise UnknownMemoryError(f"cannot supersede unknown memory {missing[0]}")
        return {i: "superseded explicitly" for i in d.supersedes}

    def lexicon(self) -> claims.Lexicon:
        """The claim rules' attribute words (``update.attribute_words`` on the built-in ones)."""
        return claims.lexicon_for(self.cfg.attribute_words)

    def _supersede_candidates(self, rec: MemoryRecord, similar: list[tuple[MemoryRecord, float]],
                              gate: float) -> list[tuple[MemoryRecord, float]]:
        return [(r, cos) for r, cos in similar if cos >= gate and r.memory_type == rec.memory_type
                and r.created_at <= rec.created_at]

    def _judge_with_llm(self, batch: list[_Prepared]) -> None:
        """Ask the LLM which memories each draft supersedes, before the write transaction
        (never hold the store's write lock across an HTTP call). It sees the committed
        memories associated with the draft; the transaction re-checks they are still current."""
        if not self._llm_for("supersede"):
            return
        choice = self.judge()
        for p in batch:
            if p.record.memory_type not in self.cfg.supersede_types or p.draft.supersedes:
                continue
            similar = self._similar(p, [])
            if choice.judge is not None:
                self._ask_llm_when_unsure(p, similar, choice.judge)
                continue
            candidates = self._supersede_candidates(p.record, similar,
                                                    self.cfg.associate_threshold)
            found, _ = self._rules_supersede(p, similar)  # the rules find candidates too
            pool = {r.memory_id: (r, cos) for r, cos in self._pool(p, similar)[0]}
            known = {r.memory_id for r, _ in candidates}
            candidates += [pool[i] for i in found if i in pool and i not in known]
            if not candidates:
                continue
            try:
                p.llm_verdict = self._llm_supersede(p.record, candidates)
            except LLMError as exc:
                p.llm_error = str(exc)
                log.warning("supersede falls back to the rules: %s", exc)

    def _ask_llm_when_unsure(self, p: _Prepared, similar: list[tuple[MemoryRecord, float]],
                             judge: judging.Judge) -> None:
        """Ask the LLM about the pairs the judge finds ambiguous (at least ``judge_llm_from``
        and under its ``write`` probability, no rule finding, none it may not retire alone,
        no other record; :mod:`.llm_judge`, one request): ``p.llm_verdict`` holds those it
        calls an update, merged with the judge's decision in the transaction. On an LLM
        failure the judge's decision stands (``p.llm_error`` says so)."""
        text = self._said(p.record)
        if not TYPES[p.record.memory_type].states_facts or claims.is_question(text):
            return
        found, _ = self._rules_supersede(p, similar)
        decided, _, verdicts = self._judged(p, similar, found, [], judge)
        write = self.cfg.judge_write if self.cfg.judge_write is not None else judge.write
        new = judging.Side(text)
        unsure = [(r, v) for r, v in verdicts if r.memory_id not in decided and v.veto is None
                  and r.memory_id not in found and self.cfg.judge_llm_from <= v.p < write
                  and self._may_retire_alone(p.record, r, new, judging.Side(self._said(r)))]
        p.llm_verdict, p.llm_asked = {}, len(unsure)
        if not unsure:
            return
        assert self.llm is not None
        try:
            said = llm_judge.judge_pairs(self.llm, text, [self._said(r) for r, _ in unsure])
        except LLMError as exc:
            p.llm_error = str(exc)
            log.warning("supersede: the judge decides alone: %s", exc)
            return
        p.llm_verdict = {r.memory_id: f"llm: {j.reason or j.verdict} ({v.reason()})"
                         for (r, v), j in zip(unsure, said) if j.updates}

    def _detect_supersede(self, p: _Prepared, similar: list[tuple[MemoryRecord, float]],
                          accepted: Sequence[_Prepared] = ()) -> tuple[dict[str, str], str]:
        if p.llm_verdict is not None and p.llm_asked is None:  # the LLM alone (no judge)
            return self._other_records(p.record, p.llm_verdict), "llm"
        fallback = f"rules (llm failed: {p.llm_error})" if p.llm_error else "rules"
        found, note = self._rules_supersede(p, similar)
        choice = self.judge()
        if choice.judge is None:
            fallback = choice.label() if fallback == "rules" else fallback
            found = self._other_records(p.record, found)
        elif TYPES[p.record.memory_type].states_facts and not claims.is_question(self._said(p.record)):
            found, alone, _ = self._judged(p, similar, found, accepted, choice.judge)
            version = choice.judge.version
            if p.llm_asked is not None:  # the LLM answered the pairs the judge was unsure of
                found.update(p.llm_verdict or {})
                why = f" (llm failed: {p.llm_error})" if p.llm_error else \
                    f", llm on {p.llm_asked} unsure" if p.llm_asked else ""
                return found, f"judge {version}{why}"
            if alone:  # the judge retired what no rule found
                return found, f"judge {version}" if len(alone) == len(found) \
                    else f"{fallback}, judge {version}"
        else:
            found = self._other_records(p.record, found)
        if found:
            return found, fallback
        if note:
            return {}, f"{fallback} ({note})"
        candidates = self._supersede_candidates(p.record, similar, self.cfg.supersede_threshold)
        if not candidates and not p.llm_error:
            return {}, "none"
        return {}, fallback

    def _may_retire_alone(self, rec: MemoryRecord, r: MemoryRecord, new: judging.Side,
                          old: judging.Side) -> bool:
        """Whether the judge (or the LLM it asks) may retire ``r`` by ``rec`` with no rule:
        statements of knowledge, not ledger lines, not near duplicates, and not beside what
        a transition or a negation naming the old value finds (the rules find its holder)."""
        return TYPES[rec.memory_type].statement and TYPES[r.memory_type].statement \
            and not new.names_old_value and not (new.ledger and old.ledger) \
            and not self._near(r, 1.0, rec)

    def _other_records(self, rec: MemoryRecord, found: Mapping[str, str]) -> dict[str, str]:
        """``found`` but the memories about another record than ``rec`` (an order, a ticket,
        a build of another identifier: :func:`.language.records.other_record`)."""
        if not found:
            return {}
        olds = self.stores.records.get_many(rec.scope.tenant, list(found))
        new = judging.Side(self._said(rec))
        return {i: why for i, why in found.items() if i not in olds
                or other_record(new.text, self._said(olds[i]), new.states_change) is None}

    def judge(self) -> judging.Choice:
        """The learned judge the write path uses (``update.judge``), or why none."""
        return judging.choose(self.cfg.judge, self.cfg.judge_path, self._embedder().model_id)

    def _judged(self, p: _Prepared, similar: list[tuple[MemoryRecord, float]],
                found: Mapping[str, str], accepted: Sequence[_Prepared], judge: judging.Judge
                ) -> tuple[dict[str, str], set[str],
                           list[tuple[MemoryRecord, judging.Verdict]]]:
        """What ``p`` supersedes by the learned judge: what the rules ``found`` that the judge
        gives at least ``judge_confirm``, and each current statement of knowledge older than
        it among its nearest (at ``judge_gate``) that the judge gives at least its ``write``
        probability; never one about another record. The judge alone retires no event (they
        add up), no turn of conversation (talk is not a claim: the read side marks them) and
        no near duplicate (merged instead), no ledger line by another, and nothing beside
        what a transition naming its old value finds. Returns what it supersedes, each with why,
        the ids no rule found, and each candidate's verdict."""
        rec, cfg = p.record, self.cfg
        assert p.vector is not None
        batch = {q.record.memory_id: q for q in accepted}
        pool = {r.memory_id: r for r, cos in similar if cos >= cfg.judge_gate}
        pool.update(self._current(dict(found), rec.scope.tenant, batch))
        cands = [r for r in pool.values() if TYPES[r.memory_type].states_facts
                 and r.memory_type in cfg.supersede_types and r.created_at <= rec.created_at
                 and r.memory_id != rec.memory_id
                 # What it may act on: a rule's finding, or what it may retire alone.
                 and (r.memory_id in found
                      or (TYPES[rec.memory_type].statement
                          and TYPES[r.memory_type].statement))]
        stored = self.stores.vectors.vectors([r.memory_id for r in cands
                                              if r.memory_id not in batch])
        vecs = {i: q.vector for i, q in batch.items() if q.vector is not None} | stored
        cands = [r for r in cands if r.memory_id in vecs]
        olds = [judging.Side(self._said(r)) for r in cands]
        write = cfg.judge_write if cfg.judge_write is not None else judge.write
        # Nothing under this is acted on: a rule's finding, or a pair the LLM is asked about.
        floor = min(write, cfg.judge_confirm if found else 1.0,
                    cfg.judge_llm_from if self._llm_for("supersede") else 1.0)
        new = judging.Side(self._said(rec))
        verdicts = judge.judge(new, p.vector,
                               [(o, vecs[r.memory_id]) for o, r in zip(olds, cands)], floor)
        out: dict[str, str] = {}
        alone: set[str] = set()
        for r, old, v in zip(cands, olds, verdicts):
            rule = found.get(r.memory_id)
            if v.veto is not None:
                continue
            if rule and v.p >= cfg.judge_confirm:
                out[r.memory_id] = f"{rule} ({v.reason()})"
            elif v.p >= write and self._may_retire_alone(rec, r, new, old):
                out[r.memory_id] = f"updated by a newer statement ({v.reason()})"
                alone.add(r.memory_id)
        return out, alone, list(zip(cands, verdicts))

    # -- the offline supersession rules ---------------------------------------------------------
    def _pool(self, p: _Prepared, similar: list[tuple[MemoryRecord, float]],
              terms: Sequence[str] = ()
              ) -> tuple[list[tuple[MemoryRecord, float]], dict[str, claims.Statement]]:
        """What the claim rules compare a statement with: its nearest current memories and
        up to ``claim_candidates`` full-text matches of ``terms`` in the same
        tenant/user/agent, statements of fact older than it (cosine -1 when not among the
        nearest); and what each states (:meth:`_statements`)."""
        rec, s = p.record, p.record.scope
        found = {r.memory_id: (r, cos) for r, cos in similar}
        if terms and self.cfg.claim_candidates and p.vector is not None:
            flt = SearchFilter(tenant=s.tenant, user=s.user, agent=s.agent)
            hits = self.stores.records.keyword_search(
                terms, flt, self.clock(), self.cfg.claim_candidates,
                0.0, self.settings.retrieval.keyword_max_docs,
                self.settings.retrieval.keyword_scan_docs or None)
            more = [m for m, _ in hits if m not in found and m != rec.memory_id]
            vecs = self.stores.vectors.vectors(more) if more else {}
            for mid, r in self.stores.records.get_many(s.tenant, more).items():
                if r.valid_to is None and r.scope.user == s.user and r.scope.agent == s.agent:
                    v = vecs.get(mid)
                    found[mid] = (r, float(v @ p.vector) if v is not None else -1.0)
        pool = [(r, cos) for r, cos in found.values()
                if TYPES[r.memory_type].states_facts and r.memory_type in self.cfg.supersede_types
                and r.created_at <= rec.created_at and r.memory_id != rec.memory_id]
        said = self._statements(s.tenant, [r for r, _ in pool], p.stale_statements)
        return [(r, cos) for r, cos in pool if not said[r.memory_id].question], said

    def _statements(self, tenant: str, records: Sequence[MemoryRecord],
                    stale: dict[str, bytes]) -> dict[str, claims.Statement]:
        """What each of ``records`` states, by id: the statement stored with it when that
        was parsed from what it says now (:mod:`.statements`), else parsed now; the
        statements parsed now go into ``stale`` (by id, as stored) to be written back."""
        stored = self.stores.records.statements(tenant, [r.memory_id for r in records])
        lex, span = self.lexicon(), self.cfg.claim_subject_span
        out = {}
        for r in records:
            out[r.memory_id], fresh = statements.checked(self._said(r), stored.get(r.memory_id),
                                                         lex, span)
            if fresh is not None and self.cfg.supersede_rules:  # else none is stored (_statement)
                stale[r.memory_id] = fresh
        return out

    def _statement(self, rec: MemoryRecord) -> bytes | None:
        """What is stored of ``rec`` for the rules to read later (:mod:`.statements`); None
        for what they never compare."""
        if not TYPES[rec.memory_type].states_facts \
                or rec.memory_type not in self.cfg.supersede_types \
                or not self.cfg.supersede_rules:
            return None
        return statements.stored(self._said(rec), self.lexicon(), self.cfg.claim_subject_span)

    def _said(self, r: MemoryRecord) -> str:
        """What ``r`` states: a turn of dialogue without the speaker's label its metadata
        names ("Caroline: ...") and the names it addresses ("Thanks, Gina!"). Neither is a
        value of what is said."""
        if r.memory_type is not MemoryType.DIALOGUE:
            return r.content
        speakers = tuple(v for k in self.cfg.speaker_keys
                         if isinstance(v := r.metadata.get(k), str) and v)
        return claims.without_address(claims.without_speaker(r.content, speakers))

    def _rules_supersede(self, p: _Prepared, similar: list[tuple[MemoryRecord, float]]
                         ) -> tuple[dict[str, str], str]:
        """The memories ``p`` supersedes by the offline rules (``update.supersede_rules``),
        each with the rule that decided, and a note when a rule matched but found nothing."""
        rec, cfg = p.record, self.cfg
        text = self._said(rec)
        on = set(cfg.supersede_rules)
        if claims.is_question(text):
            return {}, ""
        fact = TYPES[rec.memory_type].states_facts
        t = claims.transition(text) if fact and "transition" in on else None
        neg = claims.negation(text) if fact and "negation" in on else None
        new = claims.claim(text, cfg.claim_subject_span)
        # A statement with nothing a rule could match reads no more candidates.
        wanted = t is not None or neg is not None or "frame" in on
        # Only a transition or a negation reads full text: it names the old value, which may
        # be worded far from the new statement; a claim with a new value reads like its old
        # one, so the nearest memories hold it (a full-text query per add cost most of an
        # add's time in bulk). The query is what an old statement must share: the change's
        # subject and old value, the negation's words; not the whole text (an OR of all its
        # words ranks most of a big store).
        terms: list[str] = []
        if t is not None:
            terms = [*t.subject, *index_terms(t.old or "")] or index_terms(text)
        elif neg is not None:
            terms = list(neg.words) or index_terms(text)
        pool, said = self._pool(p, similar, terms) if fact and wanted else ([], {})
        if t is not None:
            found, note = self._by_transition(t, pool, said)
            if found or t.old is not None:
                return found, note
        if neg is not None:
            found = self._by_negation(neg, pool, said)
            if found:
                return found, ""
        if fact and "frame" in on and not claims.is_negated(text):
            mine = claims.statement(text, self.lexicon(), cfg.claim_subject_span)
            found = {}
            for r, _ in pool:
                if said[r.memory_id].negated:
                    continue
                why = claims.statement_supersedes(
                    mine, said[r.memory_id], frame_overlap=cfg.claim_frame_overlap,
                    min_words=cfg.claim_min_words, subject_overlap=cfg.claim_subject_overlap,
                    old_is_event=r.memory_type is MemoryType.EVENT)
                if why:
                    found[r.memory_id] = why
            if found:
                return found, ""
        written = TYPES[rec.memory_type].written
        if "cue" in on and rules.is_update(text) and (new.values or written):
            for r, cos in self._supersede_candidates(rec, similar, cfg.supersede_threshold):
                if r.memory_type is MemoryType.EVENT:
                    continue  # occurrences add up
                old = claims.claim(self._said(r), cfg.claim_subject_span)
                if new.subject is not None and old.subject is not None \
                        and new.subject != old.subject:
                    continue  # another subject (service A vs service B)
                # In conversation "now" and a close turn are everyday talk ("Thanks! I'm off
                # now"): a value other than a name must have changed too.
                if not written and not claims.changed_value(new, old, names=False):
                    continue
                return {r.memory_id: f"updated by a newer statement (cosine {cos:.2f})"}, ""
        return {}, ""

    def _by_negation(self, neg: claims.Negation, pool: list[tuple[MemoryRecord, float]],
                     said: Mapping[str, claims.Statement]) -> dict[str, str]:
        """The memories a negation retires: those stating a value it says is gone ("no
        longer uses RabbitMQ") about the same subject (``claim_subject_overlap`` of the
        fewer subject words shared); else, when it names no value, those whose words it
        covers at ``negation_overlap`` both ways, or that say what it stopped and otherwise
        only when, how often or how much (:func:`claims.negates`)."""
        cfg, lex = self.cfg, self.lexicon()
        found = {}
        rest = claims.slots(neg.rest, lex)
        # A name opening the sentence is a value too ("Pulsar is no longer used by ...").
        gone = neg.values or tuple(w for w in rest.leads if w == neg.opener)
        mine = rest.subject_words - set(gone)
        for r, _ in pool:
            if said[r.memory_id].negated:
                continue
            claim, slots = self._own(r, said)
            if gone:
                held = [v for v in gone if self._holds(r, v, said)]
                theirs = slots.subject_words
                shared = len(mine & theirs)
                if held and (not mine or not theirs or shared >= cfg.claim_subject_overlap
                             * min(len(mine), len(theirs))):
                    found[r.memory_id] = f"negated: no longer {', '.join(held)}"
                if held or neg.values:
                    continue
            want = set(neg.words)
            have = claim.tokens
            covered = bool(want) and len(want & have) >= cfg.negation_overlap * len(want) \
                and len(want & have) >= cfg.negation_overlap * len(have)
            if covered or claims.negates(neg, self._said(r), cfg.negation_extra_words):
                found[r.memory_id] = "negated: no longer true"
        return found

    def _own(self, r: MemoryRecord, said: Mapping[str, claims.Statement]
             ) -> tuple[claims.Claim, claims.Slots]:
        """The claim and slots of what ``r`` says itself (not the state a change it states
        leaves): its statement's when it states no change."""
        st = said[r.memory_id]
        if st.plain:
            return st.claim, st.slots
        text = self._said(r)
        return claims.claim(text, self.cfg.claim_subject_span), claims.slots(text, self.lexicon())

    def _holds(self, r: MemoryRecord, value: str, said: Mapping[str, claims.Statement]) -> bool:
        return claims.holds(self._said(r), value, said[r.memory_id].values)

    def _by_transition(self, t: claims.Transition, pool: list[tuple[MemoryRecord, float]],
                       said: Mapping[str, claims.Statement]) -> tuple[dict[str, str], str]:
        """The memories a transition replaces: those holding its old value (those naming its
        subject, when some do; an old value that is a plain word needs a subject), else the
        one naming its subject with a value of the new value's kind."""
        subject = set(t.subject)
        live = [(r, cos) for r, cos in pool if not self._holds(r, t.new, said)]
        lex = self.lexicon()
        want = claims.slots(t.phrase, lex)

        def names_subject(r: MemoryRecord) -> bool:
            """Its words hold the subject's, or its slots the subject's words (at
            ``claim_subject_overlap``) and a compatible attribute ("日志管道的负责人" and
            "日志管道有问题找朱琳")."""
            if not subject:
                return False
            claim, theirs = self._own(r, said)
            if subject <= claim.tokens:
                return True
            if not want.subject_words:  # "我的手机号换成了 ...": the attribute alone
                return not theirs.subject_words and bool(want.attributes & theirs.attributes)
            shared = len(want.subject_words & theirs.subject_words)
            return shared >= self.cfg.claim_subject_overlap * len(want.subject_words) and \
                (not want.attributes or not theirs.attributes
                 or bool(want.attributes & theirs.attributes))

        if t.old is not None and not subject and claims.kind_of(t.old) not in claims.RECORDS:
            return {}, ""  # "I moved from Sweden to ...": a word, of no named subject
        if t.old is not None:
            holders = [r for r, _ in live if self._holds(r, t.old, said)]
            if not holders:
                return {}, f"transition from {t.old}: no memory holds {t.old}"
            named = [r for r in holders if names_subject(r)]
            return {r.memory_id: f"transition from {t.old} ({t.rule})"
                    for r in (named or ([] if t.rule == claims.OPENER_RULE else holders))}, ""
        kind = claims.kind_class(claims.kind_of(t.new))
        fits = [(r, cos) for r, cos in live if names_subject(r)
                and kind in {claims.kind_class(k) for k in self._own(r, said)[0].kinds}]
        if not fits:
            return {}, ""
        best, _ = max(fits, key=lambda rc: (_shape(rc[0].content, t.new), rc[1]))
        return {best.memory_id: f"transition to {t.new} ({t.rule}, subject "
                                f"{' '.join(t.subject)})"}, ""

    def _current(self, ids: dict[str, str], tenant: str,
                 batch: dict[str, _Prepared]) -> dict[str, MemoryRecord]:
        """The memories of ``ids`` that are still current (read inside the write transaction;
        earlier items of this batch from their own records)."""
        stored = self.stores.records.get_many(tenant, [i for i in ids if i not in batch])
        found = {i: batch[i].record if i in batch else stored.get(i) for i in ids}
        return {i: r for i, r in found.items() if r is not None and r.valid_to is None}

    def _merge(self, tx: StoreTx, near: MemoryRecord, rec: MemoryRecord, actor: str,
               now: datetime) -> None:
        before = {"tags": near.tags, "importance": near.importance,
                  "occurrences": near.metadata.get("occurrences", 1)}
        near.tags = normalise_tags(near.tags + rec.tags)
        near.importance = max(near.importance, rec.importance)
        near.metadata["occurrences"] = int(near.metadata.get("occurrences", 1)) + 1
        near.updated_at = now
        tx.update(near, fields=["tags", "importance", "metadata", "updated_at"])
        record_change(tx, near, "merge", now, actor, "near-duplicate merged", old=before,
                      new={"tags": near.tags, "importance": near.importance,
                           "occurrences": near.metadata["occurrences"],
                           "merged_content": rec.content})

    def mark_derived(self, tenant: str, source_ids: Sequence[str], derived_id: str) -> None:
        """Note on each live source that ``derived_id`` was made from it (``metadata.derived``,
        the newest ``related_max``), so deleting the source finds it (engines/erasure.py).
        Bookkeeping of provenance, as the derived memory's history names its sources: no
        history entry of its own."""
        found = self.stores.records.get_many(tenant, list(source_ids))
        with self.stores.transaction() as tx:
            for rec in found.values():
                had = [i for i in rec.metadata.get("derived", []) if isinstance(i, str)] \
                    if isinstance(rec.metadata.get("derived"), list) else []
                if derived_id not in had:
                    meta = {**rec.metadata, "derived": [*had, derived_id][-self.cfg.related_max:]}
                    tx.update(rec.model_copy(update={"metadata": meta}), fields=["metadata"])

    def link(self, tx: StoreTx, other: MemoryRecord, new_id_: str, actor: str,
             now: datetime, reason: str = "associated with a new similar memory",
             back: bool = False) -> None:
        """Add ``new_id_`` to ``other``'s related memories (the newest ``related_max`` kept).

        ``back``: the link back from a memory just created that names ``other`` among its own
        related ids (its create entry says so): ``other``'s history gets no entry of its own
        unless an older id had to make room (the ids dropped follow from nothing else).
        :func:`.timeline.back_links` rebuilds the rest for ``get(as_of=...)``."""
        if new_id_ in other.related_memory_ids:
            return
        grown = [*other.related_memory_ids, new_id_]
        dropped = grown[: -self.cfg.related_max]
        other.related_memory_ids = grown[-self.cfg.related_max:]
        tx.update(other, fields=["related_memory_ids"])
        if back and not dropped:
            return
        # Links are the most frequent change: history keeps the difference, not both lists
        # (either list follows from the other and the difference).
        record_change(tx, other, "link", now, actor, reason,
                      old={"related_memory_ids_removed": dropped} if dropped else None,
                      new={"related_memory_ids_added": [new_id_]})

    # -- documents ----------------------------------------------------------------------------
    # Read a batch at a time, committed as it goes and resumable: engines/ingest.py.
    def ingest_text(self, text: str, source: str, scope: Scope, tags: list[str],
                    report: IngestReport, actor: str = ACTOR,
                    progress: Callable[[IngestProgress], None] | None = None) -> None:
        """Store a document's chunks; on re-ingestion keep unchanged chunks, add new ones and
        invalidate the rest (kept in history, no longer served)."""
        from .ingest import DocumentIngest

        DocumentIngest(self).ingest_text(text, source, scope, tags, report, actor, progress)

    def ingest_paths(self, paths: Sequence[Path], scope: Scope, tags: list[str],
                     progress: Callable[[IngestProgress], None] | None = None) -> IngestReport:
        """Ingest files and folders (see :meth:`.ingest.DocumentIngest.ingest_paths`)."""
        from .ingest import DocumentIngest

        return DocumentIngest(self).ingest_paths(paths, scope, tags, progress)

    # -- LLM paths ------------------------------------------------------------------------------
    def _llm_for(self, step: str) -> bool:
        return self.llm is not None and step in self.settings.llm.steps

    def _llm_classify(self, d: Draft, mtype: MemoryType,
                      tags: list[str]) -> tuple[MemoryType, list[str], str]:
        assert self.llm is not None
        try:
            data = self.llm.complete_json(
                "Classify an agent memory. memory_type is one of: "
                + ", ".join(t.value for t in MemoryType)
                + '. Return {"memory_type": ..., "tags": [up to 6 short lower-case tags]}.',
                d.content)
            llm_type = MemoryType(str(data["memory_type"]))
            llm_tags = [str(t) for t in data.get("tags", [])][:6]
            return llm_type, normalise_tags(list(d.tags) + llm_tags + tags)[:12], "llm"
        except (LLMError, KeyError, ValueError, TypeError) as exc:
            log.warning("classify falls back to the rules: %s", exc)
            return mtype, tags, f"rules (llm failed: {exc})"

    def _llm_score(self, content: str, fallback: float, rule_path: str) -> tuple[float, str]:
        assert self.llm is not None
        try:
            data = self.llm.complete_json(
                "Rate how important this memory is for a DevOps/agent assistant to keep, from 0 "
                '(trivia) to 1 (critical fix, decision or rule). Return {"importance": x}.',
                content)
            value = float(data["importance"])
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"importance {value} out of range")
            return value, "llm"
        except (LLMError, KeyError, ValueError, TypeError) as exc:
            log.warning("score falls back to the rules: %s", exc)
            return fallback, f"{rule_path}; llm failed: {exc}"

    def _llm_supersede(self, rec: MemoryRecord,
                       candidates: list[tuple[MemoryRecord, float]]) -> dict[str, str]:
        assert self.llm is not None
        listing = "\n".join(f"{i}. {r.content}" for i, (r, _) in enumerate(candidates))
        data = self.llm.complete_json(
            "Which OLD statements does the NEW statement update, correct or contradict (same "
            'subject, newer truth)? Return {"superseded": [indexes], "reason": "..."}.',
            f"NEW: {rec.content}\nOLD:\n{listing}")
        try:
            picks = [int(i) for i in data.get("superseded", [])]
        except (TypeError, ValueError):
            raise LLMError("superseded must be a list of indexes") from None
        reason = str(data.get("reason") or "updated by a newer statement (llm)")
        return {candidates[i][0].memory_id: reason for i in picks if 0 <= i < len(candidates)}

