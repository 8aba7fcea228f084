"""The rule summary of a one-turn conversation says "1 turn", not "1 turns"."""

from datetime import UTC, datetime

from engram.episodes.summary import offline_summary
from engram.values.episodes import Thread, Turn

AT = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


def turn(seq: int, content: str) -> Turn:
    return Turn("acme", seq, ("users", "ana"), "t1", "user", content, AT)


def test_one_turn_is_singular_and_more_are_plural():
    thread = Thread("acme", ("users", "ana"), "t1", AT, AT, 1)
    assert ", 1 turn. Began: user: My printer shows E42" in offline_summary(thread, [turn(1, "My printer shows E42")])
    two = offline_summary(thread, [turn(1, "My printer shows E42"), turn(2, "It is fixed now")])
    assert ", 2 turns. Began:" in two
