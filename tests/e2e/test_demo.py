"""`varvemem demo` tells the truth: every verdict it prints is drawn from the hits it shows.

The demo runs as a user runs it (a subprocess, output piped at 80 columns). Its ``--json``
report lists the hits shown and the verdicts; this test recomputes every verdict from the
hits' contents and the questions file, and checks the printed summary says the same.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest


def _demo(tmp_path: Path, *args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    env.update(COLUMNS="80", HOME=str(tmp_path), **variables)  # a fake HOME: never touched
    proc = subprocess.run([sys.executable, "-m", "varvemem", "demo", *args], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []
    return proc


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    report = json.loads(_demo(tmp_path_factory.mktemp("json"), "--json").stdout)
    text = _demo(tmp_path_factory.mktemp("text")).stdout
    return report, text


def _questions() -> list[dict[str, Any]]:
    data = resources.files("varvemem.demo") / "data" / "questions.json"
    return json.loads(data.read_text("utf-8"))


def test_every_verdict_follows_from_the_hits_shown(runs: tuple[dict[str, Any], str]) -> None:
    report, _ = runs
    questions = _questions()
    for phase in ("before", "after"):
        assert [c["question"] for c in report[phase]] == [q["question"] for q in questions]
        for check, q in zip(report[phase], questions):
            shown = check["shown"]
            assert [h["rank"] for h in shown] == list(range(1, len(shown) + 1))
            for h in shown:  # the marks the demo printed beside each hit
                assert h["current"] == (q["expect"] in h["content"])
                assert h["old_rule"] == any(f in h["content"] for f in q["forbid"])
            assert check["found_at"] == next(
                (h["rank"] for h in shown if q["expect"] in h["content"]), None)
            assert check["old_rule_at"] == [
                h["rank"] for h in shown if any(f in h["content"] for f in q["forbid"])]


def test_the_printed_summary_says_what_the_report_says(runs: tuple[dict[str, Any], str]) -> None:
    report, text = runs
    summary = text.split("Summary")[-1]
    for before, after in zip(report["before"], report["after"]):
        block = " ".join(summary.split(after["question"], 1)[1].split("\n\n", 1)[0].split())
        said = re.search(r"before (at #(\d)|not in the top \d|nothing found), "
                         r"after (at #(\d)|not in the top \d|nothing found)", block)
        assert said, block
        for group, check in ((2, before), (4, after)):
            assert (int(said.group(group)) if said.group(group) else None) == check["found_at"]
        if after["forbid"]:
            served = re.search(r"old rule served after: (no|yes, at ([#\d, ]+))", block)
            assert served, block
            ranks = [int(r) for r in re.findall(r"\d", served.group(2) or "")]
            assert ranks == after["old_rule_at"]


def test_the_story_learns(runs: tuple[dict[str, Any], str]) -> None:
    """What the story is for: questions the initial documents cannot answer are answered from
    what the assistant lived through, and the replaced handbook chunk is kept, not served."""
    report, _ = runs
    assert sum(c["found_at"] is not None for c in report["after"]) == len(report["after"])
    assert sum(c["found_at"] is not None for c in report["before"]) < len(report["before"])
    rule = report["replaced_rule"]
    assert rule["superseded_by"] and rule["valid_to"] and rule["history"][-1] == "supersede"
    served = {h["memory_id"] for c in report["after"] for h in c["shown"]}
    assert rule["memory_id"] not in served
    lesson = report["experience"]
    assert lesson and "imagePullSecrets" in lesson["content"]
    # Asked again, the lesson is served: the experience itself, or the memories it was made
    # from (since importance comes from content, the fix's own turns often rank first).
    if lesson["rank"] is not None:
        assert lesson["top3"][lesson["rank"] - 1] == lesson["memory_id"]
    else:
        assert set(lesson["top3"]) & set(lesson["related"])


def test_the_log_reads_at_80_columns(runs: tuple[dict[str, Any], str]) -> None:
    _, text = runs
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert len(lines) < 400, len(lines)
    assert "\x1b[" not in text  # no colour codes in a log


def test_the_demo_never_reaches_the_users_stores(tmp_path: Path) -> None:
    """Settings pointing at the user's servers and files are not the demo's: it runs on the
    built-in defaults in its temporary home (an unreachable database would fail it)."""
    report = json.loads(_demo(tmp_path, "--json",
                              VARVEMEM_STORE_URL="postgresql://nobody@127.0.0.1:1/none",
                              VARVEMEM_CONFIG=str(tmp_path / "missing.toml"),
                              VARVEMEM_EMBEDDER__NAME="bogus").stdout)
    assert report["stats"]["memories"] > 0
