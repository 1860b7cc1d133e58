"""``varvemem bench truth``: the current fact on other people's words (issue 39).

The cases are written by independent writers (``training/truth/``: each writer's JSON Lines
with its persona and the one brief they all had), never by the engine's authors, and split by
writer (``splits.json``): what decides supersession may be fitted on ``train``, tuned on
``dev``, and is reported on ``test``, whose cases this module prints only as counts.

A case is an old statement, a new one ``gap_days`` later by the same user, and a question. The
engine hears both (default settings, offline, one tenant per case) and is asked the question:

- ``update`` (the old one no longer holds): **stale** when the old memory is among the top 5
  hits, still current and not marked as a likely superseded conflict; **new first** when the
  new memory is the first hit;
- ``both`` and ``unrelated`` (both hold): **retired** when the old memory was superseded;
- ``same`` (the fact again): recorded (merged, superseded or both kept), not scored.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..api import Memory
from ..errors import ValidationError
from . import writers

TOP = 5
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
FAMILIES = {
    "update_cue": "update", "update_nocue": "update", "update_implicit": "update",
    "both_other_subject": "both", "both_other_id": "both", "both_additive": "both",
    "both_other_scope": "both", "both_history": "both", "both_list": "both",
    "same_paraphrase": "same", "unrelated": "unrelated",
}
LANGS = ("en", "zh", "en>zh", "zh>en")
DOMAINS = ("devops", "workplace", "personal", "support")
KEYS = ("id", "family", "lang", "domain", "old", "new", "question", "label", "old_value",
        "new_value", "gap_days", "why")
SPLITS = ("train", "dev", "ids", "test", "fresh", "fresh2", "fresh3")
HELD_OUT = ("test", "fresh", "fresh2", "fresh3")  # read as numbers only

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Case:
    """One writer's case, as written (checked by :func:`load`)."""

    id: str
    writer: str
    family: str
    lang: str
    domain: str
    old: str
    new: str
    question: str
    label: str
    old_value: str
    new_value: str
    gap_days: float
    why: str

    @property
    def across(self) -> bool:
        """Old and new in different languages."""
        return ">" in self.lang


def _check(row: Any, where: str) -> Case:
    if not isinstance(row, dict) or sorted(row) != sorted(KEYS):
        raise ValidationError(f"{where}: the keys must be {', '.join(KEYS)}")
    if FAMILIES.get(row["family"]) != row["label"]:
        raise ValidationError(f"{where}: family {row['family']!r} is not of label "
                              f"{row['label']!r}")
    if row["lang"] not in LANGS or row["domain"] not in DOMAINS:
        raise ValidationError(f"{where}: lang {row['lang']!r} or domain {row['domain']!r} "
                              "unknown")
    for key in ("old", "new", "question"):
        if not isinstance(row[key], str) or not row[key].strip():
            raise ValidationError(f"{where}: {key} must be non-empty text")
    for key, text in (("old_value", row["old"]), ("new_value", row["new"])):
        if not isinstance(row[key], str) or row[key] not in text:
            raise ValidationError(f"{where}: {key} must be text found in the statement")
    gap = row["gap_days"]
    if isinstance(gap, bool) or not isinstance(gap, (int, float)) or not 0 < gap <= 1000:
        raise ValidationError(f"{where}: gap_days must be a number in (0, 1000]")
    return Case(writer=row["id"].split("-", 1)[0], gap_days=float(gap),
                **{k: row[k] for k in KEYS if k != "gap_days"})


def load(folder: Path, writers: Iterable[str] | None = None) -> list[Case]:
    """The cases of ``writers`` (default: all) in ``folder``: ``<writer>.jsonl`` each, every
    line checked (:class:`ValidationError` naming the file and line)."""
    names = sorted(writers) if writers is not None else sorted(
        p.stem for p in folder.glob("w*.jsonl"))
    out: list[Case] = []
    for name in names:
        path = folder / f"{name}.jsonl"
        if not path.is_file():
            raise ValidationError(f"no cases of writer {name}: {path} does not exist")
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValidationError(f"{path}:{n}: not JSON ({exc.msg})") from None
            case = _check(row, f"{path}:{n}")
            if case.writer != name:
                raise ValidationError(f"{path}:{n}: id {case.id!r} is not writer {name}'s")
            out.append(case)
    seen = Counter(c.id for c in out)
    twice = [i for i, n in seen.items() if n > 1]
    if twice:
        raise ValidationError(f"case ids written twice: {', '.join(twice[:5])}")
    return out


def split_writers(folder: Path, split: str) -> list[str]:
    """The writers of ``split`` (``splits.json`` beside the cases)."""
    return writers.split_writers(folder, split, SPLITS)


class _Clock(writers.Clock):
    def __init__(self) -> None:
        super().__init__(NOW)


def play(mem: Memory, clock: _Clock, case: Case, tenant: str) -> dict[str, Any]:
    """One case in its own tenant: the old statement, the new one later, the question."""
    clock.now = NOW
    old = mem.add(case.old, tenant=tenant, user="u")
    clock.now = NOW + timedelta(days=case.gap_days)
    new = mem.add(case.new, tenant=tenant, user="u")
    clock.now += timedelta(hours=1)
    hits = mem.search(case.question, tenant=tenant, user="u", top_k=TOP)
    ids = [h.memory.memory_id for h in hits]
    flagged = {h.memory.memory_id for h in hits if h.scores.conflict}
    rec = mem.get(old.memory_id, tenant=tenant)
    current = rec.valid_to is None and rec.superseded_by is None
    merged = new.memory_id == old.memory_id or new.status != "created"
    return {
        "id": case.id, "writer": case.writer, "family": case.family, "label": case.label,
        "lang": case.lang, "domain": case.domain,
        "superseded": not current,
        "retired_by": _decider(new.steps.get("supersede", "")) if not current else None,
        "merged": merged,
        "stale": old.memory_id in ids and current and old.memory_id not in flagged,
        "flagged": old.memory_id in flagged,
        "new_first": bool(ids) and not merged and ids[0] == new.memory_id,
        "old_found": old.memory_id in ids,
        "answered": bool(ids),
    }


def _decider(step: str) -> str:
    """Who retired the old statement, from the add's ``supersede`` step: the rules (which
    the judge confirmed), the judge alone, both (each retiring some), or the LLM. With an LLM
    configured for ``supersede`` beside the judge, the step names the judge (and the LLM)
    whoever found the old statement: read "judge" there as the judge and the rules."""
    if step == "llm" or ", llm on" in step:
        return "llm"
    if step.startswith("judge"):
        return "judge"
    return "rules+judge" if ", judge" in step else "rules"


def _rate(rows: Sequence[dict[str, Any]], key: str) -> float | None:
    return round(sum(bool(r[key]) for r in rows) / len(rows), 4) if rows else None


def score(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures of ``outcomes``: stale and new-first over updates, retired over both-true
    and unrelated pairs, by language (old and new in the same language, or across), by
    family and by writer."""
    def updates(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        up = [r for r in rows if r["label"] == "update"]
        keep = [r for r in rows if r["label"] in ("both", "unrelated")]
        return {"updates": len(up), "stale": _rate(up, "stale"),
                "new_first": _rate(up, "new_first"), "flagged": _rate(up, "flagged"),
                "kept_pairs": len(keep), "retired": _rate(keep, "superseded"),
                "retired_by": dict(Counter(r["retired_by"] for r in keep if r["superseded"])),
                "kept_flagged": _rate(keep, "flagged")}

    by_lang = {g: updates([r for r in outcomes if _lang_group(r["lang"]) == g])
               for g in ("en", "zh", "across")}
    return {"cases": len(outcomes), "all": updates(outcomes), "by_lang": by_lang,
            "by_family": {f: {"cases": len(rows), "stale": _rate(rows, "stale"),
                              "retired": _rate(rows, "superseded"),
                              "merged": _rate(rows, "merged")}
                          for f in FAMILIES
                          if (rows := [r for r in outcomes if r["family"] == f])},
            "by_writer": {w: updates([r for r in outcomes if r["writer"] == w])
                          for w in sorted({r["writer"] for r in outcomes})}}


def _lang_group(lang: str) -> str:
    return "across" if ">" in lang else lang


def run(folder: Path, root: Path, *, split: str | None = None,
        writers: Sequence[str] | None = None, limit: int | None = None,
        progress: Progress | None = None) -> dict[str, Any]:
    """Play the cases of ``split`` (or of ``writers``) in one home under ``root``; the
    figures, and for a split not held out (:data:`HELD_OUT`) each case's outcome."""
    chosen = writers if writers else split_writers(folder, split or "dev")
    cases = load(folder, chosen)
    if limit:
        cases = cases[:limit]
    started = time.perf_counter()
    clock = _Clock()
    outcomes = []
    with Memory(home=root / "truth", clock=clock) as mem:
        for n, case in enumerate(cases):
            outcomes.append(play(mem, clock, case, f"t{n}"))
            if progress:
                progress("truth", n + 1, len(cases))
    out: dict[str, Any] = {"benchmark": "truth", "split": split, "writers": list(chosen),
                           **score(outcomes), "seconds": round(time.perf_counter() - started, 1)}
    held = {w for s in HELD_OUT for w in split_writers(folder, s)}
    if not set(chosen) & held:  # held-out cases: numbers only
        out["outcomes"] = outcomes
    return out
