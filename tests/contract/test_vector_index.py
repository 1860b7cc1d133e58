"""The local vector index: exact and HNSW agree, filters hold, files round-trip or are refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from varvemem.model import MemoryType, SearchFilter, Tier
from varvemem.stores.base import VectorAttrs
from varvemem.stores.local_vectors import IndexFileError, LocalVectorIndex

DIM = 16


def attrs(tenant: str = "default", user: str | None = None, valid: bool = True,
          tier: str = "long_term", mtype: str = "knowledge") -> VectorAttrs:
    return VectorAttrs(tenant, user, None, None, mtype, tier, valid)


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def make(tmp_path: Path, hnsw_threshold: int = 0, **kw) -> LocalVectorIndex:
    return LocalVectorIndex(tmp_path / "v", DIM, "test-model", hnsw_threshold=hnsw_threshold,
                            **kw)


def test_exact_search_is_brute_force(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    vecs = unit(rng, 200)
    idx = make(tmp_path)
    idx.upsert([f"m{i}" for i in range(200)], vecs, [attrs()] * 200)
    q = unit(rng, 1)[0]
    got = idx.search(q, 10, SearchFilter())
    order = np.argsort(-(vecs @ q))[:10]
    assert [g[0] for g in got] == [f"m{i}" for i in order]
    assert got[0][1] == pytest.approx(float(vecs[order[0]] @ q), rel=1e-5)


def test_hnsw_agrees_with_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    vecs = unit(rng, 3000)
    ids = [f"m{i}" for i in range(3000)]
    exact = make(tmp_path / "a")
    hnsw = make(tmp_path / "b", hnsw_threshold=1000, exact_filter_limit=10)
    for idx in (exact, hnsw):
        idx.upsert(ids, vecs, [attrs()] * 3000)
    assert hnsw.uses_hnsw and not exact.uses_hnsw
    recall = []
    for q in unit(rng, 20):
        a = {m for m, _ in exact.search(q, 10, SearchFilter())}
        b = {m for m, _ in hnsw.search(q, 10, SearchFilter())}
        recall.append(len(a & b) / 10)
    assert np.mean(recall) >= 0.9


def test_approximate_lookup_uses_the_graph_only_for_big_sets(tmp_path: Path, monkeypatch) -> None:
    """A near-duplicate lookup over a set past ``hnsw_threshold`` goes to the graph (the FAQ
    fast path); a full search over the same set, or a lookup in a small subset, stays exact."""
    rng = np.random.default_rng(7)
    n = 2000
    vecs = unit(rng, n)
    idx = make(tmp_path, hnsw_threshold=500, exact_filter_limit=5000)
    idx.upsert([f"m{i}" for i in range(n)], vecs,
               [attrs(mtype="qa" if i < 1500 else "event") for i in range(n)])
    exact_calls: list[int] = []
    real = idx._exact
    monkeypatch.setattr(idx, "_exact", lambda *a: exact_calls.append(1) or real(*a))
    qa = SearchFilter(types=[MemoryType.QA])
    found = 0
    for i in rng.choice(1500, 100, replace=False):
        near = vecs[i] + 0.02 * rng.normal(size=DIM).astype(np.float32)
        got = idx.search(near / np.linalg.norm(near), 3, qa, approximate=True)
        found += got[0][0] == f"m{i}"
    # Approximate: the graph may miss a near-duplicate now and then, and usearch builds it on
    # several threads, so the graph differs between runs (60 builds found 98 to 100; one run
    # of the full suite, under load, 93).
    assert found >= 90
    assert not exact_calls
    idx.search(vecs[0], 3, qa)  # a full search: exact below exact_filter_limit
    idx.search(vecs[1600], 3, SearchFilter(types=[MemoryType.EVENT]), approximate=True)
    assert len(exact_calls) == 2


@pytest.mark.parametrize("threshold", [0, 100])
def test_filters_tenant_user_validity_tier_type(tmp_path: Path, threshold: int) -> None:
    rng = np.random.default_rng(2)
    idx = make(tmp_path, hnsw_threshold=threshold, exact_filter_limit=5)
    n = 400
    vecs = unit(rng, n)
    at = [attrs(tenant="t1" if i % 2 else "t2", user=f"u{i % 3}", valid=i % 5 != 0,
                tier="archive" if i % 7 == 0 else "mid_term",
                mtype="event" if i % 11 == 0 else "dialogue") for i in range(n)]
    idx.upsert([f"m{i}" for i in range(n)], vecs, at)
    q = unit(rng, 1)[0]
    for flt in (SearchFilter(tenant="t1"), SearchFilter(tenant="t1", user="u1"),
                SearchFilter(tenant="t2", include_superseded=True),
                SearchFilter(tenant="t1", include_archive=True),
                SearchFilter(tenant="t1", tiers=[Tier.ARCHIVE]),
                SearchFilter(tenant="t2", types=[MemoryType.EVENT])):
        hits = idx.search(q, 20, flt)
        assert hits
        for mid, _ in hits:
            a = at[int(mid[1:])]
            assert a.tenant == flt.tenant
            assert flt.user is None or a.user == flt.user
            assert flt.include_superseded or a.valid
            if flt.tiers:
                assert a.tier == "archive"
            elif not flt.include_archive:
                assert a.tier != "archive"
            assert not flt.types or a.memory_type == "event"
    assert idx.search(q, 5, SearchFilter(tenant="nobody")) == []


def test_upsert_replaces_and_remove_deletes(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    idx = make(tmp_path)
    v = unit(rng, 3)
    idx.upsert(["a", "b"], v[:2], [attrs(), attrs()])
    idx.upsert(["a"], v[2:], [attrs(valid=False)])
    assert len(idx) == 2
    assert [m for m, _ in idx.search(v[2], 5, SearchFilter())] == ["b"]
    assert idx.search(v[2], 1, SearchFilter(include_superseded=True))[0][0] == "a"
    idx.remove(["b"])
    assert idx.search(v[1], 5, SearchFilter()) == []


@pytest.mark.parametrize("threshold", [0, 10_000])
def test_a_repeated_filter_sees_every_change(tmp_path: Path, threshold: int) -> None:
    """Each kind of change reaches the rows a repeated filter keeps."""
    rng = np.random.default_rng(4)
    idx = make(tmp_path, hnsw_threshold=threshold, exact_filter_limit=5)
    v = unit(rng, 40)
    idx.upsert([f"m{i}" for i in range(30)], v[:30], [attrs(user="u1")] * 30)
    mine = SearchFilter(tenant="default", user="u1")

    def found(q: np.ndarray) -> set[str]:
        return {m for m, _ in idx.search(q, 40, mine)}

    assert found(v[0]) == {f"m{i}" for i in range(30)}
    idx.upsert(["n1"], v[30:31], [attrs(user="u1")])  # a new row the filter keeps
    assert "n1" in found(v[30])
    idx.upsert(["m3"], v[3:4], [attrs(user="u2")])  # an attribute change it no longer keeps
    assert "m3" not in found(v[3])
    idx.upsert(["m4"], v[4:5], [attrs(user="u1", valid=False)])  # superseded
    assert "m4" not in found(v[4])
    idx.remove(["m5"])
    assert "m5" not in found(v[5])
    assert len(found(v[0])) == 28
    idx.clear()
    assert found(v[0]) == set()


def test_save_load_roundtrip_with_compaction(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    idx = make(tmp_path, hnsw_threshold=50)
    v = unit(rng, 100)
    idx.upsert([f"m{i}" for i in range(100)], v, [attrs(user=f"u{i % 2}") for i in range(100)])
    idx.remove([f"m{i}" for i in range(0, 100, 3)])
    idx.applied_seq = 42
    idx.save()
    again = make(tmp_path, hnsw_threshold=50)
    again.load()
    assert again.applied_seq == 42 and len(again) == len(idx) and again.uses_hnsw
    q = v[1]
    a = again.search(q, 5, SearchFilter(user="u1"))
    b = idx.search(q, 5, SearchFilter(user="u1"))
    assert [m for m, _ in a] == [m for m, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-5)


def test_expansion_search_setting_reaches_the_graph(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    idx = make(tmp_path, hnsw_threshold=50, expansion_search=150)
    idx.upsert([f"m{i}" for i in range(100)], unit(rng, 100), [attrs()] * 100)
    assert idx._hnsw.expansion_search == 150
    idx.save()
    again = make(tmp_path, hnsw_threshold=50, expansion_search=300,  # the setting, not the file
                 exact_filter_limit=10)
    again.load()
    assert again.uses_hnsw and again._hnsw.expansion_search == 300
    # a batch's neighbour lookups (its supersession candidates) search as wide as one add;
    # an approximate lookup (the FAQ fast path) searches narrower, then the setting is back
    seen = []
    real = again._hnsw.search
    again._hnsw.search = lambda *a, **kw: seen.append(again._hnsw.expansion_search) or real(*a, **kw)
    again.search_many(unit(rng, 2), 3, [SearchFilter(), SearchFilter()])
    again.search(unit(rng, 1)[0], 3, SearchFilter(), approximate=True)
    assert seen == [300, 64] and again._hnsw.expansion_search == 300


def test_corrupted_or_foreign_files_are_refused(tmp_path: Path) -> None:
    idx = make(tmp_path)
    with pytest.raises(IndexFileError, match=r"no index file"):
        idx.load()
    idx.upsert(["a"], unit(np.random.default_rng(5), 1), [attrs()])
    idx.save()
    other = LocalVectorIndex(tmp_path / "v", DIM, "another-model")
    with pytest.raises(IndexFileError, match=r"another|test-model"):
        other.load()
    (tmp_path / "v" / "vectors.npz").write_bytes(b"garbage")
    with pytest.raises(IndexFileError, match=r"corrupted"):
        make(tmp_path).load()


def test_batched_search_matches_single_searches(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    idx = make(tmp_path, hnsw_threshold=500, exact_filter_limit=100)
    n = 2000
    vecs = unit(rng, n)
    idx.upsert([f"m{i}" for i in range(n)], vecs,
               [attrs(user="big" if i % 50 else "small") for i in range(n)])
    assert idx.uses_hnsw
    queries = unit(rng, 6)
    filters = [SearchFilter(user="big"), SearchFilter(user="small"), SearchFilter(),
               SearchFilter(user="big"), SearchFilter(tenant="nobody"), SearchFilter()]
    batched = idx.search_many(queries, 8, filters)
    for q, flt, got in zip(queries, filters, batched):
        single = idx.search(q, 8, flt)
        assert {m for m, _ in got} == {m for m, _ in single} or len(
            {m for m, _ in got} & {m for m, _ in single}) >= 6  # both approximate at most
    assert batched[4] == []
    # The small user (40 vectors, under exact_filter_limit): an exact scan of its subset.
    small = [i for i in range(n) if i % 50 == 0]
    exact = sorted(small, key=lambda i: -float(vecs[i] @ queries[1]))[:8]
    assert [m for m, _ in batched[1]] == [f"m{i}" for i in exact]


def test_a_few_deletions_are_saved_as_holes_without_rebuilding_hnsw(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    idx = make(tmp_path, hnsw_threshold=50)
    v = unit(rng, 100)
    idx.upsert([f"m{i}" for i in range(100)], v, [attrs() for _ in range(100)])
    graph = idx._hnsw
    idx.remove(["m1", "m2", "m3"])
    idx.save()
    assert idx._hnsw is graph  # 3 % deleted: no compaction, no rebuild
    again = make(tmp_path, hnsw_threshold=50)
    again.load()
    assert len(again) == 97 and again.uses_hnsw
    assert "m1" not in {m for m, _ in again.search(v[1], 10, SearchFilter())}
    assert again.search(v[4], 1, SearchFilter())[0][0] == "m4"
    again.upsert(["m1"], v[1:2], [attrs()])  # a deleted id can come back
    assert again.search(v[1], 1, SearchFilter())[0][0] == "m1" and len(again) == 98
