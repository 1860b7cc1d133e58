"""Commands about the store itself: stats, config show, reindex, delete-user."""

from __future__ import annotations

from typing import Any

import typer

from ._app import (
    NOW,
    app,
    config_app,
    console,
    db_app,
    home_settings,
    memory_of,
    print_json,
    settings_of,
)
from .render import fields


@app.command()
def stats(
    ctx: typer.Context,
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """Counts by type and tier, the embedding model, size on disk."""
    data = memory_of(ctx).stats(tenant=tenant)
    if json_out:
        print_json(data)
        return
    rows = []
    for key, value in data.items():
        if key == "embedder" and value:
            value = f"{value['model']} ({value['dim']}-d)"
        elif isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items()) or "-"
        rows.append((key, str(value)))
    console.print(fields(rows))


@app.command("delete-user")
def delete_user(
    ctx: typer.Context,
    user: str = typer.Argument(..., help="The user whose memories, and what was made from "
                               "them, are erased."),
    tenant: str | None = typer.Option(None, "--tenant"),
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """Erase a user: their memories in every tier and the archive, what was derived from them,
    their history's old contents, caches, session turns and webhook payloads."""
    if not yes and not typer.confirm(f"Erase every trace of user {user!r}? This cannot be "
                                     "undone", default=False):
        raise typer.Exit(1)
    report = memory_of(ctx).delete_user(user, tenant=tenant)
    if json_out:
        print_json(report.model_dump())
        return
    console.print(fields([(k, str(v)) for k, v in report.model_dump().items()]))


@config_app.command("show")
def config_show(ctx: typer.Context, json_out: bool = typer.Option(False, "--json")) -> None:
    """The effective settings (defaults, file, VARVEMEM_* variables), weights included."""
    from ..settings import redact_url

    data = settings_of(ctx).model_dump(mode="json")
    for key in ("embedder.api_key", "llm.api_key", "store.milvus.token", "archive.access_key",
                "archive.secret_key"):
        *sections, name = key.split(".")
        table = data
        for section in sections:
            table = table[section]
        if table.get(name):
            table[name] = "***"
    for section, key in (("store", "url"), ("store", "cache_url"), ("store", "vector_url"),
                         ("archive", "url")):
        if data[section].get(key):
            data[section][key] = redact_url(data[section][key])
    if json_out:
        print_json(data)
        return
    for key, value in _flatten(data):  # one line each, never wrapped: made for grep
        print(f"{key} = {value!r}" if isinstance(value, str) else f"{key} = {value}")


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, object]]:
    """Dotted keys, as VARVEMEM_* variables name them (with ``__`` for the dots)."""
    out: list[tuple[str, object]] = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.extend(_flatten(value, f"{prefix}{key}."))
        else:
            out.append((f"{prefix}{key}", value))
    return out


@db_app.command("upgrade")
def db_upgrade(ctx: typer.Context) -> None:
    """Create or migrate the store of record's schema (store.url) to this release's version."""
    from ..api import upgrade_store
    from ..settings import redact_url

    settings = home_settings(ctx)
    before, after = upgrade_store(settings)
    where = redact_url(settings.store.url) if settings.store.url else \
        str(settings.home / "varvemem.db")
    console.print(f"{where}: schema version {before} -> {after}" if before != after
                  else f"{where}: schema version {after}, up to date")


@app.command()
def reindex(
    ctx: typer.Context,
    re_embed: bool = typer.Option(False, "--re-embed",
                                  help="Recompute every vector with the configured embedder."),
    now: str | None = NOW,
) -> None:
    """Rebuild the vector index from the store of record (after a crash or a model change)."""
    from rich.progress import Progress

    mem = memory_of(ctx)
    if re_embed:
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("re-embedding", total=None)
            n = mem.reindex(re_embed=True,
                            progress=lambda done, total: progress.update(task, completed=done,
                                                                         total=total))
    else:
        n = mem.reindex()
    print(f"vector index rebuilt: {n} vectors")
