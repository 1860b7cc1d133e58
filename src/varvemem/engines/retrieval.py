"""The retrieval engine (SPEC RET-1..4, TTL-1, L2-3): hybrid candidates, filters, a re-rank by a
named profile, and a context packed within a token budget."""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from datetime import time as dtime

import numpy as np

from ..embeddings import Embedder, embedder_spec
from ..embeddings.second import SecondModel, second_model
from ..filters import archive_clauses, predicate, vector_part
from ..language import asks
from ..model import (
    TYPES,
    MemoryRecord,
    ScoreBreakdown,
    SearchFilter,
    SearchHit,
    TierLimit,
    normalise_tags,
    utcnow,
)
from ..settings import Profile, Settings
from ..stores import Stores
from ..stores.base import Candidate
from ..text import analyse, date_terms, estimate_tokens, identifiers, index_terms, term_set
from . import claims, conflicts, relevance, scoring, timewords
from . import judge as judging
from .reports import HAPPENED
from .rerank import Reranker, script

# How deep the vector channel may search when the store's filter drops its hits (a topk
# every vector backend accepts: Milvus allows 16,384).
_VECTOR_DEPTH_MAX = 10_000
_LIVE = timedelta(seconds=1)  # a clock this close to the wall clock reads the present
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


class RetrievalEngine:
    """The read path; ``embedder`` is a callable so the model loads only when first needed."""

    def __init__(self, settings: Settings, stores: Stores, embedder: Callable[[], Embedder],
                 clock: Callable[[], datetime]) -> None:
        self.settings = settings
        self.stores = stores
        self._embedder = embedder
        self.clock = clock
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _worker(self) -> ThreadPoolExecutor:
        """The full-text threads: one per concurrent search (``server.read_threads``)."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.settings.server.read_threads,
                                                thread_name_prefix="varvemem-fts")
            return self._pool

    def close(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def query_tags(self, query: str, tenant: str) -> list[str]:
        """Tags in a query that has none: its tokens and identifiers that are known tags."""
        candidates = list(dict.fromkeys(analyse(query) + identifiers(query)))
        known = self.stores.records.known_tags(tenant, candidates)
        return known[: self.settings.retrieval.query_tags_max]

    def search(self, query: str, flt: SearchFilter, top_k: int | None = None,
               profile: str | None = None, tags: Sequence[str] | None = None,
               now: datetime | None = None,
               query_vector: np.ndarray | None = None, record: bool = True,
               min_relevance: float | None = None) -> list[SearchHit]:
        """The best memories for ``query`` that pass ``flt`` (:meth:`returned`), with score
        breakdowns; ``record``: count the hits as used (``retrieval.record_retrieval`` on)."""
        ranking = self.rank(query, flt, top_k, profile, tags, now, query_vector)
        hits = self.returned(ranking, min_relevance)
        live = [h.memory.memory_id for h in hits if h.channels != ["archive"]]
        if record and self.settings.retrieval.record_retrieval and live:
            self.stores.records.record_retrieval(ranking.flt.tenant, live, ranking.now)
        return hits

    def rank(self, query: str, flt: SearchFilter, top_k: int | None = None,
             profile: str | None = None, tags: Sequence[str] | None = None,
             now: datetime | None = None,
             query_vector: np.ndarray | None = None) -> Ranking:
        """Everything :meth:`search` decides before it cuts the ranking to ``top_k``: the
        candidates each channel found, the filter applied and every scored candidate in
        order (read only: nothing is recorded). :meth:`returned` gives the hits."""
        cfg = self.settings.retrieval
        prof = self.settings.profile(profile)
        now = now or self.clock()
        top_k = top_k or cfg.top_k
        n = max(cfg.candidates_per_channel, top_k)
        # Time words ("last week", "昨天") name a window, not keywords (retrieval.time_words).
        text, window, flt = self._time_words(query, flt, now)
        tokens = index_terms(text)
        if window is not None:  # "what did I do", "发生了什么": no keywords in a time question
            tokens = [t for t in tokens if t not in timewords.ACTIVITY_TERMS]
        qtags = normalise_tags(tags) or self.query_tags(text, flt.tenant)

        flt = flt.model_copy(update={"tier_limits": self.tier_limits(now)})
        self.stores.sync(persist=False)
        # Full text runs in a worker while the query is embedded and the vector index searched
        # (SQLite, numpy and usearch all release the GIL). Its window is wider than the
        # candidates it contributes: it also gives S_kw to the candidates the other channels
        # found (outside the window, S_kw counts as 0).
        keyword = self._worker().submit(self.stores.records.keyword_search, tokens, flt, now,
                                        max(n, cfg.keyword_window), cfg.context_weight,
                                        cfg.keyword_max_docs,
                                        cfg.keyword_scan_docs or None)
        # Boosting, the window's own full-text matches are candidates too (they may rank
        # below the keyword window's cut among many older look-alikes).
        timed = self._worker().submit(
            self.stores.records.keyword_search, tokens, flt.model_copy(update={
                "created_after": window.start, "created_before": window.end}), now, n,
            cfg.context_weight, cfg.keyword_max_docs, cfg.keyword_scan_docs or None) \
            if window and tokens and cfg.time_words.mode == "boost" else None
        try:
            qvec = query_vector if query_vector is not None else \
                self._embedder().embed_query(
                    text if window and cfg.time_words.strip_from_embedding and text else query)
            # What the index checks; the store's filter below applies the rest.
            vflt = vector_part(flt)
            # Conditions only the store checks that may drop many of the index's hits.
            post_filtered = any(v is not None for v in (flt.created_after, flt.created_before,
                                                        flt.as_of)) or bool(flt.tags)
            # A time question with no keywords ("what did I do yesterday?") reaches the memories
            # of that time through the vector channel only: it searches deeper.
            deeper = cfg.time_words.depth_factor if window and not tokens else 1
            depth = n * (4 if post_filtered else 1) * deeper
            found = self.stores.vectors.search(qvec, depth, vflt)
        finally:
            kw_window = keyword.result()
            in_window = dict(timed.result()) if timed else {}
        vec_hits = dict(found)
        kw_hits = {**in_window, **dict(kw_window)}
        tag_hits = dict(self.stores.records.tag_search(qtags, flt, now, n))
        channels: dict[str, list[str]] = {}
        for name, channel_hits in (("vector", vec_hits),
                                   ("keyword", {**dict(kw_window[:n]), **in_window}),
                                   ("tag", tag_hits)):
            for mid in channel_hits:
                channels.setdefault(mid, []).append(name)

        # Ranked on slim candidates; full records are read for the hits kept only.
        records = self.stores.records.filter(list(channels), flt, now)
        # The store also drops what the index cannot tell (time, tags, expiry, the tiers'
        # rules). Reading the past (a replayed clock or as_of) it also drops every memory made
        # since, which may be most of what the index returns: then, while the vector channel
        # is short of n and the index has more, it searches deeper. At the live clock the
        # search costs what it always did.
        passed = {r.memory_id for r in records}
        past = flt.as_of is not None or now < utcnow() - _LIVE
        while past and sum(1 for m in vec_hits if m in passed) < n and len(found) >= depth \
                and depth < _VECTOR_DEPTH_MAX:
            depth = min(depth * 4, _VECTOR_DEPTH_MAX)
            found = self.stores.vectors.search(qvec, depth, vflt)
            more = [m for m, _ in found if m not in vec_hits]
            vec_hits.update(found)
            for mid in more:
                channels.setdefault(mid, []).append("vector")
            fresh = [m for m in more if channels[m] == ["vector"]]  # not filtered before
            added = self.stores.records.filter(fresh, flt, now)
            records += added
            passed.update(r.memory_id for r in added)
        full: dict[str, MemoryRecord] = {}
        if flt.include_archive:
            archived = self._archived_candidates(flt, now)
            for rec in archived:
                channels[rec.memory_id] = ["archive"]
                if rec.embedding is not None:
                    vec_hits[rec.memory_id] = float(np.asarray(rec.embedding, np.float32) @ qvec)
                full[rec.memory_id] = rec.model_copy(update={"embedding": None})
            kw_hits.update(_bm25(tokens, archived, scale=max(kw_hits.values(), default=1.0)))
            records += [Candidate.of(r) for r in archived]
        ranking = Ranking(query=query, flt=flt, now=now, top_k=top_k, profile=prof,
                          window=window, terms=set(tokens), channels=channels,
                          vec_hits=vec_hits, kw_hits=kw_hits,
                          passed={r.memory_id for r in records}, full=full)
        if not records:
            return ranking
        ids = [r.memory_id for r in records]
        missing_vec = [i for i in ids if i not in vec_hits and channels[i] != ["archive"]]
        for mid, vec in self.stores.vectors.vectors(missing_vec).items():
            vec_hits[mid] = float(vec @ qvec)
        kw_max = max((kw_hits.get(i, 0.0) for i in ids), default=0.0)
        if window is not None:  # a time asked is matched with what each memory reports
            full.update(self.stores.records.get_many(
                flt.tenant, [i for i in ids if i not in full]))

        ranked = []
        for r in records:
            parts = self._components(r, vec_hits.get(r.memory_id), kw_hits.get(r.memory_id, 0.0),
                                     kw_max, qtags, now)
            if window is not None and r.memory_id in full:
                parts.time_match = time_match(window, full[r.memory_id],
                                              cfg.time_words.margin_hours)
                parts.time_factor = scoring.time_factor(parts.time_match, cfg.time_words.weight)
            total = scoring.combine(parts, prof)
            if total <= 0.0 or total < prof.min_score:
                ranking.unscored[r.memory_id] = (total, parts)
                continue
            ranked.append((total, r, parts))
        ranked.sort(key=lambda t: (-t[0], -t[1].created_at.timestamp()))
        rerank = Reranker(cfg.rerank, self.second_model)  # a second look at the best few
        if rerank.active():
            ranked = rerank.rescore(query, ranked, vec_hits,
                                    lambda p: scoring.combine(p, prof),
                                    lambda ids: self.stores.records.contents(flt.tenant, ids))
        ranking.ranked = ranked
        ranking.subject = claims.query_subject(query, claims.lexicon_for(
            self.settings.update.attribute_words)) if cfg.absent_subject_factor < 1 else None
        return ranking

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

    def _time_words(self, query: str, flt: SearchFilter, now: datetime
                    ) -> tuple[str, timewords.TimeWindow | None, SearchFilter]:
        """The query without its time words, the window they name (None: no time words, or
        the caller's own ``created_after``/``created_before``, which win) and the filter (the
        window added in ``filter`` mode)."""
        tw = self.settings.retrieval.time_words
        parsed = timewords.parse(query, now, tz=tw.timezone, use_dateparser=tw.use_dateparser,
                                 week_start=0 if tw.week_start == "monday" else 6) \
            if tw.enabled else None
        if parsed is None:
            return query, None, flt
        if flt.created_after is not None or flt.created_before is not None:
            return parsed.rest, None, flt
        w, margin = parsed.window, timedelta(hours=tw.margin_hours)
        if tw.mode == "filter":
            flt = flt.model_copy(update={"created_after": w.start - margin,
                                         "created_before": w.end + margin})
        return parsed.rest, w, flt

    def second_model(self) -> SecondModel | None:
        """The second model (``second_model``), or None: disabled or not installed."""
        return second_model(self.settings.second_model)

    def relevance_floor(self) -> float:
        """``retrieval.relevance_floor``, else the embedder's measured one (its
        :class:`EmbedderSpec`, whatever name or alias selects it; 0: none)."""
        floor = self.settings.retrieval.relevance_floor
        if floor is None:
            return embedder_spec(self.settings.embedder.name)[1].relevance_floor
        return floor

    def tier_limits(self, now: datetime) -> list[TierLimit]:
        """The tiers' retrieval rules (``lifecycle.tiers``) as store filters at ``now``."""
        out = []
        for tier, rule in self.settings.lifecycle.tiers.items():
            if rule.search_min_importance > 0 or rule.search_days:
                since = now - timedelta(days=rule.search_days) if rule.search_days else None
                out.append(TierLimit(tier=tier, min_importance=rule.search_min_importance,
                                     since=since))
        return out

    def _archived_candidates(self, flt: SearchFilter, now: datetime) -> list[MemoryRecord]:
        """Every archived memory of the tenant that passes ``flt`` (read in full: the archive
        is searched on request only, slowly)."""
        passes = predicate(archive_clauses(flt, now))
        return [r for r in self.stores.archived_records(flt.tenant, notices=self.stores.notices)
                if passes(r)]

    def _components(self, r: Candidate, cosine: float | None, bm25: float, kw_max: float,
                    qtags: list[str], now: datetime) -> ScoreBreakdown:
        age = scoring.age_days(r.created_at, now)
        rule = self.settings.update.ttl_by_type[r.memory_type.value]
        matched = len(set(qtags) & set(r.tags))
        return ScoreBreakdown(
            semantic=scoring.semantic_score(cosine) if cosine is not None else 0.0,
            keyword=bm25 / kw_max if kw_max > 0 else 0.0,
            tag=matched / len(qtags) if qtags else 0.0,
            recency=scoring.recency(age, self.settings.retrieval.recency_lambda),
            importance=r.importance,
            reliability=r.source_reliability,
            ttl_weight=scoring.ttl_weight(r.ttl_mode, age, r.ttl_days, rule.rate),
            quality=r.score,
        )

    def pack(self, hits: Sequence[SearchHit], max_tokens: int,
             session: Sequence[MemoryRecord] = ()) -> str:
        """The hits as a Markdown list (SPEC RET-4), best first, cut to ``max_tokens``.

        ``session`` (TIER-1, oldest first) comes first under its own heading; when it alone
        exceeds the budget its oldest entries are dropped.
        """
        cfg = self.settings.context
        out: list[str] = []
        used = 0
        if session:
            entries = [_session_line(r) for r in session]
            head = [cfg.session_header, ""]
            base = estimate_tokens("\n".join(head))
            costs = [estimate_tokens(e) + 1 for e in entries]
            while entries and base + sum(costs) > max_tokens:
                entries.pop(0)
                costs.pop(0)
            if entries:
                out = [*head, *entries, ""]
                used = base + sum(costs) + 1
        lines = [cfg.header, ""]
        used += estimate_tokens("\n".join(lines))
        for h in hits:
            m = h.memory
            meta = [m.memory_type.value, m.created_at.strftime("%Y-%m-%d")]
            if cfg.include_tags and m.tags:
                meta.append("tags: " + ", ".join(m.tags[:6]))
            if cfg.include_related and m.related_memory_ids:
                meta.append("related: " + ", ".join(m.related_memory_ids[:3]))
            if h.scores.conflict:  # "likely superseded by <id> (said <date>)", not the why
                meta.append(h.scores.conflict.split(":", 1)[0])
            text = " ".join(m.content.split())
            line = f"- {text} _({'; '.join(meta)})_"
            cost = estimate_tokens(line) + 1
            if used + cost > max_tokens:
                continue  # a shorter, lower-ranked memory may still fit
            lines.append(line)
            used += cost
        if len(lines) > 2:
            out += lines
        return "\n".join(out) + "\n" if out else ""


# How much a query's terms found in a memory count towards its evidence, next to the cosine.
COVERAGE_WEIGHT = 0.4


def evidence(cosine: float | None, terms: set[str], memory: MemoryRecord,
             context_weight: float, time_match: float = 0.0, time_bonus: float = 0.0,
             time_weight: float = 0.0, subject: frozenset[str] | None = None,
             absent_factor: float = 1.0) -> float:
    """What says a memory is about the query at all (``retrieval.relevance_floor``): the
    query's cosine with it plus ``COVERAGE_WEIGHT`` x the share of the query's distinct terms
    (:func:`index_terms`, so stems and CJK bigrams) in its text, tags and keywords; a term
    found only in its context (neighbouring turns, its date in words) counts
    ``context_weight`` times, as in full-text search. BM25 and S_kw are relative (the best
    match scores 1 however weak it is); this share is not. When the query names a time,
    ``time_match`` (the memory's place in it) counts as ``time_weight`` found terms, and adds
    ``time_bonus`` x itself (``retrieval.time_words``). A memory that holds none of the
    query's ``subject`` words (:func:`claims.query_subject`) of its own script (Chinese when it
    has any, else Latin), and is not of the time the query names, keeps ``absent_factor`` of
    its cosine."""
    sim = max(0.0, cosine) if cosine is not None else 0.0
    if not terms:
        return sim + time_bonus * time_match
    own = term_set(" ".join([memory.content, *memory.tags, *memory.keywords]))
    around = term_set(" ".join([*memory.context_before, *memory.context_after,
                                date_terms(memory.created_at)])) - own
    if subject and absent_factor < 1 and not time_match:  # a time asked is a subject too
        # Only the words in the memory's script can be missing from it: a Chinese text (with
        # Latin ids in it) cannot hold an English question's words.
        cjk = any(script(t) == "cjk" for t in own)
        here = {t for t in subject if (script(t) == "cjk") == cjk}
        if here and not here & (own | around):
            sim *= absent_factor
    sim += time_bonus * time_match
    found = len(terms & own) + context_weight * len(terms & around) + time_weight * time_match
    return sim + COVERAGE_WEIGHT * found / (len(terms) + time_weight)


def time_match(window: timewords.TimeWindow, memory: MemoryRecord, margin_hours: float
               ) -> float:
    """Where ``memory`` stands in the time a query names (1 inside, 0 outside): a report of
    an event (:mod:`.reports`) by the days it happened, a turn, tool call or platform event
    by when it was said; a statement that reports no day by when it was said, or 1 when it
    names a weekday of the time asked (a schedule holds on its days: "what's on
    Wednesday?")."""
    if not TYPES[memory.memory_type].statement:
        return window.match(memory.created_at, margin_hours)
    days = memory.metadata.get(HAPPENED)
    try:
        first, last = (date.fromisoformat(str(d)) for d in (days or ()))
    except (TypeError, ValueError):  # no days (or not ours): of its weekdays, else when said
        if _weekdays(window) & timewords.weekdays(memory.content):
            return 1.0
        return window.match(memory.created_at, margin_hours)
    zone = window.start.tzinfo
    start = datetime.combine(first, dtime(), zone)
    end = datetime.combine(last + timedelta(days=1), dtime(), zone)
    if start < window.end and window.start < end:
        return 1.0
    return max(window.match(start, margin_hours), window.match(end - _INSTANT, margin_hours))


_INSTANT = timedelta(microseconds=1)


def _weekdays(window: timewords.TimeWindow) -> frozenset[int]:
    """The weekdays of a window of at most a week (a longer one names no weekday)."""
    days = (window.end - window.start).days
    if days > 7:
        return frozenset()
    return frozenset((window.start + timedelta(days=i)).weekday() for i in range(max(1, days)))


def _bm25(tokens: Sequence[str], records: Sequence[MemoryRecord], scale: float,
          k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """BM25 of ``records`` (their analysed text) for the archive, which has no full-text index;
    scaled so its best matches compare with the live index's (both are normalised later)."""
    docs = {r.memory_id: Counter(index_terms(r.content + " " + " ".join(r.tags)))
            for r in records}
    if not docs or not tokens:
        return {}
    avg = sum(sum(d.values()) for d in docs.values()) / len(docs) or 1.0
    idf = {t: math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
           for t in set(tokens) if (df := sum(1 for d in docs.values() if t in d))}
    out = {}
    for mid, tf in docs.items():
        size = sum(tf.values())
        score = 0.0
        for t, w in idf.items():
            if tf[t]:
                score += w * tf[t] * (k1 + 1) / (tf[t] + k1 * (1 - b + b * size / avg))
        if score > 0:
            out[mid] = score
    best = max(out.values(), default=0.0)
    return {k: v * scale / best for k, v in out.items()} if best else {}


def _session_line(r: MemoryRecord) -> str:
    """``- HH:MM role: text`` for a turn, ``- HH:MM tool: text`` for a tool call."""
    who = "tool" if r.memory_type.value == "tool_call" else str(r.metadata.get("role", "user"))
    return f"- {r.created_at.strftime('%H:%M')} {who}: {' '.join(r.content.split())}"
