"""What each memory type starts with (``types.<type>``): its base importance, the tier a new
memory of it enters and how it expires. The defaults are :data:`varvemem.model.TYPES`'s (TTL:
none); a key set here overrides the type's default, the others keep it."""

from __future__ import annotations

import warnings
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


# The keys ``types.<type>.*`` replaced (they load, with a warning, for one release).
OLD_KEYS = {"importance_by_type": "importance", "tier_by_type": "tier", "ttl_by_type": "ttl"}


def moved(data: Any) -> Any:
    """Settings ``data`` with the old ``update.<key>_by_type`` tables moved to ``types``
    (a key of ``types`` given too wins); a warning names each old key and its new one. An
    unknown type in an old table fails, naming both keys."""
    update = data.get("update") if isinstance(data, dict) else None
    if not isinstance(update, dict) or not OLD_KEYS.keys() & update.keys():
        return data
    update, types = dict(update), data.get("types") or {}
    types = {getattr(k, "value", k): dict(v) if isinstance(v, dict) else v
             for k, v in types.items()} if isinstance(types, dict) else types
    for old, new in OLD_KEYS.items():
        table = update.pop(old, None)
        if table is None:
            continue
        warnings.warn(f"update.{old} is now types.<type>.{new} (update.{old} is read for one "
                      "more release)", FutureWarning, stacklevel=2)
        if not isinstance(table, dict) or not isinstance(types, dict):
            raise ValueError(f"update.{old} (now types.<type>.{new}) must be a table by type")
        known = {t.value for t in MemoryType}
        unknown = sorted(str(getattr(k, "value", k)) for k in table
                         if getattr(k, "value", k) not in known)
        if unknown:
            raise ValueError(f"update.{old} (now types.<type>.{new}): unknown memory type(s) "
                             f"{unknown}; known: {sorted(known)}")
        for name, value in table.items():
            entry = types.setdefault(getattr(name, "value", name), {})
            if isinstance(entry, dict):
                entry.setdefault(new, value)
    return {**data, "update": update, "types": types}
