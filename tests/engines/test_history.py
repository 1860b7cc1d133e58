"""L1 session history: Markdown files per session and tenant, validated ids, compression."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import Clock, mock_llm

from varvemem import Memory, ValidationError
from varvemem.stores.session_log import SessionLog, Turn


@pytest.fixture
def mem(make_memory: Callable[..., Memory]) -> Memory:
    return make_memory()


def test_save_and_load_a_session_as_markdown(mem: Memory, clock: Clock) -> None:
    mem.sessions.save("s1", [{"role": "user", "content": "工单怎么提交？"},
                             {"role": "assistant", "content": "## Steps\n1. Open the form.\n"
                                                              "2. Submit it."}])
    clock.advance(minutes=3)
    path = mem.sessions.save("s1", [{"role": "assistant", "content": "a long answer"}],
                             summary="Use the form.")
    text = path.read_text("utf-8")
    assert path == mem.settings.home / "sessions" / "s1.md"
    assert text.startswith("# Session s1\n") and "工单怎么提交？" in text and "## Steps" in text
    turns = mem.sessions.load_session("s1")
    assert [(t["role"], t["summary"]) for t in turns] == [
        ("user", None), ("assistant", None), ("assistant", "Use the form.")]
    assert turns[1]["content"] == "## Steps\n1. Open the form.\n2. Submit it."
    # the full answer is kept, its summary beside it (both readable with cat)
    assert turns[2]["content"] == "a long answer"
    assert text.endswith("role=assistant len=13 -->\na long answer\n"
                         "<!-- varvemem summary len=13 -->\nUse the form.\n")
    assert turns[0]["at"] == clock.now.replace(minute=0) and turns[2]["at"] == clock.now


def test_a_summary_goes_beside_the_last_answer_and_markdown_round_trips(mem: Memory) -> None:
    answer = ("## Reset\n\n1. Open *Settings*.\n\n```sh\n# not a heading\n<!-- a comment -->\n"
              "```\n\n> quoted <!-- varvemem turn --> text\n---\n| a | b |\n|---|---|")
    summary = "**Open Settings**, then:\n\n- Security\n- Reset"
    mem.sessions.save("s1", [{"role": "user", "content": "how do I reset?"},
                             {"role": "assistant", "content": "Let me check."},
                             {"role": "assistant", "content": answer}], summary=summary)
    turns = mem.sessions.load_session("s1")
    assert [(t["content"], t["summary"]) for t in turns] == [
        ("how do I reset?", None), ("Let me check.", None), (answer, summary)]
    compressed = mem.sessions.compress_history(turns)
    assert compressed[2]["content"] == summary  # the stored summary, not a new one
    assert compressed[1]["content"] == "Let me check."  # no summary of its own: made here
    with pytest.raises(ValidationError, match="assistant message"):
        mem.sessions.save("s1", [{"role": "user", "content": "thanks"}], summary="Thanks.")
    # Text that looks like a marker is text: each turn is read back by its length.
    for tricky in ("fine\n<!-- varvemem summary -->\nnot a summary",
                   "<!-- varvemem turn at=2026-01-01T00:00:00 role=user -->"):
        mem.sessions.save("s1", [{"role": "assistant", "content": "ok"}], summary=tricky)
        mem.sessions.save("s1", [{"role": "assistant", "content": tricky}])
    turns = mem.sessions.load_session("s1")
    assert [(t["content"], t["summary"]) for t in turns[3:]] == [
        ("ok", "fine\n<!-- varvemem summary -->\nnot a summary"),
        ("fine\n<!-- varvemem summary -->\nnot a summary", None),
        ("ok", "<!-- varvemem turn at=2026-01-01T00:00:00 role=user -->"),
        ("<!-- varvemem turn at=2026-01-01T00:00:00 role=user -->", None)]


def test_exact_turns_keep_their_text_and_fields(mem: Memory) -> None:
    texts = ["  two leading spaces", "", "\n\nblank lines around\n\n", "trailing \n"]
    data = {"id": "run-1", "tool_calls": [{"id": "c1", "name": "search", "args": {"q": "é"}}]}
    mem.sessions.save("s1", [{"role": "assistant", "content": t, "data": data} for t in texts],
                      exact=True)
    turns = mem.sessions.load_session("s1")
    assert [t["content"] for t in turns] == texts and all(t["data"] == data for t in turns)
    with pytest.raises(ValidationError, match="data must be a JSON object"):
        mem.sessions.save("s1", [{"role": "user", "content": "x", "data": [1]}])


# Any text but lone surrogates (not Unicode): line ends of every kind, markers, NULs.
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["line one\r\nline two", "a\rb", "\r\n", "x\r", "\u2028\u0085\x0c",
     "<!-- varvemem summary len=3 -->\nabc"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_TEXT, st.none() | _TEXT), min_size=1, max_size=4))
def test_every_text_comes_back_exactly(tmp_path_factory: pytest.TempPathFactory,
                                       turns: list[tuple[str, str | None]]) -> None:
    log = SessionLog(tmp_path_factory.mktemp("sessions"))
    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    log.append("default", "s", [Turn(at, "user", text, summary) for text, summary in turns])
    log.append("default", "s", [Turn(at, "assistant", "after")])
    assert [(t.content, t.summary) for t in log.load("default", "s")] == \
        [*turns, ("after", None)]


def test_a_crlf_message_keeps_the_next_one(mem: Memory) -> None:
    mem.sessions.save("s1", [{"role": "user", "content": "line one\r\nline two"},
                             {"role": "assistant", "content": "got it"}], exact=True)
    assert [t["content"] for t in mem.sessions.load_session("s1")] == \
        ["line one\r\nline two", "got it"]


def test_a_file_written_before_lengths_is_read_as_it_was(mem: Memory) -> None:
    path = mem.sessions.path("old")
    path.parent.mkdir(parents=True)
    path.write_text("# Session old\n\n<!-- varvemem turn at=2026-01-01T09:00:00+00:00 "
                    "role=user -->\nhow?\n\n<!-- varvemem turn at=2026-01-01T09:00:00+00:00 "
                    "role=assistant -->\nlike so\n<!-- varvemem summary -->\nso\n", "utf-8")
    mem.sessions.save("old", [{"role": "user", "content": "thanks"}])
    assert [(t["role"], t["content"], t["summary"]) for t in mem.sessions.load_session("old")] \
        == [("user", "how?", None), ("assistant", "like so", "so"), ("user", "thanks", None)]


def test_sessions_and_tenants_are_isolated(mem: Memory) -> None:
    mem.sessions.save("s1", [{"role": "user", "content": "first"}])
    mem.sessions.save("s2", [{"role": "user", "content": "second"}])
    mem.sessions.save("s1", [{"role": "user", "content": "acme's"}], tenant="acme/../x")
    assert [t["content"] for t in mem.sessions.load_session("s1")] == ["first"]
    assert [t["content"] for t in mem.sessions.load_session("s2")] == ["second"]
    assert [t["content"] for t in mem.sessions.load_session("s1", tenant="acme/../x")] == [
        "acme's"]
    other = mem.sessions.path("s1", tenant="acme/../x")
    assert other.is_relative_to(mem.settings.home / "sessions" / "tenants")
    assert mem.sessions.load_session("never") == []


def test_a_tenant_name_of_any_length_keeps_sessions(mem: Memory) -> None:
    tenant = "租户" * 100  # allowed by `keys create`; 1,800 bytes once %-encoded
    mem.add("The spare server keys are in locker 42", tenant=tenant)
    mem.ask("where are the spare server keys?", session="ops", tenant=tenant)
    assert [t["role"] for t in mem.sessions.load_session("ops", tenant=tenant)] == \
        ["user", "assistant"]
    assert mem.sessions.sessions(tenant=tenant) == ["ops"]
    assert mem.sessions.load_session("ops") == []


@pytest.mark.parametrize("bad", ["", "   ", "x\x00y", "a\nb", "x" * 513])
def test_bad_session_ids_are_refused_and_nothing_written(mem: Memory, bad: str) -> None:
    with pytest.raises(ValidationError, match="session id"):
        mem.sessions.save(bad, [{"role": "user", "content": "hi"}])
    with pytest.raises(ValidationError, match="session id"):
        mem.sessions.load_session(bad)
    assert not (mem.settings.home / "sessions").exists()


ODD_IDS = ["../etc/passwd", "a/b", ".hidden", "..", "a b", "user:42", "ann@example.com",
           "thread/1", "~x", "%7Ex", "-x", "x" * 300, "x" * 301, "会话/1", "A", "a"]


def test_any_session_id_gets_a_file_of_its_own_inside_the_folder(mem: Memory) -> None:
    folder = mem.settings.home / "sessions"
    for i, sid in enumerate(ODD_IDS):
        mem.sessions.save(sid, [{"role": "user", "content": f"turn {i}"}])
    for i, sid in enumerate(ODD_IDS):
        assert [t["content"] for t in mem.sessions.load_session(sid)] == [f"turn {i}"], sid
        path = mem.sessions.path(sid)
        assert path.parent == folder and not path.name.startswith(".") and \
            len(path.name.encode()) <= 255
    assert len({mem.sessions.path(s) for s in ODD_IDS}) == len(ODD_IDS)
    assert stores_log(mem).sessions("default") == sorted(ODD_IDS)
    mem.delete_user("nobody")  # lists and reads every file, whatever its name


def stores_log(mem: Memory):  # the L1 store behind mem.sessions
    return mem.sessions._log


def test_bad_messages_are_refused(mem: Memory) -> None:
    with pytest.raises(ValidationError, match="no 'content'"):
        mem.sessions.save("s1", [{"role": "user"}])
    with pytest.raises(ValidationError, match="no message with text"):
        mem.sessions.save("s1", [{"role": "user", "content": "  "}])
    with pytest.raises(ValidationError, match="role"):
        mem.sessions.save("s1", [{"role": "a role with spaces", "content": "x"}])
    assert not (mem.settings.home / "sessions").exists()


def test_compress_history_cuts_long_questions_and_summarises_answers(
        make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(history={"slim_chars": 40, "summary_chars": 60})
    long_q = "请帮我看一下这个审核流程为什么一直卡在第二步，" * 5
    answer = ("The review is stuck because the approver left. Reassign it in the admin panel. "
              "Then resubmit. If it still fails, open a ticket with the request id.")
    out = mem.sessions.compress_history([
        {"role": "user", "content": long_q},
        {"role": "assistant", "content": answer},
        {"role": "assistant", "content": answer, "summary": "Reassign the approver."},
        {"role": "user", "content": "short"}])
    assert out[0]["content"].startswith(long_q[:40]) and out[0]["content"].endswith(
        f"…[{len(long_q) - 40} characters cut]")
    assert out[1]["content"] == "The review is stuck because the approver left."
    assert out[2]["content"] == "Reassign the approver."
    assert out[3]["content"] == "short"
    mem.sessions.save("s1", [{"role": "assistant", "content": answer}], summary="Reassign.")
    mem.sessions.save("s1", [{"role": "assistant", "content": answer}])
    loaded = mem.sessions.load_session("s1")
    assert [t["content"] for t in loaded] == [answer, answer]
    assert [m["content"] for m in mem.sessions.compress_history(loaded)] == [
        "Reassign.", "The review is stuck because the approver left."]


def test_answer_summary_by_the_llm_and_its_fallback(home, embedder, clock) -> None:
    client = mock_llm

    def good(request: httpx.Request) -> httpx.Response:
        assert "Summarise" in json.loads(request.content)["messages"][0]["content"]
        return httpx.Response(200, json={"choices": [{"message": {
            "content": '{"summary": "Reset it in Settings."}'}}]})

    with Memory(home=home, embedder=embedder, clock=clock, llm=client(good)) as mem:
        assert mem.sessions.summarise("Go to Settings. Then Security.") == "Reset it in Settings."
    with Memory(home=home, embedder=embedder, clock=clock,
                llm=client(lambda r: httpx.Response(500))) as mem:
        assert mem.sessions.summarise("Go to Settings. Then Security.") == \
            "Go to Settings. Then Security."


def test_history_settings_from_the_environment(monkeypatch, tmp_path) -> None:
    from varvemem import ConfigError, Settings

    monkeypatch.setenv("VARVEMEM_HISTORY__SLIM_CHARS", "123")
    assert Settings.load(home=tmp_path).history.slim_chars == 123
    monkeypatch.setenv("VARVEMEM_HISTORY__SLIM_CHARS", "5")
    with pytest.raises(ConfigError, match=r"history\.slim_chars"):
        Settings.load(home=tmp_path)


WRITER = """
import sys
from datetime import datetime, timezone
from pathlib import Path
from varvemem.stores.session_log import SessionLog, Turn
log = SessionLog(Path(sys.argv[1]))
for j in range(40):
    log.append("default", "shared", [Turn(datetime.now(timezone.utc), "user",
                                          f"{sys.argv[2]}-{j}\\n<!-- varvemem summary -->")])
"""


def test_processes_appending_to_one_new_session_never_interleave(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    import varvemem

    src = str(Path(varvemem.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), f"w{i}"], env=env)
             for i in range(6)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    text = (tmp_path / "shared.md").read_text("utf-8")
    assert text.count("# Session shared") == 1
    got = [t.content for t in SessionLog(tmp_path).load("default", "shared")]
    assert sorted(got) == sorted(f"w{i}-{j}\n<!-- varvemem summary -->" for i in range(6)
                                 for j in range(40))
