"""Webhook payloads of DevOps platforms turned into normalised events.

Pure functions, no I/O: ``parse(kind, payload, headers)`` reads one delivery of a Harness
pipeline notification, a GitHub PR/issue comment, a Prometheus Alertmanager notification or any
other JSON object, and returns its events. Bad payloads raise ``ValidationError`` and event kinds
or types varvemem does not read raise ``UnsupportedEventError``; nothing else is raised.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UnsupportedEventError
from . import alertmanager, generic, github, harness
from ._common import CONTENT_CAP, FIELD_CAP, Outcome, ParsedEvent, clean, clip, lower_headers

Parser = Callable[[Any, Mapping[str, str] | None], list[ParsedEvent]]


@dataclass(frozen=True)
class Sender:
    """A kind of webhook sender: its parser, and the headers it signs and numbers its
    deliveries in (None: a webhook source's generic defaults)."""

    parse: Parser
    signature_header: str | None = None
    delivery_header: str | None = None


SENDERS: dict[str, Sender] = {
    "harness": Sender(harness.parse),
    "github": Sender(github.parse, github.SIGNATURE_HEADER, github.DELIVERY_HEADER),
    "alertmanager": Sender(alertmanager.parse),
    "generic": Sender(generic.parse),
}
KINDS = tuple(SENDERS)


def parse(kind: str, payload: Any, headers: Mapping[str, str] | None = None) -> list[ParsedEvent]:
    """The events of one delivery; [] for a delivery to acknowledge and ignore (GitHub ping)."""
    name = kind.strip().lower() if isinstance(kind, str) else ""
    sender = SENDERS.get(name)
    if sender is None:
        shown = clip(clean(kind), 64) if isinstance(kind, str) else type(kind).__name__
        raise UnsupportedEventError(f"unknown event kind {shown!r}; expected one of: {', '.join(KINDS)}")
    return sender.parse(payload, lower_headers(headers))


__all__ = ["CONTENT_CAP", "FIELD_CAP", "KINDS", "SENDERS", "Outcome", "ParsedEvent", "Sender",
           "parse"]
