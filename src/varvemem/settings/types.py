"""What each memory type starts with (``types.<type>``): its base importance, the tier a new
memory of it enters and how it expires. The defaults are :data:`varvemem.model.TYPES`'s (TTL:
none); a key set here overrides the type's default, the others keep it."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..model import TYPES, MemoryType, Tier, TTLMode
from .base import Section


class TTLRule(Section):
    mode: TTLMode = TTLMode.OFF
    days: float | None = Field(None, gt=0)
    rate: float = Field(0.05, gt=0)


class TypeSettings(Section):
    """``importance``: the base importance of the type's memories, before the signals their
    text shows (``update.importance_signals``). ``tier``: the tier a new one enters (outside
    a running session's window). ``ttl``: how it expires (``mode`` off, soft or hard,
    ``days``, and a soft TTL's ``rate``)."""

    importance: float = Field(ge=0.0, le=1.0)
    tier: Tier
    ttl: TTLRule = Field(default_factory=TTLRule)


def type_defaults() -> dict[MemoryType, TypeSettings]:
    return {t: TypeSettings(importance=traits.importance, tier=traits.tier)
            for t, traits in TYPES.items()}


def over_defaults(v: Any) -> Any:
    """``types`` as given (a file or variable may name some types and keys) over the
    defaults: each type keeps the keys it is not given."""
    if not isinstance(v, dict):
        return v
    out: dict[Any, Any] = {t.value: d.model_dump() for t, d in type_defaults().items()}
    for name, given in v.items():
        key = getattr(name, "value", name)
        if isinstance(given, TypeSettings):
            given = given.model_dump()
        out[key] = {**out[key], **given} if key in out and isinstance(given, dict) else given
    return out

