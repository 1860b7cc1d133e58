"""Request bodies of the REST API, and the few responses that are not the library's own
models."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
)

from ..model import check_text, in_utc

Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]


def _utc(value: datetime, info: ValidationInfo) -> datetime:
    return in_utc(value, info.field_name or "date")


When = Annotated[datetime, AfterValidator(_utc)]
"""A date, normalised to UTC: one whose offset leaves the range of dates is refused (422)."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*")
    @classmethod
    def _valid_text(cls, v: Any, info: ValidationInfo) -> Any:
        """Every string of a body, keys of its mappings too, is valid Unicode (JSON's
        ``"\\ud800"`` escapes can spell a lone surrogate)."""
        check_text(v, info.field_name or "body")
        return v


class MemoryIn(_Body):
    """One memory to add (``POST /v1/memories``)."""

    content: str = Field(min_length=1)
    type: str | None = None
    tags: list[str] | None = Field(None, max_length=100)
    source: str = Field("api", min_length=1, max_length=1000)
    importance: float | None = Field(None, ge=0.0, le=1.0)
    user: Name | None = None
    agent: Name | None = None
    session: Name | None = None
    tier: str | None = None
    ttl_mode: str | None = None
    ttl_days: float | None = Field(None, gt=0, le=36_500)
    metadata: dict[str, Any] | None = None
    supersedes: list[str] | None = Field(None, max_length=100)
    created_at: When | None = None
    question: str | None = None
    answer: str | None = None
    score: float | None = Field(None, ge=0.0, le=1.0)


class BatchIn(_Body):
    """Several memories, embedded in batches (``POST /v1/memories/batch``)."""

    items: list[MemoryIn] = Field(min_length=1, max_length=1000)


class MemoryPatch(_Body):
    """The fields to change (``PATCH /v1/memories/{id}``); a new content re-embeds."""

    content: str | None = Field(None, min_length=1)
    tags: list[str] | None = Field(None, max_length=100)
    importance: float | None = Field(None, ge=0.0, le=1.0)
    metadata: dict[str, Any] | None = None
    reason: str = Field("", max_length=1000)


class FeedbackIn(_Body):
    helpful: bool
    weight: float = Field(0.1, gt=0.0, le=1.0)
    reason: str = Field("", max_length=1000)


class SearchIn(_Body):
    """A hybrid search (``POST /v1/search``); the filters of the library's ``search``."""

    query: str = Field(min_length=1)
    top_k: int | None = Field(None, ge=1, le=1000)
    types: list[str] | None = None
    tiers: list[str] | None = None
    tags: list[str] | None = Field(None, max_length=100)
    user: Name | None = None
    agent: Name | None = None
    session: Name | None = None
    since: When | None = None
    until: When | None = None
    as_of: When | None = None
    include_superseded: bool = False
    include_archive: bool = False
    profile: str | None = Field(None, max_length=100)

    def args(self) -> dict[str, Any]:
        out = self.model_dump(exclude={"query", "types", "tiers"}, exclude_none=True)
        if self.types is not None:
            out["type"] = self.types
        if self.tiers is not None:
            out["tier"] = self.tiers
        return out


class ContextIn(SearchIn):
    """``POST /v1/context``: a search packed as Markdown within ``max_tokens``."""

    max_tokens: int | None = Field(None, ge=16, le=1_000_000)


class AskIn(_Body):
    question: str = Field(min_length=1)
    session: Name | None = None
    user: Name | None = None


class TurnIn(_Body):
    """A message appended to a session (``POST /v1/sessions/{session}/turns``)."""

    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: str = Field(min_length=1)
    user: Name | None = None
    agent: Name | None = None


class TurnsIn(_Body):
    messages: list[TurnIn] = Field(min_length=1, max_length=1000)


class DocumentIn(_Body):
    """A document to ingest (``POST /v1/documents``); the same ``source`` again re-ingests:
    unchanged chunks are kept, new ones added, the rest invalidated."""

    source: str = Field(min_length=1, max_length=1000)
    text: str = Field(min_length=1)
    tags: list[str] | None = Field(None, max_length=100)


class InboxRetryIn(_Body):
    event_ids: list[Annotated[int, Field(ge=1, le=2**63 - 1)]] | None = Field(
        None, max_length=10_000, description="The failed events to retry; all if absent.")


class ConsolidateIn(_Body):
    jobs: list[Literal["sessions", "rescore", "promote", "abstract", "forget",
                       "inbox"]] | None = Field(None, min_length=1)


class Page(BaseModel):
    """A page of a list: pass ``next`` as ``after`` for the next one (absent on the last)."""

    items: list[Any]
    next: str | None = None


class InboxCounts(BaseModel):
    """Webhook inbox events by status."""

    pending: int = 0
    processing: int = 0
    done: int = 0
    failed: int = 0


class TenantStatus(BaseModel):
    """The key's tenant at a glance (``GET /v1/status``, admin): its memories by tier (the
    archive too) and its webhook inbox by status."""

    tenant: str
    memories_by_tier: dict[str, int]
    inbox: InboxCounts
