"""The tiers' lifecycle, by time travel: sessions end, tool calls expire, memories are promoted,
abstracted, re-scored, forgotten to the archive and restored; nothing is ever lost."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests._llm import Call, ChatServer, status
from tests.conftest import Clock, stores_of

from varvemem import Memory, MemoryType, NotFoundError, Settings, Tier, ValidationError

MakeMemory = Callable[..., Memory]


@pytest.fixture
def mem(make_memory: MakeMemory) -> Memory:
    return make_memory()


def tier_of(mem: Memory, mid: str) -> Tier:
    return mem.get(mid).tier


def test_a_session_turn_is_active_until_30_minutes_idle(mem: Memory, clock: Clock) -> None:
    turn = mem.add_messages([{"role": "user", "content": "The deploy of order-svc is stuck"}],
                            session="s1")[0].memory_id
    other = mem.add("The release train leaves on Fridays", type="dialogue").memory_id
    assert tier_of(mem, turn) is Tier.ACTIVE and tier_of(mem, other) is Tier.SHORT_TERM
    clock.advance(minutes=29)
    assert mem.consolidate(["sessions"]).jobs[0].counts == {}
    assert tier_of(mem, turn) is Tier.ACTIVE
    clock.advance(minutes=2)
    job = mem.consolidate(["sessions"]).jobs[0]
    assert job.counts == {"ended": 1, "moved": 1}
    assert tier_of(mem, turn) is Tier.SHORT_TERM
    assert [h.action for h in mem.history(turn)] == ["create", "move"]
    assert mem.stats()["open_sessions"] == 0


def test_activity_keeps_a_session_open_and_close_ends_it(mem: Memory, clock: Clock) -> None:
    first = mem.add("hello there, order-svc is slow", type="dialogue", session="s1").memory_id
    clock.advance(minutes=20)
    mem.add("and payments too", type="dialogue", session="s1")
    clock.advance(minutes=20)  # 40 min after the first turn, 20 after the last
    mem.consolidate()
    assert tier_of(mem, first) is Tier.ACTIVE
    assert mem.close_session("s1") == 2
    assert tier_of(mem, first) is Tier.SHORT_TERM


def test_tool_call_expires_after_an_hour_unless_important(mem: Memory, clock: Clock) -> None:
    plain = mem.add_tool_call("kubectl_get", {"ns": "prod"}, "3 pods running",
                              session="s1").memory_id
    kept = mem.add_tool_call("helm_upgrade", {"chart": "order"}, "upgraded to 1.4.2",
                             session="s1", important=True).memory_id
    assert {r.memory_id for r in mem.session_window("s1")} == {plain, kept}
    clock.advance(minutes=59)
    assert len(mem.session_window("s1")) == 2
    clock.advance(minutes=2)
    assert [r.memory_id for r in mem.session_window("s1")] == [kept]
    assert plain not in {h.memory.memory_id for h in mem.search("kubectl get pods prod")}
    mem.consolidate()
    assert tier_of(mem, plain) is Tier.ARCHIVE  # expired: archived, not lost
    # kept: its session ended (idle 61 minutes) and, important, it is promoted
    assert tier_of(mem, kept) is Tier.MID_TERM


def test_the_session_window_needs_no_user_but_respects_one(mem: Memory) -> None:
    mem.add_messages([{"role": "user", "content": "deploy order-svc please"}], user="ops",
                     session="s9")
    assert [r.metadata["role"] for r in mem.session_window("s9")] == ["user"]
    assert len(mem.session_window("s9", user="ops")) == 1
    assert mem.session_window("s9", user="someone-else") == []
    assert mem.session_window("s9", tenant="other") == []


def test_context_puts_the_session_first_in_order(mem: Memory, clock: Clock) -> None:
    mem.add("order-svc runs on eks-prod-1", type="knowledge")
    mem.add_messages([{"role": "user", "content": "Why is order-svc failing?"},
                      {"role": "assistant", "content": "Checking the pods of order-svc."}],
                     session="s1")
    clock.advance(minutes=1)
    mem.add_tool_call("kubectl_logs", {"pod": "order-1"}, "ImagePullBackOff", session="s1")
    ctx = mem.context("where does order-svc run?", session="s1")
    head, _, rest = ctx.partition("## Relevant memories")
    assert head.startswith("## This session")
    lines = [x for x in head.splitlines() if x.startswith("- ")]
    assert [x.split(" ", 3)[2] for x in lines] == ["user:", "assistant:", "tool:"]
    assert "eks-prod-1" in rest and "Why is order-svc failing" not in rest


def test_hourly_promotion_above_half(mem: Memory, clock: Clock) -> None:
    high = mem.add("we decided to always pin helm chart versions", type="dialogue",
                   importance=0.55).memory_id
    low = mem.add("lunch at noon", type="dialogue", importance=0.5).memory_id
    job = mem.consolidate(["promote"]).jobs[0]
    assert job.counts == {"promoted": 1}
    assert tier_of(mem, high) is Tier.MID_TERM and tier_of(mem, low) is Tier.SHORT_TERM
    assert mem.consolidate(["promote"]).jobs[0].counts == {}


def test_daily_abstraction_above_0_7_keeps_and_links_sources(mem: Memory, clock: Clock) -> None:
    failure = mem.add_event({"title": "Pipeline order-deploy failed",
                             "error_message": "ImagePullBackOff: pull access denied for "
                                              "registry.local/order"}, importance=0.8).memory_id
    fix = mem.add("Fixed the order-deploy ImagePullBackOff: the order chart needed "
                  "imagePullSecrets regcred in values.yaml; the deploy succeeded after helm "
                  "upgrade.", type="dialogue",
                  importance=0.75).memory_id
    minor = mem.add("The canteen menu changed", type="dialogue", importance=0.6).memory_id
    report = mem.consolidate()
    job = next(j for j in report.jobs if j.name == "abstract")
    # the failure and its fix make one experience; the minor memory alone is not abstracted
    assert job.counts == {"experiences": 1, "sources": 2} and job.paths == {"extractive": 1}
    exp = mem.get(job.created[0])
    assert exp.memory_type is MemoryType.EXPERIENCE and exp.tier is Tier.LONG_TERM
    assert {failure, fix} <= set(exp.related_memory_ids)
    assert "Problem:" in exp.content and "Fix:" in exp.content
    assert "imagepullsecrets" in exp.content.lower()
    for src in (failure, fix):
        rec = mem.get(src)
        assert rec.metadata["experience_id"] == exp.memory_id and rec.tier is Tier.MID_TERM
    assert "experience_id" not in mem.get(minor).metadata  # 0.6 alone: not abstracted
    again = mem.consolidate()
    assert again.changed() == 0, again


def test_a_cluster_of_related_memories_is_abstracted(mem: Memory) -> None:
    texts = ["payment-svc timeout on checkout, error 504 at the gateway",
             "checkout failed again: payment-svc gateway timeout 504 during peak",
             "payment-svc 504 timeouts at checkout traced to the gateway pool size"]
    ids = [mem.add(t, type="event", importance=0.6).memory_id for t in texts]
    assert set(mem.get(ids[2]).related_memory_ids) >= set(ids[:2])
    job = next(j for j in mem.consolidate().jobs if j.name == "abstract")
    assert job.counts == {"experiences": 1, "sources": 3}
    assert set(mem.get(job.created[0]).related_memory_ids) >= set(ids)


def test_short_term_archived_after_7_days_mid_term_after_6_months(mem: Memory,
                                                                   clock: Clock) -> None:
    short = mem.add("the staging db was slow this morning", type="dialogue").memory_id
    mid = mem.add_event({"title": "Alert firing: disk full on db-1"}, importance=0.5).memory_id
    assert tier_of(mem, mid) is Tier.MID_TERM
    clock.advance(days=6, hours=23)
    mem.consolidate()
    assert tier_of(mem, short) is Tier.SHORT_TERM
    clock.advance(hours=2)
    mem.consolidate()
    assert tier_of(mem, short) is Tier.ARCHIVE and tier_of(mem, mid) is Tier.MID_TERM
    clock.advance(days=182)
    mem.consolidate()
    assert tier_of(mem, mid) is Tier.ARCHIVE
    entry = mem.history(short)[-1]
    assert entry.action == "archive" and "7 days" in entry.reason


def test_short_term_filter_in_retrieval(mem: Memory, clock: Clock) -> None:
    low = mem.add("grafana dashboard colour is blue", type="dialogue", importance=0.2).memory_id
    ok = mem.add("grafana dashboard lives at grafana.local", type="dialogue").memory_id
    found = {h.memory.memory_id for h in mem.search("grafana dashboard")}
    assert ok in found and low not in found


def test_experience_archived_after_a_year_unused_documents_never(mem: Memory,
                                                                 clock: Clock) -> None:
    exp = mem.add("Lesson: pin chart versions", type="experience").memory_id
    doc = mem.ingest_text("# Handbook\nAlways pin chart versions.", "handbook.md").added[0]
    clock.advance(days=300)
    # a retrieval resets the idle clock
    assert exp in [h.memory.memory_id for h in mem.search("pin chart versions lesson")]
    clock.advance(days=300)
    mem.consolidate()
    assert tier_of(mem, exp) is Tier.LONG_TERM
    clock.advance(days=366)
    mem.consolidate()
    assert tier_of(mem, exp) is Tier.ARCHIVE and tier_of(mem, doc) is Tier.LONG_TERM


def test_archive_search_and_restore(mem: Memory, clock: Clock) -> None:
    mid = mem.add("the fix for the flaky checkout test was a longer timeout",
                  type="dialogue", importance=0.3).memory_id
    clock.advance(days=8)
    mem.consolidate()
    assert mid not in {h.memory.memory_id for h in mem.search("flaky checkout test fix")}
    hits = mem.search("flaky checkout test fix", include_archive=True)
    assert hits[0].memory.memory_id == mid and hits[0].channels == ["archive"]
    assert hits[0].memory.tier is Tier.ARCHIVE
    files = list((mem.settings.home / "archive").rglob("*.jsonl.gz"))
    assert len(files) == 1 and mid.encode() in gzip.decompress(files[0].read_bytes())
    rec = mem.restore(mid)
    assert rec.tier is Tier.SHORT_TERM and tier_of(mem, mid) is Tier.SHORT_TERM
    assert mem.search("flaky checkout test fix")[0].memory.memory_id == mid
    assert [h.action for h in mem.history(mid)][-2:] == ["archive", "restore"]
    with pytest.raises(ValidationError, match="not archived"):
        mem.restore(mid)
    with pytest.raises(NotFoundError):
        mem.restore("mem_nope")
    mem.consolidate()  # a restored memory gets a fresh retention period
    assert tier_of(mem, mid) is Tier.SHORT_TERM


def test_malformed_archive_object_is_named_and_the_rest_still_read(mem: Memory,
                                                                   clock: Clock) -> None:
    a = mem.add("alpha incident on the ingress controller", type="dialogue").memory_id
    clock.advance(days=8)
    mem.consolidate()
    b = mem.add("beta incident on the ingress controller", type="dialogue").memory_id
    clock.advance(days=8)
    mem.consolidate()
    files = sorted((mem.settings.home / "archive").rglob("*.jsonl.gz"))
    assert len(files) == 2
    bad = next(f for f in files if a.encode() in gzip.decompress(f.read_bytes()))
    bad.write_bytes(b"not gzip")
    hits = mem.search("incident ingress controller", include_archive=True)
    assert [h.memory.memory_id for h in hits] == [b]
    assert any(bad.name in n for n in mem.notices)


def test_unwritable_archive_moves_nothing(mem: Memory, clock: Clock, tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    bad = Memory(settings=mem.settings.model_copy(update={"archive": mem.settings.archive.
                 model_copy(update={"url": f"file://{blocker}/sub"})}),
                 embedder=mem.embedder(), clock=clock)
    mid = bad.add("an old chat line about lunch", type="dialogue").memory_id
    clock.advance(days=8)
    from varvemem.errors import ArchiveError
    with pytest.raises(ArchiveError, match="cannot write"):
        bad.consolidate()
    assert bad.get(mid).tier is Tier.SHORT_TERM
    assert [h.action for h in bad.history(mid)] == ["create"]
    bad.close()


def test_rescoring_by_use_and_age_is_bounded_and_logged(mem: Memory, clock: Clock) -> None:
    used = mem.add("the vault token rotates monthly", type="knowledge",
                   importance=0.6).memory_id
    idle = mem.add("old chatter about the office", type="event", importance=0.4).memory_id
    for _ in range(20):
        mem.search("vault token rotation", type="knowledge")
    mem.consolidate(["rescore"])
    after = mem.get(used).importance
    assert after == pytest.approx(0.6 + mem.settings.lifecycle.use_max)
    assert mem.history(used)[-1].action == "rescore"
    mem.consolidate(["rescore"])
    assert mem.get(used).importance == after  # idempotent
    clock.advance(days=31)
    mem.consolidate(["rescore"])
    assert mem.get(idle).importance == pytest.approx(0.35)
    assert mem.get(used).importance == after  # knowledge does not decay
    for _ in range(40):
        clock.advance(days=31)
        mem.consolidate(["rescore"])
    assert mem.get(idle).importance == mem.settings.lifecycle.importance_floor


def test_worker_schedule(mem: Memory, clock: Clock) -> None:
    assert set(mem.due_jobs()) == {"sessions", "rescore", "promote", "abstract", "forget",
                                   "inbox"}
    mem.consolidate()
    assert mem.due_jobs() == []
    clock.advance(minutes=61)
    assert mem.due_jobs() == ["sessions", "rescore", "promote"]
    clock.advance(days=1)
    assert len(mem.due_jobs()) == 6
    with pytest.raises(ValidationError, match="unknown lifecycle job"):
        mem.consolidate(["nap"])


def test_delete_rule_deletes_and_logs(make_memory: MakeMemory, clock: Clock) -> None:
    mem = make_memory(lifecycle={"tiers": {"short_term": {"max_age_days": 1,
                                                          "forget": "delete"}}})
    mid = mem.add("temporary chatter", type="dialogue").memory_id
    clock.advance(days=2)
    assert mem.consolidate(["forget"]).jobs[0].counts == {"deleted": 1}
    with pytest.raises(NotFoundError):
        mem.get(mid)
    entry = mem.history(mid)[-1]
    assert entry.action == "delete" and entry.actor == "lifecycle"


_STEP = st.sampled_from(["add_turn", "add_tool", "add_event", "add_note", "search",
                         "advance_min", "advance_hours", "advance_days", "advance_months",
                         "consolidate", "close", "restore"])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(_STEP, min_size=5, max_size=30), seed=st.integers(0, 10_000))
def test_no_sequence_of_consolidations_loses_a_memory(tmp_path_factory: pytest.TempPathFactory,
                                                      embedder: Any, steps: list[str],
                                                      seed: int) -> None:
    """live + archived + deleted by a rule = every memory ever added (or made by abstraction)."""
    rng = random.Random(seed)
    clock = Clock()
    home = tmp_path_factory.mktemp("prop")
    mem = Memory(settings=Settings.load(home=home, lifecycle={
        "tiers": {"mid_term": {"max_age_days": 30, "forget": "delete"}}}),
        embedder=embedder, clock=clock)
    words = ["deploy", "failed", "fixed", "helm", "pod", "alert", "token", "lunch", "db"]
    added: set[str] = set()
    made_by_lifecycle: set[str] = set()
    for step in steps:
        text = " ".join(rng.choice(words) for _ in range(5)) + f" {rng.random():.6f}"
        imp = rng.choice([0.2, 0.45, 0.6, 0.8])
        if step == "add_turn":
            added.add(mem.add(text, type="dialogue", session=rng.choice("ab"),
                              importance=imp).memory_id)
        elif step == "add_tool":
            added.add(mem.add_tool_call("sh", {"cmd": text}, "ok", session="a",
                                        importance=imp).memory_id)
        elif step == "add_event":
            added.add(mem.add_event({"title": text}, importance=imp).memory_id)
        elif step == "add_note":
            added.add(mem.add(text, type="experience").memory_id)
        elif step == "search":
            mem.search(text)
        elif step.startswith("advance"):
            unit = step.split("_")[1]
            clock.advance(**{"min": {"minutes": 31}, "hours": {"hours": 2},
                             "days": {"days": 8}, "months": {"days": 200}}[unit])
        elif step == "consolidate":
            for job in mem.consolidate().jobs:
                made_by_lifecycle.update(job.created)
        elif step == "close":
            mem.close_session("a")
        elif step == "restore":
            archived = [r.memory_id for r in stores_of(mem).records.archived("default")]
            if archived:
                mem.restore(rng.choice(archived))
    everything = added | made_by_lifecycle
    live = {r.memory_id for r in stores_of(mem).records.iter_records("default")}
    archived = {r.memory_id for r in stores_of(mem).records.archived("default")}
    deleted = {i for i in everything - live - archived
               if mem.history(i)[-1].action == "delete"
               and mem.history(i)[-1].actor == "lifecycle"}
    assert not live & archived
    assert everything == live | archived | deleted
    for mid in archived:
        assert mem.get(mid).tier is Tier.ARCHIVE  # readable from the archive
    mem.close()


def test_an_archived_memory_is_read_only_and_deleted_from_its_object(mem: Memory,
                                                                     clock: Clock) -> None:
    a = mem.add("alpha note about the ingress", type="dialogue", importance=0.3).memory_id
    b = mem.add("beta note about the ingress", type="dialogue", importance=0.3).memory_id
    clock.advance(days=8)
    mem.consolidate()
    with pytest.raises(ValidationError, match="restore it first"):
        mem.update(a, importance=0.9)
    with pytest.raises(ValidationError, match="restore it first"):
        mem.feedback(a, helpful=True)
    hit = mem.search("alpha note ingress", include_archive=True)[0]
    assert hit.memory.memory_id == a and hit.memory.embedding is None
    mem.delete(a, reason="user asked")
    with pytest.raises(NotFoundError):
        mem.get(a)
    assert mem.get(b).tier is Tier.ARCHIVE  # its neighbour in the object is still there
    files = list((mem.settings.home / "archive").rglob("*.jsonl.gz"))
    held = [json.loads(line)["memory_id"]
            for line in gzip.decompress(files[0].read_bytes()).splitlines()]
    assert len(files) == 1 and held == [b]
    entry = mem.history(a)[-1]
    assert entry.action == "delete" and entry.actor == "api" and entry.reason == "user asked"


def _failed_deploy(mem: Memory) -> tuple[str, str]:
    """An event and the fix of it, important enough to be abstracted together."""
    failure = mem.add_event({"title": "order-deploy failed: ImagePullBackOff"},
                            importance=0.8).memory_id
    fix = mem.add("Fixed the order-deploy ImagePullBackOff: the order chart needed "
                  "imagePullSecrets regcred in values.yaml.", type="dialogue",
                  importance=0.75).memory_id
    return failure, fix


def test_abstraction_through_the_llm(home, embedder, clock: Clock) -> None:
    def abstract(call: Call) -> dict[str, str]:
        srcs = call.fields["sources"]
        assert call.fields["max_chars"] == Settings().lifecycle.abstract_max_chars
        assert [(s["date"], s["type"]) for s in srcs] == [("2026-01-01", "event"),
                                                          ("2026-01-01", "dialogue")]
        assert "order-deploy failed: ImagePullBackOff" in srcs[0]["content"]
        assert "imagePullSecrets regcred" in srcs[1]["content"]
        return {"experience": f"  Lesson from {len(srcs)} memories: pull secrets belong in "
                              "imagePullSecrets (regcred).  "}

    server = ChatServer(wrap="fence", abstract=abstract)  # types and scores given: no other step
    with Memory(home=home, embedder=embedder, clock=clock, llm=server.client()) as mem:
        failure, fix = _failed_deploy(mem)
        job = next(j for j in mem.consolidate().jobs if j.name == "abstract")
        assert job.paths == {"llm": 1} and job.counts == {"experiences": 1, "sources": 2}
        assert job.errors == []
        exp = mem.get(job.created[0])
        assert exp.content == "Lesson from 2 memories: pull secrets belong in " \
                              "imagePullSecrets (regcred)."
        assert exp.memory_type is MemoryType.EXPERIENCE and exp.importance == 0.8
        assert exp.metadata["abstraction"] == "llm" and exp.metadata["sources"] == [failure, fix]
        assert {failure, fix} <= set(exp.related_memory_ids)
        assert mem.history(exp.memory_id)[-1].reason == "abstracted from 2 memories (llm)"
        assert mem.get(fix).metadata["experience_id"] == exp.memory_id
    assert server.tasks == ["abstract"]


def test_a_long_llm_experience_is_clipped(home, embedder, clock: Clock) -> None:
    limit = 120
    server = ChatServer(abstract=lambda call: {"experience": "pull secrets " * 40})
    settings = Settings.load(home=home, lifecycle={"abstract_max_chars": limit})
    with Memory(settings=settings, embedder=embedder, clock=clock, llm=server.client()) as mem:
        _failed_deploy(mem)
        job = next(j for j in mem.consolidate().jobs if j.name == "abstract")
        content = mem.get(job.created[0]).content
        words = " ".join(("pull secrets " * 40).split())
        assert job.paths == {"llm": 1} and content == words[: limit - 1].rstrip() + "…"
        assert len(content) == limit
        assert server.one("abstract").fields["max_chars"] == limit


@pytest.mark.parametrize("failure,cause,tries", [
    (status(503, "busy"), "HTTP 503", 3),  # retried twice (llm.retries), then given up
    (lambda call: {"experience": "   "}, "gave no experience text", 1),
    (lambda call: {"lesson": "pull secrets"}, "gave no experience text", 1),
    (lambda call: "Here is a lesson: pull secrets.", "answered without JSON", 1),
])
def test_abstraction_falls_back_to_extractive_when_the_llm_fails(
        home, embedder, clock: Clock, failure, cause: str, tries: int) -> None:
    server = ChatServer(abstract=failure)
    with Memory(home=home, embedder=embedder, clock=clock, llm=server.client()) as mem:
        _failed_deploy(mem)
        job = next(j for j in mem.consolidate().jobs if j.name == "abstract")
        assert job.paths == {"extractive (llm failed)": 1}
        assert len(job.errors) == 1 and cause in job.errors[0]
        exp = mem.get(job.created[0])
        assert exp.content.startswith("Experience from 2 memories (2026-01-01).")
        assert "Problem: [event] title: order-deploy failed: ImagePullBackOff Fix: Fixed the " \
               "order-deploy ImagePullBackOff: the order chart needed imagePullSecrets " \
               "regcred in values.yaml." in exp.content
        assert exp.metadata["abstraction"] == "extractive (llm failed)"
    assert server.tasks == ["abstract"] * tries


def test_one_tenant_s_consolidation_leaves_the_schedule_alone(mem, clock) -> None:
    mem.add("a fact of tenant a", tenant="a")
    assert "forget" in mem.due_jobs()
    mem.consolidate(["forget"], tenant="a")
    assert "forget" in mem.due_jobs()  # still due for everyone else
    mem.consolidate(["forget"])
    assert "forget" not in mem.due_jobs()
