"""Harness pipeline notifications (the "Webhook" method of a pipeline's notification rules).

Harness posts the event's properties either at the top level or under ``eventData`` (the default
template); both are read, ``eventData`` first. Field names vary by version, so each is read under
several aliases. ``startTs``/``endTs`` are epoch seconds in current versions (milliseconds are
recognised by size); ``startTime``/``endTime`` are Java date strings or ISO 8601.

No event type is refused: start/success/failure-like types (and ``PipelineEnd`` by its
``nodeStatus``) get those outcomes, anything else (``PipelinePaused``, ``WaitingForUserAction``,
unknown types) is kept with the outcome "event". The pipeline (its stage, its step) is the
subject whose state an event reports (``state_of``): a success retires its failures.

FirstGen (Harness CD's event rules) posts ``{"id", "version": "v1", "eventType", "data"}``:
``eventType`` ``pipeline_start``/``pipeline_end`` (``workflow_*`` too, any case), ``data``
with ``application``/``pipeline``/``workflow`` objects (``id``, ``name``), ``status``,
``startedAt``/``completedAt`` (epoch milliseconds), ``triggeredBy`` (``name``, ``email``),
``triggeredByType``, ``pipelineExecution``/``workflowExecution`` (``id``) or ``executionId``,
``environments`` and ``services``. It becomes the same kind of event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..errors import ValidationError
from ._common import (
    ID_CAP,
    STATE_WORDS,
    Outcome,
    ParsedEvent,
    digest,
    finish,
    iso,
    make_tags,
    norm,
    obj,
    objects,
    outcome_from_status,
    parse_time,
    pick,
    pick_raw,
    prune,
    sentence,
    text,
)

_ACCOUNT = ("accountIdentifier", "accountId")
_ORG = ("orgIdentifier",)
_PROJECT = ("projectIdentifier",)
_PIPELINE = ("pipelineIdentifier",)
_PIPELINE_NAME = ("pipelineName",)
_STAGE = ("stageIdentifier",)
_STAGE_NAME = ("stageName", "nodeName")
_STEP = ("stepIdentifier",)
_STEP_NAME = ("stepName",)
_EXECUTION = ("planExecutionId", "executionId", "pipelineExecutionId")
_EVENT_TYPE = ("eventType",)
_STATUS = ("nodeStatus", "status")
_ERROR = ("errorMessage", "failureMessage", "message")
_URL = ("executionUrl", "pipelineExecutionUrl", "url")
_PIPELINE_URL = ("pipelineUrl",)
_START = ("startTs", "startTime")
_END = ("endTs", "endTime")


def _event_data(payload: dict[str, Any]) -> dict[str, Any]:
    data = payload.get("eventData")
    if isinstance(data, str) and len(data) < 1_000_000:  # a template may embed it as a JSON string
        try:
            data = json.loads(data)
        except (ValueError, RecursionError):
            data = None
    return obj(data)


def _outcome(event_type: str | None, status: str | None) -> Outcome:
    word = norm(event_type)
    if "fail" in word:
        return "failure"
    if "success" in word or "succeed" in word:
        return "success"
    if word.endswith(("start", "started")):
        return "started"
    # PipelineEnd, StageEnd, paused, waiting...: the status says how it went, if it says.
    return outcome_from_status(status) or "event"


def _time(sources: list[dict[str, Any]], keys: tuple[str, ...]) -> datetime | None:
    for key in keys:
        moment = parse_time(pick_raw(sources, (key,)))
        if moment is not None:
            return moment
    return None


def _triggered_by(sources: list[dict[str, Any]]) -> tuple[str | None, str | None, str | None]:
    raw = pick_raw(sources, ("triggeredBy",))
    if isinstance(raw, dict):
        name = text(raw.get("name")) or text(raw.get("identifier"))
        return name, text(raw.get("email")), text(raw.get("triggerType"))
    return text(raw), None, None


def _pipeline_tags(sources: list[dict[str, Any]]) -> list[str]:
    raw = pick_raw(sources, ("tag", "tags"))
    found: list[str] = []
    if isinstance(raw, list):  # [{"key": ..., "value": ...}], Harness's NGTag list
        pairs = [(obj(item).get("key"), obj(item).get("value")) for item in raw[:50]]
    elif isinstance(raw, dict):
        pairs = list(raw.items())[:50]
    else:
        pairs = []
    for raw_key, raw_value in pairs:
        key, value = text(raw_key, 64), text(raw_value, 64)
        if key:
            found.append(f"{key}:{value}" if value else key)
    return found


def _quoted(name: str | None, ident: str | None) -> str | None:
    if name and ident and name != ident:
        return f'"{name}" ({ident})'
    return f'"{name}"' if name else ident


def _is_firstgen(payload: dict[str, Any]) -> bool:
    data = payload.get("data")
    return isinstance(data, dict) and "eventData" not in payload and (
        "eventType" in payload or any(k in data for k in ("application", "pipelineExecution",
                                                         "workflowExecution")))


def _named(value: Any) -> tuple[str | None, str | None]:
    found = obj(value)
    return text(found.get("id"), ID_CAP), text(found.get("name"), ID_CAP)


def _firstgen(payload: dict[str, Any]) -> ParsedEvent:
    data = obj(payload.get("data"))
    event_type = text(payload.get("eventType"), 64) or text(data.get("eventType"), 64)
    app, app_name = _named(data.get("application"))
    pipeline, pipeline_name = _named(data.get("pipeline"))
    workflow, workflow_name = _named(data.get("workflow"))
    execution = (text(obj(data.get("workflowExecution")).get("id"), ID_CAP) if workflow else None) \
        or text(obj(data.get("pipelineExecution")).get("id"), ID_CAP) \
        or text(data.get("executionId"), ID_CAP)
    if not (pipeline or pipeline_name or workflow or workflow_name or execution):
        raise ValidationError("harness FirstGen payload names no pipeline, workflow or execution "
                              "under data")
    status = text(data.get("status"), 64)
    word = norm(event_type)
    level = "workflow" if word.startswith("workflow") or (
        (workflow or workflow_name) and not word.startswith("pipeline")) else "pipeline"
    if word.endswith(("end", "complete", "completed")):
        outcome: Outcome = outcome_from_status(status) or "event"
    else:
        outcome = _outcome(event_type, status)
    started_at, ended_at = parse_time(data.get("startedAt")), parse_time(data.get("completedAt"))
    user = obj(data.get("triggeredBy"))
    by_name, by_email = text(user.get("name")), text(user.get("email"))
    trigger_type = text(data.get("triggeredByType"), 64)
    environments = [n for n in (text(e.get("name"), 64) or text(e.get("id"), 64)
                                for e in objects(data.get("environments"), 20)) if n]
    services = [n for n in (text(e.get("name"), 64) or text(e.get("id"), 64)
                            for e in objects(data.get("services"), 20)) if n]
    notes = text(obj(data.get("executionArgs")).get("notes"), 1000)
    error = text(data.get("errorMessage"), 2000) or text(data.get("message"), 2000)

    subject = f"pipeline {_quoted(pipeline_name, pipeline) or 'execution ' + (execution or '?')}"
    if level == "workflow":
        subject = f"workflow {_quoted(workflow_name, workflow) or '?'}" + (
            f" of pipeline {_quoted(pipeline_name, pipeline)}" if pipeline or pipeline_name else "")
    verb = STATE_WORDS.get(outcome)
    if verb is None:
        verb = f"reported {event_type or 'an event'}" + (f" (status {status})" if status else "")
    app_shown = _quoted(app_name, app)
    by = f"{by_name} <{by_email}>" if by_name and by_email else (by_name or by_email)
    times = ", ".join(p for p in (f"started {iso(started_at)}" if started_at else None,
                                  f"ended {iso(ended_at)}" if ended_at else None) if p)
    content = sentence(
        f"Harness {subject} {verb}" + (f" in application {app_shown}" if app_shown else ""),
        f"Execution {execution}" if execution else None,
        f"Error: {error}" if error else None,
        f"Environments: {', '.join(environments)}" if environments else None,
        f"Services: {', '.join(services)}" if services else None,
        f"Triggered by {by}" + (f" ({trigger_type})" if trigger_type else "") if by else None,
        f"Notes: {notes}" if notes else None,
        times[:1].upper() + times[1:],
    )
    execution_key = execution or f"h{digest(payload)}"
    path = "/".join(p or "-" for p in (app, pipeline or pipeline_name, execution_key))
    if level == "workflow":
        path += f"/{workflow or workflow_name or '-'}"
    source = f"harness:firstgen/{path}:{word or outcome}"
    fields = prune({
        "generation": "firstgen", "event_id": text(payload.get("id"), ID_CAP),
        "application": app, "application_name": app_name, "pipeline": pipeline,
        "pipeline_name": pipeline_name, "workflow": workflow, "workflow_name": workflow_name,
        "execution_id": execution, "event_type": event_type, "status": status, "level": level,
        "error": error, "started_at": iso(started_at), "ended_at": iso(ended_at),
        "triggered_by": by_name, "triggered_by_email": by_email, "trigger_type": trigger_type,
        "environments": environments, "services": services, "notes": notes,
    })
    occurred_at = (ended_at or started_at) if outcome in ("failure", "success") else (started_at or ended_at)
    state = STATE_WORDS.get(outcome) or norm(status) or word or "event"
    tags = make_tags("harness", "pipeline", level if level != "pipeline" else None, state,
                     pipeline or pipeline_name, f"app:{app_name or app}" if app_name or app else None,
                     *(f"env:{e}" for e in environments[:5]))
    # The pipeline (or workflow) is the subject whose state the event reports, not the
    # execution: a later execution's success retires this one's failure.
    named = workflow or workflow_name if level == "workflow" else pipeline or pipeline_name
    state_of = None
    if named:
        state_of = f"harness:firstgen/{app or '-'}/{pipeline or pipeline_name or '-'}"
        state_of += f"/workflow/{named}" if level == "workflow" else ""
    return ParsedEvent(content=finish(content), source=source, outcome=outcome, tags=tags,
                       fields=fields, occurred_at=occurred_at, state_of=state_of)


def parse(payload: Any, headers: Mapping[str, str] | None = None) -> list[ParsedEvent]:
    """The one event of a Harness pipeline/stage/step notification (NextGen or FirstGen)."""
    if not isinstance(payload, dict):
        raise ValidationError("harness payload must be a JSON object")
    if _is_firstgen(payload):
        return [_firstgen(payload)]
    sources = [_event_data(payload), payload]

    def get(keys: tuple[str, ...], cap: int = ID_CAP) -> str | None:
        return pick(sources, keys, cap)

    pipeline, pipeline_name = get(_PIPELINE), get(_PIPELINE_NAME)
    execution = get(_EXECUTION)
    if not (pipeline or pipeline_name or execution):
        raise ValidationError("harness payload names no pipeline (pipelineIdentifier, pipelineName "
                              "or planExecutionId), at the top level or under eventData")
    account, org, project = get(_ACCOUNT), get(_ORG), get(_PROJECT)
    stage, stage_name = get(_STAGE), get(_STAGE_NAME)
    step, step_name = get(_STEP), get(_STEP_NAME)
    event_type, status = get(_EVENT_TYPE, 64), get(_STATUS, 64)
    error = get(_ERROR, 2000) or text(obj(pick_raw(sources, ("failureInfo",))).get("message"), 2000)
    url, pipeline_url = get(_URL, 1000), get(_PIPELINE_URL, 1000)
    started_at, ended_at = _time(sources, _START), _time(sources, _END)
    by_name, by_email, trigger_type = _triggered_by(sources)

    outcome = _outcome(event_type, status)
    word = norm(event_type)
    if word.startswith("step") or (step and not word.startswith(("stage", "pipeline"))):
        level = "step"
    elif word.startswith("stage") or ((stage or stage_name) and not word.startswith("pipeline")):
        level = "stage"
    else:
        level = "pipeline"
    state = STATE_WORDS.get(outcome) or norm(status) or word or "event"

    pipeline_key = pipeline or pipeline_name
    stage_key = stage or stage_name
    subject = f"pipeline {_quoted(pipeline_name, pipeline) or 'execution ' + (execution or '?')}"
    if level in ("stage", "step") and stage_key:
        subject = f"stage {_quoted(stage_name, stage)} of {subject}"
    if level == "step" and (step or step_name):
        subject = f"step {_quoted(step_name, step)} in {subject}"
    verb = STATE_WORDS.get(outcome)
    if verb is None:
        verb = f"reported {event_type or 'an event'}" + (f" (status {status})" if status else "")
    where = "/".join(p for p in (org, project) if p)
    by = f"{by_name} <{by_email}>" if by_name and by_email else (by_name or by_email)
    times = ", ".join(p for p in (f"started {iso(started_at)}" if started_at else None,
                                  f"ended {iso(ended_at)}" if ended_at else None) if p)
    content = sentence(
        f"Harness {subject} {verb}" + (f" in {where}" if where else ""),
        f"Execution {execution}" if execution else None,
        f"Error: {error}" if error else None,
        f"Triggered by {by}" + (f" ({trigger_type})" if trigger_type else "") if by else None,
        times[:1].upper() + times[1:],
        url or pipeline_url,
    )

    execution_key = execution or f"h{digest(payload)}"  # without an id, the payload is the identity
    path = "/".join(p or "-" for p in (account, org, project, pipeline_key, execution_key))
    if level in ("stage", "step") and stage_key:
        path += f"/{stage_key}"
    if level == "step" and (step or step_name):
        path += f"/{step or step_name}"
    # The event type keeps start and end notifications of one execution apart.
    source = f"harness:{path}:{word or outcome}"

    fields = prune({
        "account": account, "org": org, "project": project,
        "pipeline": pipeline, "pipeline_name": pipeline_name,
        "stage": stage, "stage_name": stage_name, "step": step, "step_name": step_name,
        "execution_id": execution, "event_type": event_type, "status": status, "level": level,
        "error": error, "url": url, "pipeline_url": pipeline_url,
        "started_at": iso(started_at), "ended_at": iso(ended_at),
        "triggered_by": by_name, "triggered_by_email": by_email, "trigger_type": trigger_type,
        "pipeline_tags": _pipeline_tags(sources),
    })
    occurred_at = (ended_at or started_at) if outcome in ("failure", "success") else (started_at or ended_at)
    tags = make_tags("harness", "pipeline", level, state, pipeline_key,
                     f"stage:{stage_key}" if level != "pipeline" and stage_key else None)
    # The pipeline (its stage, its step) is the subject whose state the event reports, not
    # the execution: a later execution's success retires this one's failure.
    step_key = step or step_name
    state_of = None
    if pipeline_key and (level == "pipeline" or stage_key) and (level != "step" or step_key):
        state_of = "harness:" + "/".join(p or "-" for p in (account, org, project, pipeline_key))
        state_of += f"/stage/{stage_key}" if level != "pipeline" else ""
        state_of += f"/step/{step_key}" if level == "step" else ""
    return [ParsedEvent(content=finish(content), source=source, outcome=outcome, tags=tags,
                        fields=fields, occurred_at=occurred_at, state_of=state_of)]
