"""A small client for OpenAI-compatible chat endpoints (OpenAI, vLLM, Ollama, LM Studio...).

Every LLM step of varvemem goes through :class:`ChatClient`: one request per try, retried with
exponential backoff after connection errors, timeouts, HTTP 429 and 5xx. When it gives up it
raises :class:`~varvemem.errors.LLMError` and the caller takes its local rule instead.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Callable
from typing import Any

import httpx

from .errors import LLMError
from .settings import LLMSettings

log = logging.getLogger("varvemem.llm")

_JSON_BLOCK = re.compile(r"\{.*\}", re.DOTALL)
# Worth another try: the server may be back, less busy or faster next time.
_RETRYABLE_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


class ChatClient:
    """``POST {url}/chat/completions``; :meth:`complete_json` parses the first JSON object.

    ``transport`` replaces the network (tests); ``sleep`` is called with the seconds to wait
    between tries and ``rand`` gives the jitter in ``[0, 1)``.
    """

    def __init__(self, cfg: LLMSettings, transport: httpx.BaseTransport | None = None, *,
                 sleep: Callable[[float], None] = time.sleep,
                 rand: Callable[[], float] = random.random) -> None:
        headers = {"Authorization": f"Bearer {cfg.api_key}"} if cfg.api_key else {}
        self.model = cfg.model
        self.retries = cfg.retries
        self.backoff_seconds = cfg.backoff_seconds
        self.backoff_max_seconds = cfg.backoff_max_seconds
        self._key = cfg.api_key or ""
        self._sleep = sleep
        self._rand = rand
        self._client = httpx.Client(base_url=cfg.url.rstrip("/"), headers=headers,
                                    timeout=cfg.timeout, transport=transport)
        # For messages: no user:password@ and no query string (either may hold a secret).
        url = self._client.base_url
        self.endpoint = f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}" \
            f"{url.path.rstrip('/')}/chat/completions"

    def complete(self, system: str, user: str) -> str:
        """The model's answer to one system + user prompt (temperature 0); raises
        :class:`LLMError` once every try failed, or at once on an answer no retry can fix."""
        body = {"model": self.model, "temperature": 0,
                "messages": [{"role": "system", "content": system},
                             {"role": "user", "content": user}]}
        attempts = self.retries + 1
        cause = ""
        for attempt in range(1, attempts + 1):
            retry_after: float | None = None
            try:
                resp = self._client.post("/chat/completions", json=body)
            except _RETRYABLE_ERRORS as exc:
                cause = _describe(exc)
            except httpx.HTTPError as exc:  # a bad URL or protocol: no retry helps
                raise self._failure(_describe(exc), attempt) from None
            else:
                if resp.is_success:
                    return self._content(resp)
                cause = f"HTTP {resp.status_code} {resp.reason_phrase}".rstrip()
                if resp.status_code != 429 and resp.status_code < 500:
                    raise self._failure(cause + _snippet(resp), attempt) from None
                retry_after = _retry_after(resp)
            if attempt < attempts:
                delay = self._delay(attempt - 1, retry_after)
                log.warning("chat endpoint %s: attempt %d of %d failed (%s); retrying in %.2fs",
                            self.endpoint, attempt, attempts, self._redact(cause), delay)
                self._sleep(delay)
        raise self._failure(cause, attempts)

    def complete_json(self, system: str, user: str) -> dict[str, Any]:
        """:meth:`complete`, asking for and parsing one JSON object (the first ``{...}`` of the
        answer); raises :class:`LLMError` when there is none."""
        text = self.complete(system + "\nAnswer with one JSON object only.", user)
        match = _JSON_BLOCK.search(text)
        try:
            data = json.loads(match.group() if match else text)
        except json.JSONDecodeError:
            raise LLMError(f"chat endpoint {self.endpoint} answered without JSON: "
                           f"{text[:80]!r}") from None
        if not isinstance(data, dict):
            raise LLMError(f"chat endpoint {self.endpoint} answered JSON that is not an object")
        return data

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------
    def _content(self, resp: httpx.Response) -> str:
        try:
            return str(resp.json()["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise LLMError(self._redact(
                f"chat endpoint {self.endpoint} gave an answer without choices[0].message."
                f"content ({type(exc).__name__})")) from None

    def _delay(self, n: int, retry_after: float | None) -> float:
        """Seconds before retry ``n`` (0-based): the server's ``Retry-After`` if it gave one,
        else ``backoff_seconds * 2**n`` with jitter (between half and all of it); both capped."""
        if retry_after is not None:
            return min(retry_after, self.backoff_max_seconds)
        full = min(self.backoff_seconds * 2 ** n, self.backoff_max_seconds)
        return float(full * (0.5 + 0.5 * self._rand()))

    def _failure(self, cause: str, attempts: int) -> LLMError:
        noun = "attempt" if attempts == 1 else "attempts"
        msg = self._redact(f"chat endpoint {self.endpoint} failed after {attempts} {noun}: "
                           f"{cause}")
        log.warning("%s", msg)
        return LLMError(msg)

    def _redact(self, text: str) -> str:
        """One line, without the API key."""
        text = " ".join(text.split())
        return text.replace(self._key, "***") if self._key else text


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _snippet(resp: httpx.Response) -> str:
    """The ``error.code``/``error.type`` of an OpenAI-style error body: short names, never
    free text (which may quote the prompt)."""
    try:
        err = resp.json().get("error")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(err, dict):
        return ""
    names = [str(err[k]) for k in ("type", "code") if isinstance(err.get(k), (str, int))]
    names = [n for n in names if re.fullmatch(r"[\w.-]{1,60}", n)]
    return f" ({', '.join(dict.fromkeys(names))})" if names else ""


def _retry_after(resp: httpx.Response) -> float | None:
    """The ``Retry-After`` header in seconds, when it is a number."""
    try:
        value = float(resp.headers.get("retry-after", ""))
    except ValueError:
        return None
    return max(value, 0.0) if value == value else None  # NaN is no answer
