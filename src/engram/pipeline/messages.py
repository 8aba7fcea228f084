"""Accept conversation turns in the shapes users have: engram Messages, OpenAI-style
dicts, LangChain message objects, or plain strings (user turns)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidValueError
from ..model import Message

ROLES = frozenset({"user", "assistant", "system", "tool"})
_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _one(item: Any, index: int) -> Message:
    if isinstance(item, Message):
        message = item
    elif isinstance(item, str):
        message = Message("user", item)
    elif isinstance(item, Mapping):
        message = Message(str(item.get("role", "")), item.get("content"), item.get("id"), item.get("name"))  # type: ignore[arg-type]  # checked below
    elif hasattr(item, "type") and hasattr(item, "content"):
        role = _LANGCHAIN_ROLES.get(item.type, item.type)
        message = Message(role, item.content, getattr(item, "id", None), getattr(item, "name", None))
    else:
        raise InvalidValueError(f"message {index}: expected a Message, dict, LangChain message or str")
    if message.role not in ROLES:
        raise InvalidValueError(f"message {index}: unknown role {message.role!r}; use {', '.join(sorted(ROLES))}")
    if not isinstance(message.content, str):
        raise InvalidValueError(f"message {index}: content must be text")
    return message


def normalize_messages(messages: Any, message_ids: Sequence[str] | None = None) -> list[Message]:
    if isinstance(messages, (str, Message, Mapping)):
        messages = [messages]
    out = [_one(item, i) for i, item in enumerate(messages)]
    if not out:
        raise InvalidValueError("add() needs at least one message")
    if message_ids is not None:
        if len(message_ids) != len(out):
            raise InvalidValueError(f"{len(message_ids)} message_ids for {len(out)} messages")
        out = [Message(m.role, m.content, mid, m.name, m.at) for m, mid in zip(out, message_ids)]
    return out


def message_to_data(message: Message) -> dict[str, Any]:
    return {"role": message.role, "content": message.content, "id": message.id, "name": message.name}


def message_from_data(data: Mapping[str, Any]) -> Message:
    return Message(data["role"], data["content"], data.get("id"), data.get("name"))
