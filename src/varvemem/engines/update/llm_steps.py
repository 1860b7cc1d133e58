"""The LLM's steps of the write path (``llm.steps``): classify, score and, with no learned
judge, supersede. Each raises or falls back to the rules' answer as it says."""

from __future__ import annotations

import logging

from ...errors import LLMError
from ...llm import ChatClient
from ...model import Draft, MemoryRecord, MemoryType, normalise_tags

log = logging.getLogger("varvemem.llm")  # the LLM steps' fallbacks


def llm_classify(llm: ChatClient | None, d: Draft, mtype: MemoryType,
                 tags: list[str]) -> tuple[MemoryType, list[str], str]:
    assert llm is not None
    try:
        data = llm.complete_json(
            "Classify an agent memory. memory_type is one of: "
            + ", ".join(t.value for t in MemoryType)
            + '. Return {"memory_type": ..., "tags": [up to 6 short lower-case tags]}.',
            d.content)
        llm_type = MemoryType(str(data["memory_type"]))
        llm_tags = [str(t) for t in data.get("tags", [])][:6]
        return llm_type, normalise_tags(list(d.tags) + llm_tags + tags)[:12], "llm"
    except (LLMError, KeyError, ValueError, TypeError) as exc:
        log.warning("classify falls back to the rules: %s", exc)
        return mtype, tags, f"rules (llm failed: {exc})"


def llm_score(llm: ChatClient | None, content: str, fallback: float, rule_path: str) -> tuple[float, str]:
    assert llm is not None
    try:
        data = llm.complete_json(
            "Rate how important this memory is for a DevOps/agent assistant to keep, from 0 "
            '(trivia) to 1 (critical fix, decision or rule). Return {"importance": x}.',
            content)
        value = float(data["importance"])
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"importance {value} out of range")
        return value, "llm"
    except (LLMError, KeyError, ValueError, TypeError) as exc:
        log.warning("score falls back to the rules: %s", exc)
        return fallback, f"{rule_path}; llm failed: {exc}"


def llm_supersede(llm: ChatClient | None, rec: MemoryRecord,
                  candidates: list[tuple[MemoryRecord, float]]) -> dict[str, str]:
    assert llm is not None
    listing = "\n".join(f"{i}. {r.content}" for i, (r, _) in enumerate(candidates))
    data = llm.complete_json(
        "Which OLD statements does the NEW statement update, correct or contradict (same "
        'subject, newer truth)? Return {"superseded": [indexes], "reason": "..."}.',
        f"NEW: {rec.content}\nOLD:\n{listing}")
    try:
        picks = [int(i) for i in data.get("superseded", [])]
    except (TypeError, ValueError):
        raise LLMError("superseded must be a list of indexes") from None
    reason = str(data.get("reason") or "updated by a newer statement (llm)")
    return {candidates[i][0].memory_id: reason for i in picks if 0 <= i < len(candidates)}

