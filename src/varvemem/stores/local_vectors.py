"""The embedded vector index: exact numpy search while small, usearch HNSW past a threshold.

Persisted beside the SQLite file as one ``.npz`` (plus the HNSW graph when built), written
atomically; never the system of record: a missing, stale or corrupted file is rebuilt from
SQLite by the caller.

Thread-safe: searches and reads of vectors share a readers-writer lock, changes, saves and
loads hold it exclusively. usearch reads its ``expansion_search`` at each search and has no
per-search setting, so the narrow lookups (``approximate``, :meth:`search_many`), which change
it for their call, are exclusive too; they come from writes and the FAQ fast path.
"""

from __future__ import annotations

import fcntl
import functools
import io
import json
import os
import uuid
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from .._rwlock import RWLock
from ..filters import AllOf, AnyOf, Clauses, Node, Not, vector_clauses
from ..model import VectorFilter
from .base import IndexFileError, MissingIndexFileError, VectorAttrs, VectorChanges, VectorIndex

P = ParamSpec("P")
R = TypeVar("R")

_FIELDS = ("tenant", "user", "agent", "session", "memory_type", "tier")
_NULLABLE = frozenset({"user", "agent", "session"})  # None is code 0 of their intern table
# 2: deleted rows may be saved (their id is ""), so a save need not rebuild the HNSW graph.
FORMAT_VERSION = 2
_READABLE = (1, 2)
# A save compacts (and so rebuilds the HNSW graph, whose keys are row positions) only when
# deleted rows are at least this share of all rows; below it they stay as holes.
COMPACT_SHARE = 0.25


def _shared(fn: Callable[Concatenate[LocalVectorIndex, P], R]
            ) -> Callable[Concatenate[LocalVectorIndex, P], R]:
    """Run the method holding the index's lock shared."""
    def method(self: LocalVectorIndex, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._rw.read():
            return fn(self, *args, **kwargs)
    functools.update_wrapper(method, fn)
    return method


def _exclusive(fn: Callable[Concatenate[LocalVectorIndex, P], R]
               ) -> Callable[Concatenate[LocalVectorIndex, P], R]:
    """Run the method holding the index's lock exclusively."""
    def method(self: LocalVectorIndex, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._rw.write():
            return fn(self, *args, **kwargs)
    functools.update_wrapper(method, fn)
    return method


class LocalVectorIndex(VectorIndex):
    """Append-only arrays with a live mask; deleted rows are compacted away on save once they
    are a quarter of all rows (``COMPACT_SHARE``)."""

    def __init__(self, folder: Path, dim: int, model_id: str, hnsw_threshold: int = 5_000,
                 exact_filter_limit: int = 20_000, oversample: int = 4,
                 expansion_search: int = 256, expansion_neighbours: int = 64) -> None:
        self.folder = folder
        self.dim = dim
        self.model_id = model_id
        self.hnsw_threshold = hnsw_threshold
        self.exact_filter_limit = exact_filter_limit
        self.oversample = oversample
        self.expansion_search = expansion_search
        self.expansion_neighbours = expansion_neighbours
        self.applied_seq = 0
        self.dirty = 0
        self._rw = RWLock()
        self.clear()

    # -- state ----------------------------------------------------------------------------
    @_exclusive
    def clear(self) -> None:
        self._n = 0
        self._mat = np.zeros((1024, self.dim), np.float32)
        self._live = np.zeros(1024, bool)
        self._valid = np.zeros(1024, bool)
        self._codes = {f: np.zeros(1024, np.int32) for f in _FIELDS}
        self._intern: dict[str, dict[str | None, int]] = {f: {None: 0} for f in _FIELDS}
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._hnsw: Any = None
        self._from_file = False
        self.applied_seq = 0
        self.dirty += 1

    def __len__(self) -> int:
        return len(self._pos)

    def _grow(self, need: int) -> None:
        cap = len(self._live)
        if need <= cap:
            return
        new = max(need, cap * 2)
        mat = np.zeros((new, self.dim), np.float32)
        mat[: self._n] = self._mat[: self._n]
        self._mat = mat
        self._live = np.resize(self._live, new)
        self._live[self._n :] = False
        self._valid = np.resize(self._valid, new)
        for f in _FIELDS:
            self._codes[f] = np.resize(self._codes[f], new)

    def _code(self, field: str, value: str | None) -> int:
        table = self._intern[field]
        if value not in table:
            table[value] = len(table)
        return table[value]

    # -- writes ---------------------------------------------------------------------------
    @_exclusive
    def apply(self, changes: VectorChanges) -> None:
        # One exclusive hold: a search sees all of a catch-up or none of it.
        super().apply(changes)

    @_exclusive
    def upsert(self, ids: Sequence[str], vectors: np.ndarray,
               attrs: Sequence[VectorAttrs]) -> None:
        vectors = np.asarray(vectors, np.float32).reshape(len(ids), self.dim)
        self._grow(self._n + len(ids))
        new_keys: list[int] = []
        for mid, vec, at in zip(ids, vectors, attrs):
            pos = self._pos.get(mid)
            if pos is None:
                pos = self._n
                self._n += 1
                self._pos[mid] = pos
                self._ids.append(mid)
                new_keys.append(pos)
            elif self._hnsw is not None and not np.array_equal(self._mat[pos], vec):
                self._hnsw.remove(pos)
                new_keys.append(pos)
            self._mat[pos] = vec
            self._live[pos] = True
            self._valid[pos] = at.valid
            for f in _FIELDS:
                self._codes[f][pos] = self._code(f, getattr(at, f))
        if self._hnsw is not None and new_keys:
            keys = np.asarray(new_keys, np.uint64)
            self._hnsw.add(keys, self._mat[keys.astype(np.int64)])
        elif self._hnsw is None and len(self) >= self.hnsw_threshold > 0:
            self._build_hnsw()
        self.dirty += len(ids)

    @_exclusive
    def remove(self, ids: Sequence[str]) -> None:
        for mid in ids:
            pos = self._pos.pop(mid, None)
            if pos is None:
                continue
            self._live[pos] = False
            if self._hnsw is not None:
                self._hnsw.remove(pos)
            self.dirty += 1

    def _build_hnsw(self) -> None:
        from usearch.index import Index

        self._hnsw = Index(ndim=self.dim, metric="cos", dtype="f32",
                           expansion_search=self.expansion_search)
        keys = np.flatnonzero(self._live[: self._n]).astype(np.uint64)
        if len(keys):
            self._hnsw.add(keys, self._mat[keys.astype(np.int64)])

    # -- reads ----------------------------------------------------------------------------
    def _mask(self, clauses: Clauses) -> np.ndarray:
        """The live rows where every node of ``clauses`` (:func:`vector_clauses`) holds."""
        mask: np.ndarray = self._live[: self._n].copy()
        for node in clauses:
            mask &= self._render(node)
        return mask

    def _render(self, node: Node) -> np.ndarray:
        """The rows (of the first ``_n``) where ``node`` holds."""
        n = self._n
        if isinstance(node, AnyOf | AllOf):
            parts = [self._render(p) for p in node.nodes]
            if isinstance(node, AnyOf):
                return np.logical_or.reduce(parts) if parts else np.zeros(n, bool)
            return np.logical_and.reduce(parts) if parts else np.ones(n, bool)
        if isinstance(node, Not):
            return ~self._render(node.node)
        if node.field == "valid" and node.op in ("eq", "ne"):
            valid: np.ndarray = (self._valid[:n] == node.value) == (node.op == "eq")
            return valid
        if node.field not in self._codes:
            raise ValueError(f"the local vector index cannot filter on {node.field!r}")
        codes, table = self._codes[node.field][:n], self._intern[node.field]
        if node.op == "null":
            null: np.ndarray = codes == table[None]
            return null
        if node.op == "in":
            return np.isin(codes, [table[v] for v in node.value if v in table])
        if node.op in ("eq", "ne"):
            code = table.get(node.value)
            if node.op == "eq":
                return np.zeros(n, bool) if code is None else codes == code
            out = np.ones(n, bool) if code is None else codes != code
            return out & (codes != table[None]) if node.field in _NULLABLE else out
        raise ValueError(f"the local vector index cannot filter with {node.op!r}")

    def search(self, query: np.ndarray, k: int, flt: VectorFilter, *,
               approximate: bool = False) -> list[tuple[str, float]]:
        with self._rw.write() if approximate else self._rw.read():
            return self._search(query, k, flt, approximate)

    def _search(self, query: np.ndarray, k: int, flt: VectorFilter,
                approximate: bool) -> list[tuple[str, float]]:
        if k <= 0 or self._n == 0:
            return []
        q = np.asarray(query, np.float32).reshape(self.dim)
        mask = self._mask(vector_clauses(flt))
        allowed = int(mask.sum())
        if allowed == 0:
            return []
        # Exact while the filter allows few rows; the graph for big sets, and for near-duplicate
        # lookups over a set big enough to have warranted a graph of its own.
        exact_up_to = self.hnsw_threshold if approximate else self.exact_filter_limit
        if self._hnsw is None or allowed <= exact_up_to:
            return self._exact(q, k, mask, allowed)
        want = k * self.oversample
        while True:
            res = self._graph(q, min(want, len(self)), narrow=approximate)
            keys = np.asarray(res.keys, np.int64)
            sims = 1.0 - np.asarray(res.distances, np.float32)
            keep = mask[keys]
            if keep.sum() >= k or want >= len(self):
                return [(self._ids[p], float(s)) for p, s in zip(keys[keep][:k], sims[keep][:k])]
            want *= 4

    def _graph(self, q: np.ndarray, count: int, narrow: bool) -> Any:
        """An HNSW search. ``narrow``: near-duplicate and neighbour lookups (an add's
        duplicates and associations, the FAQ fast path) want only the nearest few, which a
        search at ``expansion_neighbours`` finds as well as a wide one (docs/BENCHMARKS.md)."""
        if not narrow:
            return self._hnsw.search(q, count)
        self._hnsw.expansion_search = self.expansion_neighbours
        try:
            return self._hnsw.search(q, count)
        finally:
            self._hnsw.expansion_search = self.expansion_search

    @_exclusive
    def search_many(self, queries: np.ndarray, k: int,
                    filters: Sequence[VectorFilter]) -> list[list[tuple[str, float]]]:
        """With HNSW, one batched ANN call for all queries (usearch runs it in parallel, with
        ``expansion_neighbours``); a row whose filter keeps too few of its hits falls back to
        :meth:`search`."""
        if self._hnsw is None or len(queries) < 2 or k <= 0 \
                or len(self) <= self.exact_filter_limit:  # every row would be searched exactly
            return super().search_many(queries, k, filters)
        q = np.asarray(queries, np.float32).reshape(len(queries), self.dim)
        res = self._graph(q, min(k * self.oversample, len(self)), narrow=True)
        masks: dict[Clauses, np.ndarray] = {}
        out: list[list[tuple[str, float]]] = []
        for row, flt in enumerate(filters):
            key = vector_clauses(flt)
            if key not in masks:
                masks[key] = self._mask(key)
            mask = masks[key]
            keys = np.asarray(res.keys[row], np.int64)
            sims = 1.0 - np.asarray(res.distances[row], np.float32)
            inside = (keys >= 0) & (keys < self._n)  # usearch pads short answers
            keys, sims = keys[inside], sims[inside]
            keep = mask[keys]
            if int(mask.sum()) > self.exact_filter_limit and keep.sum() >= k:
                out.append([(self._ids[p], float(v)) for p, v in zip(keys[keep][:k],
                                                                     sims[keep][:k])])
            else:
                out.append(self.search(q[row], k, flt))
        return out

    def _exact(self, q: np.ndarray, k: int, mask: np.ndarray, allowed: int) -> list[tuple[str, float]]:
        if allowed * 2 > self._n:  # mostly allowed: one pass over everything, then mask
            idx = None
            sims = self._mat[: self._n] @ q
            sims[~mask] = -np.inf
        else:
            idx = np.flatnonzero(mask)
            sims = self._mat[idx] @ q
        k = min(k, allowed)
        top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
        top = top[np.argsort(-sims[top], kind="stable")]
        positions = top if idx is None else idx[top]
        return [(self._ids[p], float(sims[t])) for p, t in zip(positions, top)]

    @_shared
    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        # Copies: a change after the lock is released may grow (reallocate) the matrix.
        return {i: self._mat[self._pos[i]].copy() for i in ids if i in self._pos}

    @property
    def uses_hnsw(self) -> bool:
        return self._hnsw is not None

    # -- persistence ----------------------------------------------------------------------
    @property
    def _file(self) -> Path:
        return self.folder / "vectors.npz"

    @property
    def saved(self) -> bool:
        # Read from or written to the file, which is still there: a rebuilt index (after a
        # corrupted or foreign file) is not, so the next close() replaces the bad file.
        return self._from_file and self._file.exists()

    @contextmanager
    def persist_lock(self) -> Iterator[None]:
        """An exclusive lock on the index folder, across processes sharing the home."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


    def _compact(self) -> None:
        keep = np.flatnonzero(self._live[: self._n])
        if self._n - len(keep) < COMPACT_SHARE * self._n:
            return
        self._mat = np.ascontiguousarray(self._mat[keep])
        self._valid = self._valid[keep]
        self._live = np.ones(len(keep), bool)
        for f in _FIELDS:
            self._codes[f] = self._codes[f][keep]
        self._ids = [self._ids[p] for p in keep]
        self._pos = {mid: i for i, mid in enumerate(self._ids)}
        self._n = len(keep)
        if self._hnsw is not None:
            self._build_hnsw()

    @_exclusive
    def save(self) -> None:
        """Write the index atomically (temp file + rename); compacts deleted rows first."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self._compact()
        # The graph file is named by a fresh generation that the .npz points to, so the two
        # files can never be mixed up by a crash between their two renames.
        hnsw_name = None
        if self._hnsw is not None:
            hnsw_name = f"vectors-{uuid.uuid4().hex[:12]}.usearch"
            tmp = self.folder / (hnsw_name + ".tmp")
            self._hnsw.save(str(tmp))
            os.replace(tmp, self.folder / hnsw_name)
        meta = {"format": FORMAT_VERSION, "model_id": self.model_id, "dim": self.dim,
                "seq": self.applied_seq, "hnsw_file": hnsw_name,
                "intern": {f: list(self._intern[f]) for f in _FIELDS}}
        buf = io.BytesIO()
        live = self._live[: self._n]
        ids = [mid if live[i] else "" for i, mid in enumerate(self._ids)]
        # Any: mypy checks a **mapping's values against savez's allow_pickle: bool as well.
        codes: dict[str, Any] = {f"code_{f}": self._codes[f][: self._n] for f in _FIELDS}
        np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
                 ids=np.array(ids, dtype=str), vectors=self._mat[: self._n],
                 valid=self._valid[: self._n], **codes)
        _atomic_write(self._file, buf.getvalue())
        for old in self.folder.glob("vectors-*.usearch*"):
            if old.name != hnsw_name:
                old.unlink(missing_ok=True)
        self._from_file = True
        self.dirty = 0

    @_exclusive
    def load(self) -> None:
        """Load the persisted index; raise :class:`IndexFileError` when it cannot be trusted
        (:class:`MissingIndexFileError` when there is no file yet)."""
        if not self._file.exists():
            raise MissingIndexFileError("no index file")
        try:
            with np.load(self._file, allow_pickle=False) as z:
                meta = json.loads(z["meta"].tobytes())
                if meta.get("format") not in _READABLE:
                    raise IndexFileError(f"index format {meta.get('format')}")
                if meta["model_id"] != self.model_id or meta["dim"] != self.dim:
                    raise IndexFileError(f"index made by {meta['model_id']}")
                ids = [str(x) for x in z["ids"]]
                vectors = z["vectors"].astype(np.float32)
                valid = z["valid"].astype(bool)
                codes = {f: z[f"code_{f}"].astype(np.int32) for f in _FIELDS}
        except IndexFileError:
            raise
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            raise IndexFileError(f"corrupted index file: {exc}") from None
        n = len(ids)
        if vectors.shape != (n, self.dim) or any(len(c) != n for c in codes.values()):
            raise IndexFileError("corrupted index file: inconsistent array sizes")
        self.clear()
        self._grow(max(n, 1))
        self._mat[:n] = vectors
        self._valid[:n] = valid
        self._live[:n] = [bool(mid) for mid in ids]  # "" marks a deleted row
        for f in _FIELDS:
            self._codes[f][:n] = codes[f]
            self._intern[f] = {v: i for i, v in enumerate(meta["intern"][f])}
        self._ids = ids
        self._pos = {mid: i for i, mid in enumerate(ids) if mid}
        self._n = n
        if n >= self.hnsw_threshold > 0:
            self._load_hnsw(meta.get("hnsw_file"))
        self.applied_seq = int(meta["seq"])
        self._from_file = True
        self.dirty = 0

    def _load_hnsw(self, name: str | None) -> None:
        from usearch.index import Index

        if name and (self.folder / name).exists():
            try:
                index = Index(ndim=self.dim, metric="cos", dtype="f32")
                index.load(str(self.folder / name))
                # usearch defines this setter apart from its getter, so mypy sees no setter.
                index.expansion_search = self.expansion_search  # type: ignore[misc]
                if len(index) == len(self):
                    self._hnsw = index
                    return
            except (RuntimeError, ValueError, OSError):
                pass  # rebuilt from the vectors below
        self._build_hnsw()


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
