"""What every vector index must do, whatever the backend: the local file index, Milvus Lite
(embedded), a Milvus server (``milvus-lite server`` over gRPC) and pgvector in PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import stores_of

from varvemem.model import MemoryType, SearchFilter, Tier
from varvemem.stores.base import RecordStore, VectorAttrs, VectorIndex
from varvemem.stores.local_vectors import LocalVectorIndex
from varvemem.stores.sqlite import SqliteStore

DIM = 16


def attrs(i: int) -> VectorAttrs:
    return VectorAttrs("t1" if i % 2 else "t2", f"u{i % 3}", None, "s1" if i % 4 == 0 else None,
                       "event" if i % 5 == 0 else "dialogue",
                       "archive" if i % 7 == 0 else "mid_term", i % 6 != 0)


@pytest.fixture(params=["local", "milvus-lite", "milvus-server", "milvus-standalone", "pgvector"])
def vindex(request, tmp_path: Path) -> Iterator[VectorIndex]:
    records: RecordStore = SqliteStore(tmp_path / "varvemem.db")
    if request.param == "local":
        index: VectorIndex = LocalVectorIndex(tmp_path / "v", DIM, "test-model")
    elif request.param == "pgvector":
        from varvemem.stores.pgvector import PgVectorIndex
        from varvemem.stores.postgres import PostgresStore

        request.getfixturevalue("pgvector_available")
        records.close()
        records = PostgresStore(request.getfixturevalue("pg_url"),
                                schema=request.getfixturevalue("pg_schema"), pool_size=2)
        index = PgVectorIndex(records, DIM, "test-model")
    else:
        from varvemem.stores.milvus import MilvusVectorIndex

        url = (f"milvus-lite://{tmp_path}/milvus.db" if request.param == "milvus-lite"
               else request.getfixturevalue(request.param.replace("-", "_")))
        index = MilvusVectorIndex(url, records, DIM, "test-model",
                                  collection=f"t_{uuid.uuid4().hex[:10]}")
    yield index
    if request.param in ("milvus-server", "milvus-standalone"):  # the server outlives the test
        index.clear()
    index.close()
    records.close()


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_search_filters_upsert_remove(vindex: VectorIndex) -> None:
    rng = np.random.default_rng(0)
    n = 120
    vecs = unit(rng, n)
    ids = [f"m{i}" for i in range(n)]
    vindex.upsert(ids, vecs, [attrs(i) for i in range(n)])
    assert len(vindex) == n
    q = unit(rng, 1)[0]
    hits = vindex.search(q, 5, SearchFilter(tenant="t1"))
    allowed = [i for i in range(n) if i % 2 and i % 6 != 0 and i % 7 != 0]
    best = sorted(allowed, key=lambda i: -float(vecs[i] @ q))[:5]
    assert [h[0] for h in hits] == [f"m{i}" for i in best]
    assert hits[0][1] == pytest.approx(float(vecs[best[0]] @ q), abs=1e-4)
    for flt, ok in ((SearchFilter(tenant="t1", user="u1"), lambda a: a.user == "u1"),
                    (SearchFilter(tenant="t2", session="s1"), lambda a: a.session == "s1"),
                    (SearchFilter(tenant="t2", types=[MemoryType.EVENT]),
                     lambda a: a.memory_type == "event"),
                    (SearchFilter(tenant="t1", tiers=[Tier.ARCHIVE]),
                     lambda a: a.tier == "archive"),
                    (SearchFilter(tenant="t2", include_superseded=True), lambda a: True)):
        got = vindex.search(q, 50, flt)
        assert got
        for mid, _ in got:
            a = attrs(int(mid[1:]))
            assert a.tenant == flt.tenant and ok(a)
            assert a.valid or flt.include_superseded
    assert vindex.search(q, 5, SearchFilter(tenant="nobody")) == []
    # replace one vector and its attributes, remove another
    vindex.upsert(["m1"], q[None, :], [VectorAttrs("t1", "u9", None, None, "dialogue",
                                                   "mid_term", True)])
    vindex.remove([f"m{best[0]}"])
    hits = vindex.search(q, 2, SearchFilter(tenant="t1"))
    assert hits[0][0] == "m1" and hits[0][1] == pytest.approx(1.0, abs=1e-4)
    assert f"m{best[0]}" not in [h[0] for h in vindex.search(q, 50, SearchFilter(tenant="t1"))]
    assert len(vindex) == n - 1
    got = vindex.vectors(["m1", "m2", "nope"])
    assert set(got) == {"m1", "m2"} and np.allclose(got["m2"], vecs[2], atol=1e-6)
    many = vindex.search_many(np.stack([q, vecs[3]]), 3,
                              [SearchFilter(tenant="t1"), SearchFilter(tenant="t1", user="u0")])
    assert many[0] == vindex.search(q, 3, SearchFilter(tenant="t1"))
    assert many[1] == vindex.search(vecs[3], 3, SearchFilter(tenant="t1", user="u0"))
    vindex.clear()
    assert len(vindex) == 0 and vindex.search(q, 5, SearchFilter(tenant="t1")) == []


def test_a_removed_vector_is_gone_from_the_very_next_read(vindex: VectorIndex) -> None:
    """Read-your-deletes: a Milvus 2.3 server's delete carries no timestamp for the session
    guarantee, so a search straight after it could still see the vector."""
    rng = np.random.default_rng(1)
    vecs = unit(rng, 40)
    vindex.upsert([f"m{i}" for i in range(40)], vecs, [attrs(i) for i in range(40)])
    flt = SearchFilter(tenant="t2", include_superseded=True)
    for i in range(0, 40, 2):  # even rows are tenant t2
        vindex.remove([f"m{i}"])
        assert f"m{i}" not in [h[0] for h in vindex.search(vecs[i], 3, flt)]
    assert len(vindex) == 20


def test_milvus_faults_name_the_setting(tmp_path: Path) -> None:
    from varvemem import ConfigError, Memory, Settings, StorageError

    with pytest.raises(ConfigError, match=r"store\.vector_url: unsupported vector index URL"):
        Settings.load(home=tmp_path, store={"vector_url": "qdrant://x:1"})
    with pytest.raises(ConfigError, match=r"store\.cache_url: unsupported cache URL"):
        Settings.load(home=tmp_path, store={"cache_url": "memcached://x:1"})
    from varvemem.stores.milvus import milvus_uri

    assert milvus_uri(f"{tmp_path}/m.db") == f"{tmp_path}/m.db"  # a plain path is Milvus Lite
    assert milvus_uri("milvus+https://h:443") == "https://h:443"
    with pytest.raises(ConfigError, match=r"store\.vector_url: a Milvus Lite file must end"):
        Memory(settings=Settings.load(home=tmp_path, store={
            "vector_url": f"milvus-lite://{tmp_path}/x.txt"})).add("hello")
    mem = Memory(settings=Settings.load(home=tmp_path / "h", store={
        "vector_url": "milvus://127.0.0.1:1", "connect_timeout": 1}))
    with pytest.raises(StorageError, match=r"store\.vector_url: .*Milvus milvus://127\.0\.0\.1:1"):
        mem.add("the vector index is unreachable")
    mem.close()


def test_milvus_index_is_rebuilt_from_the_store(tmp_path: Path, milvus_server: str,
                                                embedder) -> None:
    from pymilvus import MilvusClient

    from varvemem import Memory, Settings
    from varvemem.stores.milvus import milvus_uri

    collection = f"t_{uuid.uuid4().hex[:10]}"
    settings = Settings.load(home=tmp_path, store={"vector_url": milvus_server,
                                                   "milvus": {"collection": collection}})
    mem = Memory(settings=settings, embedder=embedder)
    mid = mem.add("the release train leaves on Thursdays").memory_id
    mem.add("lunch is at noon")
    client = MilvusClient(milvus_uri(milvus_server))
    [name] = [c for c in client.list_collections() if c.startswith(collection)]
    client.delete(name, ids=[mid])  # the index loses a vector behind varvemem's back
    assert stores_of(mem).vectors.vectors([mid]) == {}
    assert mem.reindex() == 2
    assert set(stores_of(mem).vectors.vectors([mid])) == {mid}
    hit = mem.search("when does the release train leave?")[0]
    assert hit.memory.memory_id == mid and "vector" in hit.channels
    mem.close()
    client.drop_collection(name)
    client.close()
