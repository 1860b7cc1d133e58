"""Changes in place of stored memories: their fields (``change``, ``edit``, ``feedback``), a
supersession undone, erased turns taken out of context keys, a deletion, and the vectors and
the index rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from typing import Any

import numpy as np

from ...errors import VarvememError
from ...model import HistoryAction, MemoryRecord, Tier, normalise_tags
from ...text import extract_keywords
from ..reports import HAPPENED
from ..timeline import snapshot
from .shared import WriteBase, content_hash, embedding_text, jsonable, orphans, record_change, reinstate


class EditsInPlace(WriteBase):
    """The update engine's changes to memories already stored."""

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
        old = {k: jsonable(getattr(rec, k)) for k in changes}  # what replaying history undoes
        new = rec.model_copy(update={**changes, "updated_at": now})
        with self.stores.transaction() as tx:
            # Only the changed columns: a concurrent supersession or retrieval is kept.
            tx.update(new, vector, fields=[*changes, "updated_at"])
            record_change(tx, rec, action, now, actor, reason, old=old,
                          new={k: jsonable(v) for k, v in changes.items()})
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
