"""``POST /v1/webhooks/{source}``: a delivery is verified (the source's secret, not an API key),
checked and committed to the inbox before ``202 Accepted``; a worker makes the memories."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..engines.inbox import PayloadTooLargeError, Receipt
from ..errors import (
    AuthError,
    NotFoundError,
    UnsupportedEventError,
    ValidationError,
    VarvememError,
)
from ..settings import URL_TOKEN_HEADER
from .schemas import DeliveryAccepted, DeliveryNoted, ErrorResponse
from .service import Service

router = APIRouter(tags=["webhooks"])
WEBHOOK_PREFIX = "/v1/webhooks/"

_RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"description": "Committed to the inbox; its memories follow",
          "model": DeliveryAccepted},
    200: {"description": "Nothing new to remember: GitHub's ping, an event type or action "
                 "varvemem does not read (`ignored` with its `reason`), or a delivery received "
                 "before (`duplicate` with its `event_id`: a redelivery under the same "
                 "delivery id, the same body again, a repeat notification of alerts in the "
                 "same states; no second memory)", "model": DeliveryNoted},
    400: {"description": "A delivery the server cannot handle", "model": ErrorResponse},
    401: {"description": "Missing or bad signature or token", "model": ErrorResponse},
    404: {"description": "No such webhook source", "model": ErrorResponse},
    413: {"description": "Body over server.max_body_bytes", "model": ErrorResponse},
    415: {"description": "Not JSON", "model": ErrorResponse},
    422: {"description": "Malformed payload", "model": ErrorResponse},
    503: {"description": "The store of record is unreachable", "model": ErrorResponse},
}


def outcome_of(exc: VarvememError) -> str:
    """The ``outcome`` label a refused delivery is counted under."""
    if isinstance(exc, PayloadTooLargeError):
        return "too_large"
    if isinstance(exc, AuthError):
        return "bad_signature"
    if isinstance(exc, NotFoundError):
        return "unknown_source"
    if isinstance(exc, UnsupportedEventError):
        return "unsupported"
    if isinstance(exc, ValidationError):
        return "invalid"
    return "error"


@router.post("/v1/webhooks/{source}", status_code=202, responses=_RESPONSES,
             summary="Receive a Harness, GitHub, Alertmanager, Grafana or generic JSON event")
async def receive(source: str, request: Request) -> JSONResponse:
    service: Service = request.app.state.service
    body = await request.body()
    known = source if source in service.settings.webhooks.sources else "unknown"
    headers = {k: v for k, v in request.headers.items() if k.lower() != URL_TOKEN_HEADER.lower()}
    if "token" in request.query_params:
        headers[URL_TOKEN_HEADER] = request.query_params["token"]
    try:
        # The store write blocks: off the event loop, but not behind the memory's lock.
        receipt: Receipt = await anyio.to_thread.run_sync(
            service.memory.inbox.receive, source, body, headers, limiter=service.receiving)
    except VarvememError as exc:
        service.metrics.delivery(known, outcome_of(exc))
        raise
    if receipt.ignored:
        service.metrics.delivery(known, "ignored")
        return JSONResponse({"status": "ignored", "reason": receipt.reason or "nothing to remember"},
                            status_code=200)
    if receipt.duplicate:  # a redelivery is how senders retry: a success, not a conflict
        service.metrics.delivery(known, "duplicate")
        return JSONResponse({"status": "duplicate", "event_id": receipt.event_id,
                             "message": "this delivery was received before; it makes no "
                                        "second memory"}, status_code=200)
    service.metrics.delivery(known, "accepted")
    return JSONResponse({"status": "accepted", "event_id": receipt.event_id,
                         "events": receipt.events}, status_code=202)


def count_gate_refusal(service: Service, path: str, status: int) -> None:
    """Count a delivery the body gate refused before any route (413, 415) as the route does
    its own refusals: by source (``unknown`` for a source not configured) and outcome."""
    name = path.removeprefix(WEBHOOK_PREFIX)
    if not path.startswith(WEBHOOK_PREFIX) or not name or "/" in name:
        return
    known = name if name in service.settings.webhooks.sources else "unknown"
    service.metrics.delivery(known, "too_large" if status == 413 else "unsupported_media_type")
