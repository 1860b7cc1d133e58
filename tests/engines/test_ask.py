"""L3: the intent fast path routes chit-chat, reuses validated answers, and otherwise answers
by retrieval (and the LLM when configured, which then makes a new pair)."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from tests.conftest import mock_llm

from varvemem import Memory, ValidationError
from varvemem.engines.intent import chit_chat


@pytest.fixture
def mem(make_memory: Callable[..., Memory]) -> Memory:
    m = make_memory()
    m.save_qa("How do I reset my password?", "Open Settings > Security, click Reset.", 0.9)
    m.save_qa("如何提交工单？", "在服务门户点击新建工单。", 0.9)
    m.save_qa("审核流程需要几天？", "一般 3 个工作日。", 0.4)  # not validated enough to reuse
    return m


@pytest.mark.parametrize("text,kind", [
    ("Hi!", "greeting"), ("hello there", "greeting"), ("你好", "greeting"), ("在吗？", "greeting"),
    ("Thanks a lot!", "thanks"), ("谢谢！", "thanks"), ("好的", "thanks"), ("bye", "goodbye"),
    ("拜拜~", "goodbye"),
])
def test_chit_chat_in_both_languages(text: str, kind: str) -> None:
    found = chit_chat(text)
    assert found is not None and found[0] == kind


@pytest.mark.parametrize("text", ["hi, how do I reset my password?", "谢谢，工单怎么提交？",
                                  "thanks for nothing: the deploy failed again", ""])
def test_questions_are_not_chit_chat(text: str) -> None:
    assert chit_chat(text) is None


def test_routes(mem: Memory) -> None:
    skip = mem.ask("谢谢！")
    assert skip.route == "skip" and skip.matched is None
    reuse = mem.ask("I forgot my password, how can I reset it?")
    assert reuse.route == "reuse" and reuse.answer == "Open Settings > Security, click Reset."
    assert reuse.confidence >= mem.settings.faq.reuse_confidence and reuse.ms > 0
    assert mem.ask("工单怎么提交").route == "reuse"
    low = mem.ask("审核要多久")  # matched, but its score 0.4 is under reuse_min_score
    assert low.route == "normal" and "No LLM is configured" in low.answer
    assert "一般 3 个工作日" in low.answer  # the context still brings the pair
    assert mem.ask("what is the VPN address of the Berlin office?").route == "normal"


def test_memory_disabled_sends_everything_the_normal_way(make_memory) -> None:
    mem = make_memory(faq={"enabled": False})
    mem.save_qa("How do I reset my password?", "Settings.", 0.9)
    res = mem.ask("How do I reset my password?")
    assert res.route == "normal" and "Settings." not in res.answer


def test_ask_logs_the_exchange_in_the_session(mem: Memory) -> None:
    mem.ask("How do I reset my password?", session="s1")
    turns = mem.sessions.load_session("s1")
    assert [t["role"] for t in turns] == ["user", "assistant"]
    assert turns[1]["content"] == "Open Settings > Security, click Reset."


def test_normal_path_with_the_llm_makes_a_new_pair(home, embedder, clock) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if body["messages"][0]["content"].startswith("You answer"):
            assert "Question: Where is the VPN config?" in body["messages"][1]["content"]
            text = "Download it from vpn.acme.internal."
        else:  # the update engine's own steps
            text = json.dumps({"memory_type": "qa", "tags": [], "importance": 0.5,
                               "superseded": []})
        return httpx.Response(200, json={"choices": [{"message": {"content": text}}]})

    llm = mock_llm(handler)
    with Memory(home=home, embedder=embedder, clock=clock, llm=llm) as mem:
        res = mem.ask("Where is the VPN config?")
        assert res.route == "normal" and res.llm and res.answer.startswith("Download")
        pair = mem.get(res.matched["id"])
        assert pair.question == "Where is the VPN config?" and pair.score == 0.5


def test_an_empty_question_is_refused(mem: Memory) -> None:
    with pytest.raises(ValidationError, match="question"):
        mem.ask("  ")


def test_feedback_moves_the_score_bounded_and_logged(mem: Memory) -> None:
    pid = mem.save_qa("Where are the build logs?", "In the CI run page.", 0.95)
    assert mem.qa.feedback(pid, "up").score == 1.0  # bounded
    assert mem.qa.feedback(pid, "down").score == pytest.approx(0.8)
    assert mem.qa.feedback(pid, "followup").score == pytest.approx(0.75)
    assert [h.reason for h in mem.history(pid)][-3:] == [
        "helpful", "not helpful", "a follow-up question came right after"]
    with pytest.raises(ValidationError, match="not one of"):
        mem.qa.feedback(pid, "meh")
    note = mem.add("a plain note", type="knowledge").memory_id
    with pytest.raises(ValidationError, match="not a Q&A pair"):
        mem.qa.feedback(note, "up")


def test_a_follow_up_counts_against_thanks_for_the_answer(mem: Memory, clock) -> None:
    reset = next(r for r in mem.load_all_qa() if r.question.startswith("How do I reset"))
    mem.ask("How do I reset my password?", session="s1")
    clock.advance(minutes=1)
    mem.ask("and where is Settings?", session="s1")  # a follow-up: the answer was not enough
    assert mem.get(reset.memory_id).score == pytest.approx(0.85)
    mem.ask("How do I reset my password?", session="s1")
    clock.advance(minutes=1)
    mem.ask("thanks!", session="s1")
    assert mem.get(reset.memory_id).score == pytest.approx(0.95)
    mem.ask("How do I reset my password?", session="s1")
    clock.advance(minutes=10)  # long after: not a follow-up
    mem.ask("what is the VPN address?", session="s1")
    assert mem.get(reset.memory_id).score == pytest.approx(0.95)


def test_cached_answers_are_dropped_when_their_pair_changes(mem: Memory) -> None:
    pid = mem.save_qa("Which port does the API use?", "Port 8443.", 0.95)
    first = mem.ask("Which port does the API use?")
    assert first.route == "reuse" and first.reason.startswith("a validated")
    second = mem.ask("which port does  the API use?")
    assert second.route == "reuse" and second.reason.startswith("cached")
    mem.qa.update(pid, answer="Port 9443 since the migration.")
    third = mem.ask("Which port does the API use?")
    assert not third.reason.startswith("cached") and third.answer.startswith("Port 9443")
    mem.delete(pid)
    gone = mem.ask("Which port does the API use?")
    assert gone.route == "normal" and "9443" not in gone.answer.split("\n")[0]


def test_the_faq_walkthrough_in_the_docs_runs(make_memory: Callable[..., Memory],
                                               tmp_path) -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "faq.md").read_text("utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    mem = make_memory()
    code = code.replace("with Memory() as mem:", "if True:").replace('"faq/"',
                                                                     repr(str(tmp_path)))
    exec(compile(code, "docs/faq.md", "exec"), {"Memory": Memory, "mem": mem})
    assert len(list(tmp_path.glob("qa-*.md"))) == 1
    assert 'varvemem ask "工单怎么提交"' in text


def test_an_answer_is_not_reused_once_a_memory_behind_it_changes(home, embedder, clock) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if body["messages"][0]["content"].startswith("You answer"):
            text = "Port 8443." if "8443" in body["messages"][1]["content"] else "Port 9443."
        else:
            text = json.dumps({"memory_type": "knowledge", "tags": [], "importance": 0.5,
                               "superseded": []})
        return httpx.Response(200, json={"choices": [{"message": {"content": text}}]})

    llm = mock_llm(handler)
    with Memory(home=home, embedder=embedder, clock=clock, llm=llm) as mem:
        fact = mem.add("The public API listens on port 8443.", type="knowledge").memory_id
        first = mem.ask("Which port does the public API use?")
        pair = mem.get(first.matched["id"])
        assert first.route == "normal" and fact in pair.metadata["sources"]
        mem.qa.update(pair.memory_id, score=0.95)
        assert mem.ask("Which port does the public API use?").route == "reuse"
        assert mem.ask("Which port does the public API use?").reason.startswith("cached")
        mem.update(fact, content="The public API listens on port 9443 since the migration.")
        again = mem.ask("Which port does the public API use?")
        assert again.route == "normal" and again.answer == "Port 9443."
        old = mem.get(pair.memory_id)
        assert old.valid_to is not None
        assert mem.history(pair.memory_id)[-1].reason == "a memory the answer came from changed"


@pytest.mark.parametrize("asked", ["How do I reset my API token?", "如何撤回工单？",
                                   "How do I reset my 2FA device?"])
def test_a_like_question_about_something_else_is_not_given_the_stored_answer(
        mem: Memory, asked: str) -> None:
    res = mem.ask(asked)
    assert res.route == "normal", res
