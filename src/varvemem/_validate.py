"""Argument checks shared by the library API and its namespaces: each raises
:class:`~varvemem.errors.ValidationError` with a one-line message."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from .errors import ValidationError
from .settings import Settings


def enum_of(cls: type, value: Any, what: str) -> Any:
    """``value`` as a member of the enum ``cls`` (None stays None)."""
    if value is None or isinstance(value, cls):
        return value
    try:
        return cls(str(value))
    except ValueError:
        known = ", ".join(m.value for m in cls)  # type: ignore[attr-defined]
        raise ValidationError(f"unknown {what} {value!r} (known: {known})") from None


def enums_of(cls: type, values: Any, what: str) -> list[Any] | None:
    """One value or several as members of ``cls`` (None stays None)."""
    if values is None:
        return None
    if isinstance(values, (str, cls)):
        values = [values]
    return [enum_of(cls, v, what) for v in values]


def utc(value: datetime | None, name: str) -> datetime | None:
    """Aware datetimes in UTC; a naive one is taken to be UTC already."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise ValidationError(f"{name} must be a datetime")
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else \
        value.astimezone(timezone.utc)


def text(value: Any, what: str) -> str:
    """Non-empty text, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} must be non-empty text")
    return value.strip()


def unit_score(value: Any) -> float:
    """A Q&A pair's score: a number in 0..1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValidationError(f"score {value!r} is not a number in 0..1")
    return float(value)


def query(settings: Settings, value: Any, top_k: int | None, profile: str | None) -> None:
    """A search's query, ``top_k`` and retrieval profile."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("query is empty")
    if len(value.encode("utf-8")) > settings.update.max_content_bytes:
        raise ValidationError("query is over update.max_content_bytes")
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise ValidationError(f"top_k {top_k!r} must be a whole number of at least 1")
    if profile is not None and profile not in settings.retrieval.profiles:
        known = ", ".join(sorted(settings.retrieval.profiles))
        raise ValidationError(f"unknown retrieval profile {profile!r} (known: {known})")
