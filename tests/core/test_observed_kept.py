"""A condition read once and kept (`observed._kept`) reads exactly as one read afresh
(`observed._read`), and `find_condition`'s shortcut past entries of another type finds
what the first condition of that type among all read ones is."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from modelplane.core import observed
from modelplane.core.observed import conditions, find_condition, first_condition

_FIELDS = ["type", "status", "reason", "message", "lastTransitionTime", "observedGeneration"]
# Values that are equal in Python but read differently (True == 1 == 1.0), strings that
# look like numbers, and values that are not scalars.
_VALUES = st.one_of(
    st.sampled_from(["Ready", "Synced", "True", "False", "1", ""]),
    st.sampled_from([True, False, 1, 0, 1.0, 0.0, -0.0, 1.5, None, float("nan")]),
    st.integers(),
    st.floats(),
    st.lists(st.sampled_from(["Ready", 1]), max_size=2),
    st.dictionaries(st.sampled_from(_FIELDS), st.sampled_from(["Ready", 1]), max_size=2),
)
_NAMES = st.one_of(st.sampled_from([*_FIELDS, "extra"]), st.sampled_from([1, True, None]))
_ENTRY = st.one_of(
    st.dictionaries(_NAMES, _VALUES, max_size=7),
    st.builds(
        lambda fields: {name: fields.get(name, "x") for name in ("type", "status")} | fields,
        st.dictionaries(st.sampled_from(_FIELDS), _VALUES, max_size=6),
    ),
    st.sampled_from(["Ready", 1, None, [], ["Ready"]]),
)


def _outcome(read: Any) -> object:
    if isinstance(read, ValidationError):
        return ("error", read.errors(include_url=False))
    return ("condition", type(read), read.model_dump())


def _same(a: object, b: object) -> bool:
    # NaN is no equal to itself; compare its text instead.
    return repr(a) == repr(b)


@settings(max_examples=400)
@given(st.lists(_ENTRY, max_size=6))
def test_a_kept_condition_reads_as_one_read_afresh(entries: list[Any]) -> None:
    # Each entry twice: the second read is the kept one.
    for entry in [*entries, *entries]:
        assert _same(_outcome(observed._condition(entry)), _outcome(observed._read(entry)))  # pyright: ignore[reportPrivateUsage]


@settings(max_examples=400)
@given(st.lists(_ENTRY, max_size=6), st.sampled_from(["Ready", "Synced", "1"]))
def test_find_condition_is_the_first_read_condition_of_its_type(
    entries: list[Any], type_: str
) -> None:
    obj = {"status": {"conditions": entries}}
    found = find_condition(obj, type_)
    expected = first_condition(conditions(obj), type_)
    assert _same(found and found.model_dump(), expected and expected.model_dump())


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            {"type": "Ready", "status": "True", "observedGeneration": 1},
            {"type": "Ready", "status": "True", "observedGeneration": True},
        ),
        (
            {"type": "Ready", "status": "True", "observedGeneration": 1.0},
            {"type": "Ready", "status": "True", "observedGeneration": True},
        ),
        (
            {"type": "Ready", "status": "True", "observedGeneration": 0.0},
            {"type": "Ready", "status": "True", "observedGeneration": False},
        ),
    ],
)
def test_entries_equal_in_python_but_read_differently_are_kept_apart(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    assert first == second  # as Python sees them
    # Read in both orders, so that whichever is kept first is not the other's answer.
    for a, b in ((first, second), (second, first)):
        observed._kept.cache_clear()  # pyright: ignore[reportPrivateUsage]
        read_a = observed._condition(a)  # pyright: ignore[reportPrivateUsage]
        read_b = observed._condition(b)  # pyright: ignore[reportPrivateUsage]
        assert isinstance(read_a, ValidationError) != isinstance(read_b, ValidationError)
