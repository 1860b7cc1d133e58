"""``varvemem qa`` (the FAQ assistant's scored pairs, L2, and their Markdown mirror) and
``varvemem ask`` (the L3 fast path)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from ._app import MEMORY_ID, NOW, Group, app, console, memory_of, print_json, split_csv
from .render import Indented, render_hits

qa_app = typer.Typer(cls=Group, no_args_is_help=True,
                     help="Scored question/answer pairs (L2) and their qa-*.md files.")
app.add_typer(qa_app, name="qa")


@qa_app.command("add")
def qa_add(
    ctx: typer.Context,
    question: str = typer.Argument(...),
    answer: str = typer.Argument(...),
    score: float = typer.Option(0.5, "--score", min=0.0, max=1.0,
                                 help="Quality of the answer, 0..1."),
    keywords: str | None = typer.Option(None, "--keywords", help="Comma-separated."),
    ttl: str | None = typer.Option(None, "--ttl", help="off, hard, linear or exponential."),
    ttl_days: float | None = typer.Option(None, "--ttl-days"),
    tenant: str | None = typer.Option(None, "--tenant"),
    now: str | None = NOW,
) -> None:
    """Remember a pair; prints its id."""
    print(memory_of(ctx).save_qa(question, answer, score, split_csv(keywords),
                                              ttl_mode=ttl, ttl_days=ttl_days, tenant=tenant))


@qa_app.command("search")
def qa_search(
    ctx: typer.Context,
    question: str = typer.Argument(...),
    top_k: int = typer.Option(5, "--top-k", "-k", min=1),
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """The best pairs: relevance x TTL weight x score."""
    hits = memory_of(ctx).search_qa(question, top_k, tenant=tenant)
    if json_out:
        print_json({"question": question, "hits": [
            {**h.to_json(), "question": h.memory.question, "answer": h.memory.answer,
             "qa_score": h.memory.score} for h in hits]})
        return
    if not hits:
        console.print("no pairs found")
        return
    console.print(render_hits(hits))


@qa_app.command("list")
def qa_list(
    ctx: typer.Context,
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """Every current pair."""
    pairs = memory_of(ctx).load_all_qa(tenant=tenant)
    if json_out:
        print_json([{"id": r.memory_id, "question": r.question, "answer": r.answer,
                     "score": r.score, "keywords": r.keywords, "ttl_mode": r.ttl_mode.value,
                     "created_at": r.created_at.isoformat()} for r in pairs])
        return
    if not pairs:
        console.print("no pairs")
        return
    for r in pairs:  # the question wraps under itself, after the full id and the score
        console.print(Indented(Text(r.question or ""), len(r.memory_id) + 8,
                               first=Text(f"{r.memory_id}  {r.score or 0:.2f}")))


@qa_app.command("export")
def qa_export(
    ctx: typer.Context,
    folder: Path = typer.Argument(..., help="Where to write qa-<id>.md files."),
    tenant: str | None = typer.Option(None, "--tenant"),
    now: str | None = NOW,
) -> None:
    """Write every pair as a Markdown file with YAML front matter."""
    paths = memory_of(ctx).qa.export(folder, tenant=tenant)
    print(f"wrote {len(paths)} file(s) to {folder}")


@qa_app.command("import")
def qa_import(
    ctx: typer.Context,
    folder: Path = typer.Argument(..., help="A folder of qa-*.md files."),
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json"),
    now: str | None = NOW,
) -> None:
    """Read qa-*.md files: edited ones update their pair, new ones add one, bad ones (and
    FIFOs, devices, sockets, symlinks leaving FOLDER) are reported by name and skipped."""
    report = memory_of(ctx).qa.import_folder(folder, tenant=tenant)
    if json_out:
        print_json(report)
        return
    console.print(f"{len(report['created'])} created, {len(report['updated'])} updated, "
                  f"{len(report['unchanged'])} unchanged, {len(report['skipped'])} skipped")
    for name, why in report["skipped"].items():
        console.print(f"skipped {name}: {why}")


@app.command()
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(...),
    session: str | None = typer.Option(None, "--session", help="Also log the exchange (L1)."),
    user: str | None = typer.Option(None, "--user"),
    tenant: str | None = typer.Option(None, "--tenant"),
    json_out: bool = typer.Option(False, "--json",
                                  help="The route taken, the matched pair, confidence, time."),
    now: str | None = NOW,
) -> None:
    """Answer QUESTION by the cheapest honest route: chit-chat (skip), a validated stored
    answer (reuse), or retrieval (normal; with the LLM when configured)."""
    res = memory_of(ctx).ask(question, session=session, user=user, tenant=tenant)
    if json_out:
        print_json(res.model_dump())
        return
    print(res.answer)
    console.print(f"[dim]route: {res.route} ({res.reason}), {res.ms:.1f} ms"
                  + (f", confidence {res.confidence:.2f}" if res.confidence is not None else "")
                  + "[/dim]")


@qa_app.command("feedback")
def qa_feedback(
    ctx: typer.Context,
    memory_id: str = MEMORY_ID,
    kind: str = typer.Argument(..., help="up, down or followup."),
    tenant: str | None = typer.Option(None, "--tenant"),
    now: str | None = NOW,
) -> None:
    """Move a pair's score: up, down, or followup (the answer was not enough)."""
    mem = memory_of(ctx)
    rec = mem.qa.feedback(mem.resolve_id(memory_id, tenant=tenant), kind, tenant=tenant)
    print(f"{rec.memory_id} score {rec.score:.2f}")
