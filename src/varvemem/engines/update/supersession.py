"""What a new memory supersedes (SPEC UPD-4): the memories a draft names, else the offline
rules (:mod:`.claim_rules`) confirmed and extended by the learned judge (:mod:`..judge`), with
the LLM asked about the pairs the judge is unsure of (:mod:`..llm_judge`), or the LLM alone
(with no judge) on the candidates the rules and the similarity find.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from ...errors import LLMError
from ...language.records import other_record
from ...model import TYPES, MemoryRecord
from .. import claims, llm_judge
from .. import judge as judging
from .claim_rules import ClaimRules
from .llm_steps import llm_supersede
from .shared import Prepared, current, near_duplicate

log = logging.getLogger("varvemem.llm")  # the LLM steps' fallbacks

# The memories most similar to a draft, given the earlier ones of its batch (the pipeline's).
Similar = Callable[[Prepared, list[Prepared]], list[tuple[MemoryRecord, float]]]


class Supersession(ClaimRules):
    """What a draft supersedes: the rules, the learned judge's use and the LLM's."""

    def judge(self) -> judging.Choice:
        """The learned judge the write path uses (``update.judge``), or why none."""
        return judging.choose(self.cfg.judge, self.cfg.judge_path, self._embedder().model_id)

    def judge_with_llm(self, batch: list[Prepared], similar_to: Similar) -> None:
        """Ask the LLM which memories each draft supersedes, before the write transaction
        (never hold the store's write lock across an HTTP call). It sees the committed
        memories associated with the draft (``similar_to``); the transaction re-checks they are
        still current."""
        if not self.llm_for("supersede"):
            return
        choice = self.judge()
        for p in batch:
            if p.record.memory_type not in self.cfg.supersede_types or p.draft.supersedes:
                continue
            similar = similar_to(p, [])
            if choice.judge is not None:
                self._ask_llm_when_unsure(p, similar, choice.judge)
                continue
            candidates = self.supersede_candidates(p.record, similar,
                                                   self.cfg.associate_threshold)
            found, _ = self.rules_supersede(p, similar)  # the rules find candidates too
            pool = {r.memory_id: (r, cos) for r, cos in self.pool(p, similar)[0]}
            known = {r.memory_id for r, _ in candidates}
            candidates += [pool[i] for i in found if i in pool and i not in known]
            if not candidates:
                continue
            try:
                p.llm_verdict = llm_supersede(self.llm, p.record, candidates)
            except LLMError as exc:
                p.llm_error = str(exc)
                log.warning("supersede falls back to the rules: %s", exc)

    def _ask_llm_when_unsure(self, p: Prepared, similar: list[tuple[MemoryRecord, float]],
                             judge: judging.Judge) -> None:
        """Ask the LLM about the pairs the judge finds ambiguous (at least ``judge_llm_from``
        and under its ``write`` probability, no rule finding, none it may not retire alone,
        no other record; :mod:`..llm_judge`, one request): ``p.llm_verdict`` holds those it
        calls an update, merged with the judge's decision in the transaction. On an LLM
        failure the judge's decision stands (``p.llm_error`` says so)."""
        text = self.said(p.record)
        if not TYPES[p.record.memory_type].states_facts or claims.is_question(text):
            return
        found, _ = self.rules_supersede(p, similar)
        decided, _, verdicts = self._judged(p, similar, found, [], judge)
        write = self.cfg.judge_write if self.cfg.judge_write is not None else judge.write
        new = judging.Side(text)
        unsure = [(r, v) for r, v in verdicts if r.memory_id not in decided and v.veto is None
                  and r.memory_id not in found and self.cfg.judge_llm_from <= v.p < write
                  and self._may_retire_alone(p.record, r, new, judging.Side(self.said(r)))]
        p.llm_verdict, p.llm_asked = {}, len(unsure)
        if not unsure:
            return
        assert self.llm is not None
        try:
            said = llm_judge.judge_pairs(self.llm, text, [self.said(r) for r, _ in unsure])
        except LLMError as exc:
            p.llm_error = str(exc)
            log.warning("supersede: the judge decides alone: %s", exc)
            return
        p.llm_verdict = {r.memory_id: f"llm: {j.reason or j.verdict} ({v.reason()})"
                         for (r, v), j in zip(unsure, said) if j.updates}

    def detect_supersede(self, p: Prepared, similar: list[tuple[MemoryRecord, float]],
                         accepted: Sequence[Prepared] = ()) -> tuple[dict[str, str], str]:
        if p.llm_verdict is not None and p.llm_asked is None:  # the LLM alone (no judge)
            return self._other_records(p.record, p.llm_verdict), "llm"
        fallback = f"rules (llm failed: {p.llm_error})" if p.llm_error else "rules"
        found, note = self.rules_supersede(p, similar)
        choice = self.judge()
        if choice.judge is None:
            fallback = choice.label() if fallback == "rules" else fallback
            found = self._other_records(p.record, found)
        elif TYPES[p.record.memory_type].states_facts and not claims.is_question(self.said(p.record)):
            found, alone, _ = self._judged(p, similar, found, accepted, choice.judge)
            version = choice.judge.version
            if p.llm_asked is not None:  # the LLM answered the pairs the judge was unsure of
                found.update(p.llm_verdict or {})
                why = f" (llm failed: {p.llm_error})" if p.llm_error else \
                    f", llm on {p.llm_asked} unsure" if p.llm_asked else ""
                return found, f"judge {version}{why}"
            if alone:  # the judge retired what no rule found
                return found, f"judge {version}" if len(alone) == len(found) \
                    else f"{fallback}, judge {version}"
        else:
            found = self._other_records(p.record, found)
        if found:
            return found, fallback
        if note:
            return {}, f"{fallback} ({note})"
        candidates = self.supersede_candidates(p.record, similar, self.cfg.supersede_threshold)
        if not candidates and not p.llm_error:
            return {}, "none"
        return {}, fallback

    def _may_retire_alone(self, rec: MemoryRecord, r: MemoryRecord, new: judging.Side,
                          old: judging.Side) -> bool:
        """Whether the judge (or the LLM it asks) may retire ``r`` by ``rec`` with no rule:
        statements of knowledge, not ledger lines, not near duplicates, and not beside what
        a transition or a negation naming the old value finds (the rules find its holder)."""
        return TYPES[rec.memory_type].statement and TYPES[r.memory_type].statement \
            and not new.names_old_value and not (new.ledger and old.ledger) \
            and not near_duplicate(self.cfg, r, 1.0, rec)

    def _other_records(self, rec: MemoryRecord, found: Mapping[str, str]) -> dict[str, str]:
        """``found`` but the memories about another record than ``rec`` (an order, a ticket,
        a build of another identifier: :func:`...language.records.other_record`)."""
        if not found:
            return {}
        olds = self.stores.records.get_many(rec.scope.tenant, list(found))
        new = judging.Side(self.said(rec))
        return {i: why for i, why in found.items() if i not in olds
                or other_record(new.text, self.said(olds[i]), new.states_change) is None}

    def _judged(self, p: Prepared, similar: list[tuple[MemoryRecord, float]],
                found: Mapping[str, str], accepted: Sequence[Prepared], judge: judging.Judge
                ) -> tuple[dict[str, str], set[str],
                           list[tuple[MemoryRecord, judging.Verdict]]]:
        """What ``p`` supersedes by the learned judge: what the rules ``found`` that the judge
        gives at least ``judge_confirm``, and each current statement of knowledge older than
        it among its nearest (at ``judge_gate``) that the judge gives at least its ``write``
        probability; never one about another record. The judge alone retires no event (they
        add up), no turn of conversation (talk is not a claim: the read side marks them) and
        no near duplicate (merged instead), no ledger line by another, and nothing beside
        what a transition naming its old value finds. Returns what it supersedes, each with why,
        the ids no rule found, and each candidate's verdict."""
        rec, cfg = p.record, self.cfg
        assert p.vector is not None
        batch = {q.record.memory_id: q for q in accepted}
        pool = {r.memory_id: r for r, cos in similar if cos >= cfg.judge_gate}
        pool.update(current(self.stores.records, dict(found), rec.scope.tenant, batch))
        cands = [r for r in pool.values() if TYPES[r.memory_type].states_facts
                 and r.memory_type in cfg.supersede_types and r.created_at <= rec.created_at
                 and r.memory_id != rec.memory_id
                 # What it may act on: a rule's finding, or what it may retire alone.
                 and (r.memory_id in found
                      or (TYPES[rec.memory_type].statement
                          and TYPES[r.memory_type].statement))]
        stored = self.stores.vectors.vectors([r.memory_id for r in cands
                                              if r.memory_id not in batch])
        vecs = {i: q.vector for i, q in batch.items() if q.vector is not None} | stored
        cands = [r for r in cands if r.memory_id in vecs]
        olds = [judging.Side(self.said(r)) for r in cands]
        write = cfg.judge_write if cfg.judge_write is not None else judge.write
        # Nothing under this is acted on: a rule's finding, or a pair the LLM is asked about.
        floor = min(write, cfg.judge_confirm if found else 1.0,
                    cfg.judge_llm_from if self.llm_for("supersede") else 1.0)
        new = judging.Side(self.said(rec))
        verdicts = judge.judge(new, p.vector,
                               [(o, vecs[r.memory_id]) for o, r in zip(olds, cands)], floor)
        out: dict[str, str] = {}
        alone: set[str] = set()
        for r, old, v in zip(cands, olds, verdicts):
            rule = found.get(r.memory_id)
            if v.veto is not None:
                continue
            if rule and v.p >= cfg.judge_confirm:
                out[r.memory_id] = f"{rule} ({v.reason()})"
            elif v.p >= write and self._may_retire_alone(rec, r, new, old):
                out[r.memory_id] = f"updated by a newer statement ({v.reason()})"
                alone.add(r.memory_id)
        return out, alone, list(zip(cands, verdicts))
