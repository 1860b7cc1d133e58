"""The functions that open what the settings name: each row of :data:`varvemem.backends.URL_SETTINGS`
names its openers here. Each imports its backend's module when it is called."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..backends import ARCHIVE_URL, CACHE_URL, STORE_URL, VECTOR_URL, Backend
from ..errors import ConfigError

if TYPE_CHECKING:
    from ..settings import ArchiveSettings, Settings
    from .base import ActiveCache, AnswerCache, Archive, RecordStore, VectorIndex
    from .postgres import PostgresStore


# -- the store of record: open(settings) -------------------------------------------------------
def sqlite_path(settings: Settings) -> Path:
    from . import DB_FILE

    url = settings.store.url
    return settings.home / DB_FILE if url is None else \
        Path(url.removeprefix("sqlite://")).expanduser()


def open_sqlite(settings: Settings) -> RecordStore:
    from .sqlite import SqliteStore

    cfg = settings.store
    return SqliteStore(sqlite_path(settings), cfg.sqlite.synchronous, cfg.sqlite.busy_timeout_ms,
                       cfg.record_vector_dtype, cfg.sqlite.page_size)


def sqlite_exists(settings: Settings) -> bool:
    return sqlite_path(settings).exists()


def upgrade_sqlite(settings: Settings) -> tuple[int, int]:
    from . import check_home
    from .sqlite import SqliteStore

    path = sqlite_path(settings)
    before = SqliteStore.version_of(path)
    check_home(settings.home)
    sqlite = SqliteStore(path)  # migrates on open
    try:
        return before, sqlite.schema_version
    finally:
        sqlite.close()


def open_postgres(settings: Settings, **overrides: Any) -> PostgresStore:
    from .postgres import PostgresStore

    cfg, pg = settings.store, settings.store.postgresql
    kw: dict[str, Any] = {"schema": pg.schema_name, "pool_size": pg.pool_size,
                          "connect_timeout": cfg.connect_timeout,
                          "auto_migrate": pg.auto_migrate,
                          "vector_dtype": cfg.record_vector_dtype,
                          "erase_rewrite": pg.erase_rewrite, **overrides}
    return PostgresStore(cfg.url, **kw)  # type: ignore[arg-type] # selected by its scheme


def upgrade_postgres(settings: Settings) -> tuple[int, int]:
    store = open_postgres(settings, pool_size=1, migrate=False)
    try:
        return store.migrate(apply=True)
    finally:
        store.close()


# -- the vector index: open(settings, records, folder, dim, model) ------------------------------
def open_local_vectors(settings: Settings, records: RecordStore, folder: Path, dim: int,
                        model: str) -> VectorIndex:
    from .local_vectors import LocalVectorIndex

    cfg, local = settings.store, settings.store.local
    # The graph's vectors come back from the store of record when its copy is at least as
    # precise as the graph's: then each vector is on disk once.
    from_store = not local.graph_file_vectors and (
        local.dtype == "f16" or cfg.record_vector_dtype == local.dtype)
    return LocalVectorIndex(folder, dim, model, local.hnsw_threshold, local.exact_filter_limit,
                            local.oversample, cfg.hnsw_expansion_search,
                            local.hnsw_expansion_neighbours, local.dtype,
                            vector_source=records.stored_vectors if from_store else None)


def open_pgvector(settings: Settings, records: RecordStore, folder: Path, dim: int,
                   model: str) -> VectorIndex:
    from .pgvector import PgVectorIndex
    from .postgres import PostgresStore

    if not isinstance(records, PostgresStore):
        raise ConfigError(f"{VECTOR_URL.key}: {VECTOR_URL.named('pgvector').where}")
    return PgVectorIndex(records, dim, model, ef_search=settings.store.hnsw_expansion_search)


def open_milvus(settings: Settings, records: RecordStore, folder: Path, dim: int,
                 model: str) -> VectorIndex:
    from .milvus import MilvusVectorIndex

    cfg = settings.store
    return MilvusVectorIndex(cfg.vector_url, records, dim, model,
                             collection=cfg.milvus.collection, token=cfg.milvus.token,
                             timeout=cfg.connect_timeout)


# -- the TIER-1 cache: open(settings, records) --------------------------------------------------
def open_store_cache(settings: Settings, records: RecordStore) -> ActiveCache:
    from .base import StoreActiveCache

    return StoreActiveCache(records)


def open_redis_cache(settings: Settings, records: RecordStore) -> ActiveCache:
    from .redis_cache import RedisActiveCache

    cfg, life = settings.store, settings.lifecycle
    return RedisActiveCache(cfg.cache_url, records, prefix=cfg.redis.prefix,
                            keep=max(50, 2 * max(life.active_turns, life.active_tool_calls)),
                            ttl_seconds=int(2 * 60 * life.session_idle_minutes),
                            timeout=cfg.connect_timeout)


def open_local_answers(settings: Settings, cache: ActiveCache) -> AnswerCache:
    from .base import LocalAnswerCache

    return LocalAnswerCache(settings.faq.cache_size)


def open_redis_answers(settings: Settings, cache: ActiveCache) -> AnswerCache:
    from .redis_cache import RedisActiveCache, RedisAnswerCache

    assert isinstance(cache, RedisActiveCache)  # beside the sessions, on the same client
    return RedisAnswerCache(cache.client, settings.store.redis.prefix,
                            int(settings.faq.cache_ttl_hours * 3600))


# -- the TIER-5 archive: open(archive settings, default folder) ---------------------------------
def open_file_archive(cfg: ArchiveSettings, default: Path) -> Archive:
    from .file_archive import FileArchive

    if cfg.url is None:
        return FileArchive(default)
    return FileArchive(Path(cfg.url.removeprefix("file://")).expanduser())


def open_s3_archive(cfg: ArchiveSettings, default: Path) -> Archive:
    from .s3_archive import S3Archive

    return S3Archive(cfg.url, endpoint_url=cfg.endpoint_url,  # type: ignore[arg-type]
                     region=cfg.region, access_key=cfg.access_key, secret_key=cfg.secret_key,
                     timeout=cfg.timeout)


# -- opening what the settings name -------------------------------------------------------------
def _call(backend: Backend, role: str, *args: Any) -> Any:
    """The function ``backend``'s row names for ``role``, called (every row of a setting
    names the roles its setting uses: tests/unit/test_registry.py)."""
    function = backend.function(role)
    assert function is not None, f"{backend.name} names no {role}"
    return function(*args)


def open_records(settings: Settings) -> RecordStore:
    """The store of record ``store.url`` names: SQLite (default ``<home>/varvemem.db``) or
    PostgreSQL."""
    store: RecordStore = _call(STORE_URL.selected(settings.store.url), "open", settings)
    return store


def store_exists(settings: Settings) -> bool:
    """Whether the store of record was made already: the SQLite file exists (a server's
    database always does: opening it makes the schema)."""
    exists = STORE_URL.selected(settings.store.url).function("exists")
    return True if exists is None else bool(exists(settings))


def upgrade_records(settings: Settings) -> tuple[int, int]:
    """Migrate the store of record to this release's schema (``varvemem db upgrade``), even
    where ``store.postgresql.auto_migrate`` is off; returns the versions before and after."""
    versions: tuple[int, int] = _call(STORE_URL.selected(settings.store.url), "upgrade",
                                      settings)
    return versions


def open_vectors(settings: Settings, records: RecordStore, folder: Path, dim: int,
                 model: str) -> VectorIndex:
    """The vector index ``store.vector_url`` names for embedding model ``model`` (``dim``-d),
    neither loaded nor caught up; ``folder`` is where a local index keeps its file."""
    index: VectorIndex = _call(VECTOR_URL.selected(settings.store.vector_url), "open",
                                settings, records, folder, dim, model)
    return index


def open_cache(settings: Settings, records: RecordStore) -> ActiveCache:
    """The TIER-1 cache ``store.cache_url`` names: ``local`` (the store of record) or Redis."""
    cache: ActiveCache = _call(CACHE_URL.selected(settings.store.cache_url), "open",
                                settings, records)
    return cache


def open_answers(settings: Settings, cache: ActiveCache) -> AnswerCache:
    """The L3 answer cache beside the TIER-1 ``cache``: in this process, or on Redis."""
    opened: AnswerCache = _call(CACHE_URL.selected(settings.store.cache_url), "answers",
                                settings, cache)
    return opened


def open_archive(cfg: ArchiveSettings, default: Path) -> Archive:
    """``file:///path`` or a plain path (the embedded default), or ``s3://bucket/prefix``."""
    backend = ARCHIVE_URL.backend(cfg.url)
    if backend is None:
        raise ConfigError(f"archive.url: unsupported scheme in {cfg.url!r} (use file:///path "
                          "or s3://bucket/prefix)")
    archive: Archive = _call(backend, "open", cfg, default)
    return archive
