"""Request and response bodies of the REST API (responses reuse the library's own models where
they fit), and the error body every refusal carries."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
    create_model,
    field_validator,
)
from pydantic.json_schema import SkipJsonSchema

from ..engines.faq import AskResult
from ..engines.lifecycle import ConsolidationReport
from ..model import (
    HIT_SCORE_KEYS,
    AddResult,
    HistoryEntry,
    IngestReport,
    MemoryRecord,
    MemoryType,
    Tier,
    TTLMode,
    check_text,
    in_utc,
)
from ..search_args import REST_FIELDS, SEARCH_ARGS, Kind, SearchArg

__all__ = ["AddResult", "AskResult", "ConsolidationReport", "HistoryEntry", "IngestReport"]

# The library's rules, in the schema: no text holds U+0000 (check_text; app.py writes it into
# every other string of a request), a name holds a character other than white space, a
# session id no control character either.
NO_NUL_PATTERN = r"^[^\x00]*$"
NAME_PATTERN = r"^[^\x00]*[^\s\x00\x1c-\x1f\x85][^\x00]*$"
SESSION_PATTERN = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f\x85][^\x00-\x1f\x7f]*$"
Name = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=NAME_PATTERN)]
SessionId = Annotated[str, StringConstraints(min_length=1, max_length=200,
                                             pattern=SESSION_PATTERN)]
EVENT_ID_MAX = 2**53 - 1
"""The largest inbox event id a request may name: every JSON parser holds it exactly (a double's
integers), and it is far from the store's 64-bit ids' limit."""


def _utc(value: datetime, info: ValidationInfo) -> datetime:
    return in_utc(value, info.field_name or "date")


def _text_date(value: Any) -> Any:
    if not isinstance(value, (str, datetime)):  # not a number of seconds: the schema's string
        raise ValueError("must be an ISO 8601 date-time string")
    return value


def _whole(value: Any) -> Any:
    """JSON's integers, ``5.0`` too (JSON Schema's ``integer``), not booleans nor strings."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be an integer")
    return int(value) if isinstance(value, float) and value.is_integer() else value

def _whole_or_none(cls: Any, value: Any) -> Any:
    return None if value is None else _whole(value)


When = Annotated[datetime, BeforeValidator(_text_date), AfterValidator(_utc)]
"""A date, normalised to UTC: one whose offset leaves the range of dates is refused (422)."""

Created = Annotated[When, WithJsonSchema({
    "type": "string", "format": "date-time", "pattern": r"^(190[1-9]|19[1-9]\d|2[0-7]\d\d)-",
    "description": "A date of the years 1900 to 2800 once in UTC (the schema says 1901 to 2799, "
                   "which holds whatever the offset)"})]
"""A memory's ``created_at``: the library refuses one outside the years 1900..2800 in UTC."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _valid_text(cls, v: Any, info: ValidationInfo) -> Any:
        """Every string of a body, keys of its mappings too, is valid Unicode (JSON's
        ``"\\ud800"`` escapes can spell a lone surrogate) without U+0000: checked first, so
        the error says so rather than quoting a pattern."""
        check_text(v, info.field_name or "body")
        return v


class MemoryIn(_Body):
    """One memory to add (``POST /v1/memories``)."""

    content: str = Field(min_length=1, pattern=NAME_PATTERN)
    type: MemoryType | None = None
    tags: list[str] | None = Field(None, max_length=100)
    source: str = Field("api", min_length=1, max_length=1000)
    importance: float | None = Field(None, ge=0.0, le=1.0, strict=True)
    user: Name | None = None
    agent: Name | None = None
    session: SessionId | None = None
    tier: Tier | None = None
    ttl_mode: TTLMode | None = None
    ttl_days: float | None = Field(None, gt=0, le=36_500, strict=True)
    metadata: dict[str, Any] | None = None
    supersedes: list[str] | None = Field(None, max_length=100)
    created_at: Created | None = None
    question: str | None = None
    answer: str | None = None
    score: float | None = Field(None, ge=0.0, le=1.0, strict=True)


class BatchIn(_Body):
    """Several memories, embedded in batches (``POST /v1/memories/batch``)."""

    items: list[MemoryIn] = Field(min_length=1, max_length=1000)


class MemoryPatch(_Body):
    """The fields to change (``PATCH /v1/memories/{id}``); a new content re-embeds."""

    content: str | None = Field(None, min_length=1, pattern=NAME_PATTERN)
    tags: list[str] | None = Field(None, max_length=100)
    importance: float | None = Field(None, ge=0.0, le=1.0, strict=True)
    metadata: dict[str, Any] | None = None
    reason: str = Field("", max_length=1000)


class FeedbackIn(_Body):
    helpful: bool = Field(strict=True)
    weight: float = Field(0.1, gt=0.0, le=1.0, strict=True)
    reason: str = Field("", max_length=1000)


# How the REST body spells each kind of search argument (search_args.Kind); the row gives the
# bounds, the default and the description. A count is also a JSON integer (_Search's validator).
_SEARCH_KINDS: dict[Kind, Any] = {
    "count": int,
    "number": Annotated[float, Field(strict=True, allow_inf_nan=False)],
    "flag": Annotated[bool, Field(strict=True)],
    "time": When,
    "name": Name,
    "session": SessionId,
    "profile": Annotated[str, Field(max_length=100)],
    "types": list[MemoryType],
    "tiers": list[Tier],
    "tags": Annotated[list[str], Field(max_length=100)],
}


def _search_field(arg: SearchArg) -> tuple[Any, Any]:
    """The REST body's field for ``arg``: its kind's type (optional unless it has a default),
    its default, bounds and ``doc``."""
    kind = _SEARCH_KINDS[arg.kind]
    return (kind if arg.default is not None else kind | None,
            Field(arg.default, ge=arg.low, le=arg.high, description=arg.doc))


class _Query(_Body):
    query: str = Field(min_length=1, pattern=NAME_PATTERN)


if TYPE_CHECKING:
    _Search = _Query
else:  # the search arguments the REST body offers, from their rows
    _COUNTS = [a.rest for a in SEARCH_ARGS if a.rest and a.kind == "count"]
    _Search = create_model(
        "_Search", __base__=_Query, **{a.rest: _search_field(a) for a in SEARCH_ARGS if a.rest},
        __validators__={"_whole": field_validator(*_COUNTS, mode="before")(_whole_or_none)})


class SearchIn(_Search):
    """A hybrid search (``POST /v1/search``); the filters of the library's ``search``."""

    def args(self) -> dict[str, Any]:
        """The fields given, by the library's keywords (:data:`REST_FIELDS`); those that are
        not search arguments (``max_tokens``) by their own names."""
        given = self.model_dump(exclude={"query"}, exclude_none=True)
        return {REST_FIELDS.get(k, k): [getattr(x, "value", x) for x in v]  # enums by value
                if isinstance(v, list) else v for k, v in given.items()}


class ContextIn(SearchIn):
    """``POST /v1/context``: a search packed as Markdown within ``max_tokens``."""

    max_tokens: int | None = Field(None, ge=16, le=1_000_000)

    _whole_max_tokens = field_validator("max_tokens", mode="before")(_whole_or_none)


class AskIn(_Body):
    question: str = Field(min_length=1, pattern=NAME_PATTERN)
    session: SessionId | None = None
    user: Name | None = None


class TurnIn(_Body):
    """A message appended to a session (``POST /v1/sessions/{session}/turns``)."""

    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: str = Field(min_length=1, pattern=NAME_PATTERN)
    user: Name | None = None
    agent: Name | None = None


class TurnsIn(_Body):
    messages: list[TurnIn] = Field(min_length=1, max_length=1000)


class DocumentIn(_Body):
    """A document to ingest (``POST /v1/documents``); the same ``source`` again re-ingests:
    unchanged chunks are kept, new ones added, the rest invalidated."""

    source: str = Field(min_length=1, max_length=1000)
    text: str = Field(min_length=1, pattern=NAME_PATTERN)
    tags: list[str] | None = Field(None, max_length=100)


class InboxRetryIn(_Body):
    event_ids: list[Annotated[int, Field(ge=1, le=EVENT_ID_MAX)]] | None = Field(
        None, max_length=10_000, description="The failed events to retry; all if absent.")

    @field_validator("event_ids", mode="before")
    @classmethod
    def _whole_ids(cls, v: Any) -> Any:
        return [_whole(i) for i in v] if isinstance(v, list) else v


class ConsolidateIn(_Body):
    jobs: list[Literal["sessions", "rescore", "promote", "abstract", "forget",
                       "inbox"]] | None = Field(None, min_length=1)


InboxStatus = Literal["pending", "processing", "done", "failed"]


# -- responses ---------------------------------------------------------------------------------
class ErrorInfo(BaseModel):
    """What went wrong: ``type`` a stable name (``invalid``, ``not_found``, ``unauthorized``,
    ``forbidden``, ``payload_too_large``, ``unavailable``...), ``message`` for people,
    ``request_id`` on a 500 (the server's log line has it); some errors add fields of their own
    (a duplicate webhook delivery's ``event_id``)."""

    model_config = ConfigDict(extra="allow")

    type: str
    message: str
    request_id: str | None = None


class ErrorResponse(BaseModel):
    """The body of every refusal (4xx) and failure (5xx)."""

    error: ErrorInfo


_ERROR_TEXT = {
    400: "Malformed JSON, or a request the server cannot handle",
    401: "No API key, or an unknown or revoked one",
    403: "The key's role does not allow this",
    404: "No such memory (of the key's tenant), or no such route",
    409: "The memory's state refuses the change (`conflict`: it is archived, restore it "
         "first), or the stored vectors were made by another embedding model "
         "(`embedder_mismatch`)",
    413: "The body is over server.max_body_bytes",
    415: "The body is not JSON",
    422: "The request breaks the schema or the settings' limits",
    503: "The store of record is unreachable",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: each of ``codes`` answered with an :class:`ErrorResponse`."""
    return {code: {"model": ErrorResponse, "description": _ERROR_TEXT[code]} for code in codes}


class Health(BaseModel):
    status: Literal["ok"]


class Ready(BaseModel):
    """``/readyz``: the store of record answers (no counts: the route needs no key)."""

    status: Literal["ready"]


class StoredMemory(MemoryRecord):
    """A stored memory, as the API shows it (without its embedding)."""

    embedding: SkipJsonSchema[list[float] | None] = Field(default=None, exclude=True,
                                                         repr=False)


class AddResults(BaseModel):
    """One result per input, in order."""

    results: list[AddResult]


class MemoryPage(BaseModel):
    """A page of memories: pass ``next`` as ``after`` for the next one (null on the last)."""

    items: list[StoredMemory]
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


class History(BaseModel):
    items: list[HistoryEntry]


if TYPE_CHECKING:
    class HitScores(BaseModel):
        """A hit's score components, those computed for it (model.HIT_SCORE_KEYS)."""
else:  # one optional number per field of the breakdown that holds one (model.HIT_SCORE_KEYS)
    HitScores = create_model(
        "HitScores", __doc__="A hit's score components, those computed for it.",
        **{k: (float | None, None) for k in HIT_SCORE_KEYS})


class Hit(BaseModel):
    """A search hit: the memory's main fields, its score, the components, the channels."""

    memory_id: str
    content: str
    memory_type: MemoryType
    tier: Tier
    tags: list[str]
    source: str
    score: float
    scores: HitScores
    channels: list[str]
    created_at: str = Field(json_schema_extra={"format": "date-time"})
    conflict: str | None = Field(None, description="Set when a newer current hit states the "
                                                   "same claim with another value")


class SearchResult(BaseModel):
    query: str
    hits: list[Hit]


class ContextResult(BaseModel):
    query: str
    context: str = Field(description="Markdown")


class SessionWindow(BaseModel):
    session: str
    items: list[StoredMemory]


class SessionClosed(BaseModel):
    session: str
    moved: int = Field(description="Active memories moved to short-term")


class Embedder(BaseModel):
    model: str
    dim: int


class Stats(BaseModel):
    """The tenant's counts."""

    model_config = ConfigDict(extra="allow")

    memories: int
    current: int
    superseded: int
    archived: int
    by_type: dict[str, int]
    by_tier: dict[str, int]
    open_sessions: int
    history_entries: int
    schema_version: int
    embedder: Embedder | None = None


class Deleted(BaseModel):
    """What erasing a user deleted, where (counts)."""

    live: int = 0
    archived: int = 0
    derived: int = 0
    rederived: int = 0
    history: int = 0
    cached_answers: int = 0
    cached_sessions: int = 0
    session_files: int = 0
    session_turns: int = 0
    inbox: int = 0


class UserDeleted(BaseModel):
    user: str
    deleted: Deleted


class Retried(BaseModel):
    retried: list[int] = Field(description="The event ids re-armed")


class InboxEvent(BaseModel):
    event_id: int
    source: str
    kind: str
    delivery: str
    status: InboxStatus
    attempts: int
    received_at: str = Field(json_schema_extra={"format": "date-time"})
    error: str | None = None
    memory_ids: list[str]


class InboxPage(BaseModel):
    """A page of inbox events: pass ``next`` as ``after`` for the next one (null on the last)."""

    items: list[InboxEvent]
    next: str | None = None


class DeliveryAccepted(BaseModel):
    """A webhook delivery committed to the inbox (202): its memories follow."""

    status: Literal["accepted"]
    event_id: int
    events: int = Field(description="Events in it (an Alertmanager delivery may hold several)")


class DeliveryNoted(BaseModel):
    """A webhook delivery with nothing new to remember (200): ``ignored`` (with its ``reason``)
    or ``duplicate`` (received before, whatever the sender: the first one's ``event_id``)."""

    status: Literal["ignored", "duplicate"]
    reason: str | None = None
    event_id: int | None = None
    message: str | None = None
