"""The offline supersession rules (``update.supersede_rules``): what they compare a new
statement with (its nearest current memories and full-text matches, :meth:`ClaimRules.pool`),
what each memory states (parsed once, :mod:`..statements`), and the rules themselves, a row
each in :data:`SUPERSEDE_RULES` (``transition``, ``negation``, ``frame``, ``cue``), tried in
the order the setting lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...model import TYPES, MemoryRecord, MemoryType, SearchFilter
from ...text import index_terms
from .. import claims, rules, statements
from .shared import Prepared, WriteBase

Found = tuple[dict[str, str], str]  # what a rule supersedes (id -> why), and a note


def _shape(content: str, value: str) -> int:
    """How much of ``value``'s leading letters a value of ``content`` shares (``eks-stg-6``
    and ``eks-stg-3``: 8)."""
    best = 0
    for v in claims.values(content):
        n = 0
        for x, y in zip(v.text, value):
            if x != y:
                break
            n += 1
        best = max(best, n)
    return best




class ClaimRules(WriteBase):
    """The offline rules, over the stores and settings of the update engine."""

    def lexicon(self) -> claims.Lexicon:
        """The claim rules' attribute words (``update.attribute_words`` on the built-in ones)."""
        return claims.lexicon_for(self.cfg.attribute_words)

    def supersede_candidates(self, rec: MemoryRecord, similar: list[tuple[MemoryRecord, float]],
                             gate: float) -> list[tuple[MemoryRecord, float]]:
        return [(r, cos) for r, cos in similar if cos >= gate and r.memory_type == rec.memory_type
                and r.created_at <= rec.created_at]

    def pool(self, p: Prepared, similar: list[tuple[MemoryRecord, float]],
             terms: Sequence[str] = ()
             ) -> tuple[list[tuple[MemoryRecord, float]], dict[str, claims.Statement]]:
        """What the claim rules compare a statement with: its nearest current memories and
        up to ``claim_candidates`` full-text matches of ``terms`` in the same
        tenant/user/agent, statements of fact older than it (cosine -1 when not among the
        nearest); and what each states (:meth:`_statements`)."""
        rec, s = p.record, p.record.scope
        found = {r.memory_id: (r, cos) for r, cos in similar}
        if terms and self.cfg.claim_candidates and p.vector is not None:
            flt = SearchFilter(tenant=s.tenant, user=s.user, agent=s.agent)
            hits = self.stores.records.keyword_search(
                terms, flt, self.clock(), self.cfg.claim_candidates,
                0.0, self.settings.retrieval.keyword_max_docs,
                self.settings.retrieval.keyword_scan_docs or None)
            more = [m for m, _ in hits if m not in found and m != rec.memory_id]
            vecs = self.stores.vectors.vectors(more) if more else {}
            for mid, r in self.stores.records.get_many(s.tenant, more).items():
                if r.valid_to is None and r.scope.user == s.user and r.scope.agent == s.agent:
                    v = vecs.get(mid)
                    found[mid] = (r, float(v @ p.vector) if v is not None else -1.0)
        pool = [(r, cos) for r, cos in found.values()
                if TYPES[r.memory_type].states_facts and r.memory_type in self.cfg.supersede_types
                and r.created_at <= rec.created_at and r.memory_id != rec.memory_id]
        said = self._statements(s.tenant, [r for r, _ in pool], p.stale_statements)
        return [(r, cos) for r, cos in pool if not said[r.memory_id].question], said

    def _statements(self, tenant: str, records: Sequence[MemoryRecord],
                    stale: dict[str, bytes]) -> dict[str, claims.Statement]:
        """What each of ``records`` states, by id: the statement stored with it when that
        was parsed from what it says now (:mod:`..statements`), else parsed now; the
        statements parsed now go into ``stale`` (by id, as stored) to be written back."""
        stored = self.stores.records.statements(tenant, [r.memory_id for r in records])
        lex, span = self.lexicon(), self.cfg.claim_subject_span
        out = {}
        for r in records:
            out[r.memory_id], fresh = statements.checked(self.said(r), stored.get(r.memory_id),
                                                         lex, span)
            if fresh is not None and self.cfg.supersede_rules:  # else none is stored (statement)
                stale[r.memory_id] = fresh
        return out

    def statement(self, rec: MemoryRecord) -> bytes | None:
        """What is stored of ``rec`` for the rules to read later (:mod:`..statements`); None
        for what they never compare."""
        if not TYPES[rec.memory_type].states_facts \
                or rec.memory_type not in self.cfg.supersede_types \
                or not self.cfg.supersede_rules:
            return None
        return statements.stored(self.said(rec), self.lexicon(), self.cfg.claim_subject_span)

    def said(self, r: MemoryRecord) -> str:
        """What ``r`` states: a turn of dialogue without the speaker's label its metadata
        names ("Caroline: ...") and the names it addresses ("Thanks, Gina!"). Neither is a
        value of what is said."""
        if r.memory_type is not MemoryType.DIALOGUE:
            return r.content
        speakers = tuple(v for k in self.cfg.speaker_keys
                         if isinstance(v := r.metadata.get(k), str) and v)
        return claims.without_address(claims.without_speaker(r.content, speakers))

    def rules_supersede(self, p: Prepared, similar: list[tuple[MemoryRecord, float]]
                        ) -> tuple[dict[str, str], str]:
        """The memories ``p`` supersedes by the offline rules (``update.supersede_rules``),
        each with the rule that decided, and a note when a rule matched but found nothing."""
        rec, cfg = p.record, self.cfg
        text = self.said(rec)
        on = set(cfg.supersede_rules)
        if claims.is_question(text):
            return {}, ""
        fact = TYPES[rec.memory_type].states_facts
        t = claims.transition(text) if fact and "transition" in on else None
        neg = claims.negation(text) if fact and "negation" in on else None
        new = claims.claim(text, cfg.claim_subject_span)
        # A statement with nothing a rule could match reads no more candidates.
        wanted = t is not None or neg is not None or "frame" in on
        # Only a transition or a negation reads full text: it names the old value, which may
        # be worded far from the new statement; a claim with a new value reads like its old
        # one, so the nearest memories hold it (a full-text query per add cost most of an
        # add's time in bulk). The query is what an old statement must share: the change's
        # subject and old value, the negation's words; not the whole text (an OR of all its
        # words ranks most of a big store).
        terms: list[str] = []
        if t is not None:
            terms = [*t.subject, *index_terms(t.old or "")] or index_terms(text)
        elif neg is not None:
            terms = list(neg.words) or index_terms(text)
        pool, said = self.pool(p, similar, terms) if fact and wanted else ([], {})
        seen = _Seen(p, similar, text, fact, t, neg, new, pool, said)
        for name in dict.fromkeys(cfg.supersede_rules):  # the configured order
            found = SUPERSEDE_RULES[name](self, seen)
            if found is not None:
                return found
        return {}, ""

    def _transition(self, s: _Seen) -> Found | None:
        """``transition``: it decides when it finds a memory or names an old value."""
        if s.t is None:
            return None
        found, note = self._by_transition(s.t, s.pool, s.said)
        if found or s.t.old is not None:
            return found, note
        return None

    def _negation(self, s: _Seen) -> Found | None:
        """``negation``: what it retires, if any."""
        if s.neg is None:
            return None
        found = self._by_negation(s.neg, s.pool, s.said)
        if found:
            return found, ""
        return None

    def _frame(self, s: _Seen) -> Found | None:
        """``frame``: the same claim with a new value, of a statement not negated."""
        cfg = self.cfg
        if s.fact and not claims.is_negated(s.text):
            mine = claims.statement(s.text, self.lexicon(), cfg.claim_subject_span)
            found = {}
            for r, _ in s.pool:
                if s.said[r.memory_id].negated:
                    continue
                why = claims.statement_supersedes(
                    mine, s.said[r.memory_id], frame_overlap=cfg.claim_frame_overlap,
                    min_words=cfg.claim_min_words, subject_overlap=cfg.claim_subject_overlap,
                    old_is_event=r.memory_type is MemoryType.EVENT)
                if why:
                    found[r.memory_id] = why
            if found:
                return found, ""
        return None

    def _cue(self, s: _Seen) -> Found | None:
        """``cue``: an update word and the nearest memory of the same type and subject."""
        rec, cfg, new = s.p.record, self.cfg, s.new
        written = TYPES[rec.memory_type].written
        if rules.is_update(s.text) and (new.values or written):
            for r, cos in self.supersede_candidates(rec, s.similar, cfg.supersede_threshold):
                if r.memory_type is MemoryType.EVENT:
                    continue  # occurrences add up
                old = claims.claim(self.said(r), cfg.claim_subject_span)
                if new.subject is not None and old.subject is not None \
                        and new.subject != old.subject:
                    continue  # another subject (service A vs service B)
                # In conversation "now" and a close turn are everyday talk ("Thanks! I'm off
                # now"): a value other than a name must have changed too.
                if not written and not claims.changed_value(new, old, names=False):
                    continue
                return {r.memory_id: f"updated by a newer statement (cosine {cos:.2f})"}, ""
        return None

    def _by_negation(self, neg: claims.Negation, pool: list[tuple[MemoryRecord, float]],
                     said: Mapping[str, claims.Statement]) -> dict[str, str]:
        """The memories a negation retires: those stating a value it says is gone ("no
        longer uses RabbitMQ") about the same subject (``claim_subject_overlap`` of the
        fewer subject words shared); else, when it names no value, those whose words it
        covers at ``negation_overlap`` both ways, or that say what it stopped and otherwise
        only when, how often or how much (:func:`claims.negates`)."""
        cfg, lex = self.cfg, self.lexicon()
        found = {}
        rest = claims.slots(neg.rest, lex)
        # A name opening the sentence is a value too ("Pulsar is no longer used by ...").
        gone = neg.values or tuple(w for w in rest.leads if w == neg.opener)
        mine = rest.subject_words - set(gone)
        for r, _ in pool:
            if said[r.memory_id].negated:
                continue
            claim, slots = self._own(r, said)
            if gone:
                held = [v for v in gone if self._holds(r, v, said)]
                theirs = slots.subject_words
                shared = len(mine & theirs)
                if held and (not mine or not theirs or shared >= cfg.claim_subject_overlap
                             * min(len(mine), len(theirs))):
                    found[r.memory_id] = f"negated: no longer {', '.join(held)}"
                if held or neg.values:
                    continue
            want = set(neg.words)
            have = claim.tokens
            covered = bool(want) and len(want & have) >= cfg.negation_overlap * len(want) \
                and len(want & have) >= cfg.negation_overlap * len(have)
            if covered or claims.negates(neg, self.said(r), cfg.negation_extra_words):
                found[r.memory_id] = "negated: no longer true"
        return found

    def _own(self, r: MemoryRecord, said: Mapping[str, claims.Statement]
             ) -> tuple[claims.Claim, claims.Slots]:
        """The claim and slots of what ``r`` says itself (not the state a change it states
        leaves): its statement's when it states no change."""
        st = said[r.memory_id]
        if st.plain:
            return st.claim, st.slots
        text = self.said(r)
        return claims.claim(text, self.cfg.claim_subject_span), claims.slots(text, self.lexicon())

    def _holds(self, r: MemoryRecord, value: str, said: Mapping[str, claims.Statement]) -> bool:
        return claims.holds(self.said(r), value, said[r.memory_id].values)

    def _by_transition(self, t: claims.Transition, pool: list[tuple[MemoryRecord, float]],
                       said: Mapping[str, claims.Statement]) -> tuple[dict[str, str], str]:
        """The memories a transition replaces: those holding its old value (those naming its
        subject, when some do; an old value that is a plain word needs a subject), else the
        one naming its subject with a value of the new value's kind."""
        subject = set(t.subject)
        live = [(r, cos) for r, cos in pool if not self._holds(r, t.new, said)]
        lex = self.lexicon()
        want = claims.slots(t.phrase, lex)

        def names_subject(r: MemoryRecord) -> bool:
            """Its words hold the subject's, or its slots the subject's words (at
            ``claim_subject_overlap``) and a compatible attribute ("日志管道的负责人" and
            "日志管道有问题找朱琳")."""
            if not subject:
                return False
            claim, theirs = self._own(r, said)
            if subject <= claim.tokens:
                return True
            if not want.subject_words:  # "我的手机号换成了 ...": the attribute alone
                return not theirs.subject_words and bool(want.attributes & theirs.attributes)
            shared = len(want.subject_words & theirs.subject_words)
            return shared >= self.cfg.claim_subject_overlap * len(want.subject_words) and \
                (not want.attributes or not theirs.attributes
                 or bool(want.attributes & theirs.attributes))

        if t.old is not None and not subject and claims.kind_of(t.old) not in claims.RECORDS:
            return {}, ""  # "I moved from Sweden to ...": a word, of no named subject
        if t.old is not None:
            holders = [r for r, _ in live if self._holds(r, t.old, said)]
            if not holders:
                return {}, f"transition from {t.old}: no memory holds {t.old}"
            named = [r for r in holders if names_subject(r)]
            return {r.memory_id: f"transition from {t.old} ({t.rule})"
                    for r in (named or ([] if t.rule == claims.OPENER_RULE else holders))}, ""
        kind = claims.kind_class(claims.kind_of(t.new))
        fits = [(r, cos) for r, cos in live if names_subject(r)
                and kind in {claims.kind_class(k) for k in self._own(r, said)[0].kinds}]
        if not fits:
            return {}, ""
        best, _ = max(fits, key=lambda rc: (_shape(rc[0].content, t.new), rc[1]))
        return {best.memory_id: f"transition to {t.new} ({t.rule}, subject "
                                f"{' '.join(t.subject)})"}, ""


@dataclass(frozen=True)
class _Seen:
    """What the rules read of a new statement: the statement (``p``, its nearest memories
    ``similar`` and what it states, ``text``), whether it states a fact, its transition, its
    negation and its claim, if any, and the candidates it is compared with and what each
    states (:meth:`ClaimRules.pool`)."""

    p: Prepared
    similar: list[tuple[MemoryRecord, float]]
    text: str
    fact: bool
    t: claims.Transition | None
    neg: claims.Negation | None
    new: claims.Claim
    pool: list[tuple[MemoryRecord, float]]
    said: dict[str, claims.Statement]


# The rules by name (``update.supersede_rules``), in the order they are tried: the first to
# decide is the answer. A transition decides when it finds a memory or names an old value
# (a transition from a value no memory holds supersedes nothing); the others when they find
# one. Only the rules named in the setting are tried.
SUPERSEDE_RULES: dict[str, Callable[[ClaimRules, _Seen], Found | None]] = {
    "transition": ClaimRules._transition,
    "negation": ClaimRules._negation,
    "frame": ClaimRules._frame,
    "cue": ClaimRules._cue,
}
