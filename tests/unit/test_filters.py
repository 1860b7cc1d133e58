"""Filters as data (varvemem.filters): the Python predicate and each rendering of the clauses
agree on random records and filters."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from varvemem.filters import (
    AllOf,
    AnyOf,
    Clause,
    Not,
    Selection,
    archive_clauses,
    holds,
    predicate,
    search_clauses,
    selection_clauses,
    vector_clauses,
    vector_part,
)
from varvemem.model import (
    MemoryRecord,
    MemoryType,
    Scope,
    SearchFilter,
    Tier,
    TierLimit,
    VectorFilter,
)
from varvemem.stores.base import VectorAttrs
from varvemem.stores.local_vectors import LocalVectorIndex
from varvemem.stores.render import memories_sql, milvus_expr, pgvector_sql
from varvemem.stores.sqlite import SqliteStore
from varvemem.stores.sqlite_dialect import SqliteDialect

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
DIM = 4


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


@st.composite
def records(draw: st.DrawFn, mid: str) -> MemoryRecord:
    created = day(draw(st.integers(0, 6)))
    valid_from = created + timedelta(days=draw(st.integers(0, 2)))
    valid_to = draw(st.none() | st.integers(0, 4).map(lambda d: valid_from + timedelta(days=d)))
    return MemoryRecord(
        memory_id=mid, content=mid, memory_type=draw(st.sampled_from(list(MemoryType))),
        tier=draw(st.sampled_from(list(Tier))),
        scope=Scope(tenant=draw(st.sampled_from(["t1", "t2"])),
                    user=draw(st.sampled_from([None, "u1", "u2"])),
                    agent=draw(st.sampled_from([None, "a1"])),
                    session=draw(st.sampled_from([None, "s1", "s2"]))),
        importance=draw(st.sampled_from([0.1, 0.3, 0.5, 0.8])),
        tags=draw(st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=2)),
        created_at=created, updated_at=created, valid_from=valid_from, valid_to=valid_to,
        expires_at=draw(st.none() | st.integers(0, 8).map(day)),
        tier_since=draw(st.none() | st.integers(0, 8).map(day)))


def _some(values: list) -> st.SearchStrategy:
    return st.none() | st.lists(st.sampled_from(values), unique=True, max_size=3)


_SCOPE = {"tenant": st.sampled_from(["t1", "t2", "t3"]),
          "user": st.sampled_from([None, "u1", "u2", "u9"]),
          "agent": st.sampled_from([None, "a1"]),
          "session": st.sampled_from([None, "s1", "s2"]),
          "types": _some(list(MemoryType)), "tiers": _some(list(Tier)),
          "include_superseded": st.booleans(), "include_archive": st.booleans()}
vector_filters = st.builds(VectorFilter, **_SCOPE)
search_filters = st.builds(
    SearchFilter, **_SCOPE,
    tags=_some(["a", "b", "c", "z"]),
    created_after=st.none() | st.integers(0, 7).map(day),
    created_before=st.none() | st.integers(0, 7).map(day),
    as_of=st.none() | st.integers(0, 10).map(day),
    include_expired=st.booleans(),
    tier_limits=st.lists(st.builds(TierLimit, tier=st.sampled_from(list(Tier)),
                                   min_importance=st.sampled_from([0.0, 0.3, 0.5]),
                                   since=st.none() | st.integers(0, 8).map(day)), max_size=2))


def attrs_of(r: MemoryRecord) -> VectorAttrs:
    s = r.scope
    return VectorAttrs(s.tenant, s.user, s.agent, s.session, r.memory_type.value, r.tier.value,
                       r.valid_to is None)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=30, unique=True).flatmap(
    lambda ns: st.tuples(*(records(f"m{n}") for n in ns))), vector_filters)
def test_local_mask_agrees_with_predicate(recs: tuple[MemoryRecord, ...],
                                          flt: VectorFilter) -> None:
    index = LocalVectorIndex(Path("/nonexistent"), DIM, "test")
    vecs = np.ones((len(recs), DIM), np.float32) / 2
    index.upsert([r.memory_id for r in recs], vecs, [attrs_of(r) for r in recs])
    clauses = vector_clauses(flt)
    mask = index._mask(clauses)
    got = {index._ids[p] for p in np.flatnonzero(mask)}
    assert got == {r.memory_id for r in recs if predicate(clauses)(r)}
    assert {m for m, _ in index.search(vecs[0], len(recs), flt)} == got


def _random_record(rnd: random.Random, mid: str) -> MemoryRecord:
    created = day(rnd.randint(0, 6))
    valid_from = created + timedelta(days=rnd.randint(0, 2))
    return MemoryRecord(
        memory_id=mid, content=mid, content_hash=mid,
        memory_type=rnd.choice(list(MemoryType)), tier=rnd.choice(list(Tier)),
        scope=Scope(tenant=rnd.choice(["t1", "t2"]), user=rnd.choice([None, "u1", "u2"]),
                    agent=rnd.choice([None, "a1"]), session=rnd.choice([None, "s1", "s2"])),
        importance=rnd.choice([0.1, 0.3, 0.5, 0.8]),
        tags=rnd.sample(["a", "b", "c"], rnd.randint(0, 2)),
        created_at=created, updated_at=created, valid_from=valid_from,
        valid_to=rnd.choice([None, valid_from + timedelta(days=rnd.randint(0, 4))]),
        expires_at=rnd.choice([None, day(rnd.randint(0, 8))]),
        tier_since=rnd.choice([None, day(rnd.randint(0, 8))]))


def _filled(folder: Path, make: Callable[[random.Random, str], MemoryRecord], seed: int
            ) -> Iterator[tuple[SqliteStore, list[MemoryRecord]]]:
    """A store of 150 records ``make`` draws (one fixed draw), and the records."""
    store = SqliteStore(folder / "varvemem.db")
    rnd = random.Random(seed)
    recs = [make(rnd, f"m{i}") for i in range(150)]
    with store.transaction() as tx:
        for r in recs:
            tx.insert(r, np.ones(DIM, np.float32) / 2)
    yield store, recs
    store.close()


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        tuple[SqliteStore, list[MemoryRecord]]]:
    """A store of 150 random records."""
    yield from _filled(tmp_path_factory.mktemp("filters"), _random_record, 7)


@settings(max_examples=300, deadline=None)
@given(flt=search_filters, now=st.integers(0, 10).map(day))
def test_search_clauses_agree_with_the_sql_store(
        sqlite_store: tuple[SqliteStore, list[MemoryRecord]], flt: SearchFilter,
        now: datetime) -> None:
    """The full clause list means what the SQL stores' filter does (for their renderer)."""
    store, recs = sqlite_store
    passes = predicate(search_clauses(flt, now))
    want = {r.memory_id for r in recs if passes(r)}
    assert {c.memory_id for c in store.filter([r.memory_id for r in recs], flt, now)} == want


def _lifecycle_record(rnd: random.Random, mid: str) -> MemoryRecord:
    """A random record with the bookkeeping a lifecycle selection tests varied too."""
    return _random_record(rnd, mid).model_copy(update={
        "last_retrieved_at": rnd.choice([None, day(rnd.randint(0, 9))]),
        "decayed_at": rnd.choice([None, day(rnd.randint(0, 9))]),
        "retrieval_count": rnd.randint(0, 3), "scored_retrievals": rnd.randint(0, 3),
        "metadata": rnd.choice([{}, {"experience_id": "x1"}, {"other": 1}]),
        "superseded_by": rnd.choice([None, "m1", "m2", "m3"])})


@pytest.fixture(scope="module")
def lifecycle_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        tuple[SqliteStore, list[MemoryRecord]]]:
    """A store of 150 random records with varied lifecycle bookkeeping."""
    yield from _filled(tmp_path_factory.mktemp("selections"), _lifecycle_record, 8)


_days = st.none() | st.integers(0, 10).map(day)
# A job's criteria: a few of these conditions.
_CONDITIONS = {
    "tenant": st.sampled_from(["t1", "t2", "t3"]), "tiers": _some(list(Tier)),
    "types": _some(list(MemoryType)),
    "exclude_types": st.lists(st.sampled_from(list(MemoryType)), unique=True, max_size=3),
    "current_only": st.booleans(), "importance_above": st.sampled_from([None, 0.1, 0.4]),
    "importance_below": st.sampled_from([None, 0.3, 0.8]), "in_tier_before": _days,
    "idle_before": _days, "expired_at": _days, "unscored_retrievals": st.booleans(),
    "decay_due_before": _days, "not_abstracted": st.booleans(),
    "session": st.none() | st.tuples(st.sampled_from(["t1", "t2"]),
                                     st.sampled_from(["s1", "s2"])),
    "user": st.sampled_from([None, "u1", "u2"]),
    "superseded_by": _some(["m1", "m2", "m9"])}
_one_job = st.lists(st.sampled_from(sorted(_CONDITIONS)), unique=True, max_size=4).flatmap(
    lambda names: st.fixed_dictionaries({n: _CONDITIONS[n] for n in names})).map(
    lambda kw: Selection(**kw))
selections = st.builds(lambda sel, either: replace(sel, any_of=either),
                       _one_job, st.lists(_one_job, max_size=3))


@settings(max_examples=300, deadline=None)
@given(sel=selections)
def test_selection_clauses_agree_with_the_sql_store(
        lifecycle_store: tuple[SqliteStore, list[MemoryRecord]], sel: Selection) -> None:
    """A lifecycle selection means the same in Python (``holds``, ``Selection.matches``) as in
    the SQL stores' ``select`` (one renderer for both)."""
    store, recs = lifecycle_store
    by_id = sorted(recs, key=lambda r: r.memory_id)
    want = [r.memory_id for r in by_id if all(holds(n, r) for n in selection_clauses(sel))]
    assert [r.memory_id for r in by_id if sel.matches(r)] == want
    assert [r.memory_id for r in store.select(sel, len(recs))] == want


def _former_archive_check(flt: SearchFilter, now: datetime, r: MemoryRecord) -> bool:
    """Retrieval's own copy of the filter for archived records, before varvemem.filters."""
    when = flt.as_of or now
    s = r.scope
    if any(want is not None and have != want for have, want in (
            (s.user, flt.user), (s.agent, flt.agent), (s.session, flt.session))):
        return False
    return not ((flt.types and r.memory_type not in flt.types)
                or (flt.tags and not set(flt.tags) & set(r.tags))
                or (flt.created_after and r.created_at < flt.created_after)
                or (flt.created_before and r.created_at >= flt.created_before)
                or r.valid_from > when
                or (not flt.include_superseded and r.valid_to is not None
                    and r.valid_to <= when))


@settings(max_examples=300, deadline=None)
@given(st.lists(records("m"), min_size=1, max_size=20), search_filters,
       st.integers(0, 10).map(day))
def test_archive_clauses_keep_the_former_check(recs: list[MemoryRecord], flt: SearchFilter,
                                               now: datetime) -> None:
    # Archived records are read per tenant and carry the archive tier.
    recs = [r.model_copy(update={"tier": Tier.ARCHIVE,
                                 "scope": r.scope.model_copy(update={"tenant": flt.tenant})})
            for r in recs]
    passes = predicate(archive_clauses(flt, now))
    assert [passes(r) for r in recs] == [_former_archive_check(flt, now, r) for r in recs]


@given(search_filters)
def test_vector_part(flt: SearchFilter) -> None:
    part = vector_part(flt)
    assert type(part) is VectorFilter
    assert part.include_superseded == (flt.include_superseded or flt.as_of is not None)
    assert vector_clauses(part) == vector_clauses(flt.model_copy(
        update={"include_superseded": part.include_superseded}))


def test_renderings() -> None:
    flt = VectorFilter(tenant="t1", user="u1", types=[MemoryType.EVENT])
    assert milvus_expr(AllOf(vector_clauses(flt))) == (
        '(tenant == "t1" and user == "u1" and valid == true and memory_type in ["event"] '
        'and tier != "archive")')
    args: list[object] = []
    assert pgvector_sql(AllOf(vector_clauses(flt)), args) == (
        "(tenant = %s AND user_id = %s AND valid AND memory_type = ANY(%s) AND tier <> %s)")
    assert args == ["t1", "u1", ["event"], "archive"]
    node = Not(AnyOf((Clause("tier", "eq", "archive"), Clause("valid", "eq", False))))
    assert milvus_expr(node) == 'not ((tier == "archive" or valid == false))'
    assert pgvector_sql(node, []) == "NOT ((tier = %s OR NOT valid))"
    with pytest.raises(ValueError, match="cannot filter"):
        milvus_expr(Clause("created_at", "lt", T0))
    # The memories table: the tenant test carries SQLite's planner hint when asked to.
    rule = AllOf((Clause("tenant", "eq", "t1"), Not(AllOf((
        Clause("tier", "eq", "short_term"),
        AnyOf((Clause("importance", "lt", 0.3), Clause("entered", "lt", T0))))))))
    assert memories_sql(rule, SqliteDialect(), "m", hint=True) == (
        "(+m.tenant = %s AND NOT (m.tier = %s AND (m.importance < %s "
        "OR COALESCE(m.tier_since, m.created_at) < %s)))", ["t1", "short_term", 0.3,
                                                            T0.timestamp()])
    assert memories_sql(Clause("valid", "eq", True), SqliteDialect()) == ("valid_to IS NULL", [])
