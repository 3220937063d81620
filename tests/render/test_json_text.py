"""`-o json` is written by a walk of its own, byte for byte what the stdlib's indenting
(pure Python) encoder writes, and reads back as the value written."""

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane_cli.render.output import json_text

STRINGS = st.one_of(
    st.text(),
    st.text(alphabet='"\\/\n\r\t\x00\x1f\x7f\u2028\ufeffé\U0001f600 a'),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), STRINGS)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(STRINGS, inner, max_size=4)
    ),
    max_leaves=30,
)


def stdlib(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def same(a: Any, b: Any) -> bool:
    """Equality in which NaN equals NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return type(a) is type(b) and a == b


@settings(max_examples=200, deadline=None)
@given(value=VALUES)
def test_json_is_what_the_stdlib_writes_and_reads_back(value: Any) -> None:
    written = json_text(value)
    assert written == stdlib(value)
    assert same(json.loads(written), value)


@pytest.mark.parametrize(
    "value",
    [
        {1: "int key"},
        {"t": ("a", "tuple")},
        {"f": float("-inf"), "b": [True, False, None, -0.0, 10**30]},
    ],
)
def test_what_the_walk_does_not_write_the_stdlib_writes(value: Any) -> None:
    assert json_text(value) == stdlib(value)


def test_keys_that_do_not_sort_are_refused_as_the_stdlib_refuses_them() -> None:
    with pytest.raises(TypeError, match="not supported between"):
        json_text({1: "int key", "a": 1})


def test_a_cycle_is_refused_as_the_stdlib_refuses_it() -> None:
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):
        json_text({"a": looped})
