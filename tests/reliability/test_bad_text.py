"""Text no store keeps (U+0000, which PostgreSQL refuses; a lone surrogate, not Unicode) in
any text argument of the library API: the same ValidationError naming the field on every
store, and nothing written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from varvemem import Memory, ValidationError

Call = Callable[[Memory, str, str], Any]  # (memory, an existing memory's id, the bad text)

CALLS: list[tuple[str, str, Call]] = [
    # (case, the field the error names, the call)
    ("add content", "content", lambda m, i, x: m.add(f"we ship {x} on tuesdays")),
    ("add user", "user", lambda m, i, x: m.add("we ship on tuesdays", user=x)),
    ("add agent", "agent", lambda m, i, x: m.add("we ship on tuesdays", agent=x)),
    ("add tenant", "tenant", lambda m, i, x: m.add("we ship on tuesdays", tenant=x)),
    ("add tags", "tags", lambda m, i, x: m.add("we ship on tuesdays", tags=["ok", x])),
    ("add metadata value", "metadata", lambda m, i, x: m.add("we ship", metadata={"k": x})),
    ("add metadata key", "metadata", lambda m, i, x: m.add("we ship", metadata={x: 1})),
    ("add source", "source", lambda m, i, x: m.add("we ship on tuesdays", source=x)),
    ("add_many item", "content", lambda m, i, x: m.add_many(["fine", f"bad {x}"])),
    ("message", "content", lambda m, i, x: m.add_messages([{"role": "user", "content": x}])),
    ("tool call", "metadata", lambda m, i, x: m.add_tool_call("grep", {"q": x}, "found")),
    ("event", "content|metadata", lambda m, i, x: m.add_event({"title": x})),
    ("document", "content", lambda m, i, x: m.ingest_text(f"# T\n\nbody {x}\n", "d.md")),
    ("document source", "source", lambda m, i, x: m.ingest_text("# T\n\nbody\n", x)),
    ("qa question", "question", lambda m, i, x: m.qa.save(f"how {x}?", "like so")),
    ("qa answer", "answer", lambda m, i, x: m.qa.save("how?", f"like {x}")),
    ("qa keywords", "keywords", lambda m, i, x: m.qa.save("how?", "so", keywords=[x])),
    ("update content", "content", lambda m, i, x: m.update(i, content=f"we ship {x}")),
    ("update tags", "tags", lambda m, i, x: m.update(i, tags=[x])),
    ("update metadata", "metadata", lambda m, i, x: m.update(i, metadata={"k": x})),
    ("update reason", "reason", lambda m, i, x: m.update(i, importance=0.9, reason=x)),
    ("feedback reason", "reason", lambda m, i, x: m.feedback(i, True, reason=x)),
    ("delete reason", "reason", lambda m, i, x: m.delete(i, reason=x)),
    ("get id", "memory id", lambda m, i, x: m.get(i + x)),
    ("history id", "memory id", lambda m, i, x: m.history(i + x)),
    ("search query", "query", lambda m, i, x: m.search(f"ship {x}")),
    ("search user", "user", lambda m, i, x: m.search("ship", user=x)),
    ("search tags", "tags", lambda m, i, x: m.search("ship", tags=[x])),
    ("get_all user", "user", lambda m, i, x: m.get_all(user=x)),
    ("session turn", "message 0", lambda m, i, x: m.sessions.save("s", [{"content": x}])),
    ("ask question", "question", lambda m, i, x: m.ask(f"when {x}?", session="s")),
    ("delete_user", "user", lambda m, i, x: m.delete_user(x)),
]


@pytest.mark.parametrize("bad", ["\x00", "\ud800"], ids=["NUL", "lone surrogate"])
@pytest.mark.parametrize("case,field,call", CALLS, ids=[c[0] for c in CALLS])
def test_text_no_store_keeps_is_refused_alike_and_nothing_is_written(
        mem_on_each_store: Memory, case: str, field: str, call: Call, bad: str) -> None:
    mem = mem_on_each_store
    rec = mem.add("The release train leaves on tuesdays")
    before = (mem.stats(), mem.history(rec.memory_id), mem.sessions.sessions())
    with pytest.raises(ValidationError, match=rf"({field}).*(U\+0000|lone surrogate|unicode)"):
        call(mem, rec.memory_id, bad)
    assert (mem.stats(), mem.history(rec.memory_id), mem.sessions.sessions()) == before
