"""The typer application, its global options and the helpers every command shares."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from ..api import Memory
from ..settings import Settings

app = typer.Typer(
    name="varvemem", no_args_is_help=True, add_completion=False,
    pretty_exceptions_enable=False,
    help="Long-term memory for LLM agents: add, search and manage memories offline.")
config_app = typer.Typer(no_args_is_help=True, help="Inspect the effective settings.")
app.add_typer(config_app, name="config")
db_app = typer.Typer(no_args_is_help=True, help="The store of record's schema.")
app.add_typer(db_app, name="db")

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


@app.callback()
def _root(
    ctx: typer.Context,
    home: Path | None = typer.Option(None, "--home", envvar="VARVEMEM_HOME",
                                     help="Home folder (default ~/.varvemem)."),
    config: Path | None = typer.Option(None, "--config", envvar="VARVEMEM_CONFIG",
                                       help="Settings file (default <home>/varvemem.toml)."),
) -> None:
    ctx.obj = {"home": home, "config": config}


def settings_of(ctx: typer.Context) -> Settings:
    obj = ctx.find_root().obj or {}
    return Settings.load(home=obj.get("home"), config_file=obj.get("config"))


def parse_now(value: str | None) -> datetime | None:
    """``--now``: an ISO 8601 time (UTC when it names no zone)."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not an ISO 8601 time such as "
                                 "2026-01-31T09:00:00Z") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _check_now(value: str | None) -> str | None:
    parse_now(value)
    return value


NOW = typer.Option(None, "--now", envvar="VARVEMEM_NOW", callback=_check_now,
                   help="Act as of this time (ISO 8601): records and ranks as if it were then.")


def memory_of(ctx: typer.Context) -> Memory:
    """Open the Memory for this invocation; it is closed (and notices printed) at the end.
    A command's ``--now`` (see :data:`NOW`) fixes the clock."""
    now = parse_now(ctx.params.get("now"))
    mem = Memory(settings=settings_of(ctx), clock=(lambda: now) if now else None)

    def _close() -> None:
        mem.close()
        for notice in mem.notices:
            err_console.print(f"note: {notice}")

    ctx.call_on_close(_close)
    return mem


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def split_csv(value: str | None) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    return items or None
