"""`restore_ints` turns every integral float into an int, and nothing else: it gives
what the plain recursive walk it replaced gives, to the type of every value."""

from collections import OrderedDict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.core.numbers import restore_ints


def _reference(value: Any) -> Any:
    # The walk restore_ints was before it tested exact types first.
    if type(value) is float and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _reference(item) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_reference(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value


class _Text(str):
    """A str subclass: kept as it is."""


_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.sampled_from([1.0, -0.0, 0.0, 2.0**60, float("inf"), 3.5])
    | st.text(max_size=3)
    | st.builds(_Text, st.text(max_size=2))
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        | st.dictionaries(st.text(max_size=2), inner, max_size=2).map(OrderedDict)
    ),
    max_leaves=15,
)


def _typed(value: Any) -> Any:
    """The value with each leaf's type beside it (and NaN comparable)."""
    if isinstance(value, dict):
        return (type(value), [(k, _typed(v)) for k, v in value.items()])  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list | tuple):
        return (type(value), [_typed(v) for v in value])  # pyright: ignore[reportUnknownVariableType]
    return (type(value), repr(value))


@settings(max_examples=500)
@given(_VALUES)
def test_restore_ints_is_the_plain_walk(value: Any) -> None:
    assert _typed(restore_ints(value)) == _typed(_reference(value))


def test_integral_floats_become_ints_and_nothing_else_changes() -> None:
    value = {"a": 3.0, "b": [1.0, 1.5, True, "2"], "c": {"d": -0.0}, "e": (4.0,)}
    assert _typed(restore_ints(value)) == _typed(
        {"a": 3, "b": [1, 1.5, True, "2"], "c": {"d": 0}, "e": (4.0,)}
    )
