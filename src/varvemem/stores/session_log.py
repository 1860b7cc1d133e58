"""L1 session history (SPEC L1-1, L1-2): one Markdown file per session, readable with ``cat``.

Each turn is a marker line (an HTML comment, invisible when the Markdown is rendered) followed by
the turn's text, so a turn may itself contain any Markdown, headings included. A turn with a
summary (an answer saved with one) keeps its full text, then a summary marker and the summary::

    # Session s1

    <!-- varvemem turn at=2026-01-01T09:00:00+00:00 role=user -->
    How do I reset my password?

    <!-- varvemem turn at=2026-01-01T09:00:00+00:00 role=assistant -->
    ## Reset
    1. Open Settings > Security.
    2. Click Reset.
    <!-- varvemem summary -->
    Reset it under Settings > Security.

A turn saved for a user also names them, percent-encoded (``user=ann%40example.com``), so
erasing that user can take their turns out of a session shared with others.

Text may not contain a line that is one of these markers (it would be read back as one).
Appends are flushed to disk before they return, one write per call, so a crash keeps every
acknowledged turn and at worst loses the call in flight.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import quote, unquote

from ..errors import StorageError, ValidationError
from .file_archive import tenant_folder

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_MARKER = re.compile(r"^<!-- varvemem turn at=(\S+) role=([A-Za-z0-9_-]+)(?: user=(\S+))? -->$",
                     re.M)
_SUMMARY = re.compile(r"^<!-- varvemem summary -->$", re.M)


@dataclass(frozen=True)
class Turn:
    """One turn of a session: when, who, its full text, and its summary if it has one (what
    :meth:`~varvemem.history.SessionHistory.compress_history` puts in place of the text)."""

    at: datetime
    role: str
    content: str
    summary: str | None = None
    user: str | None = None


def check_session_id(session: str) -> str:
    """Session ids name files: letters, digits, ``.``, ``_``, ``-``, up to 128, not starting
    with a dot (so no ``/``, ``..``, NUL or hidden files)."""
    if not isinstance(session, str) or not SESSION_ID.fullmatch(session):
        raise ValidationError(f"session id {session!r} must be 1-128 letters, digits, '.', '_' "
                              "or '-', starting with a letter or digit")
    return session


class SessionLog:
    """The folder of session files: ``<root>/<session>.md`` for the default tenant and
    ``<root>/tenants/<tenant>/<session>.md`` for the others."""

    def __init__(self, root: Path, default_tenant: str = "default") -> None:
        self.root = root
        self.default_tenant = default_tenant

    def path(self, tenant: str, session: str) -> Path:
        check_session_id(session)
        return self._folder(tenant) / f"{session}.md"

    def _folder(self, tenant: str) -> Path:
        if tenant == self.default_tenant:
            return self.root
        return self.root / "tenants" / tenant_folder(tenant)

    def append(self, tenant: str, session: str, turns: Sequence[Turn]) -> Path:
        path = self.path(tenant, session)
        parts = [_render(t) for t in turns]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            new = not path.exists()
            with open(path, "a", encoding="utf-8") as f:
                f.write((f"# Session {session}\n" if new else "") + "".join(parts))
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise StorageError(f"cannot write session file {path}: {exc.strerror}") from None
        return path

    def delete(self, tenant: str, session: str) -> int:
        path = self.path(tenant, session)
        try:
            path.unlink()
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise StorageError(f"cannot delete session file {path}: {exc.strerror}") from None
        return 1

    def load(self, tenant: str, session: str) -> list[Turn]:
        path = self.path(tenant, session)
        try:
            text = path.read_text("utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise StorageError(f"cannot read session file {path}: {exc}") from None
        marks = list(_MARKER.finditer(text))
        turns = []
        for i, m in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            try:
                at = datetime.fromisoformat(m.group(1))
            except ValueError:
                raise StorageError(f"{path}: turn {i + 1} has a bad time {m.group(1)!r}") from None
            body, summary = text[m.end():end], None
            cut = _SUMMARY.search(body)
            if cut is not None:
                body, summary = body[: cut.start()], body[cut.end():].strip("\n")
            user = None if m.group(3) is None else unquote(m.group(3))
            turns.append(Turn(at, m.group(2), body.strip("\n"), summary, user))
        return turns

    def sessions(self, tenant: str) -> list[str]:
        """The ids of the tenant's session files, sorted."""
        folder = self._folder(tenant)
        if not folder.is_dir():
            return []
        return sorted(p.stem for p in folder.glob("*.md")
                      if p.is_file() and SESSION_ID.fullmatch(p.stem))

    def erase_user(self, tenant: str, user: str) -> tuple[int, int]:
        """Take ``user``'s turns out of every session file of the tenant (rewritten whole, by
        an atomic replace); a file left with no turn is deleted. Returns (files deleted,
        turns removed)."""
        files = turns = 0
        for session in self.sessions(tenant):
            kept = self.load(tenant, session)
            gone = sum(t.user == user for t in kept)
            if not gone:
                continue
            kept = [t for t in kept if t.user != user]
            turns += gone
            if kept:
                self._rewrite(tenant, session, kept)
            else:
                files += self.delete(tenant, session)
        return files, turns

    def _rewrite(self, tenant: str, session: str, turns: Sequence[Turn]) -> None:
        path = self.path(tenant, session)
        text = f"# Session {session}\n" + "".join(_render(t) for t in turns)
        try:
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent,
                                             prefix=".", suffix=".tmp", delete=False) as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(f.name, path)
        except OSError as exc:
            raise StorageError(f"cannot rewrite session file {path}: {exc.strerror}") from None


def _render(t: Turn) -> str:
    """One turn as the file keeps it: its marker line, its text, its summary if any."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", t.role):
        raise ValidationError(f"role {t.role!r} must be a word (user, assistant...)")
    texts = [t.content] if t.summary is None else [t.content, t.summary]
    if any(_MARKER.search(x) or _SUMMARY.search(x) for x in texts):
        raise ValidationError("a turn may not contain a varvemem marker line")
    text = t.content.rstrip("\n")
    if t.summary is not None:
        text += "\n<!-- varvemem summary -->\n" + t.summary.rstrip("\n")
    who = "" if t.user is None else f" user={quote(t.user, safe='')}"
    return f"\n<!-- varvemem turn at={t.at.isoformat()} role={t.role}{who} -->\n{text}\n"
