"""The ``/v1`` routes: thin faces over :class:`~varvemem.Memory`, every call scoped to the API
key's tenant (a memory of another tenant is a 404, never a 403)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from fastapi import APIRouter, Depends, Path, Query, Request, Response, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from .. import _validate
from ..api import Memory
from ..errors import StorageError
from ..keys import ApiKey
from ..model import MemoryType, Tier
from ..operations import OPERATIONS, Operation
from .schemas import (
    EVENT_ID_MAX,
    NAME_PATTERN,
    SESSION_PATTERN,
    AddResult,
    AddResults,
    AskIn,
    AskResult,
    BatchIn,
    ConsolidateIn,
    ConsolidationReport,
    ContextIn,
    ContextResult,
    DocumentIn,
    FeedbackIn,
    Health,
    History,
    InboxCounts,
    InboxPage,
    InboxRetryIn,
    InboxStatus,
    IngestReport,
    MemoryIn,
    MemoryPage,
    MemoryPatch,
    Name,
    Ready,
    Retried,
    SearchIn,
    SearchResult,
    SessionClosed,
    SessionWindow,
    Stats,
    StoredMemory,
    TenantStatus,
    TurnsIn,
    UserDeleted,
    errors,
)
from .service import Service

router = APIRouter()
# The errors a keyed route may answer with: a bad request, no or a bad key (401), a key whose
# role falls short (403), a bad parameter (422), the store away (503); a route with a body also
# the body gate's 413 and 415.
READ = (400, 401, 403, 422, 503)
WRITE = (*READ, 413, 415)
bearer = HTTPBearer(auto_error=False, description="An API key (`varvemem keys create`)")
T = TypeVar("T")
SessionPath = Annotated[str, Path(pattern=SESSION_PATTERN, max_length=512)]
UserPath = Annotated[str, Path(pattern=NAME_PATTERN)]


@dataclass
class Caller:
    """The service, the key a request came with and the operation the route runs."""

    service: Service
    key: ApiKey
    operation: Operation

    @property
    def tenant(self) -> str:
        return self.key.tenant

    async def run(self, fn: Callable[[Memory], T]) -> T:
        """``fn(memory)`` on the memory's worker: beside other reads when the route's
        operation reads (:meth:`Service.read`), else alone (:meth:`Service.run`)."""
        if self.operation.reads:
            return await self.service.read(fn)
        return await self.service.run(fn)


def need(operation: str) -> Any:
    """A dependency: the caller, whose key must be valid and allow what ``operation`` (a row
    of :data:`varvemem.operations.OPERATIONS`) needs."""
    op = OPERATIONS[operation]

    def dependency(request: Request,
                   cred: HTTPAuthorizationCredentials | None = Security(bearer)) -> Caller:
        service: Service = request.app.state.service
        key = service.memory.keys.authenticate(cred.credentials if cred else None, op.needs)
        request.state.tenant = key.tenant
        return Caller(service, key, op)

    return Depends(dependency)


def _record(rec: BaseModel) -> dict[str, Any]:
    return rec.model_dump(mode="json", exclude={"embedding"})


def _stored(caller: Caller, args: dict[str, Any], where: str = "") -> dict[str, Any]:
    """``args`` with the tags and metadata they would store checked against the settings'
    limits (``update.tags_max``, ``update.metadata_max_depth``...): a 422 naming the field,
    before anything is written."""
    settings = caller.service.settings
    if args.get("tags") is not None:
        args["tags"] = _validate.tags(settings, args["tags"], f"{where}tags")
    if args.get("metadata") is not None:
        args["metadata"] = _validate.metadata(settings, args["metadata"], f"{where}metadata")
    return args


# -- health ------------------------------------------------------------------------------------
@router.get("/healthz", tags=["operations"], summary="The process is up")
async def health() -> Health:
    return Health(status="ok")  # async: answered on the event loop, even with every thread busy


@router.get("/readyz", tags=["operations"], summary="The store of record answers",
            responses=errors(503))
async def ready(request: Request) -> Ready:
    # No counts: /readyz needs no key, and every tenant's would show (GET /v1/status has the
    # key's tenant's own).
    service: Service = request.app.state.service
    try:
        await anyio.to_thread.run_sync(service.memory.check_store, limiter=service.receiving)
    except StorageError as exc:
        raise StorageError(f"not ready: {exc}") from None
    return Ready(status="ready")


@router.get("/metrics", tags=["operations"], summary="Prometheus metrics",
            response_class=Response,
            responses={200: {"description": "The Prometheus text format",
                             "content": {"text/plain": {"schema": {"type": "string"}}}}})
def metrics(request: Request) -> Response:
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    service: Service = request.app.state.service
    return Response(generate_latest(service.metrics.registry), media_type=CONTENT_TYPE_LATEST)


# -- memories ----------------------------------------------------------------------------------
@router.post("/v1/memories", status_code=201, tags=["memories"], summary="Add a memory",
             response_model=AddResult, responses=errors(*WRITE, 404, 409))
async def add_memory(body: MemoryIn, caller: Caller = need("add")) -> dict[str, Any]:
    args = _stored(caller, body.model_dump(exclude_none=True))
    content = args.pop("content")
    added = await caller.run(lambda m: m.add(content, tenant=caller.tenant, **args))
    return added.model_dump()


@router.post("/v1/memories/batch", status_code=201, tags=["memories"],
             summary="Add several memories (embedded in batches)",
             response_model=AddResults, responses=errors(*WRITE, 404, 409))
async def add_batch(body: BatchIn, caller: Caller = need("add_many")) -> dict[str, Any]:
    items = [{**_stored(caller, i.model_dump(exclude_none=True), f"items[{n}]."),
              "tenant": caller.tenant} for n, i in enumerate(body.items)]
    results = await caller.run(lambda m: m.add_many(items))
    return {"results": [r.model_dump() for r in results]}


@router.get("/v1/memories", tags=["memories"], summary="List memories by id, a page at a time",
            response_model=MemoryPage, responses=errors(*READ))
async def list_memories(caller: Caller = need("get_all"),
                  user: Name | None = None, type: list[MemoryType] | None = Query(None),
                  tier: list[Tier] | None = Query(None), include_superseded: bool = False,
                  limit: int | None = Query(None, ge=1), after: str = "") -> dict[str, Any]:
    size = min(limit or caller.service.settings.server.page_size,
               caller.service.settings.server.max_page_size)
    recs = await caller.run(lambda m: m.get_all(tenant=caller.tenant, user=user, types=type,
                                                 tiers=tier, include_superseded=include_superseded,
                                                 limit=size + 1, after=after))
    more = len(recs) > size
    recs = recs[:size]
    return {"items": [_record(r) for r in recs], "next": recs[-1].memory_id if more else None}


@router.get("/v1/memories/{memory_id}", tags=["memories"], summary="Get a memory",
            response_model=StoredMemory, responses=errors(*READ, 404))
async def get_memory(memory_id: str, caller: Caller = need("get")) -> dict[str, Any]:
    return _record(await caller.run(lambda m: m.get(memory_id, tenant=caller.tenant)))


@router.patch("/v1/memories/{memory_id}", tags=["memories"],
              summary="Change a memory (history keeps the old values)",
              response_model=StoredMemory, responses=errors(*WRITE, 404, 409))
async def update_memory(memory_id: str, body: MemoryPatch,
                  caller: Caller = need("update")) -> dict[str, Any]:
    args = _stored(caller, body.model_dump(exclude_none=True))

    def run(m: Memory) -> dict[str, Any]:
        # Everything the change stores and answers is checked before it is written: a
        # failure after the commit would make a retrying client apply it twice.
        rec = m.get(memory_id, tenant=caller.tenant)
        _record(rec)
        if "metadata" in args:
            _validate.metadata(caller.service.settings, {**rec.metadata, **args["metadata"]},
                               "metadata")
        return _record(m.update(memory_id, tenant=caller.tenant,
                                actor=f"key:{caller.key.key_id}", **args))

    return await caller.run(run)


@router.delete("/v1/memories/{memory_id}", status_code=204, tags=["memories"],
               summary="Delete a memory (also from the archive)",
               response_class=Response, responses=errors(*READ, 404))
async def delete_memory(memory_id: str, reason: str = Query("", max_length=1000),
                  caller: Caller = need("delete")) -> Response:
    await caller.run(lambda m: m.delete(memory_id, tenant=caller.tenant, reason=reason))
    return Response(status_code=204)


@router.get("/v1/memories/{memory_id}/history", tags=["memories"],
            summary="Every change to a memory",
            response_model=History, responses=errors(*READ, 404))
async def memory_history(memory_id: str, caller: Caller = need("history")) -> dict[str, Any]:
    entries = await caller.run(lambda m: m.history(memory_id, tenant=caller.tenant))
    return {"items": [e.model_dump(mode="json") for e in entries]}


@router.post("/v1/memories/{memory_id}/feedback", tags=["memories"],
             summary="Score a memory up (helpful) or down",
             response_model=StoredMemory, responses=errors(*WRITE, 404, 409))
async def feedback(memory_id: str, body: FeedbackIn,
                   caller: Caller = need("feedback")) -> dict[str, Any]:
    def run(m: Memory) -> dict[str, Any]:
        _record(m.get(memory_id, tenant=caller.tenant))  # answerable, before it is written
        return _record(m.feedback(memory_id, body.helpful, weight=body.weight,
                                  reason=body.reason, tenant=caller.tenant))

    return await caller.run(run)


# -- retrieval ---------------------------------------------------------------------------------
@router.post("/v1/search", tags=["retrieval"],
             summary="Hybrid search, each hit with its score components",
             response_model=SearchResult, response_model_exclude_unset=True,
             responses=errors(*WRITE, 409))
async def search(body: SearchIn, caller: Caller = need("search")) -> dict[str, Any]:
    hits = await caller.run(lambda m: m.search(body.query, tenant=caller.tenant, **body.args()))
    return {"query": body.query, "hits": [h.to_json() for h in hits]}


@router.post("/v1/context", tags=["retrieval"],
             summary="The best memories as Markdown within a token budget",
             response_model=ContextResult, responses=errors(*WRITE, 409))
async def context(body: ContextIn, caller: Caller = need("context")) -> dict[str, Any]:
    args = body.args()
    max_tokens = args.pop("max_tokens", None)
    top_k = args.pop("top_k", None)
    text = await caller.run(lambda m: m.context(body.query, max_tokens=max_tokens, top_k=top_k,
                                                 tenant=caller.tenant, **args))
    return {"query": body.query, "context": text}


@router.post("/v1/ask", tags=["retrieval"],
             summary="Answer a question: chit-chat, a reused Q&A pair (fast path) or retrieval",
             response_model=AskResult, responses=errors(*WRITE, 409))
async def ask(body: AskIn, caller: Caller = need("ask")) -> dict[str, Any]:
    res = await caller.run(lambda m: m.ask(body.question, session=body.session, user=body.user,
                                            tenant=caller.tenant))
    return res.model_dump()


# -- sessions ----------------------------------------------------------------------------------
@router.post("/v1/sessions/{session}/turns", status_code=201, tags=["sessions"],
             summary="Append messages to a session (each a dialogue memory)",
             response_model=AddResults, responses=errors(*WRITE, 409))
async def append_turns(session: SessionPath, body: TurnsIn,
                       caller: Caller = need("add_messages")) -> dict[str, Any]:
    by_who: dict[tuple[str | None, str | None], list[dict[str, Any]]] = {}
    for msg in body.messages:
        by_who.setdefault((msg.user, msg.agent), []).append(
            msg.model_dump(include={"role", "content"}))

    def run(m: Memory) -> list[Any]:
        out = []
        for (user, agent), messages in by_who.items():
            out += m.add_messages(messages, user=user, agent=agent, session=session,
                                  tenant=caller.tenant)
        return out

    return {"results": [r.model_dump() for r in await caller.run(run)]}


@router.get("/v1/sessions/{session}", tags=["sessions"],
            summary="A session's recent turns and tool calls (TIER-1), oldest first",
            response_model=SessionWindow, responses=errors(*READ))
async def read_session(session: SessionPath, caller: Caller = need("session_window"),
                       user: Name | None = None,
                       agent: Name | None = None) -> dict[str, Any]:
    window = await caller.run(lambda m: m.session_window(session, tenant=caller.tenant, user=user,
                                                          agent=agent))
    return {"session": session, "items": [_record(r) for r in window]}


@router.post("/v1/sessions/{session}/close", tags=["sessions"],
             summary="End a session: its active memories move to short-term",
             response_model=SessionClosed, responses=errors(*WRITE))
async def close_session(session: SessionPath,
                        caller: Caller = need("close_session")) -> dict[str, Any]:
    moved = await caller.run(lambda m: m.close_session(session, tenant=caller.tenant))
    return {"session": session, "moved": moved}


# -- documents ---------------------------------------------------------------------------------
@router.post("/v1/documents", tags=["documents"],
             summary="Ingest (or re-ingest) a Markdown or text document",
             response_model=IngestReport, responses=errors(*WRITE, 409))
async def ingest(body: DocumentIn, caller: Caller = need("ingest_text")) -> dict[str, Any]:
    tags = _stored(caller, {"tags": body.tags}).get("tags")
    report = await caller.run(lambda m: m.ingest_text(body.text, body.source, tags=tags,
                                                       tenant=caller.tenant))
    return report.model_dump()


# -- operations --------------------------------------------------------------------------------
@router.post("/v1/consolidate", tags=["operations"],
             summary="Run the lifecycle jobs once for the tenant",
             response_model=ConsolidationReport, responses=errors(*WRITE, 409))
async def consolidate(body: ConsolidateIn,
                      caller: Caller = need("consolidate")) -> dict[str, Any]:
    report = await caller.run(lambda m: m.consolidate(body.jobs, tenant=caller.tenant))
    return report.model_dump(mode="json")


@router.get("/v1/stats", tags=["operations"], summary="Counts by type and tier",
            response_model=Stats, responses=errors(*READ))
async def stats(caller: Caller = need("stats")) -> dict[str, Any]:
    out = await caller.run(lambda m: m.stats(tenant=caller.tenant))
    for key in ("home", "disk_bytes"):  # the server's, shared by every tenant
        out.pop(key, None)
    return out


@router.get("/v1/status", tags=["operations"],
            summary="The tenant's memories by tier and webhook inbox by status",
            responses=errors(*READ))
async def status(caller: Caller = need("tier_counts")) -> TenantStatus:
    tiers, inbox = await caller.run(lambda m: (m.tier_counts(tenant=caller.tenant),
                                                m.inbox.counts(tenant=caller.tenant)))
    return TenantStatus(tenant=caller.tenant, memories_by_tier=tiers,
                        inbox=InboxCounts(**{s: inbox.get(s, 0) for s in InboxCounts.model_fields}))


@router.delete("/v1/users/{user}", tags=["operations"],
               summary="Delete a user's memories from every tier, the archive and the caches",
               response_model=UserDeleted, responses=errors(*READ, 409))
async def delete_user(user: UserPath, caller: Caller = need("delete_user")) -> dict[str, Any]:
    report = await caller.run(lambda m: m.delete_user(user, tenant=caller.tenant))
    return {"user": user, "deleted": report.model_dump(exclude={"tenant", "user"})}


@router.post("/v1/inbox/retry", tags=["webhooks"],
             summary="Re-arm failed webhook events, once their cause is fixed",
             response_model=Retried, responses=errors(*WRITE))
async def inbox_retry(body: InboxRetryIn,
                      caller: Caller = need("inbox.retry")) -> dict[str, Any]:
    retried = await caller.run(lambda m: m.inbox.retry(body.event_ids, tenant=caller.tenant))
    return {"retried": retried}


@router.get("/v1/inbox", tags=["webhooks"], summary="The tenant's webhook inbox, a page at a time",
            response_model=InboxPage, responses=errors(*READ))
def inbox(caller: Caller = need("inbox.events"), status: InboxStatus | None = None,
          limit: int | None = Query(None, ge=1),
          after: int = Query(0, ge=0, le=EVENT_ID_MAX)) -> dict[str, Any]:
    size = min(limit or caller.service.settings.server.page_size,
               caller.service.settings.server.max_page_size)
    events = caller.service.memory.inbox.events(tenant=caller.tenant, status=status,
                                                limit=size + 1, after=after)
    more = len(events) > size
    events = events[:size]
    items = [{"event_id": e.event_id, "source": e.source, "kind": e.kind,
              "delivery": e.delivery, "status": e.status, "attempts": e.attempts,
              "received_at": e.received_at.isoformat(), "error": e.error,
              "memory_ids": list(e.memory_ids)} for e in events]
    return {"items": items, "next": str(events[-1].event_id) if more else None}

