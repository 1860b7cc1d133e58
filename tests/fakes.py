"""Fakes of the store parts (``varvemem.stores.parts``) that tests hand to an engine instead
of patching its methods."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from varvemem.stores import Stores, StoreTx


class HookedUnitOfWork:
    """A memory's stores whose unit of work runs ``before()`` first: an outage (it raises), a
    count, or time passing while another worker acts. Every other part is the real one."""

    def __init__(self, stores: Stores, before: Callable[[], None]) -> None:
        self._stores = stores
        self.before = before

    def transaction(self) -> AbstractContextManager[StoreTx]:
        self.before()
        return self._stores.transaction()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stores, name)


def raising(exc: BaseException) -> Callable[[], None]:
    """A ``before`` for :class:`HookedUnitOfWork`: every transaction fails with ``exc``."""

    def fail() -> None:
        raise exc

    return fail
