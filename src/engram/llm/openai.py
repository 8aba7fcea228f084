"""An LLM over any OpenAI-compatible chat-completions endpoint, standard library only.

Works with OpenAI, Azure-style proxies, vLLM, Ollama, llama.cpp server, DeepSeek,
Qwen/DashScope and the like. Structured output degrades per client:
``json_schema`` (strict) → ``json_object`` → plain prompting, remembering the first
mode the server accepts so later calls do not pay for the rejected ones again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..errors import ConfigError, LLMResponseError
from ..model import Message
from .base import Completion, TokenUsage, with_schema_instruction
from .http import DEFAULT_DEADLINE_S, MAX_RETRY_AFTER_S, HTTPStatusError, post_json

DEFAULT_BASE_URL = "https://api.openai.com/v1"

StructuredMode = Literal["json_schema", "json_object", "prompt"]
_NEXT_MODE: dict[StructuredMode, StructuredMode] = {"json_schema": "json_object", "json_object": "prompt"}
# Words a server uses when it refuses a response_format it does not implement.
_REJECTION_HINTS = ("response_format", "json_schema", "json_object", "structured", "grammar")


class OpenAICompatibleLLM:
    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        deadline_s: float | None = DEFAULT_DEADLINE_S,
        max_retry_after_s: float = MAX_RETRY_AFTER_S,
    ) -> None:
        """``timeout`` bounds each socket operation, ``deadline_s`` one whole call
        (retries and waits included), ``max_retry_after_s`` the Retry-After honoured."""
        if not model:
            raise ConfigError("OpenAICompatibleLLM needs a model name (set LLM_MODEL)")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.deadline_s = deadline_s
        self.max_retry_after_s = max_retry_after_s
        self._mode: StructuredMode = "json_schema"
        self._send_temperature = True  # reasoning models (o1, gpt-5) refuse any temperature

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **options: Any) -> OpenAICompatibleLLM:
        """Build from OPENAI_API_KEY, OPENAI_BASE_URL and LLM_MODEL.

        The key is required only for the default OpenAI endpoint: local servers
        (Ollama, vLLM, llama.cpp) usually run without one.
        """
        env = os.environ if env is None else env
        model = env.get("LLM_MODEL", "").strip()
        base_url = env.get("OPENAI_BASE_URL", "").strip() or DEFAULT_BASE_URL
        api_key = env.get("OPENAI_API_KEY", "").strip() or None
        if not model:
            raise ConfigError(
                "LLM_MODEL is not set: set LLM_MODEL to the chat model name (e.g. gpt-4o-mini), "
                "OPENAI_BASE_URL for a non-OpenAI endpoint and OPENAI_API_KEY if it needs one"
            )
        if api_key is None and base_url.rstrip("/") == DEFAULT_BASE_URL:
            raise ConfigError(
                "OPENAI_API_KEY is not set: set it for api.openai.com, or set OPENAI_BASE_URL "
                "to a local OpenAI-compatible server that needs no key"
            )
        return cls(model, base_url, api_key, **options)

    @property
    def structured_mode(self) -> StructuredMode:
        """How this client currently asks for JSON (after any fallbacks)."""
        return self._mode

    def __repr__(self) -> str:  # never show the key
        return f"OpenAICompatibleLLM(model={self.model!r}, base_url={self.base_url!r})"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        # Each rejection permanently lowers what this client asks for, so this ends.
        while True:
            mode = self._mode
            payload = build_payload(self.model, messages, json_schema, mode, temperature)
            if not self._send_temperature:
                del payload["temperature"]
            try:
                return parse_chat_completion(self._post(payload), self.model)
            except HTTPStatusError as exc:
                if not self._degrade(exc, structured=json_schema is not None):
                    raise

    def _degrade(self, rejection: HTTPStatusError, *, structured: bool) -> bool:
        """Stop sending what the server refused; False when there is nothing left to drop."""
        if self._send_temperature and rejects_parameter(rejection, "temperature"):
            self._send_temperature = False
            return True
        if structured and self._mode in _NEXT_MODE and rejects_format(rejection):
            self._mode = _NEXT_MODE[self._mode]
            return True
        return False

    def _post(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        return post_json(
            f"{self.base_url}/chat/completions",
            payload,
            api_key=self._api_key,
            timeout=self.timeout,
            max_retries=self.max_retries,
            backoff=self.backoff,
            deadline_s=self.deadline_s,
            max_retry_after_s=self.max_retry_after_s,
        )


def build_payload(
    model: str,
    messages: Sequence[Message],
    json_schema: Mapping[str, Any] | None,
    mode: StructuredMode,
    temperature: float,
) -> dict[str, Any]:
    if json_schema is not None and mode != "json_schema":
        messages = with_schema_instruction(messages, json_schema)
    payload: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "temperature": temperature,
    }
    if json_schema is not None and mode == "json_schema":
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": _schema_name(json_schema), "schema": dict(json_schema), "strict": True},
        }
    elif json_schema is not None and mode == "json_object":
        payload["response_format"] = {"type": "json_object"}
    return payload


def _schema_name(json_schema: Mapping[str, Any]) -> str:
    # OpenAI wants ^[a-zA-Z0-9_-]{1,64}$ here.
    title = str(json_schema.get("title", "answer"))
    name = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_-") else "_" for ch in title)
    return name[:64] or "answer"


def rejects_format(exc: HTTPStatusError) -> bool:
    """Did the server refuse the response_format we sent (rather than the request)?"""
    return any(rejects_parameter(exc, hint) for hint in _REJECTION_HINTS)


def rejects_parameter(exc: HTTPStatusError, name: str) -> bool:
    return exc.status in (400, 422, 501) and name in exc.body.lower()


def parse_chat_completion(data: Mapping[str, Any], default_model: str) -> Completion:
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise LLMResponseError("chat completion has no choices[0].message", raw=str(data)) from None
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, str):
        refusal = message.get("refusal") if isinstance(message, Mapping) else None
        why = f"the model refused: {refusal}" if refusal else "the message has no text content"
        raise LLMResponseError(why, raw=str(data))
    return Completion(text=content, usage=_usage(data.get("usage")), model=str(data.get("model") or default_model))


def _usage(usage: Any) -> TokenUsage:
    if not isinstance(usage, Mapping):
        return TokenUsage()
    return TokenUsage(
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
    )
