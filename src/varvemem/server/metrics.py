"""Prometheus metrics for ``/metrics``: request latency, webhook outcomes, inbox work, and, with
``server.metrics_store_gauges``, gauges read from the store at scrape time (memories by tier,
the inbox's depth, over every tenant: the same for every process of a deployment). Those are
off by default: ``/metrics`` needs no key, and nothing it shows may tell about a tenant's data.
With ``PROMETHEUS_MULTIPROC_DIR`` set (``varvemem serve --workers N`` sets it) the counts are
those of every server process together."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ..engines.inbox import DrainReport
from ..errors import VarvememError

if TYPE_CHECKING:
    from ..api import Memory

_GAUGE_SECONDS = 15.0  # store gauges are recomputed at most this often (a scrape reads them)


class _StoreGauges(Collector):
    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._cached: tuple[float, dict[str, int], dict[str, int]] | None = None

    def _read(self) -> tuple[dict[str, int], dict[str, int]]:
        now = time.monotonic()
        if self._cached is not None and now - self._cached[0] < _GAUGE_SECONDS:
            return self._cached[1], self._cached[2]
        tiers = self.memory.tier_counts()
        inbox = self.memory.inbox.counts()
        self._cached = (now, tiers, inbox)
        return tiers, inbox

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            tiers, inbox = self._read()
        except VarvememError:
            return  # the store is away: /readyz says so; the scrape still gets the rest
        mem = GaugeMetricFamily("varvemem_memories", "Memories by tier (all tenants)",
                                labels=["tier"])
        for tier, n in sorted(tiers.items()):
            mem.add_metric([tier], n)
        yield mem
        queue = GaugeMetricFamily("varvemem_inbox_events", "Webhook inbox events by status",
                                  labels=["status"])
        for status in ("pending", "processing", "done", "failed"):
            queue.add_metric([status], inbox.get(status, 0))
        yield queue


class Metrics:
    """The app's registry (its own, so several apps in one process do not collide)."""

    def __init__(self, memory: Memory) -> None:
        self.registry = CollectorRegistry()
        # Several processes: each writes its counts to files in the shared folder (the
        # library's multiprocess mode) and a scrape of any one sums them all.
        shared = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        own = None if shared else self.registry
        self.latency = Histogram(
            "varvemem_http_request_duration_seconds", "HTTP request latency",
            ["method", "route", "status"], registry=own,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
        self.webhooks = Counter("varvemem_webhook_deliveries", "Webhook deliveries by outcome",
                                ["source", "outcome"], registry=own)
        self.inbox = Counter("varvemem_inbox_processed_events",
                             "Inbox events the server worked on, by outcome", ["outcome"],
                             registry=own)
        if shared:
            from prometheus_client import multiprocess

            # prometheus_client leaves MultiProcessCollector's __init__ unannotated.
            multiprocess.MultiProcessCollector(self.registry)  # type: ignore[no-untyped-call]
        if memory.settings.server.metrics_store_gauges:
            self.registry.register(_StoreGauges(memory))

    def request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.latency.labels(method, route, str(status)).observe(seconds)

    def delivery(self, source: str, outcome: str) -> None:
        self.webhooks.labels(source, outcome).inc()

    def processed(self, report: DrainReport) -> None:
        for outcome in ("done", "failed", "retried", "lost"):
            n = getattr(report, outcome)
            if n:
                self.inbox.labels(outcome).inc(n)
