"""Commands of the tiers' lifecycle: consolidate, worker, restore, close-session."""

from __future__ import annotations

import time

import typer
from rich.table import Table

from ..engines.lifecycle import JOBS, ConsolidationReport
from ..errors import MemstrataError
from ._app import NOW, app, console, err_console, memory_of, print_json, split_csv


def _print_report(report: ConsolidationReport) -> None:
    table = Table("job", "changes", "seconds", box=None, pad_edge=False)
    for job in report.jobs:
        counts = ", ".join(f"{v} {k}" for k, v in job.counts.items()) or "-"
        if job.paths:
            counts += " (" + ", ".join(f"{k}: {v}" for k, v in job.paths.items()) + ")"
        table.add_row(job.name, counts, f"{job.seconds:.2f}")
    console.print(table)
    tiers = Table("tier", "before", "after", box=None, pad_edge=False)
    for tier in report.tiers_after:
        tiers.add_row(tier, str(report.tiers_before.get(tier, 0)), str(report.tiers_after[tier]))
    console.print(tiers)


@app.command()
def consolidate(
    ctx: typer.Context,
    jobs: str | None = typer.Option(None, "--jobs",
                                    help=f"Comma-separated, of: {', '.join(JOBS)} (default all)."),
    tenant: str | None = typer.Option(None, "--tenant", help="One tenant (default all)."),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """Run the lifecycle once: end idle sessions, re-score, promote, abstract, forget.

    Running it twice at the same --now changes nothing the second time.
    """
    report = memory_of(ctx).consolidate(split_csv(jobs), tenant=tenant)
    if json_out:
        print_json(report.model_dump(mode="json"))
    else:
        _print_report(report)


@app.command()
def worker(
    ctx: typer.Context,
    interval: float = typer.Option(60.0, "--interval", min=0.1,
                                   help="Seconds between checks for due jobs."),
    once: bool = typer.Option(False, "--once", help="Run the due jobs once and exit."),
    now: str | None = NOW,
) -> None:
    """Run the lifecycle jobs on their schedule (lifecycle.<job>_every_minutes) until stopped."""
    mem = memory_of(ctx)
    while True:
        due = mem.due_jobs()
        if due:
            try:
                report = mem.consolidate(due)
            except MemstrataError as exc:
                if once:
                    raise
                # An unreachable archive must not stop the worker: the memories stayed where
                # they were, and the job is due again at the next check.
                err_console.print(f"error: {exc}; retrying in {interval:g} s")
            else:
                changes = ", ".join(f"{j.name}: {sum(j.counts.values())}" for j in report.jobs)
                err_console.print(f"{report.now:%Y-%m-%d %H:%M:%S} ran {changes}")
        if once:
            return
        time.sleep(interval)


@app.command()
def restore(
    ctx: typer.Context,
    memory_id: str = typer.Argument(...),
    tenant: str | None = typer.Option(None, "--tenant"),
    now: str | None = NOW,
) -> None:
    """Bring an archived memory back to the tier it left."""
    rec = memory_of(ctx).restore(memory_id, tenant=tenant)
    print(f"restored {rec.memory_id} to {rec.tier.value}")


@app.command("close-session")
def close_session(
    ctx: typer.Context,
    session: str = typer.Argument(...),
    tenant: str | None = typer.Option(None, "--tenant"),
    now: str | None = NOW,
) -> None:
    """End a session now: its active turns and tool calls move to short-term."""
    n = memory_of(ctx).close_session(session, tenant=tenant)
    print(f"session {session} closed: {n} memories moved to short_term")
