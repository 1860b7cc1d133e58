"""Commands of the service: serve (REST API, webhooks, /metrics) and the API keys."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile

import typer
from rich.text import Text

from ..errors import ConfigError
from ._app import Group, app, console, err_console, home_settings, memory_of, print_json
from .render import Indented

keys_app = typer.Typer(cls=Group, no_args_is_help=True,
                       help="API keys of the service (one tenant and role each).")
app.add_typer(keys_app, name="keys")
inbox_app = typer.Typer(cls=Group, no_args_is_help=True,
                        help="The webhook inbox: list events, retry failed ones.")
app.add_typer(inbox_app, name="inbox")


@app.command()
def serve(
    ctx: typer.Context,
    host: str | None = typer.Option(None, "--host", help="Address (default server.host)."),
    port: int | None = typer.Option(None, "--port", min=0, max=65535,
                                    help="Port (default server.port)."),
    workers: int | None = typer.Option(None, "--workers", min=1, max=64,
                                       help="Server processes (default server.workers)."),
    log_level: str | None = typer.Option(
        None, "--log-level", help="debug, info, warning, error or critical "
                                  "(default server.log_level)."),
) -> None:
    """Serve the REST API (/v1, OpenAPI at /openapi.json), the webhooks and /metrics.

    SIGTERM stops taking requests, finishes those in flight and the inbox event in hand.
    """
    try:
        import uvicorn

        from ..server.app import configure_logging, create_app
    except ImportError as exc:
        raise ConfigError(f"serve needs the server extra: pip install 'varvemem[server]' "
                          f"({exc})") from None
    settings = home_settings(ctx)
    if log_level is not None:
        from pydantic import ValidationError as PydanticValidationError

        from ..settings import ServerSettings

        try:
            settings = settings.model_copy(update={"server": ServerSettings.model_validate(
                {**settings.server.model_dump(), "log_level": log_level.lower()})})
        except PydanticValidationError:
            raise ConfigError(f"--log-level {log_level!r}: use debug, info, warning, error "
                              "or critical") from None
    cfg = settings.server
    host, port, workers = host or cfg.host, cfg.port if port is None else port, \
        workers or cfg.workers
    check_free(host, port)
    configure_logging(settings)
    options = {"host": host, "port": port, "log_config": None, "access_log": False,
               "limit_concurrency": cfg.max_concurrency,
               "timeout_graceful_shutdown": int(cfg.shutdown_seconds)}
    if workers == 1:
        uvicorn.run(create_app(settings), **options)  # type: ignore[arg-type]
        return
    # Each process opens the home itself: hand it the settings' sources.
    root = ctx.find_root().obj or {}
    os.environ["VARVEMEM_HOME"] = str(settings.home)
    os.environ["VARVEMEM_SERVER__LOG_LEVEL"] = cfg.log_level
    if root.get("config"):
        os.environ["VARVEMEM_CONFIG"] = str(root["config"])
    # /metrics of any process reports them all: prometheus_client's multiprocess mode, in a
    # folder of this run's (unless the deployment chose one).
    own_dir = None
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        own_dir = tempfile.mkdtemp(prefix="varvemem-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = own_dir
    try:
        uvicorn.run("varvemem.server.app:app_from_environment", factory=True, workers=workers,
                    **options)  # type: ignore[arg-type]
    finally:
        if own_dir:
            shutil.rmtree(own_dir, ignore_errors=True)


def check_free(host: str, port: int) -> None:
    """A port another process holds is one line and exit 1, before anything starts (uvicorn
    would log it and exit 3)."""
    if port == 0:
        return
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.create_server((host, port), family=family):
            pass
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise ConfigError(f"cannot listen on {host}:{port}: {reason}") from None


@keys_app.command("create")
def keys_create(
    ctx: typer.Context,
    tenant: str = typer.Option(..., "--tenant", help="The tenant the key acts for."),
    role: str = typer.Option("write", "--role", help="read, write or admin."),
    name: str = typer.Option("", "--name", help="A label (who or what uses it)."),
    expires_days: float | None = typer.Option(None, "--expires-days", min=0.001),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Create a key and print it once: only its hash is stored."""
    key, secret = memory_of(ctx).keys.create(tenant, role, name, expires_days)
    if json_out:
        print_json({"key": secret, "key_id": key.key_id, "tenant": key.tenant, "role": key.role,
                    "expires_at": key.expires_at})
        return
    # The secret alone on stdout, so KEY=$(varvemem keys create ...) captures it.
    err_console.print(f"key {key.key_id} for tenant {key.tenant!r} ({key.role}); "
                      "shown this once, keep it safe:")
    print(secret)


@keys_app.command("list")
def keys_list(
    ctx: typer.Context,
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """The keys (never their secrets)."""
    keys = memory_of(ctx).keys.list(tenant)
    rows = [{"key_id": k.key_id, "tenant": k.tenant, "role": k.role, "name": k.name,
             "created_at": k.created_at, "expires_at": k.expires_at, "revoked_at": k.revoked_at}
            for k in keys]
    if json_out:
        print_json(rows)
        return
    if not keys:
        console.print("no keys")
    # Not a table: one would cut a column (an id) to fit a narrow terminal.
    for k in keys:
        state = "revoked" if k.revoked_at else (f"expires {k.expires_at:%Y-%m-%d}"
                                                if k.expires_at else "active")
        console.print(Indented(Text(f"{k.role}  {state}  created {k.created_at:%Y-%m-%d %H:%M}"
                                    f"  tenant {k.tenant}" + (f"  {k.name}" if k.name else "")),
                               len(k.key_id) + 2, first=Text(k.key_id, style="bold")))


@keys_app.command("revoke")
def keys_revoke(ctx: typer.Context, key_id: str = typer.Argument(..., help="The key's id.")) -> None:
    """Revoke a key: it is refused from then on."""
    key = memory_of(ctx).keys.revoke(key_id)
    print(f"revoked {key.key_id} (tenant {key.tenant})")


@inbox_app.command("list")
def inbox_list(
    ctx: typer.Context,
    tenant: str | None = typer.Option(None, "--tenant"),
    status: str | None = typer.Option(None, "--status",
                                      help="pending, processing, done or failed."),
    limit: int = typer.Option(50, "--limit", min=1, max=10_000),
    after: int = typer.Option(0, "--after", min=0, help="Events after this id (the next page)."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """The tenant's webhook events by id, with their status and error."""
    events = memory_of(ctx).inbox.events(tenant=tenant, status=status, limit=limit, after=after)
    rows = [{"event_id": e.event_id, "source": e.source, "kind": e.kind, "delivery": e.delivery,
             "status": e.status, "attempts": e.attempts, "received_at": e.received_at,
             "error": e.error, "memory_ids": list(e.memory_ids)} for e in events]
    if json_out:
        print_json(rows)
        return
    if not events:
        console.print("no events")
    for e in events:
        lines = [f"{e.status}  {e.attempts} attempt(s)  received {e.received_at:%Y-%m-%d %H:%M}"
                 f"  {e.source} ({e.kind})  delivery {e.delivery}"]
        lines += [f"error: {e.error}"] if e.error else []
        lines += [f"memories: {', '.join(e.memory_ids)}"] if e.memory_ids else []
        console.print(Indented(Text("\n".join(lines)), 6, first=Text(f"#{e.event_id}",
                                                                       style="bold")))


@inbox_app.command("retry")
def inbox_retry(
    ctx: typer.Context,
    event_ids: list[int] | None = typer.Argument(None, help="Failed events' ids (default: all)."),
    tenant: str | None = typer.Option(None, "--tenant"),
) -> None:
    """Re-arm failed events once their cause is fixed; a worker then tries them again."""
    retried = memory_of(ctx).inbox.retry(event_ids or None, tenant=tenant)
    print(f"re-armed {len(retried)} failed event(s)" +
          (f": {', '.join(map(str, retried))}" if retried else ""))
