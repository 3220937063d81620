"""The engine reads a function's desired state through its world's memo: what it
reads is what a fresh conversion reads, a resource answered again is not converted
again, and each read is the caller's own copy."""

from __future__ import annotations

from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.xfn.memo import Memos
from modelplane.xfn.structs import to_struct
from modelplane_cli.render.pipeline import PipelineOutcome, _read_desired  # pyright: ignore[reportPrivateUsage]
from modelplane_cli.render.world import World

_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
_BODIES = st.dictionaries(
    st.text(max_size=4),
    st.recursive(
        _LEAVES,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
        ),
        max_leaves=12,
    ),
    max_size=4,
)


def _state(resources: dict[str, dict[str, Any]], status: dict[str, Any]) -> fnv1.State:
    state = fnv1.State()
    state.composite.resource.CopyFrom(to_struct({"status": status}))
    state.composite.ready = fnv1.READY_TRUE
    for name, body in resources.items():
        state.resources[name].resource.CopyFrom(to_struct(body))
        state.resources[name].ready = fnv1.READY_FALSE
    return state


def _read(state: fnv1.State, memos: Memos) -> PipelineOutcome:
    outcome = PipelineOutcome()
    _read_desired(state, outcome, memos)
    return outcome


@settings(max_examples=100)
@given(st.dictionaries(st.text(max_size=4), _BODIES, max_size=4), _BODIES)
def test_a_read_through_the_memo_is_a_fresh_read(
    resources: dict[str, dict[str, Any]], status: dict[str, Any]
) -> None:
    state = _state(resources, status)
    memos = Memos()
    fresh = _read(state, Memos())
    first = _read(state, memos)
    again = _read(state, memos)
    assert first == fresh
    assert again == fresh


def test_a_resource_answered_again_is_copied_from_the_memo_not_shared() -> None:
    state = _state({"cm": {"kind": "ConfigMap", "data": {"a": "1"}, "replicas": 3}}, {"n": 1})
    memos = World().memos
    first = _read(state, memos)
    kept = len(memos.converted)
    assert kept == 2  # the composite and the one resource
    first.resources["cm"].obj["data"]["a"] = "changed"
    again = _read(state, memos)
    assert len(memos.converted) == kept
    assert again.resources["cm"].obj == {"kind": "ConfigMap", "data": {"a": "1"}, "replicas": 3}
    assert isinstance(again.resources["cm"].obj["replicas"], int)
    assert again.composite_status == {"n": 1}
