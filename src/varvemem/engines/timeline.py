"""A memory as it was at a past time, replayed backwards from its history.

Every change writes a :class:`~varvemem.model.HistoryEntry` with the old and new values of the
fields it touched (a create the whole record, a delete the last state, a link the ids added and
removed). Undoing, newest first, the entries made after a time gives the record as it was then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from ..errors import NotFoundError
from ..model import HistoryEntry, MemoryRecord

# The actions whose change also set updated_at (a link only when made by an update).
_STAMPS_UPDATED = {"create", "update", "feedback", "supersede", "merge", "move", "restore",
                   "link"}


def snapshot(r: MemoryRecord) -> dict[str, Any]:
    """A record as history stores it (no embedding)."""
    return r.model_dump(mode="json", exclude={"embedding"})


def state_at(state: dict[str, Any], entries: Sequence[HistoryEntry],
             when: datetime) -> MemoryRecord:
    """``state`` (a record as :func:`snapshot` makes it, the newest
    one ``entries`` lead to) with every change made after ``when`` undone, newest first.

    Rebuilt exactly: every field history records, and ``updated_at`` and ``tier_since`` from
    the times of the changes kept. Left as ``state`` has them, because no entry records them:
    the usage counters, ``context_after``, a chunk's ``doc_hash`` and the related ids an
    experience gains from abstraction.
    """
    state = dict(state)
    later = [i for i, e in enumerate(entries) if e.at > when and e.action != "create"]
    for i in reversed(later):
        _undo(state, entries, i)
    kept = [e for e in entries if e.at <= when or e.action == "create"]
    for name, stamps in (("updated_at", _STAMPS_UPDATED), ("tier_since", {"move", "restore"})):
        at = next((e.at for e in reversed(kept) if e.action in stamps
                   and "related_memory_ids_added" not in (e.new or {})), None)
        if at is not None:
            state[name] = at.isoformat()
        elif name == "tier_since" and kept and kept[0].action == "create":
            # a create entry without the record (as written now): tier_since began as
            # created_at
            state[name] = (kept[0].new or {}).get(name, state.get("created_at"))
    return MemoryRecord.model_validate(state)


def as_created(state: dict[str, Any], entries: Sequence[HistoryEntry],
               links: Sequence[HistoryEntry] = ()) -> dict[str, Any]:
    """The record as its create entry made it, as history shows it: ``state`` (the newest
    one ``entries`` lead to) with every entry after the create undone, and the ``links``
    back (:func:`links_back`) made after it. A create entry stores no copy of the record
    (the row holds it, and each later entry what it changed); what no entry records is as at
    any creation: no use counted, no reply (``context_after``) yet. A link made by a later
    memory of the same batch (the same instant) is shown as part of it."""
    state = dict(state)
    first = next(i for i, e in enumerate(entries) if e.action == "create")
    created = entries[first]
    later = [*entries[first + 1:], *(e for e in links if e.at > created.at)]
    for i in range(len(later) - 1, -1, -1):
        _undo(state, [*entries[: first + 1], *later], first + 1 + i)
    state["updated_at"] = created.at.isoformat()
    state["tier_since"] = (created.new or {}).get("tier_since") or state.get("created_at")
    state.update(context_after=[], retrieval_count=0, last_retrieved_at=None,
                 scored_retrievals=0, decayed_at=None)
    return MemoryRecord.model_validate(state).model_dump(mode="json", exclude={"embedding"})


def record_at(memory_id: str, current: MemoryRecord | None, entries: Sequence[HistoryEntry],
              when: datetime, with_embedding: bool) -> MemoryRecord:
    """The memory as it was at ``when``: the changes made after it undone from its ``current``
    record (None once deleted: then from the snapshot its delete kept); :func:`state_at` says
    which fields are exact. :class:`NotFoundError` when it was created after ``when`` or
    deleted by then. The embedding (``with_embedding``) is the current one, or None when the
    content was different then.

    It is the record as it was *recorded* at that time (by the times of its history), while a
    search ``as_of`` asks what was *valid* then (``valid_from``/``valid_to``); they differ
    only for backdated memories and in the milliseconds between preparing a write and
    committing it."""
    if current is not None:
        state = snapshot(current)
    else:
        deletes = [i for i, e in enumerate(entries) if e.action == "delete"]
        if not deletes:
            raise NotFoundError(f"no memory {memory_id}")
        gone = entries[deletes[-1]]
        if gone.at <= when:
            raise NotFoundError(f"memory {memory_id} did not exist at {when.isoformat()} "
                                f"(deleted at {gone.at.isoformat()})")
        if not gone.old:
            raise NotFoundError(f"memory {memory_id} was erased: its past states are gone")
        state, entries = dict(gone.old), entries[: deletes[-1]]
    if current is not None and not changed_after(entries, when):
        past = current
    else:
        past = state_at(state, entries, when)
        if current is not None and with_embedding and past.content_hash == current.content_hash:
            past.embedding = current.embedding
    if past.created_at > when:
        raise NotFoundError(f"memory {memory_id} did not exist at {when.isoformat()}")
    return past


def changed_after(entries: Sequence[HistoryEntry], when: datetime) -> bool:
    """Whether any change but the create was made after ``when``."""
    return any(e.at > when and e.action != "create" for e in entries)


def _undo(state: dict[str, Any], entries: Sequence[HistoryEntry], i: int) -> None:
    """Put ``state`` back to what it was before ``entries[i]``."""
    e = entries[i]
    old, new = e.old or {}, e.new or {}
    related: list[str] = state.get("related_memory_ids") or []
    meta = dict(state.get("metadata") or {})
    if "related_memory_ids_added" in new:  # a link keeps the difference, not the lists
        added = set(new["related_memory_ids_added"])
        state["related_memory_ids"] = [*old.get("related_memory_ids_removed", []),
                                       *(r for r in related if r not in added)]
        return
    if e.action == "abstract":  # the experience and its sources were linked both ways
        made = set(new.get("sources") or []) | {new.get("experience_id")}
        state["related_memory_ids"] = [r for r in related if r not in made]
        if "experience_id" in new:
            meta.pop("experience_id", None)
            state["metadata"] = meta
        return
    if e.action == "merge":
        if old.get("occurrences", 1) == 1:
            meta.pop("occurrences", None)
        else:
            meta["occurrences"] = old["occurrences"]
        state["metadata"] = meta
    keys = {*old, *new} & set(MemoryRecord.model_fields)
    if e.action == "restore":
        keys.add("expires_at")  # a restore drops a passed expiry, unrecorded
    for key in keys:
        if key in old:
            state[key] = old[key]
        else:  # an update records the keywords it recomputed as new values only
            state[key] = next((p.new[key] for p in reversed(entries[:i])
                               if p.new and key in p.new), state.get(key))


def back_links(memory_id: str, current: MemoryRecord | None,
               entries: Sequence[HistoryEntry],
               history: Callable[[str], Sequence[HistoryEntry]]) -> list[HistoryEntry]:
    """``entries`` with the links back that history does not write on this memory
    (:func:`links_back`), in time order."""
    made = links_back(memory_id, current, entries, history)
    if not made:
        return list(entries)
    out = list(entries)
    for m in made:
        at = next((i for i, e in enumerate(out) if e.at > m.at), len(out))
        out.insert(at, m)
    return out


def links_back(memory_id: str, current: MemoryRecord | None,
               entries: Sequence[HistoryEntry],
               history: Callable[[str], Sequence[HistoryEntry]]) -> list[HistoryEntry]:
    """The links back that history does not write on this memory (a newer memory associated
    with it at its add, :meth:`.update.UpdateEngine.link`), as the link entries they stand
    for. ``history`` reads another memory's entries; only the ids this memory holds or
    dropped are read."""
    held = list(current.related_memory_ids) if current is not None else []
    for e in entries:
        if e.action == "delete" and e.old:
            held += list(e.old.get("related_memory_ids") or [])
        held += list((e.old or {}).get("related_memory_ids_removed") or [])
    written = {i for e in entries for i in (e.new or {}).get("related_memory_ids_added") or []}
    mine = next((e for e in entries if e.action == "create"), None)
    made: list[HistoryEntry] = []
    for rid in dict.fromkeys(held):
        if rid in written:
            continue
        create = next((e for e in history(rid) if e.action == "create"), None)
        if create is None:
            continue
        new = create.new or {}
        # A create entry written with the record (by older releases) names the ids it linked
        # to. One without it names none: a newer memory held without a link entry of its own
        # was linked by that memory's add, as that is the only link no entry here records.
        linked = memory_id in (new.get("related_memory_ids") or []) \
            if "content" in new else mine is not None and create.at > mine.at
        if linked:
            made.append(HistoryEntry(memory_id=memory_id, action="link", at=create.at,
                                     actor=create.actor,
                                     reason="associated with a new similar memory",
                                     new={"related_memory_ids_added": [rid]}))
    return made
