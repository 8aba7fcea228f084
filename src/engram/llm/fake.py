"""A scripted fake LLM for tests: it answers from a script and records every call."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Message
from .base import Completion, TokenUsage

Script = Sequence[str | BaseException] | Callable[[Sequence[Message]], str]


class ScriptExhaustedError(AssertionError):
    """The test asked the fake for more answers than it scripted.

    An AssertionError on purpose: the code under test must not mistake a broken
    test for a provider failure and handle it as an ``LLMError``.
    """


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    messages: tuple[Message, ...]
    json_schema: Mapping[str, Any] | None
    temperature: float


class ScriptedLLM:
    """FAKE model. Answers with the scripted strings in order (raising scripted
    exceptions in their turn), or with ``script(messages)`` when given a callable.

    Usage is a deterministic estimate (characters / 4) so token accounting can be
    tested too.
    """

    def __init__(self, script: Script, model: str = "scripted-fake") -> None:
        self.model = model
        self._script = script if callable(script) else list(script)
        self._next = 0
        self.calls: list[ScriptedCall] = []

    @property
    def remaining(self) -> int:
        if callable(self._script):
            raise TypeError("a callable script has no length")
        return len(self._script) - self._next

    def complete(
        self,
        messages: Sequence[Message],
        *,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        self.calls.append(ScriptedCall(tuple(messages), json_schema, temperature))
        text = self._answer(messages)
        prompt_chars = sum(len(m.content) for m in messages)
        usage = TokenUsage(prompt_tokens=-(-prompt_chars // 4), completion_tokens=-(-len(text) // 4))
        return Completion(text=text, usage=usage, model=self.model)

    def _answer(self, messages: Sequence[Message]) -> str:
        if callable(self._script):
            return self._script(messages)
        if self._next >= len(self._script):
            raise ScriptExhaustedError(
                f"ScriptedLLM got call #{len(self.calls)} but only {len(self._script)} answers were scripted"
            )
        answer = self._script[self._next]
        self._next += 1
        if isinstance(answer, BaseException):
            raise answer
        return answer
