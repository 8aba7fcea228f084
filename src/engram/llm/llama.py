"""Optional: a local GGUF model through llama-cpp-python (``pip install engram-agentmem[llama]``).

A JSON schema becomes a grammar (``response_format={"type": "json_object",
"schema": ...}``), so even small models answer in the requested shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, LLMError, LLMResponseError
from ..model import Message
from .base import Completion, TokenUsage


class LlamaCppLLM:
    def __init__(self, model_path: str | Path, *, n_ctx: int = 4096, n_threads: int | None = None,
                 chat_format: str | None = None, verbose: bool = False, **llama_options: Any) -> None:
        llama_class = _import_llama()
        if not Path(model_path).is_file():
            raise ConfigError(f"GGUF model file not found: {model_path}")
        self.model = Path(model_path).name
        self.llama = llama_class(model_path=str(model_path), n_ctx=n_ctx, n_threads=n_threads,
                                 chat_format=chat_format, verbose=verbose, **llama_options)

    @classmethod
    def wrap(cls, llama: Any, model: str) -> LlamaCppLLM:
        """Wrap an already loaded ``llama_cpp.Llama`` (or anything with its chat API)."""
        instance = cls.__new__(cls)
        instance.model = model
        instance.llama = llama
        return instance

    def complete(
        self,
        messages: Sequence[Message],
        *,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        options: dict[str, Any] = {"temperature": temperature}
        if json_schema is not None:
            options["response_format"] = {"type": "json_object", "schema": dict(json_schema)}
        chat = [{"role": m.role, "content": m.content} for m in messages]
        try:
            result = self.llama.create_chat_completion(messages=chat, **options)
        except (RuntimeError, ValueError) as exc:  # llama.cpp reports context overflow etc. this way
            raise LLMError(f"llama.cpp failed: {exc}") from exc
        return _completion(result, self.model)


def _import_llama() -> Any:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise ConfigError(
            "LlamaCppLLM needs llama-cpp-python, which is not installed: "
            "pip install 'engram-agentmem[llama]' (or pip install llama-cpp-python)"
        ) from exc
    return Llama


def _completion(result: Mapping[str, Any], model: str) -> Completion:
    try:
        text = result["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LLMResponseError("llama.cpp answer has no choices[0].message.content", raw=str(result)) from None
    if not isinstance(text, str):
        raise LLMResponseError("llama.cpp answer has no text content", raw=str(result))
    usage = result.get("usage") or {}
    return Completion(
        text=text,
        usage=TokenUsage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
        model=model,
    )
