"""What a lifecycle run reports (each job's counts, every change decided) and the state of one
run (``Run``: the changes so far and, in a dry run, the records as they would be left)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from ...model import MemoryRecord, Tier


class JobReport(BaseModel):
    """What one lifecycle job did."""

    name: str
    seconds: float = 0.0
    counts: dict[str, int] = Field(default_factory=dict)
    paths: dict[str, int] = Field(default_factory=dict)  # abstraction: extractive / llm
    created: list[str] = Field(default_factory=list)  # abstraction: new experience ids
    errors: list[str] = Field(default_factory=list)  # abstraction: why the LLM path failed


PlannedAction = Literal["move", "promote", "rescore", "end_session", "abstract", "reabstract",
                        "archive", "delete", "prune"]


class PlannedChange(BaseModel):
    """One change a job decided: made in a run, only listed in a dry run."""

    job: str
    action: PlannedAction
    memory_id: str | None = None  # None: a session's end, the inbox's pruning
    from_tier: str | None = None
    to_tier: str | None = None
    reason: str = ""
    session: str | None = None  # end_session
    tenant: str | None = None
    # abstract: the memories abstracted together (seed first); reabstract: the new sources
    group: list[str] = Field(default_factory=list)
    importance_from: float | None = None  # rescore
    importance_to: float | None = None
    count: int | None = None  # prune: how many inbox payloads


class ConsolidationReport(BaseModel):
    """A run of the lifecycle jobs: each job's counts, the tiers before and after and every
    change decided (``planned``). A dry run (``dry_run``) changed nothing: its counts,
    ``planned`` and ``tiers_after`` say what a run at the same time would do."""

    now: datetime
    dry_run: bool = False
    jobs: list[JobReport] = Field(default_factory=list)
    tiers_before: dict[str, int] = Field(default_factory=dict)
    tiers_after: dict[str, int] = Field(default_factory=dict)
    planned: list[PlannedChange] = Field(default_factory=list)
    seconds: float = 0.0

    def changed(self) -> int:
        """How many memories any job touched."""
        return sum(sum(j.counts.values()) for j in self.jobs)


@dataclass
class Run:
    """One consolidation: the changes decided so far and, in a dry run, the state they would
    leave (``state``: the records as changed, ``gone``: archived or deleted), which the later
    jobs read instead of the store's."""

    dry: bool
    planned: list[PlannedChange] = dc_field(default_factory=list)
    state: dict[str, MemoryRecord] = dc_field(default_factory=dict)
    gone: set[str] = dc_field(default_factory=set)

    def plan(self, change: PlannedChange) -> None:
        self.planned.append(change)

    def changed(self, records: Sequence[MemoryRecord]) -> None:
        """Records as a dry run would leave them."""
        for r in records:
            self.state[r.memory_id] = r


def tiers_after(before: dict[str, int], planned: Sequence[PlannedChange]) -> dict[str, int]:
    """The tiers ``planned`` would leave: moves, archivings, deletions and new experiences."""
    out = dict(before)
    seeds = {c.group[0] for c in planned if c.action == "abstract"}
    for c in planned:
        if c.action in ("move", "promote", "archive", "delete") and c.from_tier:
            out[c.from_tier] = out.get(c.from_tier, 0) - 1
            if c.to_tier:
                out[c.to_tier] = out.get(c.to_tier, 0) + 1
    out[Tier.LONG_TERM.value] = out.get(Tier.LONG_TERM.value, 0) + len(seeds)
    return out
