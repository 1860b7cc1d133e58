"""L3: the intent fast path routes chit-chat, reuses validated answers, and otherwise answers
by retrieval (and the LLM when configured, which then makes a new pair)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests._llm import Call, ChatServer, importance, llm_alone, status, supersede_none, supersede_the
from tests.conftest import stores_of

from varvemem import Memory, Settings, ValidationError
from varvemem.engines.faq_confidence import read_same
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
    ("Thanks a lot!", "thanks"), ("谢谢！", "thanks"), ("好的", "acknowledgement"), ("bye", "goodbye"),
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
    fact = "The VPN config is published at vpn.acme.internal/config."

    def answer(call: Call) -> str:
        assert call.fields["question"] == "Where is the VPN config?"
        assert fact in call.fields["context"]  # the memories are given to the model
        return "  Download it from vpn.acme.internal/config (the mock's words).\n"

    server = ChatServer(answer=answer, score=importance(0.83))
    with Memory(home=home, embedder=embedder, clock=clock, llm=server.client()) as mem:
        fid = mem.add(fact, type="knowledge").memory_id
        res = mem.ask("Where is the VPN config?")
        assert res.route == "normal" and res.llm and res.reason == "retrieval + LLM"
        assert res.answer == "Download it from vpn.acme.internal/config (the mock's words)."
        pair = mem.get(res.matched["id"])
        assert pair.question == "Where is the VPN config?" and pair.answer == res.answer
        assert pair.score == mem.settings.faq.initial_score == res.matched["score"]
        assert pair.importance == 0.83  # the pair went through the LLM's score step too
        assert pair.metadata["sources"] == {fid: mem.get(fid).content_hash}
    # the fact and the pair are scored; a pair has no other pair to supersede
    assert server.tasks == ["score", "answer", "score"]
    assert server.of("score")[1].fields["content"] == f"Where is the VPN config?\n{res.answer}"


def test_a_failing_llm_answers_with_the_memories_and_makes_no_pair(home, embedder,
                                                                  clock) -> None:
    server = ChatServer(answer=status(503, "busy"), score=importance(0.83))
    with Memory(home=home, embedder=embedder, clock=clock, llm=server.client()) as mem:
        mem.add("The VPN config is published at vpn.acme.internal/config.", type="knowledge")
        res = mem.ask("Where is the VPN config?")
        assert res.route == "normal" and not res.llm and res.matched is None
        assert res.reason.startswith("retrieval (LLM failed: ") and "HTTP 503" in res.reason
        assert "vpn.acme.internal/config" in res.answer
        assert mem.load_all_qa() == []
    assert server.tasks == ["score"] + ["answer"] * 3  # tried, retried twice, given up


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
    assert gone.route == "normal" and gone.reason == "retrieval (no LLM)"
    assert "9443" not in gone.answer and "8443" not in gone.answer  # nowhere, not in the context


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


Q = "Which port does the public API use?"
OLD_FACT = "The public API listens on port 8443."


def _port_answer(call: Call) -> str:
    """Answers from the port the context names: only the memories given decide."""
    assert call.fields["question"] in (Q, "What port is the public API on?")
    ctx = call.fields["context"]
    if "port" not in ctx:
        return "No memory says (the mock)."
    assert ("8443" in ctx) != ("9443" in ctx), ctx  # exactly one version of the fact is given
    return "Port 8443 (from the memories)." if "8443" in ctx else "Port 9443 (from the memories)."


def _validated_answer(mem: Memory, server: ChatServer) -> str:
    """A pair answered by the LLM from OLD_FACT, validated and promoted to the answer cache."""
    fact = mem.add(OLD_FACT, type="knowledge").memory_id
    first = mem.ask(Q)
    assert first.route == "normal" and first.answer == "Port 8443 (from the memories)."
    assert OLD_FACT in server.of("answer")[-1].fields["context"]
    pair = mem.get(first.matched["id"])
    assert pair.metadata["sources"] == {fact: mem.get(fact).content_hash}
    mem.qa.update(pair.memory_id, score=0.95)
    assert mem.ask(Q).reason == "a validated answer to the same question"
    cached = mem.ask(Q)
    assert cached.route == "reuse" and cached.reason.startswith("cached")
    assert cached.answer == "Port 8443 (from the memories)."
    return pair.memory_id


def _retired(mem: Memory, pair: str) -> None:
    old = mem.get(pair)
    assert old.valid_to == mem.clock() and old.superseded_by is None
    last = mem.history(pair)[-1]
    assert (last.action, last.actor, last.reason) == (
        "supersede", "ask", "a memory the answer came from changed")
    assert pair not in {r.memory_id for r in mem.load_all_qa()}


def test_an_answer_is_not_reused_once_a_memory_behind_it_changes(home, embedder, clock) -> None:
    server = ChatServer(answer=_port_answer, score=importance(0.83))
    with Memory(home=home, embedder=embedder, clock=clock, llm=server.client()) as mem:
        pair = _validated_answer(mem, server)
        fact = next(iter(mem.get(pair).metadata["sources"]))
        clock.advance(minutes=5)
        mem.update(fact, content="The public API listens on port 9443 since the migration.")
        again = mem.ask(Q)
        assert again.route == "normal" and again.answer == "Port 9443 (from the memories)."
        assert again.matched["id"] != pair
        _retired(mem, pair)


@pytest.mark.parametrize("how", ["explicit", "llm"])
@pytest.mark.parametrize("asked", [Q, "What port is the public API on?"],
                         ids=["cached", "reused"])
def test_an_answer_is_not_reused_once_a_memory_behind_it_is_superseded(
        home, embedder, clock, how: str, asked: str) -> None:
    """The source stays as it was, unedited: only its validity ends. Asked as typed before,
    the cache holds the pair; asked otherwise, the search finds it."""
    successor = "Since the migration the public API is served on port 9443."  # no update cue
    old_fact = supersede_the(OLD_FACT, "the port moved (the mock)")

    def supersede(call: Call) -> dict:
        if call.fields["new"] == successor:
            return old_fact(call)
        # a new pair beside another new one; the retired pair is no candidate
        assert call.fields["new"].split("\n")[0] in (Q, "What port is the public API on?")
        assert not any("8443" in c for c in call.fields["old"]), call
        return supersede_none(call)

    server = ChatServer(answer=_port_answer, score=importance(0.83), supersede=supersede)
    with Memory(settings=llm_alone(home), embedder=embedder, clock=clock,
                llm=server.client()) as mem:
        pair = _validated_answer(mem, server)
        fact = next(iter(mem.get(pair).metadata["sources"]))
        clock.advance(minutes=5)
        if how == "explicit":
            new = mem.add(successor, type="knowledge", supersedes=[fact])
            assert server.of("supersede") == []  # nothing to ask: the caller said which
        else:  # the update engine's natural path: the LLM picks the old fact
            new = mem.add(successor, type="knowledge")
            asked_llm = server.one("supersede").fields
            assert asked_llm["new"] == successor and OLD_FACT in asked_llm["old"]
        assert new.steps["supersede"] == how and new.superseded == [fact]
        assert mem.get(fact).content == OLD_FACT and mem.get(fact).valid_to == clock.now
        again = mem.ask(asked)
        assert again.route == "normal" and again.answer == "Port 9443 (from the memories)."
        assert successor in server.of("answer")[-1].fields["context"]
        _retired(mem, pair)
        # the retired pair is not served by the other route either
        other = mem.ask("What port is the public API on?" if asked == Q else Q)
        assert other.route == "normal" and other.answer == "Port 9443 (from the memories)."
        assert other.matched["id"] not in (pair, again.matched["id"])


@pytest.fixture(params=["local", "redis"])
def answer_cache(request: pytest.FixtureRequest) -> dict[str, str]:
    """The store settings of each answer cache."""
    if request.param == "local":
        return {}
    return {"cache_url": request.getfixturevalue("redis_url"),
            "redis": {"prefix": request.getfixturevalue("cache_prefix")}}


def _key(q: str, user: str | None) -> tuple[str, str | None, str]:
    return "default", user, " ".join(q.lower().split())


def test_delete_user_drops_the_answers_cached_from_their_memories(
        home, embedder, clock, answer_cache) -> None:
    server = ChatServer(answer=_port_answer, score=importance(0.83))
    settings = Settings.load(home=home, store=answer_cache)
    with Memory(settings=settings, embedder=embedder, clock=clock, llm=server.client()) as mem:
        fact = mem.add(OLD_FACT, type="knowledge", user="alice").memory_id
        first = mem.ask(Q, user="alice")
        pair = mem.get(first.matched["id"])
        assert pair.scope.user == "alice" and list(pair.metadata["sources"]) == [fact]
        mem.qa.update(pair.memory_id, score=0.95)
        for user in ("alice", "bob"):  # bob is given alice's pair (shared across users)
            assert mem.ask(Q, user=user).reason == "a validated answer to the same question"
            assert mem.ask(Q, user=user).reason.startswith("cached")
        cache = stores_of(mem).answers
        assert cache.get(_key(Q, "alice")) == cache.get(_key(Q, "bob")) == (
            pair.memory_id, pair.content_hash)
        report = mem.delete_user("alice")
        assert report.live == 2 and report.cached_answers == 2  # her fact and her pair
        assert cache.get(_key(Q, "alice")) is None and cache.get(_key(Q, "bob")) is None
        for user in ("bob", "alice"):
            again = mem.ask(Q, user=user)
            assert again.route == "normal" and not again.reason.startswith("cached")
            assert again.matched["id"] != pair.memory_id
            # nothing of alice's is left to answer from
            assert again.answer == "No memory says (the mock)."
            assert "8443" not in server.of("answer")[-1].fields["context"]


def test_delete_user_drops_their_cached_questions_to_a_shared_pair(
        home, embedder, clock, answer_cache) -> None:
    """The cache holds the question as the user typed it: it goes with the user, though the
    shared pair it led to stays and is found again by the search."""
    settings = Settings.load(home=home, store=answer_cache)
    with Memory(settings=settings, embedder=embedder, clock=clock) as mem:
        shared = mem.save_qa("How do I reset my password?", "Open Settings > Security.", 0.95)
        mem.add("alice prefers the dark theme", user="alice")
        asked = "How do I reset my password?"
        assert mem.ask(asked, user="alice").reason == "a validated answer to the same question"
        assert mem.ask(asked, user="alice").reason.startswith("cached")
        assert stores_of(mem).answers.get(_key(asked, "alice")) is not None
        assert mem.delete_user("alice").live == 1
        assert stores_of(mem).answers.get(_key(asked, "alice")) is None
        again = mem.ask(asked, user="alice")
        assert again.route == "reuse" and again.matched["id"] == shared
        assert again.reason == "a validated answer to the same question"


@pytest.mark.parametrize("asked", ["How do I reset my API token?", "如何撤回工单？",
                                   "How do I reset my 2FA device?"])
def test_a_like_question_about_something_else_is_not_given_the_stored_answer(
        mem: Memory, asked: str) -> None:
    res = mem.ask(asked)
    assert res.route == "normal", res


@pytest.mark.parametrize("text,kind", [
    ("hey hey hey!", "greeting"), ("Good afternoon, everyone 😀", "greeting"),
    ("您好呀～", "greeting"), ("哈喽哈喽", "greeting"), ("晚上好啊！", "greeting"),
    ("thank you SO much!!!", "thanks"), ("thanks a million 🙏", "thanks"),
    ("okay, thanks again", "thanks"), ("谢谢谢谢！", "thanks"), ("太谢谢了～", "thanks"),
    ("非常感谢！！", "thanks"), ("byeee 👋", "goodbye"), ("see you soon!", "goodbye"),
    ("好的，拜拜", "goodbye"), ("回头见啦", "goodbye"), ("明天见～", "goodbye"),
    ("alright, got it", "acknowledgement"), ("okk 👍", "acknowledgement"),
    ("嗯嗯，明白了", "acknowledgement"), ("好滴", "acknowledgement"), ("👌", "acknowledgement"),
])
def test_chit_chat_in_its_many_forms(text: str, kind: str) -> None:
    found = chit_chat(text)
    assert found is not None and found[0] == kind


@pytest.mark.parametrize("text", [
    "thanks! one more thing: where are the logs?", "hello, is the staging cluster down?",
    "ok, so how do I rotate the key?", "good morning, what changed overnight?",
    "bye-bye to the old API: when is it removed?", "thank-you email template",
    "您好，发票抬头怎么改？", "谢谢，顺便问下 VPN 怎么连？", "好的，那明天几点上线？",
    "再见前最后一个问题：备份在哪？", "收到的包裹放哪里了", "明白了吗", "好不好用？", "uk",
])
def test_a_question_with_small_talk_is_still_a_question(text: str) -> None:
    assert chit_chat(text) is None


# -- reuse judged by the LLM (faq.reuse_judge = "llm") ------------------------------------------
def _llm_reuse(home, embedder, clock, **responders) -> tuple[Memory, ChatServer]:
    server = ChatServer(score=importance(0.83), **responders)
    mem = Memory(settings=Settings.load(home=home, faq={"reuse_judge": "llm"}),
                 embedder=embedder, clock=clock, llm=server.client())
    mem.save_qa("How do I reset my password?", "Open Settings > Security, click Reset.", 0.9)
    return mem, server


def test_with_an_llm_it_judges_whether_the_nearest_pair_asks_the_same(home, embedder,
                                                                      clock) -> None:
    def same(call: Call) -> str:
        assert call.fields["stored"] == "How do I reset my password?"
        return "SAME" if "忘了" in call.fields["asked"] else "DIFFERENT"

    mem, server = _llm_reuse(home, embedder, clock, same_question=same,
                             answer=lambda call: "Ask your admin (the mock's words).")
    with mem:
        res = mem.ask("密码忘了怎么重置？")  # another language: the LLM reads both
        assert res.route == "reuse" and res.answer == "Open Settings > Security, click Reset."
        assert res.evidence is not None and res.evidence["judge"] == "llm"
        other = mem.ask("How do I reset my colleague's password?")
        assert other.route == "normal" and other.evidence is not None
        assert other.evidence["refused"] == "confidence"
        assert other.evidence["veto"] == "the LLM judged another question"
    assert server.of("same_question")[0].fields["asked"] == "密码忘了怎么重置？"
    assert len(server.of("same_question")) == 2  # one call an ask, the nearest pair only


@pytest.mark.parametrize("reply,why", [
    (status(503, "busy"), "the LLM failed"),
    (lambda call: "Hmm, hard to say.", "the LLM answered neither SAME nor DIFFERENT"),
])
def test_an_llm_that_fails_or_says_neither_reuses_nothing(home, embedder, clock, reply,
                                                          why: str) -> None:
    mem, _ = _llm_reuse(home, embedder, clock, same_question=reply,
                        answer=lambda call: "Ask your admin.")
    with mem:
        res = mem.ask("I forgot my password, how can I reset it?")
        assert res.route == "normal" and res.evidence is not None
        assert res.evidence["veto"].startswith(why)


def test_without_an_llm_the_llm_judge_falls_back_to_the_calibrated_one(make_memory) -> None:
    mem = make_memory(faq={"reuse_judge": "llm"})
    mem.save_qa("How do I reset my password?", "Open Settings > Security, click Reset.", 0.9)
    res = mem.ask("I forgot my password, how can I reset it?")
    assert res.route == "reuse" and res.evidence is not None
    assert res.evidence["judge"] == "calibrated"


@pytest.mark.parametrize("answer,verdict", [
    ("SAME", True), ("different", False), ("Not the same.", False), ("**SAME**", True),
    ("Sure: SAME", True), ("DIFFERENT - another person", False), ("", None), ("相同", None),
    ("They are not same", False), ("They aren't the same", False),
    ("Both ask about the same system, but different actions: DIFFERENT", False),
    ("<think>they look the same</think>DIFFERENT", False),
    ("<think>maybe different</think>SAME", True), ("答案是SAME", True),
])
def test_the_llm_verdict_is_read_from_whatever_it_answers(answer: str,
                                                          verdict: bool | None) -> None:
    assert read_same(answer) is verdict


def test_match_says_what_ask_would_reuse_and_changes_nothing(mem: Memory) -> None:
    before = [(r.memory_id, r.retrieval_count) for r in mem.get_all()]
    hit = mem.qa.match("I forgot my password, how can I reset it?")
    assert hit.route == "reuse" and hit.answer == "Open Settings > Security, click Reset."
    miss = mem.qa.match("what is the VPN address of the Berlin office?")
    assert miss.route == "normal" and miss.answer == ""
    assert [(r.memory_id, r.retrieval_count) for r in mem.get_all()] == before


def test_match_follows_ask_for_chit_chat_and_a_disabled_memory(mem: Memory,
                                                               make_memory) -> None:
    assert mem.qa.match("谢谢！").route == "skip"
    off = make_memory(faq={"enabled": False})
    off.save_qa("How do I reset my password?", "Settings.", 0.9)
    assert off.qa.match("How do I reset my password?").route == "normal"


def test_the_llm_is_not_asked_about_the_same_question(home, embedder, clock) -> None:
    mem, server = _llm_reuse(home, embedder, clock, same_question=status(503, "down"))
    with mem:
        assert mem.ask("How do I reset my password?").route == "reuse"
    assert server.of("same_question") == []
