"""The parts of :class:`~varvemem.stores.Stores` an engine asks for, one protocol per role:
an engine types its stores as a protocol made of these, so it names what it uses (mypy
refuses the rest) and a test can hand it a fake of just those (``tests/fakes.py``)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from ..model import MemoryRecord
from .backend_roles import ActiveCache, AnswerCache, Archive, VectorIndex
from .record_roles import RecordStore, StoreTx


class Records(Protocol):
    """The store of record, and its unit of work (subscribers hear of each commit)."""

    @property
    def records(self) -> RecordStore: ...

    def transaction(self) -> AbstractContextManager[StoreTx]: ...


class Vectors(Protocol):
    """The vector index, caught up with the store of record by :meth:`sync`."""

    @property
    def vectors(self) -> VectorIndex: ...

    def sync(self, open_index: bool = True, persist: bool = True) -> None: ...


class Model(Protocol):
    """Which embedding model made the stored vectors, and re-making them with another."""

    def stored_model(self) -> tuple[str, int] | None: ...

    def check_model(self) -> tuple[str, int]: ...

    def claim_model(self, tx: StoreTx) -> None: ...

    def set_model(self, tx: StoreTx, model: str, dim: int) -> None: ...

    def rebuild_vectors(self) -> int: ...


class Archived(Protocol):
    """The TIER-5 archive."""

    @property
    def archive(self) -> Archive: ...

    def archived_records(self, tenant: str, ids: list[str] | None = None,
                         notices: list[str] | None = None) -> list[MemoryRecord]: ...


class Caches(Protocol):
    """The active-session cache and the FAQ's answer cache."""

    @property
    def active(self) -> ActiveCache: ...

    @property
    def answers(self) -> AnswerCache: ...


class Notices(Protocol):
    """What the stores had to repair, for the caller to report."""

    @property
    def notices(self) -> list[str]: ...
