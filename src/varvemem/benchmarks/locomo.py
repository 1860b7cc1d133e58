"""LoCoMo (Maharana et al., 2024): turn-level retrieval over long conversations.

Each conversation goes into its own scope (``user`` = its sample id), one memory per dialogue
turn dated by its session; every question with evidence is a query in that scope, and its
evidence turn ids (``D<session>:<turn>``) are the relevant ones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..settings import Settings
from .runner import Doc, Home, Query, compare, installed_embedders, score_turns

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
# The LoCoMo paper's DRAGON retriever over dialogue turns (Table 3), recall in %.
DRAGON_RECALL = {5: 56.7, 10: 66.2, 25: 76.7, 50: 82.7}

_ID = re.compile(r"D(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    time: datetime
    caption: str | None = None

    def content(self) -> str:
        """The memory's text: who said it, what was said, and the shared image's caption."""
        out = f"{self.speaker}: {self.text}".strip()
        if self.caption:
            out += f" [shares {self.caption}]"
        return out


@dataclass
class Question:
    conversation: str
    text: str
    evidence: list[str]
    category: int


@dataclass
class LocomoData:
    conversations: dict[str, list[Turn]]
    questions: list[Question]
    cleaned_ids: int = 0  # malformed evidence ids repaired (e.g. "D8:6; D9:17", "D:11:26")
    dropped_ids: int = 0  # evidence ids that name no turn of the conversation
    skipped_questions: int = 0  # questions left with no evidence
    notes: list[str] = field(default_factory=list)


def _fail(path: Path, why: str) -> ValidationError:
    return ValidationError(f"{path} is not LoCoMo JSON: {why}")


def _session_time(value: Any, path: Path, key: str) -> datetime:
    try:
        return datetime.strptime(str(value), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    except ValueError:
        raise _fail(path, f"{key} {value!r} is not a date like '1:56 pm on 8 May, 2023'") from None


def _clean_evidence(raw: Any) -> tuple[list[str], bool]:
    """The ``D<s>:<t>`` ids in one evidence entry, and whether it had to be repaired."""
    text = str(raw)
    ids = [f"D{s}:{t}" for s, t in _ID.findall(text.replace("D:", "D"))]
    return ids, ids != [text]


def load(path: str | Path, conversations: int | None = None) -> LocomoData:
    """Read ``locomo10.json``; ``conversations`` keeps the first N. Errors name the problem."""
    path = Path(path)
    if not path.is_file():
        raise ValidationError(f"{path} does not exist or is not a file")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(path, f"not valid JSON ({exc})") from None
    if not isinstance(raw, list) or not raw:
        raise _fail(path, "expected a non-empty list of conversations")
    if conversations is not None:
        if conversations < 1:
            raise ValidationError("--conversations must be at least 1")
        raw = raw[:conversations]
    data = LocomoData(conversations={}, questions=[])
    for n, sample in enumerate(raw):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict) \
                or not isinstance(sample.get("qa"), list):
            raise _fail(path, f"item {n} has no 'conversation' object and 'qa' list")
        sid = str(sample.get("sample_id") or f"conv-{n}")
        turns = _turns(sample["conversation"], path, sid)
        data.conversations[sid] = turns
        known = {t.dia_id for t in turns}
        for q in sample["qa"]:
            _question(q, sid, known, data, path)
    return data


def _turns(conv: dict[str, Any], path: Path, sid: str) -> list[Turn]:
    turns: list[Turn] = []
    for key, value in conv.items():
        m = _SESSION.fullmatch(key)
        if not m or not isinstance(value, list):
            continue
        when = _session_time(conv.get(f"{key}_date_time"), path, f"{sid}.{key}_date_time")
        for t in value:
            if not isinstance(t, dict) or not {"dia_id", "speaker", "text"} <= t.keys():
                raise _fail(path, f"{sid}.{key} has a turn without dia_id, speaker and text")
            caption = t.get("blip_caption")
            turns.append(Turn(str(t["dia_id"]), str(t["speaker"]), str(t["text"]),
                              int(m.group(1)), when, str(caption) if caption else None))
    if not turns:
        raise _fail(path, f"{sid} has no session_<n> turns")
    return turns


def _question(q: Any, sid: str, known: set[str], data: LocomoData, path: Path) -> None:
    if not isinstance(q, dict) or "question" not in q or "category" not in q:
        raise _fail(path, f"{sid} has a qa item without question and category")
    category = q["category"]
    if category not in CATEGORIES:
        raise _fail(path, f"{sid}: unknown category {category!r} "
                          f"(known: {', '.join(f'{k} {v}' for k, v in CATEGORIES.items())})")
    evidence: list[str] = []
    for entry in q.get("evidence") or []:
        ids, repaired = _clean_evidence(entry)
        data.cleaned_ids += repaired
        for i in ids:
            if i in known:
                evidence.append(i)
            else:
                data.dropped_ids += 1
    evidence = list(dict.fromkeys(evidence))
    if not evidence:
        data.skipped_questions += 1
        return
    data.questions.append(Question(sid, str(q["question"]), evidence, int(category)))


def documents(data: LocomoData) -> list[Doc]:
    """One document per turn, in conversation order, scoped by conversation."""
    return [Doc(sid, t.dia_id, t.content(), t.time, f"session_{t.session}",
                {"speaker": t.speaker, "turn": t.dia_id})
            for sid, turns in data.conversations.items() for t in turns]


def queries(data: LocomoData) -> list[Query]:
    """One query per question with evidence; its label is the category's name."""
    return [Query(q.conversation, q.text, q.evidence, CATEGORIES[q.category])
            for q in data.questions]


def run(path: str | Path, root: Path, *, conversations: int | None = None,
        ks: Sequence[int] = (5, 10, 25), embedders: Sequence[str] | None = None,
        progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Every system on the same data in one run; the result is JSON-ready, fractions in 0..1.

    Systems: ``varvemem`` (the default pipeline), ``bm25`` and ``dense`` (each turn indexed
    alone, ranked by one channel), and ``varvemem+E`` / ``dense+E`` for each other embedder.
    """
    ks = sorted(set(ks))
    if not ks or ks[0] < 1:
        raise ValidationError("k values must be whole numbers of at least 1")
    data = load(path, conversations)
    docs, qs = documents(data), queries(data)
    default = Settings.load(home=root).embedder.name
    embedders = list(embedders or installed_embedders())
    homes = []
    for e in embedders:
        tag = "" if e == default else f"+{e}"
        homes.append(Home(e, False, {f"varvemem{tag}": None}))
        homes.append(Home(e, True, {**({"bm25": "bm25"} if e == embedders[0] else {}),
                                    f"dense{tag}": "dense"}))
    runs = compare(docs, qs, homes, max(ks), root, progress=progress)
    systems: dict[str, Any] = {}
    for name, (ranking, indexed) in runs.items():
        scores = score_turns(ranking, qs, ks)
        scores["embedder"] = indexed.memory.embedder().model_id
        scores["memories"] = len(indexed.keys)
        scores["add_per_second"] = indexed.docs / indexed.add_seconds if indexed.add_seconds else None
        systems[name] = scores
    return {
        "dataset": "locomo", "data": str(path), "conversations": len(data.conversations),
        "turns": len(docs), "questions": len(qs), "k": ks,
        "evidence_ids": {"repaired": data.cleaned_ids, "unknown_dropped": data.dropped_ids,
                         "questions_without_evidence": data.skipped_questions},
        "systems": systems,
        "published": {"dragon (LoCoMo paper, turns)": {f"recall@{k}": v / 100
                                                       for k, v in DRAGON_RECALL.items()}},
    }
