"""The FAQ engine: scored question/answer pairs (seed 2's L2), their Markdown mirror, and
``ask``'s routes (L3: skip, cached, reuse, normal).

A pair is a memory of type ``qa`` embedded by its question. Every write goes through the
update engine (and so through its history); values are checked here, ids and tenants by the
caller.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pydantic

from .. import _validate, qa_files
from .._validate import enum_of, text, unit_score
from .._validate import keywords as checked_keywords
from ..embeddings import Embedder
from ..errors import ValidationError, VarvememError
from ..llm import ChatClient
from ..model import (
    Draft,
    HistoryEntry,
    MemoryRecord,
    MemoryType,
    Scope,
    SearchFilter,
    SearchHit,
    Tier,
    TTLMode,
)
from ..settings import views
from ..stores import parts
from ..stores.base import Selection
from ..stores.composite import composite_key
from . import scoring
from .context import Block, ContextEngine
from .faq_confidence import (
    PAIR_FEATURES,
    SAME_QUESTION_PROMPT,
    Confidence,
    PairJudge,
    SecondOpinion,
    confidence,
    decide,
    language,
    pair_features,
    pair_judge,
    read_same,
    same_question_prompt,
)
from .intent import chit_chat
from .reads import ReadEngine
from .retrieval import RetrievalEngine
from .update import UpdateEngine, content_hash

FEEDBACK = ("up", "down", "followup")
# The system prompt of the normal route (its tokens leave the context's budget), and what the
# model reads in place of a context when no memory is relevant.
ASK_PROMPT = ("You answer a user's question for a support assistant. Use the memories given "
              "when they help; say so when they do not answer it.")
NO_MEMORIES = "No relevant memories."


class AskResult(pydantic.BaseModel):
    """How :meth:`Memory.ask` answered: the route (``skip``, ``reuse``, ``normal``), the
    answer, the pair it reused (or made), the confidence of the match, the memories the
    answer quotes (``sources``: the reused pair, or the retrieved memories) and the time
    spent."""

    route: str
    answer: str
    reason: str = ""
    matched: dict[str, Any] | None = None
    confidence: float | None = None
    # Why a pair was (or, on the normal route, was not) reused: the confidence, its parts
    # (cosine, overlap, swapped, extra, equal), a veto, the pair weighed.
    evidence: dict[str, Any] | None = None
    llm: bool = False
    sources: list[str] = []
    ms: float = 0.0


def check_feedback(kind: Any) -> None:
    """``kind`` is one of :data:`FEEDBACK`."""
    if kind not in FEEDBACK:
        raise ValidationError(f"feedback {kind!r} is not one of {list(FEEDBACK)}")


def _state(r: MemoryRecord) -> tuple[Any, ...]:
    return (r.question, r.answer, r.score, r.keywords, r.ttl_mode, r.ttl_days)


FOLLOWUP_REASON = "a follow-up question came right after"


def _helpful(entry: HistoryEntry) -> bool:
    """Whether a ``feedback`` entry said helpful: its importance went up (or, stuck at a bound,
    its reason says so)."""
    old, new = (entry.old or {}).get("importance"), (entry.new or {}).get("importance")
    if isinstance(old, (int, float)) and isinstance(new, (int, float)) and old != new:
        return new > old
    return entry.reason == "helpful"


class QaStatus(pydantic.BaseModel):
    """One Q&A pair as :meth:`QA.report` sees it."""

    record: MemoryRecord
    ttl_mode: TTLMode
    ttl_days: float | None = None
    weight_today: float  # scoring.ttl_weight at the clock's now, as the faq ranking uses it
    expired: bool = False
    hits: int = 0  # how often it was served: search hits and reused answers
    last_hit: datetime | None = None
    helpful: int = 0
    unhelpful: int = 0  # "down" feedback and follow-ups
    followups: int = 0


def _is_pair(rec: MemoryRecord) -> None:
    if rec.memory_type is not MemoryType.QA:
        raise ValidationError(f"memory {rec.memory_id} is not a Q&A pair")


class FaqConfig(views.Faq, views.Retrieval, views.Update, views.Types, Protocol):
    """The settings sections the FAQ assistant reads."""


class FaqStores(parts.Records, parts.Vectors, parts.Caches, Protocol):
    """The stores the FAQ assistant uses."""


class FaqEngine:
    """Q&A pairs and the ``ask`` routes over one store; the normal route answers from the
    context ``context`` builds (the session's window from ``reads``, then a search)."""

    def __init__(self, settings: FaqConfig, stores: FaqStores, update: UpdateEngine,
                 retrieval: RetrievalEngine, embedder: Callable[[], Embedder],
                 clock: Callable[[], datetime], llm: ChatClient | None,
                 context: ContextEngine, reads: ReadEngine,
                 second_opinion: SecondOpinion | None = None) -> None:
        self.settings = settings
        self.cfg = settings.faq
        self.stores = stores
        self._update = update
        self._retrieval = retrieval
        self._embedder = embedder
        self.clock = clock
        self.llm = llm
        self._context = context
        self._reads = reads
        # A second model's cosine for the gray zone (faq.second_opinion_*); None: no second.
        self.second_opinion = second_opinion

    # -- pairs ---------------------------------------------------------------------------------
    def save(self, question: Any, answer: Any, score: Any, scope: Scope,
             keywords: Sequence[Any] | None = None, *, ttl_mode: Any = None,
             ttl_days: Any = None, source_file: str | None = None,
             source_location: str | None = None) -> str:
        """Store a pair; its id. Keywords are extracted from the pair unless given."""
        question, answer = text(question, "question"), text(answer, "answer")
        meta = {k: v for k, v in (("source_file", source_file),
                                  ("source_location", source_location)) if v is not None}
        value = unit_score(score)
        draft = Draft(content=f"{question}\n{answer}", memory_type=MemoryType.QA,
                      ttl_mode=enum_of(TTLMode, ttl_mode, "TTL mode"), source="qa",
                      scope=scope, ttl_days=ttl_days, metadata=meta, question=question,
                      answer=answer, score=value)
        if keywords is not None:
            draft.keywords = checked_keywords(self.settings.update, keywords)
        return self._update.add([draft])[0].memory_id

    def all(self, tenant: str) -> list[MemoryRecord]:
        """Every current pair of the tenant, by id."""
        sel = Selection(tenant=tenant, types=[MemoryType.QA],
                        tiers=[t for t in Tier if t is not Tier.ARCHIVE])
        out: list[MemoryRecord] = []
        while batch := self.stores.records.select(sel, 1000, out[-1].memory_id if out else ""):
            out.extend(batch)
        return out

    def report(self, tenant: str) -> list[QaStatus]:
        """Every current pair of the tenant with its TTL weight at the clock's now (as the
        ``faq`` ranking weighs it), its hits and its feedback counts (from its history)."""
        now = self.clock()
        votes: dict[str, list[HistoryEntry]] = {}
        for e in self.stores.records.history_of(tenant, "feedback"):
            votes.setdefault(e.memory_id, []).append(e)
        out = []
        for rec in self.all(tenant):
            rule = self.settings.types[rec.memory_type].ttl
            weight = scoring.ttl_weight(rec.ttl_mode, scoring.age_days(rec.created_at, now),
                                        rec.ttl_days, rule.rate)
            status = QaStatus(record=rec, ttl_mode=rec.ttl_mode, ttl_days=rec.ttl_days,
                              weight_today=weight, hits=rec.retrieval_count,
                              last_hit=rec.last_retrieved_at,
                              expired=rec.expires_at is not None and rec.expires_at <= now)
            for e in votes.get(rec.memory_id, ()):
                if _helpful(e):
                    status.helpful += 1
                else:
                    status.unhelpful += 1
                    status.followups += e.reason == FOLLOWUP_REASON
            out.append(status)
        return out

    def search(self, question: str, top_k: int, tenant: str) -> list[SearchHit]:
        """The best pairs for ``question``: relevance x TTL weight x score (profile ``faq``)."""
        return self._retrieval.search(question, SearchFilter(tenant=tenant, types=[MemoryType.QA]),
                                      top_k=top_k, profile="faq", now=self.clock())

    def update(self, rec: MemoryRecord, *, question: Any = None, answer: Any = None,
               score: Any = None, keywords: Sequence[Any] | None = None, ttl_mode: Any = None,
               ttl_days: Any = None, reason: str = "") -> MemoryRecord:
        """Change a pair in place (history keeps the old values); new text is re-embedded."""
        _is_pair(rec)
        changes: dict[str, Any] = {}
        q = rec.question if question is None else text(question, "question")
        a = rec.answer if answer is None else text(answer, "answer")
        if (q, a) != (rec.question, rec.answer):
            changes.update(question=q, answer=a, content=f"{q}\n{a}",
                           content_hash=content_hash(f"{q}\n{a}"))
        if score is not None and unit_score(score) != rec.score:
            changes["score"] = unit_score(score)
        if ttl_mode is not None and enum_of(TTLMode, ttl_mode, "TTL mode") != rec.ttl_mode:
            changes["ttl_mode"] = enum_of(TTLMode, ttl_mode, "TTL mode")
        if ttl_days is not None and ttl_days != rec.ttl_days:
            if not isinstance(ttl_days, (int, float)) or ttl_days <= 0:
                raise ValidationError(f"ttl_days {ttl_days!r} is not a positive number")
            changes["ttl_days"] = float(ttl_days)
        if not changes and keywords is None:
            return rec
        new = self._update.edit(rec, changes, "update", reason, "api") if changes else rec
        if keywords is not None:
            kws = checked_keywords(self.settings.update, keywords)
            if kws != new.keywords:
                new = self._update.edit(new, {"keywords": kws}, "update", reason, "api")
        return new

    def feedback(self, rec: MemoryRecord, kind: str) -> MemoryRecord:
        """FLOW-1: ``up``, ``down`` or ``followup`` moves the pair's score by
        ``faq.feedback_*`` (``kind`` checked by :func:`check_feedback`)."""
        _is_pair(rec)
        cfg = self.cfg
        helpful, weight, reason = {
            "up": (True, cfg.feedback_up, "helpful"),
            "down": (False, cfg.feedback_down, "not helpful"),
            "followup": (False, cfg.feedback_followup, FOLLOWUP_REASON),
        }[kind]
        return self._update.feedback(rec, helpful, max(weight, 1e-6), reason)

    def export(self, folder: Path, tenant: str) -> list[Path]:
        """Write every current pair as ``qa-<id>.md`` into ``folder``."""
        return [qa_files.write(folder, r) for r in self.all(tenant)]

    def import_folder(self, folder: Path, tenant: str) -> dict[str, Any]:
        """Read ``qa-*.md`` files: a file whose id is a pair of the tenant updates it, any other
        adds a pair; a malformed one is reported by name and skipped."""
        if not folder.is_dir():
            raise ValidationError(f"{folder} is not a folder")
        files, skipped = qa_files.candidates(folder, self.settings.update)
        report: dict[str, Any] = {"created": {}, "updated": [], "unchanged": [],
                                  "skipped": skipped}
        for file in files:
            try:
                qa = qa_files.read(file, self.settings.update)
            except (ValueError, OSError) as exc:
                report["skipped"][file.name] = str(exc)
                continue
            try:
                known = None if qa.id is None else self.stores.records.get(tenant, qa.id)
                if known is not None and known.memory_type is MemoryType.QA \
                        and known.tier is not Tier.ARCHIVE:
                    after = self.update(known, question=qa.question, answer=qa.answer,
                                        score=qa.score, keywords=qa.keywords,
                                        ttl_mode=qa.ttl_mode, ttl_days=qa.ttl_days,
                                        reason=f"imported {file.name}")
                    (report["updated"] if _state(after) != _state(known)
                     else report["unchanged"]).append(file.name)
                else:
                    report["created"][file.name] = self.save(
                        qa.question, qa.answer, qa.score, Scope(tenant=tenant), qa.keywords,
                        ttl_mode=qa.ttl_mode, ttl_days=qa.ttl_days, source_file=qa.source_file,
                        source_location=qa.source_location)
            except ValidationError as exc:
                report["skipped"][file.name] = str(exc)
        return report

    # -- L3: ask -------------------------------------------------------------------------------
    def ask(self, question: str, session: str | None, user: str | None,
            tenant: str) -> AskResult:
        """The cheapest honest route for ``question`` (see :meth:`Memory.ask`); with
        ``session``, the implicit feedback on the session's previous answer."""
        started = time.perf_counter()
        res: AskResult
        chat = chit_chat(question)
        if chat is not None:
            res = AskResult(route="skip", answer=chat[1], reason=f"chit-chat ({chat[0]})")
        else:
            found: AskResult | None = None
            refused: dict[str, Any] | None = None
            if self.cfg.enabled:
                found = self._cached(question, user, tenant)
                if found is None:
                    found, refused = self._reuse(question, user, tenant)
                if found is not None and found.matched \
                        and self.settings.retrieval.record_retrieval:
                    # A reused answer is a hit of its pair (retrieval_count, mem.qa.report).
                    self.stores.records.record_retrieval(tenant, [found.matched["id"]],
                                                         self.clock())
            if found is None:
                found = self._normal(question, session, user, tenant)
                found.evidence = refused
            res = found
        res.ms = round((time.perf_counter() - started) * 1000, 3)
        if session is not None:
            self._session_feedback(session, tenant, chat[0] if chat else None, res)
        return res

    def _session_feedback(self, session: str, tenant: str, chat: str | None,
                          res: AskResult) -> None:
        """Implicit feedback on the pair that answered the session's previous question, and
        remember this answer's pair (in the store: the CLI asks from separate processes)."""
        key = composite_key("faq", "last", tenant, session)
        last = self.stores.records.get_meta(key)
        now = self.clock()
        if last:
            pair, at = last.split("|", 1)
            recent = now - datetime.fromisoformat(at) <= \
                timedelta(minutes=self.cfg.followup_minutes)
            kind = "up" if chat in ("thanks", "acknowledgement") else ("followup" if chat is None else None)
            rec = self.stores.records.get(tenant, pair) if recent and kind else None
            if kind and rec is not None and rec.tier is not Tier.ARCHIVE:
                with contextlib.suppress(ValidationError):  # no longer a pair
                    self.feedback(rec, kind)
        pair_id = (res.matched or {}).get("id")
        self._update.set_meta(key, f"{pair_id}|{now.isoformat()}" if pair_id else "")

    @staticmethod
    def _answer_key(question: str, user: str | None, tenant: str) -> tuple[str, str | None, str]:
        """The L3 cache's key: the question as typed, case and spacing normalised."""
        return tenant, user, " ".join(question.lower().split())

    def _cached(self, question: str, user: str | None, tenant: str) -> AskResult | None:
        """A pair promoted to the cache answers its question as typed, if it is still the
        same pair: current, unchanged, not expired (else it leaves the cache)."""
        key = self._answer_key(question, user, tenant)
        hit = self.stores.answers.get(key)
        if hit is None:
            return None
        mid, version = hit
        rec = self.stores.records.get(key[0], mid)
        now = self.clock()
        if rec is None or rec.content_hash != version or rec.valid_to is not None \
                or (rec.expires_at is not None and rec.expires_at <= now) \
                or (rec.score or 0.0) < self.cfg.cache_min_score:
            self.stores.answers.drop(key)
            return None
        if not self._sources_intact(rec):
            self.stores.answers.drop(key)
            self._retire(rec)
            return None
        return AskResult(route="reuse", answer=rec.answer or "", confidence=1.0, sources=[mid],
                         matched={"id": mid, "question": rec.question, "score": rec.score},
                         evidence={"cached": True, "pair": mid},
                         reason="cached: a validated answer to this question")

    def _promote_to_cache(self, question: str, user: str | None, tenant: str,
                          rec: MemoryRecord) -> None:
        if (rec.score or 0.0) >= self.cfg.cache_min_score:
            key = self._answer_key(question, user, tenant)
            self.stores.answers.put(key, rec.memory_id, rec.content_hash)

    def match(self, question: str, user: str | None, tenant: str) -> AskResult:
        """What ``ask``'s routes decide for ``question`` short of answering: ``skip`` for
        chit-chat, ``reuse`` with the pair its reuse step would reuse (the exact-question
        cache is not read), else ``normal`` with no answer and why the nearest pair was
        refused (``evidence``; None: no pair near, or ``faq.enabled`` off). Nothing is
        recorded, cached or retired, and no answer is made (an LLM may still judge the
        pair)."""
        chat = chit_chat(question)
        if chat is not None:
            return AskResult(route="skip", answer=chat[1], reason=f"chit-chat ({chat[0]})")
        found, refused = self._reuse(question, user, tenant, dry=True) if self.cfg.enabled \
            else (None, None)
        return found or AskResult(route="normal", answer="", reason="no pair reused",
                                  evidence=refused)

    def _reuse(self, question: str, user: str | None, tenant: str, dry: bool = False
               ) -> tuple[AskResult | None, dict[str, Any] | None]:
        """The stored pair whose confidence (:mod:`.faq_confidence`, ``faq.reuse_judge``)
        says it asks the same, or None and why the nearest pair was refused (None: no pair
        near). ``dry``: a pair whose sources changed is not retired, a reuse not cached."""
        cfg = self.cfg
        qvec: np.ndarray = self._embedder().embed_query(question)
        flt = SearchFilter(tenant=tenant, types=[MemoryType.QA],
                           user=None if cfg.share_across_users else user)
        self.stores.sync(persist=False)
        near = [(i, float(c)) for i, c in
                self.stores.vectors.search(qvec, cfg.reuse_candidates, flt, approximate=True)
                if c >= cfg.reuse_min_cosine]
        ok = {c.memory_id for c in self.stores.records.filter([i for i, _ in near], flt,
                                                               self.clock())} if near else set()
        recs = self.stores.records.get_many(tenant, [i for i, _ in near if i in ok]) if ok else {}
        current = [(recs[mid], cos) for mid, cos in near if mid in recs]
        if not current:
            return None, None
        judge = pair_judge(self._embedder().model_id) if cfg.reuse_judge == "learned" else None
        used = "learned" if judge is not None else \
            "llm" if cfg.reuse_judge == "llm" and self.llm is not None else "calibrated"
        if judge is not None:
            scored = self._judged(question, current, judge)
            conf, _, rec = max(scored, key=lambda t: (t[0].value, t[1]))
            at_least = judge.threshold if cfg.reuse_judge_min is None else cfg.reuse_judge_min
            accept = conf.value >= at_least
        elif used == "llm":
            scored = [self._asked(question, *max(current, key=lambda t: t[1]))]
            conf, _, rec = scored[0]
            accept = conf.value == 1.0
        else:
            scored = [(confidence(question, r.question or "", cos), cos, r) for r, cos in current]
            conf, _, rec = max(scored, key=lambda t: (t[0].value, t[1]))
            second = self.second_opinion
            accept = decide(conf, cfg.reuse_confidence,
                            (cfg.second_opinion_low, cfg.second_opinion_high),
                            None if second is None
                            else lambda: second(question, rec.question or ""),
                            cfg.second_opinion_cosine)
        if not accept:
            # Say why the nearest pair (the one a cosine alone would reuse) was not.
            conf, _, rec = max(scored, key=lambda t: t[1])
        evidence = {**conf.explain(), "judge": used, "pair": rec.memory_id,
                    "question": rec.question}
        if not accept:
            return None, {**evidence, "refused": "confidence"}
        if (rec.score or 0.0) < cfg.reuse_min_score:
            return None, {**evidence, "refused": "score"}
        if not self._sources_intact(rec):
            if not dry:
                self._retire(rec)
            return None, {**evidence, "refused": "a source changed"}  # answered anew
        if not dry:
            self._promote_to_cache(question, user, tenant, rec)
        return AskResult(route="reuse", answer=rec.answer or "", sources=[rec.memory_id],
                         confidence=round(conf.value, 4), evidence=evidence,
                         matched={"id": rec.memory_id, "question": rec.question,
                                  "score": rec.score},
                         reason="a validated answer to the same question"), None

    def _asked(self, question: str, rec: MemoryRecord, cos: float
               ) -> tuple[Confidence, float, MemoryRecord]:
        """The LLM's verdict on ``rec`` (the nearest pair, at cosine ``cos``) as a
        :class:`Confidence`: 1 when it says the two ask the same, else 0, with why in its
        veto (it said different, said neither, or failed: then nothing is reused)."""
        assert self.llm is not None
        lang = language(question)
        if pair_features(question, rec.question or "", cos, cos, 0)[1]["equal"]:  # certain
            return Confidence(1.0, lang, {"cosine": cos, "equal": 1.0}), cos, rec
        try:
            answer = self.llm.complete(SAME_QUESTION_PROMPT,
                                       same_question_prompt(rec.question or "", question))
        except VarvememError as exc:
            logging.getLogger("varvemem.llm").warning("the FAQ reuse check failed: %s", exc)
            return Confidence(0.0, lang, {"cosine": cos}, f"the LLM failed: {exc}"), cos, rec
        same = read_same(answer)
        why = "" if same else "the LLM judged another question" if same is False else \
            f"the LLM answered neither SAME nor DIFFERENT: {answer.strip()[:80]!r}"
        return Confidence(float(bool(same)), lang, {"cosine": cos}, why), cos, rec

    @staticmethod
    def _judged(question: str, near: list[tuple[MemoryRecord, float]], judge: PairJudge
                ) -> list[tuple[Confidence, float, MemoryRecord]]:
        """The paraphrase judge's probability for each of ``near`` (pairs with their
        cosine), as a :class:`Confidence` whose parts are the features it read (a veto of
        the calibrated path is one of them, ``veto_<kind>``, not a refusal)."""
        near = sorted(near, key=lambda t: -t[1])
        best = near[0][1]
        out = []
        for rank, (r, cos) in enumerate(near):
            row, parts, _ = pair_features(question, r.question or "", cos, best, rank)
            # The same question (normalised) is certain, as on the calibrated path.
            p = 1.0 if parts["equal"] else judge.probability(row)
            out.append((Confidence(p, language(question), dict(zip(PAIR_FEATURES, row))),
                        cos, r))
        return out

    def _block(self, question: str, session: str | None, user: str | None,
               tenant: str) -> Block:
        """The normal route's context: what :meth:`varvemem.Memory.context` gives for the
        question (the user's memories of the tenant, the session's window first)."""

        def search(top_k: int) -> list[SearchHit]:
            _validate.query(self.settings, question, top_k, None)
            return self._retrieval.search(question, SearchFilter(tenant=tenant, user=user),
                                          top_k=top_k, now=self.clock())

        scope = Scope(tenant=tenant, user=user, session=session)
        return self._context.build(
            question, None, self.cfg.top_k, ASK_PROMPT, search,
            None if session is None else lambda: self._reads.session_window(scope, self.clock()))

    def _normal(self, question: str, session: str | None, user: str | None,
                tenant: str) -> AskResult:
        cfg = self.cfg
        context, hits, window = self._block(question, session, user, tenant) \
            if cfg.enabled else ("", [], [])
        llm = self.llm
        quoted = [*window, *(h.memory.memory_id for h in hits)]
        if llm is None:
            answer = ("No LLM is configured, so here are the memories most relevant to the "
                      "question:\n\n" + context) if context else \
                "No LLM is configured and no memory matches the question."
            return AskResult(route="normal", answer=answer, reason="retrieval (no LLM)",
                             sources=quoted)
        try:
            answer = llm.complete(
                ASK_PROMPT, f"{context or NO_MEMORIES}\n\nQuestion: {question}").strip()
        except VarvememError as exc:
            logging.getLogger("varvemem.llm").warning(
                "ask answers with the retrieved memories only: %s", exc)
            return AskResult(route="normal", answer=context, reason=f"retrieval (LLM failed: "
                             f"{exc})", sources=quoted)
        # The pair remembers the memories its answer came from: when one of them changes, the
        # pair is no longer reused (see _sources_intact).
        sources = {h.memory.memory_id: h.memory.content_hash for h in hits}
        pair = self._save_answer(question, answer, sources, user, tenant) \
            if answer and cfg.enabled else None
        return AskResult(route="normal", answer=answer, reason="retrieval + LLM",
                         matched={"id": pair, "question": question, "score": cfg.initial_score}
                         if pair else None, llm=True, sources=quoted)

    def _save_answer(self, question: str, answer: str, sources: dict[str, str],
                     user: str | None, tenant: str) -> str:
        pid = self.save(question, answer, self.cfg.initial_score, Scope(tenant=tenant, user=user))
        rec = self.stores.records.get(tenant, pid) if sources else None
        if rec is not None:
            self._update.edit(rec, {"metadata": {**rec.metadata, "sources": sources}}, "link",
                              "the memories the answer came from", "ask")
            self._update.mark_derived(tenant, list(sources), pid)
        return pid

    def _sources_intact(self, rec: MemoryRecord) -> bool:
        """Are the memories a pair's answer came from all still current and unedited?"""
        sources = rec.metadata.get("sources")
        if not isinstance(sources, dict) or not sources:
            return True
        now = self.clock()
        live = self.stores.records.get_many(rec.scope.tenant, list(sources))
        return all((src := live.get(mid)) is not None and src.content_hash == h
                   and (src.valid_to is None or src.valid_to > now)
                   for mid, h in sources.items())

    def _retire(self, rec: MemoryRecord) -> None:
        """A pair whose answer rests on a memory that changed is no longer valid (kept in
        history, never served again)."""
        self._update.edit(rec, {"valid_to": self.clock()}, "supersede",
                          "a memory the answer came from changed", "ask")
