"""Webhook payloads of DevOps platforms turned into normalised events.

Pure functions, no I/O: ``read(kind, payload, headers)`` reads one delivery of a Harness
pipeline notification (NextGen or FirstGen), a GitHub event (comments, pull requests, reviews,
workflow runs, check runs, pushes to the default branch), a Prometheus Alertmanager or Grafana
alerting notification or any other JSON object, and returns its events, or why it is ignored
(an event type or action varvemem does not read). Bad payloads raise ``ValidationError`` and an
unknown sender kind raises ``UnsupportedEventError``; nothing else is raised. ``parse`` is
``read`` with the events alone ([] when ignored).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import UnsupportedEventError
from . import alertmanager, generic, github, grafana, harness
from ._common import (
    CONTENT_CAP,
    FIELD_CAP,
    STATES,
    Ignored,
    Outcome,
    ParsedEvent,
    clean,
    clip,
    lower_headers,
)

Parser = Callable[[Any, Mapping[str, str] | None], list[ParsedEvent]]


@dataclass(frozen=True)
class Sender:
    """A kind of webhook sender: its parser, and the headers it signs and numbers its
    deliveries in (None: a webhook source's generic defaults). ``repeats``: it sends the same
    state again and again (Alertmanager's ``repeat_interval``) with no delivery id, so a
    delivery is identified by the states of its events (a repeat is a duplicate, as any
    delivery received before is)."""

    parse: Parser
    signature_header: str | None = None
    delivery_header: str | None = None
    repeats: bool = False


SENDERS: dict[str, Sender] = {
    "harness": Sender(harness.parse),
    "github": Sender(github.parse, github.SIGNATURE_HEADER, github.DELIVERY_HEADER),
    "alertmanager": Sender(alertmanager.parse, repeats=True),
    "grafana": Sender(grafana.parse, repeats=True),
    "generic": Sender(generic.parse),
}
KINDS = tuple(SENDERS)


@dataclass(frozen=True)
class Delivery:
    """What one delivery holds: its events, or (``ignored``) why there is nothing to remember."""

    events: list[ParsedEvent] = field(default_factory=list)
    ignored: str | None = None


def sender(kind: str) -> Sender:
    """The sender of a kind; :class:`UnsupportedEventError` for an unknown one."""
    name = kind.strip().lower() if isinstance(kind, str) else ""
    found = SENDERS.get(name)
    if found is None:
        shown = clip(clean(kind), 64) if isinstance(kind, str) else type(kind).__name__
        raise UnsupportedEventError(f"unknown event kind {shown!r}; expected one of: {', '.join(KINDS)}")
    return found


def read(kind: str, payload: Any, headers: Mapping[str, str] | None = None) -> Delivery:
    """The events of one delivery, or why it is ignored (GitHub's ping, an event type or action
    varvemem does not read, an empty alerts list)."""
    parse_one = sender(kind).parse
    try:
        found = parse_one(payload, lower_headers(headers))
    except Ignored as exc:
        return Delivery(ignored=str(exc) or "nothing to remember")
    return Delivery(found) if found else Delivery(ignored="nothing to remember in this delivery")


def parse(kind: str, payload: Any, headers: Mapping[str, str] | None = None) -> list[ParsedEvent]:
    """The events of one delivery; [] for a delivery to acknowledge and ignore."""
    return read(kind, payload, headers).events


__all__ = ["CONTENT_CAP", "FIELD_CAP", "KINDS", "SENDERS", "STATES", "Delivery", "Outcome", "ParsedEvent",
           "Sender", "parse", "read", "sender"]
