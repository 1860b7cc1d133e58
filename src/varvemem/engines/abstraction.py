"""Abstraction (SPEC UPD-3): related important memories become one reusable experience.

The local default is extractive: it keeps the sentences that state the problem, the fix and the
outcome, and the entities (services, tools, tags) the sources name. With an LLM configured the
same group is summarised by the OpenAI-compatible client instead (:func:`llm_abstract`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from ..language import segment
from ..llm import ChatClient
from ..model import MemoryRecord, MemoryType
from ..settings import ImportanceSignal
from ..text import analyse, identifiers
from .importance import sentence_signals

OUTCOME = re.compile(
    r"\b(works?|worked|working|succeed(ed|s)?|success(ful(ly)?)?|passed|green|recovered|"
    r"back to normal|healthy|resolved|deployed)\b|成功|恢复|通过|正常|已解决", re.I)
# What each part of an experience is made of (signals of :mod:`.importance`): the fix is what
# was worked out (a resolution, its cause and change, a procedure, a command, a decision, a
# rule, a description, something to remember), picked first so a sentence naming both the
# failure and its fix is the fix.
# What a fix is made of. A request to remember ("记住这个修复方法") points at a fix, it is not one.
LESSON: tuple[ImportanceSignal, ...] = ("resolution", "cause", "change", "procedure", "command",
                                        "decision", "rule", "description")
_PROBLEM: tuple[ImportanceSignal, ...] = ("failure",)
_OUTCOME: tuple[ImportanceSignal, ...] = ("confirmation",)
# A sentence its author labelled ("Fix: ...") is their own summary of that part: it wins.
_LABELS = {
    "problem": re.compile(r"^\W*(problem|error|issue|symptom|root cause|问题|错误|原因)\s*[:：]",
                          re.I),
    "fix": re.compile(r"^\W*(fix|solution|workaround|resolution|修复|解决办法|解决)\s*[:：]", re.I),
    "outcome": re.compile(r"^\W*(outcome|result|结果)\s*[:：]", re.I),
}


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (not split at ";": a cause and its fix often share one),
    without the bullets that open them."""
    return [b for s in segment.sentences(text) if (b := s.strip(" -*\t"))]


def _weight(sentence: str, names: Sequence[ImportanceSignal],
            weights: Mapping[ImportanceSignal, float] | None) -> float:
    seen = sentence_signals(sentence)
    return sum((1.0 if weights is None else weights.get(n, 0.0)) for n in names if n in seen)


def extractive(records: Sequence[MemoryRecord], max_chars: int,
               weights: Mapping[ImportanceSignal, float] | None = None) -> str:
    """One experience from ``records``: the problem, fix and outcome sentences, or the most
    representative sentence when none is marked, and the entities named. A sentence its
    author labelled ("Fix: ...") wins its part. Else the fix is the sentence with the most
    weight (``weights``, the settings' signal weights; equal without) of what was worked out,
    the most important source first on a tie; the problem is the first failure told (a
    person's words before a tool's output); the outcome the strongest confirmation.
    Deterministic: the same sources give the same text."""
    ordered = sorted(records, key=lambda r: (-r.importance, r.created_at, r.memory_id))
    candidates = [(s, r) for r in ordered for s in sentences(r.content)] or \
        [(r.content.strip(), r) for r in ordered]
    chosen: dict[str, str] = {}
    for role, names in (("fix", LESSON), ("problem", _PROBLEM), ("outcome", _OUTCOME)):
        matching = []
        for i, (s, r) in enumerate(candidates):
            w = _weight(s, names, weights)
            if role == "outcome" and OUTCOME.search(s):
                w += 1.0  # an outcome in words ("recovered", "恢复") counts, confirmed or not
            if w > 0 and s not in chosen.values():
                told = (r.memory_type is MemoryType.TOOL_CALL, r.created_at, i)
                rank = told if role == "problem" else (-w, i)
                matching.append(((not _LABELS[role].search(s), *rank), s))
        if matching:
            text = min(matching, key=lambda m: m[0])[1]
            chosen[role] = _LABELS[role].sub("", text).strip() or text
    chosen = {k: chosen[k] for k in ("problem", "fix", "outcome") if k in chosen}
    candidates_text = [s for s, _ in candidates]
    if not chosen:  # nothing marked: the sentence sharing most words with the whole group
        freq = Counter(t for r in ordered for t in set(analyse(r.content)))
        chosen["summary"] = max(candidates_text,
                                key=lambda s: sum(freq[t] for t in set(analyse(s))))
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
