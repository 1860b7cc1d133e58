"""The services' settings: webhook ingestion (``webhooks``), the REST server (``server``),
the MCP server (``mcp``) and the web inspector (``ui``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator, model_validator

from ..errors import ConfigError
from .base import Section

if TYPE_CHECKING:
    from ..events import Sender


def _sender(kind: str) -> Sender:
    """The sender ``kind`` names: it owns its header defaults. Imported on use: the event
    parsers are not needed to load settings."""
    from ..events import SENDERS

    return SENDERS[kind]


URL_TOKEN_HEADER = "X-Varvemem-Url-Token"  # where the REST surface puts a URL's ?token=


class WebhookSource(Section):
    """One sender of webhooks, posting to ``/v1/webhooks/<name>`` (INT-1).

    ``verify``: ``hmac`` checks an HMAC-SHA256 of the raw body (hex, ``sha256=`` prefix
    optional) in ``header`` (GitHub's ``X-Hub-Signature-256`` for ``github``, else
    ``X-Varvemem-Signature``); ``token`` compares ``header`` (default ``Authorization``, as
    ``Bearer <secret>``, which Alertmanager's ``http_config`` sends) with the secret;
    ``url_token`` compares the URL's ``?token=`` (for senders that can set neither, such as
    Harness notification rules: weaker, as URLs end up in logs). The
    secret is ``secret``, or the variable named by ``secret_env``. A redelivery carries the same
    id in ``delivery_header`` (GitHub's ``X-GitHub-Delivery``, else ``X-Delivery-Id``); without
    one, the body's hash identifies the event (Alertmanager's and Grafana's: the states of its
    alerts, so a repeat notification is recognised)."""

    kind: Literal["harness", "github", "alertmanager", "grafana", "generic"]
    tenant: str = Field(min_length=1, max_length=200)
    verify: Literal["hmac", "token", "url_token"] = "hmac"
    secret: str | None = Field(None, repr=False, min_length=8)
    secret_env: str | None = None
    header: str | None = None
    delivery_header: str | None = None
    user: str | None = None  # the scope the events' memories get
    agent: str | None = None
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_secret(self) -> WebhookSource:
        if not self.secret and not self.secret_env:
            raise ValueError("a webhook source needs secret or secret_env")
        return self

    def signature_header(self) -> str:
        if self.verify == "url_token":
            return URL_TOKEN_HEADER
        if self.header:
            return self.header
        if self.verify == "token":
            return "Authorization"
        return _sender(self.kind).signature_header or "X-Varvemem-Signature"

    def delivery_id_header(self) -> str:
        return self.delivery_header or _sender(self.kind).delivery_header or "X-Delivery-Id"

    def secret_value(self) -> str:
        """The secret; :class:`ConfigError` when its variable is unset."""
        if self.secret:
            return self.secret
        value = os.environ.get(self.secret_env or "")
        if not value:
            raise ConfigError(f"webhooks.sources: variable {self.secret_env} (secret_env) is unset")
        return value


def _default_importance() -> dict[str, float]:
    return {"failure": 0.85, "firing": 0.85, "resolved": 0.5, "comment": 0.55, "event": 0.5,
            "success": 0.3, "started": 0.2}


class WebhookSettings(Section):
    """Webhook ingestion: the sources, and how workers drain the inbox."""

    sources: dict[str, WebhookSource] = Field(default_factory=dict)
    # An event's importance by its outcome: a failure or a firing alert matters more than a
    # success (the update engine's rules would score the text alone).
    importance: dict[str, float] = Field(default_factory=_default_importance)
    batch_size: int = Field(16, ge=1, le=1000)  # events a worker leases at once
    lease_seconds: float = Field(60.0, gt=0)  # a crashed worker's events return after this
    max_attempts: int = Field(8, ge=1, le=100)  # then an event is marked failed
    # After a failed attempt (the store, the embedder or the LLM away) an event waits
    # retry_seconds x 2^(attempts - 1), at most retry_max_seconds: with the defaults an outage
    # of about ten minutes loses no acknowledged event. A redelivery re-arms a failed one.
    retry_seconds: float = Field(5.0, ge=0)
    retry_max_seconds: float = Field(600.0, ge=0)
    poll_seconds: float = Field(1.0, gt=0)  # an idle worker looks again after this
    # A done event's body and headers are dropped this long after it was processed (by the
    # lifecycle's daily ``inbox`` job); its row stays, so a redelivery is still refused.
    # None keeps every payload.
    keep_done_days: float | None = Field(7.0, gt=0)

    @field_validator("sources")
    @classmethod
    def _names(cls, v: dict[str, WebhookSource]) -> dict[str, WebhookSource]:
        for name in v:
            if not name or not all(c.isalnum() or c in "-_" for c in name) or len(name) > 64:
                raise ValueError(f"source name {name!r}: use letters, digits, - and _ (64 at most)")
        return v

    @field_validator("importance")
    @classmethod
    def _importance(cls, v: dict[str, float]) -> dict[str, float]:
        known = set(_default_importance())
        for k, x in v.items():
            if k not in known:
                raise ValueError(f"unknown outcome {k!r} (known: {', '.join(sorted(known))})")
            if not 0.0 <= x <= 1.0:
                raise ValueError(f"{k}: importance must be in 0..1")
        return {**_default_importance(), **v}


class ServerSettings(Section):
    """``varvemem serve``: the REST API, the webhooks and ``/metrics``."""

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    workers: int = Field(1, ge=1, le=64)  # server processes
    max_body_bytes: int = Field(1_048_576, ge=1024)  # larger requests get 413
    # Requests worked on at once by a process (its thread pool); more wait their turn, so a
    # burst is queued, not dropped. Webhooks only commit to the inbox, so they rarely wait.
    threads: int = Field(32, ge=1, le=1024)
    # Reads of one Memory run at once (AsyncMemory's reader threads, hence the REST and MCP
    # servers'; also the full-text threads of concurrent searches). Writes run one at a time.
    read_threads: int = Field(4, ge=1, le=64)
    # Connections beyond this get 503 at once (uvicorn's limit); unset: none refused.
    max_concurrency: int | None = Field(None, ge=1)
    # Each server process also drains the inbox (a background thread); off when separate
    # ``varvemem worker`` processes do it.
    process_inbox: bool = True
    page_size: int = Field(50, ge=1, le=1000)  # lists: default page
    max_page_size: int = Field(500, ge=1, le=10_000)
    shutdown_seconds: float = Field(10.0, ge=0)  # graceful shutdown: finish the batch in hand
    log_json: bool = True  # one JSON object per log line
    # /metrics also exports gauges read from the store: memories by tier and webhook inbox
    # events by status, counted over every tenant. Off by default, since /metrics needs no key
    # and those counts tell about every tenant's data (a tenant's own: GET /v1/status).
    metrics_store_gauges: bool = False
    log_level: Literal["debug", "info", "warning", "error", "critical"] = "info"


class McpSettings(Section):
    """``varvemem mcp``. Over HTTP the server answers only requests whose ``Host`` header is
    loopback, the address it is bound to, or one of ``allowed_hosts`` (DNS rebinding
    protection): a name a reverse proxy forwards, ``host`` or ``host:port`` (``host`` alone
    allows any port); ``"*"`` turns the check off. ``recent_limit``: how many memories
    ``varvemem://memories/recent`` shows."""

    allowed_hosts: list[str] = Field(default_factory=list)
    recent_limit: int = Field(20, ge=1, le=1000)

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, v: list[str]) -> list[str]:
        out = [h.strip() for h in v if h.strip()]
        for h in out:
            if h != "*" and any(c in h for c in "/ @"):
                raise ValueError(f"{h!r} is not a host or host:port")
        return out


class UiSettings(Section):
    """The web inspector at ``/ui`` (``varvemem ui``): a UI session ends after
    ``session_minutes`` without a request (in every server process: sessions are kept in
    the store of record); a one-time login link works for ``login_token_minutes``."""

    session_minutes: float = Field(60.0, gt=0, le=7 * 24 * 60)
    login_token_minutes: float = Field(5.0, gt=0, le=60)
