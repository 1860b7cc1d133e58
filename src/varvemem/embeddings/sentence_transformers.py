"""A local sentence-transformers model folder (the ``st`` extra); nothing is downloaded."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import ConfigError, EmbedderError
from .base import Embedder, normalise


class SentenceTransformerEmbedder(Embedder):
    """Loads the model at ``path`` with the hub switched off."""

    def __init__(self, path: str, threads: int | None = None, batch_size: int = 8) -> None:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise EmbedderError(f"sentence-transformers model folder {folder} does not exist")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbedderError("embedder 'sentence-transformers' needs the st extra: "
                                "pip install 'varvemem[st]'") from None
        if threads:
            try:
                import torch

                torch.set_num_threads(threads)  # torch's default oversubscribes a machine
            except ImportError:  # another backend: nothing to set
                pass
        self._model = SentenceTransformer(str(folder), device="cpu")
        dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension  # renamed in sentence-transformers 6
        size = dim()
        if size is None:
            raise ConfigError(f"embedder.path: the sentence-transformers model in {folder} "
                              "does not say its embedding dimension")
        self.dim = int(size)
        self.model_id = f"st:{folder.name}"
        self.batch_size = batch_size

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # The model sorts the texts by length, then pads each pass of batch_size to its
        # longest: small passes waste little on padding (embedder.model_batch_size).
        return normalise(self._model.encode(list(texts), batch_size=self.batch_size,
                                            convert_to_numpy=True))
