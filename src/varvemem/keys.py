"""API keys for the service: each bound to one tenant and a role, only a hash stored.

A key reads ``msk_<id>_<secret>``: the id finds the stored row, the secret is compared by its
SHA-256 (a key is 256 random bits, so a slow password hash would add nothing but latency).

A login is a random token that stands for a key once the key was checked: the inspector's
session cookie, or a one-time login link. Logins live in the store of record beside the keys
(only the token's hash), so every server process and every restart knows them, and ending one
ends it everywhere; the key behind a login is checked again at each use, so a revoked or
expired key ends its logins at once.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from .errors import AuthError, NotFoundError, ValidationError
from .stores.base import ApiKey, KeyStore, Login

__all__ = ["ROLES", "ApiKey", "KeyRing", "KeySession", "allows"]

ROLES = ("read", "write", "admin")
_RANK = {r: i for i, r in enumerate(ROLES)}
_KEY = re.compile(r"^msk_([0-9a-f]{16})_([A-Za-z0-9_-]{20,100})$")


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class KeySession:
    """A live login session: the key behind it (valid when it was looked up) and the
    session's CSRF token."""

    key: ApiKey
    csrf: str


def allows(role: str, needed: str) -> bool:
    """Whether ``role`` may do what ``needed`` may (admin > write > read)."""
    return _RANK.get(role, -1) >= _RANK[needed]


class KeyRing:
    """Create, list, revoke and check API keys in the store of record."""

    def __init__(self, records: KeyStore, clock: Callable[[], datetime]) -> None:
        self._records = records
        self._clock = clock

    def create(self, tenant: str, role: str, name: str = "",
               expires_days: float | None = None) -> tuple[ApiKey, str]:
        """A new key; returns its stored form and the key itself (shown this once only)."""
        if not isinstance(tenant, str) or not tenant.strip() or len(tenant) > 200:
            raise ValidationError("tenant must be non-empty text (200 characters at most)")
        if role not in ROLES:
            raise ValidationError(f"role must be one of {', '.join(ROLES)} (got {role!r})")
        if expires_days is not None and expires_days <= 0:
            raise ValidationError("expires_days must be positive")
        now = self._clock()
        key_id, secret = secrets.token_hex(8), secrets.token_urlsafe(32)
        key = ApiKey(key_id=key_id, tenant=tenant, role=role, name=name[:200],
                     secret_hash=_digest(secret), created_at=now,
                     expires_at=now + timedelta(days=expires_days) if expires_days else None)
        self._records.put_key(key)
        return key, f"msk_{key_id}_{secret}"

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        return self._records.keys(tenant)

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key by its id (the ``msk_<id>`` part); :class:`NotFoundError` if unknown."""
        if not self._records.revoke_key(key_id, self._clock()):
            known = self._records.get_key(key_id)
            if known is None:
                raise NotFoundError(f"no API key {key_id}")
            return known  # revoked already
        key = self._records.get_key(key_id)
        assert key is not None
        return key

    def authenticate(self, token: str | None, needed: str = "read") -> ApiKey:
        """The key ``token`` names, if valid now and allowed ``needed``; else :class:`AuthError`
        (one message for an unknown id and a wrong secret, so neither can be probed)."""
        match = _KEY.match(token or "")
        if match is None:
            raise AuthError("missing or malformed API key")
        key = self._records.get_key(match.group(1))
        if key is None or not hmac.compare_digest(key.secret_hash, _digest(match.group(2))):
            raise AuthError("unknown API key")
        self._usable(key)
        if not allows(key.role, needed):
            raise AuthError(f"API key role {key.role!r} may not do this (needs {needed!r})",
                            forbidden=True)
        return key

    def _usable(self, key: ApiKey) -> None:
        if key.revoked_at is not None:
            raise AuthError("API key revoked")
        if key.expires_at is not None and key.expires_at <= self._clock():
            raise AuthError("API key expired")

    def _key_of(self, login: Login) -> ApiKey:
        """The key behind a login, valid now; :class:`AuthError` (the login dropped) if not."""
        key = self._records.get_key(login.key_id)
        try:
            if key is None:
                raise AuthError("unknown API key")
            self._usable(key)
        except AuthError:
            self._records.drop_login(login.token_hash)
            raise
        return key

    # -- logins ------------------------------------------------------------------------------
    def issue_link(self, api_key: str) -> str:
        """A one-time login token for ``api_key`` (checked now, and again when it is used):
        :meth:`redeem_link` takes it once, in any process sharing the store."""
        key = self.authenticate(api_key)
        token, now = secrets.token_urlsafe(32), self._clock()
        self._records.put_login(Login(_digest(token), "link", key.key_id, "", now, now))
        return token

    def redeem_link(self, token: str, minutes: float) -> ApiKey | None:
        """The key a login link stands for, once and within ``minutes`` of its issue (None:
        unknown, used or expired); :class:`AuthError` when the key is no longer valid."""
        # The links older than ``minutes`` go first: a link still found is in time.
        self._records.prune_logins("link", self._clock() - timedelta(minutes=minutes))
        login = self._records.get_login(_digest(token))
        if login is None or login.kind != "link" or not self._records.drop_login(login.token_hash):
            return None
        return self._key_of(login)

    def open_session(self, key: ApiKey, idle_minutes: float) -> tuple[str, KeySession]:
        """A new session for ``key`` (checked by the caller): its token (for a cookie; only
        its hash is stored) and the session. Sessions idle for ``idle_minutes`` are dropped."""
        token, now = secrets.token_urlsafe(32), self._clock()
        self._records.prune_logins("session", now - timedelta(minutes=idle_minutes))
        session = KeySession(key, secrets.token_urlsafe(32))
        self._records.put_login(Login(_digest(token), "session", key.key_id, session.csrf,
                                      now, now))
        return token, session

    def session(self, token: str, idle_minutes: float) -> KeySession | None:
        """The session ``token`` stands for, if it was used within ``idle_minutes`` (its use
        is noted); None when it is unknown, ended or idle. :class:`AuthError` (the session
        ended) when its key is no longer valid."""
        login = self._records.get_login(_digest(token))
        if login is None or login.kind != "session":
            return None
        now, idle = self._clock(), timedelta(minutes=idle_minutes)
        if now - login.seen_at > idle:
            self._records.drop_login(login.token_hash)
            return None
        key = self._key_of(login)
        # Noted to a tenth of the idle time: a page view does not wait for a write each time.
        if now - login.seen_at > idle / 10:
            self._records.see_login(login.token_hash, now)
        return KeySession(key, login.csrf)

    def close_session(self, token: str) -> None:
        """End a session, in every process (a logout)."""
        self._records.drop_login(_digest(token))
