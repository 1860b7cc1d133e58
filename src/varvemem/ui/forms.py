"""Form fields read as the library's arguments; a bad one is a :class:`ValidationError` naming
it (the page shows the line, status 422)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from ..errors import ValidationError

FLAGS = ("include_superseded", "include_archive")
TEXTS = ("user", "agent", "session", "profile")
TIMES = ("since", "until", "as_of")


def text(form: Mapping[str, str], name: str) -> str | None:
    value = (form.get(name) or "").strip()
    return value or None


def number(form: Mapping[str, str], name: str, *, whole: bool = False) -> float | int | None:
    raw = text(form, name)
    if raw is None:
        return None
    try:
        return int(raw) if whole else float(raw)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise ValidationError(f"{name}: {raw!r} is not {kind}") from None


def when(form: Mapping[str, str], name: str) -> datetime | None:
    """A date or date and time (``YYYY-MM-DD``, ``YYYY-MM-DDTHH:MM``, ISO 8601), UTC when
    it names no zone."""
    raw = text(form, name)
    if raw is None:
        return None
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(f"{name}: {raw!r} is not a date (YYYY-MM-DD or "
                              "YYYY-MM-DDTHH:MM)") from None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def listed(values: Sequence[str]) -> list[str]:
    """Values given as repeated fields or comma-separated."""
    return [v.strip() for raw in values for v in raw.split(",") if v.strip()]


def search_filters(params: Mapping[str, str], multi: Mapping[str, Sequence[str]]
                   ) -> dict[str, Any]:
    """``Memory.search``'s keyword arguments from a search form (only those given)."""
    out: dict[str, Any] = {}
    top_k = number(params, "top_k", whole=True)
    if top_k is not None:
        out["top_k"] = top_k
    types = listed(multi.get("type", []))
    if types:  # checked by Memory.search itself: the page shows the API's own message
        out["type"] = types
    tiers = listed(multi.get("tier", []))
    if tiers:
        out["tier"] = tiers
    tags = listed(multi.get("tags", []))
    if tags:
        out["tags"] = tags
    for name in TEXTS:
        value = text(params, name)
        if value is not None:
            out[name] = value
    for name in TIMES:
        moment = when(params, name)
        if moment is not None:
            out[name] = moment
    for name in FLAGS:
        if params.get(name) in ("on", "1", "true"):
            out[name] = True
    return out


def form_values(params: Mapping[str, str], multi: Mapping[str, Sequence[str]]
                ) -> dict[str, Any]:
    """The form's fields as typed (to fill the form again)."""
    out: dict[str, Any] = {k: params.get(k, "") for k in ("q", "memory", "top_k", *TEXTS,
                                                           *TIMES)}
    out.update({k: params.get(k) in ("on", "1", "true") for k in FLAGS})
    out["type"], out["tier"] = listed(multi.get("type", [])), listed(multi.get("tier", []))
    out["tags"] = ", ".join(listed(multi.get("tags", [])))
    return out
