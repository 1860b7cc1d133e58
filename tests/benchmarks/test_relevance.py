"""``varvemem bench relevance``: a writer's file is checked line by line, played in its own
tenant and scored from what the engine returned; held-out writers give numbers only. (The
lines here are the harness's own fixtures, not evidence of how the engine does: the
writers' data is.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from varvemem import ValidationError
from varvemem.benchmarks import relevance

ROWS: list[dict[str, Any]] = [
    {"kind": "memory", "id": "m01", "text": "My dentist is Dr. Hale on Park Road.",
     "lang": "en", "recorded": "2026-01-10T09:00"},
    {"kind": "memory", "id": "m02", "text": "The billing service listens on port 8443.",
     "lang": "en", "recorded": "2026-01-11T10:00"},
    {"kind": "question", "id": "q01", "text": "Which dentist do I go to?", "lang": "en",
     "asked": "2026-03-02T09:00", "answers": ["m01"], "family": "answer", "why": "-"},
    {"kind": "question", "id": "q02", "text": "What is my cat's name?", "lang": "en",
     "asked": "2026-03-02T09:00", "answers": [], "family": "unanswerable", "why": "-"},
    {"kind": "faq", "id": "f01", "question": "How do I reset my VPN token?",
     "answer": "Open the portal and press Reset token.", "lang": "en"},
    {"kind": "ask", "id": "a01", "text": "How do I reset my VPN token?", "lang": "en",
     "faq": "f01", "near": "f01", "family": "same_order", "why": "-"},
    {"kind": "ask", "id": "a02", "text": "How do I revoke my VPN token?", "lang": "en",
     "faq": None, "near": "f01", "family": "trap_opposite", "why": "-"},
]


def _folder(tmp_path: Path, **writers: list[dict[str, Any]]) -> Path:
    folder = tmp_path / "relevance"
    folder.mkdir()
    for name, rows in writers.items():
        (folder / f"{name}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    (folder / "splits.json").write_text(json.dumps(
        {"train": ["r1"], "dev": ["r1"], "test": ["r2"]}), "utf-8")
    return folder


@pytest.mark.parametrize("index,change,message", [
    (2, {"answers": ["m09"]}, "names an answer that is no memory"),
    (3, {"answers": ["m01"]}, "only it has no answers"),
    (5, {"faq": None}, "trap_ family with faq null"),
    (0, {"recorded": "last week"}, "not an ISO date"),
    (0, {"lang": "fr"}, "lang 'fr'"),
    (0, {"kind": "note"}, "kind must be one of"),
])
def test_a_malformed_line_is_named(tmp_path: Path, index: int, change: dict[str, Any],
                                   message: str) -> None:
    rows = [dict(r) for r in ROWS]
    rows[index].update(change)
    folder = _folder(tmp_path, r1=rows)
    with pytest.raises(ValidationError, match=message):
        relevance.load(folder)


def test_a_writer_is_played_and_scored_and_held_out_writers_give_numbers_only(
        tmp_path: Path) -> None:
    folder = _folder(tmp_path, r1=ROWS, r2=ROWS)
    dev = relevance.run(folder, tmp_path / "homes", split="dev")
    by_id = {o["id"]: o for o in dev["outcomes"]["questions"]}
    assert by_id["r1-q01"]["at1"] and by_id["r1-q01"]["answerable"]
    assert not by_id["r1-q02"]["answerable"]
    asks = {o["id"]: o for o in dev["outcomes"]["asks"]}
    assert asks["r1-a01"]["right"]  # the same words are the same question
    assert dev["faq"]["all"]["same"] == 1 and dev["faq"]["all"]["traps"] == 1
    test = relevance.run(folder, tmp_path / "homes2", split="test")
    assert "outcomes" not in test and test["search"]["all"]["answerable"] == 1
