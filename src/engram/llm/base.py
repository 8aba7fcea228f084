"""The LLM protocol every provider implements, and the values it returns."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..model import Message


@dataclass(frozen=True, slots=True)
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        if not isinstance(other, TokenUsage):
            return NotImplemented
        return TokenUsage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    model: str = ""


@runtime_checkable
class LLM(Protocol):
    """A chat model: messages in, text out.

    ``json_schema`` asks for an answer that matches the schema; providers enforce it
    where they can (structured output, grammars) and otherwise ask for it in the
    prompt. Either way the caller still parses and validates ``Completion.text``.
    """

    model: str

    def complete(
        self,
        messages: Sequence[Message],
        *,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float = 0.0,
    ) -> Completion: ...


def schema_instruction(json_schema: Mapping[str, Any]) -> str:
    schema = json.dumps(json_schema, ensure_ascii=False, separators=(",", ":"))
    return (
        "Answer with one JSON value that matches this JSON Schema, and nothing else "
        f"(no prose, no code fences):\n{schema}"
    )


def with_schema_instruction(
    messages: Sequence[Message], json_schema: Mapping[str, Any]
) -> list[Message]:
    """For providers without enforced structured output: ask for the schema in words."""
    return [*messages, Message(role="system", content=schema_instruction(json_schema))]
