"""The pod spec's nesting bound: which part it names, and that it names one exactly
when the value nests past the limit."""

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.core.nesting import MAX_POD_SPEC_DEPTH, deeper_than, pod_spec_depth_issue

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text("abc", min_size=1, max_size=2), inner, max_size=3)
    ),
    max_leaves=40,
)


def depth(value: object) -> int:
    """Levels of objects and lists, `value` the first; 0 for a scalar."""
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    return 0


def at(value: Any, path: str) -> Any:
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        value = value[key] if key else value[int(index)]
    return value


@given(JSON, st.integers(min_value=1, max_value=6))
def test_names_a_part_exactly_when_the_value_nests_past_the_limit(
    value: object, limit: int
) -> None:
    found = deeper_than(value, limit)
    assert (found is not None) == (depth(value) > limit)
    if found is not None:
        # The part named is an object or list at level limit + 1: its path has
        # exactly `limit` steps.
        assert len(re.findall(r"\.[^.\[]+|\[\d+\]", found)) == limit
        assert isinstance(at(value, found), dict | list)


@given(st.dictionaries(st.sampled_from("abcd"), st.just({"x": [[1]]}), min_size=2))
def test_the_part_named_does_not_depend_on_the_order_of_a_map(value: dict[str, Any]) -> None:
    reordered = dict(reversed(value.items()))
    assert deeper_than(value, 2) == deeper_than(reordered, 2)


def nested(levels: int) -> object:
    value: object = "x"
    for _ in range(levels):
        value = {"n": value}
    return value


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        pytest.param({"containers": [{"name": "engine"}]}, None, id="a plain spec"),
        pytest.param(
            # The deepest field of a Kubernetes PodSpec: 11 levels.
            {
                "volumes": [
                    {
                        "projected": {
                            "sources": [
                                {
                                    "clusterTrustBundle": {
                                        "labelSelector": {"matchExpressions": [{"values": ["a"]}]}
                                    }
                                }
                            ]
                        }
                    }
                ]
            },
            None,
            id="the deepest PodSpec field",
        ),
        pytest.param({"x": nested(MAX_POD_SPEC_DEPTH - 1)}, None, id="16 levels"),
        pytest.param(
            {"x": nested(MAX_POD_SPEC_DEPTH)},
            "spec.x" + ".n" * (MAX_POD_SPEC_DEPTH - 1),
            id="17 levels",
        ),
        pytest.param({"x": nested(10_000)}, "spec.x" + ".n" * 15, id="past the recursion limit"),
    ],
)
def test_pod_spec_depth_issue(spec: dict[str, Any], path: str | None) -> None:
    issue = pod_spec_depth_issue(spec, "spec")
    assert (issue.path if issue is not None else None) == path
