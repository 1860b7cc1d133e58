"""The tiers' lifecycle settings (``lifecycle``): sessions, promotion, abstraction,
re-scoring, forgetting by tier and the worker's schedule."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..model import MemoryType, Tier
from .base import Section


class TierRule(Section):
    """How one tier forgets, and which of its memories retrieval sees (SPEC TIER-2..4, UPD-8).

    A memory is forgotten (moved to the archive, or deleted with ``forget = "delete"``) when it
    has expired (``expires_at``), or is older than ``max_age_days``, or has not been retrieved
    (nor created) for ``idle_days``, or its importance is below ``min_importance`` once it is
    ``min_importance_after_days`` old. Types in ``keep_types`` are never forgotten here.
    """

    max_age_days: float | None = Field(None, gt=0)
    idle_days: float | None = Field(None, gt=0)
    min_importance: float | None = Field(None, ge=0.0, le=1.0)
    min_importance_after_days: float = Field(1.0, ge=0)
    forget: Literal["archive", "delete"] = "archive"
    keep_types: list[MemoryType] = Field(default_factory=list)
    # Retrieval sees only this tier's memories with at least this importance, from the last
    # ``search_days`` days (TIER-2: "importance > 0.3" is read as "at least 0.3", so dialogue
    # at its base importance stays findable).
    search_min_importance: float = Field(0.0, ge=0.0, le=1.0)
    search_days: float | None = Field(None, gt=0)


def _default_tiers() -> dict[Tier, TierRule]:
    return {
        Tier.ACTIVE: TierRule(),
        Tier.SHORT_TERM: TierRule(max_age_days=7, min_importance=0.15,
                                  search_min_importance=0.3, search_days=7),
        Tier.MID_TERM: TierRule(max_age_days=182),
        Tier.LONG_TERM: TierRule(idle_days=365, keep_types=[MemoryType.KNOWLEDGE]),
        Tier.ARCHIVE: TierRule(),
    }


class LifecycleSettings(Section):
    """The tiers' lifecycle (SPEC TIER-1..5, UPD-3, UPD-8): sessions, promotion, abstraction,
    re-scoring and forgetting; ``varvemem consolidate`` runs it once, ``varvemem worker`` on
    the ``*_every_minutes`` schedule."""

    # TIER-1: the running session, read back in order (no search) at the top of context().
    active_turns: int = Field(10, ge=0, le=1000)
    active_tool_calls: int = Field(5, ge=0, le=1000)
    session_idle_minutes: float = Field(30.0, gt=0)
    tool_call_ttl_hours: float | None = Field(1.0, gt=0)
    important_at: float = Field(0.7, ge=0.0, le=1.0)  # a tool call this important never expires
    # Promotion (hourly): importance above this moves active/short-term memories to mid-term.
    promote_above: float = Field(0.5, ge=0.0, le=1.0)
    # Abstraction (daily): a memory above this importance, with the related memories around
    # it (or a group of at least ``cluster_min`` related ones above ``promote_above``),
    # becomes one experience in long-term memory; the sources are kept. A group is the
    # memory's associated (related_memory_ids), similar (``abstract_similarity``) and
    # same-session ones.
    abstract_above: float = Field(0.7, ge=0.0, le=1.0)
    cluster_min: int = Field(3, ge=2, le=1000)
    abstract_similarity: float = Field(0.4, ge=-1.0, le=1.0)  # cosine that joins a group
    abstract_max_sources: int = Field(8, ge=1, le=100)
    abstract_max_chars: int = Field(800, ge=100)
    # A group is built from one user's memories (memories of no user may join it, and the
    # experience is that user's), so an experience never shows one user what another told.
    # On: the tenant's users share experiences; one whose sources are not all of one user
    # belongs to none of them (the tenant's) and names them all (``metadata.users``).
    abstract_across_users: bool = False
    # An experience whose problem a later memory resolves (engines/update/outcome.py) is rebuilt with
    # that fix by the next abstraction run.
    reabstract_on_fix: bool = True
    # Re-scoring (hourly): each new retrieval adds ``use_step`` (at most ``use_max`` per run);
    # a memory unused for ``decay_after_days`` loses ``decay_step`` once per such period;
    # importance stays within ``importance_floor``..``importance_ceiling``.
    use_step: float = Field(0.02, ge=0.0, le=1.0)
    use_max: float = Field(0.1, ge=0.0, le=1.0)
    decay_after_days: float = Field(30.0, gt=0)
    decay_step: float = Field(0.05, ge=0.0, le=1.0)
    importance_floor: float = Field(0.05, ge=0.0, le=1.0)
    importance_ceiling: float = Field(0.95, ge=0.0, le=1.0)
    tiers: dict[Tier, TierRule] = Field(default_factory=_default_tiers)
    # The worker's schedule, per job.
    sessions_every_minutes: float = Field(1.0, gt=0)
    promote_every_minutes: float = Field(60.0, gt=0)
    rescore_every_minutes: float = Field(60.0, gt=0)
    abstract_every_minutes: float = Field(1440.0, gt=0)
    forget_every_minutes: float = Field(1440.0, gt=0)
    inbox_every_minutes: float = Field(1440.0, gt=0)  # webhooks.keep_done_days's clean-up
    batch_size: int = Field(500, ge=1, le=100_000)  # memories per transaction

    @field_validator("tiers", mode="before")
    @classmethod
    def _merge_tiers(cls, v: Any) -> Any:
        """A tier named in a file or variable replaces that tier's rule only."""
        if isinstance(v, dict):
            return {**{k.value: r for k, r in _default_tiers().items()}, **v}
        return v

    @model_validator(mode="after")
    def _bounds(self) -> LifecycleSettings:
        if self.importance_floor > self.importance_ceiling:
            raise ValueError("importance_floor is above importance_ceiling")
        return self
