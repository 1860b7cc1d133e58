"""Contextual keys: a dialogue turn is indexed with the turns around it in its session, its
speaker is a tag, and the full-text index follows the analyser."""

from __future__ import annotations

import sqlite3
from importlib import resources
from pathlib import Path

import numpy as np

from varvemem import Memory
from varvemem.stores.sqlite import SqliteStore


def _turns(mem: Memory, session: str, *texts: str) -> list[str]:
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": t}
            for i, t in enumerate(texts)]
    return [r.memory_id for r in mem.add_messages(msgs, user="u1", session=session)]


def test_turns_get_the_turns_before_them_and_their_reply(mem: Memory) -> None:
    a, b, c = _turns(mem, "s1", "Where do you go on Sundays?", "To the lake, every week.",
                     "Sounds lovely.")
    assert mem.get(a).context_before == []
    assert mem.get(a).context_after == ["To the lake, every week."]
    assert mem.get(b).context_before == ["Where do you go on Sundays?"]
    assert mem.get(b).context_after == ["Sounds lovely."]
    assert mem.get(c).context_before == ["To the lake, every week.",
                                         "Where do you go on Sundays?"]
    # A later call continues the same session; another session starts afresh.
    (d,) = _turns(mem, "s1", "We could join you.")
    assert mem.get(d).context_before[0] == "Sounds lovely."
    assert mem.get(c).context_after == ["We could join you."]
    (e,) = _turns(mem, "s2", "New topic.")
    assert mem.get(e).context_before == []


def test_a_reply_is_found_by_the_question_it_answers(mem: Memory) -> None:
    _turns(mem, "s1", "Which lake do you swim in on Sundays?", "Mostly the northern one.")
    _turns(mem, "s2", "The build broke again.", "I will look at the pipeline.")
    hits = mem.search("swim lake Sunday", user="u1", top_k=2)
    assert "Mostly the northern one." in [h.memory.content for h in hits]


def test_the_vector_includes_the_turn_before(mem: Memory, embedder) -> None:
    _, b = _turns(mem, "s1", "What is your favourite colour?", "Blue.")
    stored = np.asarray(mem.get(b, with_embedding=True).embedding, np.float32)
    alone = embedder.embed_documents(["Blue."])[0]
    with_context = embedder.embed_documents(["Blue.\nWhat is your favourite colour?"])[0]
    assert float(stored @ with_context) > 0.999 > float(stored @ alone)


def test_context_is_configurable_and_off_outside_sessions(make_memory) -> None:
    mem = make_memory(update={"context_before": 0, "context_reply": False,
                              "context_embed": 0})
    a, b = _turns(mem, "s1", "Hello there.", "Hi!")
    assert mem.get(b).context_before == [] and mem.get(a).context_after == []
    r = mem.add("A fact without a session", user="u1")
    assert mem.get(r.memory_id).context_before == []


def test_the_speaker_is_a_tag(mem: Memory) -> None:
    r = mem.add("I adopted a dog last week", type="dialogue", session="s1",
                metadata={"speaker": "Caroline"})
    assert "caroline" in mem.get(r.memory_id).tags


def test_dates_are_searchable_words(mem: Memory, clock) -> None:
    from datetime import datetime, timezone

    mem.add("We went to the concert", created_at=datetime(2023, 5, 8, tzinfo=timezone.utc))
    mem.add("We went to the museum", created_at=datetime(2023, 8, 1, tzinfo=timezone.utc))
    hits = mem.search("what did we do in May 2023", top_k=1, profile="faq")
    assert hits and hits[0].memory.content == "We went to the concert"


def test_a_schema_1_store_is_migrated_and_reindexed(tmp_path: Path) -> None:
    db = tmp_path / "varvemem.db"
    conn = sqlite3.connect(db)
    folder = resources.files("varvemem.stores") / "migrations" / "sqlite"
    conn.executescript((folder / "0001_init.sql").read_text("utf-8"))
    conn.execute(
        "INSERT INTO memories (memory_id, tenant, memory_type, tier, content, content_hash, "
        "source, source_reliability, importance, tags, keywords, related, created_at, "
        "updated_at, ttl_mode, valid_from, metadata) VALUES ('mem_1', 'default', 'knowledge', "
        "'long_term', 'Deployments are painted green', 'h', 'user', 0.7, 0.5, '[]', '[]', '[]', "
        "0, 0, 'off', 0, '{}')")
    conn.execute("INSERT INTO memories_fts (rowid, terms) VALUES (1, 'deployments painted')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()

    store = SqliteStore(db)
    try:
        latest = max(int(p.name.split("_", 1)[0]) for p in folder.iterdir()
                     if p.name.endswith(".sql"))
        assert store.schema_version == latest
        from datetime import datetime, timezone

        from varvemem.model import SearchFilter

        hits = store.keyword_search(["deploy", "paint"], SearchFilter(),
                                    datetime.now(timezone.utc), 5)
        assert [h[0] for h in hits] == ["mem_1"]  # stemmed terms: the index was rebuilt
        from varvemem.text.analyzer import INDEX_VERSION

        assert store.get_meta("fts_version") == INDEX_VERSION
    finally:
        store.close()


def test_the_full_text_index_is_refilled_when_the_analyser_changes(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    from varvemem.model import MemoryRecord, MemoryType, SearchFilter, Tier

    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    store = SqliteStore(tmp_path / "varvemem.db")
    with store.transaction() as tx:
        for i in range(2500):  # more than one refill batch
            tx.insert(MemoryRecord(memory_id=f"m{i}", content=f"note {i} painted", created_at=t0,
                                   memory_type=MemoryType.KNOWLEDGE, tier=Tier.LONG_TERM,
                                   updated_at=t0, valid_from=t0), None)
        tx.set_meta("fts_version", "an older analyser")
        tx.update(MemoryRecord(memory_id="m2499", content="note 2499 swimming", created_at=t0,
                               memory_type=MemoryType.KNOWLEDGE, tier=Tier.LONG_TERM,
                               updated_at=t0, valid_from=t0))
    store._c.execute("DELETE FROM memories_fts_1 WHERE rowid > 2000")  # a stale index
    store.close()
    store = SqliteStore(tmp_path / "varvemem.db")
    try:
        hits = store.keyword_search(["swim"], SearchFilter(), t0, 5)
        assert [h[0] for h in hits] == ["m2499"]
        assert len(store.keyword_search(["paint"], SearchFilter(), t0, 5000)) == 2499
    finally:
        store.close()
