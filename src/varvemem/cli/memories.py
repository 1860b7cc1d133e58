"""Commands on memories: add, ingest, search, context, get, history, delete."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from ._app import NOW, app, console, memory_of, print_json, split_csv


@app.command()
def add(
    ctx: typer.Context,
    text: str = typer.Argument(..., help="What to remember."),
    type: str | None = typer.Option(None, "--type", "-t",
                                    help="dialogue, tool_call, knowledge, event, experience, qa."),
    tags: str | None = typer.Option(None, "--tags", help="Comma-separated tags."),
    source: str = typer.Option("user", "--source", help="Where it came from (kind:detail)."),
    importance: float | None = typer.Option(None, "--importance", help="0..1; else scored."),
    user: str | None = typer.Option(None, "--user"),
    agent: str | None = typer.Option(None, "--agent"),
    session: str | None = typer.Option(None, "--session"),
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
    now: str | None = NOW,
) -> None:
    """Remember TEXT; prints its id (the existing id when it was a duplicate)."""
    mem = memory_of(ctx)
    res = mem.add(text, type=type, tags=split_csv(tags), source=source, importance=importance,
                  user=user, agent=agent, session=session, tenant=tenant)
    if json_out:
        print_json(res.model_dump())
    else:
        print(res.memory_id)


@app.command()
def ingest(
    ctx: typer.Context,
    paths: list[Path] = typer.Argument(..., help="Markdown/text files or folders."),
    tags: str | None = typer.Option(None, "--tags", help="Comma-separated tags for every chunk."),
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """Ingest documents; a changed file replaces its old chunks, an unchanged one is skipped."""
    report = memory_of(ctx).ingest(paths, tags=split_csv(tags), tenant=tenant)
    if json_out:
        print_json(report.model_dump())
        return
    console.print(f"{report.files} file(s): {len(report.added)} chunk(s) added, {report.kept} "
                  f"kept, {len(report.invalidated)} invalidated, {report.unchanged_files} "
                  "file(s) unchanged")
    for skipped in report.skipped:
        console.print(f"skipped {skipped}")


@app.command()
def search(
    ctx: typer.Context,
    query: str = typer.Argument(...),
    top_k: int | None = typer.Option(None, "--top-k", "-k", help="How many hits."),
    type: str | None = typer.Option(None, "--type", "-t", help="Memory type(s), comma-separated."),
    tier: str | None = typer.Option(None, "--tier", help="Tier(s), comma-separated."),
    tags: str | None = typer.Option(None, "--tags", help="Only hits with one of these tags."),
    user: str | None = typer.Option(None, "--user"),
    agent: str | None = typer.Option(None, "--agent"),
    session: str | None = typer.Option(None, "--session"),
    tenant: str | None = typer.Option(None, "--tenant"),
    profile: str | None = typer.Option(None, "--profile", help="Retrieval profile by name."),
    include_superseded: bool = typer.Option(False, "--include-superseded"),
    archive: bool = typer.Option(False, "--archive", help="Also search the archive (slow)."),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """Hybrid search (vector + full text + tags), with the score breakdown of every hit."""
    mem = memory_of(ctx)
    hits = mem.search(query, top_k=top_k, type=split_csv(type), tier=split_csv(tier),
                      tags=split_csv(tags), user=user, agent=agent, session=session,
                      tenant=tenant, profile=profile, include_superseded=include_superseded,
                      include_archive=archive)
    if json_out:
        print_json({"query": query, "hits": [h.to_json() for h in hits]})
        return
    if not hits:
        console.print("no memories found")
        return
    table = Table("score", "sem", "kw", "tag", "rec", "imp", "rel", "type", "memory",
                  show_lines=False)
    for h in hits:
        s = h.scores
        table.add_row(f"{h.score:.3f}", *(f"{v:.2f}" for v in (
            s.semantic, s.keyword, s.tag, s.recency, s.importance, s.reliability)),
            h.memory.memory_type.value,
            f"{_clip(h.memory.content)}\n[dim]{h.memory.memory_id}[/dim]")
    console.print(table)


def _clip(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@app.command()
def context(
    ctx: typer.Context,
    query: str = typer.Argument(...),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Token budget."),
    top_k: int | None = typer.Option(None, "--top-k", "-k"),
    user: str | None = typer.Option(None, "--user"),
    session: str | None = typer.Option(None, "--session"),
    tenant: str | None = typer.Option(None, "--tenant"),
    now: str | None = NOW,
) -> None:
    """The best memories for QUERY as a Markdown block for a prompt, within the budget."""
    text = memory_of(ctx).context(query, max_tokens=max_tokens, top_k=top_k, user=user,
                                  session=session, tenant=tenant)
    print(text, end="")


@app.command()
def get(
    ctx: typer.Context,
    memory_id: str = typer.Argument(...),
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """Show one memory."""
    rec = memory_of(ctx).get(memory_id, tenant=tenant)
    data = rec.model_dump(mode="json", exclude={"embedding"})
    if json_out:
        print_json(data)
        return
    table = Table(show_header=False, box=None)
    for key, value in data.items():
        if value not in (None, [], {}):
            table.add_row(f"[bold]{key}[/bold]", str(value))
    console.print(table)


@app.command()
def history(
    ctx: typer.Context,
    memory_id: str = typer.Argument(...),
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """Every change to a memory: action, time, actor, reason, old and new values."""
    entries = memory_of(ctx).history(memory_id, tenant=tenant)
    if json_out:
        print_json([e.model_dump(mode="json") for e in entries])
        return
    table = Table("at", "action", "actor", "reason", "change")
    for e in entries:
        change = ", ".join(sorted((e.new or e.old or {}).keys()))
        table.add_row(e.at.strftime("%Y-%m-%d %H:%M:%S"), e.action, e.actor, e.reason,
                      _clip(change, 80))
    console.print(table)


@app.command()
def delete(
    ctx: typer.Context,
    memory_id: str = typer.Argument(...),
    reason: str = typer.Option("", "--reason"),
    tenant: str | None = typer.Option(None, "--tenant"),
    now: str | None = NOW,
) -> None:
    """Delete a memory (its history is kept)."""
    memory_of(ctx).delete(memory_id, reason=reason, tenant=tenant)
    print(f"deleted {memory_id}")
