"""``varvemem ui``: the service with its web inspector on loopback, and a one-time login link."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import AuthError, ConfigError
from ._app import app, err_console, home_settings

if TYPE_CHECKING:
    from ..api import Memory

KEY_FILE = "ui-admin.key"  # in the home, mode 0600: the admin key `varvemem ui` logs in with
KEY_NAME = "varvemem ui"


def admin_key(mem: Memory, home: Path) -> str:
    """The default tenant's admin key for the inspector: the one kept in the home when it is
    still valid, else a new one (kept there for the next run)."""
    path = home / KEY_FILE
    tenant = mem.settings.default_tenant
    if path.is_file():
        secret = path.read_text("utf-8").strip()
        try:
            key = mem.keys.authenticate(secret, "admin")
            if key.tenant == tenant:
                return secret
        except AuthError:
            pass
    _, secret = mem.keys.create(tenant, "admin", KEY_NAME)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secret + "\n")
    return secret


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@app.command()
def ui(
    ctx: typer.Context,
    port: int | None = typer.Option(None, "--port", min=0, max=65535,
                                    help="Port (default server.port; 0: any free one)."),
) -> None:
    """Serve the web inspector (/ui, and the REST API) on 127.0.0.1 and print a one-time
    login link for the default tenant's admin."""
    try:
        import uvicorn

        from ..server.app import configure_logging, create_app
    except ImportError as exc:
        raise ConfigError(f"ui needs the server extra: pip install 'varvemem[server]' "
                          f"({exc})") from None
    from ..api import Memory
    from .service import check_free

    settings = home_settings(ctx)
    mem = Memory(settings=settings)  # the app owns it: closed when the server stops
    port = settings.server.port if port is None else port
    port = port or _free_port()
    check_free("127.0.0.1", port)
    secret = admin_key(mem, settings.home)
    configure_logging(settings)
    server_app = create_app(memory=mem)
    token = mem.keys.issue_link(secret)  # kept in the store: any process can take it
    err_console.print(f"varvemem inspector for {settings.home} (tenant "
                      f"{settings.default_tenant!r}); open this link once, within "
                      f"{settings.ui.login_token_minutes:g} minutes:")
    print(f"http://127.0.0.1:{port}/ui/login?token={token}", flush=True)
    uvicorn.run(server_app, host="127.0.0.1", port=port, log_config=None, access_log=False,
                timeout_graceful_shutdown=int(settings.server.shutdown_seconds))
