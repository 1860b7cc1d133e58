"""The embedded vector index: exact numpy search while small, usearch HNSW past a threshold.

Small, the vectors are an f32 numpy matrix; past the threshold the usearch graph holds them
too, in ``store.local.dtype`` (f16 by default: half the bytes, the same recall), and past
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

Here are its writes and searches; its rows are in ``vector_rows.py``, its files in
``vector_file.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..filters import AllOf, AnyOf, Clauses, Node, Not, vector_clauses
from ..model import VectorFilter
from .base import IndexFileError, VectorAttrs, VectorChanges
from .vector_file import COMPACT_SHARE, FORMAT_VERSION, PersistedVectors
from .vector_rows import DTYPES, FIELDS, VectorSource, exclusive, shared

__all__ = ["COMPACT_SHARE", "DTYPES", "FILTERED_WIDEST", "FORMAT_VERSION", "GRAPH_EXACT_LIMIT",
           "IndexFileError", "LocalVectorIndex", "VectorSource"]

_NULLABLE = frozenset({"user", "agent", "session"})  # None is code 0 of their intern table
# Once the graph alone holds the vectors, a filtered search is exact over at most this many
# rows: reading a row back from the graph costs ~3 us (a 20,000-row subset took 54 ms p50 at
# 100k, 181 ms on 2 busy cores), so a bigger subset goes through the graph with the filter,
# searched wider (docs/BENCHMARKS.md, "Fast close and compact vectors").
GRAPH_EXACT_LIMIT = 5_000
FILTERED_WIDEST = 48  # at most 48 x k x oversample candidates (1,920 for the top 10) at first
# How far a stored vector may be from the one it was made from (a rounding to the dtype): an
# upsert within it is the same vector (an attrs change), not a new one for the graph.
_ROUNDING = {"f32": 0.0, "f16": 1e-3, "i8": 1.01 / 127}


class LocalVectorIndex(PersistedVectors):
    """Append-only arrays with a live mask; deleted rows are compacted away on save once they
    are a quarter of all rows (``COMPACT_SHARE``)."""

    # -- writes ---------------------------------------------------------------------------
    @exclusive
    def apply(self, changes: VectorChanges) -> None:
        # One exclusive hold: a search sees all of a catch-up or none of it.
        super().apply(changes)
        self._relink = False

    @exclusive
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
            for f in FIELDS:
                self._codes[f][pos] = self._code(f, getattr(at, f))
        if self._hnsw is not None and to_graph:
            rows = np.fromiter(to_graph, np.int64, len(to_graph))
            self._hnsw.add(self._keys[rows], np.stack(list(to_graph.values())))
        elif self._hnsw is None and len(self) >= self.hnsw_threshold > 0:
            self._build_hnsw()
        self._drop_matrix()
        self.dirty += len(ids)
        self._relink = False

    def _same(self, pos: int, vec: np.ndarray) -> bool:
        """Whether the graph's vector of row ``pos`` is ``vec`` (up to the dtype's rounding)."""
        held = self._rows(np.array([pos]))[0]
        tol = _ROUNDING[self.dtype]
        return bool(np.array_equal(held, vec) if tol == 0 else np.abs(held - vec).max() <= tol)

    @exclusive
    def remove(self, ids: Sequence[str]) -> None:
        self._remove(ids)

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

    @exclusive
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

    @shared
    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        # Copies: a change after the lock is released may grow (reallocate) the matrix.
        found = [i for i in ids if i in self._pos]
        rows = self._rows(np.array([self._pos[i] for i in found], np.int64))
        return {i: rows[j].copy() for j, i in enumerate(found)}

    @property
    def uses_hnsw(self) -> bool:
        return self._hnsw is not None
