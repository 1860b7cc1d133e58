"""The embedded archive (TIER-5): a folder of gzip-compressed JSON Lines, one file per batch."""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import json
import os
import uuid
import zlib
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pydantic

from ..errors import ArchiveError
from ..model import MemoryRecord
from .base import Archive


def record_line(r: MemoryRecord) -> bytes:
    """One archived record as a JSON line; the embedding as base64 float32 (a quarter of the
    size of a JSON list of numbers)."""
    data = r.model_dump(mode="json", exclude={"embedding"})
    if r.embedding is not None:
        data["embedding_f32"] = base64.b64encode(
            np.asarray(r.embedding, np.float32).tobytes()).decode()
    return json.dumps(data, ensure_ascii=False).encode() + b"\n"


def parse_lines(name: str, payload: bytes) -> list[MemoryRecord]:
    """The records of an archive object; :class:`ArchiveError` naming it when malformed."""
    try:
        text = gzip.decompress(payload).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise ArchiveError(f"archive object {name} is not gzip-compressed UTF-8: {exc}") from None
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data: dict[str, Any] = json.loads(line)
            blob = data.pop("embedding_f32", None)
            if blob is not None:
                data["embedding"] = np.frombuffer(base64.b64decode(blob), np.float32).tolist()
            out.append(MemoryRecord.model_validate(data))
        except (ValueError, TypeError, pydantic.ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise ArchiveError(f"archive object {name}, line {no}: {first}") from None
    return out


def fit_segment(name: str, original: str) -> str:
    """``name`` (``original`` %-encoded) within a file name's 255 bytes: one over 200
    characters is cut and completed by ``original``'s SHA-256. ``%%`` never occurs in
    %-encoding, so a cut name is never a whole one."""
    if len(name) <= 200:
        return name
    return name[:120] + "%%" + hashlib.sha256(original.encode("utf-8")).hexdigest()


def tenant_folder(tenant: str) -> str:
    """A tenant as one path segment that can never leave its parent (``/`` and ``.`` are
    %-encoded) and fits a file name (:func:`fit_segment`)."""
    return fit_segment(quote(tenant, safe="").replace(".", "%2E"), tenant)


def object_name(tenant: str, at: datetime) -> str:
    """``<tenant folder>/<UTC time>-<random>.jsonl.gz``."""
    return f"{tenant_folder(tenant)}/{at.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}.jsonl.gz"


class FileArchive(Archive):
    """Objects are files under ``root``; each is written to a temporary name, flushed to disk
    and renamed, so a crash leaves either the whole object or none."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = f"file://{root}"

    def _path(self, name: str) -> Path:
        path = (self.root / name).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise ArchiveError(f"archive object {name!r} is outside the archive")
        return path

    def write(self, tenant: str, records: Sequence[MemoryRecord], at: datetime) -> str:
        name = object_name(tenant, at)
        path = self._path(name)
        tmp = path.with_name(path.name + ".tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(gzip.compress(b"".join(record_line(r) for r in records)))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise ArchiveError(f"cannot write the archive {self.root}: {exc.strerror}") from None
        return name

    def read(self, name: str) -> list[MemoryRecord]:
        try:
            payload = self._path(name).read_bytes()
        except OSError as exc:
            raise ArchiveError(f"archive object {name} cannot be read: {exc.strerror}") from None
        return parse_lines(name, payload)

    def delete(self, name: str) -> None:
        self._path(name).unlink(missing_ok=True)
