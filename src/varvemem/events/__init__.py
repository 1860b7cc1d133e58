"""Webhook payloads of DevOps platforms turned into normalised events.

Pure functions, no I/O: ``parse(kind, payload, headers)`` reads one delivery of a Harness
pipeline notification, a GitHub PR/issue comment, a Prometheus Alertmanager notification or any
other JSON object, and returns its events. Bad payloads raise ``ValidationError`` and event kinds
or types varvemem does not read raise ``UnsupportedEventError``; nothing else is raised.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import UnsupportedEventError
from . import alertmanager, generic, github, harness
from ._common import CONTENT_CAP, FIELD_CAP, Outcome, ParsedEvent, clean, clip, lower_headers

KINDS = ("harness", "github", "alertmanager", "generic")

_PARSERS: dict[str, Callable[[Any, Mapping[str, str] | None], list[ParsedEvent]]] = {
    "harness": harness.parse,
    "github": github.parse,
    "alertmanager": alertmanager.parse,
    "generic": generic.parse,
}


def parse(kind: str, payload: Any, headers: Mapping[str, str] | None = None) -> list[ParsedEvent]:
    """The events of one delivery; [] for a delivery to acknowledge and ignore (GitHub ping)."""
    name = kind.strip().lower() if isinstance(kind, str) else ""
    parser = _PARSERS.get(name)
    if parser is None:
        shown = clip(clean(kind), 64) if isinstance(kind, str) else type(kind).__name__
        raise UnsupportedEventError(f"unknown event kind {shown!r}; expected one of: {', '.join(KINDS)}")
    return parser(payload, lower_headers(headers))


__all__ = ["CONTENT_CAP", "FIELD_CAP", "KINDS", "Outcome", "ParsedEvent", "parse"]
