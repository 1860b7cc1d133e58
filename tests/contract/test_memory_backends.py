"""One story through the library API on every backend combination that matters; each must tell
it exactly as the embedded default does: add, search, supersede, delete, history, tiers,
archive and restore."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.contract.conftest import COMBOS

from varvemem import Memory, Settings


def story(mem: Memory, clock) -> dict[str, Any]:
    """What a user sees along the story, keyed by content (ids are random)."""
    seen: dict[str, Any] = {}
    ids = {}
    for text in ("Staging runs on cluster eks-stg-2",
                 "The payment pipeline failed because the cache key was wrong",
                 "镜像拉取凭证放错了命名空间，修复后部署成功",
                 "Grafana dashboards live at grafana.internal"):
        ids[text] = mem.add(text).memory_id
    chat = mem.add("the flaky checkout test needed a longer timeout", type="dialogue",
                   importance=0.3, session="s1").memory_id
    before = clock.now
    clock.advance(days=1)
    new = mem.add("Staging now runs on cluster eks-stg-3")
    seen["superseded"] = [mem.get(m).content for m in new.superseded]

    def contents(query: str, **kw: Any) -> list[str]:
        return [h.memory.content for h in mem.search(query, top_k=3, **kw)]

    seen["search"] = {q: contents(q) for q in (
        "which cluster does staging run on?", "why did the payment pipeline fail",
        "镜像凭证 命名空间", "where are the dashboards")}
    seen["as_of"] = contents("staging cluster", as_of=before)
    seen["window"] = [r.content for r in mem.session_window("s1")]
    mem.delete(ids["Grafana dashboards live at grafana.internal"], reason="wrong")
    seen["after_delete"] = contents("where are the dashboards")
    seen["history"] = {text: [h.action for h in mem.history(mid)]
                       for text, mid in ids.items()}
    clock.advance(hours=1)
    seen["jobs"] = [{j.name: j.counts for j in mem.consolidate().jobs}]  # the session ends
    clock.advance(days=8)
    seen["jobs"].append({j.name: j.counts for j in mem.consolidate().jobs})
    seen["tiers"] = mem.stats()["by_tier"]
    seen["archived_hit"] = [(h.memory.content, h.channels) for h in
                            mem.search("flaky checkout test timeout", include_archive=True)][:1]
    restored = mem.restore(chat)
    seen["restored"] = (restored.content, restored.tier.value,
                        [h.action for h in mem.history(chat)][-2:])
    seen["stats"] = {k: v for k, v in mem.stats().items()
                     if k in ("memories", "current", "superseded", "archived", "by_type")}
    return seen


@pytest.mark.parametrize("combo_settings", COMBOS, indirect=True)
def test_every_backend_tells_the_same_story(combo_settings, tmp_path: Path, embedder,
                                            clock_factory, monkeypatch) -> None:
    def run(home: Path, **settings: Any) -> dict[str, Any]:
        clock = clock_factory()
        mem = Memory(settings=Settings.load(home=home, **settings), embedder=embedder,
                     clock=clock)
        try:
            return story(mem, clock)
        finally:
            mem.close()

    calls = {"fill": 0, "store": 0}
    if "cache_url" in combo_settings.get("store", {}):
        from varvemem.stores.redis_cache import RedisActiveCache

        fill, from_store = RedisActiveCache._fill, RedisActiveCache._from_store

        def counted(name, fn):
            def wrapper(*a, **kw):
                calls[name] += 1
                return fn(*a, **kw)
            return wrapper

        monkeypatch.setattr(RedisActiveCache, "_fill", counted("fill", fill))
        monkeypatch.setattr(RedisActiveCache, "_from_store", counted("store", from_store))
    reference = run(tmp_path / "embedded")
    got = run(tmp_path / "other", **combo_settings)
    assert reference["superseded"] == ["Staging runs on cluster eks-stg-2"]
    assert reference["search"]["which cluster does staging run on?"][0] == \
        "Staging now runs on cluster eks-stg-3"
    assert reference["archived_hit"][0][1] == ["archive"]
    assert reference["restored"][1:] == ("short_term", ["archive", "restore"])
    for key in reference:
        assert got[key] == reference[key], key
    # ... and the data went where the settings said
    assert (tmp_path / "other" / "varvemem.db").exists() == \
        ("url" not in combo_settings.get("store", {}))
    vector_url = combo_settings.get("store", {}).get("vector_url")
    assert (tmp_path / "other" / "vectors").exists() == (vector_url is None)
    if vector_url == "pgvector":
        import psycopg

        with psycopg.connect(combo_settings["store"]["url"]) as conn:
            schema = combo_settings["store"]["postgresql"]["schema"]
            [table] = [r[0] for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename LIKE "
                "'vectors_%%'", (schema,))]
            assert conn.execute(f'SELECT count(*) FROM "{schema}"."{table}"').fetchone()[0] \
                == got["stats"]["memories"]
    elif vector_url is not None:  # the vectors are in Milvus
        from pymilvus import MilvusClient

        from varvemem.stores.milvus import milvus_uri

        client = MilvusClient(milvus_uri(vector_url))
        [name] = [c for c in client.list_collections() if c.startswith(
            combo_settings["store"].get("milvus", {}).get("collection", "varvemem"))]
        count = client.query(name, filter="", output_fields=["count(*)"])[0]["count(*)"]
        assert count == got["stats"]["memories"]
        client.close()
    if "cache_url" in combo_settings.get("store", {}):  # Redis answered every window
        assert calls["fill"] >= 1 and calls["store"] == calls["fill"]
    assert (tmp_path / "other" / "archive").exists() == ("archive" not in combo_settings)
    if "url" in combo_settings.get("store", {}):
        import psycopg

        with psycopg.connect(combo_settings["store"]["url"]) as conn:
            table = f'"{combo_settings["store"]["postgresql"]["schema"]}".memories'
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == \
                got["stats"]["memories"]


@pytest.mark.parametrize("combo_settings", COMBOS, indirect=True)
def test_a_replayed_clock_never_shows_what_came_later(combo_settings, tmp_path: Path, embedder,
                                                      clock) -> None:
    """Search, context and the session window at a clock set back (``Memory(clock=...)``, the
    CLI's ``--now``) show only what existed then, on every backend."""
    mem = Memory(settings=Settings.load(home=tmp_path, **combo_settings), embedder=embedder,
                 clock=clock)
    try:
        start = clock.now
        early = mem.add("The deploy window is Tuesday 10:00-16:00 UTC").memory_id
        mem.add("when is the deploy window?", type="dialogue", session="s1")
        clock.advance(days=10)
        late = mem.add("The deploy freeze starts on Thursday 10:00 UTC").memory_id
        mem.add("and the release train?", type="dialogue", session="s1")
        # (what existed then, not what the relevance judge keeps: nothing is cut)
        assert {h.memory.memory_id for h in mem.search("deploy window freeze", min_relevance=0.0)
                } >= {early, late}
        clock.now = start + timedelta(days=1)
        ids = [h.memory.memory_id for h in mem.search("deploy window freeze", min_relevance=0.0)]
        assert early in ids and late not in ids
        text = mem.context("deploy window freeze", session="s1")
        assert "Tuesday" in text and "Thursday" not in text and "release train" not in text
        assert [r.content for r in mem.session_window("s1")] == ["when is the deploy window?"]
        clock.now = start + timedelta(days=11)
        assert [r.content for r in mem.session_window("s1")] == [
            "when is the deploy window?", "and the release train?"]
    finally:
        mem.close()
