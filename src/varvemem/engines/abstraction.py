"""Abstraction (SPEC UPD-3): related important memories become one reusable experience.

The local default is extractive: it keeps the sentences that state the problem, the fix and the
outcome, and the entities (services, tools, tags) the sources name. With an LLM configured the
same group is summarised by the OpenAI-compatible client instead (:func:`llm_abstract`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ..llm import ChatClient
from ..model import MemoryRecord
from ..text import analyse, identifiers
from .rules import SIGNALS

# Sentence ends in English and Chinese, and line breaks (not ";": a cause and its fix often
# share one sentence).
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")
OUTCOME = re.compile(
    r"\b(works?|worked|working|succeed(ed|s)?|success(ful(ly)?)?|passed|green|recovered|"
    r"back to normal|healthy|resolved|deployed)\b|成功|恢复|通过|正常|已解决", re.I)
_ROLES = (("problem", SIGNALS["failure"][1]), ("fix", SIGNALS["fix"][1]), ("outcome", OUTCOME))
# A sentence its author labelled ("Fix: ...") is their own summary of that part: it wins.
_LABELS = {
    "problem": re.compile(r"^\W*(problem|error|issue|symptom|root cause|问题|错误|原因)\s*[:：]",
                          re.I),
    "fix": re.compile(r"^\W*(fix|solution|workaround|resolution|修复|解决办法|解决)\s*[:：]", re.I),
    "outcome": re.compile(r"^\W*(outcome|result|结果)\s*[:：]", re.I),
}


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, without empty ones."""
    return [s.strip(" -*\t") for s in _SENTENCE_END.split(text) if s and s.strip(" -*\t")]


def extractive(records: Sequence[MemoryRecord], max_chars: int) -> str:
    """One experience from ``records``: the problem, fix and outcome sentences (the most
    important source first), or the most representative sentence when none is marked, and the
    entities named. Deterministic: the same sources give the same text."""
    ordered = sorted(records, key=lambda r: (-r.importance, r.created_at, r.memory_id))
    candidates = [s for r in ordered for s in sentences(r.content)] or \
        [r.content.strip() for r in ordered]
    chosen: dict[str, str] = {}
    for role, pattern in _ROLES:
        matching = [s for s in candidates if pattern.search(s) and s not in chosen.values()]
        if matching:
            chosen[role] = min(matching, key=lambda s: (not _LABELS[role].search(s),
                                                        matching.index(s)))
            chosen[role] = _LABELS[role].sub("", chosen[role]).strip() or chosen[role]
    if not chosen:  # nothing marked: the sentence sharing most words with the whole group
        freq = Counter(t for r in ordered for t in set(analyse(r.content)))
        chosen["summary"] = max(candidates, key=lambda s: sum(freq[t] for t in set(analyse(s))))
    entities = list(dict.fromkeys(
        [e for r in ordered for e in identifiers(r.content)] + [t for r in ordered for t in r.tags]))
    first = min(r.created_at for r in records).date()
    last = max(r.created_at for r in records).date()
    span = f"{first}" if first == last else f"{first} to {last}"
    noun = "memory" if len(records) == 1 else "memories"
    parts = [f"Experience from {len(records)} {noun} ({span})."]
    labels = {"problem": "Problem", "fix": "Fix", "outcome": "Outcome", "summary": "Summary"}
    parts += [f"{labels[k]}: {_clip(v, max_chars // 3)}" for k, v in chosen.items()]
    if entities:
        parts.append("Entities: " + ", ".join(entities[:10]) + ".")
    return _clip(" ".join(parts), max_chars)


def llm_abstract(llm: ChatClient, records: Sequence[MemoryRecord], max_chars: int) -> str:
    """The same abstraction by the chat model; raises :class:`~varvemem.errors.LLMError`."""
    sources = "\n".join(f"- ({r.created_at.date()}, {r.memory_type.value}) {r.content}"
                        for r in records)
    data = llm.complete_json(
        "You turn an agent's related memories into one reusable lesson for the future: the "
        "problem, the fix, the outcome, and the services, tools and people involved. Keep "
        "names, commands and error messages exactly as written. Do not invent anything. "
        'Reply as {"experience": "<the lesson, at most ' + str(max_chars) + ' characters>"}.',
        sources)
    text = data.get("experience")
    if not isinstance(text, str) or not text.strip():
        from ..errors import LLMError

        raise LLMError("chat endpoint gave no experience text")
    return _clip(text.strip(), max_chars)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(1, limit - 1)].rstrip() + "…"
