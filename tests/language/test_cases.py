"""The case table of each language (``cases/<lang>.toml``) run against the language package
and the rules built on its tables. A case is a row: adding one is a few lines of TOML."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from varvemem.engines import claims, rules
from varvemem.language import segment

if sys.version_info >= (3, 11):
    import tomllib
else:  # a dependency of the package before 3.11
    import tomli as tomllib

CASES = sorted((Path(__file__).parent / "cases").glob("*.toml"))


def _rows(table: str) -> list[Any]:
    return [pytest.param(row, id=f"{path.stem}-{table}-{i}")
            for path in CASES
            for i, row in enumerate(tomllib.loads(path.read_text("utf-8")).get(table, []))]


def test_every_language_has_its_table() -> None:
    assert {p.stem for p in CASES} >= {"en", "zh"}


@pytest.mark.parametrize("case", _rows("sentences"))
def test_sentences(case: dict[str, Any]) -> None:
    got = segment.sentences(case["text"], semicolons=case.get("semicolons", False))
    assert list(got) == case["expect"]


@pytest.mark.parametrize("case", _rows("questions"))
def test_questions(case: dict[str, Any]) -> None:
    assert segment.is_question(case["text"]) is case["expect"]


@pytest.mark.parametrize("case", _rows("hedges"))
def test_hedges(case: dict[str, Any]) -> None:
    assert segment.is_hedged(case["text"]) is case["expect"]


@pytest.mark.parametrize("case", _rows("update_cues"))
def test_update_cues(case: dict[str, Any]) -> None:
    assert rules.is_update(case["text"]) is case["expect"]


@pytest.mark.parametrize("case", _rows("transitions"))
def test_transitions(case: dict[str, Any]) -> None:
    found = claims.transition(case["text"])
    if case.get("none"):
        assert found is None
        return
    assert found is not None
    assert (found.old, found.new) == (case.get("old"), case["new"])


@pytest.mark.parametrize("case", _rows("negations"))
def test_negations(case: dict[str, Any]) -> None:
    found = claims.negation(case["text"])
    if case.get("none"):
        assert found is None
        return
    assert found is not None and list(found.values) == case["values"]
