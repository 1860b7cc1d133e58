"""The deterministic local defaults of the update engine: classification, scoring, update cues.

Each has an LLM counterpart in :mod:`varvemem.engines.update`; these run when no LLM is
configured, or when it fails.
"""

from __future__ import annotations

import re

from ..language.lexicon import alternation
from ..model import Draft, MemoryType, normalise_tags
from ..settings import UpdateSettings
from ..text import analyse, identifiers
from .importance import signals as content_signals
from .importance import weigh

UPDATE_CUE = re.compile(alternation("update_cue"), re.IGNORECASE)


def classify(draft: Draft, cfg: UpdateSettings) -> tuple[MemoryType, list[str]]:
    """Type (explicit, else dialogue in a session, else knowledge) and tags.

    Tags: the draft's own, the speaker of a dialogue turn (``update.speaker_keys`` in its
    metadata), then vocabulary tags whose trigger words occur, then hyphenated identifiers
    such as service names (``microservice-order``).
    """
    if draft.memory_type is not None:
        mtype = draft.memory_type
    else:
        mtype = MemoryType.DIALOGUE if draft.scope.session else MemoryType.KNOWLEDGE
    tokens = set(analyse(draft.content))
    lowered = draft.content.lower()
    tags = list(draft.tags)
    if mtype is MemoryType.DIALOGUE:
        # Who said it: a question naming a person then matches that person's turns.
        tags.extend(v for k in cfg.speaker_keys if isinstance(v := draft.metadata.get(k), str))
    for tag, triggers in cfg.tag_vocabulary.items():
        if any((t in tokens) if t.isalnum() else (t in lowered) for t in triggers):
            tags.append(tag)
    tags.extend(identifiers(draft.content))
    return mtype, normalise_tags(tags)[:12]


def importance(content: str, base: float, cfg: UpdateSettings) -> tuple[float, list[str]]:
    """``base`` (the type's, ``types.<type>.importance``) plus the weight of each content
    signal it shows (:mod:`.importance`, weights ``update.importance_signals``), in 0.05..1;
    returns the signals seen."""
    seen = content_signals(content)
    return weigh(base, seen, cfg.importance_signals), list(seen)


def reliability(source: str, cfg: UpdateSettings) -> float:
    """``source_reliability`` from the table, by the part of ``source`` before the first ``:``."""
    kind = source.split(":", 1)[0].strip().lower()
    table = cfg.reliability_by_source
    return table.get(kind, table.get("default", 0.6))


def is_update(new_content: str) -> bool:
    """Does the text announce that it changes something said before?"""
    return bool(UPDATE_CUE.search(new_content))
