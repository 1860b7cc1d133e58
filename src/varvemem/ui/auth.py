"""UI sessions: an API key logs in once, a random cookie token stands for it afterwards.

Sessions and one-time login tokens are logins of the key ring (:mod:`varvemem.keys`): kept in
the store of record, so every server process (``server.workers``) and a restart know them, and
a logout or an idle timeout ends a session in all of them. The key behind a session is checked
again on every request, so a revoked or expired key ends its sessions at once.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar
from urllib.parse import urlsplit

import anyio.to_thread
from fastapi import FastAPI, Request

from ..api import Memory
from ..errors import AuthError, ConfigError
from ..keys import ApiKey, KeyRing, KeySession, allows
from ..settings import Settings

T = TypeVar("T")


class Service(Protocol):
    """What the inspector asks of the service it is mounted in
    (:class:`varvemem.server.service.Service`; the server imports the inspector: not the other way)."""

    memory: Memory
    settings: Settings
    receiving: anyio.CapacityLimiter

    async def run(self, fn: Callable[[Memory], T]) -> T:
        """``fn(memory)`` on the memory's worker thread."""
        ...

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
class Caller:
    """The session and the key (checked just now) behind a request."""

    token: str
    session: KeySession

    @property
    def key(self) -> ApiKey:
        return self.session.key

    @property
    def tenant(self) -> str:
        return self.key.tenant

    @property
    def role(self) -> str:
        return self.key.role

    def can(self, role: str) -> bool:
        return allows(self.key.role, role)


def issue_login_token(target: FastAPI | Service | Memory, api_key: str) -> str:
    """A one-time login token for ``api_key`` (``/ui/login?token=...``), for the memory of a
    running app, a service or a :class:`Memory`; it works once, in any server process sharing
    the store, within ``ui.login_token_minutes``. The key is checked now and when the token
    is used (:class:`AuthError`)."""
    if isinstance(target, FastAPI):
        service = getattr(target.state, "service", None)
        if service is None:
            raise ConfigError("the app has not started: issue the login token through its "
                              "Memory")
        memory: Memory = service.memory
    else:
        memory = target if isinstance(target, Memory) else target.memory
    return memory.keys.issue_link(api_key)


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def keys(request: Request, call: Callable[[KeyRing], T]) -> T:
    """``call`` on the key ring off the event loop (the store blocks), on the receiving
    threads: never behind a search."""
    service = service_of(request)
    return await anyio.to_thread.run_sync(call, service.memory.keys, limiter=service.receiving)


async def check_key(request: Request, api_key: str) -> ApiKey:
    """The key, valid now (any role); :class:`AuthError` otherwise."""
    return await keys(request, lambda ring: ring.authenticate(api_key, "read"))


async def caller_of(request: Request) -> Caller:
    """The logged-in caller, with the key re-checked; :class:`LoginRequired` otherwise."""
    token = request.cookies.get(COOKIE, "")
    minutes = service_of(request).settings.ui.session_minutes
    try:
        session = await keys(request, lambda ring: ring.session(token, minutes)) \
            if token else None
    except AuthError as exc:
        raise LoginRequired(f"logged out: {exc}") from None
    if session is None:
        raise LoginRequired("your session ended; log in again" if token else "")
    request.state.tenant = session.key.tenant
    return Caller(token, session)


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

