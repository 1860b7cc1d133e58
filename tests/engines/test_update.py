"""The update engine: validation, classification, scoring, dedup, association, supersession,
document re-ingestion, and which path (rules or LLM) each step took."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from tests._llm import Call, ChatServer, importance, llm_alone, status, supersede_none, supersede_the
from tests.conftest import Clock, stores_of

from varvemem import Memory, MemoryType, NotFoundError, Settings, Tier, ValidationError


def test_add_returns_id_and_reports_steps(mem: Memory) -> None:
    res = mem.add("Remember: the staging cluster is eks-stg-2", tags=["Infra"])
    assert res.status == "created" and res.memory_id.startswith("mem_")
    assert res.steps["classify"] == "rules" and res.steps["embed"].startswith("usem3")
    assert res.steps["score"] == "rules (remember)"
    rec = mem.get(res.memory_id)
    assert rec.memory_type is MemoryType.KNOWLEDGE and rec.tier is Tier.LONG_TERM
    assert "infra" in rec.tags and "eks-stg-2" in rec.tags
    assert rec.importance == 0.9  # knowledge 0.6 + the remember signal 0.3
    assert rec.source_reliability == mem.settings.update.reliability_by_source["user"]
    assert "staging" in rec.keywords
    assert [h.action for h in mem.history(res.memory_id)] == ["create"]


@pytest.mark.parametrize("content,error", [
    ("", "empty"), ("   \n\t", "empty"), ("x" * 70_000, "over the limit"),
])
def test_bad_content_is_refused_and_nothing_is_written(mem: Memory, content: str,
                                                       error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        mem.add(content)
    assert mem.stats()["memories"] == 0


def test_bad_arguments_are_refused(mem: Memory) -> None:
    with pytest.raises(ValidationError, match=r"unknown memory type 'gossip'"):
        mem.add("x", type="gossip")
    with pytest.raises(ValidationError, match=r"importance"):
        mem.add("x", importance=1.5)
    with pytest.raises(ValidationError, match=r"unknown memory"):
        mem.add("x", supersedes=["mem_nope"])
    with pytest.raises(ValidationError):
        mem.add_many(["fine", ""])
    assert mem.stats()["memories"] == 0


def test_size_limit_is_configurable(make_memory) -> None:
    mem = make_memory(update={"max_content_bytes": 32})
    with pytest.raises(ValidationError, match=r"update.max_content_bytes"):
        mem.add("a sentence that is certainly longer than thirty-two bytes")


def test_exact_duplicate_returns_existing_id(mem: Memory) -> None:
    first = mem.add("The deploy window is Tuesday 10:00-16:00 UTC.", user="u1")
    again = mem.add("the deploy window is   Tuesday 10:00-16:00 UTC.", user="u1")
    assert again.status == "duplicate" and again.memory_id == first.memory_id
    other_user = mem.add("The deploy window is Tuesday 10:00-16:00 UTC.", user="u2")
    assert other_user.status == "created"
    batch = mem.add_many(["Cache keys use the lockfile hash"] * 3)
    assert [r.status for r in batch] == ["created", "duplicate", "duplicate"]
    assert len({r.memory_id for r in batch}) == 1


def test_near_duplicate_is_merged_not_stored_twice(mem: Memory) -> None:
    first = mem.add("The deploy window is Tuesday 10:00-16:00 UTC.", tags=["deploy"])
    near = mem.add("The deploy window is on Tuesday 10:00-16:00 UTC.", tags=["window"])
    assert near.status == "merged" and near.memory_id == first.memory_id
    rec = mem.get(first.memory_id)
    assert {"deploy", "window"} <= set(rec.tags) and rec.metadata["occurrences"] == 2
    assert mem.stats()["memories"] == 1
    assert mem.history(first.memory_id)[-1].action == "merge"


def test_association_links_both_ways(mem: Memory) -> None:
    a = mem.add("The order service failed to pull its image from the registry", type="event")
    b = mem.add("Pods of the order service are stuck in ImagePullBackOff because the registry "
                "pull failed", type="event")
    unrelated = mem.add("The team lunch is on Friday", type="event")
    assert b.related == [a.memory_id]
    assert b.memory_id in mem.get(a.memory_id).related_memory_ids
    assert mem.get(unrelated.memory_id).related_memory_ids == []
    # The link back is told once, by the new memory's create entry (issue 21: no row on each
    # older memory); get(as_of=...) rebuilds the older memory's related ids
    # from it (tests/engines/test_timeline.py).
    assert [e.action for e in mem.history(a.memory_id)] == ["create"]
    assert mem.history(b.memory_id)[0].new["related_memory_ids"] == [a.memory_id]


def test_update_statement_supersedes_the_old_fact(mem: Memory, clock) -> None:
    old = mem.add("Staging runs on cluster eks-stg-2")
    t_change = clock.advance(days=1)
    new = mem.add("Staging now runs on cluster eks-stg-3")
    assert new.superseded == [old.memory_id] and new.steps["supersede"] == "rules"
    stale = mem.get(old.memory_id)
    assert stale.superseded_by == new.memory_id and stale.valid_to == t_change
    entry = mem.history(old.memory_id)[-1]
    assert entry.action == "supersede" and entry.new["superseded_by"] == new.memory_id
    ids = [h.memory.memory_id for h in mem.search("which cluster does staging run on?")]
    assert new.memory_id in ids and old.memory_id not in ids
    ids = [h.memory.memory_id for h in mem.search("staging cluster", include_superseded=True)]
    assert {old.memory_id, new.memory_id} <= set(ids)
    past = [h.memory.memory_id for h in mem.search("staging cluster",
                                                   as_of=t_change - timedelta(hours=1))]
    assert old.memory_id in past and new.memory_id not in past


def test_similar_statement_without_update_cue_does_not_supersede(mem: Memory) -> None:
    a = mem.add("Deploys to production need two approvals")
    b = mem.add("Deploys to production need two approvals and a green smoke stage")
    assert b.superseded == [] and mem.get(a.memory_id).valid_to is None


def test_a_statement_in_dialogue_supersedes_like_any_statement_of_fact(mem: Memory) -> None:
    # Dialogue used not to supersede at all; a statement of fact does, whatever its type.
    a = mem.add("Staging runs on cluster eks-stg-2", type="dialogue")
    b = mem.add("Staging now runs on cluster eks-stg-3", type="dialogue")
    assert b.superseded == [a.memory_id] and mem.get(a.memory_id).valid_to is not None
    q = mem.add("Does staging now run on cluster eks-stg-4?", type="dialogue")
    assert q.superseded == [] and mem.get(b.memory_id).valid_to is None  # a question never


def test_explicit_supersession(mem: Memory) -> None:
    a = mem.add("On-call rotation changes on Mondays")
    b = mem.add("Rotation handover happens at 09:00 UTC", supersedes=[a.memory_id])
    assert b.superseded == [a.memory_id] and b.steps["supersede"] == "explicit"
    assert mem.history(a.memory_id)[-1].reason == "superseded explicitly"


def test_messages_tool_calls_and_events(mem: Memory) -> None:
    res = mem.add_messages([{"role": "user", "content": "Deploy order to staging please"},
                            {"role": "assistant", "content": "The deploy failed: ImagePullBackOff"}],
                           user="u1", session="s1")
    user_turn, reply = (mem.get(r.memory_id) for r in res)
    assert user_turn.memory_type is MemoryType.DIALOGUE and user_turn.scope.session == "s1"
    assert reply.metadata["role"] == "assistant" and reply.source == "agent:assistant"
    # dialogue 0.3; a failure adds 0.15
    assert (user_turn.importance, reply.importance) == (0.3, 0.45)
    tool = mem.get(mem.add_tool_call("kubectl", {"cmd": "get pods"}, "order-7f9 0/1 Error",
                                     session="s1").memory_id)
    assert tool.memory_type is MemoryType.TOOL_CALL and tool.source == "tool:kubectl"
    assert tool.source_reliability == mem.settings.update.reliability_by_source["tool"]
    ev = mem.get(mem.add_event({"pipeline": "order-deploy", "status": "Failed",
                                "error_message": "timeout"}, source="webhook:harness").memory_id)
    assert ev.memory_type is MemoryType.EVENT and ev.tier is Tier.MID_TERM
    assert "status: Failed" in ev.content and ev.metadata["raw"]["pipeline"] == "order-deploy"
    with pytest.raises(ValidationError):
        mem.add_event({})
    with pytest.raises(ValidationError, match=r"content"):
        mem.add_messages([{"role": "user"}])


def test_update_feedback_delete_keep_history(mem: Memory) -> None:
    rec_id = mem.add("Helm charts live in charts/<service>", importance=0.5).memory_id
    mem.update(rec_id, content="Helm charts live in deploy/charts/<service>", reason="moved")
    assert mem.search("where are the helm charts")[0].memory.content.startswith(
        "Helm charts live in deploy/")
    up = mem.feedback(rec_id, helpful=True)
    assert up.importance == pytest.approx(0.6)
    for _ in range(10):
        mem.feedback(rec_id, helpful=True)
    assert mem.get(rec_id).importance == 1.0
    mem.delete(rec_id, reason="obsolete")
    with pytest.raises(NotFoundError):
        mem.get(rec_id)
    hist = mem.history(rec_id)
    assert [h.action for h in hist][:2] == ["create", "update"]
    assert hist[1].old == {"content": "Helm charts live in charts/<service>",
                           "content_hash": hist[0].new["content_hash"],
                           "keywords": hist[0].new["keywords"]}
    # the create entry is shown with the record as it was made, replayed from the later ones
    assert hist[0].new["content"] == "Helm charts live in charts/<service>"
    assert hist[0].new["importance"] == pytest.approx(0.5)
    assert hist[-1].action == "delete" and hist[-1].old["content"].startswith("Helm")
    assert mem.search("helm charts") == []
    with pytest.raises(NotFoundError):
        mem.delete(rec_id)
    with pytest.raises(NotFoundError):
        mem.history("mem_never")


def test_reingesting_a_changed_document_replaces_its_chunks(mem: Memory, tmp_path: Path,
                                                           clock) -> None:
    doc = tmp_path / "handbook.md"
    doc.write_text("# Handbook 3.0\n\n## Smoke tests\n\nBefore a PR you must manually run a "
                   "local smoke test.\n\n## Branching\n\nmain is protected.\n\n## Legacy\n\n"
                   "FTP deploys are allowed on Fridays.\n", "utf-8")
    first = mem.ingest(doc)
    assert first.files == 1 and len(first.added) == 3
    assert mem.ingest(doc).unchanged_files == 1  # nothing changed: nothing added
    clock.advance(days=30)
    doc.write_text("# Handbook 4.0\n\n## Smoke tests\n\nSmoke tests run automatically in CI; the "
                   "manual local smoke test is no longer required.\n\n## Branching\n\nmain is "
                   "protected.\n\n## Reviews\n\nEvery PR needs two approvals.\n", "utf-8")
    second = mem.ingest(doc)
    assert len(second.added) == 2 and second.kept == 1 and len(second.invalidated) == 2
    old = {mem.get(i).metadata["section"]: mem.get(i) for i in second.invalidated}
    new = {mem.get(i).metadata["section"]: i for i in second.added}
    assert old["Smoke tests"].superseded_by == new["Smoke tests"]
    assert old["Legacy"].superseded_by is None
    assert "re-ingested" in mem.history(old["Legacy"].memory_id)[-1].reason
    served = " ".join(h.memory.content for h in mem.search("do I run a smoke test locally?"))
    assert "no longer required" in served and "must manually run" not in served
    assert "FTP" not in " ".join(h.memory.content for h in mem.search("FTP deploys"))


def test_ingest_folder_skips_bad_files_and_refuses_missing_paths(mem: Memory,
                                                                 tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("## A\n\nalpha runbook", "utf-8")
    (tmp_path / "docs" / "b.txt").write_bytes(b"\xff\xfe\x00bad")
    (tmp_path / "docs" / "c.png").write_bytes(b"png")
    report = mem.ingest(tmp_path / "docs", tags=["Docs"])
    assert report.files == 1 and len(report.added) == 1 and len(report.skipped) == 1
    assert "docs" in mem.get(report.added[0]).tags
    with pytest.raises(ValidationError, match=r"does not exist"):
        mem.ingest(tmp_path / "nope")


@pytest.mark.parametrize("wrap", ["prose", "fence"])
def test_llm_path_for_classify_score_and_supersede(home, embedder, clock, wrap: str) -> None:
    opened: list[Memory] = []
    old_fact = "Staging runs on cluster eks-stg-2"
    neighbour = "The staging cluster eks-stg-3 was provisioned last week"
    new_fact = "The staging cluster is eks-stg-3 from today"
    outage = "the payment API returned 502s for ten minutes"
    # Each memory its own importance, none a rule can give (rules add multiples of 0.05).
    scores = {old_fact: 0.61, neighbour: 0.42, new_fact: 0.83, outage: 0.93}

    def no_lock_held() -> None:  # never called while the store's write transaction is held
        assert not any(stores_of(m).records._c.in_transaction for m in opened)

    def classify(call: Call) -> dict:
        assert call.fields["content"] == outage  # only a memory added without a type
        return {"memory_type": "event", "tags": ["Outage", "payments"]}

    server = ChatServer(
        wrap=wrap, before=no_lock_held, classify=classify,
        score=lambda call: {"importance": scores[call.fields["content"]]},
        supersede=supersede_the("eks-stg-2", "newer cluster"))
    with Memory(settings=llm_alone(home), embedder=embedder, clock=clock,
                llm=server.client()) as mem:
        opened.append(mem)
        a = mem.add(old_fact, type="knowledge")
        n = mem.add(neighbour, type="knowledge")
        b = mem.add(new_fact, type="knowledge")  # no update cue: the rules supersede nothing
        asked = server.one("supersede").fields
        assert asked["new"] == new_fact
        # the old fact is a candidate, but not the first: the closest one is the neighbour
        assert asked["old"] == [neighbour, old_fact]
        assert b.steps["score"] == "llm" and b.steps["supersede"] == "llm"
        assert b.superseded == [a.memory_id] and mem.get(n.memory_id).valid_to is None
        assert mem.get(a.memory_id).superseded_by == b.memory_id
        assert mem.history(a.memory_id)[-1].reason == "newer cluster"
        assert mem.history(b.memory_id)[0].reason == f"supersedes {a.memory_id}: newer cluster"
        assert "eks-stg-2" not in mem.get(b.memory_id).tags  # the old words' identifier
        assert [mem.get(r.memory_id).importance for r in (a, n, b)] == [0.61, 0.42, 0.83]
        c = mem.add(outage)
        assert c.steps["classify"] == "llm" and c.steps["score"] == "llm"
        rec = mem.get(c.memory_id)
        assert rec.memory_type is MemoryType.EVENT and rec.tier is Tier.MID_TERM
        assert {"outage", "payments"} <= set(rec.tags) and rec.importance == 0.93
    # a typed memory is not classified, an event is not a supersede candidate
    assert server.tasks == ["score", "score", "score", "supersede", "classify", "score"]
    assert [c.fields["content"] for c in server.of("score")] == [old_fact, neighbour, new_fact,
                                                                 outage]


def test_the_llm_superseding_nothing_keeps_the_old_fact_even_with_an_update_cue(
        home, embedder, clock) -> None:
    server = ChatServer(score=importance(0.77), supersede=supersede_none)
    with Memory(settings=llm_alone(home), embedder=embedder, clock=clock,
                llm=server.client()) as mem:
        a = mem.add("Staging runs on cluster eks-stg-2", type="knowledge")
        b = mem.add("Staging now runs on cluster eks-stg-3", type="knowledge")  # rules would
        assert b.steps["supersede"] == "llm" and b.superseded == []
        assert mem.get(a.memory_id).valid_to is None
        assert server.one("supersede").fields == {
            "new": "Staging now runs on cluster eks-stg-3",
            "old": ["Staging runs on cluster eks-stg-2"]}


@pytest.mark.parametrize("failure,cause", [
    (status(500, "boom"), "HTTP 500"),
    (lambda call: "I cannot help with that.", "answered without JSON"),
    (lambda call: "[1, 2]", "not an object"),
])
def test_llm_failure_falls_back_to_rules_and_says_so(home, embedder, clock, failure,
                                                     cause: str) -> None:
    server = ChatServer(classify=failure, score=failure, supersede=failure)
    with Memory(settings=llm_alone(home), embedder=embedder, clock=clock,
                llm=server.client()) as mem:
        res = mem.add("the payment pipeline failed again")
        assert res.steps["classify"].startswith("rules (llm failed") and cause in \
            res.steps["classify"]
        assert res.steps["score"].startswith("rules (failure); llm failed") and cause in \
            res.steps["score"]
        rec = mem.get(res.memory_id)
        # the rules' values: knowledge 0.6 + the failure signal 0.15
        assert rec.memory_type is MemoryType.KNOWLEDGE and rec.importance == 0.75
        old = mem.add("Staging runs on cluster eks-stg-2", type="knowledge")
        new = mem.add("Staging now runs on cluster eks-stg-3", type="knowledge")
        assert new.steps["supersede"].startswith("rules (llm failed") and new.superseded == [
            old.memory_id]
    tries = 3 if cause == "HTTP 500" else 1  # 5xx is retried (llm.retries = 2)
    assert server.tasks[: 2 * tries] == ["classify"] * tries + ["score"] * tries
    assert len(server.of("supersede")) == tries


@pytest.mark.parametrize("reply,problem", [
    ({"importance": 1.7}, "out of range"), ({"importance": "high"}, "could not convert"),
    ({"score": 0.9}, "importance"),
])
def test_an_llm_score_out_of_range_or_missing_falls_back(home, embedder, clock, reply,
                                                         problem: str) -> None:
    server = ChatServer(score=lambda call: reply)
    with Memory(settings=llm_alone(home), embedder=embedder, clock=clock,
                llm=server.client()) as mem:
        res = mem.add("Remember: the staging cluster is eks-stg-2", type="event")
        assert res.steps["score"].startswith("rules (remember); llm failed") and problem in \
            res.steps["score"]
        assert mem.get(res.memory_id).importance == 0.7  # event 0.4 + remember 0.3


def test_an_llm_supersede_index_outside_the_candidates_supersedes_nothing(
        home, embedder, clock) -> None:
    server = ChatServer(score=importance(0.66),
                        supersede=lambda call: {"superseded": [len(call.fields["old"]), -1]})
    with Memory(settings=llm_alone(home), embedder=embedder, clock=clock,
                llm=server.client()) as mem:
        a = mem.add("Staging runs on cluster eks-stg-2", type="knowledge")
        b = mem.add("Staging now runs on cluster eks-stg-3", type="knowledge")
        assert b.steps["supersede"] == "llm" and b.superseded == []
        assert mem.get(a.memory_id).valid_to is None


def test_bulk_add_across_batches_and_with_given_vectors(make_memory, embedder) -> None:
    mem = make_memory(embedder={"batch_size": 4})
    texts = [f"service-{i} runs {i} replicas in namespace team-{i % 3}" for i in range(10)]
    res = mem.add_many([*texts, texts[0]])  # the last one is a duplicate from batch one
    assert [r.status for r in res].count("created") == 10 and res[-1].status == "duplicate"
    assert res[-1].memory_id == res[0].memory_id
    vecs = embedder.embed_documents(["the cache key uses the lockfile hash"])
    given = mem.add_many(["the cache key uses the lockfile hash"], vectors=vecs)[0]
    assert given.steps["embed"] == "given"
    assert mem.search("cache key lockfile", top_k=1)[0].memory.memory_id == given.memory_id
    with pytest.raises(ValidationError, match="shape"):
        mem.add_many(["x", "y"], vectors=vecs)


def test_a_near_duplicate_must_also_share_its_words(make_memory) -> None:
    mem = make_memory(update={"near_duplicate_threshold": 0.0})  # any cosine passes
    first = mem.add("The deploy window is Tuesday 10:00-16:00 UTC.")
    other = mem.add("Lunch with the platform team moved to Friday.")
    assert other.status == "created"
    again = mem.add("The deploy window is on Tuesday 10:00-16:00 UTC.")
    assert again.status == "merged" and again.memory_id == first.memory_id


class TickingClock(Clock):
    """Moves on by a millisecond at each reading: a draft is prepared before it is committed."""

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


@pytest.fixture
def ticking(home: Path, embedder) -> Iterator[Memory]:
    with Memory(settings=Settings.load(home=home), embedder=embedder,
                clock=TickingClock()) as mem:
        yield mem


def _succession(mem: Memory, old_id: str, new_id: str) -> None:
    """Both sides name the other and the validity of one ends where the other's begins."""
    old, new = mem.get(old_id), mem.get(new_id)
    assert old.superseded_by == new_id and old.valid_to == new.valid_from
    assert mem.history(old_id)[-1].new["superseded_by"] == new_id
    create = mem.history(new_id)[0]
    assert create.action == "create" and create.new["supersedes"] == [old_id]
    assert f"supersedes {old_id}: " in create.reason


def test_a_successor_inherits_the_tags_of_the_fact_it_supersedes(ticking: Memory) -> None:
    mem = ticking
    old = mem.add("The staging cluster is eks-stg-2", tags=["infra"])
    new = mem.add("The staging cluster is now eks-stg-3", tags=["Staging"])
    assert new.superseded == [old.memory_id] and new.steps["supersede"] == "rules"
    # its own tags first, then the old one's, normalised and once each; the identifier the
    # old words produced (eks-stg-2) stays with the old statement
    assert mem.get(new.memory_id).tags == ["staging", "eks-stg-3", "infra"]
    assert [h.memory.memory_id for h in mem.search("staging cluster", tags=["infra"])] == [
        new.memory_id]
    _succession(mem, old.memory_id, new.memory_id)
    # the rule that decided: the same claim with a new value (before the cue word was checked)
    assert "same claim, new value (frame)" in mem.history(new.memory_id)[0].reason
    # at the moment of the change exactly one of the two is current
    at = mem.get(new.memory_id).valid_from
    for t, want in ((at - timedelta(microseconds=1), old.memory_id), (at, new.memory_id)):
        ids = [h.memory.memory_id for h in mem.search("staging cluster", as_of=t)]
        assert want in ids and len({old.memory_id, new.memory_id} & set(ids)) == 1


def test_explicit_supersession_inherits_only_from_memories_still_current(
        ticking: Memory) -> None:
    mem = ticking
    old = mem.add("On-call rotation changes on Mondays", tags=["oncall"])
    first, second = mem.add_many([
        {"content": "Rotation handover happens at 09:00 UTC", "supersedes": [old.memory_id]},
        {"content": "Pager duty escalates after 15 minutes", "supersedes": [old.memory_id],
         "tags": ["pager"]}])
    assert first.superseded == [old.memory_id] and second.superseded == []
    _succession(mem, old.memory_id, first.memory_id)
    assert "oncall" in mem.get(first.memory_id).tags
    # the second came when the old one was no longer current: nothing inherited or claimed
    assert "oncall" not in mem.get(second.memory_id).tags
    create = mem.history(second.memory_id)[0]
    assert "supersedes" not in create.new and create.reason == ""


def test_a_better_pair_inherits_the_superseded_pairs_tags(ticking: Memory) -> None:
    mem = ticking
    q = "How do I restart the payment service?"
    first = mem.add(f"{q}\nAsk the on-call.", type="qa", question=q, answer="Ask the on-call.",
                    score=0.6, tags=["payments"])
    better = mem.add(f"{q}\nRun the rollout restart.", type="qa", question=q,
                     answer="Run the rollout restart.", score=0.9)
    assert better.superseded == [first.memory_id]
    assert "payments" in mem.get(better.memory_id).tags
    _succession(mem, first.memory_id, better.memory_id)
    assert "better-scored answer" in mem.history(better.memory_id)[0].reason


def test_a_backdated_memory_superseding_a_later_one_leaves_it_never_valid(
        mem: Memory, clock) -> None:
    later = mem.add("The release branch is cut on Wednesdays", tags=["release"])
    start = clock.now
    clock.advance(days=10)
    fix = mem.add("The release branch is cut on Thursdays", created_at=start - timedelta(days=5),
                  supersedes=[later.memory_id])
    old, new = mem.get(later.memory_id), mem.get(fix.memory_id)
    # recorded as never true: its validity is empty, the correction holds from its own time
    assert old.valid_to == old.valid_from == start and new.valid_from == start - timedelta(days=5)
    assert "release" in new.tags
    for t in (start - timedelta(days=1), start, start + timedelta(days=1)):
        ids = [h.memory.memory_id for h in mem.search("release branch cut", as_of=t)]
        assert fix.memory_id in ids and later.memory_id not in ids


def test_a_reingested_chunk_succeeds_the_old_one(ticking: Memory, tmp_path: Path) -> None:
    mem = ticking
    doc = tmp_path / "handbook.md"
    doc.write_text("# Handbook\n\n## Smoke tests\n\nBefore a PR you must manually run a local "
                   "smoke test.\n\n## Legacy\n\nFTP deploys are allowed on Fridays.\n", "utf-8")
    first = mem.ingest(doc, tags=["handbook"])
    doc.write_text("# Handbook\n\n## Smoke tests\n\nSmoke tests run automatically in CI.\n",
                   "utf-8")
    second = mem.ingest(doc)
    old = {mem.get(i).metadata["section"]: i for i in first.added}
    new = second.added[0]
    assert set(second.invalidated) == set(old.values())
    assert "handbook" in mem.get(new).tags
    _succession(mem, old["Smoke tests"], new)
    assert mem.history(new)[0].reason.startswith(f"ingested from document:{doc.resolve()}; ")
    removed = mem.get(old["Legacy"])
    assert removed.superseded_by is None and removed.valid_to is not None


def test_a_link_back_shows_in_the_older_memory_as_of_after_it(mem: Memory, clock) -> None:
    """The older memory's history holds no link row; get(as_of=...) still tells its related
    ids before and after the newer memory arrived (timeline.back_links)."""
    a = mem.add("报销系统登录失败：单点登录服务返回 502", type="event")
    before = clock.advance(hours=1)
    clock.advance(hours=1)
    b = mem.add("报销系统的单点登录又返回 502，登录失败", type="event")
    assert b.related == [a.memory_id]
    after = clock.advance(hours=1)
    assert mem.get(a.memory_id, as_of=before).related_memory_ids == []
    assert mem.get(a.memory_id, as_of=after).related_memory_ids == [b.memory_id]
