"""L2 of the FAQ assistant (SPEC L2-1, L2-2): scored Q&A pairs as ``qa-<id>.md`` files, a
human-editable mirror of the store: YAML front matter (read with a safe loader only) and the
answer as the body."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import frontmatter
import yaml

from .errors import StorageError
from .model import MemoryRecord, TTLMode

_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
FIELDS = ("id", "question", "score", "source_file", "source_location", "created_at",
          "keywords", "ttl_mode", "ttl_days")


@dataclass(frozen=True)
class QAFile:
    """One pair as read from a file (validated)."""

    path: Path
    id: str | None
    question: str
    answer: str
    score: float
    keywords: list[str] | None
    ttl_mode: TTLMode | None
    ttl_days: float | None
    source_file: str | None
    source_location: str | None


def render(r: MemoryRecord) -> str:
    """The pair's file text."""
    meta: dict[str, Any] = {
        "id": r.memory_id, "question": r.question, "score": r.score,
        "source_file": r.metadata.get("source_file"),
        "source_location": r.metadata.get("source_location"),
        "created_at": r.created_at.isoformat(), "keywords": list(r.keywords),
        "ttl_mode": r.ttl_mode.value, "ttl_days": r.ttl_days,
    }
    post = frontmatter.Post(r.answer or "", **{k: v for k, v in meta.items() if v is not None})
    return frontmatter.dumps(post, sort_keys=False, allow_unicode=True) + "\n"


def write(folder: Path, r: MemoryRecord) -> Path:
    """Write ``qa-<id>.md`` atomically (temp file + rename)."""
    path = folder / f"qa-{r.memory_id}.md"
    tmp = path.with_name(path.name + ".tmp")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_text(render(r), "utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror}") from None
    return path


def read(path: Path) -> QAFile:
    """Parse and validate one file; ``ValueError`` saying what is wrong (the caller names the
    file)."""
    try:
        post = frontmatter.loads(path.read_text("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    except yaml.YAMLError as exc:  # a SafeLoader refuses tags such as !!python/object
        raise ValueError(f"bad YAML front matter: {str(exc).splitlines()[0]}") from None
    meta = post.metadata
    if not isinstance(meta, dict) or not meta:
        raise ValueError("no YAML front matter mapping")
    unknown = sorted(set(meta) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}")
    question = meta.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be non-empty text")
    score = meta.get("score", 0.5)
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
        raise ValueError(f"score {score!r} is not a number in 0..1")
    mid = meta.get("id")
    if mid is not None and (not isinstance(mid, str) or not _ID.fullmatch(mid)):
        raise ValueError(f"id {mid!r} is not a memory id")
    keywords = meta.get("keywords")
    if keywords is not None and (not isinstance(keywords, list)
                                 or not all(isinstance(k, str) for k in keywords)):
        raise ValueError("keywords must be a list of text")
    mode = meta.get("ttl_mode")
    try:
        ttl_mode = None if mode is None else TTLMode(mode)
    except ValueError:
        raise ValueError(f"ttl_mode {mode!r} is not one of "
                         f"{[m.value for m in TTLMode]}") from None
    days = meta.get("ttl_days")
    if days is not None and (isinstance(days, bool) or not isinstance(days, (int, float))
                             or days <= 0):
        raise ValueError(f"ttl_days {days!r} is not a positive number")
    for key in ("source_file", "source_location"):
        if meta.get(key) is not None and not isinstance(meta[key], (str, int)):
            raise ValueError(f"{key} must be text")
    created = meta.get("created_at")
    if created is not None and not isinstance(created, (str, datetime)):
        raise ValueError("created_at must be a time")
    if not post.content.strip():
        raise ValueError("the answer (the body after the front matter) is empty")
    return QAFile(path, mid, question.strip(), post.content.strip(), float(score), keywords,
                  ttl_mode, None if days is None else float(days),
                  None if meta.get("source_file") is None else str(meta["source_file"]),
                  None if meta.get("source_location") is None else str(meta["source_location"]))
