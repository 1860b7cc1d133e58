"""The write path's settings (``update``): dedup, merge, supersession, claims, importance
signals, tags, and document ingest (what each type starts with: ``types``, :mod:`.types`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from ..model import MemoryType
from .base import Section

_SupersedeRule = Literal["cue", "transition", "negation", "frame"]


def _every_supersede_rule() -> list[_SupersedeRule]:
    return ["transition", "negation", "frame", "cue"]


class AttributeWords(Section):
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


class UpdateSettings(Section):
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
    # Document ingest (engines/update/ingest.py): a file is read section by section and its new chunks
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
    # source_reliability by the part of ``source`` before the first ":" (SPEC UPD-6).
    reliability_by_source: dict[str, float] = Field(default_factory=lambda: {
        "document": 0.9, "admin": 0.9, "experience": 0.8, "webhook": 0.8, "event": 0.8,
        "tool": 0.75, "user": 0.7, "agent": 0.6, "llm": 0.5, "default": 0.6})
    # The tables ``types.<type>.*`` replaced, read for one release: declared so a file's and
    # a variable's tables merge as before; Settings moves them (settings/old_keys.py).
    importance_by_type: dict[str, Any] | None = Field(None, exclude=True)
    tier_by_type: dict[str, Any] | None = Field(None, exclude=True)
    ttl_by_type: dict[str, Any] | None = Field(None, exclude=True)
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

    @field_validator("reliability_by_source", "importance_signals", mode="before")
    @classmethod
    def _merge_tables(cls, v: Any, info: Any) -> Any:
        """A partial table from a file or variable overrides only the keys it names."""
        if isinstance(v, dict):
            default = cls.model_fields[info.field_name].get_default(call_default_factory=True)
            return {**{getattr(k, "value", k): x for k, x in default.items()}, **v}
        return v

    @field_validator("reliability_by_source", "importance_signals")
    @classmethod
    def _unit_interval(cls, v: dict[Any, float]) -> dict[Any, float]:
        for key, value in v.items():
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{getattr(key, 'value', key)}: {value} is not in 0..1")
        return v
