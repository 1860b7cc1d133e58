"""A DevOps assistant that starts with a handbook (spec 3.0) and two runbooks, lives through ten
tasks (dialogue, tool calls, platform events, the handbook upgraded to spec 4.0), and then answers
from memory what it could not before. Everything runs on the public :class:`Memory` API."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from ..api import Memory
from ..model import SearchHit
from ..settings import Settings

DOCS = ("handbook.md", "runbook-order.md", "runbook-payment.md")
START = datetime.fromisoformat("2026-10-25T09:00:00+00:00")
END = datetime.fromisoformat("2026-11-13T09:00:00+00:00")


@dataclass
class Check:
    question: str
    expect: str
    forbid: str | None
    found_at: int | None  # rank (1-based) of the first hit containing ``expect``
    forbidden_served: bool


class _Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def _data(name: str) -> str:
    return (resources.files("varvemem.demo") / "data" / name).read_text("utf-8")


def _ask(mem: Memory, q: dict[str, Any], top_k: int) -> tuple[list[SearchHit], Check]:
    hits = mem.search(q["question"], top_k=top_k)
    found = next((i + 1 for i, h in enumerate(hits) if q["expect"] in h.memory.content), None)
    forbid = q.get("forbid")
    served = bool(forbid) and any(forbid in h.memory.content for h in hits)
    return hits, Check(q["question"], q["expect"], forbid, found, served)


def _ask_all(console: Console, mem: Memory, questions: list[dict[str, Any]], top_k: int,
             show: int) -> list[Check]:
    """Ask every question, print the top ``show`` hits with their score breakdown."""
    checks = []
    for q in questions:
        hits, check = _ask(mem, q, top_k)
        checks.append(check)
        console.print(f"\n[bold]Q: {q['question']}[/bold]")
        console.print(_hits_table(hits, q["expect"], q.get("forbid"), show))
    return checks


def _hits_table(hits: list[SearchHit], expect: str, forbid: str | None, limit: int) -> Table:
    table = Table("#", "score", "sem", "kw", "tag", "rec", "imp", "rel", "type", "memory",
                  box=None, pad_edge=False)
    for i, h in enumerate(hits[:limit], 1):
        s = h.scores
        text = " ".join(h.memory.content.split())
        text = text if len(text) <= 150 else text[:149] + "…"
        style = "green" if expect in h.memory.content else (
            "red" if forbid and forbid in h.memory.content else "")
        table.add_row(str(i), f"{h.score:.3f}", *(f"{v:.2f}" for v in (
            s.semantic, s.keyword, s.tag, s.recency, s.importance, s.reliability)),
            h.memory.memory_type.value, f"[{style}]{text}[/{style}]" if style else text)
    return table


def run_demo(console: Console, home: Path, show: int = 3, top_k: int = 5) -> list[Check]:
    """Run the story in ``home`` (an empty folder) and print it; returns the after-checks."""
    clock = _Clock(START)
    docs = home / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name in DOCS:
        (docs / name).write_text(_data(name), "utf-8")
    questions = json.loads(_data("questions.json"))
    tasks = json.loads(_data("tasks.json"))

    with Memory(settings=Settings.load(home=home / "memory"), clock=clock) as mem:
        console.rule("[bold]varvemem demo[/bold]: a DevOps assistant that keeps learning")
        console.print(f"Home: {home} (temporary). Embedder: {mem.embedder().model_id}, "
                      f"LLM: {'on' if mem.settings.llm.enabled else 'off (local rules)'}.")
        report = mem.ingest(docs, tags=["docs"])
        console.print(f"Day 0 ({START:%Y-%m-%d}): ingested {report.files} documents as "
                      f"{len(report.added)} knowledge chunks (DevOps handbook spec 3.0, runbooks).")

        console.rule("Before: what memory returns with only the initial documents")
        before = _ask_all(console, mem, questions, top_k, show)

        console.rule("Ten DevOps tasks: dialogue, tool calls, platform events")
        superseded_rule: str | None = None
        for n, task in enumerate(tasks, 1):
            clock.now = datetime.fromisoformat(task["at"].replace("Z", "+00:00"))
            session = f"task-{n:02d}"
            counts: dict[str, int] = {}
            notes = []
            for step in task["steps"]:
                clock.now += timedelta(minutes=2)
                kind = step["kind"]
                if kind == "dialogue":
                    mem.add_messages([{"role": step["role"], "content": step["content"]}],
                                     user="ops", session=session)
                elif kind == "tool_call":
                    mem.add_tool_call(step["tool"], step.get("arguments"), step["result"],
                                      user="ops", session=session)
                elif kind == "event":
                    mem.add_event(step["event"], source=f"webhook:{step['source']}")
                elif kind == "ingest":
                    (docs / step["as"]).write_text(_data(step["file"]), "utf-8")
                    rep = mem.ingest(docs / step["as"], tags=["docs"])
                    notes.append(f"re-ingested {step['as']}: {len(rep.added)} new chunk(s), "
                                 f"{rep.kept} unchanged, {len(rep.invalidated)} invalidated")
                    for old_id in rep.invalidated:
                        if "Smoke Test" in mem.get(old_id).content:
                            superseded_rule = old_id
                counts[kind] = counts.get(kind, 0) + 1
            summary = ", ".join(f"{v} {k}" for k, v in counts.items())
            console.print(f"{clock.now:%Y-%m-%d} [bold]{task['title']}[/bold] [dim]({summary})"
                          "[/dim]")
            for note in notes:
                console.print(f"    [yellow]{note}[/yellow]")

        clock.now = END
        console.rule(f"After ({END:%Y-%m-%d}): the same questions")
        after = _ask_all(console, mem, questions, top_k, show)

        if superseded_rule:
            console.rule("The spec 3.0 smoke-test rule: invalidated, kept in history")
            old = mem.get(superseded_rule)
            console.print(Panel(" ".join(old.content.split())[:300], title="spec 3.0 chunk",
                                subtitle=f"valid_to {old.valid_to:%Y-%m-%d %H:%M}, "
                                         f"superseded_by {old.superseded_by}"))
            for e in mem.history(superseded_rule):
                console.print(f"  {e.at:%Y-%m-%d %H:%M} {e.action:<9} {e.actor}: {e.reason}")

        console.rule(f"Consolidation ({END:%Y-%m-%d}): the lifecycle runs once")
        _consolidate(console, mem)

        console.rule("Summary")
        table = Table("question", "before", "after", "old rule served after?")
        for b, a in zip(before, after):
            table.add_row(a.question, _verdict(b), _verdict(a),
                          "-" if a.forbid is None else ("[red]yes[/red]" if a.forbidden_served
                                                        else "[green]no[/green]"))
        console.print(table)
        stats = mem.stats()
        console.print(f"{stats['memories']} memories ({stats['current']} current, "
                      f"{stats['superseded']} superseded), {stats['history_entries']} history "
                      "entries.")
    return after


def _consolidate(console: Console, mem: Memory) -> None:
    """Run every lifecycle job, print what it did and the tiers before and after, and the
    experience learned from the image pull credentials fix."""
    report = mem.consolidate()
    jobs = Table("job", "what it did", box=None, pad_edge=False)
    for job in report.jobs:
        jobs.add_row(job.name, ", ".join(f"{v} {k}" for k, v in job.counts.items()) or "-")
    console.print(jobs)
    tiers = Table("tier", "before", "after", box=None, pad_edge=False)
    for tier, n in report.tiers_after.items():
        tiers.add_row(tier, str(report.tiers_before.get(tier, 0)), str(n))
    console.print(tiers)
    experiences = [mem.get(i) for j in report.jobs for i in j.created]
    lesson = next((e for e in experiences if "imagePullSecrets" in e.content), None)
    if lesson is not None:
        console.print(Panel(lesson.content, title="experience abstracted from the image pull "
                            "credentials fix", subtitle=f"{len(lesson.related_memory_ids)} "
                            f"related memories, long_term, {lesson.metadata['abstraction']}"))
        hits = mem.search("how did we fix the image pull credentials of a Helm chart?",
                          top_k=3)
        rank = next((i for i, h in enumerate(hits, 1) if h.memory.memory_id == lesson.memory_id),
                    None)
        console.print(f"Asked again, the experience ranks #{rank}." if rank else
                      "Asked again, the experience is not in the top 3.")


def _verdict(c: Check) -> str:
    return f"[green]found (#{c.found_at})[/green]" if c.found_at else "[red]not found[/red]"


def run_in_temp(console: Console, keep: bool = False) -> list[Check]:
    """Run the demo in a fresh temporary home, removed afterwards unless ``keep``."""
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="varvemem-demo-"))
    try:
        return run_demo(console, home)
    finally:
        if keep:
            console.print(f"kept the demo home at {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)
