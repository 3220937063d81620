"""Field errors print the way apimachinery prints them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane_cli.schema import FieldError
from modelplane_cli.schema.errors import go_json, go_number, go_quote, not_supported, render


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain", '"plain"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("tab\there", '"tab\\there"'),
        ("new\nline", '"new\\nline"'),
        ("\x01", '"\\x01"'),
        ("héllo", '"héllo"'),
        ("\u200b", '"\\u200b"'),
    ],
)
def test_go_quote(value: str, expected: str) -> None:
    assert go_quote(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, "3"),
        (3.0, "3"),
        (-2.0, "-2"),
        (1.5, "1.5"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (123456789.125, "123456789.125"),
    ],
)
def test_go_number(value: float, expected: str) -> None:
    assert go_number(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (True, "true"),
        (7, "7"),
        (2.0, "2"),
        ("x", '"x"'),
        ({"b": 1, "a": "<x>"}, '{"a":"\\u003cx\\u003e","b":1}'),
        ([1, 2.0, "z"], '[1,2,"z"]'),
    ],
)
def test_render(value: Any, expected: str) -> None:
    assert render(value) == expected


def test_not_supported_quotes_every_value() -> None:
    message = not_supported("Foo", ["DRA", "Synthetic", 3])
    assert (
        message == 'UnsupportedValueError value: "Foo": supported values: "DRA", "Synthetic", "3"'
    )


def test_str_joins_path_and_message() -> None:
    assert str(FieldError("spec.x", "Required value")) == "spec.x: Required value"
    assert (
        str(FieldError("", "Invalid value: null: whole object"))
        == "Invalid value: null: whole object"
    )


def test_errors_sort_by_path_then_message() -> None:
    errors = [FieldError("spec.b", "z"), FieldError("spec.a", "y"), FieldError("spec.a", "x")]
    assert [str(e) for e in sorted(errors)] == ["spec.a: x", "spec.a: y", "spec.b: z"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(_json)
def test_go_json_is_canonical(value: Any) -> None:
    # Key order in the input never changes the output.
    if isinstance(value, dict):
        reordered = dict(reversed(list(value.items())))
        assert go_json(reordered) == go_json(value)
    assert "\n" not in go_json(value)
