"""The lifecycle replays (issue 18): the same home and clock give the same consolidation in any
process, whatever its hash seed; abstraction keeps users apart unless the tenant shares."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from tests.conftest import Clock

import varvemem
from varvemem import Memory, MemoryType

MakeMemory = Callable[..., Memory]

# Two users tell the same story; a third and a memory of no user tell others.
ALICE = ["The checkout of payment-svc times out with 504 at the gateway",
         "Fixed it: raised the gateway pool size of payment-svc to 200, checkout works again"]
BOB = ["payment-svc checkout gives 504 gateway timeouts during peak",
       "The fix was raising the payment-svc gateway pool to 200; checkout recovered"]
CAROL = ["order-svc deploy failed with ImagePullBackOff",
         "Fix: add imagePullSecrets regcred to the order chart; the deploy succeeded"]

# Run in a child process: consolidate the home at a fixed time, print what it made (not the
# experiences' ids: a new id is random).
CHILD = """
import json, sys
from datetime import datetime
from varvemem import Memory
now = datetime.fromisoformat(sys.argv[2])
mem = Memory(sys.argv[1], clock=lambda: now)
report = mem.consolidate()
out = {"jobs": [[j.name, j.counts, j.paths] for j in report.jobs], "experiences": []}
for eid in report.jobs[[j.name for j in report.jobs].index("abstract")].created:
    e = mem.get(eid)
    out["experiences"].append({"content": e.content, "user": e.scope.user,
                               "sources": e.metadata["sources"], "users": e.metadata["users"],
                               "related": e.related_memory_ids, "importance": e.importance})
mem.close()
print(json.dumps(out, sort_keys=True))
"""


def _story(mem: Memory, clock: Clock) -> dict[str, str]:
    """Each user's turns in their own session, important enough to be abstracted."""
    who: dict[str, str] = {}
    for user, turns in (("alice", ALICE), ("bob", BOB), ("carol", CAROL), (None, ALICE[:1])):
        for text in turns:
            clock.advance(minutes=1)
            mid = mem.add(text, type="dialogue", importance=0.8, user=user,
                          session=f"s-{user}").memory_id
            who[mid] = user or ""
    return who


def _consolidate_in_child(home: Path, now: datetime, seed: int) -> dict[str, object]:
    src = str(Path(varvemem.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONHASHSEED": str(seed),
           "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", CHILD, str(home), now.isoformat()], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_consolidation_replays_under_any_hash_seed(make_memory: MakeMemory, clock: Clock,
                                                   home: Path, tmp_path: Path) -> None:
    mem = make_memory()
    who = _story(mem, clock)
    mem.close()
    now = clock.advance(days=1)
    results = []
    for seed in range(1, 7):
        copy = tmp_path / f"home-{seed}"
        shutil.copytree(home, copy)
        results.append(_consolidate_in_child(copy, now, seed))
    assert all(r == results[0] for r in results[1:]), [r["experiences"] for r in results]
    experiences = results[0]["experiences"]
    assert isinstance(experiences, list) and experiences
    for exp in experiences:  # by default no experience mixes users
        users = sorted({who[s] for s in exp["sources"]} - {""})
        assert len(users) == 1 and exp["users"] == users and exp["user"] == users[0]


def test_users_are_abstracted_apart_unless_the_tenant_shares(make_memory: MakeMemory,
                                                             clock: Clock) -> None:
    mem = make_memory()
    ids = {user: [mem.add(t, type="dialogue", importance=0.8, user=user).memory_id
                  for t in turns] for user, turns in (("alice", ALICE), ("bob", BOB))}
    job = next(j for j in mem.consolidate(["abstract"]).jobs if j.name == "abstract")
    assert job.counts == {"experiences": 2, "sources": 4}
    made = {mem.get(e).scope.user: mem.get(e) for e in job.created}
    assert set(made) == {"alice", "bob"}
    for user, exp in made.items():
        assert exp.memory_type is MemoryType.EXPERIENCE
        assert sorted(exp.metadata["sources"]) == sorted(ids[user])
        assert exp.metadata["users"] == [user]
        for src in ids[user]:
            assert mem.get(src).metadata["experience_id"] == exp.memory_id
    mem.close()


def test_a_shared_experience_names_every_user(home: Path, clock: Clock,
                                              make_memory: MakeMemory) -> None:
    mem = make_memory(lifecycle={"abstract_across_users": True})
    ids = [mem.add(t, type="dialogue", importance=0.8, user=user).memory_id
           for user, turns in (("bob", BOB), ("alice", ALICE)) for t in turns]
    job = next(j for j in mem.consolidate(["abstract"]).jobs if j.name == "abstract")
    assert job.counts == {"experiences": 1, "sources": 4}
    exp = mem.get(job.created[0])
    assert exp.scope.user is None  # several users' lesson: the tenant's
    assert exp.metadata["users"] == ["alice", "bob"]
    assert sorted(exp.metadata["sources"]) == sorted(ids)
    assert mem.consolidate(["abstract"]).changed() == 0
    mem.close()


def test_a_memory_of_no_user_joins_one_user_s_experience(make_memory: MakeMemory,
                                                           clock: Clock) -> None:
    """A failure nobody in particular told (an event) and a user's fix make that user's
    experience, not the tenant's: the fix is not shown to everyone."""
    mem = make_memory()
    failure = mem.add_event({"title": "order-svc deploy failed with ImagePullBackOff"},
                            importance=0.8).memory_id
    fix = mem.add(CAROL[1], type="dialogue", importance=0.75, user="carol").memory_id
    other = mem.add(CAROL[1] + " again", type="dialogue", importance=0.75,
                    user="dave").memory_id
    job = next(j for j in mem.consolidate(["abstract"]).jobs if j.name == "abstract")
    by_user = {mem.get(e).scope.user: mem.get(e) for e in job.created}
    assert set(by_user) == {"carol", "dave"}  # the failure joins one of the two fixes
    joined = mem.get(mem.get(failure).metadata["experience_id"])
    user = joined.scope.user
    assert user is not None and joined.metadata["users"] == [user]
    own = {"carol": fix, "dave": other}
    assert set(joined.metadata["sources"]) == {failure, own[user]}
    rest = "dave" if user == "carol" else "carol"
    assert by_user[rest].metadata["sources"] == [own[rest]]
    mem.close()


@pytest.mark.parametrize("shared", [False, True])
def test_a_user_s_fix_rebuilds_the_tenant_s_experience_only_where_users_share(
        make_memory: MakeMemory, clock: Clock, shared: bool) -> None:
    mem = make_memory(lifecycle={"abstract_across_users": shared})
    alert = mem.add_event({"title": "Alert firing: billing-db replication lag",
                           "error_message": "replica billing-db-2 is 900 s behind"},
                          importance=0.8).memory_id
    clock.advance(minutes=2)
    mem.add_messages([{"role": "user", "content": "billing-db replication lag again, the "
                                                  "reports are stale"}], session="s1")
    clock.advance(days=1)
    mem.consolidate()
    exp_id = mem.get(alert).metadata["experience_id"]
    old = mem.get(exp_id)
    assert old.scope.user is None and old.metadata["users"] == []
    clock.advance(hours=12)
    fix = mem.add_messages([{"role": "user", "content": "billing-db lag is gone after raising "
                                                        "wal_keep_size to 4GB on the primary."}],
                           session="s2", user="alice")[0].memory_id
    assert alert in mem.get(fix).metadata["resolves"]
    clock.advance(days=1)
    mem.consolidate()
    exp = mem.get(exp_id)
    assert exp.scope.user is None
    if shared:  # the tenant's lesson, now with alice's fix
        assert "wal_keep_size" in exp.content and fix in exp.metadata["sources"]
        assert exp.metadata["users"] == ["alice"]
    else:  # alice's fix is not shown to the tenant
        assert exp.content == old.content and fix not in exp.metadata["sources"]
        assert mem.get(fix).metadata.get("experience_id") != exp_id
    mem.close()
