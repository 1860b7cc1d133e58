"""The table of lifecycle jobs: the one place that lists them, a row per job, in the order
they run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from .abstract import job_abstract
from .base import LifecycleBase
from .forget import job_forget
from .inbox import job_inbox
from .promote import job_promote
from .reports import JobReport, Run
from .rescore import job_rescore
from .sessions import job_sessions


@dataclass(frozen=True)
class Job:
    """A lifecycle job: the function that runs it (with the engine, the clock's time, a
    tenant, None for all, and the run, which a dry run only plans) and the ``lifecycle`` key
    of its interval in minutes (``varvemem worker``)."""

    run: Callable[[LifecycleBase, datetime, str | None, Run], JobReport]
    every: str


# The jobs in the order they run.
JOB_TABLE: dict[str, Job] = {
    "sessions": Job(job_sessions, "sessions_every_minutes"),
    "rescore": Job(job_rescore, "rescore_every_minutes"),
    "promote": Job(job_promote, "promote_every_minutes"),
    "abstract": Job(job_abstract, "abstract_every_minutes"),
    "forget": Job(job_forget, "forget_every_minutes"),
    "inbox": Job(job_inbox, "inbox_every_minutes"),
}
JOBS = tuple(JOB_TABLE)
