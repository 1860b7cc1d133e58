"""The backends that URL settings name, in one table (:data:`URL_SETTINGS`): how a value
selects a backend, and the functions that open it.

Settings validate their values against the table, so nothing here imports a backend at load:
each opener imports its backend's module when it is called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from .settings import ArchiveSettings, Settings
    from .stores.base import ActiveCache, AnswerCache, Archive, RecordStore, VectorIndex
    from .stores.postgres import PostgresStore


@dataclass(frozen=True)
class Backend:
    """One backend of a URL setting. A value selects it when it is one of ``values``, starts
    with one of ``schemes``, ends with ``suffix``, or (``path``) is a plain path (no ``://``).
    ``open`` opens it (its arguments depend on the setting). A store of record also has
    ``upgrade``, and ``exists`` unless it is a server's database (made by opening it).
    ``stores``: the stores of record it lives in (any when empty); ``where`` says so.
    ``answers``: a TIER-1 cache's companion, the L3 answer cache (``answers(settings, cache)``)."""

    name: str
    open: Callable[..., Any]
    examples: tuple[str, ...]  # the forms the settings' error message suggests
    values: tuple[str, ...] = ()
    schemes: tuple[str, ...] = ()
    suffix: str | None = None
    path: bool = False
    exists: Callable[[Settings], bool] | None = None
    upgrade: Callable[[Settings], tuple[int, int]] | None = None
    stores: tuple[str, ...] = ()
    where: str = ""
    answers: Callable[..., Any] | None = None

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


# -- the store of record: open(settings) -------------------------------------------------------
def _sqlite_path(settings: Settings) -> Path:
    from .stores import DB_FILE

    url = settings.store.url
    return settings.home / DB_FILE if url is None else \
        Path(url.removeprefix("sqlite://")).expanduser()


def _open_sqlite(settings: Settings) -> RecordStore:
    from .stores.sqlite import SqliteStore

    cfg = settings.store
    return SqliteStore(_sqlite_path(settings), cfg.sqlite_synchronous, cfg.busy_timeout_ms,
                       cfg.record_vector_dtype, cfg.sqlite_page_size)


def _sqlite_exists(settings: Settings) -> bool:
    return _sqlite_path(settings).exists()


def _upgrade_sqlite(settings: Settings) -> tuple[int, int]:
    from .stores import check_home
    from .stores.sqlite import SqliteStore

    path = _sqlite_path(settings)
    before = SqliteStore.version_of(path)
    check_home(settings.home)
    sqlite = SqliteStore(path)  # migrates on open
    try:
        return before, sqlite.schema_version
    finally:
        sqlite.close()


def _open_postgres(settings: Settings, **overrides: Any) -> PostgresStore:
    from .stores.postgres import PostgresStore

    cfg = settings.store
    kw: dict[str, Any] = {"schema": cfg.pg_schema, "pool_size": cfg.pool_size,
                          "connect_timeout": cfg.connect_timeout,
                          "auto_migrate": cfg.auto_migrate,
                          "vector_dtype": cfg.record_vector_dtype,
                          "erase_rewrite": cfg.pg_erase_rewrite, **overrides}
    return PostgresStore(cfg.url, **kw)  # type: ignore[arg-type] # selected by its scheme


def _upgrade_postgres(settings: Settings) -> tuple[int, int]:
    store = _open_postgres(settings, pool_size=1, migrate=False)
    try:
        return store.migrate(apply=True)
    finally:
        store.close()


# -- the vector index: open(settings, records, folder, dim, model) ------------------------------
def _open_local_vectors(settings: Settings, records: RecordStore, folder: Path, dim: int,
                        model: str) -> VectorIndex:
    from .stores.local_vectors import LocalVectorIndex

    cfg = settings.store
    # The graph's vectors come back from the store of record when its copy is at least as
    # precise as the graph's: then each vector is on disk once.
    from_store = not cfg.graph_file_vectors and (
        cfg.vector_dtype == "f16" or cfg.record_vector_dtype == cfg.vector_dtype)
    return LocalVectorIndex(folder, dim, model, cfg.hnsw_threshold, cfg.exact_filter_limit,
                            cfg.vector_oversample, cfg.hnsw_expansion_search,
                            cfg.hnsw_expansion_neighbours, cfg.vector_dtype,
                            vector_source=records.stored_vectors if from_store else None)


def _open_pgvector(settings: Settings, records: RecordStore, folder: Path, dim: int,
                   model: str) -> VectorIndex:
    from .stores.pgvector import PgVectorIndex
    from .stores.postgres import PostgresStore

    if not isinstance(records, PostgresStore):
        raise ConfigError(f"{VECTOR_URL.key}: {VECTOR_URL.named('pgvector').where}")
    return PgVectorIndex(records, dim, model, ef_search=settings.store.hnsw_expansion_search)


def _open_milvus(settings: Settings, records: RecordStore, folder: Path, dim: int,
                 model: str) -> VectorIndex:
    from .stores.milvus import MilvusVectorIndex

    cfg = settings.store
    return MilvusVectorIndex(cfg.vector_url, records, dim, model,
                             collection=cfg.vector_collection, token=cfg.vector_token,
                             timeout=cfg.connect_timeout)


# -- the TIER-1 cache: open(settings, records) --------------------------------------------------
def _open_store_cache(settings: Settings, records: RecordStore) -> ActiveCache:
    from .stores.base import StoreActiveCache

    return StoreActiveCache(records)


def _open_redis_cache(settings: Settings, records: RecordStore) -> ActiveCache:
    from .stores.redis_cache import RedisActiveCache

    cfg, life = settings.store, settings.lifecycle
    return RedisActiveCache(cfg.cache_url, records, prefix=cfg.cache_prefix,
                            keep=max(50, 2 * max(life.active_turns, life.active_tool_calls)),
                            ttl_seconds=int(2 * 60 * life.session_idle_minutes),
                            timeout=cfg.connect_timeout)


def _open_local_answers(settings: Settings, cache: ActiveCache) -> AnswerCache:
    from .stores.base import LocalAnswerCache

    return LocalAnswerCache(settings.faq.cache_size)


def _open_redis_answers(settings: Settings, cache: ActiveCache) -> AnswerCache:
    from .stores.redis_cache import RedisActiveCache, RedisAnswerCache

    assert isinstance(cache, RedisActiveCache)  # beside the sessions, on the same client
    return RedisAnswerCache(cache.client, settings.store.cache_prefix,
                            int(settings.faq.cache_ttl_hours * 3600))


# -- the TIER-5 archive: open(archive settings, default folder) ---------------------------------
def _open_file_archive(cfg: ArchiveSettings, default: Path) -> Archive:
    from .stores.file_archive import FileArchive

    if cfg.url is None:
        return FileArchive(default)
    return FileArchive(Path(cfg.url.removeprefix("file://")).expanduser())


def _open_s3_archive(cfg: ArchiveSettings, default: Path) -> Archive:
    from .stores.s3_archive import S3Archive

    return S3Archive(cfg.url, endpoint_url=cfg.endpoint_url,  # type: ignore[arg-type]
                     region=cfg.region, access_key=cfg.access_key, secret_key=cfg.secret_key,
                     timeout=cfg.timeout)


# -- the table ---------------------------------------------------------------------------------
STORE_URL = UrlSetting("store.url", "store URL", "sqlite", (
    Backend("sqlite", _open_sqlite, ("sqlite:///path",), schemes=("sqlite:///",),
            exists=_sqlite_exists, upgrade=_upgrade_sqlite),
    Backend("postgresql", _open_postgres, ("postgresql://user@host:port/database",),
            schemes=("postgresql://", "postgres://"), upgrade=_upgrade_postgres),
))
VECTOR_URL = UrlSetting("store.vector_url", "vector index URL", None, (
    Backend("local", _open_local_vectors, ("local",), values=("local",)),
    Backend("pgvector", _open_pgvector, ("pgvector",), values=("pgvector",),
            stores=("postgresql",),
            where="pgvector lives in the store's PostgreSQL; set store.url = postgresql://..."),
    Backend("milvus", _open_milvus, ("milvus://host:port", "milvus-lite:///path/file.db"),
            schemes=("milvus://", "milvus+https://", "milvus-lite://"), suffix=".db"),
))
CACHE_URL = UrlSetting("store.cache_url", "cache URL", None, (
    Backend("local", _open_store_cache, ("local",), values=("local",),
            answers=_open_local_answers),
    Backend("redis", _open_redis_cache, ("redis://host:port/db",),
            schemes=("redis://", "rediss://", "unix://"), answers=_open_redis_answers),
))
ARCHIVE_URL = UrlSetting("archive.url", "archive URL", "file", (
    Backend("file", _open_file_archive, ("a path", "file:///path"), schemes=("file://",),
            path=True),
    Backend("s3", _open_s3_archive, ("s3://bucket/prefix",), schemes=("s3://",)),
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


# -- opening what the settings name -------------------------------------------------------------
def open_records(settings: Settings) -> RecordStore:
    """The store of record ``store.url`` names: SQLite (default ``<home>/varvemem.db``) or
    PostgreSQL."""
    store: RecordStore = STORE_URL.selected(settings.store.url).open(settings)
    return store


def store_exists(settings: Settings) -> bool:
    """Whether the store of record was made already: the SQLite file exists (a server's
    database always does: opening it makes the schema)."""
    exists = STORE_URL.selected(settings.store.url).exists
    return True if exists is None else exists(settings)


def upgrade_records(settings: Settings) -> tuple[int, int]:
    """Migrate the store of record to this release's schema (``varvemem db upgrade``), even
    where ``store.auto_migrate`` is off; returns the versions before and after."""
    upgrade = STORE_URL.selected(settings.store.url).upgrade
    assert upgrade is not None  # every store of record has one
    return upgrade(settings)


def open_vectors(settings: Settings, records: RecordStore, folder: Path, dim: int,
                 model: str) -> VectorIndex:
    """The vector index ``store.vector_url`` names for embedding model ``model`` (``dim``-d),
    neither loaded nor caught up; ``folder`` is where a local index keeps its file."""
    index: VectorIndex = VECTOR_URL.selected(settings.store.vector_url).open(
        settings, records, folder, dim, model)
    return index


def open_cache(settings: Settings, records: RecordStore) -> ActiveCache:
    """The TIER-1 cache ``store.cache_url`` names: ``local`` (the store of record) or Redis."""
    cache: ActiveCache = CACHE_URL.selected(settings.store.cache_url).open(settings, records)
    return cache


def open_answers(settings: Settings, cache: ActiveCache) -> AnswerCache:
    """The L3 answer cache beside the TIER-1 ``cache``: in this process, or on Redis."""
    answers = CACHE_URL.selected(settings.store.cache_url).answers
    assert answers is not None  # every cache backend has one
    opened: AnswerCache = answers(settings, cache)
    return opened


def open_archive(cfg: ArchiveSettings, default: Path) -> Archive:
    """``file:///path`` or a plain path (the embedded default), or ``s3://bucket/prefix``."""
    backend = ARCHIVE_URL.backend(cfg.url)
    if backend is None:
        raise ConfigError(f"archive.url: unsupported scheme in {cfg.url!r} (use file:///path "
                          "or s3://bucket/prefix)")
    archive: Archive = backend.open(cfg, default)
    return archive
