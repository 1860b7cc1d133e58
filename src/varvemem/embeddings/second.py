"""A second embedding model for decisions made on few texts (settings ``second_model``).

The default embedder ranks the whole store; a second model may re-score the few candidates a
decision is made on (a search's best candidates, the FAQ fast path's gray zone, supersession
candidates). :func:`second_model` gives the process-wide one, or None when it is disabled or
its package is not installed; its passage vectors are kept in an LRU by content hash (in
memory only: they are cheap to recompute and never stored with the memories).
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from ..errors import EmbedderError
from . import EMBEDDERS, EmbedderConfig, embedder_spec
from .base import Embedder

__all__ = ["SecondModel", "SecondModelConfig", "opinion", "second_model", "second_opinion"]


class SecondModelConfig(Protocol):
    """The ``second_model.*`` settings (:class:`varvemem.settings.SecondModelSettings`)."""

    @property
    def enabled(self) -> bool: ...
    @property
    def name(self) -> str: ...
    @property
    def threads(self) -> int: ...
    @property
    def cache_size(self) -> int: ...

    def embedder(self) -> EmbedderConfig:
        """The ``embedder.*`` settings the model is made from."""


class SecondModel:
    """An embedder loaded on first use, with an LRU of passage vectors (``cache_size``)."""

    def __init__(self, create: Callable[[], Embedder], cache_size: int = 10_000) -> None:
        self._create = create
        self._model: Embedder | None = None
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._size = cache_size
        self._lock = threading.Lock()  # the model and the cache are shared by every engine
        self.hits = 0
        self.misses = 0

    @property
    def model(self) -> Embedder:
        if self._model is None:
            self._model = self._create()
        return self._model

    def query_vector(self, text: str) -> np.ndarray:
        """The vector of a search query (not cached: a query is embedded once per search)."""
        with self._lock:
            return self.model.embed_query(text)

    def passage_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` as passages, shape ``(len(texts), dim)``; the ones not cached
        are embedded in one batch."""
        keys = [hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in texts]
        with self._lock:
            missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
            self.hits += len(keys) - len(missing)
            self.misses += len(missing)
            found: dict[bytes, np.ndarray] = {}
            if missing:
                text_of = dict(zip(keys, texts))
                fresh = self.model.embed_documents([text_of[k] for k in missing])
                found = dict(zip(missing, fresh))
            out = np.zeros((len(texts), self.model.dim), dtype=np.float32)
            for i, k in enumerate(keys):
                vec = found.get(k)
                if vec is None:
                    vec = self._cache[k]
                    self._cache.move_to_end(k)
                out[i] = vec
            if self._size:
                for k, vec in found.items():
                    self._cache[k] = vec
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        return out

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Cosines of ``query`` (as a query) with each of ``texts`` (as passages)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        scored: np.ndarray = self.passage_vectors(texts) @ self.query_vector(query)
        return scored

    def similarity(self, a: str, b: str) -> float:
        """Cosine of two statements (both as passages: symmetric)."""
        va, vb = self.passage_vectors([a, b])
        return float(va @ vb)


_shared: dict[tuple[str, int, int], SecondModel] = {}
_shared_lock = threading.Lock()


def second_model(cfg: SecondModelConfig) -> SecondModel | None:
    """The process-wide second model ``cfg`` names; None when ``cfg.enabled`` is off or the
    model's package is not installed (found without importing it)."""
    if not cfg.enabled:
        return None
    name, spec = embedder_spec(cfg.name)
    if spec.package is not None and importlib.util.find_spec(spec.package) is None:
        return None
    key = (name, cfg.threads, cfg.cache_size)
    with _shared_lock:
        model = _shared.get(key)
        if model is None:
            ecfg = cfg.embedder()
            model = _shared[key] = SecondModel(lambda: EMBEDDERS[name].create(ecfg),
                                               cfg.cache_size)
    return model


def second_opinion(a: str, b: str, cfg: SecondModelConfig) -> float | None:
    """The second model's cosine of two statements, or None when there is no second model
    (disabled, not installed, or failing to load)."""
    model = second_model(cfg)
    if model is None:
        return None
    try:
        return model.similarity(a, b)
    except EmbedderError:
        return None


def opinion(cfg: SecondModelConfig) -> Callable[[str, str], float | None]:
    """:func:`second_opinion` bound to ``cfg``: the callable an engine is handed (the FAQ
    fast path's gray zone, supersession candidates)."""
    return lambda a, b: second_opinion(a, b, cfg)
