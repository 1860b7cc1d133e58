"""L1 session history (SPEC L1-1, L1-2): one Markdown file per session, readable with ``cat``.

Each turn is a marker line (an HTML comment, invisible when the Markdown is rendered) followed by
the turn's text, so a turn may itself contain any Markdown, headings included. A turn with a
summary (an answer saved with one) keeps its full text, then a summary marker and the summary::

    # Session s1

    <!-- varvemem turn at=2026-01-01T09:00:00+00:00 role=user len=27 -->
    How do I reset my password?

    <!-- varvemem turn at=2026-01-01T09:00:00+00:00 role=assistant len=49 -->
    ## Reset
    1. Open Settings > Security.
    2. Click Reset.
    <!-- varvemem summary len=34 -->
    Reset it under Settings > Security.

``len`` is the text's length in characters: the text is read back exactly (blank lines,
trailing spaces, an empty text, even a line that looks like a marker). A turn saved for a user
names them (``user=``), and a turn may carry the fields of the message it came from
(``data=``, JSON): both percent-encoded. Files written before ``len`` existed are read by their
markers, as they were written.

Any session id is accepted: one of letters, digits, ``.``, ``_`` and ``-`` (up to 128, starting
with a letter or digit) is its own file name; any other is percent-encoded (a long one cut and
completed by its SHA-256), and the file's first line keeps the id.

Appends are flushed to disk before they return, one write per call, under a lock of the folder
(processes and threads), so a crash keeps every acknowledged turn and concurrent writers never
interleave.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
from collections.abc import Iterator, Sequence, Set
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from ..errors import StorageError, ValidationError
from .file_archive import fit_segment, tenant_folder

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # a file name as it is
MAX_SESSION_ID = 512
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MARKER = re.compile(r"^<!-- varvemem turn at=(\S+) role=([A-Za-z0-9_-]+)((?: [a-z]+=\S+)*) -->$",
                     re.M)
_SUMMARY = re.compile(r"^<!-- varvemem summary(?: len=(\d+))? -->$", re.M)
_ROLE = re.compile(r"[A-Za-z0-9_-]{1,32}")


@dataclass(frozen=True)
class Turn:
    """One turn of a session: when, who, its full text, and its summary if it has one (what
    :meth:`~varvemem.history.SessionHistory.compress_history` puts in place of the text); the
    user it was saved for, the fields of the message it came from (JSON), and the memories
    its text quotes (an answer made from them: erasing one takes the turn out)."""

    at: datetime
    role: str
    content: str
    summary: str | None = None
    user: str | None = None
    data: dict[str, Any] | None = None
    sources: tuple[str, ...] = ()


def check_session_id(session: str) -> str:
    """Any text of 1-512 characters without control characters is a session id."""
    if not isinstance(session, str) or not session.strip() or len(session) > MAX_SESSION_ID \
            or _CONTROL.search(session):
        raise ValidationError(f"session id {session!r} must be 1-{MAX_SESSION_ID} characters "
                              "of text without control characters")
    return session


def file_name(session: str) -> str:
    """The session's file name without ``.md``; distinct ids never share one."""
    if SESSION_ID.fullmatch(session):
        return session
    # quote() leaves letters, digits and "_.-~" as they are; "~" and a leading "." are encoded
    # too, so no name is hidden and none is another id's plain name.
    name = quote(session, safe="").replace("~", "%7E")
    if name.startswith("."):
        name = "%2E" + name[1:]
    return fit_segment(name, session)


class SessionLog:
    """The folder of session files: ``<root>/<name>.md`` for the default tenant and
    ``<root>/tenants/<tenant>/<name>.md`` for the others."""

    def __init__(self, root: Path, default_tenant: str = "default") -> None:
        self.root = root
        self.default_tenant = default_tenant

    def path(self, tenant: str, session: str) -> Path:
        check_session_id(session)
        return self._folder(tenant) / f"{file_name(session)}.md"

    def _folder(self, tenant: str) -> Path:
        if tenant == self.default_tenant:
            return self.root
        return self.root / "tenants" / tenant_folder(tenant)

    @contextmanager
    def _locked(self, tenant: str) -> Iterator[None]:
        """The folder's lock (``.lock`` in it): one writer at a time, across processes."""
        folder = self._folder(tenant)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def append(self, tenant: str, session: str, turns: Sequence[Turn]) -> Path:
        path = self.path(tenant, session)
        parts = "".join(_render(t) for t in turns)
        try:
            with self._locked(tenant), open(path, "a", encoding="utf-8", newline="") as f:
                f.write((_header(session) if f.tell() == 0 else "") + parts)
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
        return _parse(self.path(tenant, session))

    def sessions(self, tenant: str) -> list[str]:
        """The ids of the tenant's session files, sorted."""
        folder = self._folder(tenant)
        if not folder.is_dir():
            return []
        out = []
        for p in folder.glob("*.md"):
            if not p.is_file():
                continue
            if "%%" in p.stem:  # a long id, cut: the file's first line has it whole
                with open(p, encoding="utf-8", errors="replace") as f:
                    head = f.readline()
                out.append(unquote(head.removeprefix("# Session ").rstrip("\n")))
            else:
                out.append(unquote(p.stem))
        return sorted(out)

    def erase_user(self, tenant: str, user: str, quoted: Set[str] = frozenset()
                   ) -> tuple[int, int]:
        """Take ``user``'s turns, and the turns quoting a memory of ``quoted``, out of every
        session file of the tenant (rewritten whole, by an atomic replace); a file left with
        no turn is deleted. Returns (files deleted, turns removed)."""
        files = turns = 0

        def erased(t: Turn) -> bool:
            return t.user == user or not quoted.isdisjoint(t.sources)

        with self._locked(tenant):
            for session in self.sessions(tenant):
                kept = self.load(tenant, session)
                gone = sum(map(erased, kept))
                if not gone:
                    continue
                kept = [t for t in kept if not erased(t)]
                turns += gone
                if kept:
                    self._rewrite(tenant, session, kept)
                else:
                    files += self.delete(tenant, session)
        return files, turns

    def _rewrite(self, tenant: str, session: str, turns: Sequence[Turn]) -> None:
        path = self.path(tenant, session)
        text = _header(session) + "".join(_render(t) for t in turns)
        try:
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", newline="", dir=path.parent,
                                             prefix=".", suffix=".tmp", delete=False) as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(f.name, path)
        except OSError as exc:
            raise StorageError(f"cannot rewrite session file {path}: {exc.strerror}") from None


def _header(session: str) -> str:
    # The id as the file's title; percent-encoded where it is not plain (a title is one line).
    return f"# Session {session if SESSION_ID.fullmatch(session) else quote(session, safe=' ')}\n"


def _render(t: Turn) -> str:
    """One turn as the file keeps it: its marker line, its text, its summary if any."""
    if not _ROLE.fullmatch(t.role):
        raise ValidationError(f"role {t.role!r} must be a word (user, assistant...)")
    attrs = f"at={t.at.isoformat()} role={t.role}"
    if t.user is not None:
        attrs += f" user={quote(t.user, safe='')}"
    if t.sources:
        attrs += " src=" + ",".join(quote(s, safe="") for s in t.sources)
    attrs += f" len={len(t.content)}"
    if t.data:
        attrs += " data=" + quote(json.dumps(t.data, ensure_ascii=False, separators=(",", ":"),
                                             sort_keys=True), safe="")
    out = f"\n<!-- varvemem turn {attrs} -->\n{t.content}\n"
    if t.summary is not None:
        out += f"<!-- varvemem summary len={len(t.summary)} -->\n{t.summary}\n"
    return out


def _parse(path: Path) -> list[Turn]:
    """The turns of a session file, oldest first ([] when there is none)."""
    try:
        # newline="": "\r\n" and "\r" in a turn's text stay as written (len counts them).
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"cannot read session file {path}: {exc}") from None
    turns: list[Turn] = []
    pos = 0
    while m := _MARKER.search(text, pos):
        try:
            at = datetime.fromisoformat(m.group(1))
        except ValueError:
            raise StorageError(f"{path}: turn {len(turns) + 1} has a bad time "
                               f"{m.group(1)!r}") from None
        attrs = dict(a.split("=", 1) for a in m.group(3).split())
        start = m.end() + 1
        summary = None
        if "len" in attrs:  # exact: the text is the next len characters
            end = start + int(attrs["len"])
            body, pos = text[start:end], end + 1
            s = _SUMMARY.match(text, pos)
            if s is not None and s.group(1) is not None:
                send = s.end() + 1 + int(s.group(1))
                summary, pos = text[s.end() + 1: send], send + 1
        else:  # written before len: up to the next marker, blank lines at the ends dropped
            nxt = _MARKER.search(text, m.end())
            end = nxt.start() if nxt else len(text)
            body, pos = text[m.end():end], end
            cut = _SUMMARY.search(body)
            if cut is not None:
                body, summary = body[: cut.start()], body[cut.end():].strip("\n")
            body = body.strip("\n")
        data = json.loads(unquote(attrs["data"])) if "data" in attrs else None
        user = unquote(attrs["user"]) if "user" in attrs else None
        sources = tuple(unquote(s) for s in attrs["src"].split(",")) if "src" in attrs else ()
        turns.append(Turn(at, m.group(2), body, summary, user, data, sources))
    return turns
