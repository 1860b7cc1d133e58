"""The input checks of issue 18: text that is not Unicode, metadata nested too deep or too big,
tags over their limits, dates whose offset leaves the range of dates. Each a ValidationError
naming the field, from the validators and through the library API."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from varvemem import Memory, Settings
from varvemem import _validate as v
from varvemem.benchmarks.reliability import nested
from varvemem.errors import ValidationError
from varvemem.model import Draft, check_metadata, check_text, in_utc

SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
LATE = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(-timedelta(hours=23, minutes=59)))
EARLY = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=23, minutes=59)))


TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
"""What every store keeps: no lone surrogate (not Unicode), no U+0000 (PostgreSQL refuses it)."""


def nested_in(bad: str) -> list[Any]:
    return [bad, [bad], {"k": bad}, {bad: 1}, {"a": [{"b": (bad,)}]}]


@given(TEXT, SURROGATES, TEXT)
def test_a_lone_surrogate_anywhere_is_refused(before: str, lone: str, after: str) -> None:
    for value in nested_in(before + lone + after):
        with pytest.raises(ValueError, match=r"^meta.*lone surrogate \(U\+D[89A-F]"):
            check_text(value, "meta")


@given(TEXT, TEXT)
def test_a_nul_anywhere_is_refused(before: str, after: str) -> None:
    for value in nested_in(before + "\x00" + after):
        with pytest.raises(ValueError, match=r"^meta.* holds U\+0000"):
            check_text(value, "meta")


@given(st.recursive(TEXT | st.integers() | st.none(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(TEXT, inner, max_size=3), max_leaves=20))
def test_valid_text_passes(value: Any) -> None:
    check_text(value, "x")


@given(st.integers(1, 400))
def test_metadata_depth_is_bounded(depth: int) -> None:
    if depth <= 32:
        check_metadata(nested(depth), 32, 64 * 1024)
    else:
        with pytest.raises(ValueError, match=r"metadata is nested over 32 levels"):
            check_metadata(nested(depth), 32, 64 * 1024)


def test_metadata_deeper_than_the_recursion_limit_is_refused_not_crashed() -> None:
    with pytest.raises(ValueError, match=r"nested over"):
        check_metadata(nested(5000), 32, 64 * 1024)


def test_metadata_size_and_json() -> None:
    with pytest.raises(ValueError, match=r"over the limit of 100 .update.metadata_max_bytes"):
        check_metadata({"k": "x" * 200}, 32, 100)
    with pytest.raises(ValueError, match=r"JSON-serialisable"):
        check_metadata({"k": object()}, 32, 100)


@given(st.datetimes(timezones=st.timezones()))
def test_in_utc_is_utc_or_a_value_error(when: datetime) -> None:
    try:
        out = in_utc(when, "as_of")
    except ValueError as exc:
        assert str(exc).startswith("as_of ") and "range of dates" in str(exc)
    else:
        assert out.utcoffset() == timedelta(0) and out == when.astimezone(timezone.utc)


@given(st.datetimes(), st.integers(-(24 * 60 - 1), 24 * 60 - 1))
def test_utc_refuses_only_overflowing_offsets(naive: datetime, minutes: int) -> None:
    when = naive.replace(tzinfo=timezone(timedelta(minutes=minutes)))
    try:
        expected: datetime | None = when.astimezone(timezone.utc)
    except OverflowError:
        expected = None
    if expected is None:
        with pytest.raises(ValidationError, match=r"^since .* outside the range of dates"):
            v.utc(when, "since")
    else:
        assert v.utc(when, "since") == expected


@pytest.mark.parametrize("when", [LATE, EARLY])
def test_out_of_range_dates_are_validation_errors(when: datetime) -> None:
    with pytest.raises(ValidationError, match=r"as_of"):
        v.utc(when, "as_of")
    with pytest.raises(ValidationError, match=r"created_at"):
        v.draft("we ship on tuesdays", type=None, tier=None, ttl_mode=None, tags=None,
                metadata=None, supersedes=None, created_at=when)


def test_a_draft_normalises_created_at_and_checks_its_text() -> None:
    d = Draft(content="x", created_at=datetime(2024, 5, 1, 23, 30,
                                               tzinfo=timezone(timedelta(hours=-2))))
    assert d.created_at == datetime(2024, 5, 2, 1, 30, tzinfo=timezone.utc)
    assert d.created_at is not None and d.created_at.utcoffset() == timedelta(0)
    for field, value in (("content", "a\ud800"), ("tags", ["a\udc00"]), ("source", "\ud800"),
                         ("metadata", {"k\ud800": 1}), ("supersedes", ["mem_\ud800"])):
        with pytest.raises(ValueError, match=field):
            Draft(**{"content": "x", field: value})
    with pytest.raises(ValueError, match=r"nested over 128"):
        Draft(content="x", metadata=nested(129))


def test_tags_and_metadata_within_the_settings() -> None:
    s = Settings.load(update={"tags_max": 2, "tag_max_chars": 5, "metadata_max_depth": 2,
                              "metadata_max_bytes": 64})
    assert v.tags(s, [" A ", "a", "b"]) == ["a", "b"]
    with pytest.raises(ValidationError, match=r"3 tags, over the limit of 2 .update.tags_max"):
        v.tags(s, ["a", "b", "c"])
    with pytest.raises(ValidationError, match=r"update.tag_max_chars"):
        v.tags(s, ["abcdef"])
    with pytest.raises(ValidationError, match=r"^tags.*lone surrogate"):
        v.tags(s, ["\ud800"])
    assert v.metadata(s, {"a": {"b": 1}}) == {"a": {"b": 1}}
    with pytest.raises(ValidationError, match=r"^items.0..metadata is nested over 2"):
        v.metadata(s, {"a": {"b": [1]}}, "items[0].metadata")
    with pytest.raises(ValidationError, match=r"update.metadata_max_bytes"):
        v.metadata(s, {"a": "x" * 100})
    with pytest.raises(ValidationError, match=r"metadata keys must be text"):
        v.metadata(s, {1: 2})
    with pytest.raises(ValidationError, match=r"query.*lone surrogate"):
        v.query(s, "what \ud800", None, None)
    with pytest.raises(ValidationError, match=r"question.*lone surrogate"):
        v.text("why \ud800", "question")


@pytest.mark.parametrize("when", [LATE, EARLY])
def test_the_library_api_refuses_bad_input_and_stores_nothing(mem: Memory,
                                                              when: datetime) -> None:
    with pytest.raises(ValidationError, match=r"created_at"):
        mem.add("we ship on tuesdays", created_at=when)
    for field in ("as_of", "since", "until"):
        with pytest.raises(ValidationError, match=field):
            mem.search("ship", **{field: when})
    with pytest.raises(ValidationError, match=r"tags"):
        mem.add("we ship on tuesdays", tags=["ok", "\ud800"])
    with pytest.raises(ValidationError, match=r"metadata"):
        mem.add("we ship on tuesdays", metadata={"k": "\udfff"})
    with pytest.raises(ValidationError, match=r"metadata"):
        mem.add("we ship on tuesdays", metadata=nested(300))
    with pytest.raises(ValidationError, match=r"content"):
        mem.add("we ship \ud800 on tuesdays")
    with pytest.raises(ValidationError, match=r"item 0|content"):
        mem.add_many(["fine", "bad \ud800"])
    assert mem.get_all(include_superseded=True) == []


def test_the_library_update_checks_what_the_record_will_hold(mem: Memory) -> None:
    rec = mem.add("we ship on tuesdays", metadata={"team": "web"})
    with pytest.raises(ValidationError, match=r"tags"):
        mem.update(rec.memory_id, tags=["ok", "\ud800"])
    with pytest.raises(ValidationError, match=r"metadata"):
        mem.update(rec.memory_id, metadata={"deep": nested(300)})
    with pytest.raises(ValidationError, match=r"metadata_max_bytes"):
        mem.update(rec.memory_id, metadata={"big": "x" * (mem.settings.update.metadata_max_bytes)})
    assert mem.get(rec.memory_id).metadata == {"team": "web"}
    assert len(mem.history(rec.memory_id)) == 1  # nothing written: only its creation
    mem.update(rec.memory_id, tags=["release"], metadata={"owner": "ana"})
    assert mem.get(rec.memory_id).metadata == {"team": "web", "owner": "ana"}
