"""A mock OpenAI-compatible chat endpoint that reads what it is sent.

:class:`ChatServer` stands behind a real :class:`~varvemem.llm.ChatClient` (an
``httpx.MockTransport``, so the client's request building, JSON parsing and error handling all
run). Each request is dispatched on *which task it asks* (the system prompt of each LLM step of
varvemem), parsed into the fields that task's prompt carries (the memory to classify or score;
the NEW statement and the numbered OLD candidates of a supersede; the sources of an
abstraction; the context and question of an answer; the text to summarise), recorded as a
:class:`Call`, and answered by the test's own responder for that task.

A task the test gave no responder for is a failure, not a default answer: a test states every
LLM step it expects, and an unexpected one (or a malformed request) raises
``AssertionError`` inside the request, which no fallback of the product catches. Responders
should answer values no local rule or default produces (an importance of 0.83, not 0.5) so the
test can tell the LLM's answer from a silent fallback.

``wrap`` is how JSON answers come back: ``plain`` (the object alone), ``prose`` (inside a
sentence) or ``fence`` (a Markdown code fence after a sentence), as servers that ignore the
request for one JSON object answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from varvemem.llm import ChatClient
from varvemem.settings import LLMSettings, Settings

# The first words of each step's system prompt (src/varvemem/engines/update.py, abstraction.py,
# faq.py, faq_confidence.py, history.py).
TASKS: dict[str, str] = {
    "classify": "Classify an agent memory.",
    "score": "Rate how important this memory is",
    "supersede": "Which OLD statements does the NEW statement update",
    "judge_pairs": "You compare a NEW statement with OLD statements",
    "abstract": "You turn an agent's related memories into one reusable lesson",
    "answer": "You answer a user's question for a support assistant.",
    "summarise": "Summarise this answer of a support assistant",
    "same_question": "You decide whether one stored answer can serve two questions.",
}
JSON_TASKS = frozenset(TASKS) - {"answer", "same_question"}
JSON_SUFFIX = "\nAnswer with one JSON object only."
MODEL = "mock-model"


@dataclass
class Call:
    """One request: its task, the prompts as sent, the parsed fields and the reply given."""

    task: str
    system: str
    user: str
    fields: dict[str, Any] = field(default_factory=dict)
    reply: str = ""


Responder = Callable[[Call], Any]


def _numbered(lines: list[str]) -> list[str]:
    """``0. a`` / ``1. b`` ... (an item may run over several lines) -> ``[a, b, ...]``."""
    items: list[str] = []
    for line in lines:
        if line.startswith(f"{len(items)}. "):
            items.append(line[len(f"{len(items)}. "):])
        else:
            assert items, f"the OLD list does not start at 0: {line!r}"
            items[-1] += "\n" + line
    return items


_SOURCE = re.compile(r"^- \((\d{4}-\d\d-\d\d), (\w+)\) (.*)$")


def parse(task: str, system: str, user: str) -> dict[str, Any]:
    """The fields of one task's prompt; asserts the prompt has the shape the task needs."""
    if task in ("classify", "score"):
        assert user.strip(), f"{task}: no memory text sent"
        return {"content": user}
    if task in ("supersede", "judge_pairs"):
        head, sep, rest = user.partition("\nOLD:\n")
        assert sep and head.startswith("NEW: "), f"supersede prompt malformed: {user!r}"
        old = _numbered(rest.split("\n"))
        assert old, "supersede asked without candidates"
        return {"new": head[len("NEW: "):], "old": old}
    if task == "abstract":
        sources: list[dict[str, str]] = []
        for line in user.split("\n"):
            m = _SOURCE.match(line)
            if m:
                sources.append({"date": m[1], "type": m[2], "content": m[3]})
            else:
                assert sources, f"abstraction sources malformed: {line!r}"
                sources[-1]["content"] += "\n" + line
        limit = re.search(r"at most (\d+) characters", system)
        assert sources and limit, "abstraction asked without sources or a length"
        return {"sources": sources, "max_chars": int(limit[1])}
    if task == "answer":
        context, sep, question = user.rpartition("\n\nQuestion: ")
        assert sep and question.strip(), f"answer prompt without a question: {user!r}"
        return {"context": context, "question": question}
    if task == "same_question":
        stored, sep, asked = user.partition("\nQuestion B: ")
        assert sep and stored.startswith("Question A: "), f"pair prompt malformed: {user!r}"
        return {"stored": stored[len("Question A: "):], "asked": asked}
    if task == "summarise":
        limit = re.search(r"at most (\d+) characters", system)
        assert limit and user.strip(), "summary asked without a text or a length"
        return {"text": user, "max_chars": int(limit[1])}
    raise AssertionError(task)


def task_of(system: str) -> str:
    found = [t for t, start in TASKS.items() if system.startswith(start)]
    assert len(found) == 1, f"a prompt of no known task: {system[:80]!r}"
    return found[0]


def wrap_json(obj: Any, how: str) -> str:
    text = json.dumps(obj, ensure_ascii=False)
    if how == "plain":
        return text
    if how == "prose":
        return f"Sure, here it is: {text} Let me know if you need anything else."
    if how == "fence":
        return f"Here is the JSON you asked for:\n```json\n{json.dumps(obj, indent=2)}\n```\n"
    raise ValueError(how)


class ChatServer:
    """The endpoint; ``responders`` map a task name to ``Call -> reply`` (a dict for the JSON
    tasks, text for ``answer``; an ``httpx.Response`` is sent as it is). ``before`` runs first
    on every request (e.g. to check no store lock is held)."""

    def __init__(self, *, wrap: str = "plain", before: Callable[[], None] | None = None,
                 **responders: Responder) -> None:
        unknown = set(responders) - set(TASKS)
        assert not unknown, f"no such task: {unknown}"
        self.responders = responders
        self.wrap = wrap
        self.before = before
        self.calls: list[Call] = []

    # -- what was asked ----------------------------------------------------------------------
    @property
    def tasks(self) -> list[str]:
        """The task of each request, in order."""
        return [c.task for c in self.calls]

    def of(self, task: str) -> list[Call]:
        return [c for c in self.calls if c.task == task]

    def one(self, task: str) -> Call:
        calls = self.of(task)
        assert len(calls) == 1, f"{len(calls)} {task} calls: {self.tasks}"
        return calls[0]

    # -- the endpoint ------------------------------------------------------------------------
    def client(self, **settings: Any) -> ChatClient:
        """A chat client talking to this server (no waiting between retries)."""
        cfg = LLMSettings(enabled=True, url="http://llm.test/v1", model=MODEL, **settings)
        return ChatClient(cfg, transport=httpx.MockTransport(self.handle), sleep=lambda _: None)

    def handle(self, request: httpx.Request) -> httpx.Response:
        assert request.method == "POST" and request.url.path == "/v1/chat/completions", \
            request.url
        body = json.loads(request.content)
        assert body["model"] == MODEL and body["temperature"] == 0, body
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["system", "user"], roles
        system, user = (m["content"] for m in body["messages"])
        task = task_of(system)
        if task in JSON_TASKS:
            assert system.endswith(JSON_SUFFIX), f"{task} does not ask for JSON"
            system = system[: -len(JSON_SUFFIX)]
        call = Call(task, system, user, parse(task, system, user))
        self.calls.append(call)
        if self.before is not None:
            self.before()
        responder = self.responders.get(task)
        assert responder is not None, f"unexpected {task} request (asked so far: {self.tasks})"
        out = responder(call)
        if isinstance(out, httpx.Response):
            call.reply = f"HTTP {out.status_code}"
            return out
        call.reply = out if isinstance(out, str) else wrap_json(out, self.wrap)
        return httpx.Response(200, json={"choices": [{"message": {"content": call.reply}}]})


# -- responders the tests share --------------------------------------------------------------
def supersede_the(old: str, reason: str = "the mock: a newer statement") -> Responder:
    """Supersede the one candidate whose text holds ``old`` (asserted present, once), whatever
    its place in the list."""

    def respond(call: Call) -> dict[str, Any]:
        hits = [i for i, c in enumerate(call.fields["old"]) if old in c]
        assert len(hits) == 1, f"{old!r} is not exactly one of the candidates " \
                               f"{call.fields['old']}"
        return {"superseded": hits, "reason": reason}

    return respond


def supersede_none(call: Call) -> dict[str, Any]:
    return {"superseded": [], "reason": "nothing updated"}


def importance(value: float) -> Responder:
    return lambda call: {"importance": value}


def status(code: int, text: str = "") -> Responder:
    return lambda call: httpx.Response(code, text=text)


def llm_alone(home: Any) -> Settings:
    """Settings in ``home`` where the LLM alone judges supersession (the learned judge off,
    ``update.judge = "rules"``); with the judge on, the LLM decides only the pairs the judge
    is unsure of (tests/engines/test_judge.py)."""
    return Settings.load(home=home, update={"judge": "rules"})
