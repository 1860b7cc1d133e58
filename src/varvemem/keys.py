"""API keys for the service: each bound to one tenant and a role, only a hash stored.

A key reads ``msk_<id>_<secret>``: the id finds the stored row, the secret is compared by its
SHA-256 (a key is 256 random bits, so a slow password hash would add nothing but latency).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta

from .errors import AuthError, NotFoundError, ValidationError
from .stores.base import ApiKey, KeyStore

__all__ = ["ROLES", "ApiKey", "KeyRing", "allows"]

ROLES = ("read", "write", "admin")
_RANK = {r: i for i, r in enumerate(ROLES)}
_KEY = re.compile(r"^msk_([0-9a-f]{16})_([A-Za-z0-9_-]{20,100})$")


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


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
        if key.revoked_at is not None:
            raise AuthError("API key revoked")
        if key.expires_at is not None and key.expires_at <= self._clock():
            raise AuthError("API key expired")
        if not allows(key.role, needed):
            raise AuthError(f"API key role {key.role!r} may not do this (needs {needed!r})",
                            forbidden=True)
        return key
