"""The offline supersession rules as a table (:data:`varvemem.engines.update.claim_rules.SUPERSEDE_RULES`),
run in the order ``update.supersede_rules`` lists them: a rule left out never decides, and the
first listed rule that decides is the answer, so leaving one out, or listing another first,
can hand the pair to another rule."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from tests.conftest import Clock

from varvemem import Memory
from varvemem.embeddings.usem3 import USEEmbedder
from varvemem.engines.update.claim_rules import SUPERSEDE_RULES
from varvemem.settings import Settings, UpdateSettings

EVERY = ["transition", "negation", "frame", "cue"]


@pytest.fixture
def why(tmp_path: Path, embedder: USEEmbedder, clock: Clock):
    """Why ``new`` supersedes ``old`` by ``rules`` alone (the judge off), or None; each in a
    store of its own."""
    homes = itertools.count()

    def run(rules: list[str], old: str, new: str) -> str | None:
        settings = Settings.load(home=tmp_path / f"home-{next(homes)}",
                                 update={"supersede_rules": rules, "judge": "rules"})
        with Memory(settings=settings, embedder=embedder, clock=clock) as mem:
            a = mem.add(old)
            clock.advance(hours=1)
            b = mem.add(new)
            if b.superseded != [a.memory_id]:
                assert b.superseded == []
                return None
            return mem.history(a.memory_id)[-1].reason

    return run


def test_the_table_holds_every_rule_and_the_default_lists_them_in_the_documented_order() -> None:
    assert list(SUPERSEDE_RULES) == UpdateSettings().supersede_rules == EVERY


@pytest.mark.parametrize("old,new,rule,every,without", [
    # The transition comes first; without it the frame rule finds the same pair.
    ("Image builds run on builder-a", "We moved image builds from builder-a to builder-c",
     "transition", "transition from builder-a", "close claim, new value (frame)"),
    # The negation before the cue ("no longer" is an update word too).
    ("Nightly jobs send reports to Slack", "Nightly jobs no longer send reports to Slack",
     "negation", "negated: no longer slack", "updated by a newer statement (cosine"),
    # The frame before the cue ("now").
    ("The payments queue is rabbit-q-2", "The payments queue is now rabbit-q-5",
     "frame", "same claim, new value (frame)", "updated by a newer statement (cosine"),
    # No update word: only the frame rule finds it.
    ("The payments queue is rabbit-q-2", "The payments queue is rabbit-q-5",
     "frame", "same claim, new value (frame)", None),
])
def test_a_rule_left_out_never_decides(why, old: str, new: str, rule: str, every: str,
                                       without: str | None) -> None:
    found = why(EVERY, old, new)
    assert found is not None and every in found
    alone = why([rule], old, new)
    assert alone is not None and every in alone
    rest = why([r for r in EVERY if r != rule], old, new)
    if without is None:
        assert rest is None
    else:
        assert rest is not None and without in rest and every not in rest
    assert why([], old, new) is None


def test_the_setting_orders_the_rules(why) -> None:
    """The rules are tried in the order the setting lists them: the first that decides
    names the reason."""
    old, new = "The payments queue is rabbit-q-2", "The payments queue is now rabbit-q-5"
    frame_first = why(["frame", "cue"], old, new)
    assert frame_first is not None and "same claim, new value (frame)" in frame_first
    cue_first = why(["cue", "frame"], old, new)
    assert cue_first is not None and "updated by a newer statement (cosine" in cue_first
