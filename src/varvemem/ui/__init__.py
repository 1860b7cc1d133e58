"""The web inspector at ``/ui``: server-rendered pages over the same library calls as the REST
API (``docs/ui.md``). :func:`mount_ui` adds it to the service's app."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from .auth import issue_login_token
from .render import HERE

UI_PREFIX = "/ui"
"""Where the pages live; the service's body gate admits HTML forms under it."""


def mount_ui(app: FastAPI) -> None:
    """Add the inspector to the service's ``app``: its pages under ``/ui`` (not in the
    OpenAPI schema) and its stylesheet under ``/ui/static``."""
    from .pages import router

    app.include_router(router)
    app.mount(f"{UI_PREFIX}/static", StaticFiles(directory=HERE / "static"), name="ui-static")


__all__ = ["UI_PREFIX", "issue_login_token", "mount_ui"]
