"""L2 of the FAQ assistant (SPEC L2-1, L2-2): scored Q&A pairs as ``qa-<id>.md`` files, a
human-editable mirror of the store: YAML front matter (read with a safe loader that refuses
aliases and anchors) and the answer as the body.

Reading files from a folder (here and for document ingest) opens regular files only: a FIFO,
device or socket is skipped unopened, and a symlink whose target leaves the folder is refused
unless ``update.follow_symlinks_outside`` is on."""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import frontmatter
import yaml
from frontmatter.default_handlers import YAMLHandler

from ._validate import keywords as checked_keywords
from .errors import StorageError, ValidationError
from .model import MemoryRecord, TTLMode
from .settings import UpdateSettings

_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
# A file may hold this many times update.max_content_bytes (question and answer, plus the front
# matter); the front matter parsed may be this many times its text (quotes, commas, null).
_FILE_FACTOR = 4
_PARSED_FACTOR = 4
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


class _NoAliasLoader(yaml.SafeLoader):
    """The safe loader, refusing anchors and aliases: an alias expands to what it names, so a
    few KB of nested aliases would become gigabytes."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(
                None, None, "YAML anchors and aliases (& and *) are not allowed",
                event.start_mark)
        return super().compose_node(parent, index)


class _Handler(YAMLHandler):
    def load(self, fm: str, **kwargs: object) -> Any:
        size = len(fm)
        data = yaml.load(fm, Loader=_NoAliasLoader)  # a SafeLoader
        if len(json.dumps(data, default=str)) > _PARSED_FACTOR * size + 1024:
            raise ValueError("the front matter grows too much when parsed")
        return data


def file_problem(path: Path, root: Path, follow_outside: bool) -> str | None:
    """Why ``path`` (found in folder ``root``) must not be read, or None: it is not a regular
    file (a FIFO, device or socket is never opened), a broken symlink, or (unless
    ``follow_outside``) its real path leaves ``root``."""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return "a broken symlink" if path.is_symlink() else "cannot be read"
    if not follow_outside and not target.is_relative_to(root.resolve()):
        return (f"a symlink to {target}, outside {root} "
                "(update.follow_symlinks_outside allows it)")
    try:
        mode = target.stat().st_mode
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    if not stat.S_ISREG(mode):
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a folder"
                if stat.S_ISDIR(mode) else "special")
        return f"not a regular file ({kind})"
    return None


def read_regular(path: Path, limit: int | None = None) -> str:
    """The UTF-8 text of a regular file (a leading BOM dropped), at most ``limit`` bytes if
    given; ``ValueError`` otherwise. Opened without blocking, so a FIFO put in its place after a
    check is refused, never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ValueError(f"cannot open: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        data = f.read() if limit is None else f.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise ValueError(f"larger than {limit} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None


def read_blocks(path: Path, limit: int | None = None,
                block: int = 256 * 1024) -> Iterator[str]:
    """The UTF-8 text of a regular file as :func:`read_regular` reads it, ``block`` bytes at a
    time, decoded as it goes (a character cut between two blocks is whole in the next); the
    same ``ValueError`` s, raised when the first block is asked for (the file's kind and size)
    or when the reading comes to the fault (bad UTF-8, a file grown past ``limit``)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ValueError(f"cannot open: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if limit is not None and info.st_size > limit:
            raise ValueError(f"larger than {limit} bytes")
        decoder = codecs.getincrementaldecoder("utf-8-sig")()
        size = 0
        while data := f.read(block):
            size += len(data)
            if limit is not None and size > limit:
                raise ValueError(f"larger than {limit} bytes")
            try:
                yield decoder.decode(data)
            except UnicodeDecodeError:
                raise ValueError("not UTF-8 text") from None
        try:
            yield decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise ValueError("not UTF-8 text") from None


def candidates(folder: Path, cfg: UpdateSettings) -> tuple[list[Path], dict[str, str]]:
    """The ``qa-*.md`` files of ``folder`` to read, by name, and those skipped (name ->
    why: see :func:`file_problem`)."""
    files: list[Path] = []
    skipped: dict[str, str] = {}
    for path in sorted(folder.glob("qa-*.md")):
        why = file_problem(path, folder, cfg.follow_symlinks_outside)
        if why is None:
            files.append(path)
        else:
            skipped[path.name] = why
    return files, skipped


def read(path: Path, cfg: UpdateSettings | None = None) -> QAFile:
    """Parse and validate one file, with the limits of ``cfg`` (the file's size, keywords as
    for any add: at most ``keywords_max``, each within ``max_content_bytes``); ``ValueError``
    saying what is wrong (the caller names the file)."""
    cfg = cfg or UpdateSettings()
    text = read_regular(path, _FILE_FACTOR * cfg.max_content_bytes)
    try:
        post = frontmatter.loads(text, handler=_Handler())
    except yaml.YAMLError as exc:  # a SafeLoader refuses tags such as !!python/object
        raise ValueError(f"bad YAML front matter: {str(exc).splitlines()[0]}") from None
    except RecursionError:  # PyYAML's parser recurses once per level of nesting
        raise ValueError("the front matter is nested too deep to read") from None
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
    if keywords is not None:
        try:
            keywords = checked_keywords(cfg, keywords)
        except ValidationError as exc:
            raise ValueError(str(exc)) from None
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
