"""The add pipeline (SPEC UPD-1..7, UPD-9): validate, prepare (classify, score), embed, find
the neighbours, then store each draft in the batch's transaction: an exact or near duplicate
(merged), what it supersedes (:mod:`.supersession`), its associations, its history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from ...embeddings import normalise
from ...errors import UnknownMemoryError, ValidationError
from ...model import (
    TYPES,
    AddResult,
    Draft,
    MemoryRecord,
    MemoryType,
    SearchFilter,
    Tier,
    TTLMode,
    normalise_tags,
)
from ...stores import StoreTx
from ...text import extract_keywords
from .. import claims, reports, rules
from ..reports import HAPPENED
from . import outcome
from .llm_steps import llm_classify, llm_score
from .shared import (
    ACTOR,
    Prepared,
    Turn,
    WriteBase,
    content_hash,
    created,
    current,
    embedding_text,
    inherit,
    near_duplicate,
    new_id,
    record_change,
    succession,
    supersede,
)
from .supersession import Supersession


def _live(r: MemoryRecord, now: datetime) -> bool:
    """Served by default: not expired and not archived."""
    return r.tier is not Tier.ARCHIVE and (r.expires_at is None or r.expires_at > now)


class AddPipeline(WriteBase):
    """The write path's ``add``: a batch of drafts through the pipeline, one transaction per
    embedder batch. What a draft supersedes is its :class:`.supersession.Supersession`'s."""

    supersession: Supersession

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
        done: dict[int, Prepared] = {}
        written: list[tuple[AddResult, MemoryRecord]] = []

        def prepare(start: int) -> list[Prepared]:
            batch = [self.prepare(d, start + i, turns[start + i])
                     for i, d in enumerate(drafts[start : start + size])]
            self.embed(batch, None if vectors is None else vectors[start : start + size])
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
                self.supersession.judge_with_llm(batch, self._similar)
                with self.stores.transaction() as tx:
                    self.stores.claim_model(tx)
                    accepted: list[Prepared] = []
                    for p in batch:
                        p.merge = merge
                        self._store_one(tx, p, accepted, actor)
                        if p.stale_statements:
                            tx.set_statements(p.record.scope.tenant, p.stale_statements)
                        self._link_reply(tx, p, done)
                        if p.index in replied:
                            done[p.index] = p
                    written.extend((p.result, p.record) for p in batch if p.result is not None)
                    # Outcome (engines/update/outcome.py): a resolution raises the failures it resolves.
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

    # -- steps --------------------------------------------------------------------------------
    def _turns(self, drafts: Sequence[Draft]) -> list[Turn | None]:
        """Each dialogue draft's place in its session (``update.context_*``): the turns before
        it come from the store, then from the earlier drafts of this call."""
        cfg = self.cfg
        keep = max(cfg.context_before, 1)
        recent: dict[tuple[Any, ...], list[tuple[str, str | int]]] = {}  # newest first
        out: list[Turn | None] = []
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
            out.append(Turn([c for c, _ in history[: cfg.context_before]],
                            history[0][1] if history else None))
            history.insert(0, (d.content.strip(), i))
            del history[keep:]
        return out

    def _link_reply(self, tx: StoreTx, p: Prepared, done: dict[int, Prepared]) -> None:
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

    def prepare(self, d: Draft, index: int = 0, turn: Turn | None = None) -> Prepared:
        now = self.clock()
        steps: dict[str, str] = {"extract": "given"}
        mtype, tags = rules.classify(d, self.cfg)
        steps["classify"] = "explicit" if d.memory_type else "rules"
        if self.llm_for("classify") and d.memory_type is None:
            mtype, tags, steps["classify"] = llm_classify(self.llm, d, mtype, tags)
        if d.importance is not None:
            imp, steps["score"] = d.importance, "explicit"
        else:
            imp, signals = rules.importance(d.content, self.settings.types[mtype].importance,
                                           self.cfg)
            steps["score"] = "rules" + (f" ({', '.join(signals)})" if signals else "")
            if self.llm_for("score"):
                imp, steps["score"] = llm_score(self.llm, d.content, imp, steps["score"])
        reliability = (d.source_reliability if d.source_reliability is not None
                       else rules.reliability(d.source, self.cfg))
        created = d.created_at or now
        rule = self.settings.types[mtype].ttl
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
                          else self.settings.types[mtype].tier)
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
        return Prepared(d, record, index, turn, steps)

    def embed(self, batch: list[Prepared], vectors: np.ndarray | None) -> None:
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

    def _find_neighbours(self, batch: list[Prepared]) -> None:
        """The nearest committed memories of each item's tenant/user/agent, in one batched call."""
        filters = [SearchFilter(tenant=p.record.scope.tenant, user=p.record.scope.user,
                                agent=p.record.scope.agent) for p in batch]
        queries = np.stack([p.vector for p in batch])  # type: ignore[misc]
        k = max(self.cfg.neighbours, self.cfg.associate_max + 1)
        for p, found in zip(batch, self.stores.vectors.search_many(queries, k, filters)):
            p.neighbours = found

    def _similar(self, p: Prepared, accepted: list[Prepared]) -> list[tuple[MemoryRecord, float]]:
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

    def _store_one(self, tx: StoreTx, p: Prepared, accepted: list[Prepared], actor: str) -> None:
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
            superseded, p.steps["supersede"] = self.supersession.detect_supersede(p, similar, accepted)
        # 3. near duplicate of a live memory of the very same scope: merged into or linked to it
        # (Q&A pairs compare their questions: the same question with another answer).
        near = next((r for r, cos in similar if near_duplicate(self.cfg, r, cos, rec)
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
        olds = current(self.stores.records, superseded, rec.scope.tenant, batch)
        superseded = {i: why for i, why in superseded.items() if i in olds}
        own_tags = list(rec.tags)
        inherit(rec, list(olds.values()))
        tx.insert(rec, p.vector, self.supersession.statement(rec))
        if rec.tier is Tier.ACTIVE and rec.scope.session:
            tx.touch_session(rec.scope.tenant, rec.scope.session, rec.created_at)
        record_change(tx, rec, "create", now, actor,
                      succession(d.metadata.get("reason", ""), superseded),
                      new=created(list(superseded), own_tags))
        for old_id, why in superseded.items():
            supersede(tx, olds[old_id], rec, why, actor, now)
        for other in related:  # a batch item links back through its own record
            self.link(tx, batch[other.memory_id].record if other.memory_id in batch else other,
                      rec.memory_id, actor, now, back=True)
        accepted.append(p)
        p.result = AddResult(memory_id=rec.memory_id, status="created",
                             superseded=list(superseded), related=rec.related_memory_ids,
                             steps=p.steps)

    def _exact_duplicate(self, rec: MemoryRecord, accepted: list[Prepared]) -> str | None:
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
        :func:`..timeline.back_links` rebuilds the rest for ``get(as_of=...)``."""
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
