"""The first commands: init (make the home) and version."""

from __future__ import annotations

import typer

from ._app import app, memory_of, version_text


@app.command()
def init(ctx: typer.Context) -> None:
    """Create the home folder and its store, and print its path; an existing home is left
    as it is."""
    mem = memory_of(ctx)
    print(mem.settings.home.resolve())


@app.command()
def version() -> None:
    """Print the version."""
    print(version_text())
