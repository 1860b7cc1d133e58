"""One current state per subject: an alert is firing or resolved, a pipeline failing or passing.

A webhook event that reports the state of a subject (``ParsedEvent.state_of``, with an outcome
of ``events.STATES``: an alert by its fingerprint, a GitHub workflow or check on one branch, a
Harness pipeline, stage or step) retires the subject's current events of the other state that
happened no later than it: a resolution supersedes the memories of the same alert firing, a
pass the failures of the same pipeline, a new firing or failure the resolution or pass before
it. It supersedes as the update engine does (``valid_to`` = the new memory's ``valid_from``,
``superseded_by``, a ``supersede`` entry in the old memory's history, an ``update`` entry
naming it under ``supersedes`` in the new one's), so a search serves the current state while
``as_of`` still finds the alert firing while it fired. An event older than a current one of
the other state (delivered late) is superseded by it at once. Events of the same state do not
retire each other (two failures are two runs), nor does another subject's event: another
alert or instance, another pipeline, another branch.

The subject is kept in ``metadata.state_of`` and found by a tag of its hash (:func:`tag`), one
indexed lookup per subject and write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..events import STATES
from ..model import MemoryRecord, MemoryType, SearchFilter
from ..stores.base import Memories, StoreTx, TextIndex
from .update import record_change, supersede

ACTOR = "webhook"
TAG_PREFIX = "state:"
# Current events of one subject read at once: they are of one state (the rule leaves no two of
# different states current), so only a long run of failures comes near it.
_MOST = 1000


def tag(subject: str) -> str:
    """The tag that finds the events of ``subject`` (a hash: any subject fits in a tag)."""
    return TAG_PREFIX + hashlib.sha256(subject.encode("utf-8", "replace")).hexdigest()[:16]


def state_of(rec: MemoryRecord) -> tuple[str, str] | None:
    """``(subject, state)`` of an event memory that reports a subject's state, else None."""
    subject, outcome = rec.metadata.get("state_of"), rec.metadata.get("outcome")
    if rec.memory_type is MemoryType.EVENT and isinstance(subject, str) \
            and isinstance(outcome, str) and outcome in STATES:
        return subject, STATES[outcome]
    return None


@dataclass
class _Successor:
    """A memory that retired others in this write, and why."""

    record: MemoryRecord
    why: str
    retired: list[str] = field(default_factory=list)


def settle(tx: StoreTx, records: Memories, text: TextIndex, created: Sequence[MemoryRecord],
           now: datetime) -> None:
    """Apply the rule to the memories ``created`` by this write (``tx``), the earliest event
    first; ``records`` and ``text`` read the memories written before (what they return of this
    write, which SQLite's writing thread sees, is left out: ``created`` holds it)."""
    mine = sorted((r for r in created if state_of(r) is not None), key=lambda r: r.valid_from)
    written = {r.memory_id for r in created}
    current: dict[str, dict[str, MemoryRecord]] = {}  # subject -> its current events by id
    successors: dict[str, _Successor] = {}
    for rec in mine:
        found = state_of(rec)
        assert found is not None
        subject, state = found
        if subject not in current:
            current[subject] = _stored(records, text, rec, subject, written, now)
        others = [r for r in current[subject].values()
                  if r.scope == rec.scope and STATES[r.metadata["outcome"]] != state]
        for old in (r for r in others if r.valid_from <= rec.valid_from):
            _retire(tx, old, rec, subject, successors, now)
            del current[subject][old.memory_id]
        later = [r for r in others if r.valid_from > rec.valid_from]
        if later:  # delivered after a later state of its subject: never current
            _retire(tx, rec, min(later, key=lambda r: r.valid_from), subject, successors, now)
        else:
            current[subject][rec.memory_id] = rec
    for s in successors.values():
        s.record.updated_at = now
        tx.update(s.record, fields=["updated_at"])
        record_change(tx, s.record, "update", now, ACTOR,
                      f"supersedes {', '.join(s.retired)}: {s.why}",
                      new={"supersedes": s.retired})


def _stored(records: Memories, text: TextIndex, rec: MemoryRecord, subject: str,
            written: set[str], now: datetime) -> dict[str, MemoryRecord]:
    """The current events of ``subject`` committed before this write, by id."""
    tenant = rec.scope.tenant
    hits = text.tag_search([tag(subject)], SearchFilter(tenant=tenant, types=[MemoryType.EVENT]),
                           now, _MOST)
    ids = [m for m, _ in hits if m not in written]
    found = records.get_many(tenant, ids) if ids else {}
    return {i: r for i, r in found.items() if r.valid_to is None and state_of(r) is not None
            and r.metadata["state_of"] == subject}  # the tag is a hash: the subject decides


def _retire(tx: StoreTx, old: MemoryRecord, new: MemoryRecord, subject: str,
            successors: dict[str, _Successor], now: datetime) -> None:
    """Supersede ``old`` by ``new`` (the entry naming it in ``new``'s history comes last, one
    per successor)."""
    why = (f"the state of {subject} is {new.metadata['outcome']} since "
           f"{new.valid_from.isoformat()}")
    supersede(tx, old, new, why, ACTOR, now)
    successors.setdefault(new.memory_id, _Successor(new, why)).retired.append(old.memory_id)
