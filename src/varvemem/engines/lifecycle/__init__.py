"""The lifecycle engine (SPEC TIER-1..5, UPD-3, UPD-8): sessions end, memories are re-scored,
promoted, abstracted into experiences and forgotten, each by a rule from ``settings.lifecycle``.

Every job works in transactions of ``lifecycle.batch_size`` memories and logs each change in
the history, so searches are never blocked for long and nothing moves without a trace. Every
rule is a function of the memories' state and the clock, so running a job twice at the same
time changes nothing the second time.

The package: ``engine`` (``LifecycleEngine``: running and scheduling the jobs, the public
operations), ``jobs`` (the table of jobs), one module per job (``sessions``, ``rescore``,
``promote``, ``abstract``, ``forget``, ``inbox``), ``archive`` (archive, delete archived,
restore), ``base`` (the helpers the jobs share) and ``reports`` (what a run reports).
"""

from __future__ import annotations

from .base import ACTOR as ACTOR
from .engine import LifecycleEngine as LifecycleEngine
from .jobs import JOB_TABLE as JOB_TABLE
from .jobs import JOBS as JOBS
from .jobs import Job as Job
from .reports import ConsolidationReport as ConsolidationReport
from .reports import JobReport as JobReport
from .reports import PlannedAction as PlannedAction
from .reports import PlannedChange as PlannedChange

__all__ = ["ACTOR", "JOBS", "JOB_TABLE", "ConsolidationReport", "Job", "JobReport",
           "LifecycleEngine", "PlannedAction", "PlannedChange"]
