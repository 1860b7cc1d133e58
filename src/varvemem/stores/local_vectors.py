"""The embedded vector index: exact numpy search while small, usearch HNSW past a threshold.

Small, the vectors are an f32 numpy matrix; past the threshold the usearch graph holds them
too, in ``store.vector_dtype`` (f16 by default: half the bytes, the same recall), and past
``exact_filter_limit`` as well the matrix is dropped, so a large index holds each vector once
in RAM (issue 21 item 2). Persisted beside the SQLite file as one ``.npz`` (ids, filter codes,
and the matrix while there is one) plus the graph file when built, written atomically; never
the system of record: a missing, stale or corrupted file is rebuilt from SQLite by the caller.
Given a ``vector_source`` (the store of record's :meth:`~.base.ChangeFeed.stored_vectors`),
the graph file holds the graph's links alone and a load reads the vectors back from the store:
each vector is then on disk once (issue 21 item 2).

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
import struct
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
# Fills row i of the array with the stored vector of id i; returns the mask of those found.
VectorSource = Callable[[Sequence[str], np.ndarray], np.ndarray]

_FIELDS = ("tenant", "user", "agent", "session", "memory_type", "tier")
_NULLABLE = frozenset({"user", "agent", "session"})  # None is code 0 of their intern table
# 2: deleted rows may be saved (their id is ""), so a save need not rebuild the HNSW graph.
# 3: the graph's keys are the rows' own (``keys``), not their positions, and once there is a
# graph it alone holds the vectors (in ``dtype``); the .npz then has none.
# 4: ids as UTF-8 bytes (36 bytes a memory id; numpy's str array took 144).
# 5: "graph_vectors" says where the graph's vectors are: in its file ("file", as before) or in
# the store of record ("store": the file holds the links, the .npz the removed slots' vectors).
FORMAT_VERSION = 5
_READABLE = (1, 2, 3, 4, 5)
DTYPES = ("f32", "f16", "i8")
# The dtypes usearch stores as plain IEEE floats, as the store of record does.
_RAW: dict[str, np.dtype[Any]] = {"f32": np.dtype("<f4"), "f16": np.dtype("<f2")}
# Once the graph alone holds the vectors, a filtered search is exact over at most this many
# rows: reading a row back from the graph costs ~3 us (a 20,000-row subset took 54 ms p50 at
# 100k, 181 ms on 2 busy cores), so a bigger subset goes through the graph with the filter,
# searched wider (docs/BENCHMARKS.md, "Fast close and compact vectors").
GRAPH_EXACT_LIMIT = 5_000
FILTERED_WIDEST = 48  # at most 48 x k x oversample candidates (1,920 for the top 10) at first
# How far a stored vector may be from the one it was made from (a rounding to the dtype): an
# upsert within it is the same vector (an attrs change), not a new one for the graph.
_ROUNDING = {"f32": 0.0, "f16": 1e-3, "i8": 1.01 / 127}
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
                 expansion_search: int = 1024, expansion_neighbours: int = 64,
                 dtype: str = "f16", vector_source: VectorSource | None = None) -> None:
        if dtype not in DTYPES:
            raise ValueError(f"vector dtype {dtype!r} is not one of {', '.join(DTYPES)}")
        # i8 is usearch's own quantisation, which the store's vectors cannot be turned into
        # byte for byte: such a graph keeps its vectors in its file.
        self._source = vector_source if dtype in _RAW else None
        self.folder = folder
        self.dtype = dtype
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
        # The f32 vectors, while there is no graph (None once the graph holds them).
        self._mat: np.ndarray | None = np.zeros((1024, self.dim), np.float32)
        self._keys = np.zeros(1024, np.uint64)  # each row's graph key, ascending with the row
        self._next_key = 0
        self._live = np.zeros(1024, bool)
        self._valid = np.zeros(1024, bool)
        self._codes = {f: np.zeros(1024, np.int32) for f in _FIELDS}
        self._intern: dict[str, dict[str | None, int]] = {f: {None: 0} for f in _FIELDS}
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._hnsw: Any = None
        self._from_file = False
        # Set by a load that read the graph's vectors from the store: the catch-up that follows
        # re-inserts each changed row it already holds. The store gave such a row its newest
        # vector, which may not be the one its links were made for (an edit after the save).
        self._relink = False
        self.applied_seq = 0
        self.dirty += 1

    def __len__(self) -> int:
        return len(self._pos)

    def _grow(self, need: int) -> None:
        cap = len(self._live)
        if need <= cap:
            return
        new = max(need, cap * 2)
        if self._mat is not None:
            mat = np.zeros((new, self.dim), np.float32)
            mat[: self._n] = self._mat[: self._n]
            self._mat = mat
        self._keys = np.resize(self._keys, new)
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
        self._relink = False

    @_exclusive
    def upsert(self, ids: Sequence[str], vectors: np.ndarray,
               attrs: Sequence[VectorAttrs]) -> None:
        vectors = np.asarray(vectors, np.float32).reshape(len(ids), self.dim)
        self._grow(self._n + len(ids))
        to_graph: dict[int, np.ndarray] = {}  # row -> its vector, new to the graph
        for mid, vec, at in zip(ids, vectors, attrs):
            pos = self._pos.get(mid)
            if pos is None:
                pos = self._n
                self._n += 1
                self._pos[mid] = pos
                self._ids.append(mid)
                self._keys[pos] = self._next_key
                self._next_key += 1
                to_graph[pos] = vec
            elif self._hnsw is not None and pos not in to_graph and (
                    self._relink or not self._same(pos, vec)):
                self._hnsw.remove(self._keys[pos])
                to_graph[pos] = vec
            elif pos in to_graph:
                to_graph[pos] = vec  # twice in one batch: the last one wins
            if self._mat is not None:
                self._mat[pos] = vec
            self._live[pos] = True
            self._valid[pos] = at.valid
            for f in _FIELDS:
                self._codes[f][pos] = self._code(f, getattr(at, f))
        if self._hnsw is not None and to_graph:
            rows = np.fromiter(to_graph, np.int64, len(to_graph))
            self._hnsw.add(self._keys[rows], np.stack(list(to_graph.values())))
        elif self._hnsw is None and len(self) >= self.hnsw_threshold > 0:
            self._build_hnsw()
        self._drop_matrix()
        self.dirty += len(ids)
        self._relink = False

    def _drop_matrix(self) -> None:
        """Leave the vectors to the graph alone once the index is past both the threshold and
        ``exact_filter_limit``: up to there an unfiltered search is exact, and reads the matrix
        (a few ms at 20k rows, where reading 20k vectors back from the graph costs ~30 ms);
        the matrix is then at most 20k x 2 KB. Past it only filtered subsets are searched
        exactly, reading their rows from the graph (:meth:`_rows`)."""
        if self._hnsw is not None and self._mat is not None \
                and len(self) > max(self.hnsw_threshold, self.exact_filter_limit):
            self._mat = None

    def _same(self, pos: int, vec: np.ndarray) -> bool:
        """Whether the graph's vector of row ``pos`` is ``vec`` (up to the dtype's rounding)."""
        held = self._rows(np.array([pos]))[0]
        tol = _ROUNDING[self.dtype]
        return bool(np.array_equal(held, vec) if tol == 0 else np.abs(held - vec).max() <= tol)

    @_exclusive
    def remove(self, ids: Sequence[str]) -> None:
        self._remove(ids)

    def _remove(self, ids: Sequence[str]) -> None:
        for mid in ids:
            pos = self._pos.pop(mid, None)
            if pos is None:
                continue
            self._live[pos] = False
            if self._hnsw is not None:
                self._hnsw.remove(self._keys[pos])
            self.dirty += 1

    def _new_graph(self) -> Any:
        from usearch.index import Index

        return Index(ndim=self.dim, metric="cos", dtype=self.dtype,
                     expansion_search=self.expansion_search)

    def _build_hnsw(self) -> None:
        """Put the matrix's live rows in a new graph."""
        assert self._mat is not None
        graph = self._new_graph()
        rows = np.flatnonzero(self._live[: self._n])
        if len(rows):
            graph.add(self._keys[rows], self._mat[rows])
        self._hnsw = graph

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        """The f32 vectors of live rows ``rows``: from the matrix, or from the graph.

        Past the threshold the graph's copy is the only one in RAM, so the exact paths (a small
        filtered set, :meth:`vectors`) read it there: a bulk ``get_many`` costs about 1 us a
        vector (a filtered set at ``exact_filter_limit``, 20k rows, about 20-30 ms; the
        hundreds of a session or user well under 1 ms), where the store of record would
        cost a SQL read of 2 KB a vector, and a second copy the RAM this saves. Rounded to
        the dtype: f16 keeps cosines to about 1e-3."""
        if self._mat is not None:
            held: np.ndarray = self._mat[rows]
            return held
        if not len(rows):
            return np.zeros((0, self.dim), np.float32)
        keys = self._keys[rows]
        compiled = getattr(self._hnsw, "_compiled", None)
        if compiled is None:  # usearch's public call: the same, ~5x slower (a view per row)
            return np.vstack(self._hnsw.get(keys, dtype=np.float32)).astype(np.float32)
        from usearch.compiled import ScalarKind

        # f16 rows (raw uint16 here) are widened by numpy, faster than usearch's own cast.
        if self.dtype == "f16":
            raw = np.vstack(compiled.get_many(keys, ScalarKind.F16))
            return raw.view(np.float16).astype(np.float32)
        return np.vstack(compiled.get_many(keys, ScalarKind.F32)).astype(np.float32, copy=False)

    def _positions(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows of graph ``keys`` and which of them are real (usearch pads short answers)."""
        keys = np.asarray(keys, np.uint64)
        pos = np.searchsorted(self._keys[: self._n], keys)
        real = pos < self._n
        real[real] = self._keys[pos[real]] == keys[real]
        return np.where(real, pos, 0).astype(np.int64), real

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
        exact_up_to = self._exact_limit(approximate)
        if self._hnsw is None or allowed <= exact_up_to:
            return self._exact(q, k, mask, allowed)
        # A filter that keeps at most half the rows: enough candidates that it keeps about
        # 4 x k x oversample of them, so the graph searches wider (usearch searches max(ef,
        # count) wide). A fifth of 100k rows: recall@10 0.89 at k x oversample, 0.96 so, 5 ms.
        share = round(len(self) / allowed)
        want = k * self.oversample * (1 if share < 2 else min(4 * share, FILTERED_WIDEST))
        while True:
            res = self._graph(q, min(want, len(self)), narrow=approximate)
            keys, real = self._positions(res.keys)
            sims = 1.0 - np.asarray(res.distances, np.float32)
            keys, sims = keys[real], sims[real]
            keep = mask[keys]
            if keep.sum() >= k or want >= len(self):
                return [(self._ids[p], float(s)) for p, s in zip(keys[keep][:k], sims[keep][:k])]
            want *= 4

    def _exact_limit(self, approximate: bool) -> int:
        """The most rows a search reads exactly rather than through the graph: for a
        near-duplicate lookup ``hnsw_threshold``, else ``exact_filter_limit``; and once the
        graph alone holds the vectors, at most ``GRAPH_EXACT_LIMIT``, since each row is then
        read back from the graph (:meth:`_rows`)."""
        limit = self.hnsw_threshold if approximate else self.exact_filter_limit
        return limit if self._mat is not None else min(limit, GRAPH_EXACT_LIMIT)

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
        """With HNSW, one batched ANN call for all queries (usearch runs it in parallel, as
        wide as :meth:`search`: a batch's neighbours are its supersession candidates, and a
        narrow search lost a third of them at 100k, docs/BENCHMARKS.md "Candidates across
        wording, languages and size"); a row whose filter keeps too few of its hits falls
        back to :meth:`search`."""
        if self._hnsw is None or len(queries) < 2 or k <= 0 \
                or len(self) <= self.exact_filter_limit:  # every row would be searched exactly
            return super().search_many(queries, k, filters)
        q = np.asarray(queries, np.float32).reshape(len(queries), self.dim)
        res = self._graph(q, min(k * self.oversample, len(self)), narrow=False)
        masks: dict[Clauses, np.ndarray] = {}
        out: list[list[tuple[str, float]]] = []
        for row, flt in enumerate(filters):
            key = vector_clauses(flt)
            if key not in masks:
                masks[key] = self._mask(key)
            mask = masks[key]
            keys, real = self._positions(res.keys[row])
            sims = 1.0 - np.asarray(res.distances[row], np.float32)
            keys, sims = keys[real], sims[real]
            keep = mask[keys]
            if int(mask.sum()) > self._exact_limit(False) and keep.sum() >= k:
                out.append([(self._ids[p], float(v)) for p, v in zip(keys[keep][:k],
                                                                     sims[keep][:k])])
            else:
                out.append(self.search(q[row], k, flt))
        return out

    def _exact(self, q: np.ndarray, k: int, mask: np.ndarray, allowed: int) -> list[tuple[str, float]]:
        if self._mat is not None and allowed * 2 > self._n:  # mostly allowed: one pass, then mask
            idx = None
            sims = self._mat[: self._n] @ q
            sims[~mask] = -np.inf
        else:
            idx = np.flatnonzero(mask)
            sims = self._rows(idx) @ q
        k = min(k, allowed)
        top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
        top = top[np.argsort(-sims[top], kind="stable")]
        positions = top if idx is None else idx[top]
        return [(self._ids[p], float(sims[t])) for p, t in zip(positions, top)]

    @_shared
    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        # Copies: a change after the lock is released may grow (reallocate) the matrix.
        found = [i for i in ids if i in self._pos]
        rows = self._rows(np.array([self._pos[i] for i in found], np.int64))
        return {i: rows[j].copy() for j, i in enumerate(found)}

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
        # The graph's keys are the rows' own, which compaction keeps (in order): no rebuild.
        if self._mat is not None:
            self._mat = np.ascontiguousarray(self._mat[keep])
        self._keys = self._keys[keep]
        self._valid = self._valid[keep]
        self._live = np.ones(len(keep), bool)
        for f in _FIELDS:
            self._codes[f] = self._codes[f][keep]
        self._ids = [self._ids[p] for p in keep]
        self._pos = {mid: i for i, mid in enumerate(self._ids)}
        self._n = len(keep)

    @_exclusive
    def save(self) -> None:
        """Write the index atomically (temp file + rename); compacts deleted rows first."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self._compact()
        # The graph file is named by a fresh generation that the .npz points to, so the two
        # files can never be mixed up by a crash between their two renames.
        hnsw_name = None
        graph_vectors = "file"
        orphans: tuple[np.ndarray, np.ndarray] | None = None
        if self._hnsw is not None:
            hnsw_name = f"vectors-{uuid.uuid4().hex[:12]}.usearch"
            tmp = self.folder / (hnsw_name + ".tmp")
            self._hnsw.save(str(tmp))
            if self._source is not None:
                links = self.folder / (hnsw_name + ".links")
                try:
                    orphans = _strip_vectors(tmp, links, self.dim * _RAW[self.dtype].itemsize)
                except IndexFileError:
                    links.unlink(missing_ok=True)  # not the layout we know: keep the vectors
                else:
                    os.replace(links, tmp)
                    graph_vectors = "store"
            os.replace(tmp, self.folder / hnsw_name)
        meta = {"format": FORMAT_VERSION, "model_id": self.model_id, "dim": self.dim,
                "seq": self.applied_seq, "hnsw_file": hnsw_name, "dtype": self.dtype,
                "next_key": self._next_key, "graph_vectors": graph_vectors,
                "intern": {f: list(self._intern[f]) for f in _FIELDS}}
        buf = io.BytesIO()
        live = self._live[: self._n]
        ids = [mid if live[i] else "" for i, mid in enumerate(self._ids)]
        # Any: mypy checks a **mapping's values against savez's allow_pickle: bool as well.
        arrays: dict[str, Any] = {f"code_{f}": self._codes[f][: self._n] for f in _FIELDS}
        if self._mat is not None:  # else the graph (its file or the store of record) holds them
            arrays["vectors"] = self._mat[: self._n]
        if orphans is not None:
            arrays["orphan_slots"], arrays["orphan_vectors"] = orphans
        np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
                 ids=np.array([i.encode("utf-8") for i in ids], dtype=bytes),
                 keys=self._keys[: self._n],
                 valid=self._valid[: self._n], **arrays)
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
                stored = z["ids"]
                ids = [x.decode("utf-8") for x in stored] if stored.dtype.kind == "S" \
                    else [str(x) for x in stored]  # formats 1 to 3
                # Format 3 with a graph: the vectors are in the graph file alone.
                vectors = z["vectors"].astype(np.float32) if "vectors" in z.files else None
                n = len(ids)
                keys = (z["keys"].astype(np.uint64) if meta["format"] >= 3
                        else np.arange(n, dtype=np.uint64))  # 1, 2: a row's key is its position
                valid = z["valid"].astype(bool)
                codes = {f: z[f"code_{f}"].astype(np.int32) for f in _FIELDS}
                orphans = ((z["orphan_slots"].astype(np.int64), z["orphan_vectors"])
                           if "orphan_slots" in z.files else None)
        except IndexFileError:
            raise
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            raise IndexFileError(f"corrupted index file: {exc}") from None
        if (vectors is None and not meta.get("hnsw_file")) or len(keys) != n \
                or (vectors is not None and vectors.shape != (n, self.dim)) \
                or any(len(c) != n for c in codes.values()):
            raise IndexFileError("corrupted index file: inconsistent array sizes")
        graph = None
        missing: list[str] = []
        if vectors is None:  # the graph must load: there is no other copy to rebuild it from
            if meta.get("dtype") != self.dtype:
                raise IndexFileError(f"index holds {meta.get('dtype')} vectors, "
                                     f"store.vector_dtype is {self.dtype}")
            if meta.get("graph_vectors") == "store":
                if self._source is None:
                    raise IndexFileError("the graph file holds no vectors and the index has "
                                         "no store to read them from")
                graph, missing = self._read_linked_graph(meta["hnsw_file"], ids, keys, orphans,
                                                         self._source)
            else:
                graph = self._read_graph(meta["hnsw_file"])
            if graph is None:
                raise IndexFileError(f"graph file {meta['hnsw_file']} missing or corrupted")
        elif meta["format"] >= 3 and meta.get("dtype") == self.dtype and n >= self.hnsw_threshold > 0:
            if meta.get("graph_vectors") != "store":
                graph = self._read_graph(meta.get("hnsw_file"))
            else:  # the links, and their vectors from the matrix beside them
                try:
                    graph, _ = self._read_linked_graph(meta["hnsw_file"], ids, keys, orphans,
                                                       _matrix_source(ids, vectors))
                except IndexFileError:
                    graph = None  # rebuilt from the matrix below
        if graph is not None and len(graph) != sum(1 for mid in ids if mid):
            if vectors is None:
                raise IndexFileError("graph file does not match the index file")
            graph = None  # rebuilt from the vectors below
        self.clear()
        if vectors is None:
            self._mat = None  # the graph holds them
        self._grow(max(n, 1))
        if vectors is not None:
            assert self._mat is not None
            self._mat[:n] = vectors
        self._keys[:n] = keys
        self._next_key = int(meta.get("next_key", n))
        self._valid[:n] = valid
        self._live[:n] = [bool(mid) for mid in ids]  # "" marks a deleted row
        for f in _FIELDS:
            self._codes[f][:n] = codes[f]
            self._intern[f] = {v: i for i, v in enumerate(meta["intern"][f])}
        self._ids = ids
        self._pos = {mid: i for i, mid in enumerate(ids) if mid}
        self._n = n
        if graph is not None:
            self._hnsw = graph
        elif n >= self.hnsw_threshold > 0:
            # An older file (f32 vectors in the .npz, a graph keyed by position) or another
            # dtype: a new graph from its vectors, saved in this format at the next close.
            self._build_hnsw()
        self._drop_matrix()
        self.applied_seq = int(meta["seq"])
        self._from_file = graph is not None or self._hnsw is None
        self.dirty = 0 if self._from_file else 1
        # In the file but not in the store (with no tombstone newer than the file, or the
        # catch-up would have removed them): the store of record wins.
        self._remove(missing)
        self._relink = vectors is None and meta.get("graph_vectors") == "store"

    def _read_graph(self, name: str | None) -> Any:
        """The graph file ``name`` when it reads back whole, else None."""
        from usearch.index import Index

        if not name or not (self.folder / name).exists():
            return None
        try:
            index = Index(ndim=self.dim, metric="cos", dtype=self.dtype)
            index.load(str(self.folder / name))
            # usearch defines this setter apart from its getter, so mypy sees no setter.
            index.expansion_search = self.expansion_search  # type: ignore[misc]
        except (RuntimeError, ValueError, OSError):
            return None
        return index

    def _read_linked_graph(self, name: str, ids: list[str], keys: np.ndarray,
                           orphans: tuple[np.ndarray, np.ndarray] | None,
                           source: VectorSource) -> tuple[Any, list[str]]:
        """The graph file ``name`` (links alone) with its vectors from ``source``; and the ids
        whose vectors the source no longer has."""
        from usearch.index import Index

        path = self.folder / name
        try:
            links = path.read_bytes()
            slot_keys = _slot_keys(memoryview(links))
        except (OSError, IndexFileError) as exc:
            raise IndexFileError(f"graph file {name} missing or corrupted ({exc})") from None
        raw = _RAW[self.dtype]
        rows, width = len(slot_keys), self.dim * raw.itemsize
        # usearch's own layout (see _strip_vectors), rebuilt in one buffer: it loads only
        # from a path or a buffer. The buffer is freed once the graph has copied it.
        buf = bytearray(8 + rows * width + len(links))
        struct.pack_into("<II", buf, 0, rows, width)
        buf[8 + rows * width:] = links
        del links
        vecs = np.frombuffer(buf, raw, count=rows * self.dim, offset=8).reshape(rows, self.dim)
        id_of = {int(k): mid for k, mid in zip(keys, ids) if mid}
        slot_ids = [id_of.get(int(k), "") for k in slot_keys]
        if len(id_of) != sum(1 for mid in slot_ids if mid):  # checked before the store is read
            raise IndexFileError("graph file does not match the index file")
        if orphans is not None:
            slots, held = orphans
            if len(slots) and (slots.max() >= rows or held.shape != (len(slots), width)):
                raise IndexFileError("corrupted index file: removed slots do not fit the graph")
            vecs[slots] = held.view(raw).reshape(len(slots), self.dim)
        found = source(slot_ids, vecs)
        missing = [mid for mid, ok in zip(slot_ids, found) if mid and not ok]
        try:
            index = Index(ndim=self.dim, metric="cos", dtype=self.dtype)
            index.load(buf)
            index.expansion_search = self.expansion_search  # type: ignore[misc]
        except (RuntimeError, ValueError) as exc:
            raise IndexFileError(f"graph file {name} corrupted ({exc})") from None
        return index, missing


def _matrix_source(ids: list[str], matrix: np.ndarray) -> VectorSource:
    """A vector source over the rows of ``matrix``, row ``i`` being id ``ids[i]``."""
    row_of = {mid: i for i, mid in enumerate(ids) if mid}

    def fill(wanted: Sequence[str], out: np.ndarray) -> np.ndarray:
        rows = np.array([row_of.get(mid, -1) for mid in wanted], np.int64)
        found: np.ndarray = rows >= 0
        out[found] = matrix[rows[found]]
        return found
    return fill


# usearch's saved dense index (format 2, index_dense.hpp and index.hpp, save_to_stream): u32
# rows and u32 bytes a vector; the rows' vectors in slot order; a 64-byte head ("usearch");
# then the graph: 5 u64 (size, connectivity, connectivity_base, max_level, entry_slot), an i16
# level per slot, and the slots' nodes, each its u64 key (all ones: removed), its i16 level,
# and a u32 count and u32 neighbours for the base level and again for each level above. Its
# Python API cannot save without the vectors, so they are cut out here (read back, the layout
# is checked to the byte; a file that does not match keeps its vectors).
_FREE_KEY = np.uint64(2**64 - 1)


def _slot_keys(links: memoryview) -> np.ndarray:
    """The key of each slot of a saved graph that starts at usearch's 64-byte head."""
    if bytes(links[:7]) != b"usearch" or len(links) < 104:
        raise IndexFileError("not a usearch graph")
    size, conn, conn_base, _, _ = struct.unpack_from("<5Q", links, 64)
    levels_at = 104
    if levels_at + 2 * size > len(links):
        raise IndexFileError("graph file truncated")
    if size == 0:
        return np.zeros(0, np.uint64)
    levels = np.frombuffer(links, "<i2", count=size, offset=levels_at).astype(np.int64)
    sizes = 10 + (4 * conn_base + 4) + levels * (4 * conn + 4)
    starts = levels_at + 2 * size + np.concatenate(([0], np.cumsum(sizes)[:-1]))
    if levels.min() < 0 or int(starts[-1] + sizes[-1]) != len(links):
        raise IndexFileError("graph file does not have usearch's node layout")
    data = np.frombuffer(links, np.uint8)
    keys: np.ndarray = data[starts[:, None] + np.arange(8)].view("<u8").ravel().copy()
    return keys


def _strip_vectors(full: Path, links: Path, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Write usearch's saved index ``full`` to ``links`` without its vectors; return the removed
    slots and their vectors (gone from the store of record, still steps in the graph's paths)."""
    with open(full, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise IndexFileError("graph file truncated")
        rows, got = struct.unpack("<II", head)
        if got != width:
            raise IndexFileError(f"graph vectors of {got} bytes, expected {width}")
        f.seek(8 + rows * width)
        rest = f.read()
        keys = _slot_keys(memoryview(rest))
        if len(keys) != rows:
            raise IndexFileError("graph and vector counts differ")
        slots = np.flatnonzero(keys == _FREE_KEY)
        held = np.zeros((len(slots), width), np.uint8)
        for j, slot in enumerate(slots):
            f.seek(8 + int(slot) * width)
            held[j] = np.frombuffer(f.read(width), np.uint8)
    with open(links, "wb") as out:
        out.write(rest)
    return slots, held


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
