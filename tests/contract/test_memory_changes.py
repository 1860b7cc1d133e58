"""The memories' change feed (``Memory.changes``) on every store of record: what was written
(any change, by any instance over the same store) and removed (deleted, archived, erased)
since a position, one tenant's only, and nothing when nothing was written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from varvemem import Memory, MemoryChanges, Settings, ValidationError


def ids(changes: MemoryChanges) -> set[str]:
    return {r.memory_id for r in changes.written}


@pytest.mark.parametrize("combo_settings", ["embedded", "postgres"], indirect=True)
def test_the_feed_gives_what_was_written_and_removed_since(
        combo_settings: dict[str, Any], tmp_path: Path, embedder: Any, clock_factory: Any
) -> None:
    clock = clock_factory()

    def open_memory() -> Memory:
        return Memory(settings=Settings.load(home=tmp_path / "home", **combo_settings),
                      embedder=embedder, clock=clock)

    mem, other = open_memory(), open_memory()  # two instances over one store (two processes)
    try:
        start = mem.changes(tenant="acme")
        assert start == MemoryChanges(position=start.position)  # the position alone
        a = mem.add("Alice prefers dark mode in every editor.", type="knowledge",
                    tenant="acme").memory_id
        b = other.add("Backups run nightly at two.", type="knowledge", tenant="acme").memory_id
        chat = mem.add("The flaky checkout test needed a longer timeout.", type="dialogue",
                       session="s1", importance=0.3, tenant="acme").memory_id
        x = mem.add("The Globex roadmap is secret.", type="knowledge",
                    tenant="globex").memory_id
        got = mem.changes(start.position, tenant="acme")
        assert ids(got) == {a, b, chat} and got.removed == [] and got.position > start.position
        assert ids(mem.changes(start.position, tenant="acme", types=["knowledge"])) == {a, b}
        assert mem.changes(got.position, tenant="acme") == MemoryChanges(position=got.position)

        # A change of metadata alone, by the other instance: the record as it is now.
        other.update(a, metadata={"checked": True}, tenant="acme")
        upd = mem.changes(got.position, tenant="acme")
        assert [(r.memory_id, r.metadata.get("checked")) for r in upd.written] == [(a, True)]

        # Another tenant's writes and deletes move the position and show nothing here.
        mem.update(x, metadata={"seen": 1}, tenant="globex")
        mem.delete(x, tenant="globex")
        quiet = mem.changes(upd.position, tenant="acme")
        assert quiet.written == [] and quiet.removed == [] and quiet.position > upd.position
        assert mem.changes(upd.position, tenant="globex").removed == [x]

        # Deleted, erased with its user, archived by the lifecycle, restored.
        other.delete(b, tenant="acme")
        carol = mem.add("Carol's badge number is 4471.", type="knowledge", user="carol",
                        tenant="acme").memory_id
        gone = mem.changes(quiet.position, tenant="acme")
        assert gone.removed == [b] and ids(gone) == {carol}
        mem.delete_user("carol", tenant="acme")
        erased = mem.changes(gone.position, tenant="acme")
        assert erased.removed == [carol] and ids(erased) == set()
        clock.advance(hours=1)
        mem.consolidate(tenant="acme")  # the session ends: short-term
        clock.advance(days=8)
        mem.consolidate(tenant="acme")  # forgotten: archived
        archived = mem.changes(erased.position, tenant="acme")
        assert chat in archived.removed and chat not in ids(archived)
        mem.restore(chat, tenant="acme")
        back = mem.changes(archived.position, tenant="acme")
        assert chat in ids(back) and back.removed == []

        for bad in (-1, "3", True, 1.5):
            with pytest.raises(ValidationError, match="since"):
                mem.changes(bad, tenant="acme")  # type: ignore[arg-type]
    finally:
        mem.close()
        other.close()
