"""Stores behind small interfaces (``base``), one module per backend.

:class:`Stores` opens the configured backends for a home folder and keeps the vector index
caught up with the store of record.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import ArchiveError, EmbedderMismatchError, StorageError
from ..model import MemoryRecord, Tier
from ..settings import Settings
from .backends import (
    open_answers,
    open_archive,
    open_cache,
    open_records,
    open_vectors,
    store_exists,
    upgrade_records,
)
from .base import (
    ActiveCache,
    AnswerCache,
    Archive,
    ChangeSubscriber,
    IndexFileError,
    MissingIndexFileError,
    RecordStore,
    StoreTx,
    VectorAttrs,
    VectorChanges,
    VectorIndex,
)

__all__ = ["ActiveCache", "Archive", "RecordStore", "StoreTx", "Stores", "VectorAttrs",
           "VectorChanges", "VectorIndex", "store_exists", "upgrade_records"]

log = logging.getLogger("varvemem")

DB_FILE = "varvemem.db"
VECTOR_DIR = "vectors"
ARCHIVE_DIR = "archive"


def check_home(home: Path) -> None:
    """Create ``home`` if needed and make sure it is a writable folder."""
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"home folder {home} cannot be created: {exc.strerror}") from None
    if not home.is_dir():
        raise StorageError(f"home {home} is not a folder")
    if not os.access(home, os.W_OK | os.X_OK):
        raise StorageError(f"home folder {home} is not writable")


class Stores:
    """The record store plus a lazily opened vector index for one embedding model."""

    def __init__(self, settings: Settings, model_id: Callable[[], tuple[str, int]]) -> None:
        self.settings = settings
        self.home = settings.home
        check_home(self.home)
        self.records: RecordStore = open_records(settings)
        self._model_id = model_id
        self._vectors: VectorIndex | None = None
        self._archive: Archive | None = None
        # Opening the index and catching it up happen once at a time, whichever thread reads:
        # two catch-ups applying overlapping changes could leave an older vector last.
        self._sync_lock = threading.RLock()
        try:
            self.active: ActiveCache = open_cache(settings, self.records)
        except BaseException:
            self.records.close()
            raise
        self.notices: list[str] = []
        self.answers: AnswerCache = open_answers(settings, self.active)
        # A server cache mirrors the sessions; the embedded one reads the store itself.
        self._subscribers: list[ChangeSubscriber] = (
            [self.active] if isinstance(self.active, ChangeSubscriber) else [])

    def subscribe(self, subscriber: ChangeSubscriber) -> None:
        """Tell ``subscriber`` of each write committed through :meth:`transaction`."""
        self._subscribers.append(subscriber)

    @contextmanager
    def transaction(self) -> Iterator[StoreTx]:
        """A write to the store of record; the subscribers hear of it after the commit."""
        with self.records.transaction() as tx:
            yield tx
        for subscriber in self._subscribers:
            subscriber.committed(tx.changes)

    @property
    def archive(self) -> Archive:
        """The TIER-5 archive (``archive.url``; default ``<home>/archive``), opened on use."""
        with self._sync_lock:
            if self._archive is None:
                self._archive = open_archive(self.settings.archive, self.home / ARCHIVE_DIR)
            return self._archive

    def archived_records(self, tenant: str, ids: list[str] | None = None,
                         notices: list[str] | None = None) -> list[MemoryRecord]:
        """Archived memories of ``tenant`` (all, or ``ids``), embeddings included. A malformed
        object is reported in ``notices`` (by name) and skipped; the rest is still read."""
        refs = self.records.archived(tenant, ids)
        wanted: dict[str, set[str]] = {}
        for ref in refs:
            wanted.setdefault(ref.object, set()).add(ref.memory_id)
        out = []
        for obj, mids in wanted.items():
            try:
                found = self.archive.read(obj)
            except ArchiveError as exc:
                if notices is None:
                    raise
                notices.append(str(exc))
                continue
            for r in found:
                if r.memory_id in mids and r.scope.tenant == tenant:
                    out.append(r.model_copy(update={"tier": Tier.ARCHIVE}))
        return out

    # -- embedding model --------------------------------------------------------------------
    def stored_model(self) -> tuple[str, int] | None:
        model = self.records.get_meta("embed_model")
        dim = self.records.get_meta("embed_dim")
        return (model, int(dim)) if model and dim else None

    def check_model(self) -> tuple[str, int]:
        """The configured model, after making sure the stored vectors came from it."""
        model, dim = self._model_id()
        stored = self.stored_model()
        if stored is not None and stored != (model, dim):
            raise EmbedderMismatchError(
                f"the store's vectors were made by {stored[0]} ({stored[1]}-d) but the embedder "
                f"is {model} ({dim}-d); run `varvemem reindex --re-embed` to re-embed them, "
                "or configure the original embedder")
        return model, dim

    def claim_model(self, tx: StoreTx) -> None:
        """Inside a write: record the configured model on the first vector write, or refuse
        when another process has meanwhile claimed the store for another model."""
        if self.stored_model() is None:
            self.set_model(tx, *self._model_id())
        else:
            self.check_model()

    @staticmethod
    def set_model(tx: StoreTx, model: str, dim: int) -> None:
        tx.set_meta("embed_model", model)
        tx.set_meta("embed_dim", str(dim))

    # -- vector index -------------------------------------------------------------------------
    @property
    def vectors(self) -> VectorIndex:
        index = self._vectors
        if index is None:
            with self._sync_lock:
                if self._vectors is None:
                    self._vectors = self._open_vectors()
                index = self._vectors
        return index

    def _open_vectors(self, load: bool = True) -> VectorIndex:
        """The configured index, loaded from its file (``load``) or empty, then caught up."""
        model, dim = self.check_model()
        index = open_vectors(self.settings, self.records, self.home / VECTOR_DIR, dim, model)
        try:
            if load:
                index.load()
            else:
                index.clear()
        except MissingIndexFileError:
            index.clear()
        except IndexFileError as exc:
            self._notice(f"vector index rebuilt from SQLite ({exc})")
            index.clear()
        self._catch_up(index)
        return index

    def _notice(self, message: str) -> None:
        log.warning(message)
        self.notices.append(message)

    def _catch_up(self, index: VectorIndex) -> None:
        with self._sync_lock:
            index.apply(self.records.vector_changes(index.applied_seq))

    def sync(self, open_index: bool = True, persist: bool = True) -> None:
        """Apply every committed change the vector index has not seen (ours or another
        process's); with ``open_index`` False, only if the index is open already. With
        ``persist`` False (the read path) the index is never written here: a search must not
        pay for a save."""
        if self._vectors is None and not open_index:
            return
        index = self.vectors
        if self.records.vector_seq() != index.applied_seq:
            self._catch_up(index)
        # A save rewrites the whole file, so wait until the changes are a fair share of it:
        # the saves of a growing index then cost O(final size) in all.
        if persist and index.dirty >= max(self.settings.store.local.flush_every,
                                          len(index) // 4):
            with self._sync_lock:
                if index.dirty >= max(self.settings.store.local.flush_every, len(index) // 4):
                    self.save_vectors()

    def save_vectors(self) -> None:
        """Persist the vector index, caught up first so no other process's write is lost."""
        with self._sync_lock:
            if self._vectors is None:
                return
            with self._vectors.persist_lock():
                self._catch_up(self._vectors)
                self._vectors.save()

    def rebuild_vectors(self) -> int:
        """Drop the vector index and rebuild it from the store of record; returns its size."""
        with self._sync_lock:
            self._vectors = index = self._open_vectors(load=False)
            self.save_vectors()
            return len(index)

    def close(self) -> None:
        """Close the store; persist the vector index when enough has changed.

        A lagging index file costs nothing but a catch-up from the change feed at the next open
        (``store.local.close_save_changes``), so close() does not rewrite a large index for a
        few changes (a CLI ``add`` on 100k memories). The count is of changes since the file
        was written (an open's catch-up counts), so many short sessions still add up to a save.
        """
        try:
            index = self._vectors
            if index is not None and index.dirty and (
                    index.dirty >= self.settings.store.local.close_save_changes
                    or not index.saved):
                self.save_vectors()
        finally:
            if self._vectors is not None:
                self._vectors.close()
            self.active.close()
            self.records.close()
