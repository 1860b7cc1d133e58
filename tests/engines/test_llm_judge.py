"""The LLM pair judge (engines/llm_judge.py) behind a real ChatClient on a fake endpoint: what
it asks, and how it reads answers that ignore the request for bare JSON."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from varvemem.engines.llm_judge import (
    JUDGE_PROMPT,
    PairJudgement,
    judge_pairs,
    judge_prompt,
    parse_judgements,
)
from varvemem.errors import LLMError
from varvemem.llm import ChatClient
from varvemem.settings import LLMSettings


class FakeEndpoint:
    """An OpenAI-compatible chat endpoint answering ``reply`` (text) and keeping each request."""

    def __init__(self, reply: str | httpx.Response) -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        if isinstance(self.reply, httpx.Response):
            return self.reply
        return httpx.Response(200, json={"choices": [{"message": {"content": self.reply}}]})

    def client(self) -> ChatClient:
        cfg = LLMSettings(enabled=True, url="http://llm.test/v1", model="judge", retries=0)
        return ChatClient(cfg, transport=httpx.MockTransport(self.handle), sleep=lambda _: None)


def _answer(*labels: str) -> dict[str, Any]:
    return {"pairs": [{"old": i, "label": lab, "reason": f"r{i}"} for i, lab in enumerate(labels)]}


def test_one_request_with_the_prompt_and_the_numbered_olds() -> None:
    ep = FakeEndpoint(json.dumps(_answer("update", "both")))
    got = judge_pairs(ep.client(), "Standup is at  10:15\nnow", ["Standup at 9:30", "午饭12点"])
    assert got == [PairJudgement("update", "r0"), PairJudgement("both", "r1")]
    assert got[0].updates and not got[1].updates
    (body,) = ep.bodies
    system, user = (m["content"] for m in body["messages"])
    assert system.startswith(JUDGE_PROMPT) and "JSON" in system
    assert user == "NEW: Standup is at 10:15 now\nOLD:\n0. Standup at 9:30\n1. 午饭12点"
    assert body["temperature"] == 0


def test_no_olds_no_request() -> None:
    ep = FakeEndpoint("{}")
    assert judge_pairs(ep.client(), "x", []) == []
    assert ep.bodies == []


def test_the_prompt_is_one_constant_for_every_label_and_both_languages() -> None:
    for label in ("update", "same", "both", "unrelated"):
        assert f'"{label}"' in JUDGE_PROMPT
    assert "Chinese" in JUDGE_PROMPT and any("\u4e00" <= ch <= "\u9fff" for ch in JUDGE_PROMPT)
    assert judge_prompt("n", ["a", "b"]) == "NEW: n\nOLD:\n0. a\n1. b"


@pytest.mark.parametrize("wrap", [
    "{obj}",
    "Sure! Here is my judgement: {obj} Hope that helps {{really}}.",
    "Here is the JSON you asked for:\n```json\n{obj}\n```\nThe second one is {{odd}}.",
    "```\n{obj}\n```",
    "Thinking {{\"draft\": true}} ... final: {obj}",
])
def test_json_in_prose_or_fences_is_read(wrap: str) -> None:
    text = wrap.format(obj=json.dumps(_answer("same", "unrelated"), ensure_ascii=False))
    ep = FakeEndpoint(text)
    got = judge_pairs(ep.client(), "n", ["a", "b"])
    assert [j.verdict for j in got] == ["same", "unrelated"]


def test_label_spellings_and_shapes_are_normalised() -> None:
    assert [j.verdict for j in parse_judgements(
        '{"results": [{"index": "1", "verdict": "Keep_Both"}, {"i": 0, "label": "Updated."}]}',
        2)] == ["update", "both"]
    assert [j.verdict for j in parse_judgements('["duplicate", "none"]', 2)] == [
        "same", "unrelated"]
    assert parse_judgements('{"label": "update", "reason": "new time"}', 1) == [
        PairJudgement("update", "new time")]
    assert parse_judgements('{"pairs": [{"label": "更新"}]}', 1)[0].verdict == "update"


def test_entries_without_an_index_are_taken_in_order() -> None:
    got = parse_judgements('{"pairs": [{"label": "both"}, {"label": "update"}]}', 2)
    assert [j.verdict for j in got] == ["both", "update"]


def test_a_bare_label_answers_one_pair_only() -> None:
    assert parse_judgements("Label: update", 1) == [PairJudgement("update", "")]
    with pytest.raises(LLMError):
        parse_judgements("update", 2)
    with pytest.raises(LLMError):  # two labels: no answer
        parse_judgements("either update or both", 1)


@pytest.mark.parametrize("text", [
    "I cannot tell.",
    '{"pairs": [{"old": 0, "label": "update"}]}',  # the second OLD has no label
    '{"pairs": [{"old": 0, "label": "maybe"}, {"old": 1, "label": "same"}]}',  # unknown label
    '{"pairs": [{"old": 0, "label": "same"}, {"old": 5, "label": "same"}]}',  # no such OLD
    '{"pairs": []}',
    '{"pairs": [{"old": 0, "label": "same"}, {"old": 1, "label": "same"',  # cut short
])
def test_an_answer_that_leaves_an_old_without_a_label_is_an_llm_error(text: str) -> None:
    with pytest.raises(LLMError, match="no label for each of 2 OLD"):
        judge_pairs(FakeEndpoint(text).client(), "n", ["a", "b"])


def test_a_failing_endpoint_is_an_llm_error() -> None:
    ep = FakeEndpoint(httpx.Response(400, json={"error": {"type": "invalid_request_error"}}))
    with pytest.raises(LLMError, match="HTTP 400"):
        judge_pairs(ep.client(), "n", ["a"])


def test_a_later_json_value_with_judgements_wins_over_an_earlier_one_without() -> None:
    text = 'Input: {"new": "n"} Output: {"pairs": [{"old": 0, "label": "both", "reason": "x"}]}'
    assert parse_judgements(text, 1) == [PairJudgement("both", "x")]
