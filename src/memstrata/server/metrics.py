"""Prometheus metrics for ``/metrics``: request latency, webhook outcomes, inbox work (this
process), and gauges read from the store at scrape time (memories by tier, the inbox's depth:
the same for every process of a deployment)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ..engines.inbox import DrainReport
from ..errors import MemstrataError

if TYPE_CHECKING:
    from .app import Service

_GAUGE_SECONDS = 15.0  # store gauges are recomputed at most this often (a scrape reads them)


class _StoreGauges(Collector):
    def __init__(self, service: Service) -> None:
        self.service = service
        self._cached: tuple[float, dict[str, int], dict[str, int]] | None = None

    def _read(self) -> tuple[dict[str, int], dict[str, int]]:
        now = time.monotonic()
        if self._cached is not None and now - self._cached[0] < _GAUGE_SECONDS:
            return self._cached[1], self._cached[2]
        tiers = self.service.memory.tier_counts()
        inbox = self.service.memory.inbox_counts()
        self._cached = (now, tiers, inbox)
        return tiers, inbox

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            tiers, inbox = self._read()
        except MemstrataError:
            return  # the store is away: /readyz says so; the scrape still gets the rest
        mem = GaugeMetricFamily("memstrata_memories", "Memories by tier (all tenants)",
                                labels=["tier"])
        for tier, n in sorted(tiers.items()):
            mem.add_metric([tier], n)
        yield mem
        queue = GaugeMetricFamily("memstrata_inbox_events", "Webhook inbox events by status",
                                  labels=["status"])
        for status in ("pending", "processing", "done", "failed"):
            queue.add_metric([status], inbox.get(status, 0))
        yield queue


class Metrics:
    """The app's registry (its own, so several apps in one process do not collide)."""

    def __init__(self, service: Service) -> None:
        self.registry = CollectorRegistry()
        self.latency = Histogram(
            "memstrata_http_request_duration_seconds", "HTTP request latency",
            ["method", "route", "status"], registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
        self.webhooks = Counter("memstrata_webhook_deliveries", "Webhook deliveries by outcome",
                                ["source", "outcome"], registry=self.registry)
        self.inbox = Counter("memstrata_inbox_processed_events",
                             "Inbox events this process worked on, by outcome", ["outcome"],
                             registry=self.registry)
        self.registry.register(_StoreGauges(service))

    def request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.latency.labels(method, route, str(status)).observe(seconds)

    def delivery(self, source: str, outcome: str) -> None:
        self.webhooks.labels(source, outcome).inc()

    def processed(self, report: DrainReport) -> None:
        for outcome in ("done", "failed", "retried", "lost"):
            n = getattr(report, outcome)
            if n:
                self.inbox.labels(outcome).inc(n)
