"""``varvemem bench truth``: the writers' cases are checked line by line, split by writer, and
scored from what the engine did; the test split prints numbers only. (The cases here are the
harness's own fixtures, not evidence of how the engine does: the writers' cases are.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from varvemem import ValidationError
from varvemem.benchmarks import truth

UPDATE = {"id": "w1-0001", "family": "update_cue", "lang": "en", "domain": "devops",
          "old": "The nightly backup runs at 01:00", "new": "From now on the nightly backup "
          "runs at 03:30", "question": "When does the nightly backup run?", "label": "update",
          "old_value": "01:00", "new_value": "03:30", "gap_days": 3, "why": "a cue"}
BOTH = {"id": "w1-0002", "family": "both_other_id", "lang": "en", "domain": "support",
        "old": "Order 7731 ships on Tuesday", "new": "Order 7732 ships on Friday",
        "question": "When does order 7731 ship?", "label": "both", "old_value": "Tuesday",
        "new_value": "Friday", "gap_days": 1, "why": "another order"}


def _folder(tmp_path: Path, **writers: list[dict[str, Any]]) -> Path:
    folder = tmp_path / "truth"
    folder.mkdir()
    for name, rows in writers.items():
        (folder / f"{name}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    (folder / "splits.json").write_text(json.dumps(
        {"train": ["w1"], "dev": ["w1"], "test": ["w2"]}), "utf-8")
    return folder


@pytest.mark.parametrize("change,message", [
    ({"label": "both"}, "is not of label"),
    ({"new_value": "04:00"}, "new_value must be text found"),
    ({"lang": "fr"}, "lang 'fr'"),
    ({"gap_days": 0}, "gap_days"),
    ({"why": None, "extra": 1}, "the keys must be"),
])
def test_a_malformed_case_is_named_by_file_and_line(tmp_path: Path, change: dict[str, Any],
                                                    message: str) -> None:
    bad = {**UPDATE, **change}
    if change.get("why", "") is None:
        del bad["why"]
    folder = _folder(tmp_path, w1=[BOTH, bad])
    with pytest.raises(ValidationError, match=rf"w1.jsonl:2: .*{message}"):
        truth.load(folder)


def test_the_engine_is_scored_and_the_test_split_gives_numbers_only(tmp_path: Path) -> None:
    other = {**UPDATE, "id": "w2-0001"}
    folder = _folder(tmp_path, w1=[UPDATE, BOTH], w2=[other])
    dev = truth.run(folder, tmp_path / "homes", split="dev")
    assert dev["cases"] == 2 and dev["writers"] == ["w1"]
    by_id = {o["id"]: o for o in dev["outcomes"]}
    assert dev["all"]["updates"] == 1 and dev["all"]["kept_pairs"] == 1
    assert dev["all"]["stale"] == float(by_id["w1-0001"]["stale"])
    assert dev["all"]["retired"] == float(by_id["w1-0002"]["superseded"])
    retired = by_id["w1-0002"]
    assert dev["all"]["retired_by"] == ({retired["retired_by"]: 1} if retired["superseded"]
                                        else {})
    assert by_id["w1-0001"]["retired_by"] in (["rules", "judge", "rules+judge"]
                                               if by_id["w1-0001"]["superseded"] else [None])
    assert set(dev["by_lang"]) == {"en", "zh", "across"} and dev["by_lang"]["zh"]["updates"] == 0
    test = truth.run(folder, tmp_path / "homes2", split="test")
    assert test["cases"] == 1 and "outcomes" not in test
    named = truth.run(folder, tmp_path / "homes3", writers=["w2"])
    assert "outcomes" not in named  # a test writer named alone is still read as numbers


def test_the_committed_cases_load_and_the_splits_part_the_writers() -> None:
    folder = Path(__file__).resolve().parents[2] / "training" / "truth"
    cases = truth.load(folder)
    by_writer = {w: [c for c in cases if c.writer == w] for w in {c.writer for c in cases}}
    assert sum(len(v) >= 300 for v in by_writer.values()) >= 8  # some briefs target a family
    assert all(len(v) >= 150 for v in by_writer.values())
    parts = [set(truth.split_writers(folder, s)) for s in truth.SPLITS]
    assert set().union(*parts) == set(by_writer) and sum(map(len, parts)) == len(by_writer)
    assert len(truth.split_writers(folder, "test")) >= 2  # reported on two writers at least
    across = sum(c.across for c in cases) / len(cases)
    assert 0.15 <= across <= 0.35  # about a fifth across languages


@pytest.mark.parametrize("step,who", [
    ("rules", "rules"), ("rules (llm failed: timeout)", "rules"), ("judge 1fed5e99354c", "judge"),
    ("rules, judge 1fed5e99354c", "rules+judge"), ("judge 1fed5e99354c, llm on 2 unsure", "llm"),
    ("llm", "llm"),
])
def test_who_retired_is_read_from_the_supersede_step(step: str, who: str) -> None:
    assert truth._decider(step) == who
