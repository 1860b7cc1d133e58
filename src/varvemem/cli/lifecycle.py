"""Commands of the tiers' lifecycle: consolidate, worker (also drains the webhook inbox),
restore, close-session."""

from __future__ import annotations

import signal
import threading
import time
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from ..errors import VarvememError
from ._app import MEMORY_ID, NOW, app, console, err_console, memory_of, print_json, split_csv

if TYPE_CHECKING:
    from ..api import Memory
    from ..engines.lifecycle import ConsolidationReport

# engines.lifecycle.JOBS, spelled out so that --help need not import the engines (a test
# checks that they agree).
JOBS = ("sessions", "rescore", "promote", "abstract", "forget", "inbox")


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
                                   help="Seconds between checks for due lifecycle jobs."),
    inbox: bool = typer.Option(True, "--inbox/--no-inbox",
                               help="Also turn webhook inbox events into memories."),
    once: bool = typer.Option(False, "--once",
                              help="Drain the inbox, run the due jobs once, and exit."),
    now: str | None = NOW,
) -> None:
    """Run the lifecycle jobs on their schedule (lifecycle.<job>_every_minutes) and drain the
    webhook inbox, until stopped. Several workers may share one store: each inbox event is
    processed once. SIGTERM finishes the event in hand and gives the rest back."""
    mem = memory_of(ctx)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    poll = mem.settings.webhooks.poll_seconds
    jobs_at = 0.0
    while not stop.is_set():
        busy = False
        if inbox:
            try:
                drained = mem.inbox.process(stop=stop)
            except VarvememError as exc:
                if once:
                    raise
                err_console.print(f"error: inbox: {exc}; retrying in {poll:g} s")
            else:
                busy = drained.claimed > 0
                if busy:
                    err_console.print(f"inbox: {drained.done} done, {drained.failed} failed, "
                                      f"{drained.retried} retried, {drained.lost} lost")
        if time.monotonic() >= jobs_at:
            jobs_at = time.monotonic() + interval
            _run_due(mem, once)
        if once and not busy:
            return
        if not busy:
            stop.wait(min(interval, poll) if inbox else interval)


def _run_due(mem: Memory, once: bool) -> None:
    due = mem.due_jobs()
    if not due:
        return
    try:
        report = mem.consolidate(due)
    except VarvememError as exc:
        if once:
            raise
        # An unreachable archive must not stop the worker: the memories stayed where they
        # were, and the job is due again at the next check.
        err_console.print(f"error: {exc}; retrying at the next check")
    else:
        changes = ", ".join(f"{j.name}: {sum(j.counts.values())}" for j in report.jobs)
        err_console.print(f"{report.now:%Y-%m-%d %H:%M:%S} ran {changes}")


@app.command()
def restore(
    ctx: typer.Context,
    memory_id: str = MEMORY_ID,
    tenant: str | None = typer.Option(None, "--tenant"),
    now: str | None = NOW,
) -> None:
    """Bring an archived memory back to the tier it left."""
    mem = memory_of(ctx)
    rec = mem.restore(mem.resolve_id(memory_id, tenant=tenant), tenant=tenant)
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
