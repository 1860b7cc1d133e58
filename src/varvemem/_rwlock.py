"""A readers-writer lock: many readers at once, or one writer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class RWLock:
    """Shared (:meth:`read`) or exclusive (:meth:`write`) holding. A waiting writer keeps new
    readers out, so a steady stream of reads cannot starve it; a thread that already holds the
    lock (either way) may take it again shared, and a writer again exclusively. A reader must
    not ask to write: it would wait for itself."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer: int | None = None  # the writing thread
        self._depth = 0  # its nested write holds
        self._waiting = 0  # writers waiting
        self._mine = threading.local()  # this thread's read holds

    @contextmanager
    def read(self) -> Iterator[None]:
        me = threading.get_ident()
        held = getattr(self._mine, "n", 0)
        if self._writer == me:  # inside our own write: already exclusive
            yield
            return
        with self._cond:
            if not held:  # a nested read never waits (a waiting writer would deadlock it)
                while self._writer is not None or self._waiting:
                    self._cond.wait()
            self._readers += 1
        self._mine.n = held + 1
        try:
            yield
        finally:
            self._mine.n = held
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._depth += 1
            else:
                if getattr(self._mine, "n", 0):
                    raise RuntimeError("a reader cannot take the write lock")
                self._waiting += 1
                try:
                    while self._writer is not None or self._readers:
                        self._cond.wait()
                finally:
                    self._waiting -= 1
                self._writer, self._depth = me, 1
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if not self._depth:
                    self._writer = None
                    self._cond.notify_all()
