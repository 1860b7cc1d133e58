"""``varvemem bench relevance``: finding what people ask about, in their own words (issue 40).

The data is written by independent writers (``training/relevance/``: each writer's JSON Lines
with its persona and the one brief they all had), never by the engine's authors, and split by
writer (``splits.json``) as ``bench truth`` is: fitted on ``train``, tuned on ``dev``,
reported on the held-out splits as numbers only.

Each writer's file holds one person's store and FAQ:

- ``memory``: what the person said, with when it was ``recorded`` and, for an event, the day it
  ``happened``; every memory is added at its time (one tenant per writer, default settings);
  or ``turn``: a turn of a chat (``BRIEF_CHAT.md``), added as a turn of its session;
- ``question``: asked at ``asked``; ``answers`` names the memories that answer it (none for an
  ``unanswerable`` one). Scored: **answer at #1 / #3**, **other hits** (returned hits that are
  not answers, per answerable question), **found** (an answer among the hits) and **empty**
  (unanswerable questions that got no hit);
  ``time`` questions are counted apart;
- ``faq``: a stored question/answer pair; ``ask``: a question asked later, the same as one
  pair (``faq``) or a trap that only looks like one (``faq`` null). Scored: **reuse recall**
  (same questions answered by their pair) and **precision** (reuses that were the right pair).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..api import Memory
from ..errors import ValidationError
from . import writers

TOP = 10
KINDS = ("memory", "turn", "question", "faq", "ask")
QUESTION_FAMILIES = ("answer", "unanswerable", "time")
SAME_FAMILIES = ("same_synonym", "same_abbrev", "same_order", "same_colloquial",
                 "same_other_lang")
TRAP_FAMILIES = ("trap_environment", "trap_person", "trap_document", "trap_opposite",
                 "trap_narrower", "trap_broader")
LANGS = ("en", "zh", "en>zh", "zh>en")
SPLITS = ("train", "dev", "test", "fresh", "fresh2")
HELD_OUT = ("test", "fresh", "fresh2")  # read as numbers only

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Item:
    """A memory as written: its text, language, when it was recorded (and happened); a turn
    of a chat has its session and speaker."""

    id: str
    text: str
    lang: str
    recorded: datetime
    happened: str | None = None
    session: str | None = None
    speaker: str | None = None


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    lang: str
    asked: datetime
    answers: tuple[str, ...]
    family: str


@dataclass(frozen=True)
class Faq:
    id: str
    question: str
    answer: str
    lang: str


@dataclass(frozen=True)
class Ask:
    id: str
    text: str
    lang: str
    faq: str | None
    near: str | None
    family: str


@dataclass
class Writer:
    """One writer's store, questions, FAQ and asks."""

    name: str
    memories: list[Item] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    faqs: list[Faq] = field(default_factory=list)
    asks: list[Ask] = field(default_factory=list)


def _when(value: Any, where: str, key: str) -> datetime:
    try:
        at = datetime.fromisoformat(str(value))
    except ValueError:
        raise ValidationError(f"{where}: {key} {value!r} is not an ISO date and time") from None
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def _text(row: dict[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{where}: {key} must be non-empty text")
    return value


def _lang(row: dict[str, Any], where: str, allowed: Sequence[str]) -> str:
    lang = row.get("lang")
    if lang not in allowed:
        raise ValidationError(f"{where}: lang {lang!r} must be one of {', '.join(allowed)}")
    return str(lang)


def _read(path: Path, name: str) -> Writer:
    w = Writer(name)
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or row.get("kind") not in KINDS:
            raise ValidationError(f"{where}: kind must be one of {', '.join(KINDS)}")
        rid = f"{name}-{_text(row, 'id', where)}"
        kind = row["kind"]
        if kind == "memory":
            happened = row.get("happened")
            w.memories.append(Item(rid, _text(row, "text", where), _lang(row, where, ("en", "zh")),
                                   _when(row.get("recorded"), where, "recorded"),
                                   str(happened) if happened else None))
        elif kind == "turn":
            w.memories.append(Item(rid, _text(row, "text", where), _lang(row, where, ("en", "zh")),
                                   _when(row.get("said"), where, "said"),
                                   session=f"{name}-{_text(row, 'session', where)}",
                                   speaker=_text(row, "speaker", where)))
        elif kind == "question":
            answers = row.get("answers")
            if not isinstance(answers, list) or row.get("family") not in QUESTION_FAMILIES:
                raise ValidationError(f"{where}: a question needs answers (a list) and a family "
                                      f"of {', '.join(QUESTION_FAMILIES)}")
            if (row["family"] == "unanswerable") != (not answers):
                raise ValidationError(f"{where}: an unanswerable question and only it has no "
                                      "answers")
            w.questions.append(Question(rid, _text(row, "text", where), _lang(row, where, LANGS),
                                        _when(row.get("asked"), where, "asked"),
                                        tuple(f"{name}-{a}" for a in answers), row["family"]))
        elif kind == "faq":
            w.faqs.append(Faq(rid, _text(row, "question", where), _text(row, "answer", where),
                              _lang(row, where, ("en", "zh"))))
        else:
            family = row.get("family")
            target = row.get("faq")
            if family not in SAME_FAMILIES + TRAP_FAMILIES \
                    or (target is None) != (family in TRAP_FAMILIES):
                raise ValidationError(f"{where}: an ask's family must be a same_ family with its "
                                      "faq, or a trap_ family with faq null")
            near = row.get("near")
            w.asks.append(Ask(rid, _text(row, "text", where), _lang(row, where, LANGS),
                              f"{name}-{target}" if target else None,
                              f"{name}-{near}" if near else None, str(family)))
    ids = Counter([m.id for m in w.memories] + [q.id for q in w.questions]
                  + [f.id for f in w.faqs] + [a.id for a in w.asks])
    twice = [i for i, k in ids.items() if k > 1]
    if twice:
        raise ValidationError(f"{path}: ids written twice: {', '.join(twice[:5])}")
    mems, faqs = {m.id for m in w.memories}, {f.id for f in w.faqs}
    for q in w.questions:
        if not set(q.answers) <= mems:
            raise ValidationError(f"{path}: question {q.id} names an answer that is no memory")
    for a in w.asks:
        if (a.faq is not None and a.faq not in faqs) or (a.near is not None and a.near not in faqs):
            raise ValidationError(f"{path}: ask {a.id} names an FAQ entry that does not exist")
    return w


def load(folder: Path, writers: Iterable[str] | None = None) -> list[Writer]:
    """The writers of ``folder`` (``<writer>.jsonl`` each, default: all), checked
    (:class:`ValidationError` naming the file and line)."""
    names = sorted(writers) if writers is not None else sorted(
        p.stem for p in folder.glob("*.jsonl"))
    out = []
    for name in names:
        path = folder / f"{name}.jsonl"
        if not path.is_file():
            raise ValidationError(f"no data of writer {name}: {path} does not exist")
        out.append(_read(path, name))
    return out


def split_writers(folder: Path, split: str) -> list[str]:
    """The writers of ``split`` (``splits.json`` beside the data)."""
    return writers.split_writers(folder, split, SPLITS)


class _Clock(writers.Clock):
    def __init__(self) -> None:
        super().__init__(datetime(2026, 1, 1, tzinfo=timezone.utc))


def fill(mem: Memory, clock: _Clock, w: Writer) -> dict[str, str]:
    """The writer's memories added at their times (tenant = writer), a chat's turns as turns
    of their session said by their speaker; their stored ids."""
    ids = {}
    for m in sorted(w.memories, key=lambda m: m.recorded):
        clock.now = m.recorded
        if m.session is None:
            ids[m.id] = mem.add(m.text, tenant=w.name, user="u").memory_id
        else:
            ids[m.id] = mem.add(f"{m.speaker}: {m.text}", type="dialogue", tenant=w.name,
                                user="u", session=m.session,
                                metadata={"speaker": m.speaker}).memory_id
    return ids


def play_questions(mem: Memory, clock: _Clock, w: Writer, ids: dict[str, str],
                   search: Callable[..., Any] | None = None) -> list[dict[str, Any]]:
    """Each question asked at its time: where its answers ranked and what else came back."""
    back = {v: k for k, v in ids.items()}
    out = []
    for q in w.questions:
        clock.now = q.asked
        hits = (search or mem.search)(q.text, tenant=w.name, user="u", top_k=TOP, record=False)
        got = [back.get(h.memory.memory_id, h.memory.memory_id) for h in hits]
        answers = set(q.answers)
        current = [a for a in q.answers if mem.get(ids[a], tenant=w.name).valid_to is None]
        out.append({"id": q.id, "writer": w.name, "family": q.family, "lang": q.lang,
                    "answerable": bool(answers), "returned": len(got),
                    "at1": bool(got) and got[0] in answers,
                    "at3": bool(answers & set(got[:3])),
                    "found": bool(answers & set(got)),
                    "others": sum(1 for g in got if g not in answers),
                    "answer_retired": bool(answers) and not current})
    return out


def play_asks(mem: Memory, w: Writer, match: bool = False) -> list[dict[str, Any]]:
    """The writer's FAQ saved as validated pairs (tenant ``<writer>-faq``), then each ask:
    which pair ``ask`` reused, if any (``match``: which pair ``qa.match`` names, so that no
    answer is made and no pair added: an LLM then judges pairs and writes nothing)."""
    tenant = f"{w.name}-faq"
    pair = {mem.qa.save(f.question, f.answer, score=0.9, tenant=tenant): f.id for f in w.faqs}
    out = []
    for a in w.asks:
        res = mem.qa.match(a.text, tenant=tenant) if match else mem.ask(a.text, tenant=tenant)
        reused = pair.get(res.sources[0]) if res.route == "reuse" and res.sources else None
        out.append({"id": a.id, "writer": w.name, "family": a.family, "lang": a.lang,
                    "same": a.faq is not None, "reused": reused is not None,
                    "right": reused is not None and reused == a.faq,
                    "confidence": res.confidence})
    return out


def _rate(n: int, d: int) -> float | None:
    return round(n / d, 4) if d else None


def _group(lang: str) -> str:
    return "across" if ">" in lang else lang


def score_questions(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Answer at #1/#3 and other hits over answerable questions, empty over unanswerable,
    by family and by language group (en, zh, across)."""
    def figures(rs: Sequence[dict[str, Any]]) -> dict[str, Any]:
        ans = [r for r in rs if r["answerable"]]
        un = [r for r in rs if not r["answerable"]]
        return {"answerable": len(ans), "at1": _rate(sum(r["at1"] for r in ans), len(ans)),
                "at3": _rate(sum(r["at3"] for r in ans), len(ans)),
                "found": _rate(sum(r["found"] for r in ans), len(ans)),
                "others": round(sum(r["others"] for r in ans) / len(ans), 2) if ans else None,
                "unanswerable": len(un),
                "empty": _rate(sum(r["returned"] == 0 for r in un), len(un)),
                "answer_retired": sum(r["answer_retired"] for r in ans)}
    return {"all": figures(rows),
            "by_family": {f: figures([r for r in rows if r["family"] == f])
                          for f in QUESTION_FAMILIES},
            "by_lang": {g: figures([r for r in rows if _group(r["lang"]) == g])
                        for g in ("en", "zh", "across")}}


def score_asks(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Reuse recall over same questions and precision over reuses, by language group; traps
    reused by family."""
    def figures(rs: Sequence[dict[str, Any]]) -> dict[str, Any]:
        same = [r for r in rs if r["same"]]
        reused = [r for r in rs if r["reused"]]
        return {"same": len(same), "recall": _rate(sum(r["right"] for r in same), len(same)),
                "reused": len(reused),
                "precision": _rate(sum(r["right"] for r in reused), len(reused)),
                "traps": len(rs) - len(same),
                "traps_reused": sum(r["reused"] for r in rs if not r["same"])}
    return {"all": figures(rows),
            "by_lang": {g: figures([r for r in rows if _group(r["lang"]) == g])
                        for g in ("en", "zh", "across")},
            "by_family": {f: figures([r for r in rows if r["family"] == f])
                          for f in SAME_FAMILIES + TRAP_FAMILIES}}


def run(folder: Path, root: Path, *, split: str | None = None,
        writers: Sequence[str] | None = None, progress: Progress | None = None,
        faq_only: bool = False) -> dict[str, Any]:
    """Play the writers of ``split`` (or ``writers``) in one home under ``root``; their
    figures, and for writers not held out (:data:`HELD_OUT`) each question's and ask's
    outcome. ``faq_only``: the FAQ asks alone, each through ``qa.match`` (no memories added,
    no question searched, no answer made)."""
    names = list(writers) if writers else split_writers(folder, split or "dev")
    data = load(folder, names)
    started = time.perf_counter()
    clock = _Clock()
    questions: list[dict[str, Any]] = []
    asks: list[dict[str, Any]] = []
    with Memory(home=root / "relevance", clock=clock) as mem:
        for i, w in enumerate(data, 1):
            if not faq_only:
                ids = fill(mem, clock, w)
                questions += play_questions(mem, clock, w, ids)
            asks += play_asks(mem, w, match=faq_only)
            if progress:
                progress("relevance", i, len(data))
    out: dict[str, Any] = {
        "benchmark": "relevance", "split": split, "writers": names,
        "search": score_questions(questions), "faq": score_asks(asks),
        "by_writer": {n: {"search": score_questions([r for r in questions
                                                     if r["writer"] == n])["all"],
                          "faq": score_asks([r for r in asks if r["writer"] == n])["all"]}
                      for n in names},
        "seconds": round(time.perf_counter() - started, 1)}
    held = {w for s in HELD_OUT for w in split_writers(folder, s)}
    if not set(names) & held:  # held-out writers: numbers only
        out["outcomes"] = {"questions": questions, "asks": asks}
    return out
