"""The HTTP service (``varvemem serve``): one FastAPI app over one :class:`~varvemem.Memory`.

Routes are coroutines that hand their library calls to an :class:`~varvemem.AsyncMemory`
over the ``Memory``: in arrival order, the read routes (:meth:`Service.read`: memories,
history, sessions, stats, status, search, context) beside each other on its reader threads,
the others (:meth:`Service.run`) alone on its writer thread, and the event loop stays free
for other requests meanwhile. API keys and webhook deliveries only touch the store of
record, which is thread-safe, so they run on threads of their own and never wait behind a
search. A background thread drains the webhook inbox, queued on the same worker, unless
``server.process_inbox`` is off (separate ``varvemem worker``s).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any
from urllib.parse import unquote_to_bytes

import anyio
import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._version import __version__
from ..api import Memory
from ..engines.inbox import PayloadTooLargeError
from ..errors import (
    UNAVAILABLE,
    AuthError,
    ConflictError,
    EmbedderMismatchError,
    NotFoundError,
    UnsupportedEventError,
    ValidationError,
    VarvememError,
    public_message,
)
from ..settings import Settings
from .schemas import NAME_PATTERN, NO_NUL_PATTERN, SESSION_PATTERN
from .service import Service

log = logging.getLogger("varvemem.server")
DOCS_ASSETS = "/docs/static"  # where /docs loads its assets from


def _error(status: int, kind: str, message: str, **extra: Any) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": {"type": kind, "message": message, **extra}}, status_code=status,
                        headers=headers)


def _status(exc: VarvememError) -> tuple[int, str]:
    if isinstance(exc, AuthError):
        return (403, "forbidden") if exc.forbidden else (401, "unauthorized")
    if isinstance(exc, NotFoundError):
        return 404, "not_found"
    if isinstance(exc, PayloadTooLargeError):
        return 413, "payload_too_large"
    if isinstance(exc, UnsupportedEventError):
        return 422, "unsupported_event"
    if isinstance(exc, ConflictError):
        return 409, "conflict"
    if isinstance(exc, ValidationError):
        return 422, "invalid"
    if isinstance(exc, EmbedderMismatchError):
        return 409, "embedder_mismatch"
    if isinstance(exc, UNAVAILABLE):
        return 503, "unavailable"
    return 400, "error"


_GATE = "varvemem.gate_refused"  # scope["state"] key: the status BodyLimit answered with


def _refused(scope: Scope, status: int) -> None:
    scope.setdefault("state", {})[_GATE] = status


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class TextUrl:
    """Refuse a URL whose path or query is not UTF-8 once percent-decoded (422), before any
    route reads it: Starlette would decode ``%FF`` to U+FFFD, and a session or a user would
    be named by a character the client never sent."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for part, raw in (("path", scope.get("raw_path") or b""),
                              ("query", scope.get("query_string") or b"")):
                try:
                    unquote_to_bytes(raw).decode("utf-8")
                except UnicodeDecodeError:
                    _refused(scope, 422)
                    await _error(422, "invalid", f"the URL's {part} is not UTF-8 text once "
                                 "percent-decoded")(scope, receive, send)
                    return
        await self.app(scope, receive, send)


class BodyLimit:
    """Refuse a body over ``limit`` bytes (413) and a body that is not JSON (415), before any
    route reads it: by its ``Content-Length``, and by counting a streamed body. Under the
    ``forms_under`` path prefixes (the inspector's pages) an HTML form is accepted too."""

    def __init__(self, app: ASGIApp, limit: int, forms_under: tuple[str, ...] = ()) -> None:
        self.app = app
        self.limit = limit
        self.forms_under = forms_under

    def _accepts(self, scope: Scope, ctype: str) -> bool:
        if ctype == "application/json" or ctype.endswith("+json"):
            return True
        return ctype in FORM_TYPES and str(scope.get("path", "")).startswith(self.forms_under)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.limit:
            _refused(scope, 413)
            await _error(413, "payload_too_large",
                         f"the body is over {self.limit} bytes")(scope, receive, send)
            return
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        has_body = length not in ("", "0") or "transfer-encoding" in headers
        if has_body and not self._accepts(scope, ctype):
            _refused(scope, 415)
            await _error(415, "unsupported_media_type",
                         "send JSON with Content-Type: application/json")(scope, receive, send)
            return
        if length.isdigit():
            await self.app(scope, receive, send)  # the server stops at Content-Length
            return
        # A chunked body: read it here, up to the limit, then hand it on.
        chunks, seen, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            more = message.get("more_body", False)
            if seen > self.limit:
                _refused(scope, 413)
                await _error(413, "payload_too_large",
                             f"the body is over {self.limit} bytes")(scope, receive, send)
                return
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _operation_id(route: APIRoute) -> str:
    """A route's operationId: its function's name (``add_memory``, ``search``...), which
    generated clients name their calls after."""
    return route.name


def _allowed(app: FastAPI, scope: Scope) -> list[str]:
    """The methods the routes of ``scope``'s path answer."""
    methods: set[str] = set()
    for route in app.router.routes:
        if isinstance(route, Route) and route.methods and \
                route.matches(scope)[0] is not Match.NONE:
            methods |= route.methods
    return sorted(methods)


def _list_profiles(app: FastAPI, names: list[str]) -> None:
    """The schema's ``profile`` fields name the settings' retrieval profiles (an enum)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            for model in build()["components"]["schemas"].values():
                for branch in model.get("properties", {}).get("profile", {}).get("anyOf", []):
                    if branch.get("type") == "string":
                        branch["enum"] = names
        return build()

    app.openapi = openapi  # type: ignore[method-assign]


def _limit_tags(app: FastAPI, most: int, chars: int) -> None:
    """The schema's stored ``tags`` hold the settings' limits (``update.tags_max``,
    ``update.tag_max_chars``)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schemas = build()["components"]["schemas"]
            for name in ("MemoryIn", "MemoryPatch", "DocumentIn"):
                for branch in schemas[name]["properties"]["tags"].get("anyOf", []):
                    if branch.get("type") == "array":
                        branch["maxItems"] = min(most, branch.get("maxItems", most))
                        branch["items"]["maxLength"] = chars
        return build()

    app.openapi = openapi  # type: ignore[method-assign]


# What a value that does not match a pattern of schemas.py lacks, in words.
_PATTERNS = {
    NAME_PATTERN: "must hold a character other than white space, and no U+0000",
    SESSION_PATTERN: "must hold a character other than white space, and no control character",
    NO_NUL_PATTERN: "must not hold U+0000 (a NUL character)",
}

# What a free-form field (metadata) may hold, as the library checks it: JSON whose strings,
# keys too, hold no U+0000. No "type": each keyword applies to the values of its own type
# (JSON Schema), and a generated client sees one free-form value, not a union.
_JSON_VALUE = {"description": "Any JSON value; no string in it, key or value, holds U+0000",
               "pattern": NO_NUL_PATTERN, "propertyNames": {"pattern": NO_NUL_PATTERN},
               "items": {"$ref": "#/components/schemas/JsonValue"},
               "additionalProperties": {"$ref": "#/components/schemas/JsonValue"}}


def _text_without_nul(app: FastAPI) -> None:
    """Every string a request may send (parameters, bodies, free-form metadata) is said to
    hold no U+0000, which the API refuses (422): a client or a fuzzer built from the schema
    knows it. A string with a pattern of its own excludes it already (NAME_PATTERN)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = build()
            parts = spec["components"]["schemas"]
            parts["JsonValue"] = _JSON_VALUE
            seen = {"JsonValue"}

            def visit(node: Any) -> None:
                if isinstance(node, list):
                    for item in node:
                        visit(item)
                    return
                if not isinstance(node, dict):
                    return
                ref = node.get("$ref", "")
                if ref.startswith("#/components/schemas/"):
                    name = ref.rsplit("/", 1)[1]
                    if name not in seen:
                        seen.add(name)
                        visit(parts[name])
                    return
                if node.get("type") == "string" and not {"format", "enum", "const",
                                                         "pattern"} & set(node):
                    node["pattern"] = NO_NUL_PATTERN
                if node.get("type") == "object" and node.get("additionalProperties") is True:
                    node.update(propertyNames={"pattern": NO_NUL_PATTERN},
                                additionalProperties={"$ref": "#/components/schemas/JsonValue"})
                for value in node.values():
                    visit(value)

            for operation in (op for path in spec["paths"].values() for op in path.values()):
                visit(operation.get("parameters"))
                visit(operation.get("requestBody"))
        return build()

    app.openapi = openapi  # type: ignore[method-assign]


def create_app(settings: Settings | None = None, *, memory: Memory | None = None,
               clock: Callable[[], datetime] | None = None) -> FastAPI:
    """The ASGI app. ``memory`` (owned by the app from then on) or one opened from
    ``settings`` (default: ``Settings.load()``) at startup."""
    from ..ui import UI_PREFIX, mount_ui
    from .routes import router
    from .webhooks import count_gate_refusal
    from .webhooks import router as webhook_router

    settings = memory.settings if memory is not None else (settings or Settings.load())
    holder: dict[str, Service] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Sync routes and dependencies (key checks) run on this pool: a burst waits for a
        # thread, it is not refused.
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.server.threads
        service = Service(memory or Memory(settings=settings, clock=clock))
        app.state.service = service
        holder["service"] = service
        service.start_inbox()
        log.info("varvemem %s serving home %s", __version__, settings.home)
        try:
            yield
        finally:
            await service.stop()

    # /docs: Swagger UI with its script, style and favicon served from DOCS_ASSETS
    # (fastapi-offline's copy), not from a CDN, and no online validator: it works offline.
    # Like /openapi.json it needs no key (auth is per route: routes.need). No /redoc: ReDoc's
    # bundle loads its logo from its vendor's CDN whatever it is told.
    app = FastAPIOffline(title="varvemem", version=__version__, lifespan=lifespan,
                         generate_unique_id_function=_operation_id,
                         static_url=DOCS_ASSETS, redoc_url=None,
                         swagger_ui_parameters={"validatorUrl": None},
                         description="Long-term memory for LLM agents: memories, hybrid search, "
                                     "context, the FAQ fast path, sessions, documents and DevOps "
                                     "webhooks. Every call is scoped to the API key's tenant.")
    app.include_router(router)
    app.include_router(webhook_router)

    @app.exception_handler(VarvememError)
    async def _varvemem_error(request: Request, exc: VarvememError) -> JSONResponse:
        status, kind = _status(exc)
        if status >= 500:
            log.warning("%s %s: %s", request.method, request.url.path, exc)
        return _error(status, kind, public_message(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            if err.get("type") == "json_invalid":  # the parser's own words, not "0: JSON ..."
                return _error(400, "malformed_json", f"malformed JSON at character "
                              f"{err['loc'][-1]}: {err.get('ctx', {}).get('error', '')}")
            loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            msg = _PATTERNS.get(err.get("ctx", {}).get("pattern"), str(err.get("msg"))) \
                if err.get("type") == "string_pattern_mismatch" else str(err.get("msg"))
            msg = msg.removeprefix("Value error, ")  # our validators' own
            problems.append(f"{loc}: {msg}" if loc else msg)
        return _error(422, "invalid", "; ".join(problems)[:2000])

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and isinstance(exc.__cause__, UnicodeDecodeError):
            return _error(400, "malformed_json", "the body is not UTF-8 text")
        kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "error")
        response = _error(exc.status_code, kind, str(exc.detail))
        response.headers.update(exc.headers or {})
        if exc.status_code == 405:  # every method of the path, not only its first route's
            response.headers["Allow"] = ", ".join(_allowed(app, request.scope))
        return response

    _list_profiles(app, sorted(settings.retrieval.profiles))
    _limit_tags(app, settings.update.tags_max, settings.update.tag_max_chars)
    _text_without_nul(app)

    # Added before _observe, so _observe is the outer one: refused requests are logged too.
    app.add_middleware(TextUrl)
    app.add_middleware(BodyLimit, limit=settings.server.max_body_bytes,
                       forms_under=(f"{UI_PREFIX}/",))
    mount_ui(app)  # the inspector at /ui (docs/ui.md)

    @app.middleware("http")
    async def _observe(request: Request, call_next: Callable[..., Any]) -> Any:
        # An unexpected exception is answered here, a JSON 500 with the request's id, not by
        # Starlette's last-resort handler (which re-raises it: the server then logs a plain
        # traceback and closes the connection). Its traceback goes in the request's log line.
        start = time.perf_counter()
        status = 500
        failure: BaseException | None = None
        request_id = uuid.uuid4().hex
        try:
            try:
                response = await call_next(request)
            except Exception as exc:
                failure = exc
                response = _error(500, "internal", "internal error (logged on the server with "
                                  "its request_id)", request_id=request_id)
                response.headers["X-Request-ID"] = request_id
            status = response.status_code
            return response
        finally:
            # Starlette's own routes (the schema, the docs' assets) set no scope["route"].
            route = request.scope.get("route")
            path = getattr(route, "path", None) or (
                DOCS_ASSETS if request.url.path.startswith(DOCS_ASSETS + "/")
                else request.url.path if request.url.path == app.openapi_url else "unmatched")
            elapsed = time.perf_counter() - start
            service = holder.get("service")
            if service is not None:
                service.metrics.request(request.method, path, status, elapsed)
                if request.scope.get("state", {}).get(_GATE) == status:  # never routed
                    count_gate_refusal(service, request.url.path, status)
            fields = {"method": request.method, "path": request.url.path, "route": path,
                      "status": status, "ms": round(elapsed * 1000, 2),
                      "tenant": getattr(request.state, "tenant", None)}
            if failure is not None:
                log.error("request failed", exc_info=failure,
                          extra={"fields": {**fields, "request_id": request_id}})
            else:
                log.info("request", extra={"fields": fields})

    return app


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
                               "level": record.levelname.lower(), "logger": record.name,
                               "message": record.getMessage()}
        out.update(getattr(record, "fields", {}) or {})
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        line = json.dumps(out, ensure_ascii=False, default=str)
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (in a path, say) as its escape
            line = json.dumps(out, default=str)
        return line


def configure_logging(settings: Settings) -> None:
    """Structured (JSON) or plain logs on stderr for the ``varvemem`` loggers, at
    ``server.log_level``."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLogFormatter() if settings.server.log_json
                         else logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger("varvemem")
    root.handlers[:] = [handler]
    root.setLevel(settings.server.log_level.upper())
    root.propagate = False


def app_from_environment() -> FastAPI:
    """The uvicorn factory for ``varvemem serve --workers N`` (settings from the environment:
    ``VARVEMEM_HOME``, ``VARVEMEM_CONFIG`` and the other ``VARVEMEM_*`` variables)."""
    settings = Settings.load()
    configure_logging(settings)
    return create_app(settings)
