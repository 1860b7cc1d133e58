"""``varvemem bench behaviour``: the cases (deterministic, both languages, enough of them),
the JSON it prints on a small subset, and scorers that report a failure when one is built in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from varvemem.benchmarks import behaviour


def test_cases_are_deterministic_and_enough() -> None:
    a, b = behaviour.all_cases(7), behaviour.all_cases(7)
    assert [(c.id, c.data) for c in a] == [(c.id, c.data) for c in b]
    assert [c.data for c in behaviour.all_cases(8)] != [c.data for c in a]
    origin = Counter(c.origin for c in a)
    assert origin["template"] >= 400 and origin["hand"] >= 60
    for fam in behaviour.FAMILIES:
        for lang in behaviour.LANGS:
            for kind in ("template", "hand"):
                assert any(c.family == fam and c.lang == lang and c.origin == kind for c in a), \
                    (fam, lang, kind)
    assert len({c.id for c in a}) == len(a)


def test_limit_selects_both_languages_and_origins() -> None:
    cases = behaviour.select(behaviour.all_cases(0), ["update"], None, 2)
    assert len(cases) == 4
    assert {(c.lang, c.origin) for c in cases} == {(lg, o) for lg in ("en", "zh")
                                                   for o in ("hand", "template")}


def test_update_scorer_fails_when_the_new_value_is_elsewhere(tmp_path: Path) -> None:
    data = {"mode": "knowledge", "old": "The staging cluster is eks-stg-3",
            "new": "The staging cluster is eks-stg-4", "old_value": "eks-stg-3",
            "new_value": "eks-stg-4", "query": "Which cluster is staging?", "gap_hours": 2,
            "new_tenant": "somewhere-else"}
    case = behaviour.Case("update", "en", "broken", "hand", data)
    summary = behaviour.summarise("update", behaviour.run_family(tmp_path, "update", [case]))
    row = summary["by_lang"]["en"]
    assert row["metrics"]["old_served"] == 1.0 and row["metrics"]["new_top1"] == 0.0
    assert row["pass"] is False


def test_other_scorers_can_fail(tmp_path: Path) -> None:
    chat = [behaviour.Case("chit_chat", "en", "q", "hand",
                           {"text": "how do I roll back the payments service?",
                            "chit_chat": True})]  # labelled wrongly on purpose
    s = behaviour.summarise("chit_chat", behaviour.run_family(tmp_path, "chit_chat", chat))
    assert s["by_lang"]["en"]["metrics"]["recall"] == 0.0 and s["by_lang"]["en"]["pass"] is False
    dup = [behaviour.Case("distinct", "zh", "d", "hand",
                          {"kind": "id", "records": [{"content": "支付服务跑在 pg-1 上"},
                                                     {"content": "支付服务跑在 pg-1 上"}]})]
    s = behaviour.summarise("distinct", behaviour.run_family(tmp_path, "distinct", dup))
    assert s["by_lang"]["zh"]["metrics"]["wrong"] == 1.0 and s["by_lang"]["zh"]["pass"] is False
    assert behaviour.verdict({"x": 0.5}, {"x": (">=", 0.9)}) is False
    assert behaviour.verdict({"x": None}, {"x": (">=", 0.9)}) is None


def test_cli_json_on_a_small_subset(tmp_path: Path) -> None:
    env = {**os.environ, "VARVEMEM_HOME": str(tmp_path / "home")}
    out = subprocess.run(
        [sys.executable, "-m", "varvemem", "bench", "behaviour", "--limit", "1", "--json",
         "--family", "update,distinct", "--family", "chit_chat", "--lang", "zh"],
        capture_output=True, text=True, env=env, timeout=300, check=True)
    result = json.loads(out.stdout)
    assert set(result["families"]) == {"update", "distinct", "chit_chat"}
    for fam in result["families"].values():
        assert set(fam["by_lang"]) == {"zh", "all"}
        row = fam["by_lang"]["zh"]
        assert row["cases"] == 1 and row["pass"] in (True, False, None)
        assert set(fam["targets"]) <= set(row["metrics"])
    assert result["cases"]["hand"] + result["cases"]["template"] == 3
