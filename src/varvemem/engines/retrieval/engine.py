"""The retrieval engine's search (:class:`RetrievalEngine`): hybrid candidates from the vector
index, full text and tags, filters and the tiers' rules, time words, a re-rank by a named
profile, and a context packed within a token budget. What it returns of its ranking is
:class:`~.selection.HitSelection`'s."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import numpy as np

from ...embeddings import Embedder
from ...embeddings.second import SecondModel, second_model
from ...filters import archive_clauses, predicate, vector_part
from ...model import (
    MemoryRecord,
    ScoreBreakdown,
    SearchFilter,
    SearchHit,
    TierLimit,
    normalise_tags,
    utcnow,
)
from ...stores.base import Candidate
from ...text import analyse, estimate_tokens, identifiers, index_terms
from .. import claims, scoring, timewords
from ..rerank import Reranker
from .measures import archive_bm25, time_match
from .selection import HitSelection, Ranking, ReadConfig, ReadStores

# How deep the vector channel may search when the store's filter drops its hits (a topk
# every vector backend accepts: Milvus allows 16,384).
_VECTOR_DEPTH_MAX = 10_000
_LIVE = timedelta(seconds=1)  # a clock this close to the wall clock reads the present


class RetrievalEngine(HitSelection):
    """The read path; ``embedder`` is a callable so the model loads only when first needed."""

    def __init__(self, settings: ReadConfig, stores: ReadStores, embedder: Callable[[], Embedder],
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
        prof = cfg.profile(profile)
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
            kw_hits.update(archive_bm25(tokens, archived, scale=max(kw_hits.values(), default=1.0)))
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
        rule = self.settings.types[r.memory_type].ttl
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


def _session_line(r: MemoryRecord) -> str:
    """``- HH:MM role: text`` for a turn, ``- HH:MM tool: text`` for a tool call."""
    who = "tool" if r.memory_type.value == "tool_call" else str(r.metadata.get("role", "user"))
    return f"- {r.created_at.strftime('%H:%M')} {who}: {' '.join(r.content.split())}"
