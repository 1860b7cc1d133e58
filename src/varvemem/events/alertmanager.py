"""Prometheus Alertmanager webhook notifications (payload version "4").

One event per alert. An alert's ``link_key`` is its fingerprint (a hash of its sorted labels when
the fingerprint is missing), so a resolved alert finds the firing one it ends. The alert is also
the subject whose state the event reports (``state_of``, the sender and fingerprint): a
resolution retires the memories of the same alert firing, a new firing the resolution. Its
source adds the status and ``startsAt``, so a redelivered notification keeps its identity while
a later re-fire of the same alert is a new event (and a repeat notification of the same state,
which Alertmanager sends every ``repeat_interval``, is the same event again). Labels and
annotations shared by the group fill the gaps of each alert's own; ``truncatedAlerts`` (alerts
left out of a notification over ``max_alerts``) is kept in each event's fields. A version other
than "4" is refused (version "1" is Grafana's: its own kind); no version at all is read as
version 4.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ValidationError
from ._common import (
    ID_CAP,
    Outcome,
    ParsedEvent,
    clean,
    clip,
    digest,
    finish,
    iso,
    make_tags,
    norm,
    obj,
    parse_time,
    prune,
    sentence,
    text,
)

SUPPORTED_VERSION = "4"
_COUNTERPART = {"firing": "resolved", "resolved": "firing"}


def counterpart(source: str, outcome: str | None) -> tuple[str, str] | None:
    """Whom an alert event pairs with: ``(the source of its counterpart, the link's reason)``,
    the firing event of a resolved one and the other way round (same fingerprint and start),
    or None. Any event with such an outcome pairs so (the generic kind passes them through)."""
    if outcome not in _COUNTERPART:
        return None
    return (source.replace(f":{outcome}:", f":{_COUNTERPART[outcome]}:", 1),
            f"the same alert, {outcome}")


def _strings(mapping: dict[str, Any], fallback: dict[str, Any], cap: int) -> dict[str, str]:
    """The readable string values of fallback overlaid with mapping's, keys sorted, at most 50."""
    merged: dict[str, str] = {}
    for source in (fallback, mapping):
        for key, value in list(source.items())[:100]:
            name, found = text(key, 64), text(value, cap)
            if name and found:
                merged[name] = found
    return dict(sorted(merged.items())[:50])


def parse(payload: Any, headers: Mapping[str, str] | None = None) -> list[ParsedEvent]:
    """One event per alert of an Alertmanager notification; [] for an empty alerts list."""
    if not isinstance(payload, dict):
        raise ValidationError("alertmanager payload must be a JSON object")
    version = payload.get("version")
    if isinstance(version, (str, int)) and not isinstance(version, bool):
        shown = clean(str(version))
        if shown and shown != SUPPORTED_VERSION:
            hint = " (version 1 is Grafana's alerting webhook: use kind grafana)" if shown == "1" else ""
            raise ValidationError(f"alertmanager payload version {clip(shown, 32)!r} is not supported; "
                                  f"varvemem reads version {SUPPORTED_VERSION}{hint}")
    return events("alertmanager", payload)


def events(sender: str, payload: dict[str, Any],
           extra: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> list[ParsedEvent]:
    """One event per alert of an Alertmanager-shaped notification (Alertmanager's, Grafana's),
    each source starting with ``sender``; ``extra`` adds the sender's own fields of an alert."""
    alerts = payload.get("alerts")
    if not isinstance(alerts, list):
        raise ValidationError(f"{sender} payload has no alerts list")
    if alerts and not any(isinstance(alert, dict) for alert in alerts):
        raise ValidationError(f"{sender} alerts list holds no alert objects")

    group_status = text(payload.get("status"), 32)
    common_labels = obj(payload.get("commonLabels"))
    common_annotations = obj(payload.get("commonAnnotations"))
    truncated = payload.get("truncatedAlerts")
    group = prune({
        "receiver": text(payload.get("receiver"), ID_CAP),
        "group_key": text(payload.get("groupKey")),
        "external_url": text(payload.get("externalURL"), 1000),
        "truncated_alerts": truncated if isinstance(truncated, int) and not isinstance(truncated, bool)
        and 0 < truncated < 2**53 else None,
    })
    return [_event(sender, alert, group_status, common_labels, common_annotations,
                   {**group, **(extra(alert) if extra else {})})
            for alert in alerts if isinstance(alert, dict)]


def _event(sender: str, alert: dict[str, Any], group_status: str | None,
           common_labels: dict[str, Any], common_annotations: dict[str, Any],
           group: dict[str, Any]) -> ParsedEvent:
    labels = _strings(obj(alert.get("labels")), common_labels, 200)
    annotations = _strings(obj(alert.get("annotations")), common_annotations, 1000)
    status_word = norm(text(alert.get("status"), 32) or group_status)
    resolved = status_word == "resolved"
    outcome: Outcome = "resolved" if resolved else "firing"
    starts_raw, ends_raw = alert.get("startsAt"), alert.get("endsAt")
    starts_at, ends_at = parse_time(starts_raw), parse_time(ends_raw)

    fingerprint = text(alert.get("fingerprint"), 64) or f"labels-{digest(labels)}"
    name = labels.get("alertname")
    severity = labels.get("severity")
    instance, job = labels.get("instance"), labels.get("job")
    summary = annotations.get("summary")
    description = annotations.get("description") or annotations.get("message")
    runbook = annotations.get("runbook_url") or annotations.get("runbook")
    generator = text(alert.get("generatorURL"), 1000)

    where = ", ".join(f"{k} {v}" for k, v in (("instance", instance), ("job", job)) if v)
    others = ", ".join(f"{k}={v}" for k, v in labels.items()
                       if k not in ("alertname", "severity", "instance", "job"))
    content = sentence(
        f"[{outcome.upper()}] Alert {name or fingerprint}"
        + (f" ({severity})" if severity else "") + (f" on {where}" if where else ""),
        f"Summary: {summary}" if summary else None,
        f"Description: {description}" if description else None,
        f"Labels: {clip(others, 600)}" if others else None,
        f"Started {iso(starts_at)}" if starts_at else None,
        f"Resolved {iso(ends_at)}" if resolved and ends_at else None,
        f"Value: {clip(group['value_string'], 600)}" if group.get("value_string") else None,
        f"Runbook: {runbook}" if runbook else None,
        f"Source: {generator}" if generator else None,
        f"Dashboard: {group.get('panel_url') or group['dashboard_url']}"
        if group.get("panel_url") or group.get("dashboard_url") else None,
    )
    start_key = iso(starts_at) or text(starts_raw, 64) or "-"
    fields = prune({
        "status": outcome, "alertname": name, "severity": severity, "instance": instance, "job": job,
        "fingerprint": fingerprint, "summary": summary, "description": description, "runbook_url": runbook,
        "starts_at": iso(starts_at), "ends_at": iso(ends_at), "generator_url": generator,
        "labels": labels or None, "annotations": annotations or None, **group,
    })
    return ParsedEvent(
        content=finish(content),
        source=f"{sender}:{fingerprint}:{outcome}:{start_key}",
        outcome=outcome,
        tags=make_tags("alert", outcome, name, f"severity:{severity}" if severity else None,
                       sender if sender != "alertmanager" else None),
        fields=fields,
        occurred_at=ends_at if resolved else starts_at,
        link_key=fingerprint,
        state_of=f"{sender}:{fingerprint}",
    )
