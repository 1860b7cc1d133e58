"""``varvemem demo``: the DevOps assistant's story, offline, in a temporary home."""

from __future__ import annotations

import io

import typer
from rich.console import Console

from ._app import app, console, print_json


@app.command()
def demo(
    keep: bool = typer.Option(False, "--keep", help="Keep the temporary home."),
    json_out: bool = typer.Option(False, "--json",
                                  help="Print what was shown and concluded as JSON instead."),
) -> None:
    """Run the DevOps assistant story: documents, ten tasks, then what memory serves.

    It runs in a temporary home (never yours) and exits 0 once the story has run: the verdicts
    it prints (found, and whether a replaced rule is still served) are findings, not a test.
    """
    from .story import run_in_temp

    out = Console(file=io.StringIO()) if json_out else console
    report = run_in_temp(out, keep=keep)
    if json_out:
        print_json(report.to_json())
