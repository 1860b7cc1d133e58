"""Per-hit relevance (issue 40): how likely one hit answers the query, judged for each hit.

A cosine alone does not say it: the same attribute of another service sits as close as the
answer, and a paraphrase in the other language sits lower than an unrelated text in the
query's own. The judge reads what can be measured of a (query, hit) pair and of the hit's
place among the others (:data:`FEATURES`, one row each) and gives a probability through a
logistic function fitted on questions written by other hands (``training/relevance``,
``training/relevance/train.py``), one fit per embedder (cosines differ in scale by model).

A search returns the hits whose relevance reaches ``retrieval.min_relevance``; ``top_k`` is a
maximum, not a quota. When no hit reaches the relevance floor, a statement needs
``Judge.under_floor`` (``retrieval.min_relevance_under_floor``) and must not lack the query's
subject words (:func:`names_no_subject`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from ..language import asks
from ..model import MemoryRecord, MemoryType
from ..text import date_terms, identifiers, term_set
from .claims import Lexicon, slots, values
from .rerank import script

# What the judge reads of one hit, in this order. ``query`` features are the same for every
# hit of a search; the fit learns how they move the others.
FEATURES: tuple[str, ...] = (
    "cosine",          # the query's cosine with the hit
    "cosine_gap",      # the best hit's cosine minus this one's
    "cosine_z",        # its standing among the hits' cosines (z-score, 0 for a single hit)
    "own_terms",       # share of the query's distinct terms in the hit's text, tags, keywords
    "context_terms",   # share found only around it (neighbouring turns, its date in words)
    "keyword",         # S_kw: BM25 relative to the best match
    "bm25",            # log(1 + BM25 per query term): absolute, so a weak best match is weak
    "across",          # 1 when the hit is in another script than the query
    "across_cosine",   # the cosine again for a hit across scripts (they run lower)
    "time_asked",      # 1 when the query names a time
    "time_match",      # the hit's place in that time (0 outside, 1 inside)
    "query_terms",     # log(1 + the query's distinct terms): how specific the question is
    "subject_absent",  # 1 when none of the query's subject words of the hit's script is in it
    "rank",            # log(1 + its place in the ranking)
    "score_gap",       # the best hit's score minus this one's
    "id_asked",        # 1 when the query names an identifier (pg-3, eks-stg-2)
    "id_shared",       # 1 when the hit holds one of them
    "length",          # log(1 + the hit's distinct terms)
    "kind_asked",      # 1 when the query asks for a kind of answer (a phone, a port, a price)
    "kind_absent",     # 1 when it does and the hit holds none of them (no noun, no value)
    "script_gap",      # the best cosine among the hits of its own script minus its own
    "attribute_asked",   # 1 when the query names an attribute (a port, a cluster, an owner)
    "attribute_absent",  # 1 when it does and the hit states none of them
)


@dataclass(frozen=True)
class Query:
    """What one search knows of its query, the same for each of its hits."""

    text: str
    terms: frozenset[str]
    subject: frozenset[str]
    timed: bool
    asks: tuple[asks.AnswerKind, ...] = ()
    lexicon: Lexicon | None = None  # the attribute words: the query's and each hit's

    @property
    def attributes(self) -> frozenset[str]:
        """The attributes the query names (none without a lexicon)."""
        return stated(self, self.text)


@dataclass(frozen=True)
class Hit:
    """What the judge reads of one hit beside the query."""

    memory: MemoryRecord
    cosine: float
    keyword: float
    bm25: float
    score: float
    time_match: float


def features(query: Query, hits: Sequence[Hit]) -> np.ndarray:
    """One row of :data:`FEATURES` per hit (``hits`` in ranked order)."""
    out = np.zeros((len(hits), len(FEATURES)), dtype=np.float64)
    if not hits:
        return out
    cos = np.array([h.cosine for h in hits], dtype=np.float64)
    sd = float(cos.std())
    best_cos, best_score = float(cos.max()), max(h.score for h in hits)
    qscript = script(query.text)
    scripts = [script(h.memory.content) for h in hits]
    best_by_script = {sc: max(float(c) for c, s2 in zip(cos, scripts) if s2 == sc)
                      for sc in set(scripts)}
    q_ids = set(identifiers(query.text))
    n_terms = len(query.terms)
    attrs = query.attributes
    for i, h in enumerate(hits):
        m = h.memory
        own, around = terms_of(m)
        across = float(qscript is not None and script(m.content) not in (None, qscript))
        out[i] = (
            h.cosine, best_cos - h.cosine, (h.cosine - float(cos.mean())) / sd if sd > 0 else 0.0,
            len(query.terms & own) / n_terms if n_terms else 0.0,
            len(query.terms & around) / n_terms if n_terms else 0.0,
            h.keyword, math.log1p(h.bm25 / max(1, n_terms)),
            across, across * h.cosine,
            float(query.timed), h.time_match,
            math.log1p(n_terms),
            float(subject_absent(query.subject, own | around) and not h.time_match),
            math.log1p(i), best_score - h.score,
            float(bool(q_ids)), float(bool(q_ids & set(identifiers(m.content)))),
            math.log1p(len(own)),
            float(bool(query.asks)), float(bool(query.asks) and not holds(query.asks, m.content)),
            best_by_script[scripts[i]] - h.cosine,
            float(bool(attrs)), float(bool(attrs) and not attrs & stated(query, m.content)),
        )
    return out


def terms_of(m: MemoryRecord) -> tuple[frozenset[str], frozenset[str]]:
    """The terms of a memory's own text (with its tags and keywords), and those only around
    it (neighbouring turns, its date in words)."""
    own = term_set(" ".join([m.content, *m.tags, *m.keywords]))
    return own, term_set(" ".join([*m.context_before, *m.context_after,
                                   date_terms(m.created_at)])) - own


def names_no_subject(query: Query, m: MemoryRecord) -> bool:
    """Whether ``m`` holds none of the query's subject words of its own script
    (:func:`subject_absent`: False for a query with none, or none in that script), whatever
    time it is of."""
    own, around = terms_of(m)
    return subject_absent(query.subject, own | around)


def stated(query: Query, text: str) -> frozenset[str]:
    """The attributes ``text`` states, by the query's lexicon (none without one)."""
    return slots(text, query.lexicon).attributes if query.lexicon else frozenset()


def holds(kinds: Sequence[asks.AnswerKind], text: str) -> bool:
    """Whether ``text`` holds an answer of one of ``kinds``: names it, or has a value of it."""
    found = {v.kind for v in values(text)}
    return any(asks.named(k, text) or found & set(k.values) for k in kinds)


def subject_absent(subject: frozenset[str], found: frozenset[str]) -> bool:
    """None of ``subject``'s words of the script ``found`` is mostly written in is in it (a
    Chinese text with Latin ids in it cannot hold an English question's words)."""
    if not subject:
        return False
    cjk = any(script(t) == "cjk" for t in found)
    here = {t for t in subject if (script(t) == "cjk") == cjk}
    return bool(here) and not here & found


# The memory types a judge reads, by its kind. Statements only so far: a fit on the chat
# writers' turns (training/relevance, c1-c6) ranked turns no better than the weighted sum on
# LoCoMo and judged the turns of a small store all irrelevant, so turns, tool calls,
# platform events and Q&A pairs keep the weighted sum's score and are not cut.
# Experiences are derived by the lifecycle in a form of their own, which no writer wrote: they
# keep the weighted sum's score too.
KINDS: dict[str, tuple[MemoryType, ...]] = {
    "statement": (MemoryType.KNOWLEDGE,),
}


def kind_of(memory_type: MemoryType) -> str | None:
    """The kind of judge that reads memories of ``memory_type`` (None: none does)."""
    return next((k for k, types in KINDS.items() if memory_type in types), None)


@dataclass(frozen=True)
class Judge:
    """A fitted logistic function of standardised :data:`FEATURES` for one kind of memory."""

    model_id: str
    kind: str
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    bias: float
    threshold: float  # the fit's recommended ``retrieval.min_relevance``
    fitted: str  # what it was fitted on, for the record
    # The fit's ``retrieval.min_relevance_under_floor`` (1: nothing under the floor).
    under_floor: float = 1.0

    def probability(self, x: np.ndarray) -> np.ndarray:
        """The relevance of each row of ``x`` in 0..1."""
        if not len(x):
            return np.zeros(0)
        z = self.contributions(x).sum(axis=1) + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-z)))

    def contributions(self, x: np.ndarray) -> np.ndarray:
        """Each feature's share of each row's logit: relevance = sigmoid(bias + the row's
        sum)."""
        return np.asarray(((x - self.mean) / self.scale) * self.coef)

    def to_json(self) -> dict[str, Any]:
        return {"model_id": self.model_id, "kind": self.kind, "features": list(FEATURES),
                "mean": self.mean.tolist(), "scale": self.scale.tolist(),
                "coef": self.coef.tolist(), "bias": self.bias, "threshold": self.threshold,
                "under_floor": self.under_floor, "fitted": self.fitted}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Judge:
        if tuple(d["features"]) != FEATURES:
            raise ValueError("the relevance judge was fitted on other features")
        return cls(d["model_id"], d["kind"], np.array(d["mean"]), np.array(d["scale"]),
                   np.array(d["coef"]), float(d["bias"]), float(d["threshold"]), d["fitted"],
                   float(d.get("under_floor", 1.0)))


@lru_cache(maxsize=4)
def shipped(model_id: str) -> dict[str, Judge] | None:
    """The judges shipped for the embedder ``model_id`` by kind, or None unless one was
    fitted for every kind of :data:`KINDS`."""
    path = resources.files(__package__).joinpath("relevance_judges.json")
    if not path.is_file():
        return None
    judges = {d["kind"]: Judge.from_json(d) for d in json.loads(path.read_text("utf-8"))
              if d["model_id"] == model_id}
    return judges if set(judges) == set(KINDS) else None
