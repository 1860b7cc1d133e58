"""The vector index on Milvus (pymilvus): a Milvus server or cluster by URI, or Milvus Lite.

One collection per deployment and embedding model (``<store.milvus.collection>_<model>_<dim>``),
keyed by ``memory_id`` like the store of record, with the scalar fields retrieval filters on.
Shared by every process of a deployment, so how far it has caught up with the store's change
feed is kept in the store of record (``RecordStore.put_meta``); catching up twice is harmless
(upserts and deletes by id). Always rebuildable: ``varvemem reindex``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, StorageError
from ..filters import vector_clauses
from ..model import VectorFilter
from ..settings import redact_url
from .base import RecordStore, VectorAttrs, VectorIndex
from .render import MILVUS_SCALARS, milvus_expr

try:
    from pymilvus import DataType, MilvusClient, MilvusException
except ImportError as _exc:  # pragma: no cover - the optional extra
    raise ConfigError("store.vector_url: a Milvus index needs the Milvus extra: "
                      f"pip install 'varvemem[milvus]' ({_exc})") from None

_BATCH = 1000
# Read-your-writes for this client; "Strong" waits for the server's time tick on every search
# (about 250 ms on a Milvus 2.3 standalone, against 5 to 10 ms). Another process's writes are
# seen a time tick later.
_CONSISTENCY = "Session"
# A Milvus 2.3 server answers a delete without a timestamp, so the session guarantee does not
# cover it and a search right after can still return the deleted vector: the first read after
# a delete waits for the newest time tick instead (deletes are rare: forgetting and erasure).
_AFTER_DELETE = "Strong"


def _hit_id(hit: Any) -> str:
    """The memory id of a search hit (Milvus Lite names the key field, servers call it id)."""
    entity = hit.get("entity") or {}
    return str(entity.get("memory_id") or hit.get("memory_id") or hit.get("id"))


def milvus_uri(url: str) -> str:
    """``milvus://host:port`` -> ``http://host:port`` (``milvus+https://`` -> ``https://``);
    ``milvus-lite:///path/file.db`` or a plain ``/path/file.db`` -> the Milvus Lite file."""
    if url.startswith("milvus-lite://") or "://" not in url:
        path = str(Path(url.removeprefix("milvus-lite://")).expanduser())
        if not path.endswith(".db"):
            raise ConfigError(f"store.vector_url: a Milvus Lite file must end in .db: {path!r}")
        return path
    for scheme, http in (("milvus+https://", "https://"), ("milvus://", "http://")):
        if url.startswith(scheme):
            return http + url.removeprefix(scheme)
    raise ConfigError(f"store.vector_url: not a Milvus URL: {redact_url(url)!r}")


class MilvusVectorIndex(VectorIndex):
    """Vectors in a Milvus collection; the catch-up sequence in ``records``' meta table."""

    def __init__(self, url: str, records: RecordStore, dim: int, model_id: str, *,
                 collection: str = "varvemem", token: str | None = None,
                 timeout: float = 10.0) -> None:
        self.dim = dim
        self.model_id = model_id
        self.records = records
        slug = re.sub(r"[^0-9a-zA-Z]+", "_", model_id).strip("_")
        self.collection = f"{collection}_{slug}_{dim}"[:255]
        self._seq_key = f"milvus_seq:{self.collection}"
        self._where = f"Milvus {redact_url(url)} (collection {self.collection})"
        self._deleted = False
        try:
            self._c = MilvusClient(milvus_uri(url), token=token or "", timeout=timeout)
            if not self._c.has_collection(self.collection):
                self._create()
        except MilvusException as exc:
            raise StorageError(f"store.vector_url: {self._where}: {exc.message}") from None
        except Exception as exc:  # grpc and connection errors are not MilvusException
            if isinstance(exc, (ConfigError, StorageError)):
                raise
            raise StorageError(f"store.vector_url: cannot use {self._where}: {exc}") from None

    def _create(self) -> None:
        schema = self._c.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("memory_id", DataType.VARCHAR, is_primary=True, max_length=128)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
        for name in MILVUS_SCALARS:  # None is stored as "" (filters never ask for a None value)
            schema.add_field(name, DataType.VARCHAR, max_length=512)
        schema.add_field("valid", DataType.BOOL)
        index = self._c.prepare_index_params()
        index.add_index("vector", index_type="AUTOINDEX", metric_type="COSINE")
        self._c.create_collection(self.collection, schema=schema, index_params=index,
                                  consistency_level=_CONSISTENCY)
        self.records.put_meta(self._seq_key, "0")

    def _call(self, what: str, fn: Any, *args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except MilvusException as exc:
            raise StorageError(f"{what} on {self._where} failed: {exc.message}") from None
        except Exception as exc:  # grpc: the server went away
            raise StorageError(f"{what} on {self._where} failed: {exc}") from None

    # -- catch-up bookkeeping -------------------------------------------------------------
    @property
    def applied_seq(self) -> int:
        return int(self.records.get_meta(self._seq_key) or 0)

    @applied_seq.setter
    def applied_seq(self, seq: int) -> None:
        self.records.put_meta(self._seq_key, str(int(seq)))

    # -- writes ---------------------------------------------------------------------------
    def upsert(self, ids: Sequence[str], vectors: np.ndarray,
               attrs: Sequence[VectorAttrs]) -> None:
        vectors = np.asarray(vectors, np.float32).reshape(len(ids), self.dim)
        rows = [{"memory_id": mid, "vector": vec.tolist(), "valid": at.valid,
                 **{f: getattr(at, f) or "" for f in MILVUS_SCALARS}}
                for mid, vec, at in zip(ids, vectors, attrs)]
        for i in range(0, len(rows), _BATCH):
            self._call("upsert", self._c.upsert, self.collection, rows[i : i + _BATCH])

    def remove(self, ids: Sequence[str]) -> None:
        ids = list(ids)
        for i in range(0, len(ids), _BATCH):
            self._call("delete", self._c.delete, self.collection, ids=ids[i : i + _BATCH])
        self._deleted = self._deleted or bool(ids)

    def clear(self) -> None:
        self._call("drop", self._c.drop_collection, self.collection)
        self._call("create", self._create)

    # -- reads ----------------------------------------------------------------------------
    def _consistency(self) -> str:
        """The level for the next read (see ``_AFTER_DELETE``)."""
        level = _AFTER_DELETE if self._deleted else _CONSISTENCY
        self._deleted = False
        return level

    @staticmethod
    def _filter(flt: VectorFilter) -> str:
        return " and ".join(milvus_expr(node) for node in vector_clauses(flt))

    def search(self, query: np.ndarray, k: int, flt: VectorFilter, *,
               approximate: bool = False) -> list[tuple[str, float]]:
        if k <= 0:
            return []
        return self.search_many(np.asarray(query, np.float32).reshape(1, self.dim), k,
                                [flt])[0]

    def search_many(self, queries: np.ndarray, k: int,
                    filters: Sequence[VectorFilter]) -> list[list[tuple[str, float]]]:
        """One request per distinct filter, all its queries in it."""
        q = np.asarray(queries, np.float32).reshape(len(queries), self.dim)
        out: list[list[tuple[str, float]]] = [[] for _ in range(len(q))]
        if k <= 0:
            return out
        level = self._consistency()
        groups: dict[str, list[int]] = {}
        for row, flt in enumerate(filters):
            groups.setdefault(self._filter(flt), []).append(row)
        for expr, rows in groups.items():
            res = self._call("search", self._c.search, self.collection,
                             data=[q[r].tolist() for r in rows], limit=min(k, 16_384),
                             filter=expr, anns_field="vector", output_fields=["memory_id"],
                             search_params={"metric_type": "COSINE"},
                             consistency_level=level)
            for r, hits in zip(rows, res):
                out[r] = [(_hit_id(h), float(h["distance"])) for h in hits]
        return out

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rows = self._call("get", self._c.get, self.collection, ids=list(ids),
                          output_fields=["vector"])
        return {r["memory_id"]: np.asarray(r["vector"], np.float32) for r in rows}

    def __len__(self) -> int:
        res = self._call("count", self._c.query, self.collection, filter="",
                         output_fields=["count(*)"], consistency_level=self._consistency())
        return int(res[0]["count(*)"]) if res else 0

    def close(self) -> None:
        self._c.close()
