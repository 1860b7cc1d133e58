"""Webhook ingestion (INT-1): a delivery is verified, checked and committed to the inbox before
it is acknowledged; workers then lease events from the inbox and turn each into memories,
exactly once (the memories and the event's ``done`` mark commit in one transaction).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from .. import events
from ..errors import AuthError, NotFoundError, ValidationError, VarvememError
from ..events import alertmanager
from ..events._common import clip
from ..model import AddResult, Draft, MemoryRecord, MemoryType, Scope
from ..settings import WebhookSource, views
from ..stores import StoreTx, parts
from ..stores.base import InboxEvent, InboxQueue
from . import states
from .update import UpdateEngine, supersede

log = logging.getLogger("varvemem.inbox")

# Headers kept with an event (the parsers read the event type from them).
_KEPT_HEADERS = ("x-github-event", "x-github-delivery", "x-github-hook-id", "content-type",
                 "user-agent", "x-delivery-id")
_MAX_DELIVERY_ID = 200


class PayloadTooLargeError(ValidationError):
    """A request body over ``server.max_body_bytes``."""


@dataclass(frozen=True)
class Receipt:
    """What became of a delivery: committed (``event_id``), received before (``duplicate``,
    with the first one's ``event_id``: a redelivery, GitHub's *Redeliver*, the same body again,
    a repeat notification of the same alert states), or nothing to remember (``ignored``, e.g.
    GitHub's ping, with the ``reason``)."""

    event_id: int | None
    duplicate: bool = False
    ignored: bool = False
    events: int = 0  # events in it (an Alertmanager delivery may hold several alerts)
    reason: str | None = None


@dataclass
class DrainReport:
    """One pass of a worker over the inbox."""

    worker: str
    claimed: int = 0
    done: int = 0
    failed: int = 0  # for good: malformed, or out of attempts
    retried: int = 0  # given back after an error, to try again
    lost: int = 0  # its lease ran out and another worker took it over
    memories: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def default_worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def verify(source: WebhookSource, body: bytes, headers: Mapping[str, str]) -> None:
    """Check a delivery's signature (HMAC-SHA256 of the raw body) or token; :class:`AuthError`."""
    given = _header(headers, source.signature_header())
    if not given:
        if source.verify == "url_token":
            raise AuthError("missing ?token= in the webhook URL (post to "
                            "/v1/webhooks/<source>?token=<the source's secret>)")
        raise AuthError(f"missing {source.signature_header()} header")
    secret = source.secret_value()
    if source.verify in ("token", "url_token"):
        token = given.strip()
        if token.lower().startswith("bearer "):
            token = token[7:].strip()
        ok = hmac.compare_digest(token.encode(), secret.encode())
    else:
        sig = given.strip().removeprefix("sha256=").lower()
        ok = hmac.compare_digest(sig.encode(),
                                 hmac.new(secret.encode(), body, hashlib.sha256).hexdigest().encode())
    if not ok:
        raise AuthError("bad webhook signature")


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)


def parse_body(body: bytes) -> object:
    try:
        return json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValidationError("the body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ValidationError(f"malformed JSON: {exc.msg} (line {exc.lineno}, column "
                              f"{exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # an over-long integer, too deep a nesting
        raise ValidationError(f"unreadable JSON: {str(exc)[:200]}") from None


class InboxConfig(views.Webhooks, views.Server, views.Embedder, Protocol):
    """The settings sections the inbox reads."""


class InboxEngine:
    """Receives deliveries into the inbox and drains it into memories."""

    def __init__(self, settings: InboxConfig, stores: parts.Records, update: UpdateEngine,
                 clock: Callable[[], datetime], queue: InboxQueue) -> None:
        self.settings = settings
        self.cfg = settings.webhooks
        self.stores = stores
        self.queue = queue  # the inbox's events (the store of record's inbox role)
        self.update = update
        self.clock = clock

    def source(self, name: str) -> WebhookSource:
        try:
            return self.cfg.sources[name]
        except KeyError:
            raise NotFoundError(f"no webhook source {name!r}") from None

    def receive(self, name: str, body: bytes, headers: Mapping[str, str]) -> Receipt:
        """Verify, check and commit one delivery. Raises :class:`NotFoundError` (unknown
        source), :class:`AuthError`, :class:`PayloadTooLargeError` or :class:`ValidationError`
        (malformed, or an event type varvemem does not handle): nothing is stored then."""
        source = self.source(name)
        if len(body) > self.settings.server.max_body_bytes:
            raise PayloadTooLargeError(f"the body is over {self.settings.server.max_body_bytes} "
                                       "bytes (server.max_body_bytes)")
        verify(source, body, headers)
        read = events.read(source.kind, parse_body(body), headers)
        parsed = read.events
        if not parsed:
            return Receipt(event_id=None, ignored=True, reason=read.ignored)
        delivery = (_header(headers, source.delivery_id_header()) or "").strip()
        if len(delivery) > _MAX_DELIVERY_ID:
            raise ValidationError(f"{source.delivery_id_header()} is over {_MAX_DELIVERY_ID} "
                                  "characters")
        if not delivery and events.sender(source.kind).repeats:
            # The same alerts in the same states (fingerprint, status, start): a repeat
            # notification, however its group's other fields changed.
            states = "\n".join(sorted({pe.source for pe in parsed}))
            delivery = "states:" + hashlib.sha256(states.encode("utf-8", "replace")).hexdigest()
        delivery = delivery or "sha256:" + hashlib.sha256(body).hexdigest()
        kept = {k.lower(): v[:500] for k, v in headers.items() if k.lower() in _KEPT_HEADERS}
        event_id, created = self.queue.enqueue_event(InboxEvent(
            event_id=0, tenant=source.tenant, source=name, kind=source.kind, delivery=delivery,
            body=body.decode("utf-8"), headers=kept, received_at=self.clock()))
        return Receipt(event_id=event_id, duplicate=not created, events=len(parsed))

    def drain(self, worker: str | None = None, limit: int | None = None,
              stop: threading.Event | None = None) -> DrainReport:
        """Lease up to ``limit`` events (``webhooks.batch_size``) and turn each into memories.

        Events whose memories fit one embedder batch are embedded and written together, in
        one transaction with their ``done`` marks; a group that fails is retried event by
        event, so one bad event holds up no other. Before each group the leases of the events
        still in hand are renewed, so a long batch keeps them (one group must fit in
        ``webhooks.lease_seconds``). Once ``stop`` is set, the events not started yet are
        given back at once (not after their lease)."""
        report = DrainReport(worker=worker or default_worker_name())
        queue = self.queue
        claimed = queue.claim_events(
            report.worker, limit or self.cfg.batch_size, self.clock(), self.cfg.lease_seconds,
            self.cfg.max_attempts)
        report.claimed = len(claimed)
        ready: list[tuple[InboxEvent, _Work]] = []
        seen: set[tuple[str, str]] = set()  # alert states made in this pass (repeats)
        for event in claimed:
            try:
                ready.append((event, self._work(event, seen)))
            except ValidationError as exc:  # retrying cannot help
                queue.release_event(event.event_id, report.worker, self.clock(), str(exc), True)
                report.failed += 1
                report.errors.append(f"event {event.event_id}: {exc}")
                log.warning("inbox event %s failed: %s", event.event_id, exc)
        left = {event.event_id: event for event, _ in ready}
        try:
            for n, group in enumerate(self._groups(ready)):
                if stop is not None and stop.is_set():
                    break
                if n:  # the first group starts right after the claim: its leases are fresh
                    held = queue.renew_leases(
                        report.worker, list(left),
                        self.clock() + timedelta(seconds=self.cfg.lease_seconds))
                    for event_id in [i for i in left if i not in held]:  # another worker's now
                        del left[event_id]
                        report.lost += 1
                        log.warning("inbox event %s: lease lost to another worker", event_id)
                    group = [item for item in group if item[0].event_id in held]
                    if not group:
                        continue
                if not self._store(group, report, alone=len(group) == 1):
                    for one in group:
                        self._store([one], report, alone=True)
                for event, _ in group:
                    left.pop(event.event_id, None)
        finally:
            # Stopped, or an unexpected error: what was not started goes back at once.
            for event in left.values():
                with contextlib.suppress(VarvememError):
                    queue.release_event(event.event_id, report.worker, self.clock(),
                                        "the worker stopped first", False)
                    report.retried += 1
        return report

    def _groups(self, ready: list[tuple[InboxEvent, _Work]]) -> list[list[tuple[InboxEvent, _Work]]]:
        """Consecutive events whose drafts fit one embedder batch (one transaction). An event
        with more (an Alertmanager group of many alerts) is a group alone, written in several
        transactions, its done mark in the last: a crash in between leaves memories that the
        retry finds (the same alert states, or exact duplicates), so it still makes each memory
        once. An event that edits or deletes what an earlier one made is a group alone, after
        the groups before it are written, so it finds what it changes."""
        size = self.settings.embedder.batch_size
        groups: list[list[tuple[InboxEvent, _Work]]] = []
        count = 0
        for item in ready:
            work = item[1]
            if not groups or count + len(work.drafts) > size or work.revises \
                    or groups[-1][-1][1].revises:
                groups.append([])
                count = 0
            groups[-1].append(item)
            count += len(work.drafts)
        return groups

    def _store(self, group: list[tuple[InboxEvent, _Work]], report: DrainReport,
               alone: bool) -> bool:
        """Write the group's memories, invalidate what its deletions forget, and mark its
        events done, in one transaction. False (nothing written) when it failed and ``alone``
        is False: the caller retries each."""
        drafts = [self._revising(d, r) for _, w in group for d, r in zip(w.drafts, w.revisions)]

        def finish(tx: StoreTx, written: list[tuple[AddResult, MemoryRecord]]) -> None:
            self._link_alerts(tx, written, drafts)
            records = self.stores.records
            states.settle(tx, records, records, [rec for res, rec in written
                                                 if res.status == "created"], self.clock())
            at = 0
            for event, work in group:
                for source, why in work.forgets:
                    self._forget(tx, event.tenant, source, why)
                ids = list(dict.fromkeys(r.memory_id for r, _ in written[at : at + len(work.drafts)]))
                at += len(work.drafts)
                if not tx.complete_event(event.event_id, report.worker, ids, self.clock()):
                    raise _LeaseLost(event.event_id)

        try:
            if drafts:
                results = self.update.add(drafts, actor="webhook", merge=False, in_tx=finish)
            else:  # nothing to remember (any more: parsers change), or only deletions
                results = []
                with self.stores.transaction() as tx:
                    finish(tx, [])
                self.update.after_write()
        except _LeaseLost as exc:
            if not alone:
                return False
            report.lost += 1
            log.warning("inbox event %s: lease lost to another worker", exc.args[0])
            return True
        except VarvememError as exc:
            if not alone:
                return False
            event = group[0][0]
            # A rejected draft fails the same way again; a store or LLM outage may not.
            final = isinstance(exc, ValidationError) or event.attempts >= self.cfg.max_attempts
            now = self.clock()
            wait = min(self.cfg.retry_max_seconds,
                       self.cfg.retry_seconds * 2 ** max(0, event.attempts - 1))
            self.queue.release_event(event.event_id, report.worker, now, str(exc), final,
                                     now + timedelta(seconds=wait))
            report.failed += final
            report.retried += not final
            report.errors.append(f"event {event.event_id}: {exc}")
            log.warning("inbox event %s attempt %s failed: %s", event.event_id, event.attempts,
                        exc)
            return True
        report.done += len(group)
        report.memories.extend(r.memory_id for r in results)
        return True

    def _revising(self, draft: Draft, revises: str | None) -> Draft:
        """An edit's draft superseding the current memories of the object it edits (its
        source): the earlier versions, kept with history, so one version is current."""
        if revises is None:
            return draft
        olds = [r.memory_id for r in self.stores.records.find_by_source(draft.scope.tenant, revises)]
        return draft.model_copy(update={"supersedes": olds}) if olds else draft

    def _forget(self, tx: StoreTx, tenant: str, source: str, why: str) -> None:
        """Invalidate the current memories of ``source`` (kept, with history: a deletion at
        the sender is not a deletion here; ``restore`` undoes it)."""
        now = self.clock()
        for rec in self.stores.records.find_by_source(tenant, source):
            supersede(tx, rec, None, why, "webhook", now)

    def _work(self, event: InboxEvent, seen: set[tuple[str, str]]) -> _Work:
        source = self.cfg.sources.get(event.source)
        scope = Scope(tenant=event.tenant, user=source.user if source else None,
                      agent=source.agent if source else None)
        extra = source.tags if source else []
        now = self.clock()
        repeats = events.SENDERS[event.kind].repeats if event.kind in events.SENDERS else False
        work = _Work()
        for pe in events.parse(event.kind, parse_body(event.body.encode("utf-8")), event.headers):
            if pe.forget:
                if pe.revises:
                    work.forgets.append((pe.revises, clip(pe.content, 500)))
                continue
            if repeats:  # an alert state made before (a repeat notification): no new memory
                key = (event.tenant, pe.source)
                if key in seen or self.stores.records.find_by_source(
                        event.tenant, pe.source, include_superseded=True):
                    continue
                seen.add(key)
            # The subject whose state it reports, found again by its tag (engines/states.py).
            state = pe.state_of if pe.outcome in events.STATES else None
            work.drafts.append(Draft(
                content=pe.content, memory_type=MemoryType.EVENT, scope=scope, source=pe.source,
                importance=self.cfg.importance[pe.outcome],
                tags=[*pe.tags, *extra, *([states.tag(state)] if state else [])],
                created_at=min(pe.occurred_at, now) if pe.occurred_at else None,
                metadata={"event": pe.fields, "outcome": pe.outcome,
                          "link_key": pe.link_key,
                          **({"state_of": state} if state else {}),
                          **({"revises": pe.revises} if pe.revises else {}),
                          "webhook": {"source": event.source, "event_id": event.event_id,
                                      "delivery": event.delivery}}))
            work.revisions.append(pe.revises)
        return work

    def _link_alerts(self, tx: StoreTx, written: list[tuple[AddResult, MemoryRecord]],
                     drafts: list[Draft]) -> None:
        """A resolved alert and its firing one (same fingerprint and start) link both ways,
        whichever came first: the counterpart is looked for in this write first (on
        PostgreSQL the store's other connections cannot see it yet), then in the store."""
        now = self.clock()
        created = {d.source: rec for (res, rec), d in zip(written, drafts)
                   if res.status == "created"}
        linked: set[frozenset[str]] = set()
        for (result, rec), draft in zip(written, drafts):
            pairing = alertmanager.counterpart(draft.source, draft.metadata.get("outcome"))
            if result.status != "created" or pairing is None:
                continue
            other_source, reason = pairing
            others = [created[other_source]] if other_source in created else \
                self.stores.records.find_by_source(rec.scope.tenant, other_source)
            for other in others:
                pair = frozenset((rec.memory_id, other.memory_id))
                if other.valid_to is not None or len(pair) < 2 or pair in linked:
                    continue
                linked.add(pair)
                self.update.link(tx, other, rec.memory_id, "webhook", now, reason)
                self.update.link(tx, rec, other.memory_id, "webhook", now, reason)


@dataclass
class _Work:
    """What one inbox event asks for: memories to make (each with the source it revises, if
    it edits one), and sources to forget (with why)."""

    drafts: list[Draft] = field(default_factory=list)
    revisions: list[str | None] = field(default_factory=list)
    forgets: list[tuple[str, str]] = field(default_factory=list)

    @property
    def revises(self) -> bool:
        return bool(self.forgets) or any(r is not None for r in self.revisions)


class _LeaseLost(Exception):
    """Raised inside the write transaction to roll it back."""
