"""The conventions' private copy of a manifest (`workload._plain`) is the copy it was
before scalars were told by their exact type: equal, of the same types, and shares no
container with what it copied."""

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.conventions.workload import _plain  # pyright: ignore[reportPrivateUsage]


def plain_before(value: object) -> object:
    """The copy as it was written first: abstract classes asked of every value."""
    if isinstance(value, Mapping):
        return {str(k): plain_before(v) for k, v in cast(Mapping[Any, Any], value).items()}
    if isinstance(value, list | tuple):
        return [plain_before(v) for v in cast(Sequence[Any], value)]
    return value


class Flag(int):
    """An int subclass: not a plain scalar, so it takes the slower path, unchanged."""


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.integers().map(Flag),
)
KEYS = st.one_of(st.text(max_size=5), st.integers(), st.booleans())
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(KEYS, inner, max_size=4),
        st.dictionaries(st.text(max_size=5), inner, max_size=4).map(MappingProxyType),
    ),
    max_leaves=30,
)


def shape(value: object) -> object:
    """The value with every type spelled out, so equal-but-differently-typed copies differ."""
    if isinstance(value, dict):
        return ("dict", [(type(k), k, shape(v)) for k, v in cast(dict[Any, Any], value).items()])
    if isinstance(value, list):
        return ("list", [shape(v) for v in cast(list[Any], value)])
    return (type(value), value)


def containers(value: object) -> list[int]:
    if isinstance(value, dict):
        inner = cast(dict[Any, Any], value).values()
        return [id(value), *(i for v in inner for i in containers(v))]
    if isinstance(value, list):
        return [id(value), *(i for v in cast(list[Any], value) for i in containers(v))]
    return []


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_the_copy_is_the_copy_it_was(value: object) -> None:
    copied = _plain(value)
    assert shape(copied) == shape(plain_before(value))
    originals = set(containers(value))
    assert not originals & set(containers(copied))
