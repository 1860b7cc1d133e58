"""The one interface every embedding model sits behind."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads with a model, not with the settings that name one
    import numpy as np


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    ``model_id`` is stored with the vectors: a store refuses vectors from another model.
    """

    model_id: str
    dim: int

    @abstractmethod
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for texts to be stored, shape ``(len(texts), dim)``."""

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a search query, shape ``(dim,)``. Models with query prefixes override."""
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    import numpy as np

    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = v / norms
    return unit
