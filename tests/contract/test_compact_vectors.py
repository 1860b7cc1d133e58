"""The compact local index (issue 21 item 2): past the HNSW threshold the graph alone holds the
vectors, in ``store.local.dtype``; recall against exact stays high, files round-trip, and the
older format still loads."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import numpy as np
import pytest

from varvemem import ConfigError, Settings
from varvemem.model import SearchFilter
from varvemem.stores.base import VectorAttrs, VectorChanges
from varvemem.stores.local_vectors import FORMAT_VERSION, IndexFileError, LocalVectorIndex

DIM = 64


def attrs(user: str | None = None) -> VectorAttrs:
    return VectorAttrs("default", user, None, None, "knowledge", "long_term", True)


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def clustered(rng: np.random.Generator, n: int) -> np.ndarray:
    """Unit vectors around 50 centres, closer to embeddings than uniform noise is."""
    centres = unit(rng, 50)
    v = centres[rng.integers(0, 50, n)] + 0.5 * unit(rng, n) / np.sqrt(2)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def make(folder: Path, dtype: str = "f16", threshold: int = 500, **kw) -> LocalVectorIndex:
    return LocalVectorIndex(folder, DIM, "test-model", hnsw_threshold=threshold,
                            exact_filter_limit=kw.pop("exact_filter_limit", 50), dtype=dtype, **kw)


def test_dtype_setting_is_validated_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"store\.local\.dtype"):
        Settings.load(home=tmp_path, store={"local": {"dtype": "f8"}})
    assert Settings.load(home=tmp_path).store.local.dtype == "f16"
    with pytest.raises(ValueError, match="f32, f16, i8"):
        make(tmp_path, dtype="bf16")


@pytest.mark.parametrize("dtype,floor", [("f32", 0.95), ("f16", 0.95), ("i8", 0.8)])
def test_compact_recall_against_exact(tmp_path: Path, dtype: str, floor: float) -> None:
    rng = np.random.default_rng(7)
    n = 4000
    vecs = clustered(rng, n)
    ids = [f"m{i}" for i in range(n)]
    idx = make(tmp_path, dtype)
    idx.upsert(ids, vecs, [attrs()] * n)
    assert idx.uses_hnsw and idx._mat is None  # one copy: the graph's
    recall, error = [], []
    for q in clustered(rng, 50):
        truth = np.argsort(-(vecs @ q))[:10]
        got = idx.search(q, 10, SearchFilter())
        recall.append(len({f"m{i}" for i in truth} & {m for m, _ in got}) / 10)
        # each returned score against its own exact cosine: the graph may miss the true top
        # hit (recall covers that), but a score it gives is the vector's, to the dtype's rounding
        error.extend(abs(s - float(vecs[int(m[1:])] @ q)) for m, s in got)
    assert np.mean(recall) >= floor, np.mean(recall)
    if dtype != "i8":
        assert max(error) < 2e-3


def test_exact_paths_read_the_graph(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    vecs = unit(rng, 1000)
    idx = make(tmp_path, "f16")
    idx.upsert([f"m{i}" for i in range(1000)], vecs,
               [attrs(user="few" if i % 40 == 0 else "many") for i in range(1000)])
    got = idx.vectors(["m3", "m999", "nope"])
    assert set(got) == {"m3", "m999"}
    assert np.abs(got["m3"] - vecs[3]).max() < 1e-3
    q = unit(rng, 1)[0]
    few = [i for i in range(1000) if i % 40 == 0]  # 25 rows, under exact_filter_limit
    want = sorted(few, key=lambda i: -float(vecs[i] @ q))[:5]
    assert [m for m, _ in idx.search(q, 5, SearchFilter(user="few"))] == [f"m{i}" for i in want]
    # an attrs-only upsert (a supersession) leaves the vector; a new vector replaces it
    idx.upsert(["m3"], vecs[3:4], [attrs(user="many")])
    idx.upsert(["m40"], vecs[41:42], [attrs(user="few")])
    assert np.abs(idx.vectors(["m40"])["m40"] - vecs[41]).max() < 1e-3
    assert len(idx) == len(idx._hnsw) == 1000


@pytest.mark.parametrize("dtype", ["f16", "i8"])
def test_reload_from_file_gives_identical_results(tmp_path: Path, dtype: str) -> None:
    rng = np.random.default_rng(9)
    vecs = unit(rng, 1500)
    idx = make(tmp_path, dtype)
    idx.upsert([f"m{i}" for i in range(1500)], vecs,
               [attrs(user=f"u{i % 30}") for i in range(1500)])
    idx.remove([f"m{i}" for i in range(0, 600, 2)])  # 300 holes: compacted? no, < 25%
    idx.applied_seq = 42
    idx.save()
    npz = np.load(tmp_path / "vectors.npz")
    assert "vectors" not in npz.files  # the graph file holds them
    assert json.loads(npz["meta"].tobytes())["format"] == FORMAT_VERSION
    assert npz["ids"].dtype.kind == "S"  # ids as UTF-8 bytes, a quarter of a str array
    again = make(tmp_path, dtype)
    again.load()
    assert again.applied_seq == 42 and len(again) == len(idx) == 1200 and again.saved
    queries = unit(rng, 20)
    for q in queries:
        for flt in (SearchFilter(), SearchFilter(user="u7")):
            assert again.search(q, 10, flt) == idx.search(q, 10, flt)
    assert again.vectors(["m1", "m1499"]).keys() == {"m1", "m1499"}
    # compaction (>= 25% deleted) keeps the graph, whose keys are the rows' own
    idx.remove([f"m{i}" for i in range(1, 600, 2)])
    idx.save()
    third = make(tmp_path, dtype)
    third.load()
    assert third._n == len(third) == 900
    for q in queries:
        assert third.search(q, 10, SearchFilter()) == idx.search(q, 10, SearchFilter())


def test_a_graph_file_of_another_dtype_or_damaged_is_refused(tmp_path: Path) -> None:
    rng = np.random.default_rng(10)
    idx = make(tmp_path, "f16")
    idx.upsert([f"m{i}" for i in range(800)], unit(rng, 800), [attrs()] * 800)
    idx.save()
    with pytest.raises(IndexFileError, match="f16 vectors"):
        make(tmp_path, "i8").load()
    graph = next(tmp_path.glob("vectors-*.usearch"))
    graph.write_bytes(graph.read_bytes()[:1000])
    with pytest.raises(IndexFileError, match="graph file"):
        make(tmp_path, "f16").load()


def _write_format_2(folder: Path, ids: list[str], vecs: np.ndarray) -> None:
    """A vectors.npz as format 2 wrote it: f32 vectors beside the ids, no graph keys."""
    folder.mkdir(parents=True, exist_ok=True)
    fields = ("tenant", "user", "agent", "session", "memory_type", "tier")
    intern = {f: [None] for f in fields}
    intern["tenant"].append("default")
    intern["memory_type"].append("knowledge")
    intern["tier"].append("long_term")
    n = len(ids)
    codes = {f"code_{f}": np.full(n, 1 if len(intern[f]) > 1 else 0, np.int32) for f in fields}
    meta = {"format": 2, "model_id": "test-model", "dim": DIM, "seq": 7, "hnsw_file": None,
            "intern": intern}
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
             ids=np.array(ids, dtype=str), vectors=vecs, valid=np.ones(n, bool), **codes)
    (folder / "vectors.npz").write_bytes(buf.getvalue())


@pytest.mark.parametrize("n", [300, 900])  # under and past the threshold (500)
def test_format_2_file_still_loads(tmp_path: Path, n: int) -> None:
    rng = np.random.default_rng(11)
    vecs = unit(rng, n)
    ids = [f"m{i}" if i % 10 else "" for i in range(n)]  # "" marks a deleted row
    _write_format_2(tmp_path, ids, vecs)
    idx = make(tmp_path, "f16")
    idx.load()
    assert idx.applied_seq == 7 and len(idx) == n - n // 10
    assert idx.uses_hnsw == (n >= 500)
    q = vecs[11]
    assert idx.search(q, 1, SearchFilter())[0][0] == "m11"
    assert "m10" not in {m for m, _ in idx.search(q, n, SearchFilter())}
    # rebuilt into a graph of the configured dtype: not the file's, so it is saved again
    assert idx.saved == (n < 500) and idx.dirty == (0 if n < 500 else 1)
    idx.save()
    again = make(tmp_path, "f16")
    again.load()
    assert again.search(q, 5, SearchFilter()) == idx.search(q, 5, SearchFilter())


def test_big_filtered_sets_go_through_the_graph_once_it_alone_holds_the_vectors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import varvemem.stores.local_vectors as lv

    monkeypatch.setattr(lv, "GRAPH_EXACT_LIMIT", 100)
    rng = np.random.default_rng(12)
    n = 4000
    vecs = clustered(rng, n)
    idx = make(tmp_path, "f16", exact_filter_limit=2000)
    idx.upsert([f"m{i}" for i in range(n)], vecs,
               [attrs(user="quarter" if i % 4 == 0 else "few" if i % 50 == 1 else "rest")
                for i in range(n)])
    assert idx._mat is None
    recall = []
    for q in clustered(rng, 30):
        quarter = np.arange(0, n, 4)  # 1000 rows: over the limit, the graph with the filter
        want = {f"m{i}" for i in quarter[np.argsort(-(vecs[quarter] @ q))[:10]]}
        got = idx.search(q, 10, SearchFilter(user="quarter"))
        assert len(got) == 10 and all(int(m[1:]) % 4 == 0 for m, _ in got)
        recall.append(len(want & {m for m, _ in got}) / 10)
        few = np.arange(1, n, 50)  # 80 rows: exact, read back from the graph (f16-rounded)
        tenth = np.sort(vecs[few] @ q)[-10]
        got = idx.search(q, 10, SearchFilter(user="few"))
        assert len(got) == 10
        for m, sim in got:
            true = float(vecs[int(m[1:])] @ q)
            assert int(m[1:]) % 50 == 1 and true >= tenth - 2e-3 and abs(sim - true) < 2e-3
    assert np.mean(recall) >= 0.95, np.mean(recall)


def test_ids_of_any_script_round_trip_through_the_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    ids = ["mem_" + "a" * 32, "记忆-一", "m\u00e9moire", "x"]
    idx = make(tmp_path, "f16", threshold=0, exact_filter_limit=10)
    idx.upsert(ids, unit(rng, len(ids)), [attrs()] * len(ids))
    idx.save()
    again = make(tmp_path, "f16", threshold=0, exact_filter_limit=10)
    again.load()
    assert again.vectors(ids).keys() == set(ids)


class RecordVectors:
    """A store of record's ``stored_vectors`` over a dict, in the records' dtype."""

    def __init__(self, dtype: str = "<f2") -> None:
        self.held: dict[str, np.ndarray] = {}
        self.dtype = dtype

    def put(self, ids: list[str], vecs: np.ndarray) -> None:
        self.held.update((mid, v.astype(self.dtype)) for mid, v in zip(ids, vecs))

    def __call__(self, ids, out: np.ndarray) -> np.ndarray:
        found = np.zeros(len(ids), bool)
        for j, mid in enumerate(ids):
            if mid in self.held:
                out[j] = self.held[mid]
                found[j] = True
        return found


def _meta(folder: Path) -> dict:
    with np.load(folder / "vectors.npz") as z:
        return json.loads(z["meta"].tobytes())


def _churned(folder: Path, dtype: str, store: RecordVectors, n: int = 1500):
    """An index past the threshold with holes (removed slots) and re-added vectors (slots
    reused), its store of record in step."""
    rng = np.random.default_rng(13)
    vecs = clustered(rng, n)
    ids = [f"m{i}" for i in range(n)]
    idx = make(folder, dtype, vector_source=store)
    idx.upsert(ids, vecs, [attrs(user=f"u{i % 30}") for i in range(n)])
    store.put(ids, vecs)
    gone = ids[0:300:2]
    idx.remove(gone)
    for mid in gone:
        store.held.pop(mid)
    moved = clustered(rng, 5)
    idx.upsert(ids[301:306], moved, [attrs(user="u1")] * 5)  # new vectors: remove + add
    store.put(ids[301:306], moved)
    return idx, clustered(rng, 20)


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_a_graph_file_without_vectors_reads_them_from_the_store(tmp_path: Path,
                                                                 dtype: str) -> None:
    store = RecordVectors("<f2" if dtype == "f16" else "<f4")
    idx, queries = _churned(tmp_path, dtype, store)
    full = idx._hnsw.save()  # what usearch writes: u32 slots, u32 width, vectors, the graph
    slots, width = struct.unpack_from("<II", full)
    assert width == DIM * (2 if dtype == "f16" else 4) and slots > len(idx._hnsw) == 1350
    idx.applied_seq = 9
    idx.save()
    assert _meta(tmp_path)["graph_vectors"] == "store"
    graph = next(tmp_path.glob("vectors-*.usearch"))
    assert graph.stat().st_size == len(full) - 8 - slots * width  # the links alone
    with np.load(tmp_path / "vectors.npz") as z:  # the removed slots' vectors
        assert "vectors" not in z.files and len(z["orphan_slots"]) == slots - 1350
    again = make(tmp_path, dtype, vector_source=store)
    again.load()
    assert again.saved and again.dirty == 0 and again.applied_seq == 9
    assert len(again) == len(idx) == 1350
    for q in queries:
        for flt in (SearchFilter(), SearchFilter(user="u1")):
            assert again.search(q, 10, flt) == idx.search(q, 10, flt)
    # a compacting save (>= 25 % removed) and a second round trip
    idx.remove([f"m{i}" for i in range(300, 700)])
    idx.save()
    third = make(tmp_path, dtype, vector_source=store)
    third.load()
    assert len(third) == 950
    for q in queries:
        assert third.search(q, 10, SearchFilter()) == idx.search(q, 10, SearchFilter())


def test_a_vector_the_store_no_longer_has_leaves_the_index_on_load(tmp_path: Path) -> None:
    store = RecordVectors()
    idx, _ = _churned(tmp_path, "f16", store)
    idx.save()
    lost = store.held.pop("m999")
    again = make(tmp_path, "f16", vector_source=store)
    again.load()
    assert len(again) == len(idx) - 1 and again.dirty == 1
    assert "m999" not in {m for m, _ in again.search(lost.astype(np.float32), 10, SearchFilter())}


def test_a_graph_file_without_vectors_needs_its_store_and_its_layout(tmp_path: Path) -> None:
    store = RecordVectors()
    idx, _ = _churned(tmp_path, "f16", store)
    idx.save()
    with pytest.raises(IndexFileError, match="no store"):
        make(tmp_path, "f16").load()  # nowhere to read the vectors from: the caller rebuilds
    graph = next(tmp_path.glob("vectors-*.usearch"))
    graph.write_bytes(graph.read_bytes()[:-7])
    with pytest.raises(IndexFileError, match="graph file"):
        make(tmp_path, "f16", vector_source=store).load()


def test_i8_and_unknown_layouts_keep_the_vectors_in_the_graph_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import varvemem.stores.vector_file as vf

    store = RecordVectors()
    idx, queries = _churned(tmp_path / "i8", "i8", store)  # usearch's own quantisation
    idx.save()
    assert _meta(tmp_path / "i8")["graph_vectors"] == "file"

    def unknown(links: memoryview) -> np.ndarray:
        raise IndexFileError("not a usearch graph")

    monkeypatch.setattr(vf, "_slot_keys", unknown)  # a usearch release with another layout
    idx, queries = _churned(tmp_path / "f16", "f16", store)
    idx.save()
    assert _meta(tmp_path / "f16")["graph_vectors"] == "file"
    assert not list((tmp_path / "f16").glob("*.links"))
    again = make(tmp_path / "f16", "f16", vector_source=store)
    again.load()
    assert again.search(queries[0], 10, SearchFilter()) == idx.search(queries[0], 10,
                                                                       SearchFilter())


def test_a_graph_whose_vectors_were_all_removed_round_trips(tmp_path: Path) -> None:
    store = RecordVectors()
    idx = make(tmp_path, "f16", vector_source=store)
    ids = [f"m{i}" for i in range(600)]
    idx.upsert(ids, unit(np.random.default_rng(14), 600), [attrs()] * 600)
    idx.remove(ids)
    idx.save()
    again = make(tmp_path, "f16", vector_source=store)
    again.load()
    assert len(again) == 0 and again.search(unit(np.random.default_rng(1), 1)[0], 5,
                                             SearchFilter()) == []


def test_a_small_index_reads_its_graph_vectors_from_its_own_matrix(tmp_path: Path) -> None:
    """Past the threshold but under ``exact_filter_limit`` the .npz keeps the f32 matrix, and
    the links-only graph is filled from it: loaded as saved, not rebuilt, no store read."""
    store = RecordVectors()
    rng = np.random.default_rng(15)
    vecs = clustered(rng, 900)
    ids = [f"m{i}" for i in range(900)]
    idx = make(tmp_path, "f16", exact_filter_limit=5000, vector_source=store)
    idx.upsert(ids, vecs, [attrs()] * 900)
    idx.remove(ids[:30])
    assert idx.uses_hnsw and idx._mat is not None
    idx.save()
    assert _meta(tmp_path)["graph_vectors"] == "store"
    for source in (store, None):  # the store is not read; without one the matrix serves
        again = make(tmp_path, "f16", exact_filter_limit=5000, vector_source=source)
        again.load()
        assert again.uses_hnsw and again.saved and again.dirty == 0  # the file's graph
        for q in clustered(rng, 5):
            assert again.search(q, 10, SearchFilter(), approximate=True) == idx.search(
                q, 10, SearchFilter(), approximate=True)


def test_the_catch_up_after_a_load_relinks_rows_the_store_changed(tmp_path: Path) -> None:
    """The store gives a row its newest vector at load; the links in the file were made for the
    vector it had at the save. The catch-up that follows re-inserts each changed row it holds."""
    store = RecordVectors()
    idx, _ = _churned(tmp_path, "f16", store)
    idx.save()
    edited = clustered(np.random.default_rng(16), 1)
    store.put(["m700"], edited)  # edited after the save
    again = make(tmp_path, "f16", vector_source=store)
    again.load()
    added: list[int] = []
    real = again._hnsw.add
    again._hnsw.add = lambda keys, vecs, **kw: added.extend(int(k) for k in keys) or real(
        keys, vecs, **kw)
    key = {mid: int(k) for mid, k in zip(again._ids, again._keys)}
    again.apply(VectorChanges(again.applied_seq + 1, [("m700", edited[0], attrs(user="u1"))], []))
    assert added == [key["m700"]]
    assert again.search(edited[0], 1, SearchFilter())[0][0] == "m700"
    # later changes are upserts as before: an unchanged vector (an attrs change) stays put
    again.apply(VectorChanges(again.applied_seq + 1,
                              [("m701", again.vectors(["m701"])["m701"], attrs(user="u2"))], []))
    assert added == [key["m700"]]
