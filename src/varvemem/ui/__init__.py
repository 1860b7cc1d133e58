"""The web inspector at ``/ui``: server-rendered pages over the same library calls as the REST
API (``docs/ui.md``). :func:`mount_ui` adds it to the service's app."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.middleware import Middleware
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from ..server.app import BodyLimit, _error
from .auth import UiState, issue_login_token
from .render import HERE

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class FormBodyLimit(BodyLimit):
    """The service's body gate, which lets the inspector's forms through: a POST under
    ``/ui/`` may be a form (its size still limited by ``Content-Length``); any other request
    is gated as before (JSON only)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and \
                str(scope.get("path", "")).startswith("/ui/"):
            headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                       for k, v in scope["headers"]}
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            length = headers.get("content-length", "")
            if ctype in FORM_TYPES or length in ("", "0"):
                if not length.isdigit():
                    if "transfer-encoding" in headers:
                        await _error(411, "length_required", "send a Content-Length")(
                            scope, receive, send)
                        return
                elif int(length) > self.limit:
                    await _error(413, "payload_too_large",
                                 f"the body is over {self.limit} bytes")(scope, receive, send)
                    return
                await self.app(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def mount_ui(app: FastAPI) -> None:
    """Add the inspector to the service's ``app``: its pages under ``/ui`` (not in the
    OpenAPI schema), its stylesheet under ``/ui/static``, and a body gate that admits its
    forms."""
    from .pages import router

    app.state.ui = UiState()
    app.include_router(router)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")
    gates: list[Any] = app.user_middleware  # the gate is BodyLimit(app, limit=...)
    gates[:] = [Middleware(FormBodyLimit, **m.kwargs) if m.cls is BodyLimit else m
                for m in gates]


__all__ = ["issue_login_token", "mount_ui"]
