"""Erasure by provenance through the library (issue 18): what is derived from a deleted memory
or user goes with it, experiences are made again from what remains, session files lose the
user's turns; the backends' residue scan is in tests/contract/test_erasure.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests._llm import Call, ChatServer
from tests.conftest import Clock, stores_of

from varvemem import Memory, MemoryType, NotFoundError, Settings, StorageError
from varvemem.stores.session_log import SessionLog, Turn

MakeMemory = Callable[..., Memory]
# A failure and its fix, told by two users (each pair alike), important enough to abstract.
ANN = ["order-svc deploy failed with ImagePullBackOff in namespace shop",
       "Fixed the order-svc deploy: added imagePullSecrets regcred, ImagePullBackOff gone"]
BOB = ["The order-svc rollout hit ImagePullBackOff again in shop",
       "order-svc fixed by adding the regcred imagePullSecrets; the rollout succeeded"]


def _told(mem: Memory, clock: Clock, *stories: tuple[str | None, list[str]]) -> dict[str, str]:
    ids = {}
    for user, turns in stories:
        for text in turns:
            clock.advance(minutes=1)
            ids[text] = mem.add(text, type="dialogue", importance=0.8, user=user,
                                session=f"s-{user}").memory_id
    clock.advance(hours=2)
    mem.consolidate()
    return ids


def _experiences(mem: Memory) -> list:
    return mem.get_all(types=[MemoryType.EXPERIENCE])


def test_deleting_a_source_remakes_its_experience_from_the_others(make_memory: MakeMemory,
                                                                  clock: Clock) -> None:
    mem = make_memory()
    ids = _told(mem, clock, ("ann", ANN))
    [exp] = _experiences(mem)
    assert set(exp.metadata["sources"]) == set(ids.values())
    mem.delete(ids[ANN[0]], reason="wrong")
    [again] = _experiences(mem)
    assert again.memory_id != exp.memory_id and again.metadata["sources"] == [ids[ANN[1]]]
    assert ANN[0] not in again.content and "regcred" in again.content
    # Deleted as a plain delete is: the old experience's last state stays in its history.
    last = mem.history(exp.memory_id)[-1]
    assert last.action == "delete" and last.old is not None and "made from a deleted" in \
        last.reason
    assert mem.get(ids[ANN[1]]).metadata["experience_id"] == again.memory_id


def test_an_experience_left_with_too_little_is_deleted_and_its_source_freed(
        make_memory: MakeMemory, clock: Clock) -> None:
    mem = make_memory(lifecycle={"abstract_above": 0.9})  # 0.8 needs company of 3
    texts = [*ANN, "order-svc ImagePullBackOff: regcred was in the wrong namespace"]
    ids = _told(mem, clock, ("ann", texts))
    assert len(_experiences(mem)) == 1
    mem.delete(ids[texts[0]])
    assert _experiences(mem) == []
    for text in texts[1:]:
        assert "experience_id" not in mem.get(ids[text]).metadata
    assert mem.history(ids[texts[1]])[-1].reason == "its experience was deleted"


def test_erasing_a_user_keeps_others_apart_by_default(make_memory: MakeMemory,
                                                      clock: Clock) -> None:
    """Users do not share (the default): Ann's experience, with a memory of no user in it,
    goes with her; Bob's stays as it was; the no-user memory is made into one of its own."""
    mem = make_memory(lifecycle={"abstract_above": 0.7})
    ids = _told(mem, clock, ("ann", ANN), ("bob", BOB), (None, ["order-svc deploy retried "
                                                                "after ImagePullBackOff"]))
    before = {e.memory_id: e for e in _experiences(mem)}
    bobs = [e for e in before.values() if e.scope.user == "bob"]
    assert len(bobs) == 1 and all(e.metadata["users"] in (["ann"], ["bob"], [])
                                  for e in before.values())
    report = mem.delete_user("ann")
    assert report.live >= 3  # her turns and her experience
    after = {e.memory_id: e for e in _experiences(mem)}
    assert bobs[0].memory_id in after and after[bobs[0].memory_id].content == bobs[0].content
    assert not [e for e in after.values() if "ann" in e.metadata["users"]]
    assert all(ANN[0] not in e.content and ANN[1] not in e.content for e in after.values())
    nobody = mem.get(ids["order-svc deploy retried after ImagePullBackOff"])
    assert nobody.metadata.get("experience_id") in after or "experience_id" not in \
        nobody.metadata


def test_a_pair_answered_from_a_deleted_memory_goes_with_it(home: Path, embedder,
                                                            clock: Clock) -> None:
    def answer(call: Call) -> str:
        return "Per memory: " + call.fields["context"].replace("\n", " ")

    settings = Settings.load(home=home, llm={"steps": []})
    with Memory(settings=settings, embedder=embedder, clock=clock,
                llm=ChatServer(answer=answer).client()) as mem:
        fact = mem.add("The billing db replica is billing-ro-3", type="knowledge").memory_id
        pair = mem.ask("which host is the billing replica?").matched["id"]
        assert fact in mem.get(pair).metadata["sources"]
        mem.delete(fact)
        assert mem.get_all(types=[MemoryType.QA]) == []
        assert mem.history(pair)[-1].action == "delete"


def test_session_files_lose_only_the_erased_users_turns(make_memory: MakeMemory) -> None:
    mem = make_memory()
    mem.sessions.save("desk", [{"role": "user", "content": "ann: my badge stopped working"}],
                      user="ann@example.com")
    mem.sessions.save("desk", [{"role": "user", "content": "bob: me too"}], user="bob")
    mem.sessions.save("desk", [{"role": "assistant", "content": "Re-tap at the desk."}])
    mem.sessions.save("ann-only", [{"role": "user", "content": "ann alone"}],
                      user="ann@example.com", tenant="globex")
    mem.sessions.save("ann-only", [{"role": "user", "content": "ann alone"}],
                      user="ann@example.com")
    report = mem.delete_user("ann@example.com")
    assert (report.session_files, report.session_turns) == (1, 2)
    assert [(t["content"], t["user"]) for t in mem.sessions.load_session("desk")] == [
        ("bob: me too", "bob"), ("Re-tap at the desk.", None)]
    assert not mem.sessions.path("ann-only").exists()
    assert mem.sessions.load_session("ann-only", tenant="globex")  # another tenant's Ann


@pytest.mark.parametrize("user", ["ann", "ann@example.com", "a b", "x-->y", "用户/42", "%41"])
def test_a_turns_user_survives_the_file(tmp_path: Path, clock: Clock, user: str) -> None:
    log = SessionLog(tmp_path)
    log.append("default", "s1", [Turn(clock.now, "user", "hello", None, user),
                                 Turn(clock.now, "assistant", "hi")])
    assert [t.user for t in log.load("default", "s1")] == [user, None]
    assert log.erase_user("default", user) == (0, 1)
    assert [t.content for t in log.load("default", "s1")] == ["hi"]
    assert not list(tmp_path.glob(".*.tmp"))  # the rewrite left no temporary file


def test_an_unreachable_answer_cache_stops_the_erasure_before_it_starts(
        make_memory: MakeMemory) -> None:
    mem = make_memory()
    mid = mem.add("Ann's desk is 4B", user="ann").memory_id
    cache = stores_of(mem).answers

    def down(tenant: str) -> int:
        raise StorageError("Redis answer cache unreachable: connection refused")

    cache.drop_tenant = down  # type: ignore[method-assign]
    with pytest.raises(StorageError, match="unreachable"):
        mem.delete_user("ann")
    assert mem.get(mid).content == "Ann's desk is 4B"


def test_deleting_a_successor_leaves_no_memory_pointing_at_it(mem: Memory) -> None:
    """What a deleted memory had replaced points past it, or is current again, with
    history; a search serves it again."""
    a = mem.add("The build agents run Ubuntu 22.04", tags=["ci"]).memory_id
    b = mem.add("The build agents were reimaged to Debian 12", supersedes=[a]).memory_id
    c = mem.add("The build agents now run Debian 13", supersedes=[b]).memory_id
    mem.delete(b, reason="a typo")
    assert mem.get(a).superseded_by == c and mem.get(a).valid_to is not None
    entry = mem.history(a)[-1]
    assert (entry.action, entry.new) == ("supersede", {"valid_to": entry.new["valid_to"],
                                                       "superseded_by": c})
    mem.delete(c)
    back = mem.get(a)
    assert (back.valid_to, back.superseded_by) == (None, None)
    assert mem.history(a)[-1].action == "restore"
    assert mem.search("which OS do the build agents run?", top_k=1)[0].memory.memory_id == a


def test_a_forgotten_successor_and_an_archived_predecessor(make_memory: MakeMemory,
                                                           clock: Clock) -> None:
    """The forget job deleting a successor reinstates what it replaced; a memory restored
    from the archive whose successor was deleted meanwhile comes back current."""
    mem = make_memory(lifecycle={"tiers": {"short_term": {"max_age_days": 1,
                                                          "forget": "delete"},
                                           "mid_term": {"max_age_days": 1}}})
    kept = mem.add("Standups are in the Lisbon room", tier="long_term").memory_id
    brief = mem.add("Standups are on Zoom this week", tier="short_term",
                    supersedes=[kept]).memory_id
    away = mem.add("The VPN endpoint is vpn1.example.com", tier="mid_term").memory_id
    last = mem.add("The VPN endpoint is vpn2.example.com", tier="long_term",
                   supersedes=[away]).memory_id
    clock.advance(days=2)
    mem.consolidate(["forget"])
    assert mem.get(kept).superseded_by is None and mem.get(kept).valid_to is None
    assert mem.get(away).tier.value == "archive"
    mem.delete(last)
    back = mem.restore(away)
    assert (back.valid_to, back.superseded_by) == (None, None)
    assert "was deleted: current again" in mem.history(away)[-1].reason
    with pytest.raises(NotFoundError):
        mem.get(brief)


def test_an_answer_quoting_an_erased_users_memory_leaves_the_session_file(
        make_memory: MakeMemory) -> None:
    mem = make_memory()
    mem.add("Zedquux keeps the spare server keys in locker 42", user="zed")
    asked = mem.ask("where are the spare server keys kept?", session="ops")
    path = mem.sessions.path("ops")
    assert "Zedquux" in path.read_text("utf-8") and asked.sources
    report = mem.delete_user("zed")
    assert report.session_turns == 1
    assert "zedquux" not in path.read_text("utf-8").lower()
    assert [t["role"] for t in mem.sessions.load_session("ops")] == ["user"]


def test_an_erasure_of_more_successors_than_a_page_reinstates_every_one(mem: Memory) -> None:
    """More than one page of ids (500) per query: every predecessor is found."""
    n = 510
    old = [r.memory_id for r in mem.add_many([f"Locker {i} holds kit k{i}" for i in range(n)],
                                             user="amy")]
    mem.add_many([{"content": f"Locker {i} now holds kit z{i}", "supersedes": [old[i]]}
                  for i in range(n)], user="zed")
    assert all(mem.get(i).superseded_by for i in old)
    mem.delete_user("zed")
    assert not [i for i in old if mem.get(i).superseded_by or mem.get(i).valid_to]
