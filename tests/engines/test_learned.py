"""What a story worked out outlives short-term memory: the outcome rule (a resolution raises
the failure it resolves), promotion, abstraction and its rebuild when a fix arrives, over
30 simulated days of the lifecycle on its schedule."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.conftest import Clock

from varvemem import Memory, MemoryType, Tier

MakeMemory = Callable[..., Memory]


@pytest.fixture
def mem(make_memory: MakeMemory) -> Memory:
    return make_memory()


def run_schedule(mem: Memory, clock: Clock, days: float, step_hours: float = 6) -> None:
    """The worker: every ``step_hours``, the jobs that are due, for ``days``."""
    end = clock.now.timestamp() + days * 86400
    while clock.now.timestamp() < end:
        clock.advance(hours=step_hours)
        due = mem.due_jobs()
        if due:
            mem.consolidate(due)


def turn(mem: Memory, clock: Clock, text: str, session: str, role: str = "user") -> str:
    clock.advance(minutes=2)
    return mem.add_messages([{"role": role, "content": text}], session=session)[0].memory_id


def top3(mem: Memory, query: str, needle: str) -> bool:
    return any(needle.lower() in h.memory.content.lower() for h in mem.search(query, top_k=3))


def test_a_resolution_raises_the_failure_it_resolves_with_history(mem: Memory,
                                                                  clock: Clock) -> None:
    failure = turn(mem, clock, "The checkout-api keeps timing out since the deploy.", "s1")
    chat = turn(mem, clock, "ok, looking", "s1", role="assistant")
    before = mem.get(failure).importance
    fix = turn(mem, clock, "Raising the pool from 10 to 40 sorted it out.", "s1")
    rec = mem.get(failure)
    assert rec.importance > before and rec.metadata["resolved_by"] == [fix]
    assert mem.get(fix).metadata["resolves"] == [failure]
    assert "resolved_by" not in mem.get(chat).metadata  # no failure: not resolved
    entry = mem.history(failure)[-1]
    assert entry.action == "rescore" and "resolution-after-failure" in entry.reason \
        and fix in entry.reason and entry.old == {"importance": before}
    assert "resolution-after-failure" in mem.history(fix)[-1].reason
    # a second fix of the same failure is recorded, the failure not raised twice
    raised = rec.importance
    again = turn(mem, clock, "Confirmed, it works now.", "s1")
    assert mem.get(failure).importance == raised
    assert mem.get(failure).metadata["resolved_by"] == [fix, again]


def test_a_resolution_in_another_session_resolves_by_a_shared_identifier(
        mem: Memory, clock: Clock) -> None:
    failure = turn(mem, clock, "payment-svc is crashing with OOM kills", "s1")
    other = turn(mem, clock, "search-svc is crashing too", "s2")
    clock.advance(hours=3)
    fix = turn(mem, clock, "payment-svc works again after raising its memory limit to 2Gi",
               "s3")
    assert mem.get(failure).metadata["resolved_by"] == [fix]
    assert "resolved_by" not in mem.get(other).metadata  # another service, another session


def test_outside_the_window_nothing_is_resolved(mem: Memory, clock: Clock) -> None:
    failure = turn(mem, clock, "payment-svc is crashing with OOM kills", "s1")
    clock.advance(hours=73)  # update.outcome_window_hours = 72
    turn(mem, clock, "payment-svc works again after raising its memory limit", "s1")
    assert "resolved_by" not in mem.get(failure).metadata


def test_chit_chat_resolves_nothing(mem: Memory, clock: Clock) -> None:
    failure = turn(mem, clock, "The build keeps failing on the arm runners.", "s1")
    for text in ("ok thanks", "did that fix it?", "still not fixed"):
        turn(mem, clock, text, "s1")
    assert "resolved_by" not in mem.get(failure).metadata


def test_what_a_story_worked_out_is_found_after_7_and_30_days(mem: Memory,
                                                              clock: Clock) -> None:
    stories = [
        ("fix", ["The ledger-api throws 502 errors since this morning, can you look?",
                 "The logs say the worker pool is exhausted.",
                 "Bumping workers from 4 to 12 in ledger.yaml did the trick.", "thanks!"],
         "how did we fix the ledger-api 502 errors?", "12"),
        ("procedure", ["We need to renew the wildcard certificate, never done it.",
                       "Done. To renew it: first run certbot renew --cert-name corp, then copy "
                       "the files to the ingress secret, then restart the ingress pods.",
                       "noted"],
         "how do I renew the wildcard certificate?", "certbot"),
        ("zh fix", ["打包机上的 npm install 总是卡住", "用的是国外源，可能网络不通。",
                    "把 npm 源换成公司内部镜像 npm.corp.local 就好了", "好的，谢谢"],
         "打包机 npm install 卡住怎么解决？", "npm.corp.local"),
        ("zh rule", ["生产环境又被周五晚上的发布搞挂了", "以后周五下午三点之后一律不许往生产发布，记一下。",
                     "收到"],
         "周五下午能往生产发布吗？", "三点"),
        ("trivia", ["ok thanks", "lunch was great today"], "", ""),
    ]
    ids: dict[str, list[str]] = {}
    for name, turns, _, _ in stories:
        ids[name] = [turn(mem, clock, t, name) for t in turns]
        clock.advance(minutes=40)
    run_schedule(mem, clock, days=7)
    for name, _, query, needle in stories[:-1]:
        assert top3(mem, query, needle), (name, "7 days")
    run_schedule(mem, clock, days=23)
    for name, _, query, needle in stories[:-1]:
        assert top3(mem, query, needle), (name, "30 days")
    # the lessons were promoted and abstracted; the trivial turns faded into the archive
    fix_turn = mem.get(ids["fix"][2])
    assert fix_turn.tier is Tier.MID_TERM and "experience_id" in fix_turn.metadata
    exp = mem.get(fix_turn.metadata["experience_id"])
    assert exp.memory_type is MemoryType.EXPERIENCE and "12" in exp.content
    for mid in [*ids["trivia"], ids["fix"][3], ids["zh fix"][3]]:
        assert mem.get(mid).tier is Tier.ARCHIVE


def test_an_experience_is_rebuilt_when_the_fix_arrives(mem: Memory, clock: Clock) -> None:
    alert = mem.add_event({"title": "Alert firing: billing-db replication lag",
                           "error_message": "replica billing-db-2 is 900 s behind"},
                          importance=0.8).memory_id
    report = turn(mem, clock, "billing-db replication lag again, the reports are stale", "s1")
    run_schedule(mem, clock, days=1)
    exp_id = mem.get(alert).metadata["experience_id"]
    old = mem.get(exp_id).content
    assert "wal_keep_size" not in old
    clock.advance(hours=12)
    # the fix, in another session, names the same database
    fix = turn(mem, clock, "billing-db lag is gone after raising wal_keep_size to 4GB on "
                           "the primary.", "s2")
    assert {alert, report} & set(mem.get(fix).metadata["resolves"])
    run_schedule(mem, clock, days=1)
    exp = mem.get(exp_id)
    assert "wal_keep_size" in exp.content and fix in exp.metadata["sources"]
    assert fix in exp.related_memory_ids and mem.get(fix).metadata["experience_id"] == exp_id
    entry = [h for h in mem.history(exp_id) if h.action == "abstract"][-1]
    assert entry.reason.startswith(f"re-abstracted: {fix} resolves")
    assert entry.old is not None and entry.old["content"] == old
    # once rebuilt, it stays: the next runs change nothing about it
    run_schedule(mem, clock, days=2)
    assert mem.get(exp_id).content == exp.content
    assert top3(mem, "how did we fix the billing-db replication lag?", "wal_keep_size")


def test_a_failure_and_its_fix_in_one_call(mem: Memory) -> None:
    res = mem.add_messages([
        {"role": "user", "content": "The nightly backup job keeps failing with EACCES."},
        {"role": "assistant", "content": "The backup user lost write access to /srv/backup."},
        {"role": "user", "content": "chown -R backup /srv/backup fixed it, thanks."},
        {"role": "user", "content": "Confirmed, tonight's run worked."}], session="s1")
    failure, _, fix, confirm = (r.memory_id for r in res)
    rec = mem.get(failure)
    assert rec.metadata["resolved_by"] == [fix, confirm]
    raised = [h for h in mem.history(failure) if h.action == "rescore"]
    assert len(raised) == 2 and raised[0].new is not None and raised[1].new is not None
    assert raised[0].new["importance"] == raised[1].new["importance"] == rec.importance
