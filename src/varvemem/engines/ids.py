"""Short ids: a memory named by the start of its id, like git's short hashes."""

from __future__ import annotations

from ..errors import NotFoundError, ValidationError
from ..stores.base import RecordStore

_HEX = frozenset("0123456789abcdef")
_ID_PREFIX_MIN = 6  # hex digits of a short id, as git's shortest
_ID_MATCHES = 10  # ids an ambiguous short id lists


def resolve(records: RecordStore, tenant: str, prefix: str) -> str:
    """The full id of the tenant's memory (live, archived or deleted) whose id starts with
    ``prefix``; see :meth:`varvemem.Memory.resolve_id`."""
    text = prefix.strip() if isinstance(prefix, str) else ""
    if not text:
        raise ValidationError("memory id is empty")
    digits = (text[4:] if text.lower().startswith("mem_") else text).lower()
    if not set(digits) <= _HEX:  # not an id this library makes: only itself can match
        if records.get(tenant, text) or records.archived(tenant, [text]) \
                or records.history(tenant, text):
            return text
        raise NotFoundError(f"no memory {text}")
    if len(digits) < _ID_PREFIX_MIN:
        raise ValidationError(f"memory id {text} is too short: give at least "
                              f"{_ID_PREFIX_MIN} hex digits after mem_")
    found = records.ids_with_prefix(tenant, "mem_" + digits, _ID_MATCHES + 1)
    if not found:
        raise NotFoundError(f"no memory {text}")
    if len(found) > 1:
        more = ", ..." if len(found) > _ID_MATCHES else ""
        raise ValidationError(f"memory id {text} is ambiguous: "
                              f"{', '.join(found[:_ID_MATCHES])}{more}")
    return found[0]
