"""Commands on memories: add, ingest, search, context, get, history, delete."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.text import Text

from ..search_args import TOP_K_MAX
from ._app import (
    AS_OF,
    MEMORY_ID,
    NOW,
    app,
    as_of_of,
    console,
    library_args,
    memory_of,
    print_json,
    search_options,
    split_csv,
)
from .render import Indented, clip, fields, render_hits

if TYPE_CHECKING:
    from ..engines.update.ingest import IngestProgress
    from ..model import HistoryEntry


@app.command()
def add(
    ctx: typer.Context,
    text: str = typer.Argument(..., help="What to remember."),
    type: str | None = typer.Option(None, "--type", "-t",
                                    help="dialogue, tool_call, knowledge, event, experience, qa."),
    tags: str | None = typer.Option(None, "--tags", help="Comma-separated tags."),
    source: str = typer.Option("user", "--source", help="Where it came from (kind:detail)."),
    importance: float | None = typer.Option(None, "--importance", min=0.0, max=1.0,
                                              help="0..1; else scored."),
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
    """Ingest documents; a changed file replaces its old chunks, an unchanged one is skipped.

    A big file is stored a batch of chunks at a time (update.ingest_batch_chunks): an
    interrupted ingest resumes when run again. Files over update.ingest_max_file_bytes are
    skipped (refused when named). On a terminal a progress bar shows each file."""
    mem = memory_of(ctx)
    if json_out or not console.is_terminal:
        report = mem.ingest(paths, tags=split_csv(tags), tenant=tenant)
    else:
        with _IngestBar() as bar:
            report = mem.ingest(paths, tags=split_csv(tags), tenant=tenant, progress=bar.show)
    if json_out:
        print_json(report.model_dump())
        return
    console.print(f"{report.files} file(s): {len(report.added)} chunk(s) added, {report.kept} "
                  f"kept, {len(report.invalidated)} invalidated, {report.unchanged_files} "
                  "file(s) unchanged")
    for skipped in report.skipped:
        console.print(f"skipped {skipped}")


class _IngestBar:
    """A rich progress bar for ``ingest``: the file being read (bytes, chunks read, new ones)
    and, for more than one file, how many are done."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}", markup=False), BarColumn(),
            TextColumn("{task.fields[done]}", markup=False), TimeElapsedColumn(),
            console=console, transient=True)
        self.files: Any = None
        self.file: Any = None
        self.source = ""

    def __enter__(self) -> _IngestBar:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def show(self, p: IngestProgress) -> None:
        from rich.filesize import decimal

        if p.files > 1 and self.files is None:
            self.files = self.progress.add_task("files", total=p.files, done=f"0/{p.files}")
        if p.source != self.source:
            if self.file is not None:
                self.progress.remove_task(self.file)
            self.source = p.source
            name = Path(p.source.removeprefix("document:")).name
            self.file = self.progress.add_task(clip(name, 40), total=p.bytes_total, done="")
        self.progress.update(self.file, completed=p.bytes_done,
                             done=f"{decimal(p.bytes_done)}/{decimal(p.bytes_total)}, "
                                  f"{p.chunks} chunks, {p.added} new")
        if p.done and self.files is not None:
            self.progress.update(self.files, completed=p.file, done=f"{p.file}/{p.files}")


@app.command()
@search_options
def search(
    ctx: typer.Context,
    query: str = typer.Argument(...),
    *,
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
    **options: Any,  # an option for each row of search_args.SEARCH_ARGS (@search_options)
) -> None:
    """Hybrid search (vector + full text + tags): at most --top-k hits, with the score
    breakdown of every hit (and its relevance, with retrieval.relevance = "learned").
    --as-of defaults to --now."""
    mem = memory_of(ctx)
    hits = mem.search(query, **library_args(ctx, options))
    if json_out:
        print_json({"query": query, "hits": [h.to_json() for h in hits]})
        return
    if not hits:
        console.print("no memories found")
        return
    console.print(render_hits(hits))


@app.command()
def context(
    ctx: typer.Context,
    query: str = typer.Argument(...),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=16,
                                            help="Token budget (16 at least)."),
    top_k: int | None = typer.Option(None, "--top-k", "-k", min=1, max=TOP_K_MAX),
    user: str | None = typer.Option(None, "--user"),
    session: str | None = typer.Option(None, "--session"),
    tenant: str | None = typer.Option(None, "--tenant"),
    as_of: str | None = AS_OF,
    now: str | None = NOW,
) -> None:
    """The best memories for QUERY as a Markdown block for a prompt, within the budget."""
    text = memory_of(ctx).context(query, max_tokens=max_tokens, top_k=top_k, user=user,
                                  session=session, tenant=tenant, as_of=as_of_of(ctx))
    if not text:
        print("No relevant memories.", file=sys.stderr)
    print(text, end="")


@app.command()
def get(
    ctx: typer.Context,
    memory_id: str = MEMORY_ID,
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json"),
    as_of: str | None = AS_OF,
    now: str | None = NOW,
) -> None:
    """Show one memory (with --as-of or --now: as it was then, rebuilt from its history)."""
    mem = memory_of(ctx)
    rec = mem.get(mem.resolve_id(memory_id, tenant=tenant), tenant=tenant, as_of=as_of_of(ctx))
    data = rec.model_dump(mode="json", exclude={"embedding"})
    if json_out:
        print_json(data)
        return
    console.print(fields([(key, _value(value)) for key, value in data.items()
                          if value not in (None, [], {}, "")]))


def _value(value: Any) -> str:
    """A field for the terminal (lines break between the items of a list, never in an id)."""
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@app.command()
def history(
    ctx: typer.Context,
    memory_id: str = MEMORY_ID,
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """Every change to a memory: time, action, actor, reason, old and new values (also after
    it was deleted)."""
    mem = memory_of(ctx)
    full = mem.resolve_id(memory_id, tenant=tenant)
    entries = mem.history(full, tenant=tenant)
    if json_out:
        print_json([e.model_dump(mode="json") for e in entries])
        return
    console.print(Text(f"history of {full}", style="bold"))
    for e in entries:
        console.print()
        head = Text.assemble((f"{e.at:%Y-%m-%d %H:%M:%S}", "bold"), "  ",
                             (e.action, "magenta"), f"  by {e.actor}")
        console.print(head)
        for line in ([f"reason: {e.reason}"] if e.reason else []) + _changes(e):
            console.print(Indented(Text(line), 2))


# Values shown whole: they are ids (or times) a user may copy.
_WHOLE = {"superseded_by", "related_memory_ids_added", "related_memory_ids_removed",
          "experience_id", "sources", "valid_to", "object"}


def _changes(e: HistoryEntry) -> list[str]:
    """The lines of one change: a snapshot (create, delete) by its content, else each field
    as ``old -> new``."""
    if e.action in ("create", "delete"):
        snap = e.new if e.action == "create" else e.old
        if not snap:
            return ["(its old contents were erased)"] if e.action == "delete" else []
        return [f"{snap.get('memory_type')} in {snap.get('tier')}: "
                f"{clip(str(snap.get('content', '')), 160)}"]
    old, new = e.old or {}, e.new or {}
    out = []
    for key in [*new, *(k for k in old if k not in new)]:
        if key in old and key in new:
            out.append(f"{key}: {_shown(key, old[key])} -> {_shown(key, new[key])}")
        else:
            out.append(f"{key}: {_shown(key, new[key] if key in new else old[key])}")
    return out


def _shown(key: str, value: Any) -> str:
    if isinstance(value, list):
        value = ", ".join(map(str, value)) or "[]"
    return str(value) if key in _WHOLE else clip(str(value), 60)


@app.command()
def delete(
    ctx: typer.Context,
    memory_id: str = MEMORY_ID,
    reason: str = typer.Option("", "--reason"),
    tenant: str | None = typer.Option(None, "--tenant"),
    now: str | None = NOW,
) -> None:
    """Delete a memory (its history is kept)."""
    mem = memory_of(ctx)
    full = mem.resolve_id(memory_id, tenant=tenant)
    mem.delete(full, reason=reason, tenant=tenant)
    print(f"deleted {full}")
