"""``varvemem demo``: the seed's story, offline, in a temporary home."""

from __future__ import annotations

import typer

from ._app import app, console


@app.command()
def demo(keep: bool = typer.Option(False, "--keep", help="Keep the temporary home.")) -> None:
    """Run the DevOps assistant story: documents, ten tasks, then what memory serves."""
    from ..demo.story import run_in_temp

    checks = run_in_temp(console, keep=keep)
    if not all(c.found_at and not c.forbidden_served for c in checks):
        raise typer.Exit(1)
