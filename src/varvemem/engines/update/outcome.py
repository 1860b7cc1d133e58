"""What follows a memory: a resolution raises the failure it resolves, and itself.

A new memory that shows a resolution or a confirmation (``update.outcome_signals``) resolves
the failures before it: the turns and tool calls of its session, and the memories sharing an
identifier or an explicit tag with it, at most ``update.outcome_window_hours`` earlier. Each
resolved failure (at most ``update.outcome_max_failures``, the nearest first) gains
``update.outcome_failure_boost`` and remembers what resolved it (``metadata.resolved_by``); the
resolution gains ``update.outcome_resolution_boost`` once and remembers what it resolves
(``metadata.resolves``). Both are bounded by ``lifecycle.importance_ceiling``, and each change
is a ``rescore`` entry in the history naming the rule. The lifecycle's abstraction job reads
``resolves`` to rebuild an experience that summarised the problem before its fix arrived.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from ...model import TYPES, MemoryRecord, SearchFilter, types_where
from ...settings import views
from ...stores import StoreTx, parts
from ..importance import signals
from .shared import record_change

ACTOR = "outcome"
RULE = "resolution-after-failure"


class Config(views.Update, views.Lifecycle, Protocol):
    """The settings sections the rule reads."""


def is_resolution(content: str, settings: Config) -> bool:
    """Does the text show one of ``update.outcome_signals``?"""
    return bool(set(signals(content)) & set(settings.update.outcome_signals))


def is_failure(content: str, settings: Config) -> bool:
    """A failure not resolved in the same words ("no more timeouts" is a resolution)."""
    seen = set(signals(content))
    return "failure" in seen and not seen & set(settings.update.outcome_signals)


def resolve(tx: StoreTx, stores: parts.Records, settings: Config,
            records: Sequence[MemoryRecord], now: datetime) -> None:
    """Apply the rule to the memories just written in ``tx`` (in order; an earlier one of
    the same batch can be the failure a later one resolves)."""
    cfg = settings.update
    if not cfg.outcome_signals or cfg.outcome_max_failures < 1:
        return
    for i, rec in enumerate(records):
        if TYPES[rec.memory_type].resolves and is_resolution(rec.content, settings):
            failures = _failures(stores, settings, rec, records[:i], now)
            if failures:
                _apply(tx, settings, rec, failures, now)


def _failures(stores: parts.Records, settings: Config, rec: MemoryRecord,
              earlier: Sequence[MemoryRecord], now: datetime
              ) -> list[tuple[MemoryRecord, str]]:
    """The failures ``rec`` resolves, nearest first, each with the route that found it."""
    cfg = settings.update
    since = rec.created_at - timedelta(hours=cfg.outcome_window_hours)
    found: dict[str, tuple[MemoryRecord, str]] = {}
    # 1. the same session: its turns and tool calls before this one
    if rec.scope.session:
        # The stored copy first (it holds what an earlier resolution of this batch wrote),
        # then this batch's own records.
        session = [r for t in types_where(lambda x: x.session_window)
                   for r in stores.records.recent_in_session(
                       rec.scope, t, cfg.outcome_candidates, exact=False, until=rec.created_at)]
        session += [r for r in earlier if r.scope.session == rec.scope.session
                    and r.scope.tenant == rec.scope.tenant]
        for r in session:
            found.setdefault(r.memory_id, (r, "same session"))
    # 2. a shared identifier or explicit tag (not a vocabulary tag: "deploy" is no subject)
    keys = _key_tags(rec, settings)
    if keys:
        flt = SearchFilter(tenant=rec.scope.tenant, created_after=since,
                           created_before=rec.created_at)
        hits = stores.records.tag_search(keys, flt, now, cfg.outcome_candidates)
        ids = [m for m, _ in hits if m not in found and m != rec.memory_id]
        stored = stores.records.get_many(rec.scope.tenant, ids) if ids else {}
        batch = [r for r in earlier if r.memory_id not in found and set(keys) & set(r.tags)]
        for r in [*(stored[i] for i in ids if i in stored), *batch]:
            found.setdefault(r.memory_id, (r, "shared tag " + ", ".join(
                sorted(set(keys) & set(r.tags)))))
    out = [(r, route) for r, route in found.values()
           if r.memory_id != rec.memory_id and TYPES[r.memory_type].episode
           and r.valid_to is None and since <= r.created_at <= rec.created_at
           and r.scope.user in (None, rec.scope.user)
           and rec.memory_id not in r.metadata.get("resolved_by", [])
           and is_failure(r.content, settings)]
    out.sort(key=lambda x: (x[0].created_at, x[0].memory_id), reverse=True)
    return out[: cfg.outcome_max_failures]


def _key_tags(rec: MemoryRecord, settings: Config) -> list[str]:
    """The tags that name a subject: all but the vocabulary's and the speaker's."""
    cfg = settings.update
    speakers = {str(rec.metadata.get(k, "")).lower() for k in cfg.speaker_keys}
    return [t for t in rec.tags if t not in cfg.tag_vocabulary and t not in speakers]


def _raised(value: float, boost: float, settings: Config) -> float:
    """``value`` plus ``boost``, never above the lifecycle's ceiling (nor lowered by it)."""
    return round(max(value, min(settings.lifecycle.importance_ceiling, value + boost)), 4)


def _apply(tx: StoreTx, settings: Config, rec: MemoryRecord,
           failures: list[tuple[MemoryRecord, str]], now: datetime) -> None:
    cfg = settings.update
    for f, route in failures:
        _note(tx, settings, f, "resolved_by", [rec.memory_id], cfg.outcome_failure_boost, now,
              f"outcome ({RULE}): resolved by {rec.memory_id} ({route})")
    _note(tx, settings, rec, "resolves", [f.memory_id for f, _ in failures],
          cfg.outcome_resolution_boost, now,
          f"outcome ({RULE}): resolves {', '.join(f.memory_id for f, _ in failures)}")


def _note(tx: StoreTx, settings: Config, rec: MemoryRecord, key: str, ids: list[str],
          boost: float, now: datetime, reason: str) -> None:
    """Add ``ids`` to ``rec.metadata[key]`` and raise its importance by ``boost``, the first
    time only (a second fix of the same failure is recorded, not counted again)."""
    old = rec.importance
    before = list(rec.metadata.get(key, []))
    linked = list(dict.fromkeys([*before, *ids]))
    rec.importance = _raised(old, boost, settings) if not before else old
    rec.metadata = {**rec.metadata, key: linked}
    tx.update(rec, fields=["importance", "metadata"])
    record_change(tx, rec, "rescore", now, ACTOR, reason, old={"importance": old},
                  new={"importance": rec.importance, key: linked})
