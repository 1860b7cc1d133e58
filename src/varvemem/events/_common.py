"""The event record and the defensive readers every webhook parser shares."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

Outcome = Literal["failure", "success", "started", "firing", "resolved", "comment", "event"]

CONTENT_CAP = 4000
FIELD_CAP = 500
ID_CAP = 128
TAG_CAP = 64
LIST_CAP = 50
ELLIPSIS = "…"


@dataclass(frozen=True)
class ParsedEvent:
    """One normalised event read from a webhook delivery."""

    content: str
    source: str
    outcome: Outcome
    tags: list[str]
    fields: dict[str, Any]
    occurred_at: datetime | None
    link_key: str | None = None
    # The source of an object this event changes: an edit (a comment's new text) supersedes
    # the current memories of that source; a deletion (``forget``) makes no memory and
    # invalidates them (kept, with history).
    revises: str | None = None
    forget: bool = False
    # The subject whose state this event reports (an alert: its sender and fingerprint; a
    # pipeline: where it runs, which one, and its branch), for the outcomes of ``STATES``.
    state_of: str | None = None


# What an outcome says of its subject's state (``ParsedEvent.state_of``): an event of one
# state retires the subject's current events of the other (engines/states.py).
STATES: dict[str, str] = {"firing": "failing", "failure": "failing",
                          "resolved": "passing", "success": "passing"}


class Ignored(Exception):
    """Raised by a parser for a delivery to acknowledge and not remember (an event type or
    action varvemem does not read); its message says why. ``events.read`` catches it."""


# C0/C1 control characters other than whitespace, which clean() folds anyway.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def lower_headers(headers: Any) -> dict[str, str]:
    """The string headers of a mapping with lower-cased names; {} for anything else."""
    if not isinstance(headers, Mapping):
        return {}
    return {k.strip().lower(): v for k, v in headers.items() if isinstance(k, str) and isinstance(v, str)}


def obj(value: Any) -> dict[str, Any]:
    """value when it is a dict, else an empty one."""
    return value if isinstance(value, dict) else {}


def clean(value: str) -> str:
    """One line: control characters and runs of whitespace folded to single spaces."""
    value = value.encode("utf-8", "replace").decode("utf-8")  # lone surrogates from JSON -> "?"
    return " ".join(_CONTROL.sub(" ", value).split())


def block(value: Any, cap: int = FIELD_CAP) -> str | None:
    """Like text() but keeping line breaks (comment bodies, diff hunks); None when blank."""
    if not isinstance(value, str):
        return None
    value = value.encode("utf-8", "replace").decode("utf-8")
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    value = "\n".join(_CONTROL.sub(" ", line).rstrip() for line in value.split("\n")).strip("\n")
    return clip(value, cap) if value else None


def clip(value: str, cap: int) -> str:
    """value cut to at most cap characters, an ellipsis marking the cut."""
    if len(value) <= cap:
        return value
    return value[: cap - 1].rstrip() + ELLIPSIS


def text(value: Any, cap: int = FIELD_CAP) -> str | None:
    """A cleaned, capped, non-empty string from a str or a number; None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        value = int(value) if value.is_integer() else value
    if isinstance(value, (int, float)):
        try:
            value = str(value)
        except ValueError:  # an int beyond Python's digit limit
            return None
    if not isinstance(value, str):
        return None
    value = clean(value)
    return clip(value, cap) if value else None


def pick(sources: Sequence[Mapping[str, Any]], keys: Sequence[str], cap: int = FIELD_CAP) -> str | None:
    """The first readable string under any of keys, trying each source in turn."""
    for source in sources:
        for key in keys:
            found = text(source.get(key), cap)
            if found is not None:
                return found
    return None


def pick_raw(sources: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> Any:
    """The first value that is not None under any of keys, trying each source in turn."""
    for source in sources:
        for key in keys:
            if source.get(key) is not None:
                return source[key]
    return None


def norm(value: str | None) -> str:
    """Lower case with everything but letters and digits removed ("PIPELINE_FAILED" -> "pipelinefailed")."""
    return "".join(ch for ch in (value or "").lower() if ch.isalnum())


def make_tags(*items: str | None) -> list[str]:
    """Short lowercase tags, blanks dropped, duplicates removed, order kept."""
    tags: list[str] = []
    for item in items:
        if not item:
            continue
        tag = clip(clean(item).lower().replace(" ", "-"), TAG_CAP)
        if tag and tag not in tags:
            tags.append(tag)
    return tags


def canonical(value: Any) -> str:
    """Compact JSON with sorted keys; a stable stand-in when value cannot be dumped."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    except (TypeError, ValueError, RecursionError):  # mixed key types, too deep
        try:
            return repr(value)
        except RecursionError:
            return type(value).__name__


def digest(value: Any) -> str:
    """A short hash of value's canonical JSON (16 hex digits)."""
    return hashlib.sha256(canonical(value).encode("utf-8", "replace")).hexdigest()[:16]


_FAILURE = frozenset({"fail", "failed", "failure", "error", "errored", "aborted", "abort", "expired",
                      "rejected", "approvalrejected", "timedout", "timeout", "cancelled", "canceled"})
_SUCCESS = frozenset({"success", "succeeded", "successful", "completed", "complete", "passed", "ok"})
_STARTED = frozenset({"start", "started", "running", "inprogress", "queued", "resumed"})


def outcome_from_status(status: str | None) -> Outcome | None:
    """failure / success / started for a pipeline-like status word; None when it says none of them."""
    word = norm(status)
    if word in _FAILURE:
        return "failure"
    if word in _SUCCESS:
        return "success"
    if word in _STARTED:
        return "started"
    return None


STATE_WORDS: dict[str, str] = {"failure": "failed", "success": "succeeded", "started": "started"}

_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?"
    r"\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?"
)
# Java's Date.toString(), which Harness sends as startTime/endTime: "Tue Mar 05 10:00:00 UTC 2024".
_JAVA = re.compile(r"[A-Za-z]{3} ([A-Za-z]{3}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (UTC|GMT) (\d{4})")
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
# Epoch numbers above this are milliseconds (1e11 s is the year 5138; 1e11 ms is 1973).
_MS_THRESHOLD = 1e11


def _valid(moment: datetime) -> datetime | None:
    # Nothing a webhook reports happened before 1970; Go's zero time ("0001-01-01T00:00:00Z") means unset.
    return moment if moment.year >= 1970 else None


def _from_epoch(number: float) -> datetime | None:
    if not math.isfinite(number) or number <= 0:
        return None
    if number > _MS_THRESHOLD:
        number /= 1000
    try:
        return _valid(datetime.fromtimestamp(number, tz=timezone.utc))
    except (OverflowError, OSError, ValueError):
        return None


def _from_string(value: str) -> datetime | None:
    value = value.strip()
    if not value:
        return None
    try:
        return _from_epoch(float(value))
    except (ValueError, OverflowError):
        pass
    if match := _ISO.fullmatch(value):
        year, month, day, hour, minute, second, fraction, zone = match.groups()
        micro = int((fraction or "0")[:6].ljust(6, "0"))
        offset = timedelta(0)
        if zone and zone[0] in "+-":
            digits = zone[1:].replace(":", "")
            offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
            offset = -offset if zone[0] == "-" else offset
        try:
            moment = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                              int(second or 0), micro, tzinfo=timezone.utc) - offset
        except (ValueError, OverflowError):
            return None
        return _valid(moment)
    if match := _JAVA.fullmatch(value):
        month_name, day, hour, minute, second, _zone, year = match.groups()
        month = _MONTHS.get(month_name.lower())
        if month is None:
            return None
        try:
            return _valid(datetime(int(year), month, int(day), int(hour), int(minute), int(second),
                                   tzinfo=timezone.utc))
        except ValueError:
            return None
    return None


def parse_time(value: Any) -> datetime | None:
    """A UTC datetime from epoch seconds or milliseconds, an ISO 8601 string, or a Java date string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return _from_epoch(float(value))
        except OverflowError:
            return None
    if isinstance(value, str) and len(value) <= 64:
        return _from_string(value)
    return None


def iso(moment: datetime | None) -> str | None:
    """moment as ISO 8601 in UTC ending in Z; None for None."""
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def objects(value: Any, cap: int = LIST_CAP) -> list[dict[str, Any]]:
    """The dict items of a list (at most cap of them); [] for anything else."""
    if not isinstance(value, list):
        return []
    return [item for item in value[: cap * 2] if isinstance(item, dict)][:cap]


def text_list(value: Any, cap: int = FIELD_CAP) -> list[str]:
    """The readable strings among a list's string items (at most LIST_CAP of them)."""
    if not isinstance(value, list):
        return []
    found = [t for t in (text(item, cap) for item in value[: LIST_CAP * 2] if isinstance(item, str))
             if t is not None]
    return found[:LIST_CAP]


def sentence(*parts: str | None) -> str:
    """The non-empty parts joined by spaces, each ending with a full stop unless it has punctuation.

    A part ending in a URL gets no full stop, which would read as part of the link.
    """
    out = []
    for part in parts:
        if not part:
            continue
        ends_in_url = "://" in part.rsplit(" ", 1)[-1]
        out.append(part if ends_in_url or part[-1] in ".!?:…" else part + ".")
    return " ".join(out)


def finish(content: str) -> str:
    """content as one capped paragraph."""
    return clip(clean(content), CONTENT_CAP)


def prune(fields: dict[str, Any]) -> dict[str, Any]:
    """fields without None, empty strings and empty lists."""
    return {k: v for k, v in fields.items() if v is not None and v != "" and v != []}
