"""The backends that URL settings name, in one table (:data:`URL_SETTINGS`): how a value
selects a backend, and the names of the functions that open it.

Settings validate their values against the table, so nothing here imports a backend: a row
names its openers, functions of :mod:`varvemem.stores.backends`, which import their backend's
module when they are called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from .errors import ConfigError

_OPENERS = "varvemem.stores.backends"  # the module whose functions the rows name


@dataclass(frozen=True)
class Backend:
    """One backend of a URL setting. A value selects it when it is one of ``values``, starts
    with one of ``schemes``, ends with ``suffix``, or (``path``) is a plain path (no ``://``).
    ``open`` names the function that opens it (its arguments depend on the setting). A store
    of record also names ``upgrade``, and ``exists`` unless it is a server's database (made by
    opening it). ``stores``: the stores of record it lives in (any when empty); ``where``
    says so. ``answers``: a TIER-1 cache's companion, the L3 answer cache
    (``answers(settings, cache)``). The functions are :mod:`varvemem.stores.backends`'s."""

    name: str
    open: str
    examples: tuple[str, ...]  # the forms the settings' error message suggests
    values: tuple[str, ...] = ()
    schemes: tuple[str, ...] = ()
    suffix: str | None = None
    path: bool = False
    exists: str | None = None
    upgrade: str | None = None
    stores: tuple[str, ...] = ()
    where: str = ""
    answers: str | None = None

    def function(self, role: str) -> Callable[..., Any] | None:
        """The function this row names for ``role`` (``open``, ``exists``, ``upgrade`` or
        ``answers``), its module imported now; None when the row names none."""
        name: str | None = getattr(self, role)
        if name is None:
            return None
        found: Callable[..., Any] = getattr(import_module(_OPENERS), name)
        return found

    def selected_by(self, value: str) -> bool:
        return (value in self.values or value.startswith(self.schemes)
                or (self.suffix is not None and value.endswith(self.suffix))
                or (self.path and "://" not in value))


@dataclass(frozen=True)
class UrlSetting:
    """A setting that names a backend: its key, what its messages call it, the backend an
    unset (None) value means, and its backends in the order they are tried."""

    key: str
    noun: str
    default: str | None
    backends: tuple[Backend, ...]

    def backend(self, value: str | None) -> Backend | None:
        """The backend ``value`` selects (None: none does)."""
        if value is None:
            return self.named(self.default) if self.default else None
        return next((b for b in self.backends if b.selected_by(value)), None)

    def named(self, name: str) -> Backend:
        return next(b for b in self.backends if b.name == name)

    def usage(self) -> str:
        """``a, b or c``: the forms a value may take."""
        forms = [e for b in self.backends for e in b.examples]
        return ", ".join(forms[:-1]) + " or " + forms[-1] if len(forms) > 1 else forms[0]

    def selected(self, value: str | None) -> Backend:
        """:meth:`backend`, or :class:`ConfigError` (settings check values at load: only a
        value set around them gets here)."""
        backend = self.backend(value)
        if backend is None:
            raise ConfigError(f"{self.key}: unsupported {self.noun} {value!r} "
                              f"(use {self.usage()})")
        return backend


# -- the table ---------------------------------------------------------------------------------
STORE_URL = UrlSetting("store.url", "store URL", "sqlite", (
    Backend("sqlite", "open_sqlite", ("sqlite:///path",), schemes=("sqlite:///",),
            exists="sqlite_exists", upgrade="upgrade_sqlite"),
    Backend("postgresql", "open_postgres", ("postgresql://user@host:port/database",),
            schemes=("postgresql://", "postgres://"), upgrade="upgrade_postgres"),
))
VECTOR_URL = UrlSetting("store.vector_url", "vector index URL", None, (
    Backend("local", "open_local_vectors", ("local",), values=("local",)),
    Backend("pgvector", "open_pgvector", ("pgvector",), values=("pgvector",),
            stores=("postgresql",),
            where="pgvector lives in the store's PostgreSQL; set store.url = postgresql://..."),
    Backend("milvus", "open_milvus", ("milvus://host:port", "milvus-lite:///path/file.db"),
            schemes=("milvus://", "milvus+https://", "milvus-lite://"), suffix=".db"),
))
CACHE_URL = UrlSetting("store.cache_url", "cache URL", None, (
    Backend("local", "open_store_cache", ("local",), values=("local",),
            answers="open_local_answers"),
    Backend("redis", "open_redis_cache", ("redis://host:port/db",),
            schemes=("redis://", "rediss://", "unix://"), answers="open_redis_answers"),
))
ARCHIVE_URL = UrlSetting("archive.url", "archive URL", "file", (
    Backend("file", "open_file_archive", ("a path", "file:///path"), schemes=("file://",),
            path=True),
    Backend("s3", "open_s3_archive", ("s3://bucket/prefix",), schemes=("s3://",)),
))
URL_SETTINGS = {s.key: s for s in (STORE_URL, VECTOR_URL, CACHE_URL, ARCHIVE_URL)}


def misplaced(setting: UrlSetting, value: str | None, store_url: str | None) -> str | None:
    """Why the backend ``value`` selects cannot work beside the store of record that
    ``store_url`` selects (the message names the key), or None."""
    backend, store = setting.backend(value), STORE_URL.backend(store_url)
    if backend is not None and backend.stores and (store is None
                                                   or store.name not in backend.stores):
        return f"{setting.key}: {backend.where}"
    return None
