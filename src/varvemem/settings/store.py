"""Where memories live: the store of record, the vector index and the cache (``store``), and
the archive (``archive``); their URLs are checked against :mod:`varvemem.backends`, and
:func:`redact_url` masks their passwords."""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import ConfigDict, Field, field_validator

from ..backends import ARCHIVE_URL, CACHE_URL, STORE_URL, VECTOR_URL, UrlSetting
from .base import Section

_Url = TypeVar("_Url", bound="str | None")


class SqliteSettings(Section):
    """``store.sqlite``: the SQLite store of record."""

    synchronous: Literal["OFF", "NORMAL", "FULL", "EXTRA"] = "FULL"
    # The page size of a new SQLite database (an existing one keeps its own). A memory's row
    # holds its vector: at 4 KB a page holds one row and wastes the rest; at 16 KB seven
    # (docs/BENCHMARKS.md, "Bytes per memory").
    page_size: int = Field(16_384, ge=512, le=65_536)
    busy_timeout_ms: int = Field(10_000, ge=0)

    @field_validator("page_size")
    @classmethod
    def _page_size(cls, v: int) -> int:
        if v & (v - 1):
            raise ValueError("SQLite's page size is a power of two from 512 to 65536")
        return v


class PostgresqlSettings(Section):
    """``store.postgresql``: the PostgreSQL store of record (its tables in ``schema``,
    created and migrated by varvemem)."""

    # The key is "schema"; the attribute is not, as a model's `schema` is pydantic's own.
    model_config = ConfigDict(serialize_by_alias=True)

    schema_name: str = Field("varvemem", alias="schema", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    pool_size: int = Field(5, ge=1, le=200)
    # Off: a PostgreSQL schema behind this release is an error until `varvemem db upgrade`.
    auto_migrate: bool = True
    # After an erasure, rewrite the tables it touched (VACUUM FULL: no page keeps the erased
    # bytes; the tables are locked while it runs) instead of a plain VACUUM (the erased rows
    # are gone, but a page's free space may keep their bytes until reused).
    erase_rewrite: bool = False


class LocalIndexSettings(Section):
    """``store.local``: the local vector index, a file per home caught up from the store of
    record (the local cache, the store of record itself, has no settings)."""

    # The local index builds its HNSW graph at this many vectors (exact numpy search is slower
    # from about 5k, docs/BENCHMARKS.md); near-duplicate lookups use the graph from then on ...
    hnsw_threshold: int = Field(5_000, ge=0)
    # ... but a search whose filter allows at most this many rows stays exact: the graph's
    # recall@10 is only ~0.85-0.9 at 10-20k rows. Past this many vectors the graph alone holds
    # them and exact searches read them back from it, up to 5,000 rows (GRAPH_EXACT_LIMIT).
    exact_filter_limit: int = Field(20_000, ge=0)
    # How wide the graph searches for lookups that want only the nearest few: the FAQ fast
    # path, near-duplicate lookups (searches: store.hnsw_expansion_search). The graph finds
    # near-duplicates at usearch's 64 too. (An add's neighbours are its supersession
    # candidates: searched as wide as a search, one add or a batch.)
    hnsw_expansion_neighbours: int = Field(64, ge=1, le=4096)
    oversample: int = Field(4, ge=1, le=100)
    # How the HNSW graph holds each vector, its only copy in RAM: "f16" has the recall@10 of
    # "f32" at 100k in half the bytes; "i8" a quarter, and less recall (docs/BENCHMARKS.md,
    # "Fast close and compact vectors"). The store of record keeps its own copy
    # (store.record_vector_dtype).
    dtype: Literal["f32", "f16", "i8"] = "f16"
    # Whether the graph file keeps a copy of its vectors. False (the default): the file holds
    # the graph's links alone and an open reads the vectors from the store of record, so each
    # is on disk once (1 KB a memory less for 512-d f16; 4.7 against 5.8 KB at 100k). True
    # opens faster (0.48 against 0.84 s at 100k, docs/BENCHMARKS.md, "Each vector on disk
    # once"). An i8 graph, or an f32 graph over f16 records, always keeps its own.
    graph_file_vectors: bool = False
    flush_every: int = Field(5_000, ge=1)
    # close() rewrites the index file only when at least this many changes are not in it yet
    # (counted from the file, so they add up over short sessions) or there is no file;
    # otherwise the next open applies them from the store of record. 0: save at every close.
    close_save_changes: int = Field(5_000, ge=0)


class MilvusSettings(Section):
    """``store.milvus``: the Milvus vector index (a server, or a Milvus Lite file)."""

    token: str | None = Field(None, repr=False)  # "user:password" or an API key
    # One collection per embedding model: <collection>_<model>_<dim>.
    collection: str = Field("varvemem", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,100}$")


class RedisSettings(Section):
    """``store.redis``: the Redis cache of active sessions."""

    prefix: str = Field("varvemem", min_length=1, max_length=100)  # of every key it writes


class StoreSettings(Section):
    """Where memories live. ``url``: the store of record, ``sqlite:///path`` (default
    ``<home>/varvemem.db``) or ``postgresql://user:password@host:port/db``. ``cache_url``: the
    short-term cache of active sessions, ``local`` (the store of record) or
    ``redis://host:port/db``. Each backend's own settings are in the section of its name in
    :mod:`varvemem.backends` (``store.sqlite``, ``store.postgresql``, ``store.local``,
    ``store.milvus``, ``store.redis``); the other keys here are read by more than one."""

    url: str | None = None
    cache_url: str = "local"
    # The vector index: "local" (a file per home, caught up from the store), "pgvector" (in the
    # PostgreSQL of store.url), or Milvus: milvus://host:port (milvus+https:// with TLS) or a
    # Milvus Lite file, /path/file.db or milvus-lite:///path/file.db.
    vector_url: str = "local"
    connect_timeout: float = Field(5.0, gt=0)  # PostgreSQL, Milvus and Redis alike
    # How the store of record keeps each vector, its one durable copy (the vector index is
    # derived from it): "f16" in half the bytes of "f32", cosines within about 1e-3 (the local
    # index holds f16 too, store.local.dtype). Vectors already stored keep their format.
    record_vector_dtype: Literal["f32", "f16"] = "f16"
    # How wide the HNSW graph searches (usearch's default is 64). On bench_scale's texts 256
    # finds 0.88 of the exact top 10 at 100k and 0.85 at 300k; 1024 finds 0.97 and 0.95 for
    # 5-7 ms more (docs/BENCHMARKS.md, "A run to 300,000"). pgvector's hnsw.ef_search takes
    # the same value, at most 1000 (its own limit).
    hnsw_expansion_search: int = Field(1024, ge=1, le=4096)
    sqlite: SqliteSettings = Field(default_factory=SqliteSettings)
    postgresql: PostgresqlSettings = Field(default_factory=PostgresqlSettings)
    local: LocalIndexSettings = Field(default_factory=LocalIndexSettings)
    milvus: MilvusSettings = Field(default_factory=MilvusSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)

    @field_validator("url")
    @classmethod
    def _store_url(cls, v: str | None) -> str | None:
        return _check_url(STORE_URL, v)

    @field_validator("vector_url")
    @classmethod
    def _vector_url(cls, v: str) -> str:
        return _check_url(VECTOR_URL, v)

    @field_validator("cache_url")
    @classmethod
    def _cache_url(cls, v: str) -> str:
        return _check_url(CACHE_URL, v)


def _check_url(setting: UrlSetting, v: _Url) -> _Url:
    """``v`` when it selects one of the setting's backends (:mod:`varvemem.backends`)."""
    if v is not None and setting.backend(v) is None:
        raise ValueError(f"unsupported {setting.noun} {redact_url(v)!r} "
                         f"(use {setting.usage()})")
    return v


def redact_url(url: str) -> str:
    """``url`` with any password masked, for messages and ``config show``."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        if parts.password:
            return url.replace(f":{parts.password}@", ":***@", 1)
    except ValueError:
        pass
    return url


class ArchiveSettings(Section):
    """TIER-5. ``url``: ``file:///path`` or a path (default ``<home>/archive``), or
    ``s3://bucket[/prefix]`` with ``endpoint_url`` (MinIO and other S3-compatible servers) and
    credentials (else boto3's usual chain: ``AWS_*`` variables, files)."""

    url: str | None = None
    endpoint_url: str | None = None
    region: str | None = None
    access_key: str | None = Field(None, repr=False)
    secret_key: str | None = Field(None, repr=False)
    timeout: float = Field(10.0, gt=0)

    @field_validator("url")
    @classmethod
    def _archive_url(cls, v: str | None) -> str | None:
        return _check_url(ARCHIVE_URL, v)
