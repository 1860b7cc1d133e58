"""L1 session history (SPEC L1-1, L1-2): one Markdown file per session, readable with ``cat``.

Each turn is a marker line (an HTML comment, invisible when the Markdown is rendered) followed by
the turn's text, so a turn may itself contain any Markdown, headings included::

    # Session s1

    <!-- varvemem turn at=2026-01-01T09:00:00+00:00 role=user -->
    How do I reset my password?

Appends are flushed to disk before they return, one write per call, so a crash keeps every
acknowledged turn and at worst loses the call in flight.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..errors import StorageError, ValidationError
from .file_archive import tenant_folder

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_MARKER = re.compile(r"^<!-- varvemem turn at=(\S+) role=([A-Za-z0-9_-]+)( summary)? -->$",
                     re.M)


@dataclass(frozen=True)
class Turn:
    """One turn of a session: when, who, and the text kept (``summary``: it replaced the
    original, as :func:`compress_history` does for answers)."""

    at: datetime
    role: str
    content: str
    summary: bool = False


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
        if tenant == self.default_tenant:
            return self.root / f"{session}.md"
        return self.root / "tenants" / tenant_folder(tenant) / f"{session}.md"

    def append(self, tenant: str, session: str, turns: Sequence[Turn]) -> Path:
        path = self.path(tenant, session)
        parts = []
        for t in turns:
            if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", t.role):
                raise ValidationError(f"role {t.role!r} must be a word (user, assistant...)")
            text = t.content.rstrip("\n")
            if _MARKER.search(text):
                raise ValidationError("a turn may not contain a varvemem turn marker line")
            flag = " summary" if t.summary else ""
            parts.append(f"\n<!-- varvemem turn at={t.at.isoformat()} role={t.role}{flag} -->"
                         f"\n{text}\n")
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
            turns.append(Turn(at, m.group(2), text[m.end():end].strip("\n"), bool(m.group(3))))
        return turns
