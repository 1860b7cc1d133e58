"""The embedded vector index's rows (:class:`VectorRows`): the arrays of ids, graph keys and
filter codes, the f32 matrix while there is one, the HNSW graph, and the readers-writer lock
its methods hold (:func:`shared`, :func:`exclusive`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from .._rwlock import RWLock
from .base import VectorIndex

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S", bound="VectorRows")
# Fills row i of the array with the stored vector of id i; returns the mask of those found.
VectorSource = Callable[[Sequence[str], np.ndarray], np.ndarray]

FIELDS = ("tenant", "user", "agent", "session", "memory_type", "tier")
DTYPES = ("f32", "f16", "i8")
# The dtypes usearch stores as plain IEEE floats, as the store of record does.
RAW: dict[str, np.dtype[Any]] = {"f32": np.dtype("<f4"), "f16": np.dtype("<f2")}


def shared(fn: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Run the method holding the index's lock shared."""
    def method(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._rw.read():
            return fn(self, *args, **kwargs)
    functools.update_wrapper(method, fn)
    return method


def exclusive(fn: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Run the method holding the index's lock exclusively."""
    def method(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._rw.write():
            return fn(self, *args, **kwargs)
    functools.update_wrapper(method, fn)
    return method


class VectorRows(VectorIndex):
    """The rows of :class:`~varvemem.stores.local_vectors.LocalVectorIndex`: its state, and the
    changes to it that both its writes and a load make."""

    def __init__(self, folder: Path, dim: int, model_id: str, hnsw_threshold: int = 5_000,
                 exact_filter_limit: int = 20_000, oversample: int = 4,
                 expansion_search: int = 1024, expansion_neighbours: int = 64,
                 dtype: str = "f16", vector_source: VectorSource | None = None) -> None:
        if dtype not in DTYPES:
            raise ValueError(f"vector dtype {dtype!r} is not one of {', '.join(DTYPES)}")
        # i8 is usearch's own quantisation, which the store's vectors cannot be turned into
        # byte for byte: such a graph keeps its vectors in its file.
        self._source = vector_source if dtype in RAW else None
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
    @exclusive
    def clear(self) -> None:
        self._n = 0
        # The f32 vectors, while there is no graph (None once the graph holds them).
        self._mat: np.ndarray | None = np.zeros((1024, self.dim), np.float32)
        self._keys = np.zeros(1024, np.uint64)  # each row's graph key, ascending with the row
        self._next_key = 0
        self._live = np.zeros(1024, bool)
        self._valid = np.zeros(1024, bool)
        self._codes = {f: np.zeros(1024, np.int32) for f in FIELDS}
        self._intern: dict[str, dict[str | None, int]] = {f: {None: 0} for f in FIELDS}
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
        for f in FIELDS:
            self._codes[f] = np.resize(self._codes[f], new)

    def _code(self, field: str, value: str | None) -> int:
        table = self._intern[field]
        if value not in table:
            table[value] = len(table)
        return table[value]

    def _drop_matrix(self) -> None:
        """Leave the vectors to the graph alone once the index is past both the threshold and
        ``exact_filter_limit``: up to there an unfiltered search is exact, and reads the matrix
        (a few ms at 20k rows, where reading 20k vectors back from the graph costs ~30 ms);
        the matrix is then at most 20k x 2 KB. Past it only filtered subsets are searched
        exactly, reading their rows from the graph (:meth:`_rows`)."""
        if self._hnsw is not None and self._mat is not None \
                and len(self) > max(self.hnsw_threshold, self.exact_filter_limit):
            self._mat = None

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
