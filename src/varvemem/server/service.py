"""What the routes share: :class:`Service`, the ``Memory`` (as an ``AsyncMemory``), the
metrics and the inbox thread of one app."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from ..aio import AsyncMemory
from ..api import Memory
from ..engines.inbox import default_worker_name
from ..errors import VarvememError
from .metrics import Metrics

log = logging.getLogger("varvemem.server")
T = TypeVar("T")


class Service:
    """What the routes share: the ``Memory`` (as an ``AsyncMemory``), the metrics, the inbox
    thread."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.amemory = AsyncMemory(memory)
        self.settings = memory.settings
        self.metrics = Metrics(memory)
        self.stopping = threading.Event()
        # Webhook receipts and readiness checks get threads of their own: requests queued on
        # the memory's worker must not keep a delivery from being committed.
        self.receiving = anyio.CapacityLimiter(max(4, self.settings.server.threads // 4))
        self._drainer: threading.Thread | None = None
        self.worker = default_worker_name()

    def start_inbox(self) -> None:
        if self.settings.server.process_inbox:
            self._drainer = threading.Thread(target=self._drain_loop, name="varvemem-inbox",
                                             daemon=True)
            self._drainer.start()

    def _drain_loop(self) -> None:
        poll = self.settings.webhooks.poll_seconds
        while not self.stopping.is_set():
            try:
                report = self.amemory.run_blocking(
                    lambda m: m.inbox.process(worker=self.worker, stop=self.stopping))
                self.metrics.processed(report)
                if not report.claimed:
                    self.stopping.wait(poll)
            except VarvememError as exc:  # the store is away: try again later
                log.warning("inbox drain failed: %s", exc)
                self.stopping.wait(poll)
            except Exception:  # a bug must not end the thread: the inbox would stall unseen
                log.exception("inbox drain failed")
                self.stopping.wait(max(poll, 5.0))

    async def run(self, fn: Callable[[Memory], T]) -> T:
        """``fn(memory)`` on the memory's worker thread, after the calls queued before it."""
        return await self.amemory.run(fn)

    async def read(self, fn: Callable[[Memory], T]) -> T:
        """``fn(memory)``, which only reads, on one of the memory's reader threads: beside
        other reads, after the writes queued before it."""
        return await self.amemory.read(fn)

    async def stop(self) -> None:
        """Finish the event in hand, give the rest of the batch back, close the memory (after
        the calls already queued)."""
        self.stopping.set()
        if self._drainer is not None:
            await anyio.to_thread.run_sync(self._drainer.join,
                                           self.settings.server.shutdown_seconds + 30)
        await self.amemory.aclose()
        log.info("varvemem stopped: requests and the inbox event in hand finished")
