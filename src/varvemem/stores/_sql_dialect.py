"""How one database spells the shared SQL (:class:`Dialect`), and what the shared queries need
of a store (:class:`SqlBackend`): its dialect and how to run a statement.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any

from ..errors import StorageError
from ..model import MemoryRecord
from . import _columns
from ._columns import COLUMNS

META_UPSERT = ("INSERT INTO meta (key, value) VALUES (%s, %s) "
               "ON CONFLICT (key) DO UPDATE SET value = excluded.value")

Run = Callable[..., list[Any]]  # (sql, args) -> rows, on one connection


def describe(exc: Exception) -> str:
    """A driver error on one line (PostgreSQL adds DETAIL and HINT lines)."""
    return "; ".join(line.strip() for line in str(exc).strip().splitlines() if line.strip())


class Dialect(ABC):
    """How one database spells what the shared SQL needs (``sqlite.py`` and ``postgres.py``
    each have one). The codecs default to none: the driver converts."""

    errors: tuple[type[Exception], ...]  # the driver's errors, turned into StorageError
    rowid: str  # the memories table's insertion-order key
    # Prefix of the tenant test where ids, FTS rows or tags drive the plan ("+" in SQLite: a
    # unary plus keeps its planner off the tenant indexes, which are far less selective).
    hint: str = ""
    null_time: str  # what a NULL time counts as in a comparison (below every time)
    max_ids: int = 1 << 30  # ids per ``IN`` list (SQLite limits its variables)

    def sql(self, text: str) -> str:
        """``text`` (``%s`` placeholders) in the driver's paramstyle."""
        return text

    @abstractmethod
    def in_(self, col: str, values: Sequence[Any], negate: bool = False
            ) -> tuple[str, list[Any]]:
        """``col`` is (not) one of ``values``: the clause and its arguments."""

    @abstractmethod
    def is_(self, col: str) -> str:
        """Null-safe equality with one argument."""

    @abstractmethod
    def greatest(self, *exprs: str) -> str: ...

    @abstractmethod
    def day(self, col: str) -> str:
        """The UTC day of the time column ``col`` as ``YYYY-MM-DD`` text."""

    @abstractmethod
    def json_get(self, col: str, key: str) -> str:
        """The JSON object ``col``'s member ``key`` (NULL when there is none)."""

    # -- codecs: Python values to column values and back ---------------------------------
    def time(self, dt: datetime | None) -> Any:
        return dt

    def from_time(self, value: Any) -> datetime | None:
        return value  # type: ignore[no-any-return]

    @abstractmethod
    def json(self, value: Any) -> Any: ...

    def from_json(self, value: Any) -> Any:
        return value

    def encode(self, col: str, value: Any) -> Any:
        """A memories column's value as stored."""
        return value

    def decode(self, col: str, value: Any) -> Any:
        """A memories column's stored value as :func:`_columns.values` gives it."""
        return value

    def row(self, r: MemoryRecord) -> list[Any]:
        """The memories row of ``r``, in :data:`COLUMNS` order."""
        return [self.encode(c, v) for c, v in _columns.values(r).items()]

    def record(self, row: Sequence[Any], embedding: bytes | None = None) -> MemoryRecord:
        return _columns.record({c: self.decode(c, x) for c, x in zip(COLUMNS, row)}, embedding)

    # -- errors -------------------------------------------------------------------------
    @contextmanager
    def translate(self, what: str, errors: tuple[type[Exception], ...] | None = None
                  ) -> Iterator[None]:
        """Turn the driver's ``errors`` into :class:`StorageError` "``what``: <the error>"."""
        caught = errors or self.errors
        try:
            yield
        except caught as exc:
            raise StorageError(f"{what}: {describe(exc)}") from None


class SqlBackend(ABC):
    """What the shared queries of :class:`~varvemem.stores._sql.SqlStore` need of a store:
    its :class:`Dialect` and how to run a statement."""

    d: Dialect
    _where: str  # the store, as error messages name it

    @abstractmethod
    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """The rows of one read."""

    @abstractmethod
    def _write(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """One statement in its own transaction (the rows it returns)."""

    @abstractmethod
    def _snapshot(self) -> AbstractContextManager[Run]:
        """Reads that see one consistent state."""

    def _records(self, rows: Sequence[Sequence[Any]]) -> list[MemoryRecord]:
        return [self.d.record(r) for r in rows]
