"""What a statement says of what (:func:`slots`: the attribute and the subject's words), what a
question asks about (:func:`query_subject`) and whether two statements give the same
attribute of the same subject a new value (:func:`same_slot`)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ...language.attributes import GENERIC_HEADS
from ...text import index_terms
from ...text.analyzer import cjk_segments
from ..extract import EVENT_FIELDS
from .frames import (
    CJK_RUN,
    FILLER_EN,
    FILLER_LEAD,
    FILLER_ZH,
    TEMPORAL,
    content_terms,
    is_record,
    jaccard,
    labels,
)
from .tokens import CACHE_SIZE, HAS_CJK, KIND_CLASS, RECORDS, values
from .vocabulary import Lexicon


# -- slots: an attribute of a subject ------------------------------------------------------
@dataclass(frozen=True)
class Slots:
    """What a statement says of what: the attributes it names, the words of its subject
    (neither values, attribute words, light words nor fillers) and its values."""

    attributes: frozenset[str]
    subject_words: frozenset[str]
    values: tuple[tuple[str, str], ...]  # (kind, normalised text)
    record: bool  # a ledger line: several values, one a date or an amount
    subject: str | None  # a record's name opening it ("Ticket OPS-311 ..."), see claim()
    # Capitalised words opening the statement or following a colon, which may be names
    # ("Kenji owns ...", "owner: Sofia"): values() leaves them out.
    leads: tuple[str, ...] = ()
    qualifiers: frozenset[str] = frozenset()  # "production", "测试": see QUALIFIERS

    def leads_as_names(self) -> Slots:
        """These slots reading :attr:`leads` as names, not subject words."""
        return Slots(self.attributes, self.subject_words - set(self.leads),
                     (*(("name", w) for w in self.leads), *self.values), self.record,
                     self.subject, (), self.qualifiers)


_LEAD_WORD = re.compile(r"(?:^|[:：;；]\s*)([A-Z][a-z]+)\b(?!\s+[A-Z])")


# An event's frame ("[event] title: ...; message: ...", see extract.describe_event): its field
# names say nothing of its subject.
_EVENT_FRAME = re.compile(
    rf"^\[[^\]]{{1,40}}\]\s*(?:(?:{'|'.join(EVENT_FIELDS)}):\s)?"
    rf"|(?<=; )(?:{'|'.join(EVENT_FIELDS)}):\s", re.IGNORECASE)


@lru_cache(maxsize=CACHE_SIZE)
def slots(text: str, lex: Lexicon) -> Slots:
    """The slots of ``text`` (see :class:`Slots`)."""
    t = TEMPORAL.sub(" ", unicodedata.normalize("NFKC", text))
    t = _EVENT_FRAME.sub(" ", t).strip()
    while (lead := FILLER_LEAD.sub("", t)) != t:
        t = lead
    # A name that is also an attribute word ("RAM") is the attribute.
    vals = [v for v in values(t) if lex.phrase(v.text) is None and (
        v.kind != "name" or not t[v.start:v.end].isupper()
        or not (set(index_terms(v.text)) & (lex.strong.keys() | lex.weak.keys())))]
    out, last = [], 0
    for v in vals:
        out += [t[last:v.start], " "]
        last = v.end
    out.append(t[last:])
    rest = FILLER_ZH.sub(" ", FILLER_EN.sub(" ", "".join(out)))
    strong: set[str] = set()
    weak: set[str] = set()
    words: set[str] = set()
    quals = {q for q in lex.zh_qualifiers if q in rest}

    def take(hit: tuple[str, bool] | None) -> str:
        if hit is not None:
            (strong if hit[1] else weak).add(hit[0])
        return " "

    if lex.phrase_pattern is not None:
        rest = lex.phrase_pattern.sub(lambda m: take(lex.phrase(m.group())), rest)
    if lex.zh_pattern is not None and HAS_CJK.search(rest):
        rest = lex.zh_pattern.sub(lambda m: take(lex.zh_word(m.group())), rest)
    for run in CJK_RUN.findall(rest):
        for seg in cjk_segments(run):
            words.update([seg] if len(seg) == 1 else [seg[i:i + 2] for i in range(len(seg) - 1)])
    for term in index_terms(CJK_RUN.sub(" ", rest)):
        if term in lex.strong:
            strong.add(lex.strong[term])
        elif term in lex.weak:
            weak.add(lex.weak[term])
        elif term not in lex.light and not term.isdigit():
            words.add(term)
            if term in lex.qualifiers:
                quals.add(term)
    # What the words name, and what the values' shapes say ("hosted in cn-beijing": a region).
    attributes = (strong or weak) | {a for v in vals for a in lex.implied(v.text)}
    record = is_record([v.kind for v in vals])
    # A record named before anything is said of it ("OPS-311 ...", "Ticket OPS-311 ...",
    # "发票 FP4553 ...", "#12 ..."): another name is another record.
    named = None
    if vals and (labels(t, vals[0]) or (vals[0].kind in RECORDS
                                        and len(content_terms(t[: vals[0].start])) <= 1)):
        named = vals[0].text
    leads = tuple(dict.fromkeys(
        w for m in _LEAD_WORD.finditer(t) for w in index_terms(m.group(1))[:1] if w in words))
    return Slots(frozenset(attributes), frozenset(words), tuple((v.kind, v.text) for v in vals),
                 record, named, leads, frozenset(quals))


_GENERIC = frozenset(t for w in GENERIC_HEADS for t in
                     ([w] if HAS_CJK.search(w) else index_terms(w)))
_ASKING = re.compile(r"[谁哪啥吗么呢几怎]")


def query_subject(text: str, lex: Lexicon) -> frozenset[str]:
    """What a question asks about (index terms): its subject words without generic heads
    ("service", "服务") and the words of asking; its values too ("what runs on pg-3?"). Empty
    unless it has two terms or more: one word left beside the attribute ("Where is the
    on-call phone *kept*?") is a verb as often as a subject."""
    said = slots(text, lex)
    words = {w for w in said.subject_words if w not in _GENERIC and not _ASKING.search(w)}
    found = words | {t for _, v in said.values for t in index_terms(v)}
    return frozenset(found) if len(found) >= 2 else frozenset()


def same_slot(new: Slots, old: Slots, subject_overlap: float) -> str | None:
    """Why ``new`` gives a new value to the attribute ``old`` states of the same subject, or
    None: a shared attribute, subject words at least ``subject_overlap`` alike (Jaccard),
    one value changed for a value of the same class (two, when subject words name the
    subject), the rest the same, no ledger
    line and no other record named ("Ticket OPS-1 ..." vs "Ticket OPS-2 ..."). A capitalised
    first word is read as a subject word, else as a name ("Kenji owns the portal")."""
    # Only a statement with no value of its own may hold it in a capitalised word.
    for a in (new, new.leads_as_names()) if new.leads and not new.values else (new,):
        for b in (old, old.leads_as_names()) if old.leads and not old.values else (old,):
            why = _same_slot(a, b, subject_overlap)
            if why:
                return why
    return None


def _same_slot(new: Slots, old: Slots, subject_overlap: float) -> str | None:
    shared = new.attributes & old.attributes
    if not shared or new.record or old.record:
        return None
    if new.subject != old.subject and (new.subject is not None or old.subject is not None):
        return None
    if new.qualifiers != old.qualifiers:
        return None  # staging vs production: two subjects
    if jaccard(new.subject_words, old.subject_words) < subject_overlap:
        return None
    added = [v for v in new.values if v not in old.values]
    gone = [v for v in old.values if v not in new.values]
    if not added or len(added) != len(gone) or len(added) > 2:
        return None
    if len(added) == 2 and not new.subject_words:
        return None  # of two changed values, one may name the subject ("the EU/US cluster")
    if sorted(KIND_CLASS.get(k, k) for k, _ in added) != \
            sorted(KIND_CLASS.get(k, k) for k, _ in gone):
        return None
    return f"same {'/'.join(sorted(shared))} of the same subject, new value"
