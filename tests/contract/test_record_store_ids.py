"""Looking memory ids up by a prefix (the CLI's short ids), on every record store: live,
archived and deleted memories, within one tenant, exact at the edges of the range."""

from __future__ import annotations

from datetime import timedelta

from varvemem.model import HistoryEntry
from varvemem.stores.base import RecordStore, prefix_bound

from .test_record_store import T0, put, rec

LIVE = "mem_" + "ab12cd" + "0" * 26
TWIN = "mem_" + "ab12cd" + "f" * 26  # same 6-hex prefix as LIVE
ARCHIVED = "mem_" + "ab12ce" + "1" * 26
DELETED = "mem_" + "ab12c9" + "2" * 26
OTHER_TENANT = "mem_" + "ab12cd" + "3" * 26


def _fill(store: RecordStore) -> None:
    put(store, rec(LIVE, "live"), rec(TWIN, "twin"), rec(ARCHIVED, "archived"),
        rec(DELETED, "deleted"), rec(OTHER_TENANT, "theirs", tenant="acme"))
    with store.transaction() as tx:
        for mid in (LIVE, TWIN, ARCHIVED, DELETED):
            tx.add_history(HistoryEntry(memory_id=mid, action="create", at=T0, actor="t"),
                           "default")
        tx.archive("default", ARCHIVED, "obj-1", "long_term", T0 + timedelta(days=1))
        tx.delete("default", DELETED)
        tx.add_history(HistoryEntry(memory_id=DELETED, action="delete",
                                    at=T0 + timedelta(days=1), actor="t"), "default")


def test_prefix_finds_live_archived_and_deleted_ids(store: RecordStore) -> None:
    _fill(store)
    assert store.ids_with_prefix("default", "mem_ab12cd", 10) == [LIVE, TWIN]
    assert store.ids_with_prefix("default", "mem_ab12ce", 10) == [ARCHIVED]
    assert store.ids_with_prefix("default", "mem_ab12c9", 10) == [DELETED]  # history only
    assert store.ids_with_prefix("default", "mem_ab12c", 10) == [DELETED, LIVE, TWIN, ARCHIVED]
    assert store.ids_with_prefix("default", LIVE, 10) == [LIVE]
    assert store.ids_with_prefix("default", "mem_ab12cd", 1) == [LIVE]
    assert store.ids_with_prefix("default", "mem_ab12cf", 10) == []


def test_prefix_lookup_stays_in_its_tenant(store: RecordStore) -> None:
    _fill(store)
    assert store.ids_with_prefix("acme", "mem_ab12cd", 10) == [OTHER_TENANT]
    assert store.ids_with_prefix("nobody", "mem_ab12", 10) == []


def test_prefix_bound_keeps_to_hex_ids() -> None:
    assert prefix_bound("mem_ab9") == "mem_aba"
    assert prefix_bound("mem_abf") == "mem_abg"
    assert prefix_bound("mem_ab0") == "mem_ab1"
