"""Full text's capped read of common terms (``retrieval.keyword_scan_docs``, SQLite): exact
below the cap, bounded above it, Chinese and English alike."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from varvemem.model import MemoryRecord, MemoryType, Scope, SearchFilter, Tier
from varvemem.settings import Settings
from varvemem.stores.sqlite import SqliteStore
from varvemem.text import index_terms

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def rec(mid: str, content: str, user: str | None = None) -> MemoryRecord:
    return MemoryRecord(memory_id=mid, content=content, memory_type=MemoryType.KNOWLEDGE,
                        tier=Tier.LONG_TERM, scope=Scope(tenant="default", user=user),
                        created_at=T0, updated_at=T0, valid_from=T0, content_hash=f"h-{mid}")


def fill(store: SqliteStore, records: list[MemoryRecord]) -> None:
    v = np.ones(8, np.float32) / np.sqrt(8)
    with store.transaction() as tx:
        for r in records:
            tx.insert(r, v)


def corpus(n: int) -> list[MemoryRecord]:
    """``n`` memories that all share common words in both languages; a few rare ones."""
    out = []
    for i in range(n):
        extra = ["alpha", "beta", "gamma", "delta"][i % 4]
        out.append(rec(f"m{i:04d}", f"the team met about the project {extra} note {i} "
                                    f"团队 项目 会议 记录 {i}", user="u1" if i % 2 else "u2"))
    out.append(rec("rare-en", "the team fixed the zephyrine bug in the project"))
    out.append(rec("rare-zh", "团队 在 项目 里 修好了 镜像凭证"))
    out.append(rec("rare-user", "the team project zephyrine kept by a small user", user="u3"))
    return out


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    s = SqliteStore(tmp_path / "varvemem.db")
    fill(s, corpus(300))
    return s


def search(store: SqliteStore, query: str, scan: int | None, limit: int = 10,
           flt: SearchFilter | None = None) -> list[tuple[str, float]]:
    return store.keyword_search(index_terms(query), flt or SearchFilter(), T0, limit, 0.5,
                                5_000, scan)


QUERIES = ["the team project zephyrine", "what did the team say about the project",
           "团队 项目 镜像凭证", "团队 项目 会议", "alpha zephyrine", "note 17 alpha"]


@pytest.mark.parametrize("query", QUERIES)
def test_a_tenant_below_ten_times_the_cap_ranks_exactly(store: SqliteStore, query: str) -> None:
    # 303 memories, cap 100: the tenant is too small for the cap to bite.
    assert search(store, query, 100) == search(store, query, None)


@pytest.mark.parametrize("query", ["zephyrine", "镜像凭证", "zephyrine 17"])
def test_rare_terms_alone_rank_exactly_in_a_big_tenant(store: SqliteStore, query: str) -> None:
    assert search(store, query, 20) == search(store, query, None)


@pytest.mark.parametrize(("query", "rare"), [("the team project zephyrine", "rare-en"),
                                             ("团队 项目 镜像凭证", "rare-zh")])
def test_common_words_do_not_hide_the_rare_word_memory(store: SqliteStore, query: str,
                                                       rare: str) -> None:
    # Cap 20 on 303 memories: "team", "project", "团队", "项目" are each in all of them.
    capped, exact = dict(search(store, query, 20)), dict(search(store, query, None))
    assert max(capped, key=lambda k: capped[k]) == max(exact, key=lambda k: exact[k])
    assert rare in capped
    # A memory a rare term matches gets its whole score, common terms included.
    assert capped[rare] == pytest.approx(exact[rare])


def test_common_words_only_read_the_newest_postings(store: SqliteStore) -> None:
    hits = search(store, "团队 项目 the team", 20, limit=50)
    assert hits, "a query of common words still finds memories"
    newest = {r.memory_id for r in corpus(300)[-23:]}  # the widest term's newest 20 (and after)
    assert {m for m, _ in hits} <= newest
    assert search(store, "团队 项目 the team", None, limit=50) != hits  # the cap did bite


def test_a_filter_that_drops_most_rows_still_finds_the_user_memory(store: SqliteStore) -> None:
    hits = search(store, "the team project zephyrine", 20, limit=5, flt=SearchFilter(user="u3"))
    assert [m for m, _ in hits] == ["rare-user"]
    exact = search(store, "the team project zephyrine", None, limit=5,
                   flt=SearchFilter(user="u3"))
    assert hits[0][1] == pytest.approx(exact[0][1])


def test_the_setting_is_validated() -> None:
    assert Settings().retrieval.keyword_scan_docs == 1_000
    with pytest.raises(ValueError):
        Settings.model_validate({"retrieval": {"keyword_scan_docs": -1}})
