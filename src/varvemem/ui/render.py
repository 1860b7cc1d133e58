"""Templates (Jinja2, autoescaped), Markdown without raw HTML, and the route class that turns
the library's errors into HTML pages."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from ..errors import AuthError, ConflictError, NotFoundError, ValidationError, VarvememError
from .auth import COOKIE, LOGIN_COOKIE, Caller, LoginRequired, Refused
from .charts import score_bar

HERE = Path(__file__).resolve().parent
# Nothing but this site's own files; inline SVG is markup, not a resource, so it is allowed.
CSP = ("default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
_markdown = MarkdownIt("commonmark", {"html": False})


def _when(value: datetime | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return value.strftime("%Y-%m-%d %H:%M:%S")


def _minutes(value: float) -> str:
    """``90`` -> ``1.5 h``; ``1440`` -> ``1 d``."""
    if value >= 1440:
        return f"{value / 1440:g} d"
    if value >= 60:
        return f"{value / 60:g} h"
    return f"{value:g} min"


def _plain(value: Any) -> Any:
    """An enum as its value (``Verdict.superseded`` -> ``superseded``)."""
    return value.value if isinstance(value, Enum) else value


def _markdown_html(text: str) -> Markup:
    return Markup(_markdown.render(text or ""))  # raw HTML is off: the text is escaped


def _quote(value: str) -> str:
    return quote(value, safe="")


env = Environment(loader=FileSystemLoader(HERE / "templates"),
                  autoescape=select_autoescape(["html"], default=True),
                  trim_blocks=True, lstrip_blocks=True)
env.filters.update(when=_when, markdown=_markdown_html, q=_quote, minutes=_minutes, plain=_plain)
env.globals.update(score_bar=score_bar)


def page(request: Request, template: str, caller: Caller | None, status: int = 200,
         **context: Any) -> HTMLResponse:
    """``template`` rendered with the caller (for the menu, the role and the CSRF token)."""
    html = env.get_template(template).render(request=request, caller=caller, **context)
    response = HTMLResponse(html, status_code=status)
    secured(response)
    return response


def secured(response: Response) -> Response:
    """Headers every UI answer carries: its own content only, never framed, never cached."""
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def error_page(request: Request, status: int, message: str,
               caller: Caller | None = None) -> HTMLResponse:
    titles = {403: "Refused", 404: "Not found", 409: "Conflict", 422: "Invalid input"}
    return page(request, "error.html", caller, status=status,
                title=titles.get(status, "Error"), message=message, code=status)


def status_of(exc: VarvememError) -> int:
    if isinstance(exc, AuthError):
        return 403 if exc.forbidden else 401
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ConflictError):
        return 409
    if isinstance(exc, ValidationError):
        return 422
    return 503


class UiRoute(APIRoute):
    """A UI route: no session is a redirect to the login form, a refusal or a library error
    is an HTML page with its one line (the JSON handlers of the API never see them)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except LoginRequired as exc:
                target = "/ui/login"
                if request.method == "GET" and request.url.path != "/ui/login":
                    target += "?next=" + quote(request.url.path +
                                               (f"?{request.url.query}" if request.url.query
                                                else ""), safe="")
                if exc.message:
                    target += ("&" if "?" in target else "?") + "why=" + quote(exc.message)
                response = RedirectResponse(target, status_code=303)
                response.delete_cookie(COOKIE, path="/ui")
                return secured(response)
            except Refused as exc:
                return error_page(request, exc.status, exc.message,
                                  getattr(request.state, "ui_caller", None))
            except VarvememError as exc:
                return error_page(request, status_of(exc), str(exc).splitlines()[0] if str(exc)
                                  else type(exc).__name__,
                                  getattr(request.state, "ui_caller", None))

        return run


def set_cookie(response: Response, name: str, value: str, secure: bool,
               max_age: int | None = None) -> None:
    response.set_cookie(name, value, path="/ui", httponly=True, samesite="strict",
                        secure=secure, max_age=max_age)


__all__ = ["COOKIE", "LOGIN_COOKIE", "UiRoute", "error_page", "page", "secured", "set_cookie"]
