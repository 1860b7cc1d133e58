"""The FAQ assistant's settings (seed 2): its L3 fast path (``faq``) and its L1 session
history (``history``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Section


class FAQSettings(Section):
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


class HistorySettings(Section):
    """L1 session history (seed 2): Markdown files under ``<home>/sessions``."""

    slim_chars: int = Field(500, ge=20)  # HISTORY_SLIM_CHARS: longer user messages are cut
    summary_chars: int = Field(300, ge=20)  # an answer's local extractive summary, at most
