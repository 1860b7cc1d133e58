"""The table of memory types (model.TYPES): every type has one row, and what the engines ask
of a type is read there."""

from __future__ import annotations

from varvemem.model import TYPES, MemoryType, types_where


def test_every_memory_type_has_a_row_of_traits() -> None:
    assert set(TYPES) == set(MemoryType)


def test_the_traits_say_what_each_kind_of_memory_is() -> None:
    # Talk and tool calls are the session's window; what varvemem derives is erased with its
    # sources; a Q&A pair states no fact a newer memory changes, and tells no episode.
    assert types_where(lambda t: t.session_window) == (MemoryType.DIALOGUE, MemoryType.TOOL_CALL)
    assert set(types_where(lambda t: t.derived)) == {MemoryType.EXPERIENCE, MemoryType.QA}
    assert not TYPES[MemoryType.QA].states_facts and not TYPES[MemoryType.QA].episode
    assert set(types_where(lambda t: t.statement)) <= set(types_where(lambda t: t.states_facts))
    assert set(types_where(lambda t: t.statement)) <= set(types_where(lambda t: t.written))
