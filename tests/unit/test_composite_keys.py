"""Composite keys (tenant, session, user... as one key): distinct parts never share a key."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from varvemem.stores.composite import composite_key, split_key

# Parts made mostly of the separator and the escape character, where collisions would hide.
_PART = st.text(alphabet=st.sampled_from(["a", "b", ".", "\\", "é", ":", "|"]), max_size=6) \
    | st.text(max_size=12)
_PARTS = st.lists(_PART, min_size=1, max_size=5).map(tuple)


@given(_PARTS, _PARTS)
def test_distinct_parts_give_distinct_keys(a: tuple[str, ...], b: tuple[str, ...]) -> None:
    assert (composite_key(*a) == composite_key(*b)) == (a == b)


@given(_PARTS)
def test_split_inverts_the_key(parts: tuple[str, ...]) -> None:
    assert split_key(composite_key(*parts)) == parts


def test_plain_parts_keep_the_old_plain_join() -> None:
    """Keys stored before escaping existed (``faq.last.<tenant>.<session>``) still match."""
    assert composite_key("faq", "last", "acme", "s1") == "faq.last.acme.s1"


def test_the_tenants_of_the_issue_differ() -> None:
    assert composite_key("faq", "last", "acme.x", "y") != composite_key("faq", "last", "acme",
                                                                        "x.y")


def test_no_parts_and_bad_parts_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one part"):
        composite_key()
    with pytest.raises(TypeError, match="not text"):
        composite_key("a", 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="escape"):
        split_key("a\\")


def test_redis_answer_keys_of_different_users_and_questions_differ() -> None:
    """The shared L3 cache hashed ``user\\0question``: a user with a NUL in its name could
    read another user's answer."""
    from varvemem.stores.redis_cache import RedisAnswerCache

    cache = RedisAnswerCache(None, "vm", 60)  # type: ignore[arg-type]  # _key needs no client
    assert cache._key(("t", "a\0b", "c")) != cache._key(("t", "a", "b\0c"))
    assert cache._key(("t", "a.b", "c")) != cache._key(("t", "a", "b.c"))
