"""UI sessions: an API key logs in once, a random cookie token stands for it afterwards.

Sessions and one-time login tokens live in the process's memory (a restart logs everyone
out). The key itself is kept server-side and checked again on every request, so a revoked or
expired key ends its sessions at once.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import anyio.to_thread
from fastapi import FastAPI, Request

from ..errors import AuthError
from ..keys import ApiKey, allows

if TYPE_CHECKING:
    from ..server.app import Service

COOKIE = "varvemem_ui"
LOGIN_COOKIE = "varvemem_ui_login"  # the login form's CSRF token (no session yet)
COOKIE_PATH = "/ui"


class LoginRequired(Exception):
    """No (live) UI session: the page redirects to the login form."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


class Refused(Exception):
    """A request the UI answers with an error page (``status``) and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class UiSession:
    """What a session cookie stands for."""

    api_key: str  # kept server-side only, re-checked on each request
    key_id: str
    tenant: str
    role: str
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    seen: float = field(default_factory=time.monotonic)


@dataclass
class Caller:
    """The session and the key (checked just now) behind a request."""

    token: str
    session: UiSession
    key: ApiKey

    @property
    def tenant(self) -> str:
        return self.key.tenant

    @property
    def role(self) -> str:
        return self.key.role

    def can(self, role: str) -> bool:
        return allows(self.key.role, role)


class UiState:
    """The sessions and login tokens of one app (thread-safe: the CLI issues tokens from its
    own thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, UiSession] = {}
        self._tokens: dict[str, tuple[str, float]] = {}  # token -> (api key, issued)

    def issue(self, api_key: str) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            now = time.monotonic()
            self._tokens = {t: v for t, v in self._tokens.items() if now - v[1] < 3600}
            self._tokens[token] = (api_key, now)
        return token

    def redeem(self, token: str, minutes: float) -> str | None:
        """The API key a login token stands for, once and within ``minutes`` of its issue
        (``None``: unknown, used or expired)."""
        with self._lock:
            entry = self._tokens.pop(token, None)
        if entry is None or time.monotonic() - entry[1] > minutes * 60:
            return None
        return entry[0]

    def open(self, api_key: str, key: ApiKey) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[token] = UiSession(api_key, key.key_id, key.tenant, key.role)
        return token

    def find(self, token: str, idle_minutes: float) -> UiSession | None:
        """The session, if it was used within ``idle_minutes`` (its clock restarts)."""
        now = time.monotonic()
        with self._lock:
            for t in [t for t, s in self._sessions.items() if now - s.seen > idle_minutes * 60]:
                del self._sessions[t]
            session = self._sessions.get(token)
            if session is not None:
                session.seen = now
            return session

    def close(self, token: str) -> None:
        with self._lock:
            self._sessions.pop(token, None)


_by_service: weakref.WeakKeyDictionary[Service, UiState] = weakref.WeakKeyDictionary()


def state_of(app: FastAPI) -> UiState:
    state: UiState = app.state.ui
    return state


def request_state(request: Request) -> UiState:
    """The app's UI state; tokens issued through the service before the first request join
    it."""
    state = state_of(request.app)
    service = getattr(request.app.state, "service", None)
    if service is not None:
        early = _by_service.get(service)
        if early is not state:
            if early is not None:
                with early._lock:
                    tokens = dict(early._tokens)
                with state._lock:
                    state._tokens.update(tokens)
            _by_service[service] = state
    return state


def issue_login_token(app_or_service: FastAPI | Service, api_key: str) -> str:
    """A one-time login token for ``api_key`` (``/ui/login?token=...``); it works once, within
    ``ui.login_token_minutes``. The key is checked when the token is used."""
    if isinstance(app_or_service, FastAPI):
        state = state_of(app_or_service)
    else:
        state = _by_service.setdefault(app_or_service, UiState())
    return state.issue(api_key)


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def check_key(request: Request, api_key: str) -> ApiKey:
    """The key, valid now (any role); :class:`AuthError` otherwise."""
    service = service_of(request)
    return await anyio.to_thread.run_sync(service.memory.keys.authenticate, api_key, "read",
                                          limiter=service.receiving)


async def caller_of(request: Request) -> Caller:
    """The logged-in caller, with the key re-checked; :class:`LoginRequired` otherwise."""
    token = request.cookies.get(COOKIE, "")
    service = service_of(request)
    state = request_state(request)
    session = state.find(token, service.settings.ui.session_minutes) if token else None
    if session is None:
        raise LoginRequired("your session ended; log in again" if token else "")
    try:
        key = await check_key(request, session.api_key)
    except AuthError as exc:
        state.close(token)
        raise LoginRequired(f"logged out: {exc}") from None
    request.state.tenant = key.tenant
    return Caller(token, session, key)


def same_origin(request: Request) -> bool:
    """The request's ``Origin`` (else ``Referer``) names this host; one of them must be sent."""
    host = request.headers.get("host", "")
    source = request.headers.get("origin") or request.headers.get("referer") or ""
    if not source or source == "null":
        return False
    return bool(host) and urlsplit(source).netloc.lower() == host.lower()


async def posted(request: Request, role: str) -> tuple[Caller, dict[str, str]]:
    """A POST's caller and form, after the checks every UI POST passes: same origin, the
    session's CSRF token, a key whose role allows ``role``."""
    if not same_origin(request):
        raise Refused(403, "refused: the request does not come from this site "
                           "(Origin/Referer do not match the host)")
    caller = await caller_of(request)
    form = {k: v for k, v in (await request.form()).multi_items() if isinstance(v, str)}
    if not hmac.compare_digest(form.get("csrf", ""), caller.session.csrf):
        raise Refused(403, "refused: the form's CSRF token is missing or wrong "
                           "(reload the page and try again)")
    if not caller.can(role):
        raise Refused(403, f"refused: this API key's role {caller.role!r} may not do this "
                           f"(needs {role!r})")
    return caller, form


def require(caller: Caller, role: str) -> None:
    """A page only ``role`` may see."""
    if not caller.can(role):
        raise Refused(403, f"refused: this API key's role {caller.role!r} may not see this "
                           f"page (needs {role!r})")

