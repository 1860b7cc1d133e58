"""The embedded vector index's files (:class:`PersistedVectors`): one ``.npz`` (ids, filter
codes, and the matrix while there is one) plus the usearch graph file, written atomically, with
the graph's vectors cut out of it when the store of record holds them; and the reading back.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import struct
import uuid
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .base import IndexFileError, MissingIndexFileError
from .vector_rows import FIELDS, RAW, VectorRows, VectorSource, exclusive

# 2: deleted rows may be saved (their id is ""), so a save need not rebuild the HNSW graph.
# 3: the graph's keys are the rows' own (``keys``), not their positions, and once there is a
# graph it alone holds the vectors (in ``dtype``); the .npz then has none.
# 4: ids as UTF-8 bytes (36 bytes a memory id; numpy's str array took 144).
# 5: "graph_vectors" says where the graph's vectors are: in its file ("file", as before) or in
# the store of record ("store": the file holds the links, the .npz the removed slots' vectors).
FORMAT_VERSION = 5
_READABLE = (1, 2, 3, 4, 5)
# A save compacts (and so rebuilds the HNSW graph, whose keys are row positions) only when
# deleted rows are at least this share of all rows; below it they stay as holes.
COMPACT_SHARE = 0.25


class PersistedVectors(VectorRows):
    """The rows of a :class:`~varvemem.stores.local_vectors.LocalVectorIndex`, saved to and
    loaded from its folder; deleted rows are compacted away on save once they are a quarter of
    all rows (``COMPACT_SHARE``)."""

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
        for f in FIELDS:
            self._codes[f] = self._codes[f][keep]
        self._ids = [self._ids[p] for p in keep]
        self._pos = {mid: i for i, mid in enumerate(self._ids)}
        self._n = len(keep)

    @exclusive
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
                    orphans = _strip_vectors(tmp, links, self.dim * RAW[self.dtype].itemsize)
                except IndexFileError:
                    links.unlink(missing_ok=True)  # not the layout we know: keep the vectors
                else:
                    os.replace(links, tmp)
                    graph_vectors = "store"
            os.replace(tmp, self.folder / hnsw_name)
        meta = {"format": FORMAT_VERSION, "model_id": self.model_id, "dim": self.dim,
                "seq": self.applied_seq, "hnsw_file": hnsw_name, "dtype": self.dtype,
                "next_key": self._next_key, "graph_vectors": graph_vectors,
                "intern": {f: list(self._intern[f]) for f in FIELDS}}
        buf = io.BytesIO()
        live = self._live[: self._n]
        ids = [mid if live[i] else "" for i, mid in enumerate(self._ids)]
        # Any: mypy checks a **mapping's values against savez's allow_pickle: bool as well.
        arrays: dict[str, Any] = {f"code_{f}": self._codes[f][: self._n] for f in FIELDS}
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

    @exclusive
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
                codes = {f: z[f"code_{f}"].astype(np.int32) for f in FIELDS}
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
                                     f"store.local.dtype is {self.dtype}")
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
        for f in FIELDS:
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
        raw = RAW[self.dtype]
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
