"""`pick`: a few fields of a large Struct, converted as `to_dict` converts them; and
`to_struct`, which builds what the SDK's converter builds."""

from collections.abc import Callable
from typing import Any, cast

import pytest
from crossplane.function import resource
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.xfn.structs import pick, to_dict, to_struct

OBJECT: dict[str, Any] = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "Object",
    "spec": {
        "forProvider": {"manifest": {"kind": "Deployment", "spec": {"replicas": 3}}},
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "east"},
    },
    "status": {"conditions": [{"type": "Synced", "status": "True", "observedGeneration": 2}]},
}


@pytest.mark.parametrize(
    ("paths", "want"),
    [
        ((("kind",),), {"kind": "Object"}),
        (
            (("spec", "providerConfigRef"), ("status", "conditions")),
            {
                "spec": {"providerConfigRef": OBJECT["spec"]["providerConfigRef"]},
                "status": {"conditions": OBJECT["status"]["conditions"]},
            },
        ),
        # Absent, or through something that is not an object: left out.
        ((("metadata", "labels"), ("kind", "name"), ("spec", "missing")), {}),
    ],
)
def test_pick_takes_only_the_paths(paths: tuple[tuple[str, ...], ...], want: Any) -> None:
    assert pick(to_struct(OBJECT), *paths) == want


def test_picking_every_top_level_field_is_to_dict() -> None:
    struct = to_struct(OBJECT)
    got = pick(struct, *((key,) for key in OBJECT))
    assert got == to_dict(struct)
    assert isinstance(got["status"]["conditions"][0]["observedGeneration"], int)


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64), st.floats(), st.text(max_size=5)
)
_JSON: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=15,
)


@settings(max_examples=300)
@given(st.dictionaries(st.text(max_size=4), _JSON, max_size=4))
def test_to_struct_builds_what_the_sdks_converter_builds(value: dict[str, Any]) -> None:
    sdk = cast(Callable[[dict[str, Any]], Any], resource.dict_to_struct)(value)
    assert to_struct(value).SerializeToString(deterministic=True) == sdk.SerializeToString(
        deterministic=True
    )
