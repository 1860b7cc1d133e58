"""The limits surfaces publish (top_k's cap), and a context that packs only hits with evidence
of their own: one relevant memory does not bring the unrelated ones into the prompt."""

from __future__ import annotations

import pytest

from varvemem import Memory
from varvemem.errors import ValidationError
from varvemem.settings import TOP_K_MAX, ContextSettings, RetrievalSettings

FACTS = [
    "Line coverage on changed code must be at least 80% in the test stage",
    "Alice prefers dark mode in every editor",
    "Backups run nightly at 02:00 UTC",
    "The billing service is owned by team Falcon",
    "Staging runs on the eks-stg-2 cluster",
]


def test_top_k_is_capped_where_the_settings_cap_it(mem: Memory) -> None:
    mem.add(FACTS[2])
    fields = RetrievalSettings.model_fields["top_k"].metadata
    assert any(getattr(m, "le", None) == TOP_K_MAX for m in fields)
    assert any(getattr(m, "le", None) == TOP_K_MAX
               for m in ContextSettings.model_fields["top_k"].metadata)
    assert mem.search("when do backups run?", top_k=TOP_K_MAX)
    with pytest.raises(ValidationError, match=f"top_k 1000000000 is over the limit of "
                                              f"{TOP_K_MAX}"):
        mem.search("when do backups run?", top_k=1_000_000_000)
    with pytest.raises(ValidationError, match="over the limit"):
        mem.context("when do backups run?", top_k=TOP_K_MAX + 1)


def test_context_packs_only_hits_over_the_floor(mem: Memory) -> None:
    for fact in FACTS:
        mem.add(fact)
    floor = mem._engines.retrieval.relevance_floor()
    assert floor > 0
    hits = mem.search("test coverage gate", min_relevance=0.0)
    # Uncut, search ranks everything it found once one hit has evidence ...
    assert any((h.scores.evidence or 0) >= floor for h in hits)
    below = [h.memory.content for h in hits if (h.scores.evidence or 0) < floor]
    assert below
    # ... the context (the search as it cuts by default) leaves out what has none of its own.
    text = mem.context("test coverage gate", max_tokens=2000)
    assert "Line coverage" in text
    assert not any(content in text for content in below)


def test_context_of_a_query_nothing_matches_is_empty(mem: Memory) -> None:
    for fact in FACTS:
        mem.add(fact)
    for query in ("xyzzy plugh frobnicate", "purple elephant dancing", "紫色的大象在跳舞"):
        assert mem.context(query) == ""
