"""Grafana alerting webhook notifications (unified alerting, payload version "1").

Grafana's payload is Alertmanager's with more: each alert also has ``valueString`` (the values
that fired it), ``dashboardURL``, ``panelURL``, ``silenceURL`` and ``imageURL``, which the
event keeps. Alerts are read as Alertmanager's are (one event per alert, its ``fingerprint``
the ``link_key``, its source adding the status and ``startsAt``), so a resolved alert links to
its firing one and a repeat notification of the same state is the same event. A version other
than "1" is refused; no version at all is read as version 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError
from . import alertmanager
from ._common import ParsedEvent, block, clean, clip, prune, text

SUPPORTED_VERSION = "1"


def _extra(alert: dict[str, Any]) -> dict[str, Any]:
    return prune({
        "value_string": block(alert.get("valueString"), 1000),
        "dashboard_url": text(alert.get("dashboardURL"), 1000),
        "panel_url": text(alert.get("panelURL"), 1000),
        "silence_url": text(alert.get("silenceURL"), 1000),
        "image_url": text(alert.get("imageURL"), 1000),
    })


def parse(payload: Any, headers: Mapping[str, str] | None = None) -> list[ParsedEvent]:
    """One event per alert of a Grafana notification; [] for an empty alerts list."""
    if not isinstance(payload, dict):
        raise ValidationError("grafana payload must be a JSON object")
    version = payload.get("version")
    if isinstance(version, (str, int)) and not isinstance(version, bool):
        shown = clean(str(version))
        if shown and shown != SUPPORTED_VERSION:
            hint = " (version 4 is Alertmanager's: use kind alertmanager)" if shown == "4" else ""
            raise ValidationError(f"grafana payload version {clip(shown, 32)!r} is not supported; "
                                  f"varvemem reads version {SUPPORTED_VERSION}{hint}")
    org = prune({"org_id": text(payload.get("orgId"), 32)})
    return alertmanager.events("grafana", payload, lambda alert: {**org, **_extra(alert)})
