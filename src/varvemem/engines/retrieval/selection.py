"""What a search returns of its ranking (:class:`HitSelection`, a base of the
:class:`~.engine.RetrievalEngine`): the scored hits and their evidence, the relevance
judges and the relevance floor, and conflicting claims resolved; and the :class:`Ranking` a
search decides before its cut to ``top_k``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from ...embeddings import Embedder, embedder_spec
from ...language import asks
from ...model import TYPES, MemoryRecord, ScoreBreakdown, SearchFilter, SearchHit
from ...settings import Profile, views
from ...stores import parts
from ...stores.base import Candidate
from .. import claims, conflicts, relevance, scoring, timewords
from .. import judge as judging
from .measures import evidence

# How many hits the relevance judge reads together at least (its features compare each with
# the others; it was fitted on this many): max(top_k, this).
RELEVANCE_WINDOW = 20


@dataclass
class Ranking:
    """One search's decisions before its cut to ``top_k`` (:meth:`RetrievalEngine.rank`):
    the filter as applied (tier rules and a time window added), the channels that found each
    candidate, the ones the store's filter passed, and every scored candidate best first."""

    query: str
    flt: SearchFilter
    now: datetime
    top_k: int
    profile: Profile
    window: timewords.TimeWindow | None
    terms: set[str]
    channels: dict[str, list[str]]
    vec_hits: dict[str, float]
    kw_hits: dict[str, float]
    passed: set[str]
    full: dict[str, MemoryRecord]
    ranked: list[tuple[float, Candidate, ScoreBreakdown]] = field(default_factory=list)
    # Candidates that passed the filter but scored 0 or under the profile's ``min_score``.
    unscored: dict[str, tuple[float, ScoreBreakdown]] = field(default_factory=dict)
    subject: frozenset[str] | None = None
    # What the relevance judge read of the query (:meth:`RetrievalEngine.judged_hits`).
    question: relevance.Query | None = None


class ReadConfig(views.Retrieval, views.Update, views.Types, views.Conflicts, views.Context,
                 views.Lifecycle, views.Embedder, views.SecondModel, views.Server, Protocol):
    """The settings sections the read path reads."""


class ReadStores(parts.Records, parts.Vectors, parts.Archived, parts.Notices, Protocol):
    """The stores the read path uses."""


class HitSelection:
    """What :meth:`RetrievalEngine.search` returns of a :class:`Ranking`: the hits cut to
    ``top_k``, read by the relevance judges and the relevance floor, conflicts resolved."""

    settings: ReadConfig
    stores: ReadStores
    _embedder: Callable[[], Embedder]

    def evidence_of(self, ranking: Ranking, memory: MemoryRecord, parts: ScoreBreakdown
                    ) -> float:
        """The relevance floor's :func:`evidence` of one scored candidate of ``ranking``."""
        cfg = self.settings.retrieval
        # What the query's time words say for a memory of that time: the whole question when
        # its other words are generic ("what did I do yesterday?"), else a share of its terms.
        tw = cfg.time_words
        time_ev = (0.0, 0.0) if ranking.window is None else (tw.evidence, 0.0) \
            if not ranking.terms else (0.0, tw.term_weight)
        return evidence(ranking.vec_hits.get(memory.memory_id), ranking.terms, memory,
                        cfg.context_weight, parts.time_match or 0.0, *time_ev,
                        subject=ranking.subject, absent_factor=cfg.absent_subject_factor)

    def scored_hits(self, ranking: Ranking, depth: int | None = None) -> list[SearchHit]:
        """The first ``depth`` (default ``top_k``) of ``ranking`` as hits, before relevance
        and conflict resolution; those among the first ``top_k`` with their evidence (the
        others' is read when asked: :meth:`with_evidence`)."""
        ranked = ranking.ranked[:depth or ranking.top_k]
        full = ranking.full
        full.update(self.stores.records.get_many(
            ranking.flt.tenant, [r.memory_id for _, r, _ in ranked if r.memory_id not in full]))
        hits = [SearchHit(memory=full[r.memory_id], score=total, scores=parts.model_copy(),
                          channels=ranking.channels[r.memory_id])
                for total, r, parts in ranked if r.memory_id in full]
        for h in hits[:ranking.top_k]:
            self.with_evidence(ranking, h)
        return hits

    def with_evidence(self, ranking: Ranking, hit: SearchHit) -> SearchHit:
        """``hit`` with its evidence (:meth:`evidence_of`) in its breakdown. Read only for the
        hits that may be returned or decide the floor: it parses the hit's text."""
        if hit.scores.evidence is None:
            hit.scores.evidence = self.evidence_of(ranking, hit.memory, hit.scores)
        return hit

    def reaches_floor(self, ranking: Ranking, hits: Sequence[SearchHit], floor: float) -> bool:
        """Whether one of ``hits`` has evidence of at least ``floor``; their evidence is read
        in order, until one has."""
        return any((h.scores.evidence or 0.0) >= floor for h in hits) or any(
            (self.with_evidence(ranking, h).scores.evidence or 0.0) >= floor
            for h in hits if h.scores.evidence is None)

    def judged_hits(self, ranking: Ranking) -> list[SearchHit]:
        """The hits the relevance judge reads together (the first
        ``max(top_k, RELEVANCE_WINDOW)``), each with its ``relevance``, re-ranked by it under
        a ``learned`` profile; the scored hits (:meth:`scored_hits`) when no judge is fitted
        for the embedder."""
        judges = self.relevance_judges()
        if judges is None:
            return self.scored_hits(ranking)
        hits = self.scored_hits(ranking, max(ranking.top_k, RELEVANCE_WINDOW))
        query, inputs = self.relevance_inputs(ranking, hits)
        x = relevance.features(query, inputs)
        ranking.question = query
        learned = ranking.profile.mode == "learned"
        for h, row in zip(hits, x):
            kind = relevance.kind_of(h.memory.memory_type)
            if kind is None:  # no judge reads it: its weighted score stands
                continue
            judge = judges[kind]
            p = float(judge.probability(row[None])[0])
            h.scores.relevance = p
            if learned:  # the score the breakdown explains: relevance x ttl_weight
                h.scores.contributions = dict(zip(relevance.FEATURES,
                                                  judge.contributions(row[None])[0].tolist()))
                h.scores.bias = judge.bias
                h.score = scoring.combine(h.scores, ranking.profile)
        if learned:
            hits.sort(key=lambda h: (-h.score, -h.memory.created_at.timestamp()))
        return hits

    @staticmethod
    def names_no_subject(ranking: Ranking, hit: SearchHit) -> bool:
        """Whether a judged ``hit`` names none of the query's subject words, whatever time it
        is of (:func:`relevance.names_no_subject`): under the floor it is not returned."""
        return ranking.question is not None and \
            relevance.names_no_subject(ranking.question, hit.memory)

    def relevance_inputs(self, ranking: Ranking, hits: Sequence[SearchHit]
                         ) -> tuple[relevance.Query, list[relevance.Hit]]:
        """What the relevance judge reads of ``ranking``'s query and of each of ``hits``."""
        lex = claims.lexicon_for(self.settings.update.attribute_words)
        query = relevance.Query(ranking.query, frozenset(ranking.terms),
                                claims.query_subject(ranking.query, lex),
                                ranking.window is not None, asks.asked(ranking.query), lex)
        return query, [relevance.Hit(
            h.memory, ranking.vec_hits.get(h.memory.memory_id, 0.0),
            max(h.scores.keyword, h.scores.cross_keyword or 0.0),
            ranking.kw_hits.get(h.memory.memory_id, 0.0), h.score,
            h.scores.time_match or 0.0) for h in hits]

    def relevance_judges(self) -> dict[str, relevance.Judge] | None:
        """The relevance judges fitted for the embedder by kind (``retrieval.relevance``),
        or None."""
        if self.settings.retrieval.relevance != "learned":
            return None
        return relevance.shipped(self._embedder().model_id)

    def min_relevance(self, hit: SearchHit, judges: dict[str, relevance.Judge],
                      asked: float | None = None, under_floor: bool = False) -> float:
        """The least relevance ``hit`` is returned at: ``asked`` (a search's argument), else
        ``retrieval.min_relevance``, else the fitted threshold of the judge of its kind; when
        no hit of the search reaches the floor (``under_floor``), at least
        ``retrieval.min_relevance_under_floor`` (else the judge's). 0 for a hit no judge
        reads."""
        kind = relevance.kind_of(hit.memory.memory_type)
        if kind is None:
            return 0.0
        cfg, judge = self.settings.retrieval, judges[kind]
        least = asked if asked is not None else \
            judge.threshold if cfg.min_relevance is None else cfg.min_relevance
        if under_floor:
            least = max(least, judge.under_floor if cfg.min_relevance_under_floor is None
                        else cfg.min_relevance_under_floor)
        return least

    def returned(self, ranking: Ranking, min_relevance: float | None = None
                 ) -> list[SearchHit]:
        """What :meth:`search` returns of ``ranking``: when no hit reaches the relevance floor
        (an unrelated query), nothing, or with the relevance judges only the statements they
        find relevant enough for it (:meth:`min_relevance`) that do not lack the query's
        subject words; else, with the relevance judges, at most
        ``top_k`` of the statements whose relevance reaches ``min_relevance`` (default:
        :meth:`min_relevance`), of the hits no judge reads those among the first ``top_k``,
        and the newer statement of a returned one's claim; without them the scored hits
        (``min_relevance`` 0: every scored hit, no floor). Conflicting claims resolved."""
        judges = self.relevance_judges()
        hits = self.judged_hits(ranking) if judges is not None else self.scored_hits(ranking)
        # The relevance floor: a query the store holds nothing about gets nothing, not the
        # least unrelated memories (``min_relevance`` 0: nothing is dropped).
        floor = 0.0 if min_relevance == 0 else self.relevance_floor()
        under = floor > 0 and not self.reaches_floor(ranking, hits, floor)
        if under and judges is None:
            return []
        kept: set[str] | None = None
        if judges is not None:
            # Under the floor only statements judged relevant enough for it, and naming the
            # query's subject, are returned (another subject's port is no answer).
            picked = [i for i, h in enumerate(hits) if (
                i < ranking.top_k and not under if h.scores.relevance is None
                else h.scores.relevance >= self.min_relevance(h, judges, min_relevance, under)
                and not (under and self.names_no_subject(ranking, h))
            )][:ranking.top_k]
            kept = {hits[i].memory.memory_id for i in picked}
            # Conflicts are read among the hits ranked down to the last one returned (at
            # least top_k, as without the judge): a newer statement of a returned claim
            # ranked there is found.
            hits = hits[:max(ranking.top_k, picked[-1] + 1)] if picked else []
        cfg = self.settings.conflicts
        ids = conflicts.candidates(hits, cfg)
        stored = self.stores.records.statements(ranking.flt.tenant, ids) if len(ids) > 1 else {}
        choice = self.judge()
        read = cfg.judge_read if cfg.judge_read is not None else \
            choice.judge.read if choice.judge is not None else 1.0
        verdicts = self._judged(hits, choice.judge, read) if choice.judge is not None else {}
        after: dict[str, str] = {}
        resolved = conflicts.resolve(
            hits, cfg, claims.lexicon_for(self.settings.update.attribute_words), stored,
            verdicts, read, after)
        if kept is not None:
            # The newer statement of a kept hit's claim (one it was put after) comes with it,
            # judged relevant or not: else the older one would be served alone.
            while newer := {after[i] for i in kept if i in after} - kept:
                kept |= newer
            resolved = [h for h in resolved if h.memory.memory_id in kept][:ranking.top_k]
        return [self.with_evidence(ranking, h) for h in resolved]

    def judge(self) -> judging.Choice:
        """The learned judge (``update.judge``) that marks conflicting hits, or why none."""
        u = self.settings.update
        return judging.choose(u.judge, u.judge_path, self._embedder().model_id)

    def _judged(self, hits: Sequence[SearchHit], judge: judging.Judge, read: float
                ) -> dict[tuple[str, str], judging.Verdict]:
        """The judge's verdicts on the (newer, older) pairs of :func:`conflicts.pairs` of
        statements of knowledge (turns of conversation are talk: their ranking stays
        theirs) whose cosine reaches ``update.judge_gate``, by their ids."""
        cfg = self.settings.conflicts
        pairs = [(a, b) for a, b in conflicts.pairs(hits[:cfg.judge_window], cfg)
                 if TYPES[a.memory.memory_type].statement and TYPES[b.memory.memory_type].statement]
        if not pairs:
            return {}
        vecs = self.stores.vectors.vectors(sorted({h.memory.memory_id for p in pairs for h in p}))
        gate = self.settings.update.judge_gate
        by_new: dict[str, list[SearchHit]] = {}
        news: dict[str, SearchHit] = {}
        for new, old in pairs:
            a, b = vecs.get(new.memory.memory_id), vecs.get(old.memory.memory_id)
            if a is not None and b is not None and float(a @ b) >= gate:
                by_new.setdefault(new.memory.memory_id, []).append(old)
                news[new.memory.memory_id] = new
        verdicts = judge.judge_many(
            [(judging.Side(news[nid].memory.content), vecs[nid],
              [(judging.Side(o.memory.content), vecs[o.memory.memory_id]) for o in olds])
             for nid, olds in by_new.items()], floor=min(cfg.judge_order, read))
        return {(nid, o.memory.memory_id): v for (nid, olds), vs in zip(by_new.items(), verdicts)
                for o, v in zip(olds, vs)}

    def relevance_floor(self) -> float:
        """``retrieval.relevance_floor``, else the embedder's measured one (its
        :class:`EmbedderSpec`, whatever name or alias selects it; 0: none)."""
        floor = self.settings.retrieval.relevance_floor
        if floor is None:
            return embedder_spec(self.settings.embedder.name)[1].relevance_floor
        return floor
