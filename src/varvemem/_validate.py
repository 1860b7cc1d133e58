"""Argument checks shared by the library API and its namespaces: each raises
:class:`~varvemem.errors.ValidationError` with a one-line message."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from .errors import ValidationError
from .model import (
    Draft,
    MemoryType,
    Scope,
    Tier,
    TTLMode,
    check_metadata,
    check_text,
    in_utc,
    normalise_tags,
)
from .settings import TOP_K_MAX, Settings, UpdateSettings, views

if TYPE_CHECKING:  # numpy only where a vector is checked
    import numpy as np

# The ranges the API checks (surfaces publish them: the MCP tools' schemas read these).
IMPORTANCE_RANGE = (0.0, 1.0)
"""An importance, both ends allowed."""
FEEDBACK_WEIGHT_RANGE = (0.0, 1.0)
"""A feedback weight: over the first, at most the second."""
MAX_TOKENS_MIN = 16
"""The smallest context budget (``max_tokens``)."""


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
    """Aware datetimes in UTC; a naive one is taken to be UTC already. One whose offset takes
    it out of the range of dates is refused."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise ValidationError(f"{name} must be a datetime")
    try:
        return in_utc(value, name)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None


valid_text = check_text
"""Strings in a value (and in its lists and mappings, keys too) are text every store keeps:
:class:`ValidationError` naming the field otherwise."""


def optional_text(value: Any, name: str) -> str:
    """Text that may be empty (a reason, an actor): a string of valid text."""
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be text")
    valid_text(value, name)
    return value


def memory_id(value: Any, name: str = "memory id") -> str:
    """An id as given (a full id, or a prefix where one is taken): text no store refuses."""
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be text")
    valid_text(value, name)
    return value


def text(value: Any, what: str) -> str:
    """Non-empty text, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} must be non-empty text")
    valid_text(value, what)
    return value.strip()


def metadata(settings: Settings, value: Any, name: str = "metadata") -> dict[str, Any]:
    """Metadata to store: a mapping of JSON within ``update.metadata_max_depth`` and
    ``update.metadata_max_bytes``, its text valid Unicode."""
    if not isinstance(value, Mapping):
        raise ValidationError(f"{name} must be a mapping")
    out = dict(value)
    if not all(isinstance(k, str) for k in out):
        raise ValidationError(f"{name} keys must be text")
    try:
        check_metadata(out, settings.update.metadata_max_depth,
                       settings.update.metadata_max_bytes, name)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    return out


def tags(settings: Settings, value: Any, name: str = "tags") -> list[str]:
    """Tags to store, normalised: at most ``update.tags_max`` of at most
    ``update.tag_max_chars`` characters, valid Unicode."""
    try:
        out = normalise_tags(value)
    except ValueError as exc:
        raise ValidationError(f"{name}: {exc}") from None
    valid_text(out, name)
    if len(out) > settings.update.tags_max:
        raise ValidationError(f"{name}: {len(out)} tags, over the limit of "
                              f"{settings.update.tags_max} (update.tags_max)")
    for t in out:
        if len(t) > settings.update.tag_max_chars:
            raise ValidationError(f"{name}: tag {t[:20]!r}... is over "
                                  f"{settings.update.tag_max_chars} characters "
                                  "(update.tag_max_chars)")
    return out


def keywords(cfg: UpdateSettings, values: Any, name: str = "keywords") -> list[str]:
    """Keywords to store: a list of text, blanks dropped, at most ``update.keywords_max``,
    each within ``update.max_content_bytes``."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValidationError(f"{name} must be a list of text")
    out = [str(k).strip() for k in values if str(k).strip()]
    valid_text(out, name)
    if len(out) > cfg.keywords_max:
        raise ValidationError(f"{name}: {len(out)} keywords, over the limit of "
                              f"{cfg.keywords_max} (update.keywords_max)")
    if any(len(k.encode("utf-8")) > cfg.max_content_bytes for k in out):
        raise ValidationError(f"{name}: a keyword is over update.max_content_bytes")
    return out


def unit_score(value: Any) -> float:
    """A Q&A pair's score: a number in 0..1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValidationError(f"score {value!r} is not a number in 0..1")
    return float(value)


def share(value: Any, name: str) -> None:
    """None, or a number in 0..1 (a NaN is not)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or not 0 <= value <= 1):
        raise ValidationError(f"{name} {value!r} is not a number in 0..1")


class QueryConfig(views.Update, views.Retrieval, Protocol):
    """The settings sections a query is checked against."""


def query(settings: QueryConfig, value: Any, top_k: int | None, profile: str | None) -> None:
    """A search's query, ``top_k`` and retrieval profile."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("query is empty")
    valid_text(value, "query")
    if len(value.encode("utf-8")) > settings.update.max_content_bytes:
        raise ValidationError("query is over update.max_content_bytes")
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise ValidationError(f"top_k {top_k!r} must be a whole number of at least 1")
    if top_k is not None and top_k > TOP_K_MAX:
        raise ValidationError(f"top_k {top_k} is over the limit of {TOP_K_MAX}")
    if profile is not None and profile not in settings.retrieval.profiles:
        known = ", ".join(sorted(settings.retrieval.profiles))
        raise ValidationError(f"unknown retrieval profile {profile!r} (known: {known})")


def count(value: Any, name: str, low: int, high: int) -> int:
    """A whole number in ``low..high``."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValidationError(f"{name} must be a whole number in {low}..{high}, not {value!r}")
    return value


def importance(value: Any) -> None:
    """An importance to set: None, or a number in 0..1."""
    low, high = IMPORTANCE_RANGE
    if value is not None and (not isinstance(value, (int, float)) or not low <= value <= high):
        raise ValidationError(f"importance {value!r} is not a number in 0..1")


def vector(value: Any, dim: int) -> np.ndarray:
    """A query vector: ``dim`` finite numbers."""
    import numpy as np

    arr = np.asarray(value, np.float32)
    if arr.shape != (dim,) or not np.isfinite(arr).all():
        raise ValidationError(f"query_vector must be {dim} finite numbers")
    return arr


def draft(content: Any, **kw: Any) -> Draft:
    """A :class:`Draft` from :meth:`Memory.add`'s arguments (``type``, ``tier``, ``ttl_mode``,
    ``tags``, ``metadata`` and ``supersedes`` given, None or not)."""
    if not isinstance(content, str):
        raise ValidationError("content must be text")
    if kw.get("created_at") is not None:
        kw["created_at"] = utc(kw["created_at"], "created_at")
    valid_text(content, "content")
    return Draft(
        content=content, memory_type=enum_of(MemoryType, kw.pop("type"), "memory type"),
        tier=enum_of(Tier, kw.pop("tier"), "tier"),
        ttl_mode=enum_of(TTLMode, kw.pop("ttl_mode"), "TTL mode"),
        tags=kw.pop("tags") or [], metadata=dict(kw.pop("metadata") or {}),
        supersedes=list(kw.pop("supersedes") or []), **kw)


def drafts(items: Iterable[str | Mapping[str, Any]], defaults: Mapping[str, Any],
           scope: Callable[[Any, Any, Any, Any], Scope]) -> list[Draft]:
    """:meth:`Memory.add_many`'s items as drafts; ``scope`` checks tenant, user, agent and
    session."""
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, (str, Mapping)):
            raise ValidationError(f"item {i} must be text or a mapping")
        kw = {**defaults, **({"content": item} if isinstance(item, str) else dict(item))}
        if "content" not in kw:
            raise ValidationError(f"item {i} has no content")
        where = scope(kw.pop("tenant", None), kw.pop("user", None), kw.pop("agent", None),
                      kw.pop("session", None))
        kw.setdefault("source", "user")
        for key in ("type", "tier", "ttl_mode", "tags", "metadata", "supersedes"):
            kw.setdefault(key, None)
        try:
            out.append(draft(kw.pop("content"), scope=where, **kw))
        except ValidationError as exc:
            raise ValidationError(f"item {i}: {exc}") from None
    return out


def document(text: Any, source: Any) -> None:
    """A document given as text (:meth:`varvemem.Memory.ingest_text`) and its source name."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("document is empty")
    if not isinstance(source, str) or not source.strip():
        raise ValidationError("source must be non-empty text")
    valid_text(text, "content")
    valid_text(source, "source")


def feedback_weight(weight: Any) -> None:
    low, high = FEEDBACK_WEIGHT_RANGE
    if not isinstance(weight, (int, float)) or not low < weight <= high:
        raise ValidationError(f"feedback weight {weight!r} is not in (0, 1]")


def dry_run(dry: Any, at: datetime | None) -> datetime | None:
    """``at`` in UTC: a time only a dry run of the lifecycle may be given."""
    if not isinstance(dry, bool):
        raise ValidationError("dry_run must be True or False")
    if at is not None and not dry:
        raise ValidationError("at is for dry runs: a run acts at the clock's time")
    return utc(at, "at")


def position(since: Any) -> None:
    """A position of the change feed (:meth:`varvemem.Memory.changes`), or None."""
    if since is not None and (not isinstance(since, int) or isinstance(since, bool)
                              or since < 0):
        raise ValidationError("since must be a position from an earlier changes() (an "
                              "integer >= 0) or None")


def user(value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("user must be non-empty text")
    valid_text(value, "user")
