"""Why a memory is not among a search's hits (:meth:`Memory.why_not`).

The explanation runs the search itself (:meth:`RetrievalEngine.rank` and
:meth:`~RetrievalEngine.returned`, read only) and then looks the memory up in what it decided:
the filter's rules (:func:`filters.search_rules`, the clauses the store applied), the channels'
candidates, the scored ranking, the cut to ``top_k`` and the relevance floor. Nothing is scored
here, so an explanation cannot disagree with ``search``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from ..filters import holds, search_rules
from ..model import (
    FloorCheck,
    MemoryRecord,
    SearchFilter,
    SearchHit,
    Tier,
    Verdict,
    WhyNot,
)
from .retrieval import Ranking, RetrievalEngine

# A supersession chain longer than this is cut (a cycle cannot loop for ever).
_CHAIN_MAX = 100


class ExplainEngine:
    """Explains one memory's place in one search."""

    def __init__(self, retrieval: RetrievalEngine,
                 current: Callable[[str, str], MemoryRecord | None]) -> None:
        self.retrieval = retrieval
        self._current = current  # (tenant, id) -> the live or archived record, else None

    def why_not(self, rec: MemoryRecord, query: str, flt: SearchFilter, top_k: int | None,
                profile: str | None, tags: Sequence[str] | None, now: datetime,
                query_vector: np.ndarray | None = None,
                min_relevance: float | None = None) -> WhyNot:
        """Where ``rec`` (a memory of ``flt.tenant``) stands in ``search(query, ...)``."""
        ranking = self.retrieval.rank(query, flt, top_k, profile, tags, now, query_vector)
        hits = self.retrieval.returned(ranking, min_relevance)
        prof = ranking.profile
        floor = self.retrieval.relevance_floor()
        scored = self.retrieval.scored_hits(ranking)
        best = max((h.scores.evidence or 0.0 for h in scored), default=None)
        out = WhyNot(memory_id=rec.memory_id, query=query, verdict=Verdict.RETURNED, reason="",
                     top_k=ranking.top_k, profile=profile or self.retrieval.settings.retrieval
                     .default_profile, mode=prof.mode, weights=prof.weights.model_dump(),
                     floor=FloorCheck(floor=floor, best=best,
                                      applied=bool(scored) and not hits),
                     channels=ranking.channels.get(rec.memory_id, []),
                     candidates=len(ranking.ranked),
                     last_returned=hits[-1] if hits else None)
        if rec.superseded_by:
            out.chain = self._chain(rec)
            out.superseded_by = out.chain[-1] if out.chain else rec.superseded_by
        mid = rec.memory_id
        for i, h in enumerate(hits):
            if h.memory.memory_id == mid:
                out.rank, out.score, out.scores = i + 1, h.score, h.scores
                out.floor.evidence = h.scores.evidence
                out.reason = f"returned at rank {i + 1} of {len(hits)} (score {h.score:.4f})"
                return out
        self._excluded(out, rec, ranking, flt)
        if out.verdict is not Verdict.RETURNED:
            return out
        judges = self.retrieval.relevance_judges()
        if judges is not None:
            judged = self.retrieval.judged_hits(ranking)
            at = next((i for i, h in enumerate(judged) if h.memory.memory_id == mid), None)
            under = min_relevance != 0 and floor > 0 and \
                not self.retrieval.reaches_floor(ranking, judged, floor)
            hit = judged[at] if at is not None else None
            absent = under and hit is not None and self.retrieval.names_no_subject(ranking, hit)
            if hit is not None and hit.scores.relevance is not None and not absent:
                return self._judged(out, self.retrieval.with_evidence(ranking, hit), at or 0,
                                    self.retrieval.min_relevance(hit, judges, min_relevance,
                                                                 under), under)
            if under and hits and hit is not None:  # others came back under the floor
                out.verdict, out.rule = Verdict.BELOW_FLOOR, "relevance_floor"
                out.reason = (f"no hit reached the relevance floor {floor:g}: under it only "
                              "statements judged relevant that name the query's subject are "
                              "returned, and " + ("this one names none of its subject words"
                                                  if absent else "this one is not judged"))
                return out
        return self._scored(out, rec, ranking, scored, floor)

    @staticmethod
    def _judged(out: WhyNot, hit: SearchHit, at: int, at_least: float,
                under_floor: bool) -> WhyNot:
        """Set ``out``'s verdict for a memory the relevance judge read and did not return
        (``under_floor``: no hit of the search reached the relevance floor)."""
        out.rank, out.score, out.scores = at + 1, hit.score, hit.scores
        out.floor.evidence = hit.scores.evidence
        relevance = hit.scores.relevance or 0.0
        if relevance < at_least:
            out.verdict = Verdict.BELOW_FLOOR
            out.rule = "min_relevance_under_floor" if under_floor else "min_relevance"
            out.reason = (f"judged unlikely to answer the query: relevance {relevance:.4f}, "
                          f"under {out.rule} {at_least:g}" + (
                              " (no hit reached the relevance floor)" if under_floor else ""))
            return out
        out.verdict = Verdict.RANKED_OUT
        out.reason = (f"ranked out: relevance {relevance:.4f}, but top_k={out.top_k} hits "
                      "judged more relevant came first")
        return out

    def _excluded(self, out: WhyNot, rec: MemoryRecord, ranking: Ranking,
                  asked: SearchFilter) -> None:
        """Set ``out``'s verdict when the search's filter leaves ``rec`` out (``asked``: the
        filter as the caller gave it, before the query's time words narrowed it)."""
        flt, now = ranking.flt, ranking.now
        archived = rec.tier is Tier.ARCHIVE
        if archived and not flt.include_archive:
            out.verdict, out.rule = Verdict.ARCHIVED, "include_archive"
            out.reason = "archived: the search does not read the archive (include_archive)"
            return
        failed = [name for name, clauses in search_rules(flt, now, archive=archived)
                  if not all(holds(c, rec) for c in clauses)]
        if not failed:
            return
        when = flt.as_of or now
        at = f"as of {when.isoformat()}" if flt.as_of else f"at {when.isoformat()}"
        if "superseded" in failed:
            out.verdict, out.rule = Verdict.SUPERSEDED, "as_of" if flt.as_of else None
            by = f" by {out.superseded_by}" if out.superseded_by else ""
            out.reason = (f"superseded{by} (no longer valid {at}); "
                          "include_superseded=True shows it")
            return
        if "expired" in failed:
            assert rec.expires_at is not None
            out.verdict, out.rule = Verdict.EXPIRED, "as_of" if flt.as_of else None
            out.reason = f"expired at {rec.expires_at.isoformat()} (before {when.isoformat()})"
            return
        out.verdict = Verdict.FILTERED
        rule = failed[0]
        if rule in ("since", "until") and (asked.created_after if rule == "since"
                                           else asked.created_before) is None:
            out.rule = "time_words"  # retrieval.time_words in filter mode
        else:
            out.rule = rule
        out.reason = "filtered out: " + self._why(rule, rec, flt, ranking)

    @staticmethod
    def _why(rule: str, rec: MemoryRecord, flt: SearchFilter, ranking: Ranking) -> str:
        """One clause of the sentence saying why ``rule`` excludes ``rec``."""
        if rule in ("user", "agent", "session"):
            have, want = getattr(rec.scope, rule), getattr(flt, rule)
            its = f"its {rule} is {have}" if have else f"it has no {rule}"
            return f"{its}, the search asks for {rule} {want}"
        if rule == "type":
            wanted = ", ".join(t.value for t in flt.types or [])
            return f"its type is {rec.memory_type.value}, the search asks for type {wanted}"
        if rule == "tier":
            wanted = ", ".join(t.value for t in flt.tiers or []) or "a live tier"
            return f"its tier is {rec.tier.value}, the search asks for tier {wanted}"
        if rule == "tier_rules":
            lim = next(t for t in flt.tier_limits if t.tier is rec.tier)
            since = f" and entered at or after {lim.since.isoformat()}" if lim.since else ""
            return (f"the {rec.tier.value} tier serves memories of importance "
                    f"{lim.min_importance:g} or more{since} (lifecycle.tiers); it has "
                    f"importance {rec.importance:g}, entered "
                    f"{(rec.tier_since or rec.created_at).isoformat()}")
        if rule == "tags":
            return (f"its tags are {', '.join(rec.tags) or 'none'}, the search asks for one of "
                    f"{', '.join(flt.tags or [])}")
        if rule in ("since", "until"):
            bound = flt.created_after if rule == "since" else flt.created_before
            assert bound is not None
            words = ("at or after" if rule == "since" else "before")
            from_query = "" if ranking.window is None else " (the time the query names)"
            return (f"it was created {rec.created_at.isoformat()}, the search asks for "
                    f"memories created {words} {bound.isoformat()}{from_query}")
        if rule == "valid_from":
            when = flt.as_of or ranking.now
            return (f"it is valid from {rec.valid_from.isoformat()}, after the time searched "
                    f"({when.isoformat()})")
        return f"it is another tenant's ({rec.scope.tenant})"

    def _scored(self, out: WhyNot, rec: MemoryRecord, ranking: Ranking,
                scored: list[SearchHit], floor: float) -> WhyNot:
        """Set ``out``'s verdict for a memory that passes the filter but is not returned."""
        mid = rec.memory_id
        if mid not in ranking.channels:
            out.verdict = Verdict.NOT_RETRIEVED
            depth = self.retrieval.settings.retrieval.candidates_per_channel
            out.reason = (f"not retrieved: no channel (vector, keyword, tag) found it among its "
                          f"{max(depth, ranking.top_k)} best candidates")
            return out
        if mid in ranking.unscored:
            total, parts = ranking.unscored[mid]
            out.verdict, out.score, out.scores = Verdict.BELOW_FLOOR, total, parts
            out.rule = "min_score"
            out.reason = (f"below the profile's min_score {ranking.profile.min_score:g}: "
                          f"it scored {total:.4f}")
            return out
        pos = next((i for i, (_, c, _) in enumerate(ranking.ranked) if c.memory_id == mid), None)
        if pos is None:  # the store's filter dropped it, though its rules pass in Python
            out.verdict, out.reason = Verdict.FILTERED, "filtered out by the store"
            return out
        total, _, parts = ranking.ranked[pos]
        out.rank, out.score = pos + 1, total
        out.scores = parts.model_copy(update={"evidence": self.retrieval.evidence_of(
            ranking, rec, parts)})
        out.floor.evidence = out.scores.evidence
        if pos >= ranking.top_k:
            out.verdict = Verdict.RANKED_OUT
            last = out.last_returned or (scored[-1] if scored else None)
            beat = f"; the last hit returned scored {last.score:.4f}" if last else ""
            out.reason = (f"ranked out: rank {pos + 1} of {len(ranking.ranked)} scored "
                          f"candidates with score {total:.4f}, the search returns "
                          f"top_k={ranking.top_k}{beat}")
            return out
        out.verdict = Verdict.BELOW_FLOOR
        out.rule = "relevance_floor"
        out.reason = (f"below the relevance floor: no hit's evidence reached {floor:g} "
                      f"(best {out.floor.best or 0.0:.4f}, this one "
                      f"{out.scores.evidence or 0.0:.4f}), so the search returned nothing")
        return out

    def _chain(self, rec: MemoryRecord) -> list[str]:
        """The memories that replaced ``rec``, one after the other, to the current one."""
        chain: list[str] = []
        nxt = rec.superseded_by
        while nxt and nxt not in chain and nxt != rec.memory_id and len(chain) < _CHAIN_MAX:
            chain.append(nxt)
            succ = self._current(rec.scope.tenant, nxt)
            nxt = succ.superseded_by if succ is not None else None
        return chain
