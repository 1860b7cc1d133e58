"""`Memory.get(id, as_of=T)` gives back the memory exactly as `get` showed it at T.

A property over random lives of one memory: each step changes it through the public API at a
later time, and a snapshot is taken; replaying the history backwards to each step's time must
give that step's snapshot, field for field (those history records, see engines/timeline.py).
The create entry `history` shows holds the record as it was made, rebuilt the same way: the
store keeps no copy of it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import stores_of

from varvemem import Memory
from varvemem.errors import NotFoundError

# What history records; the usage counters are not replayed.
FIELDS = ("content", "keywords", "tags", "importance", "score", "tier", "valid_to",
          "superseded_by", "metadata", "updated_at", "tier_since", "related_memory_ids")

STEPS = st.lists(st.one_of(
    st.tuples(st.just("content"), st.sampled_from([
        "The staging cluster is eks-stg-4", "预发布环境的集群是 eks-stg-5",
        "Staging runs on the eks-stg-6 cluster since the migration"])),
    st.tuples(st.just("tags"), st.lists(st.sampled_from(["infra", "k8s", "运维", "staging"]),
                                         max_size=3)),
    st.tuples(st.just("importance"), st.floats(0.0, 1.0).map(lambda x: round(x, 3))),
    st.tuples(st.just("feedback"), st.booleans()),
    st.tuples(st.just("metadata"), st.dictionaries(st.sampled_from(["owner", "region"]),
                                                   st.sampled_from(["ops", "eu-1"]),
                                                   max_size=2)),
    st.tuples(st.just("tier"), st.sampled_from(["short_term", "mid_term", "long_term"])),
    st.tuples(st.just("similar"), st.sampled_from([  # may link both ways (history: link)
        "The staging cluster eks-stg-3 runs in eu-west-1", "staging cluster eks-stg-3 is small"])),
    st.tuples(st.just("supersede"), st.just("Staging moved to a new cluster")),
), min_size=1, max_size=6)


def _apply(mem: Memory, memory_id: str, step: tuple[str, object]) -> None:
    kind, value = step
    if kind == "feedback":
        mem.feedback(memory_id, bool(value))
    elif kind == "similar":
        mem.add(str(value))
    elif kind == "supersede":
        mem.add(str(value), supersedes=[memory_id])
    else:
        mem.update(memory_id, **{kind: value})


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_as_of_gives_back_every_past_state(tmp_path_factory, embedder, clock_factory,
                                           steps) -> None:
    clock = clock_factory()
    with Memory(home=tmp_path_factory.mktemp("timeline"), embedder=embedder,
                clock=clock) as mem:
        _live_and_replay(mem, clock, steps)


def _live_and_replay(mem: Memory, clock, steps) -> None:
    start = clock.now
    memory_id = mem.add("The staging cluster is eks-stg-3", tags=["infra"]).memory_id
    past = [(clock.now, mem.get(memory_id))]
    for step in steps:
        clock.advance(minutes=5)
        _apply(mem, memory_id, step)
        past.append((clock.now, mem.get(memory_id)))
    clock.advance(minutes=5)
    _replay(mem, memory_id, past, start, steps)  # from the live record
    mem.delete(memory_id)
    _replay(mem, memory_id, past, start, steps)  # from the snapshot its delete kept
    with pytest.raises(NotFoundError, match="did not exist"):
        mem.get(memory_id, as_of=start - timedelta(seconds=1))
    with pytest.raises(NotFoundError, match="deleted at"):
        mem.get(memory_id, as_of=clock.now + timedelta(seconds=1))


def _replay(mem: Memory, memory_id: str, past, start, steps) -> None:
    stored = stores_of(mem).records.history(past[0][1].scope.tenant, memory_id)
    assert stored[0].action == "create" and stored[0].new is None
    shown, made = mem.history(memory_id)[0].new or {}, past[0][1].model_dump(mode="json")
    for name in (*FIELDS, "memory_type", "created_at", "valid_from", "content_hash"):
        assert shown[name] == made[name], (name, steps)
    for at, want in past:
        got = mem.get(memory_id, as_of=at + timedelta(seconds=1))
        for name in FIELDS:
            assert getattr(got, name) == getattr(want, name), (name, at - start, steps)
