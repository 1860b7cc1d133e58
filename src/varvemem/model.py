"""The memory model: one entity for every kind of memory (SPEC ENT-1, ENT-2)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timezone
from enum import Enum
from typing import Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import ValidationError, describe_validation_error

# The most any setting may allow (``update.metadata_max_depth`` / ``metadata_max_bytes`` /
# ``tag_max_chars``): a record nests its metadata a few levels deeper again (history entries),
# and its serialiser refuses 255 levels; drafts are held to these whatever the settings.
METADATA_DEPTH_CEILING = 128
METADATA_BYTES_CEILING = 1024 * 1024
TAG_CHARS_CEILING = 1000


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def in_utc(value: datetime, field: str) -> datetime:
    """``value`` in UTC (a naive one is taken to be UTC already); ValueError naming ``field``
    when its offset takes it out of the range of dates (years 1..9999)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    try:
        return value.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        raise ValueError(f"{field} {value.isoformat()} is outside the range of dates once in "
                         "UTC (years 1..9999)") from None


def check_text(value: Any, field: str) -> None:
    """:class:`~varvemem.errors.ValidationError` (a ValueError) naming ``field`` (and the place
    inside it) when a string in ``value`` (text, or lists and mappings of them, keys included)
    holds a lone surrogate (not Unicode: it cannot be stored or sent) or U+0000 (PostgreSQL's
    text and JSON cannot hold it: refused on every store alike)."""
    stack: list[tuple[str, Any]] = [(field, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            if "\x00" in v:
                raise ValidationError(f"{where} holds U+0000 (a NUL character), which no text "
                                      "field may hold")
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValidationError(f"{where} holds a lone surrogate "
                                      f"(U+{ord(v[exc.start]):04X}): not valid Unicode") from None
        elif isinstance(v, dict):
            for k, item in v.items():
                stack.append((f"{where} key {k!r}" if isinstance(k, str) else where, k))
                stack.append((f"{where}.{k}", item))
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(v))


def check_metadata(value: dict[str, Any], max_depth: int, max_bytes: int,
                   field: str = "metadata") -> None:
    """ValueError naming ``field`` unless ``value`` is JSON of valid text, nested at most
    ``max_depth`` levels (the mapping itself is level 1) and at most ``max_bytes`` once
    serialised."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:  # before serialising: a deep value would exhaust the recursion limit
        v, depth = stack.pop()
        if isinstance(v, (dict, list, tuple)):
            if depth > max_depth:
                raise ValueError(f"{field} is nested over {max_depth} levels "
                                 "(update.metadata_max_depth)")
            items = v.values() if isinstance(v, dict) else v
            stack.extend((item, depth + 1) for item in items)
    check_text(value, field)
    try:
        size = len(json.dumps(value, default=_iso, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{field} must be JSON-serialisable: {exc}") from None
    if size > max_bytes:
        raise ValueError(f"{field} is {size} bytes as JSON, over the limit of {max_bytes} "
                         "(update.metadata_max_bytes)")


class _Model(BaseModel):
    """The models' base: each builds its validator on first use (``defer_build``), not when
    this module is imported. A command that reads a few fields of a record (``varvemem
    stats``) builds one or two of them, not all."""

    model_config = ConfigDict(defer_build=True)


class MemoryType(str, Enum):
    """What a memory came from (ENT-1). ``qa`` is seed 2's scored question/answer pair."""

    DIALOGUE = "dialogue"
    TOOL_CALL = "tool_call"
    KNOWLEDGE = "knowledge"
    EVENT = "event"
    EXPERIENCE = "experience"
    QA = "qa"


class Tier(str, Enum):
    """The five tiers of SPEC TIER-1..5."""

    ACTIVE = "active"
    SHORT_TERM = "short_term"
    MID_TERM = "mid_term"
    LONG_TERM = "long_term"
    ARCHIVE = "archive"


@dataclass(frozen=True)
class TypeTraits:
    """What the engines ask of a memory type: one row of :data:`TYPES`."""

    session_window: bool  # TIER-1 while its session runs: the active window, the session cache
    states_facts: bool  # may state a claim a newer memory changes (claim rules, conflicts)
    statement: bool  # a statement of knowledge: the supersession judge reads it, and its days
    episode: bool  # tells what happened: failures are found in it, lessons drawn from it
    resolves: bool  # may tell that a failure was resolved
    written: bool  # written down, not said in talk: a change cue alone may supersede by it
    derived: bool  # made by varvemem from other memories: erasure follows its sources
    importance: float  # base importance, before the signals its text shows (types.<t>.importance)
    tier: Tier  # the tier a new memory enters outside a session window (types.<t>.tier)


# What each memory type is. A new type is one row here; settings may override its
# importance, tier and TTL (``types.<type>.*``).
TYPES: dict[MemoryType, TypeTraits] = {
    #                           session_window, states_facts, statement, episode, resolves,
    #                           written, derived, importance, tier
    MemoryType.DIALOGUE:   TypeTraits(True , True , False, True , True , False, False, 0.3,
                                      Tier.SHORT_TERM),
    MemoryType.TOOL_CALL:  TypeTraits(True , False, False, True , True , False, False, 0.3,
                                      Tier.SHORT_TERM),
    MemoryType.KNOWLEDGE:  TypeTraits(False, True , True , False, True , True , False, 0.6,
                                      Tier.LONG_TERM),
    MemoryType.EVENT:      TypeTraits(False, True , False, True , True , False, False, 0.4,
                                      Tier.MID_TERM),
    MemoryType.EXPERIENCE: TypeTraits(False, True , True , False, False, True , True , 0.7,
                                      Tier.LONG_TERM),
    MemoryType.QA:         TypeTraits(False, False, False, False, False, True , True , 0.5,
                                      Tier.MID_TERM),
}


def types_where(trait: Callable[[TypeTraits], bool]) -> tuple[MemoryType, ...]:
    """The memory types whose traits pass ``trait`` (``types_where(lambda t: t.episode)``)."""
    return tuple(t for t, traits in TYPES.items() if trait(traits))


class TTLMode(str, Enum):
    """How a memory's weight decays with age (SPEC TTL-1)."""

    OFF = "off"
    HARD = "hard"
    LINEAR = "linear"
    EXPONENTIAL = "exponential"


class Scope(_Model):
    """Who a memory belongs to. ``tenant`` isolates completely; the others narrow."""

    model_config = ConfigDict(frozen=True)

    tenant: str = "default"
    user: str | None = None
    agent: str | None = None
    session: str | None = None


class MemoryRecord(_Model):
    """One memory, whatever its type: every attribute of SPEC ENT-2 plus validity in time."""

    memory_id: str
    content: str
    memory_type: MemoryType
    tier: Tier
    scope: Scope = Field(default_factory=Scope)
    source: str = "user"
    source_reliability: float = Field(0.7, ge=0.0, le=1.0)
    importance: float = Field(0.5, ge=0.0, le=1.0)
    tags: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    related_memory_ids: list[str] = Field(default_factory=list)
    embedding: list[float] | None = Field(default=None, repr=False)
    created_at: datetime
    updated_at: datetime
    last_retrieved_at: datetime | None = None
    retrieval_count: int = 0
    expires_at: datetime | None = None
    ttl_mode: TTLMode = TTLMode.OFF
    ttl_days: float | None = Field(default=None, gt=0)
    valid_from: datetime
    valid_to: datetime | None = None
    superseded_by: str | None = None
    # The Q&A shape (memory_type == "qa"): question, answer and its quality score.
    question: str | None = None
    answer: str | None = None
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    content_hash: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    # The turns around a dialogue memory in its session, indexed with it (contextual keys)
    # but not part of its content: the ones before it, nearest first, and the reply to it.
    context_before: list[str] = Field(default_factory=list)
    context_after: list[str] = Field(default_factory=list)
    # Lifecycle bookkeeping: when it entered its tier (retention counts from there, else from
    # created_at), the retrievals re-scoring has credited, and when it last decayed.
    tier_since: datetime | None = None
    scored_retrievals: int = 0
    decayed_at: datetime | None = None


HistoryAction = Literal["create", "update", "supersede", "merge", "link", "delete", "feedback",
                        "move", "rescore", "abstract", "archive", "restore"]


class HistoryEntry(_Model):
    """One change to a memory: what changed, the old and new values, who did it and why."""

    memory_id: str
    action: HistoryAction
    at: datetime
    actor: str
    reason: str = ""
    old: dict[str, Any] | None = None
    new: dict[str, Any] | None = None


class ScoreBreakdown(_Model):
    """The components behind one hit's score (SPEC RET-2), each in 0..1."""

    semantic: float = 0.0
    keyword: float = 0.0
    tag: float = 0.0
    recency: float = 0.0
    importance: float = 0.0
    reliability: float = 0.0
    ttl_weight: float = 1.0
    quality: float | None = None
    # Why the hit may be shown at all (``retrieval.relevance_floor``): the cosine plus a share
    # of the query's terms the memory holds. None where not computed.
    evidence: float | None = None
    # Set by read-time conflict resolution: another current hit, newer, states the same claim
    # with a different value; this one is likely superseded (the reason, naming the other).
    conflict: str | None = None
    # How far the memory was created within the time the query names ("last week", "昨天"):
    # 1 inside, 0 outside (``retrieval.time_words``). None when the query names no time.
    time_match: float | None = None
    # What the time asked multiplies the score by: 1 - retrieval.time_words.weight x (1 -
    # time_match). None when the query names no time.
    time_factor: float | None = None
    # Set by read-time conflict resolution: the score of a newer hit of the same claim this
    # one was put after; its score is at most this. None when it was put after none.
    ceiling: float | None = None
    # Set by the re-scorer (``retrieval.rerank``). ``cross_keyword``: a memory in another
    # script than the query shares none of its words; it is given the best S_kw of the
    # candidates in the query's script that are no closer to it in meaning (``keyword`` stays
    # its own). ``second_semantic``: the second model's standing of it among the candidates
    # of its script (0..1), which may have raised ``semantic``.
    cross_keyword: float | None = None
    second_semantic: float | None = None
    # How likely the hit answers the query (:mod:`varvemem.engines.relevance`), 0..1; None
    # where no relevance judge ran. Under a ``learned`` profile: relevance = sigmoid(bias +
    # sum(contributions)), one contribution per feature the judge read, and the score is
    # relevance x ttl_weight (at most ``ceiling``). Every score is scoring.combine of these.
    relevance: float | None = None
    contributions: dict[str, float] | None = None
    bias: float | None = None


class SearchHit(_Model):
    """A retrieved memory with its final score, its components and the channels that found it."""

    memory: MemoryRecord
    score: float
    scores: ScoreBreakdown
    channels: list[str] = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        m = self.memory
        return {
            "memory_id": m.memory_id,
            "content": m.content,
            "memory_type": m.memory_type.value,
            "tier": m.tier.value,
            "tags": m.tags,
            "source": m.source,
            "score": round(self.score, 6),
            "scores": {
                k: round(v, 6)
                for k, v in self.scores.model_dump().items()
                if v is not None and k in HIT_SCORE_KEYS
            },
            "channels": self.channels,
            "created_at": m.created_at.isoformat(),
            **({"conflict": self.scores.conflict} if self.scores.conflict else {}),
            **({"contributions": {k: round(v, 6) for k, v in self.scores.contributions.items()},
                "bias": round(self.scores.bias or 0.0, 6)}
               if self.scores.contributions is not None else {}),
        }


# The components of a breakdown, as a hit's JSON ``scores`` and REST's ``HitScores`` give
# them: every field of :class:`ScoreBreakdown` that holds one number, so a new one is added
# there only (``bias``, the learned profile's logit, goes beside ``contributions``).
HIT_SCORE_KEYS: tuple[str, ...] = tuple(
    name for name, f in ScoreBreakdown.model_fields.items()
    if f.annotation in (float, float | None) and name != "bias")


AddStatus = Literal["created", "duplicate", "merged"]


class AddResult(_Model):
    """What the update engine did with one input, and which path (rules or LLM) each step took."""

    memory_id: str
    status: AddStatus
    superseded: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list)
    steps: dict[str, str] = Field(default_factory=dict)


class MemoryChanges(_Model):
    """What a tenant's memories went through since a position of the change feed
    (:meth:`varvemem.Memory.changes`): the memories written since, as they are now (created or
    changed by a write; superseded ones too), and the ids removed since (deleted, archived,
    erased) that were not written again. ``position``: where the next call starts."""

    position: int
    written: list[MemoryRecord] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)


class IngestReport(_Model):
    """The outcome of ingesting documents: per file, chunks added, kept and invalidated."""

    files: int = 0
    unchanged_files: int = 0
    added: list[str] = Field(default_factory=list)
    kept: int = 0
    invalidated: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)


class Draft(_Model):
    """A memory-to-be produced by extraction, before classification, scoring and storage.
    Invalid fields raise :class:`~varvemem.errors.ValidationError` naming them: a draft is
    made from input at every boundary."""

    model_config = ConfigDict(extra="forbid")

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except pydantic.ValidationError as exc:
            raise ValidationError(describe_validation_error(exc, "memory")) from None

    content: str
    memory_type: MemoryType | None = None
    tier: Tier | None = None
    scope: Scope = Field(default_factory=Scope)
    source: str = Field("user", min_length=1, max_length=1000)
    importance: float | None = Field(None, ge=0.0, le=1.0)
    source_reliability: float | None = Field(None, ge=0.0, le=1.0)
    tags: list[str] = Field(default_factory=list, max_length=100)
    ttl_mode: TTLMode | None = None
    ttl_days: float | None = Field(None, gt=0, le=36_500)  # a century: dates stay in range
    question: str | None = None
    answer: str | None = None
    score: float | None = Field(None, ge=0.0, le=1.0)
    supersedes: list[str] = Field(default_factory=list)
    created_at: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    keywords: list[str] | None = Field(None, max_length=100)  # else extracted from the text

    @field_validator("tags", mode="before")
    @classmethod
    def _clean_tags(cls, v: Any) -> list[str]:
        tags = normalise_tags(v)
        check_text(tags, "tags")
        for t in tags:
            if len(t) > TAG_CHARS_CEILING:
                raise ValueError(f"tag {t[:20]!r}... is over {TAG_CHARS_CEILING} characters")
        return tags

    @field_validator("content", "source", "question", "answer", "supersedes", "keywords")
    @classmethod
    def _valid_text(cls, v: Any, info: Any) -> Any:
        check_text(v, info.field_name)
        return v

    @field_validator("created_at")
    @classmethod
    def _plausible_time(cls, v: datetime | None) -> datetime | None:
        # Retention and expiry add up to a century to it: keep the sums inside datetime's range.
        if v is None:
            return None
        v = in_utc(v, "created_at")
        if not 1900 <= v.year <= 2800:
            raise ValueError("created_at must be between the years 1900 and 2800")
        return v

    @field_validator("metadata")
    @classmethod
    def _json_metadata(cls, v: dict[str, Any]) -> dict[str, Any]:
        check_metadata(v, METADATA_DEPTH_CEILING, METADATA_BYTES_CEILING)
        return v


def _iso(v: Any) -> str:
    if isinstance(v, datetime):
        return v.isoformat()
    raise TypeError(f"{type(v).__name__} is not JSON-serialisable")


def normalise_tags(tags: str | Iterable[str] | None) -> list[str]:
    """Tags are lower-case, stripped, de-duplicated, order kept; one string is one tag."""
    if isinstance(tags, str):
        tags = [tags]
    out: list[str] = []
    for t in tags or []:
        if not isinstance(t, str):
            raise ValueError(f"tag {t!r} is not text")
        t = t.strip().lower()
        if t and t not in out:
            out.append(t)
    return out


class TierLimit(_Model):
    """What retrieval sees of one tier (TIER-2: importance and last-N-days)."""

    model_config = ConfigDict(frozen=True)

    tier: Tier
    min_importance: float = 0.0
    since: datetime | None = None


class VectorFilter(_Model):
    """What a vector index filters on (its :class:`~varvemem.stores.base.VectorAttrs`): the
    scope, types and tiers, and whether a memory is current. Scope fields narrow (None = any);
    without ``tiers``, archived memories are left out unless ``include_archive``."""

    tenant: str = "default"
    user: str | None = None
    agent: str | None = None
    session: str | None = None
    types: list[MemoryType] | None = None
    tiers: list[Tier] | None = None
    include_superseded: bool = False  # else current memories only (valid now)
    include_archive: bool = False


class SearchFilter(VectorFilter):
    """What retrieval may return: a :class:`VectorFilter` plus what only the store of record
    can check (time, tags, expiry, the tiers' rules). Tags match any-of."""

    tags: list[str] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    as_of: datetime | None = None
    include_expired: bool = False
    # Per-tier retrieval rules (settings ``lifecycle.tiers``): memories of ``tier`` need at
    # least ``min_importance`` and, when ``since`` is set, to have entered the tier (else been
    # created) at or after it.
    tier_limits: list[TierLimit] = Field(default_factory=list)


class Verdict(str, Enum):
    """Why a memory is or is not among a search's hits (:class:`WhyNot`)."""

    RETURNED = "returned"
    NOT_FOUND = "not_found"  # never in a WhyNot: the API raises NotFoundError instead
    FILTERED = "filtered"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    ARCHIVED = "archived"
    NOT_RETRIEVED = "not_retrieved"
    BELOW_FLOOR = "below_floor"
    RANKED_OUT = "ranked_out"


class FloorCheck(_Model):
    """The relevance floor (``retrieval.relevance_floor``) as one search applied it."""

    floor: float
    evidence: float | None = None  # this memory's, when it was scored
    best: float | None = None  # the best evidence among the hits within top_k
    applied: bool = False  # the floor emptied the results


class WhyNot(_Model):
    """Why ``memory_id`` is (or is not) in the results of a search for ``query``
    (:meth:`Memory.why_not`)."""

    memory_id: str
    query: str
    verdict: Verdict
    reason: str
    rule: str | None = None  # the filter that excluded it
    superseded_by: str | None = None  # the current memory at the end of its chain
    chain: list[str] = Field(default_factory=list)  # its successors, in order
    rank: int | None = None  # 1-based, among every scored candidate
    score: float | None = None
    scores: ScoreBreakdown | None = None
    last_returned: SearchHit | None = None  # the last hit the search returned
    top_k: int
    weights: dict[str, float] = Field(default_factory=dict)
    profile: str
    mode: str
    floor: FloorCheck
    channels: list[str] = Field(default_factory=list)
    candidates: int = 0  # how many candidates were scored


class DayCount(_Model):
    """Memories created on one (UTC) day, and the total created up to its end."""

    day: date
    created: int
    total: int


class JobSchedule(_Model):
    """One lifecycle job's schedule (``lifecycle.<job>_every_minutes``)."""

    job: str
    every_minutes: float
    last_run: datetime | None = None  # meta ``lifecycle.<job>.last_run`` (runs of all tenants)
    next_due: datetime | None = None  # None: never run, due now
    due: bool = True


class Overview(_Model):
    """A tenant's memory at a glance (:meth:`Memory.overview`)."""

    tenant: str
    now: datetime
    memories: int  # live and archived
    by_tier: dict[str, int] = Field(default_factory=dict)
    by_type: dict[str, int] = Field(default_factory=dict)  # live memories
    by_tier_type: dict[str, dict[str, int]] = Field(default_factory=dict)  # live memories
    growth: list[DayCount] = Field(default_factory=list)  # live memories, every day
    recent_adds: list[MemoryRecord] = Field(default_factory=list)
    recent_changes: list[HistoryEntry] = Field(default_factory=list)
    inbox: dict[str, int] = Field(default_factory=dict)
    lifecycle: list[JobSchedule] = Field(default_factory=list)
