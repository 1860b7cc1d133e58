"""``ask``'s reuse route by the calibrated confidence: it says why a pair was reused or not,
and a second model may settle the gray zone."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from varvemem import Memory


@pytest.fixture
def mem(make_memory: Callable[..., Memory]) -> Memory:
    m = make_memory()
    m.save_qa("Which port does the ledger api listen on?", "8443.", 0.9)
    m.save_qa("账本接口在哪个地域？", "cn-shanghai。", 0.9)
    return m


def test_a_reused_pair_says_why(mem: Memory) -> None:
    res = mem.ask("what port is the ledger api on")
    assert res.route == "reuse" and res.answer == "8443."
    ev = res.evidence or {}
    assert ev["confidence"] == res.confidence >= mem.settings.faq.reuse_confidence
    assert {"cosine", "overlap", "swapped", "extra", "lang", "pair"} <= set(ev)
    assert ev["pair"] == res.matched["id"] and "veto" not in ev


@pytest.mark.parametrize("asked,veto", [
    ("Which region is the ledger api in?", "attribute"),
    ("账本接口用哪个端口？", "attribute"),
    ("Which port does the ledger api listen on in staging?", "env"),
])
def test_a_like_question_asking_another_thing_goes_the_normal_way(mem: Memory, asked: str,
                                                                  veto: str) -> None:
    res = mem.ask(asked)
    assert res.route == "normal"
    assert res.evidence is not None and res.evidence["veto"].startswith(veto)
    assert res.evidence["refused"] == "confidence"


def test_the_second_opinion_is_asked_in_the_gray_zone_only(mem: Memory) -> None:
    calls: list[tuple[str, str]] = []

    def no(question: str, stored: str) -> float:
        calls.append((question, stored))
        return 0.1

    mem._engines.faq.second_opinion = no
    mem.settings.faq.second_opinion_high = 1.0  # every confidence but a certain one is gray
    res = mem.ask("what port is the ledger api on")
    assert res.route == "normal" and res.evidence["second_cosine"] == 0.1
    assert calls == [("what port is the ledger api on",
                      "Which port does the ledger api listen on?")]
    assert mem.ask("Which region is the ledger api in?").route == "normal"
    assert len(calls) == 1  # a veto asks no one
    mem._engines.faq.second_opinion = lambda q, s: 0.99
    assert mem.ask("what port is the ledger api on").route == "reuse"
