"""The extractive abstraction: problem, fix and outcome sentences, entities, determinism."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from varvemem.engines.abstraction import extractive, sentences
from varvemem.model import MemoryRecord, MemoryType, Tier

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)


def rec(mid: str, content: str, importance: float, days: int = 0) -> MemoryRecord:
    at = T0 + timedelta(days=days)
    return MemoryRecord(memory_id=mid, content=content, memory_type=MemoryType.EVENT,
                        tier=Tier.MID_TERM, importance=importance, created_at=at,
                        updated_at=at, valid_from=at, tags=["helm"])


def test_sentences_keep_dotted_names_and_split_chinese() -> None:
    assert sentences("Edit values.yaml now. 部署失败了。已修复！ok") == [
        "Edit values.yaml now.", "部署失败了。", "已修复！", "ok"]


def test_problem_fix_outcome_and_entities() -> None:
    recs = [rec("a", "The order-deploy pipeline failed: ImagePullBackOff on staging.", 0.8),
            rec("b", "Root cause was a missing secret. Fix: add imagePullSecrets to the "
                     "order chart. After the upgrade the deploy succeeded.", 0.75, days=1)]
    text = extractive(recs, 800)
    assert text.startswith("Experience from 2 memories (2026-03-01 to 2026-03-02).")
    assert "Problem: The order-deploy pipeline failed" in text
    assert "Fix: add imagePullSecrets to the order chart." in text  # the labelled sentence
    assert "Outcome: After the upgrade the deploy succeeded." in text
    assert "Entities: order-deploy, helm." in text


def test_unmarked_memories_give_their_most_central_sentence() -> None:
    recs = [rec("a", "Canary analysis uses the p99 latency of checkout.", 0.8),
            rec("b", "Checkout latency p99 is the canary metric.", 0.8)]
    assert "Summary: Canary analysis uses the p99 latency of checkout." in extractive(recs, 800)


@given(st.lists(st.text(min_size=1, max_size=200).filter(str.strip), min_size=1, max_size=5),
       st.integers(100, 1000))
def test_deterministic_bounded_and_never_empty(texts: list[str], limit: int) -> None:
    recs = [rec(f"m{i}", t, 0.8) for i, t in enumerate(texts)]
    out = extractive(recs, limit)
    assert out == extractive(list(reversed(recs)), limit)
    assert 0 < len(out) <= limit
