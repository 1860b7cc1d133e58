"""A DevOps assistant that starts with a handbook (spec 3.0) and two runbooks, lives through ten
tasks (dialogue, tool calls, platform events, the handbook upgraded to spec 4.0), and then answers
from memory what it could not before. Everything runs on the public :class:`Memory` API."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ..api import Memory
from ..model import SearchHit
from ..settings import Settings
from .render import HitMarker, Mark, clip, render_hits

DOCS = ("handbook.md", "runbook-order.md", "runbook-payment.md")
START = datetime.fromisoformat("2026-10-25T09:00:00+00:00")
END = datetime.fromisoformat("2026-11-13T09:00:00+00:00")


@dataclass
class Shown:
    """One hit the demo printed, and what the demo says about it."""

    rank: int
    memory_id: str
    memory_type: str
    content: str
    current: bool  # holds the expected (current) answer
    old_rule: bool  # states a rule the story replaced


@dataclass
class Check:
    """A question, the hits shown for it, and the verdicts drawn from exactly those hits."""

    question: str
    expect: str
    forbid: list[str]
    shown: list[Shown]

    @property
    def found_at(self) -> int | None:
        """Rank of the first shown hit with the expected answer."""
        return next((h.rank for h in self.shown if h.current), None)

    @property
    def old_rule_at(self) -> list[int]:
        """Ranks of the shown hits that state a replaced rule."""
        return [h.rank for h in self.shown if h.old_rule]

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "expect": self.expect, "forbid": self.forbid,
                "found_at": self.found_at, "old_rule_at": self.old_rule_at,
                "shown": [vars(h) for h in self.shown]}


class _Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def _data(name: str) -> str:
    return (resources.files("varvemem.demo") / "data" / name).read_text("utf-8")


def _ask(mem: Memory, q: dict[str, Any], show: int) -> tuple[list[SearchHit], Check]:
    hits = mem.search(q["question"], top_k=show)
    forbid = list(q.get("forbid") or [])
    shown = [Shown(i, h.memory.memory_id, h.memory.memory_type.value, h.memory.content,
                   q["expect"] in h.memory.content,
                   any(f in h.memory.content for f in forbid))
             for i, h in enumerate(hits, 1)]
    return hits, Check(q["question"], q["expect"], forbid, shown)


def _mark(h: Shown, expect: str) -> Mark | None:
    """The label beside a shown hit: what the check found in it, literally."""
    labels = ([f"[has {expect!r}]"] if h.current else []) + (["[old rule]"] if h.old_rule else [])
    if not labels:
        return None
    return Mark(" ".join(labels), "red" if h.old_rule else "green")


def _by_id(marks: dict[str, Mark | None]) -> HitMarker:
    """The marker that labels a hit with its memory's entry in ``marks``."""
    return lambda h: marks.get(h.memory.memory_id)


def _ask_all(out: Console, mem: Memory, questions: list[dict[str, Any]], show: int
             ) -> list[Check]:
    """Ask every question and print the hits shown, each marked by what it holds."""
    checks = []
    for q in questions:
        hits, check = _ask(mem, q, show)
        checks.append(check)
        marks = {h.memory_id: _mark(h, check.expect) for h in check.shown}
        out.print(f"\n[bold]Q: {q['question']}[/bold]")
        out.print(render_hits(hits, marker=_by_id(marks), max_chars=150, lines=2))
        out.print(f"[dim]-> {check.expect!r} {_verdict(check)}[/dim]")
    return checks


@dataclass
class DemoReport:
    """What the demo showed and claimed, for ``varvemem demo --json`` and its tests."""

    before: list[Check]
    after: list[Check]
    replaced_rule: dict[str, Any] | None = None  # the spec 3.0 smoke-test chunk after 4.0
    experience: dict[str, Any] | None = None  # the lesson abstracted, and its rank asked again
    stats: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"before": [c.to_json() for c in self.before],
                "after": [c.to_json() for c in self.after],
                "replaced_rule": self.replaced_rule, "experience": self.experience,
                "stats": self.stats}


def run_demo(console: Console, home: Path, show: int = 3) -> DemoReport:
    """Run the story in ``home`` (an empty folder) and print it, showing ``show`` hits per
    question; every verdict is drawn from exactly the hits shown."""
    clock = _Clock(START)
    docs = home / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name in DOCS:
        (docs / name).write_text(_data(name), "utf-8")
    questions = json.loads(_data("questions.json"))
    tasks = json.loads(_data("tasks.json"))

    with Memory(settings=Settings.defaults(home / "memory"), clock=clock) as mem:
        console.rule("[bold]varvemem demo[/bold]: a DevOps assistant that keeps learning")
        console.print(f"Home: {home} (temporary). Embedder: {mem.embedder().model_id}, "
                      f"LLM: {'on' if mem.settings.llm.enabled else 'off (local rules)'}.")
        report = mem.ingest(docs, tags=["docs"])
        console.print(f"Day 0 ({START:%Y-%m-%d}): ingested {report.files} documents as "
                      f"{len(report.added)} knowledge chunks (DevOps handbook spec 3.0, runbooks).")

        console.rule("Before: what memory returns with only the initial documents")
        before = _ask_all(console, mem, questions, show)

        console.rule("Ten DevOps tasks: dialogue, tool calls, platform events")
        replaced: str | None = None
        for n, task in enumerate(tasks, 1):
            clock.now = datetime.fromisoformat(task["at"].replace("Z", "+00:00"))
            replaced = _live_task(console, mem, clock, docs, task, f"task-{n:02d}") or replaced

        clock.now = END
        console.rule(f"After ({END:%Y-%m-%d}): the same questions")
        after = _ask_all(console, mem, questions, show)
        out = DemoReport(before, after)
        if replaced:
            out.replaced_rule = _show_replaced(console, mem, replaced)

        console.rule(f"Consolidation ({END:%Y-%m-%d}): the lifecycle runs once")
        out.experience = _consolidate(console, mem)

        console.rule("Summary")
        _summary(console, out, show)
        out.stats = mem.stats()
        console.print(f"{out.stats['memories']} memories ({out.stats['current']} current, "
                      f"{out.stats['superseded']} superseded), "
                      f"{out.stats['history_entries']} history entries.")
    return out


def _live_task(console: Console, mem: Memory, clock: _Clock, docs: Path, task: dict[str, Any],
               session: str) -> str | None:
    """Play one task's steps two minutes apart; the id of the spec 3.0 smoke-test chunk when
    this task re-ingested the handbook and replaced it."""
    counts: dict[str, int] = {}
    notes, replaced = [], None
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
            replaced = next((i for i in rep.invalidated if "Smoke Test" in mem.get(i).content),
                            None)
        counts[kind] = counts.get(kind, 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    console.print(f"{clock.now:%Y-%m-%d} [bold]{task['title']}[/bold] [dim]({summary})[/dim]")
    for note in notes:
        console.print(f"    [yellow]{note}[/yellow]")
    return replaced


def _show_replaced(console: Console, mem: Memory, memory_id: str) -> dict[str, Any]:
    """The spec 3.0 chunk: no longer current, its successor named, its history kept."""
    console.rule("The spec 3.0 smoke-test rule: invalidated, kept in history")
    old = mem.get(memory_id)
    console.print(clip(old.content, 300))
    console.print(f"valid_to {old.valid_to:%Y-%m-%d %H:%M}, superseded by "
                  f"{old.superseded_by}")
    entries = mem.history(memory_id)
    for e in entries:
        console.print(f"  {e.at:%Y-%m-%d %H:%M} {e.action:<9} {e.reason}")
    return {"memory_id": memory_id, "valid_to": old.valid_to.isoformat() if old.valid_to
            else None, "superseded_by": old.superseded_by,
            "history": [e.action for e in entries]}


def _consolidate(console: Console, mem: Memory) -> dict[str, Any] | None:
    """Run every lifecycle job, print what it did and the tiers before and after, and the
    experience learned from the image pull credentials fix (with its rank asked again)."""
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
    if lesson is None:
        console.print("No experience was abstracted from the image pull credentials fix.")
        return None
    console.print(f"[bold]Experience abstracted from the image pull credentials fix[/bold] "
                  f"({len(lesson.related_memory_ids)} related memories, "
                  f"{lesson.tier.value}, {lesson.metadata['abstraction']}):")
    console.print(lesson.content)
    question = "how did we fix the image pull credentials of a Helm chart?"
    hits = mem.search(question, top_k=3)
    rank = next((i for i, h in enumerate(hits, 1) if h.memory.memory_id == lesson.memory_id),
                None)
    console.print(f"Asked again ({question!r}), the experience ranks #{rank}." if rank else
                  f"Asked again ({question!r}), the experience is not in the top 3.")
    return {"memory_id": lesson.memory_id, "content": lesson.content, "question": question,
            "rank": rank, "top3": [h.memory.memory_id for h in hits],
            "related": list(lesson.related_memory_ids)}


def _summary(console: Console, report: DemoReport, show: int) -> None:
    """One line per question: where the expected text was before and after, and whether a
    replaced rule is still among the hits shown after."""
    console.print(f"Every verdict is about the {show} hits shown for the question.")
    for b, a in zip(report.before, report.after):
        console.print(f"\n[bold]{a.question}[/bold]")
        line = f"  {a.expect!r}: before {_verdict(b)}, after {_verdict(a)}"
        if a.forbid:
            line += "; old rule served after: " + (
                f"[red]yes, at {', '.join(f'#{r}' for r in a.old_rule_at)}[/red]"
                if a.old_rule_at else "[green]no[/green]")
        console.print(line)


def _verdict(c: Check) -> str:
    return (f"[green]at #{c.found_at}[/green]" if c.found_at
            else f"[red]not in the top {len(c.shown)}[/red]" if c.shown
            else "[red]nothing found[/red]")


def run_in_temp(console: Console, keep: bool = False) -> DemoReport:
    """Run the demo in a fresh temporary home, removed afterwards unless ``keep``."""
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="varvemem-demo-"))
    try:
        return run_demo(console, home)
    finally:
        if keep:
            Console(stderr=True).print(f"kept the demo home at {home}")  # also with --json
        else:
            shutil.rmtree(home, ignore_errors=True)
