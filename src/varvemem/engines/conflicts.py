"""Read-time conflict resolution: two current hits that state the same claim with different
values (see :func:`.claims.same_claim`) are never both served as current.

The write path supersedes such statements when it sees them (``update.supersede_rules``);
this catches the pairs it missed (rules switched off, statements written before the rules,
or one outside the candidates it read). The newer statement ranks first (the older's score
drops to the newer's), the older is marked likely superseded in its score breakdown
(``ScoreBreakdown.conflict``), with the reason; nothing is written.
Settings: ``conflicts`` (:class:`varvemem.settings.ConflictSettings`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..language.records import other_record
from ..model import TYPES, MemoryType, SearchHit
from ..settings import ConflictSettings
from . import claims, statements

if TYPE_CHECKING:  # reading records loads no numpy
    from .judge import Verdict


def candidates(hits: Sequence[SearchHit], cfg: ConflictSettings) -> list[str]:
    """The ids of the hits :func:`resolve` compares: those whose stored statements it reads."""
    if not cfg.enabled:
        return []
    return [h.memory.memory_id for h in hits[: cfg.window] if _fact(h)]


def _fact(h: SearchHit) -> bool:
    m = h.memory
    return m.valid_to is None and m.superseded_by is None and TYPES[m.memory_type].states_facts \
        and h.channels != ["archive"]


def pairs(hits: Sequence[SearchHit], cfg: ConflictSettings) -> list[tuple[SearchHit, SearchHit]]:
    """The (newer, older) pairs of current facts among the first ``window`` hits that
    :func:`resolve` may find in conflict: of one tenant and user, not written at once."""
    window = [h for h in hits[: cfg.window] if _fact(h)] if cfg.enabled else []
    out = []
    for i, a in enumerate(window):
        for b in window[i + 1:]:
            if a.memory.scope.tenant != b.memory.scope.tenant \
                    or a.memory.scope.user != b.memory.scope.user \
                    or a.memory.created_at == b.memory.created_at:
                continue
            out.append((a, b) if a.memory.created_at > b.memory.created_at else (b, a))
    return out


def resolve(hits: Sequence[SearchHit], cfg: ConflictSettings,
            lex: claims.Lexicon | None = None,
            stored: Mapping[str, bytes] | None = None,
            verdicts: Mapping[tuple[str, str], Verdict] | None = None,
            read: float = 1.0, after: dict[str, str] | None = None) -> list[SearchHit]:
    """``hits`` with each conflicting older hit marked, its score lowered to its newer one's
    (its breakdown's ``ceiling``) and placed right after it (the order stays by score).
    ``stored``: the hits' stored statements by id (``Memories.statements``); a hit without
    one is parsed. ``verdicts``: the learned judge's, by (newer id, older id): at ``read``
    or above the older is marked, at ``cfg.judge_order`` or above it only goes after the
    newer. ``after``, when given, receives the id of each hit put after a newer one, with
    the newer one's."""
    out = list(hits)
    if not cfg.enabled:
        return out
    lex = lex or claims.lexicon()
    stored = stored or {}
    said = {h.memory.memory_id: statements.read(h.memory.content,
                                                 stored.get(h.memory.memory_id), lex,
                                                 cfg.subject_span)
            for h in out[: cfg.window] if _fact(h)}
    window = [h for h in out[: cfg.window]
              if h.memory.memory_id in said and not said[h.memory.memory_id].question]
    behind: set[str] = set()  # hits that go after a newer one they tie with
    for i, a in enumerate(window):
        for b in window[i + 1:]:
            if a.memory.scope.tenant != b.memory.scope.tenant \
                    or a.memory.scope.user != b.memory.scope.user:
                continue
            new, old = (a, b) if a.memory.created_at >= b.memory.created_at else (b, a)
            if new.memory.created_at == old.memory.created_at or old.scores.conflict:
                continue
            if new.memory.memory_id in old.memory.metadata.get("distinct_from", ()):
                continue  # a supersession of the two was undone: two claims
            why = claims.statement_supersedes(
                said[new.memory.memory_id], said[old.memory.memory_id],
                frame_overlap=cfg.frame_overlap, min_words=cfg.min_words,
                subject_overlap=cfg.subject_overlap,
                old_is_event=old.memory.memory_type is MemoryType.EVENT)
            verdict = (verdicts or {}).get((new.memory.memory_id, old.memory.memory_id))
            if verdict is not None and verdict.veto is not None:
                continue  # two records: no rule marks one the other's replacement
            if verdict is not None:
                if why is None and verdict.p >= read:
                    why = f"judged an update ({verdict.reason()})"
                elif why is None and verdict.p >= cfg.judge_order:
                    _cap(old, new.score)  # the newer first, unmarked
                    behind.add(old.memory.memory_id)
                    if after is not None:
                        after[old.memory.memory_id] = new.memory.memory_id
            if why is None or ((verdict is None or verdict.veto is None) and other_record(
                    new.memory.content, old.memory.content, True) is not None):
                continue  # nothing found, or two records the judge did not look at
            said_on = new.memory.created_at.date().isoformat()
            old.scores.conflict = f"likely superseded by {new.memory.memory_id} " \
                                  f"(said {said_on}): {why}"
            # The older ranks no higher than the newer: it goes right after it.
            _cap(old, new.score)
            behind.add(old.memory.memory_id)
            if after is not None:
                after[old.memory.memory_id] = new.memory.memory_id
    # Stable: ties keep their order, a hit put behind after the one that outranks it.
    out.sort(key=lambda h: (-h.score, h.memory.memory_id in behind))
    return out


def _cap(old: SearchHit, score: float) -> None:
    """``old`` scores no higher than ``score`` (a newer hit's): its breakdown's ceiling."""
    old.scores.ceiling = score if old.scores.ceiling is None else min(old.scores.ceiling, score)
    old.score = min(old.score, score)
