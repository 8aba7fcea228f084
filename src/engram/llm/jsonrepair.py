"""Parse the JSON a model meant to write, without ever inventing data.

Small local models wrap JSON in prose or code fences, leave trailing commas, use
single quotes or Python's True/False/None, write bare keys, add // comments and
stop mid-answer. ``parse_json_answer`` accepts all of these. Truncation is
repaired only by *dropping* the unfinished tail and closing the open brackets: a
half-written string, number or member is discarded, never completed. A container
left with nothing complete in it is discarded too, and if nothing complete remains
at all the answer is refused: an empty result must not stand in for a failure.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import LLMResponseError

_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)(?:```|\Z)", re.DOTALL)
_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCALAR_RUN = re.compile(r"[-+.\w]*")  # how far an unquoted token could reach
_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def parse_json_answer(text: str) -> Any:
    """The JSON value in a model's answer; ``LLMResponseError(raw=text)`` if there is none."""
    if not isinstance(text, str) or not text.strip():
        raise LLMResponseError("the model gave an empty answer", raw=str(text))
    for candidate in _candidates(text):
        try:
            return _strict(candidate)
        except ValueError:
            pass
        try:
            return _Lenient(candidate).parse()
        except _Unparseable:
            continue
    raise LLMResponseError("the model's answer contains no usable JSON", raw=text)


def _candidates(text: str) -> list[str]:
    """Where the JSON may be: the whole text, code fences, then from the first bracket."""
    found = [text.strip()]
    found += [m.group(1).strip() for m in _FENCE.finditer(text) if m.group(1).strip()]
    starts = sorted(i for i in (text.find("{"), text.find("[")) if i >= 0)
    found += [text[i:] for i in starts]
    return list(dict.fromkeys(found))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _strict(text: str) -> Any:
    return json.loads(text, parse_constant=_refuse_constant)


class _Unparseable(Exception):
    pass


class _Truncated(Exception):
    """The text ended inside a value that cannot be finished without inventing data."""


_NOTHING = object()  # a truncated container that held nothing complete


class _Lenient:
    """A forgiving recursive-descent JSON reader; stops after the first top-level value."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> Any:
        self._skip()
        if self._at_end() or self.text[self.pos] not in "{[":
            raise _Unparseable("no object or array")
        try:
            value = self._value()
        except _Truncated:
            raise _Unparseable("truncated before anything complete") from None
        if value is _NOTHING:
            raise _Unparseable("truncated before anything complete")
        return value

    # -- scanning -------------------------------------------------------------

    def _at_end(self) -> bool:
        return self.pos >= len(self.text)

    def _skip(self) -> None:
        """Whitespace and // or /* */ comments."""
        text = self.text
        while self.pos < len(text):
            if text[self.pos].isspace():
                self.pos += 1
            elif text.startswith("//", self.pos) or text.startswith("#", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                self.pos = len(text) if end < 0 else end + 2
            else:
                return

    def _peek(self) -> str:
        self._skip()
        if self._at_end():
            raise _Truncated
        return self.text[self.pos]

    # -- values ---------------------------------------------------------------

    def _value(self) -> Any:
        char = self._peek()
        if char == "{":
            return self._object()
        if char == "[":
            return self._array()
        if char in "\"'":
            return self._string()
        return self._scalar()

    def _object(self) -> Any:
        self.pos += 1
        result: dict[str, Any] = {}
        while True:
            try:
                if self._separator("}"):
                    return result
                key = self._key()
                if self._peek() != ":":
                    raise _Unparseable(f"expected ':' at {self.pos}")
                self.pos += 1
                value = self._value()
            except _Truncated:
                return result if result else _NOTHING
            if value is _NOTHING:
                return result if result else _NOTHING
            result[key] = value

    def _array(self) -> Any:
        self.pos += 1
        result: list[Any] = []
        while True:
            try:
                if self._separator("]"):
                    return result
                value = self._value()
            except _Truncated:
                return result if result else _NOTHING
            if value is _NOTHING:
                return result if result else _NOTHING
            result.append(value)

    def _separator(self, closer: str) -> bool:
        """Skip commas (trailing or doubled ones too); True when the container closes."""
        while self._peek() == ",":
            self.pos += 1
        if self._peek() == closer:
            self.pos += 1
            return True
        return False

    def _key(self) -> str:
        if self._peek() in "\"'":
            return self._string()
        match = _BARE_KEY.match(self.text, self.pos)
        if not match:
            raise _Unparseable(f"expected a key at {self.pos}")
        self.pos = match.end()
        return match.group()

    def _scalar(self) -> Any:
        run = _SCALAR_RUN.match(self.text, self.pos)
        if run is not None and run.end() >= len(self.text):
            raise _Truncated  # "12" may have been "125", "tr" may have been "true"
        match = _NUMBER.match(self.text, self.pos) or _BARE_KEY.match(self.text, self.pos)
        if not match:
            raise _Unparseable(f"unexpected {self.text[self.pos]!r} at {self.pos}")
        token = match.group()
        self.pos = match.end()
        if token in _LITERALS:
            return _LITERALS[token]
        if _NUMBER.fullmatch(token):
            return json.loads(token)
        raise _Unparseable(f"unknown word {token!r}")

    def _string(self) -> str:
        quote = self.text[self.pos]
        self.pos += 1
        chars: list[str] = []
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char == quote:
                self.pos += 1
                return "".join(chars)
            if char == "\\":
                chars.append(self._escape())
                continue
            chars.append(char)
            self.pos += 1
        raise _Truncated

    def _escape(self) -> str:
        code = self.text[self.pos + 1 : self.pos + 2]
        if not code:
            raise _Truncated
        if code in _ESCAPES:
            self.pos += 2
            return _ESCAPES[code]
        if code == "u":
            return self._unicode_escape()
        raise _Unparseable(f"bad escape \\{code} at {self.pos}")

    def _unicode_escape(self) -> str:
        digits = self.text[self.pos + 2 : self.pos + 6]
        if len(digits) < 4:
            raise _Truncated
        try:
            code = int(digits, 16)
        except ValueError:
            raise _Unparseable(f"bad \\u escape at {self.pos}") from None
        self.pos += 6
        if 0xD800 <= code < 0xDC00 and self.text.startswith("\\u", self.pos):
            low = int(self.text[self.pos + 2 : self.pos + 6] or "0", 16)
            if 0xDC00 <= low < 0xE000:
                self.pos += 6
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
        return chr(code)
