import math

import pytest

from engram import InvalidScopeError, InvalidValueError, Kind, Scope
from engram.model import check_unit_interval, parse_enum


@pytest.mark.parametrize(
    "label", ["alice@example.com", "a.b.c", "path/with/slashes", "张三", "🙂 emoji", "x" * 256, "'; DROP TABLE--"]
)
def test_any_label_text_is_a_valid_namespace_label(label):
    scope = Scope("acme", ("users", label))
    assert scope.namespace == ("users", label)


@pytest.mark.parametrize("label", ["", "   ", "tab\tinside", "nul\x00", "x" * 257])
def test_bad_labels_are_typed_errors(label):
    with pytest.raises(InvalidScopeError):
        Scope("acme", ("users", label))


def test_tenant_is_required_and_checked():
    with pytest.raises(InvalidScopeError):
        Scope("", ())
    with pytest.raises(InvalidScopeError):
        Scope(None, ())  # type: ignore[arg-type]


def test_namespace_given_as_string_is_refused():
    with pytest.raises(InvalidScopeError, match="tuple"):
        Scope("acme", "users/alice")  # type: ignore[arg-type]


def test_contains_is_segment_exact():
    parent = Scope("acme", ("users", "alice"))
    assert parent.contains(Scope("acme", ("users", "alice", "private")))
    assert not parent.contains(Scope("acme", ("users", "alice2")))
    assert not parent.contains(Scope("other", ("users", "alice")))


@pytest.mark.parametrize("value", [math.nan, math.inf, -0.1, 1.5, "0.5", True, None])
def test_unit_interval_rejects_bad_numbers(value):
    with pytest.raises(InvalidValueError):
        check_unit_interval(value, "importance")


def test_unknown_kind_names_the_allowed_ones():
    with pytest.raises(InvalidValueError, match="preference"):
        parse_enum(Kind, "opinion", "kind")
