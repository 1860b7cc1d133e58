"""The inspector's pages: each reads through :meth:`Service.run` (the memory's worker thread)
with the session key's tenant; a GET never changes anything, every change is a POST that
passes :func:`~varvemem.ui.auth.posted`."""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from ..api import Memory
from ..engines import scoring
from ..errors import AuthError, ConfigError, NotFoundError, ValidationError
from ..keys import ApiKey
from ..model import HIT_SCORE_KEYS, MemoryRecord, MemoryType, ScoreBreakdown, Tier
from . import UI_PREFIX, data, forms
from .auth import (
    COOKIE,
    LOGIN_COOKIE,
    Caller,
    Refused,
    caller_of,
    check_key,
    keys,
    posted,
    require,
    same_origin,
    service_of,
)
from .charts import growth_chart
from .render import UiRoute, error_page, page, secured, set_cookie

router = APIRouter(prefix=UI_PREFIX, route_class=UiRoute, include_in_schema=False)
JOBS = ("sessions", "rescore", "promote", "abstract", "forget", "inbox")
INBOX_STATUSES = ("pending", "processing", "done", "failed")


async def _caller(request: Request) -> Caller:
    caller = await caller_of(request)
    request.state.ui_caller = caller
    return caller


def _done(path: str, message: str) -> Response:
    """After a change: back to a page (a GET) that says what was done."""
    sep = "&" if "?" in path else "?"
    return secured(RedirectResponse(f"{path}{sep}done={quote(message)}", status_code=303))


def _memory_id(m: Memory, memory_id: str, tenant: str) -> str:
    """A full id, or the full id of a unique short one."""
    if memory_id.startswith("mem_") and len(memory_id) == 36:
        return memory_id
    return m.resolve_id(memory_id, tenant=tenant)


# -- login -------------------------------------------------------------------------------------
def _safe_next(target: str | None) -> str:
    if target and target.startswith("/ui") and not target.startswith("//") and "\\" not in target:
        return target
    return "/ui"


def _login_form(request: Request, message: str = "", status: int = 200) -> Response:
    import secrets

    token = secrets.token_urlsafe(24)
    response = page(request, "login.html", None, status=status, login_csrf=token,
                    message=message or request.query_params.get("why", ""),
                    next=_safe_next(request.query_params.get("next")))
    set_cookie(response, LOGIN_COOKIE, token, request.url.scheme == "https", max_age=3600)
    return response


async def _logged_in(request: Request, key: ApiKey, target: str) -> Response:
    minutes = service_of(request).settings.ui.session_minutes
    token, _ = await keys(request, lambda ring: ring.open_session(key, minutes))
    response = secured(RedirectResponse(_safe_next(target), status_code=303))
    set_cookie(response, COOKIE, token, request.url.scheme == "https")
    response.delete_cookie(LOGIN_COOKIE, path="/ui")
    return response


@router.get("/login")
async def login(request: Request) -> Response:
    token = request.query_params.get("token")
    if token is None:
        return _login_form(request)
    minutes = service_of(request).settings.ui.login_token_minutes
    try:
        key = await keys(request, lambda ring: ring.redeem_link(token, minutes))
    except AuthError as exc:
        return _login_form(request, f"login refused: {exc}", 403)
    if key is None:
        return _login_form(request, "this login link is unknown, used or expired", 403)
    return await _logged_in(request, key, request.query_params.get("next") or "/ui")


@router.post("/login")
async def login_post(request: Request) -> Response:
    import hmac

    form = {k: v for k, v in (await request.form()).multi_items() if isinstance(v, str)}
    expected = request.cookies.get(LOGIN_COOKIE, "")
    if not same_origin(request) or not expected or \
            not hmac.compare_digest(form.get("csrf", ""), expected):
        return _login_form(request, "refused: the login form did not come from this site "
                                    "(reload it and try again)", 403)
    api_key = form.get("api_key", "").strip()
    try:
        key = await check_key(request, api_key)
    except AuthError as exc:
        return _login_form(request, f"login refused: {exc}", 403)
    return await _logged_in(request, key, form.get("next") or "/ui")


@router.get("/logout")
async def logout_page(request: Request) -> Response:
    caller = await _caller(request)
    return page(request, "logout.html", caller)


@router.post("/logout")
async def logout(request: Request) -> Response:
    caller, _ = await posted(request, "read")
    await keys(request, lambda ring: ring.close_session(caller.token))
    response = secured(RedirectResponse("/ui/login?why=logged+out", status_code=303))
    response.delete_cookie(COOKIE, path="/ui")
    return response


# -- overview ----------------------------------------------------------------------------------
@router.get("")
@router.get("/")
async def overview(request: Request) -> Response:
    caller = await _caller(request)
    ov = await service_of(request).run(lambda m: data.overview(m, caller.tenant))
    return page(request, "overview.html", caller, ov=ov, chart=growth_chart(ov.growth),
                done=request.query_params.get("done"))


# -- search and why not ------------------------------------------------------------------------
def components(scores: Any, weights: dict[str, float] | None) -> list[tuple[str, float, float | None]]:
    """(name, value, weight) of each component a profile weighs, then the TTL weight, then
    each other component the hit has (:data:`HIT_SCORE_KEYS`)."""
    if scores is None:
        return []
    get = scores.get if isinstance(scores, dict) else (lambda k, d=None: getattr(scores, k, d))
    out: list[tuple[str, float, float | None]] = [
        (n, float(get(n, 0.0) or 0.0), (weights or {}).get(n)) for n in data.COMPONENTS]
    out.append(("ttl_weight", float(get("ttl_weight", 1.0) or 0.0), None))
    for extra in (k for k in HIT_SCORE_KEYS if k not in data.COMPONENTS and k != "ttl_weight"):
        value = get(extra)
        if value is not None:
            out.append((extra, float(value), None))
    return out


def _weights(service_settings: Any, profile: str | None) -> tuple[dict[str, float], str]:
    try:
        prof = service_settings.retrieval.profile(profile)
    except ConfigError as exc:  # a profile the form names: bad input, as the API says
        raise ValidationError(str(exc)) from None
    if prof.mode == "multiplicative":
        rs = prof.relevance_semantic
        return {"semantic": rs, "keyword": round(1 - rs, 6)}, scoring.formula(prof)
    return prof.weights.model_dump(), scoring.formula(prof)


@router.get("/search")
async def search(request: Request) -> Response:
    caller = await _caller(request)
    service = service_of(request)
    params, multi = request.query_params, {k: request.query_params.getlist(k)
                                           for k in ("type", "tier", "tags")}
    values = forms.form_values(params, multi)
    context: dict[str, Any] = {"values": values, "hits": None, "why": None,
                               "types": [t.value for t in MemoryType],
                               "tiers": [t.value for t in Tier],
                               "profiles": sorted(service.settings.retrieval.profiles)}
    try:
        filters = forms.search_filters(params, multi)
        weights, mode = _weights(service.settings, filters.get("profile"))
        context.update(weights=weights, mode=mode)
        query = values["q"].strip()
        memory_id = (values["memory"] or "").strip()
        if memory_id:
            if not query:
                raise ValidationError("why not: give the query the memory was not found by")
            why = await service.run(lambda m: data.why_not(
                m, _memory_id(m, memory_id, caller.tenant), query, caller.tenant, filters))
            context["why"] = why
            context["why_weights"] = why.weights or weights
        elif query:
            context["hits"] = await service.run(
                lambda m: m.search(query, tenant=caller.tenant, record=False, **filters))
    except ValidationError as exc:
        return page(request, "search.html", caller, status=422, error=str(exc), **context)
    except NotFoundError as exc:
        return page(request, "search.html", caller, status=404, error=str(exc), **context)
    return page(request, "search.html", caller, components=components, **context)


# -- one memory --------------------------------------------------------------------------------
def _chain_back(rec: MemoryRecord, history: list[Any]) -> list[str]:
    """The memories this one superseded: named in its history (or its metadata)."""
    out: list[str] = []
    for entry in history:
        for side in (entry.new or {}, entry.old or {}):
            ids = side.get("supersedes") or []
            out += [i for i in ids if isinstance(i, str)]
    out += [i for i in rec.metadata.get("supersedes", []) or [] if isinstance(i, str)]
    return list(dict.fromkeys(i for i in out if i != rec.memory_id))


@router.get("/memories/{memory_id}")
async def memory(request: Request, memory_id: str) -> Response:
    caller = await _caller(request)

    def read(m: Memory) -> dict[str, Any]:
        full = _memory_id(m, memory_id, caller.tenant)
        rec = m.get(full, tenant=caller.tenant)
        history = m.history(full, tenant=caller.tenant)
        forward: list[str] = []
        nxt = rec.superseded_by
        while nxt and len(forward) < 20:
            forward.append(nxt)
            try:
                nxt = m.get(nxt, tenant=caller.tenant).superseded_by
            except NotFoundError:
                break
        related = []
        for rid in rec.related_memory_ids[:50]:
            try:
                related.append(m.get(rid, tenant=caller.tenant))
            except NotFoundError:
                continue
        return {"rec": rec, "history": history, "forward": forward,
                "back": _chain_back(rec, history), "related": related}

    found = await service_of(request).run(read)
    return page(request, "memory.html", caller, done=request.query_params.get("done"), **found)


@router.post("/memories/{memory_id}/edit")
async def memory_edit(request: Request, memory_id: str) -> Response:
    caller, form = await posted(request, "write")

    def change(m: Memory) -> str:
        rec = m.get(_memory_id(m, memory_id, caller.tenant), tenant=caller.tenant)
        args: dict[str, Any] = {}
        content = form.get("content")
        if content is not None and content.strip() != rec.content:
            args["content"] = content
        if "tags" in form:
            tags = forms.listed([form["tags"]])
            if tags != rec.tags:
                args["tags"] = tags
        importance = forms.number(form, "importance")
        if importance is not None and importance != rec.importance:
            args["importance"] = importance
        if args:
            m.update(rec.memory_id, tenant=caller.tenant, reason=form.get("reason", "")[:1000],
                     actor=f"ui:key:{caller.key.key_id}", **args)
        return rec.memory_id

    full = await _changing(request, caller, change)
    return _done(f"/ui/memories/{full}", "saved")


@router.post("/memories/{memory_id}/feedback")
async def memory_feedback(request: Request, memory_id: str) -> Response:
    caller, form = await posted(request, "write")
    helpful = form.get("helpful") == "up"

    def vote(m: Memory) -> str:
        full = _memory_id(m, memory_id, caller.tenant)
        m.feedback(full, helpful, tenant=caller.tenant, reason="feedback in the UI")
        return full

    full = await _changing(request, caller, vote)
    return _done(f"/ui/memories/{full}", "marked helpful" if helpful else "marked unhelpful")


@router.post("/memories/{memory_id}/delete")
async def memory_delete(request: Request, memory_id: str) -> Response:
    caller, form = await posted(request, "write")

    def delete(m: Memory) -> str:
        full = _memory_id(m, memory_id, caller.tenant)
        m.delete(full, tenant=caller.tenant, reason=form.get("reason", "")[:1000])
        return full

    full = await _changing(request, caller, delete)
    return _done("/ui", f"deleted {full}")


@router.post("/memories/{memory_id}/restore")
async def memory_restore(request: Request, memory_id: str) -> Response:
    caller, form = await posted(request, "write")

    def restore(m: Memory) -> str:
        full = _memory_id(m, memory_id, caller.tenant)
        m.restore(full, tenant=caller.tenant, reason=form.get("reason", "")[:1000],
                  actor=f"ui:key:{caller.key.key_id}")
        return full

    full = await _changing(request, caller, restore)
    return _done(f"/ui/memories/{full}", "restored")


async def _changing(request: Request, caller: Caller, fn: Any) -> Any:
    """A change on the memory's worker; a bad value is the 422 page (via the route class)."""
    return await service_of(request).run(fn)


# -- sessions ----------------------------------------------------------------------------------
@router.get("/sessions")
async def sessions(request: Request) -> Response:
    caller = await _caller(request)
    names = await service_of(request).run(lambda m: m.sessions.sessions(tenant=caller.tenant))
    return page(request, "sessions.html", caller, sessions=names)


@router.get("/sessions/{session:path}")
async def session(request: Request, session: str) -> Response:
    caller = await _caller(request)

    def read(m: Memory) -> dict[str, Any]:
        turns = m.sessions.load_session(session, tenant=caller.tenant)
        window = m.session_window(session, tenant=caller.tenant)
        if not turns and not window and session not in m.sessions.sessions(tenant=caller.tenant):
            raise NotFoundError(f"no session {session!r}")
        return {"turns": turns, "window": window}

    found = await service_of(request).run(read)
    return page(request, "session.html", caller, session=session, **found)


# -- Q&A ---------------------------------------------------------------------------------------
@router.get("/qa")
async def qa(request: Request) -> Response:
    caller = await _caller(request)
    rows = await service_of(request).run(lambda m: data.qa_report(m, caller.tenant))
    return page(request, "qa.html", caller, rows=rows, done=request.query_params.get("done"))


@router.post("/qa/{memory_id}/edit")
async def qa_edit(request: Request, memory_id: str) -> Response:
    caller, form = await posted(request, "write")
    score = forms.number(form, "score")

    def change(m: Memory) -> None:
        rec = m.get(_memory_id(m, memory_id, caller.tenant), tenant=caller.tenant)
        if rec.memory_type is not MemoryType.QA:
            raise ValidationError(f"{rec.memory_id} is not a Q&A pair")
        args: dict[str, Any] = {}
        for name in ("question", "answer"):
            value = form.get(name)
            if value is not None and value.strip() != (getattr(rec, name) or ""):
                args[name] = value
        if score is not None and score != rec.score:
            args["score"] = score
        if args:
            m.qa.update(rec.memory_id, tenant=caller.tenant, reason="edited in the UI", **args)

    await _changing(request, caller, change)
    return _done("/ui/qa", "pair saved")


@router.post("/qa/{memory_id}/vote")
async def qa_vote(request: Request, memory_id: str) -> Response:
    caller, form = await posted(request, "write")
    kind = form.get("kind", "")
    await _changing(request, caller, lambda m: m.qa.feedback(
        _memory_id(m, memory_id, caller.tenant), kind, tenant=caller.tenant))
    return _done("/ui/qa", f"voted {kind}")


@router.get("/qa/export")
async def qa_export(request: Request) -> Response:
    caller = await _caller(request)

    def export(m: Memory) -> bytes:
        with tempfile.TemporaryDirectory(prefix="varvemem-qa-") as folder:
            files = m.qa.export(folder, tenant=caller.tenant)
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in files:
                    archive.write(path, Path(path).name)
            return buffer.getvalue()

    body = await service_of(request).run(export)
    return secured(Response(body, media_type="application/zip", headers={
        "Content-Disposition": f'attachment; filename="qa-{caller.tenant}.zip"'.replace(
            "\n", "")}))


# -- inbox -------------------------------------------------------------------------------------
@router.get("/inbox")
async def inbox(request: Request) -> Response:
    caller = await _caller(request)
    require(caller, "admin")
    status = request.query_params.get("status") or None
    if status is not None and status not in INBOX_STATUSES:
        return error_page(request, 422, f"status: {status!r} is not one of "
                                        f"{', '.join(INBOX_STATUSES)}", caller)
    after = forms.number(request.query_params, "after", whole=True) or 0
    size = service_of(request).settings.server.page_size

    def read(m: Memory) -> tuple[dict[str, int], list[Any]]:
        return (m.inbox.counts(tenant=caller.tenant),
                m.inbox.events(tenant=caller.tenant, status=status, limit=size + 1,
                               after=int(after)))

    counts, events = await service_of(request).run(read)
    more = len(events) > size
    events = events[:size]
    return page(request, "inbox.html", caller, counts=counts, events=events, current=status,
                statuses=INBOX_STATUSES, next=events[-1].event_id if more else None,
                done=request.query_params.get("done"))


@router.post("/inbox/retry")
async def inbox_retry(request: Request) -> Response:
    caller, form = await posted(request, "admin")
    event_id = forms.number(form, "event_id", whole=True)
    ids = None if event_id is None else [int(event_id)]
    retried = await service_of(request).run(lambda m: m.inbox.retry(ids, tenant=caller.tenant))
    return _done("/ui/inbox", f"re-armed {len(retried)} failed event(s)")


# -- lifecycle ---------------------------------------------------------------------------------
@router.get("/lifecycle")
async def lifecycle(request: Request) -> Response:
    caller = await _caller(request)
    chosen = [j for j in request.query_params.getlist("jobs") if j in JOBS]
    service = service_of(request)
    planned = None
    jobs, now = await service.run(lambda m: data.schedule(m, caller.tenant))
    at_text = request.query_params.get("at", "").strip()
    try:
        at = forms.when(request.query_params, "at")
        if request.query_params.get("plan"):
            planned = await service.run(
                lambda m: data.plan(m, chosen or None, caller.tenant, at))
    except ValidationError as exc:
        return page(request, "lifecycle.html", caller, status=422, error=str(exc), jobs=jobs,
                    chosen=chosen, all_jobs=JOBS, planned=None, now=now, report=None,
                    at=at_text)
    return page(request, "lifecycle.html", caller, jobs=jobs, chosen=chosen, all_jobs=JOBS,
                planned=planned, now=now, report=None, at=at_text)


@router.post("/lifecycle/run")
async def lifecycle_run(request: Request) -> Response:
    caller, _ = await posted(request, "admin")
    raw = (await request.form()).getlist("jobs")
    chosen = [j for j in raw if isinstance(j, str) and j in JOBS]
    service = service_of(request)
    report = await service.run(lambda m: m.consolidate(chosen or None, tenant=caller.tenant))
    jobs, now = await service.run(lambda m: data.schedule(m, caller.tenant))
    return page(request, "lifecycle.html", caller, jobs=jobs, chosen=chosen, all_jobs=JOBS,
                planned=None, now=now, report=report, at="")


__all__ = ["Refused", "ScoreBreakdown", "router"]
