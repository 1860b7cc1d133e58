"""The retrieval engine (SPEC RET-1..4, TTL-1, L2-3): hybrid candidates, filters, a re-rank by a
named profile, and a context packed within a token budget."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import numpy as np

from ..embeddings import Embedder
from ..model import MemoryRecord, ScoreBreakdown, SearchFilter, SearchHit, normalise_tags
from ..settings import Settings
from ..stores import Stores
from ..text import analyse, estimate_tokens, identifiers, index_terms
from . import scoring


class RetrievalEngine:
    """The read path; ``embedder`` is a callable so the model loads only when first needed."""

    def __init__(self, settings: Settings, stores: Stores, embedder: Callable[[], Embedder],
                 clock: Callable[[], datetime]) -> None:
        self.settings = settings
        self.stores = stores
        self._embedder = embedder
        self.clock = clock
        self._pool: ThreadPoolExecutor | None = None

    def _worker(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memstrata-fts")
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def query_tags(self, query: str, tenant: str) -> list[str]:
        """Tags in a query that has none: its tokens and identifiers that are known tags."""
        candidates = list(dict.fromkeys(analyse(query) + identifiers(query)))
        known = self.stores.records.known_tags(tenant, candidates)
        return known[: self.settings.retrieval.query_tags_max]

    def search(self, query: str, flt: SearchFilter, top_k: int | None = None,
               profile: str | None = None, tags: Sequence[str] | None = None,
               now: datetime | None = None,
               query_vector: np.ndarray | None = None) -> list[SearchHit]:
        """The best ``top_k`` memories for ``query`` that pass ``flt``, with score breakdowns."""
        cfg = self.settings.retrieval
        prof = self.settings.profile(profile)
        now = now or self.clock()
        top_k = top_k or cfg.top_k
        n = max(cfg.candidates_per_channel, top_k)
        tokens = index_terms(query)
        qtags = normalise_tags(tags) or self.query_tags(query, flt.tenant)

        self.stores.sync()
        # Full text runs in a worker while the query is embedded and the vector index searched
        # (SQLite, numpy and usearch all release the GIL). Its window is wider than the
        # candidates it contributes: it also gives S_kw to the candidates the other channels
        # found (outside the window, S_kw counts as 0).
        keyword = self._worker().submit(self.stores.records.keyword_search, tokens, flt, now,
                                        max(n, cfg.keyword_window), cfg.context_weight,
                                        cfg.keyword_max_docs)
        try:
            qvec = query_vector if query_vector is not None else \
                self._embedder().embed_query(query)
            # The index knows only "valid now"; a point-in-time query checks validity in the store.
            vflt = flt.model_copy(update={"include_superseded": True}) if flt.as_of else flt
            post_filtered = any(v is not None for v in (flt.created_after, flt.created_before,
                                                        flt.as_of)) or bool(flt.tags)
            vec_hits = dict(self.stores.vectors.search(qvec, n * (4 if post_filtered else 1),
                                                       vflt))
        finally:
            kw_window = keyword.result()
        kw_hits = dict(kw_window)
        tag_hits = dict(self.stores.records.tag_search(qtags, flt, now, n))
        channels: dict[str, list[str]] = {}
        for name, hits in (("vector", vec_hits), ("keyword", dict(kw_window[:n])),
                           ("tag", tag_hits)):
            for mid in hits:
                channels.setdefault(mid, []).append(name)

        records = self.stores.records.filter(list(channels), flt, now)
        if not records:
            return []
        ids = [r.memory_id for r in records]
        missing_vec = [i for i in ids if i not in vec_hits]
        for mid, vec in self.stores.vectors.vectors(missing_vec).items():
            vec_hits[mid] = float(vec @ qvec)
        kw_max = max((kw_hits.get(i, 0.0) for i in ids), default=0.0)

        hits = []
        for r in records:
            parts = self._components(r, vec_hits.get(r.memory_id), kw_hits.get(r.memory_id, 0.0),
                                     kw_max, qtags, now)
            total = scoring.combine(parts, prof)
            if total <= 0.0 or total < prof.min_score:
                continue
            hits.append(SearchHit(memory=r, score=total, scores=parts,
                                  channels=channels[r.memory_id]))
        hits.sort(key=lambda h: (-h.score, -h.memory.created_at.timestamp()))
        hits = hits[:top_k]
        if cfg.record_retrieval and hits:
            self.stores.records.record_retrieval(flt.tenant, [h.memory.memory_id for h in hits],
                                                 now)
        return hits

    def _components(self, r: MemoryRecord, cosine: float | None, bm25: float, kw_max: float,
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

    def pack(self, hits: Sequence[SearchHit], max_tokens: int) -> str:
        """The hits as a Markdown list (SPEC RET-4), best first, cut to ``max_tokens``."""
        cfg = self.settings.context
        lines = [cfg.header, ""]
        used = estimate_tokens("\n".join(lines))
        for h in hits:
            m = h.memory
            meta = [m.memory_type.value, m.created_at.strftime("%Y-%m-%d")]
            if cfg.include_tags and m.tags:
                meta.append("tags: " + ", ".join(m.tags[:6]))
            if cfg.include_related and m.related_memory_ids:
                meta.append("related: " + ", ".join(m.related_memory_ids[:3]))
            text = " ".join(m.content.split())
            line = f"- {text} _({'; '.join(meta)})_"
            cost = estimate_tokens(line) + 1
            if used + cost > max_tokens:
                continue  # a shorter, lower-ranked memory may still fit
            lines.append(line)
            used += cost
        if len(lines) == 2:
            return ""
        return "\n".join(lines) + "\n"
