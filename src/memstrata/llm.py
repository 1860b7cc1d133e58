"""A small client for OpenAI-compatible chat endpoints (OpenAI, vLLM, Ollama, LM Studio...)."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from .errors import LLMError
from .settings import LLMSettings

_JSON_BLOCK = re.compile(r"\{.*\}", re.DOTALL)


class ChatClient:
    """``POST {url}/chat/completions``; :meth:`complete_json` parses the first JSON object."""

    def __init__(self, cfg: LLMSettings, transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {cfg.api_key}"} if cfg.api_key else {}
        self.model = cfg.model
        self._client = httpx.Client(base_url=cfg.url.rstrip("/"), headers=headers,
                                    timeout=cfg.timeout, transport=transport)

    def complete(self, system: str, user: str) -> str:
        body = {"model": self.model, "temperature": 0,
                "messages": [{"role": "system", "content": system},
                             {"role": "user", "content": user}]}
        try:
            resp = self._client.post("/chat/completions", json=body)
            resp.raise_for_status()
            return str(resp.json()["choices"][0]["message"]["content"])
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise LLMError(f"chat endpoint {self._client.base_url}: {exc}") from None

    def complete_json(self, system: str, user: str) -> dict[str, Any]:
        text = self.complete(system + "\nAnswer with one JSON object only.", user)
        match = _JSON_BLOCK.search(text)
        try:
            data = json.loads(match.group() if match else text)
        except json.JSONDecodeError:
            raise LLMError(f"chat endpoint answered without JSON: {text[:80]!r}") from None
        if not isinstance(data, dict):
            raise LLMError("chat endpoint answered JSON that is not an object")
        return data
