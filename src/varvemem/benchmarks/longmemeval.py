"""LongMemEval_S haystacks (Wu et al., 2025) as a smoke test: session-level retrieval.

Each haystack goes into its own scope, one memory per chat session keyed by its user turns (as
the official retrieval protocol does); each question ranks the sessions of its haystack, and
its answer sessions are the relevant ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..settings import Settings
from .runner import Doc, Home, Query, Ranking, compare, score_sessions

HAYSTACKS = "longmemeval_s_3haystacks_derived.json"
OFFICIAL = "official_qa_for_derived_haystacks.json"


@dataclass
class LongMemEvalData:
    docs: list[Doc]
    official: list[Query]  # the official question of each haystack
    derived: list[Query]  # the derived file's extra questions (labelled by their type)


def _fail(path: Path, why: str) -> ValidationError:
    return ValidationError(f"{path} is not LongMemEval JSON: {why}")


def _read(path: Path) -> Any:
    if not path.is_file():
        raise ValidationError(f"{path} does not exist or is not a file")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(path, f"not valid JSON ({exc})") from None


def _date(value: Any, path: Path) -> datetime:
    try:  # "2023/05/20 (Sat) 02:21"
        day, _, clock = str(value).split(" ")
        return datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M").replace(tzinfo=timezone.utc)
    except ValueError:
        raise _fail(path, f"date {value!r} is not like '2023/05/20 (Sat) 02:21'") from None


def load(data: str | Path) -> LongMemEvalData:
    """Read the haystacks and the official questions from the folder ``data`` (or from the
    haystack file, with the official file beside it)."""
    data = Path(data)
    folder = data if data.is_dir() else data.parent
    hay_path = data if data.is_file() else folder / HAYSTACKS
    raw = _read(hay_path)
    official_path = folder / OFFICIAL
    official = _read(official_path) if official_path.exists() else {}
    if not isinstance(raw, list) or not raw:
        raise _fail(hay_path, "expected a non-empty list of haystacks")
    if not isinstance(official, dict):
        raise _fail(official_path, "expected an object keyed by question id")
    out = LongMemEvalData([], [], [])
    need = {"question_id", "haystack_sessions", "haystack_session_ids", "haystack_dates",
            "questions", "answer_session_ids"}
    for n, item in enumerate(raw):
        if not isinstance(item, dict) or not need <= item.keys():
            missing = sorted(need - set(item)) if isinstance(item, dict) else sorted(need)
            raise _fail(hay_path, f"haystack {n} lacks {', '.join(missing)}")
        qid = str(item["question_id"])
        sessions, ids, dates = (item["haystack_sessions"], item["haystack_session_ids"],
                                item["haystack_dates"])
        if not (len(sessions) == len(ids) == len(dates)):
            raise _fail(hay_path, f"haystack {qid}: sessions, ids and dates differ in number")
        for sid, turns, when in zip(ids, sessions, dates):
            if not isinstance(turns, list):
                raise _fail(hay_path, f"haystack {qid}: session {sid} is not a list of turns")
            text = "\n".join(str(t.get("content", "")) for t in turns
                             if isinstance(t, dict) and t.get("role") == "user")
            if text.strip():
                out.docs.append(Doc(qid, str(sid), text, _date(when, hay_path)))
        questions, answers = item["questions"], item["answer_session_ids"]
        if isinstance(questions, str):
            questions, answers = [questions], [answers]
        truth = official.get(qid)
        official_text = None
        if isinstance(truth, dict) and {"question", "answer_session_ids"} <= truth.keys():
            official_text = str(truth["question"])
            out.official.append(Query(qid, official_text,
                                      [str(a) for a in truth["answer_session_ids"]],
                                      str(truth.get("question_type", "official"))))
        for q, a in zip(questions, answers):
            if str(q) != official_text:  # the derived copy of the official may be outdated
                out.derived.append(Query(qid, str(q), [str(x) for x in a], "derived"))
    if not out.docs:
        raise _fail(hay_path, "no session has a user turn")
    return out


def run(path: str | Path, root: Path, *, ks: Sequence[int] = (5, 10),
        progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """varvemem, BM25 and dense over the sessions; the official and the derived questions are
    scored apart. A session may be long: ``update.max_content_bytes`` is raised to fit."""
    ks = sorted(set(ks))
    if not ks or ks[0] < 1:
        raise ValidationError("k values must be whole numbers of at least 1")
    data = load(path)
    queries = data.official + data.derived
    longest = max(len(d.content.encode("utf-8")) for d in data.docs)
    homes = [Home(Settings.load(home=root).embedder.name, False,
                  {"varvemem": None, "bm25": "bm25", "dense": "dense"})]
    runs = compare(data.docs, queries, homes, max(ks),
                   root, update={"max_content_bytes": max(longest, 65_536)}, progress=progress)
    n = len(data.official)
    systems: dict[str, Any] = {}
    for name, (ranking, _) in runs.items():
        official = Ranking(name, ranking.ranked[:n], ranking.seconds[:n])
        derived = Ranking(name, ranking.ranked[n:], ranking.seconds[n:])
        systems[name] = {"official": score_sessions(official, data.official, ks),
                         "derived": score_sessions(derived, data.derived, ks)}
    return {"dataset": "longmemeval_s (3 derived haystacks)", "data": str(path),
            "haystacks": len({d.scope for d in data.docs}), "sessions": len(data.docs),
            "questions": {"official": n, "derived": len(data.derived)}, "k": ks,
            "systems": systems}
